# Test of `staticformer run` on llama2.c's model files, run by CTest (tools/CMakeLists.txt, label `tool`):
#   cmake -DSTATICFORMER=<staticformer> -DDATA=<test/data> -DWORK=<scratch dir> -P llama2c_test.cmake
# A random LLaMA-2 model of llama2.c's stories260K kind (grouped-query attention, SwiGLU, shared
# classifier; test/data/llama2c/runc_gqa.v0.bin, run.c's version 0 file) with a sentencepiece BPE
# tokenizer.bin: the text must be byte for byte what llama2.c's run.c printed for the same file and
# flags (test/data/llama2c/runc_gqa.expected.txt, written by tools/make_runc_reference.py). The
# architecture is compiled on first use. Then the refusals: no tokenizer.bin, a tokenizer of
# another vocabulary size, --save-int8.
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(ENV{STATICFORMER_CACHE} "${WORK}/cache")
include("${CMAKE_CURRENT_LIST_DIR}/test_helpers.cmake")  # sf, sf_error

set(model "${DATA}/llama2c/runc_gqa.v0.bin")
set(tok "${DATA}/bpe/tok512.bin")
sf(run "${model}" -z "${tok}" -t 0 -n 200 -i "ROMEO: But soft")
if(NOT sf_rc EQUAL 0)
  message(FATAL_ERROR "staticformer run ${model}: exit status ${sf_rc}\n${sf_out}\n${sf_err}")
endif()
file(READ "${DATA}/llama2c/runc_gqa.expected.txt" expected)
if(NOT sf_out STREQUAL expected)
  file(WRITE "${WORK}/got.txt" "${sf_out}")
  message(FATAL_ERROR "staticformer run ${model}: the text differs from run.c's (${WORK}/got.txt vs "
                      "${DATA}/llama2c/runc_gqa.expected.txt)\nrun.c:\n${expected}\nstaticformer:\n${sf_out}")
endif()
if(NOT sf_err MATCHES "achieved tok/s: [0-9.]+")
  message(FATAL_ERROR "staticformer run: no 'achieved tok/s' line on stderr:\n${sf_err}")
endif()
string(LENGTH "${sf_out}" n)
message(STATUS "ok: staticformer run ${model} -z tok512.bin -t 0 -n 200: run.c's text, ${n} bytes")

# run.c's default tokenizer is tokenizer.bin in the working directory
execute_process(COMMAND "${STATICFORMER}" run "${model}" -t 0 -n 10 WORKING_DIRECTORY "${WORK}"
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(rc EQUAL 0 OR NOT err MATCHES "-z tokenizer.bin: ")
  message(FATAL_ERROR "staticformer run without tokenizer.bin: exit ${rc}, expected a refusal naming it:\n${err}")
endif()
message(STATUS "ok (refused): no tokenizer.bin\n  ${err}")
sf_error(1 "-z .*: " run "${model}" -z "${DATA}/llama2c/README.md" -t 0 -n 10)
sf_error(2 "--save-int8: .*llama2.c model file" run "${model}" -z "${tok}" --save-int8 "${WORK}/x.safetensors")
