# docs_links: the documentation cites only what the repository has.
#   cmake -DROOT=<source dir> -P cmake/docs_links.cmake
# Fails when README.md is longer than 300 lines, or when README.md, CONTRIBUTING.md or docs/*.md
#  - link to a relative target that does not exist ([text](path), [text](path#anchor); URLs and
#    pure #anchors are not checked, nor are anchors), or
#  - name in backticks a repository path that does not exist: a word with a '/' whose first
#    component is an entry of the repository's root (`tools/demo.sh`, `include/staticformer/decode.hpp`,
#    `test/gradcheck/`) or `staticformer/...` (the include directory). Build and output
#    directories (`build*/...`, `out/...`) and words with `*`, `<...>` or `{...}` are checked only
#    up to the directory before the placeholder (`tools/generate/<name>.cpp`: tools/generate/).
# Fenced code blocks are skipped.
cmake_minimum_required(VERSION 3.20)
if(NOT ROOT)
  get_filename_component(ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
endif()

set(errors "")
macro(fail msg)
  string(APPEND errors "  ${msg}\n")
endmacro()

# README.md: at most 300 lines.
file(READ "${ROOT}/README.md" readme_text)
string(REGEX MATCHALL "\n" newlines "${readme_text}")
list(LENGTH newlines readme_count)
if(readme_count GREATER 300)
  fail("README.md has ${readme_count} lines; at most 300 (move the detail into docs/)")
endif()

# A path named in backticks: check it (or the directory before a placeholder) when it is a
# repository path.
function(check_repo_path file lineno word)
  if(NOT word MATCHES "^[A-Za-z0-9_.][A-Za-z0-9_.+-]*/")
    return()
  endif()
  string(REGEX REPLACE "/.*" "" first "${word}")
  if(first STREQUAL "." OR first STREQUAL ".." OR first MATCHES "^build" OR first STREQUAL "out")
    return()
  endif()
  set(path "${word}")
  if(first STREQUAL "staticformer")
    set(path "include/${word}")
  elseif(NOT EXISTS "${ROOT}/${first}")
    return()  # not a repository path (a program's output, an install prefix, ...)
  endif()
  if(path MATCHES "[*<>{}]")
    string(REGEX REPLACE "[*<>{}].*" "" path "${path}")
    string(FIND "${path}" "/" slash REVERSE)  # the directory before the placeholder
    string(SUBSTRING "${path}" 0 ${slash} path)
  endif()
  string(REGEX REPLACE "[.,:)]+$" "" path "${path}")
  if(NOT EXISTS "${ROOT}/${path}")
    set(errors "${errors}  ${file}:${lineno}: `${word}`: no such file or directory in the repository\n" PARENT_SCOPE)
  endif()
endfunction()

file(GLOB docs RELATIVE "${ROOT}" "${ROOT}/docs/*.md")
foreach(rel IN ITEMS README.md CONTRIBUTING.md LISTS docs)
  if(NOT EXISTS "${ROOT}/${rel}")
    fail("${rel}: missing")
    continue()
  endif()
  get_filename_component(dir "${ROOT}/${rel}" DIRECTORY)
  file(READ "${ROOT}/${rel}" text)
  # One list element per line: protect what CMake lists treat specially.
  string(REPLACE "\\" "<BS>" text "${text}")
  string(REPLACE ";" "<SC>" text "${text}")
  string(REPLACE "[" "<LB>" text "${text}")
  string(REPLACE "]" "<RB>" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(lineno 0)
  set(in_fence FALSE)
  foreach(line IN LISTS lines)
    math(EXPR lineno "${lineno} + 1")
    if(line MATCHES "^[ ]*```")
      if(in_fence)
        set(in_fence FALSE)
      else()
        set(in_fence TRUE)
      endif()
      continue()
    endif()
    if(in_fence)
      continue()
    endif()
    # Markdown links: ](target)
    string(REGEX MATCHALL "<RB>\\([^) ]+\\)" links "${line}")
    foreach(link IN LISTS links)
      string(REGEX REPLACE "^<RB>\\(([^) ]+)\\)$" "\\1" target "${link}")
      if(target MATCHES "^[a-z]+:" OR target MATCHES "^#")
        continue()
      endif()
      string(REGEX REPLACE "#.*" "" target "${target}")
      get_filename_component(abs "${dir}/${target}" ABSOLUTE)
      if(NOT EXISTS "${abs}")
        fail("${rel}:${lineno}: link to '${target}': no such file or directory")
      endif()
    endforeach()
    # Backticked words that look like repository paths.
    string(REGEX MATCHALL "`[^`]+`" spans "${line}")
    foreach(span IN LISTS spans)
      string(REGEX REPLACE "^`(.*)`$" "\\1" span "${span}")
      string(REPLACE " " ";" words "${span}")
      foreach(word IN LISTS words)
        check_repo_path("${rel}" "${lineno}" "${word}")
      endforeach()
    endforeach()
  endforeach()
endforeach()

if(errors)
  message(FATAL_ERROR "docs_links: the documentation cites what the repository lacks:\n${errors}")
endif()
message(STATUS "docs_links: README.md ${readme_count} lines; README.md, CONTRIBUTING.md and docs/*.md cite only existing paths")
