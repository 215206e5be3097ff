# One compile-fail test: SRC must be rejected by the compiler for the intended reason.
#
# Usage (test/CMakeLists.txt registers one CTest test per file):
#   cmake -DCXX=<compiler> -DSRC=<file.cpp> "-DFLAGS=<flags separated by |>"
#         "-DINCLUDES=<dirs separated by |>" "-DSYSTEM_INCLUDES=<dirs separated by |>"
#         "-DIMPLICIT_INCLUDES=<dirs separated by |>" -P compile_fail.cmake
#
# Directives in SRC (CMake regular expressions, each matched against ONE line of the
# compiler's output, so `.` never crosses a line):
#   // first-error: <regex>  required, once. The first line that says `error:` must match it:
#                            the compiler has to stop on OUR static_assert, not on some earlier
#                            unrelated error (a typo, a missing include) that would also "fail".
#   // expect: <regex>       one or more. Some line must match each — use them to check that the
#                            "in instantiation of" / "required from" lines name the shapes involved.
#   // max-errors: <n>       optional, default 1. More `error:` lines than this is a cascade: fail.
# and a control: compiled with -DSF_COMPILE_FAIL_CONTROL the file must compile with no
# diagnostic at all (warnings included), so the test shows that the one line guarded by
# SF_COMPILE_FAIL_CONTROL, and nothing else, is what the compiler rejects.
cmake_minimum_required(VERSION 3.20)

foreach(v CXX SRC)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "compile_fail.cmake: -D${v}=... is required")
  endif()
endforeach()

# Splits <text> into the variables <out>_0 ... <out>_<n-1> and sets <out>_count = n. Not a CMake
# list: lists split at ';' and group at '[' ']', both common in compiler output. A function, not
# a macro: a macro would paste the text into its body and process its backslashes again.
function(sf_split_lines text out)
  set(rest "${text}")
  set(n 0)
  while(NOT rest STREQUAL "")
    string(FIND "${rest}" "\n" pos)
    if(pos EQUAL -1)
      set(line "${rest}")
      set(rest "")
    else()
      string(SUBSTRING "${rest}" 0 ${pos} line)
      math(EXPR pos "${pos} + 1")
      string(SUBSTRING "${rest}" ${pos} -1 rest)
    endif()
    set(${out}_${n} "${line}" PARENT_SCOPE)
    math(EXPR n "${n} + 1")
  endwhile()
  set(${out}_count ${n} PARENT_SCOPE)
endfunction()

# ---------------------------------------------------------------- read the directives
file(READ "${SRC}" source)
sf_split_lines("${source}" src)
set(first_error "")
set(expects_count 0)
set(max_errors 1)
set(has_control OFF)
math(EXPR last "${src_count} - 1")
foreach(i RANGE ${last})
  set(l "${src_${i}}")
  if(l MATCHES "^// first-error: (.*)$")
    if(NOT first_error STREQUAL "")
      message(FATAL_ERROR "${SRC}: more than one `// first-error:` line")
    endif()
    set(first_error "${CMAKE_MATCH_1}")
  elseif(l MATCHES "^// expect: (.*)$")
    set(expect_${expects_count} "${CMAKE_MATCH_1}")
    math(EXPR expects_count "${expects_count} + 1")
  elseif(l MATCHES "^// max-errors: ([0-9]+)$")
    set(max_errors ${CMAKE_MATCH_1})
  elseif(l MATCHES "SF_COMPILE_FAIL_CONTROL")
    set(has_control ON)
  endif()
endforeach()
if(first_error STREQUAL "")
  message(FATAL_ERROR "${SRC}: no `// first-error:` line — a compile-fail test must say which error comes first")
endif()
if(expects_count EQUAL 0)
  message(FATAL_ERROR "${SRC}: no `// expect:` line — a compile-fail test must say what the diagnostics show")
