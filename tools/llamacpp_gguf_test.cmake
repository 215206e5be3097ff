# Test of `staticformer run` on a GGUF file written by llama.cpp's own converter, run by CTest
# (tools/CMakeLists.txt, label `tool`; llama.cpp is not needed):
#   cmake -DSTATICFORMER=<staticformer> -DDATA=<test/data> -DWORK=<scratch dir> -P llamacpp_gguf_test.cmake
# test/data/llamacpp/runc_gqa.llamacpp.gguf is tool_staticformer_llama2c's model (runc_gqa.v0.bin,
# tok512.bin) converted by llama.cpp's llama-convert-llama2c-to-ggml, and runc_gqa.llama-simple.txt
# what llama.cpp's llama-simple (greedy) printed for it: the prompt "ROMEO: But soft" and 100 tokens
# (tools/make_llamacpp_reference.sh). `staticformer run` of the file at -t 0 must print the same
# tokens: llama-simple's bytes as run.c prints them (llama_simple_as_runc, test_helpers.cmake) —
# and those are the start of run.c's own text for the llama2.c file (runc_gqa.expected.txt).
# The architecture (the converter writes a context of 128 and an output.weight of its own) is
# compiled on first use, into WORK/cache.
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(ENV{STATICFORMER_CACHE} "${WORK}/cache")
include("${CMAKE_CURRENT_LIST_DIR}/test_helpers.cmake")  # sf, expect_llama_simple_tokens

set(D "${DATA}/llamacpp")
expect_llama_simple_tokens(runc_gqa "${D}/runc_gqa.llamacpp.gguf" 100 "ROMEO: But soft"
                           "${D}/runc_gqa.llama-simple.txt")
set(want "${want_hex}")
string(LENGTH "${want}" n)
math(EXPR n "${n} / 2")
message(STATUS "ok: staticformer run of llama.cpp's GGUF file prints llama-simple's 100 tokens (${n} bytes as run.c prints them)")

# The same tokens are run.c's for the llama2.c file (its text is longer: 200 positions).
file(READ "${DATA}/llama2c/runc_gqa.expected.txt" runc HEX)
string(REGEX REPLACE "0a$" "" prefix "${want}")  # (both end with run.c's newline)
string(FIND "${runc}" "${prefix}" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "llama-simple's text is not the start of run.c's (runc_gqa.expected.txt)")
endif()
message(STATUS "ok: llama-simple's text is the start of run.c's text for the llama2.c file")
