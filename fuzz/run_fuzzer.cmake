# CTest driver of one libFuzzer harness (fuzz/CMakeLists.txt):
#   cmake -DFUZZER=prog -DCORPUS=dir -DDICT=file -DWORK=dir -DSECONDS=n -P run_fuzzer.cmake
# Replays the committed corpus CORPUS, then fuzzes for SECONDS seconds. New inputs go to
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
set(command "${FUZZER}" "${WORK}/corpus" "${CORPUS}" "-dict=${DICT}" "-max_total_time=${SECONDS}"
            "-timeout=60" "-rss_limit_mb=2048" "-print_final_stats=1" "-artifact_prefix=${WORK}/artifacts/")
list(JOIN command " " shown)
message(STATUS "${shown}")
execute_process(COMMAND ${command} WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (${rc}). The input is in ${WORK}/artifacts/; reproduce with\n"
                      "  ${FUZZER} ${WORK}/artifacts/<file>")
endif()
