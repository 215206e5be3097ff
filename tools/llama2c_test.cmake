# Test of `staticformer run` on llama2.c's model files, run by CTest (tools/CMakeLists.txt, label `tool`):
#   cmake -DSTATICFORMER=<staticformer> -DDATA=<test/data> -DWORK=<scratch dir> -P llama2c_test.cmake
# A random LLaMA-2 model of llama2.c's stories260K kind (grouped-query attention, SwiGLU, shared
# classifier; test/data/llama2c/runc_gqa.v0.bin, run.c's version 0 file) with a sentencepiece BPE
# tokenizer.bin: the text must be byte for byte what llama2.c's run.c printed for the same file and
# flags (test/data/llama2c/runc_gqa*.expected.txt, written by tools/make_runc_reference.py):
# greedy (-t 0), and sampled with run.c's recipe (its random numbers, softmax and nucleus) at
# -t 0.8 -p 0.9 -s 96 and at -t 1.0 -p 0 -s 179 (the whole distribution), -n 0 (the context
# length, where run.c stops). The architecture is compiled on first use. Then --sampler
# staticformer (another text), and the refusals: no tokenizer.bin, a tokenizer of another
# vocabulary size, --save-int8, --top-k with run.c's recipe.
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(ENV{STATICFORMER_CACHE} "${WORK}/cache")
include("${CMAKE_CURRENT_LIST_DIR}/test_helpers.cmake")  # sf, sf_error, expect_text

set(model "${DATA}/llama2c/runc_gqa.v0.bin")
set(tok "${DATA}/bpe/tok512.bin")

expect_text("${DATA}/llama2c/runc_gqa.expected.txt" "${model}" -z "${tok}" -t 0 -n 200)
# Sampled: the file runc_gqa.t0.8-p0.9-s96-n0.expected.txt holds run.c's text for -t 0.8 -p 0.9 -s 96 -n 0.
foreach(flags t0.8-p0.9-s96-n0 t1.0-p0-s179-n0)
  string(REPLACE "-" ";" parts "${flags}")
  set(args)
  foreach(p IN LISTS parts)
    string(SUBSTRING "${p}" 0 1 flag)
    string(SUBSTRING "${p}" 1 -1 value)
    list(APPEND args "-${flag}" "${value}")
  endforeach()
  expect_text("${DATA}/llama2c/runc_gqa.${flags}.expected.txt" "${model}" -z "${tok}" ${args})
  set(runc_${flags} "${sf_out}")
endforeach()
# The library's own recipe (sf::sampler's default): its own random numbers, so another text.
sf(run "${model}" -z "${tok}" -t 0.8 -p 0.9 -s 96 -n 0 -i "ROMEO: But soft" --sampler staticformer)
if(NOT sf_rc EQUAL 0 OR sf_out STREQUAL "${runc_t0.8-p0.9-s96-n0}" OR NOT sf_out MATCHES "^ROMEO: But soft")
  message(FATAL_ERROR "staticformer run --sampler staticformer: exit status ${sf_rc}, expected another text "
                      "than run.c's:\n${sf_out}\n${sf_err}")
endif()
message(STATUS "ok: --sampler staticformer gives another text")

# run.c's default tokenizer is tokenizer.bin in the working directory
execute_process(COMMAND "${STATICFORMER}" run "${model}" -t 0 -n 10 WORKING_DIRECTORY "${WORK}"
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(rc EQUAL 0 OR NOT err MATCHES "-z tokenizer.bin: ")
  message(FATAL_ERROR "staticformer run without tokenizer.bin: exit ${rc}, expected a refusal naming it:\n${err}")
endif()
message(STATUS "ok (refused): no tokenizer.bin\n  ${err}")
sf_error(1 "-z .*: " run "${model}" -z "${DATA}/llama2c/README.md" -t 0 -n 10)
sf_error(2 "--save-int8: .*llama2.c model file" run "${model}" -z "${tok}" --save-int8 "${WORK}/x.safetensors")
sf_error(2 "--top-k: llama2.c's recipe \\(--sampler llama2c\\) has no top-k" run "${model}" -z "${tok}" --sampler llama2c --top-k 5)
sf_error(2 "--sampler: 'runc' is not llama2c" run "${model}" -z "${tok}" --sampler runc)

# A file whose values are not all finite (test/data/bad/non-finite.llama2c.bin: runc_gqa's shape,
# zeros but a NaN as tok_emb's first value). `staticformer` reads only a llama2.c file's header when
# the executable for its shape exists, and the executable refuses the file; without one, the whole
# file is read first, and refused before anything is compiled.
set(nan_model "${DATA}/bad/non-finite.llama2c.bin")
sf_error(1 "^staticformer run: '.*non-finite.llama2c.bin': llama2.c v0: tensor tok_emb.weight: element \\[0, 0\\] is nan"
         run "${nan_model}" -z "${tok}" -t 0 -n 4)
set(ENV{STATICFORMER_CACHE} "${WORK}/empty-cache")
sf_error(1 "^staticformer run: .*non-finite.llama2c.bin: neither a staticformer checkpoint \\(.*\\) nor a llama2.c model file \\(.*tensor tok_emb.weight: element \\[0, 0\\] is nan"
         run "${nan_model}" -z "${tok}" -t 0 -n 4)
if(sf_err MATCHES "compiling" OR EXISTS "${WORK}/empty-cache")
  message(FATAL_ERROR "staticformer run ${nan_model}: something was compiled before the file was refused:\n${sf_err}")
endif()
set(ENV{STATICFORMER_CACHE} "${WORK}/cache")
