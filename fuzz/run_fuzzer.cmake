# CTest driver of one libFuzzer harness (fuzz/CMakeLists.txt):
#   cmake -DFUZZER=prog -DCORPUS=dir -DDICT=file -DWORK=dir -DSECONDS=n [-DSEED=n] -P run_fuzzer.cmake
# Replays the committed corpus CORPUS, then fuzzes for SECONDS seconds from random seed SEED
# (default 1, so that a test run draws the same inputs every time up to its time limit; 0: a
# seed from the clock). New inputs go to
# WORK/corpus (emptied first, as WORK/artifacts; libFuzzer writes only into its first corpus directory, so the
# committed one is only read), a crashing input to WORK/artifacts/. libFuzzer exits non-zero on a
# crash, a sanitizer report, a leak, a timeout or an out-of-memory, and so does this script.
foreach(v FUZZER CORPUS DICT WORK SECONDS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_fuzzer.cmake: -D${v}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}/corpus" "${WORK}/artifacts")
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts")
if(NOT DEFINED SEED)
  set(SEED 1)
endif()
set(command "${FUZZER}" "${WORK}/corpus" "${CORPUS}" "-dict=${DICT}" "-max_total_time=${SECONDS}" "-seed=${SEED}"
            "-timeout=60" "-rss_limit_mb=2048" "-print_final_stats=1" "-artifact_prefix=${WORK}/artifacts/")
list(JOIN command " " shown)
message(STATUS "${shown}")
execute_process(COMMAND ${command} WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (${rc}). The input is in ${WORK}/artifacts/; reproduce with\n"
                      "  ${FUZZER} ${WORK}/artifacts/<file>")
endif()
