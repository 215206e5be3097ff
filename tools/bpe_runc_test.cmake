# Test of `staticformer convert --llama2c 0` against llama2.c's run.c itself, run by CTest
# (tools/CMakeLists.txt, label `tool`) after tool_staticformer_bpe (tools/bpe_train_test.cmake),
# whose scratch directory holds the version-0 file m.v0.bin, tok.bin and, per set of flags,
# runc-NAME.txt (what `staticformer run` printed for the checkpoint) and runc-NAME.flags:
#   cmake -DRUNC=<run.c's executable> -DWORK=<tool_staticformer_bpe's scratch dir> -P bpe_runc_test.cmake
# run.c is not part of the project: RUNC is the CMake option STATICFORMER_RUNC or, when that is empty,
# the environment variable STATICFORMER_RUNC at test time (gcc -O3 -o runc run.c -lm). Without either
# the test says SKIPPED and CTest counts it as skipped.
cmake_minimum_required(VERSION 3.20)
if(NOT RUNC)
  set(RUNC "$ENV{STATICFORMER_RUNC}")
endif()
if(NOT RUNC OR NOT EXISTS "${RUNC}")
  message(STATUS "SKIPPED: no run.c to compare with (set STATICFORMER_RUNC, the CMake option or the environment "
                 "variable, to llama2.c's run.c built with gcc -O3 -o runc run.c -lm)")
  return()
endif()
file(GLOB expected "${WORK}/runc-*.txt")
if(NOT expected)
  message(FATAL_ERROR "no ${WORK}/runc-*.txt: tool_staticformer_bpe did not run")
endif()
foreach(e IN LISTS expected)
  string(REGEX REPLACE "\\.txt$" ".flags" f "${e}")
  file(READ "${f}" flags)
  file(READ "${e}" want)
  execute_process(COMMAND "${RUNC}" "${WORK}/m.v0.bin" -z "${WORK}/tok.bin" ${flags} WORKING_DIRECTORY "${WORK}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE got ERROR_VARIABLE err)
  string(REPLACE ";" " " shown "${flags}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${RUNC} m.v0.bin -z tok.bin ${shown}: exit status ${rc}\n${err}")
  endif()
  if(NOT got STREQUAL want)
    file(WRITE "${e}.runc" "${got}")
    message(FATAL_ERROR "run.c ${shown}: another text than staticformer run's (${e}.runc vs ${e}):\nrun.c:\n${got}\n"
                        "staticformer:\n${want}")
  endif()
  string(LENGTH "${got}" n)
  message(STATUS "ok: run.c m.v0.bin -z tok.bin ${shown}: staticformer run's text, ${n} bytes")
endforeach()