endif()
if(NOT has_control)
  message(FATAL_ERROR "${SRC}: no SF_COMPILE_FAIL_CONTROL variant — guard the offending line with "
                      "#ifdef SF_COMPILE_FAIL_CONTROL / #else so that the test also proves the rest compiles")
endif()

# ---------------------------------------------------------------- the compiler command
string(REPLACE "|" ";" flags "${FLAGS}")
string(REPLACE "|" ";" implicit "${IMPLICIT_INCLUDES}")
set(cmd ${CXX} ${flags} -fsyntax-only -fdiagnostics-color=never)
# Include directories as CMake passes them: drop the compiler's own (an explicit -I/usr/include
# would break libstdc++'s #include_next), system ones with -isystem.
foreach(kind INCLUDES SYSTEM_INCLUDES)
  string(REPLACE "|" ";" dirs "${${kind}}")
  list(REMOVE_DUPLICATES dirs)
  foreach(d IN LISTS dirs)
    if(d STREQUAL "" OR d IN_LIST implicit)
      continue()
    endif()
    if(kind STREQUAL "INCLUDES")
      list(APPEND cmd "-I${d}")
    else()
      list(APPEND cmd -isystem "${d}")
    endif()
  endforeach()
endforeach()
set(ENV{LC_ALL} C)  # plain ASCII quotes in the diagnostics, whatever the caller's locale

# ---------------------------------------------------------------- control: must compile cleanly
execute_process(COMMAND ${cmd} -DSF_COMPILE_FAIL_CONTROL ${SRC}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT "${out}${err}" STREQUAL "")
  string(REPLACE ";" " " shown "${cmd}")
  message(FATAL_ERROR "${SRC}: the control variant (-DSF_COMPILE_FAIL_CONTROL) must compile without "
                      "any diagnostic, but it did not (exit ${rc}):\n${shown} -DSF_COMPILE_FAIL_CONTROL ${SRC}\n${out}${err}")
endif()

# ---------------------------------------------------------------- the test: must fail, for the right reason
execute_process(COMMAND ${cmd} ${SRC} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(diag "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "${SRC} compiled, but it must not. Output:\n${diag}")
endif()

sf_split_lines("${diag}" d)
set(first_line "")
set(errors 0)
if(d_count GREATER 0)
  math(EXPR last "${d_count} - 1")
  foreach(i RANGE ${last})
    if(d_${i} MATCHES ": (fatal )?error: ")
      if(errors EQUAL 0)
        set(first_line "${d_${i}}")
      endif()
      math(EXPR errors "${errors} + 1")
    endif()
  endforeach()
endif()

set(problems "")
if(errors EQUAL 0)
  string(APPEND problems "  - no line says `error:` (exit code ${rc})\n")
elseif(NOT first_line MATCHES "${first_error}")
  string(APPEND problems "  - the first error does not match /${first_error}/; it is:\n      ${first_line}\n")
endif()
if(errors GREATER max_errors)
  string(APPEND problems "  - ${errors} errors, more than ${max_errors}: the intended error cascades\n")
endif()
math(EXPR last_expect "${expects_count} - 1")
foreach(e RANGE ${last_expect})
  set(found OFF)
  if(d_count GREATER 0)
    math(EXPR last "${d_count} - 1")
    foreach(i RANGE ${last})
      if(d_${i} MATCHES "${expect_${e}}")
        set(found ON)
        break()
      endif()
    endforeach()
  endif()
  if(NOT found)
    string(APPEND problems "  - no line matches /${expect_${e}}/\n")
  endif()
endforeach()

if(NOT problems STREQUAL "")
  string(REPLACE ";" " " shown "${cmd}")
  message(FATAL_ERROR "${SRC}: rejected, but not as expected:\n${problems}Command: ${shown} ${SRC}\n"
                      "Diagnostics:\n${diag}")
endif()
message(STATUS "${SRC}: rejected with the expected message (${errors} error); the control compiles cleanly")
