# The start-up check (src/cpu_check.cpp) on a CPU without AVX-512: qemu-x86_64 -cpu max (QEMU 7.2
# emulates up to AVX2). test/cpu_check/main.cpp executes an instruction of the widest extension it
# is compiled for, first thing in main.
#   -mavx512f without the check     dies of SIGILL (else qemu has AVX-512 and the test is skipped)
#   -mavx512f with the check        exits with status 1 and a message naming AVX512F, no signal
#   -mavx2 -mfma with the check     runs (no false alarm)
#   the project's flags (FLAGS)     runs, or stops with the message; never a signal
# Skipped (SKIPPED:) when the host is not x86-64 or qemu-x86_64 is missing.
# cmake -DCXX=... -DQEMU=... -DPROCESSOR=... -DSOURCE=... -DWORK=... "-DFLAGS=a|b" -P cpu_check_test.cmake
if(NOT PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  message("SKIPPED: the host is ${PROCESSOR}, not x86-64")
  return()
endif()
if(NOT QEMU OR NOT EXISTS "${QEMU}")
  message("SKIPPED: qemu-x86_64 not found (Debian: qemu-user)")
  return()
endif()
file(MAKE_DIRECTORY ${WORK})
string(REPLACE "|" ";" FLAGS "${FLAGS}")

function(build name check)
  set(sources ${SOURCE}/test/cpu_check/main.cpp)
  if(check)
    list(APPEND sources ${SOURCE}/src/cpu_check.cpp)
  endif()
  execute_process(COMMAND ${CXX} -std=c++20 -O2 -I${SOURCE}/include ${ARGN} ${sources} -o ${WORK}/${name}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "compiling ${name} (${ARGN}) failed:\n${err}")
  endif()
endfunction()
# Runs WORK/name under qemu: rc, out, err in the caller's scope.
macro(run name)
  execute_process(COMMAND ${QEMU} -cpu max ${WORK}/${name} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
endmacro()

build(avx512_unchecked OFF -mavx512f)
run(avx512_unchecked)
if(rc EQUAL 0)
  message("SKIPPED: this qemu-x86_64 runs AVX-512 code (the check has nothing to stop)")
  return()
endif()
message(STATUS "-mavx512f without the check: ${rc}")

build(avx512 ON -mavx512f)
run(avx512)
if(NOT rc EQUAL 1 OR NOT err MATCHES "this CPU lacks [^\n]*AVX512F" OR out MATCHES "ran")
  message(FATAL_ERROR "-mavx512f with the check: expected status 1 and a message naming AVX512F, got '${rc}':\n${out}${err}")
endif()
message(STATUS "-mavx512f with the check: status 1, ${err}")

build(avx2 ON -mavx2 -mfma)
run(avx2)
if(NOT rc EQUAL 0 OR NOT out MATCHES "ran")
  message(FATAL_ERROR "-mavx2 -mfma with the check: expected it to run, got '${rc}':\n${out}${err}")
endif()

build(project ON ${FLAGS})
run(project)
if(NOT (rc EQUAL 0 AND out MATCHES "ran") AND NOT (rc EQUAL 1 AND err MATCHES "this CPU lacks"))
  message(FATAL_ERROR "the project's flags (${FLAGS}): expected it to run or the message, got '${rc}':\n${out}${err}")
endif()
message(STATUS "the project's flags (${FLAGS}): status ${rc} ${out}${err}")
