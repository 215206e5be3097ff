# Test of GGUF files between staticformer and llama.cpp itself, run by CTest (tools/CMakeLists.txt,
# label `tool`) after tool_staticformer_llama2c and tool_staticformer_hf, whose compiled executables
# it reuses (CACHE_LLAMA2C, CACHE_HF: nothing is compiled here):
#   cmake -DSTATICFORMER=<staticformer> -DDATA=<test/data> -DWORK=<scratch dir> -DLLAMA_CPP=<dir>
#         -DCACHE_LLAMA2C=<dir> -DCACHE_HF=<dir> -P llamacpp_interop_test.cmake
# llama.cpp is not part of the project: LLAMA_CPP is the CMake option STATICFORMER_LLAMA_CPP or,
# when that is empty, the environment variable LLAMA_CPP_DIR at test time — a llama.cpp tree built
# in build/ (benchmark/llamacpp.sh says how), or the directory of its programs. Without it the test
# says SKIPPED and CTest counts it as skipped.
#  1. llama.cpp's converter and llama-simple still write test/data/llamacpp's bytes
#     (tools/make_llamacpp_reference.sh's two commands).
#  2. Files written by `staticformer convert` load in llama.cpp and llama-simple (greedy) prints the
#     tokens `staticformer run -t 0` prints for them (llama_simple_as_runc, test_helpers.cmake), 40
#     after "ROMEO: But soft": tool_staticformer_llama2c's llama2.c model (runc_gqa.v0.bin with
#     tok512.bin) as F32 and F16 GGUF, llama_mqa_f16 as F16 GGUF; the three Hugging Face models of test/data/hf (their checkpoints:
#     RoPE's pairs permuted into GGUF's order; rope_theta 5000, a tied head, one key/value head,
#     rms_norm_eps 1e-6) as F32 GGUF, and llama_gqa_f32 and llama_mqa_f16 as Q8_0 GGUF, which
#     staticformer runs on its int8 decoder with the file's own blocks. (llama_tied_bf16 as Q8_0 is
#     left out: its first generated token is a near tie that the two programs' activation
#     quantization decide differently — docs/testing.md.)
# llama-simple has no thread option: it runs llama.cpp's default of 4 threads, whose barriers spin;
# on a 2-core machine busy with other work a token took up to 0.9 s (a quiet one: milliseconds).
cmake_minimum_required(VERSION 3.20)
if(NOT LLAMA_CPP)
  set(LLAMA_CPP "$ENV{LLAMA_CPP_DIR}")
endif()
set(bin "")
if(LLAMA_CPP)
  foreach(d "${LLAMA_CPP}/build/bin" "${LLAMA_CPP}/bin" "${LLAMA_CPP}")
    if(EXISTS "${d}/llama-simple" AND EXISTS "${d}/llama-convert-llama2c-to-ggml")
      set(bin "${d}")
      break()
    endif()
  endforeach()
endif()
if(NOT bin)
  message(STATUS "SKIPPED: no llama.cpp to compare with (set STATICFORMER_LLAMA_CPP, the CMake option, or the "
                 "environment variable LLAMA_CPP_DIR to a llama.cpp tree built with llama-simple and "
                 "llama-convert-llama2c-to-ggml; benchmark/llamacpp.sh prints how to get one)")
  return()
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
include("${CMAKE_CURRENT_LIST_DIR}/test_helpers.cmake")  # sf, run, convert, same, expect_llama_simple_tokens
set(prompt "ROMEO: But soft")

# 1. The reference files are what llama.cpp writes and prints.
run(out 0 "${bin}/llama-convert-llama2c-to-ggml" --copy-vocab-from-model "${DATA}/bpe/tok512.bin"
    --llama2c-model "${DATA}/llama2c/runc_gqa.v0.bin" --llama2c-output-model "${WORK}/runc_gqa.llamacpp.gguf")
same("${WORK}/runc_gqa.llamacpp.gguf" "${DATA}/llamacpp/runc_gqa.llamacpp.gguf"
     "llama-convert-llama2c-to-ggml writes test/data/llamacpp's file")
run(text 0 "${bin}/llama-simple" -m "${DATA}/llamacpp/runc_gqa.llamacpp.gguf" -n 100 "${prompt}")
file(READ "${DATA}/llamacpp/runc_gqa.llama-simple.txt" want)
if(NOT text STREQUAL want)
  message(FATAL_ERROR "llama-simple no longer prints test/data/llamacpp/runc_gqa.llama-simple.txt:\n${text}")
endif()
message(STATUS "ok: llama.cpp's converter and llama-simple give test/data/llamacpp's bytes")

# 2. staticformer's files in llama.cpp.
function(check name gguf cache)
  set(ENV{STATICFORMER_CACHE} "${cache}")
  run(text 0 "${bin}/llama-simple" -m "${gguf}" -n 40 "${prompt}")
  file(WRITE "${WORK}/${name}.llama-simple.txt" "${text}")
  expect_llama_simple_tokens(${name} "${gguf}" 40 "${prompt}" "${WORK}/${name}.llama-simple.txt")
  if(gguf MATCHES "q8_0" AND NOT sf_err MATCHES "; int8 weights, ")
    message(FATAL_ERROR "${name}: staticformer did not run the Q8_0 file on int8 weights:\n${sf_err}")
  endif()
  message(STATUS "ok: ${name}: llama-simple prints staticformer's tokens: ${sf_out}")
endfunction()

convert("${DATA}/llama2c/runc_gqa.v0.bin" -z "${DATA}/bpe/tok512.bin" -o "${WORK}/runc_gqa.f32.gguf" --gguf f32)
check(runc_gqa.f32 "${WORK}/runc_gqa.f32.gguf" "${CACHE_LLAMA2C}")
convert("${DATA}/llama2c/runc_gqa.v0.bin" -z "${DATA}/bpe/tok512.bin" -o "${WORK}/runc_gqa.f16.gguf" --gguf f16)
check(runc_gqa.f16 "${WORK}/runc_gqa.f16.gguf" "${CACHE_LLAMA2C}")
foreach(case "llama_gqa_f32;f32;q8_0" "llama_tied_bf16;f32" "llama_mqa_f16;f32;f16;q8_0")
  list(POP_FRONT case name)
  convert("${DATA}/hf/${name}" -o "${WORK}/${name}.safetensors")
  foreach(type IN LISTS case)
    convert("${WORK}/${name}.safetensors" -o "${WORK}/${name}.${type}.gguf" --gguf ${type})
    check(${name}.${type} "${WORK}/${name}.${type}.gguf" "${CACHE_HF}")
  endforeach()
endforeach()
