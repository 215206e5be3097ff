# Interop test of the Hugging Face directories `staticformer convert ... --hf` writes, run by CTest
# (tools/CMakeLists.txt, label `tool`) when a Python with transformers is configured:
#   cmake -DSTATICFORMER=<staticformer> -DDATA=<test/data> -DWORK=<scratch dir> -DPYTHON=<python>
#         -DSCRIPT=<tools/hf_generate.py> -P hf_write_test.cmake
# transformers itself loads each written directory (LlamaForCausalLM from config.json and
# model.safetensors, LlamaTokenizer from the written tokenizer.model, and again LlamaTokenizerFast from
# the written tokenizer.json alone) and generates greedily
# (tools/hf_generate.py): its text must be byte for byte the reference — transformers' own text of
# the directories in test/data/hf, written again by staticformer in float32 (and the float16 and
# bfloat16 ones again in their own dtype, --dtype; the float32 one in shards, --max-shard-size), and run.c's text of
# llama2.c's version 0 file test/data/llama2c/runc_gqa.v0.bin (adjacent RoPE pairs, permuted to
# Hugging Face's halves), 200 tokens. Nothing is compiled. Without PYTHON, or a Python without
# transformers, it prints "SKIPPED: " (the test is then reported as skipped).
cmake_minimum_required(VERSION 3.20)
include("${CMAKE_CURRENT_LIST_DIR}/test_helpers.cmake")  # sf, run
if(NOT PYTHON)
  message("SKIPPED: no Python with transformers configured (STATICFORMER_HF_PYTHON)")
  return()
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
# check(name source steps expected [convert's flags]): convert, generate in transformers, compare
function(check name source steps expected)
  sf(convert "${source}" ${ARGN} -o "${WORK}/${name}" --hf)
  if(NOT sf_rc EQUAL 0)
    message(FATAL_ERROR "convert ${source} --hf: exit status ${sf_rc}\n${sf_err}")
  endif()
  run(text 0 "${PYTHON}" "${SCRIPT}" "${WORK}/${name}" --steps ${steps})
  if(text MATCHES "^SKIPPED: ")
    message("${text}")
    set(skipped ON PARENT_SCOPE)
    return()
  endif()
  file(READ "${expected}" want)
  if(NOT text STREQUAL want)
    message(FATAL_ERROR "transformers' text of the written directory ${name} is not the reference ${expected}:\n${text}\n---\n${want}")
  endif()
  # the same with LlamaTokenizerFast over the written tokenizer.json alone
  run(fast 0 "${PYTHON}" "${SCRIPT}" "${WORK}/${name}" --steps ${steps} --fast)
  if(NOT fast STREQUAL want)
    message(FATAL_ERROR "transformers' text of ${name} with the written tokenizer.json is not the reference ${expected}:\n${fast}\n---\n${want}")
  endif()
  message(STATUS "ok: transformers prints the reference text of ${name} from the directory staticformer wrote (tokenizer.model and tokenizer.json)")
endfunction()

foreach(name llama_gqa_f32 llama_tied_bf16 llama_mqa_f16)
  check(${name} "${DATA}/hf/${name}" 48 "${DATA}/hf/${name}.expected.txt")
  if(skipped)
    return()
  endif()
endforeach()
check(runc_gqa "${DATA}/llama2c/runc_gqa.v0.bin" 200 "${DATA}/llama2c/runc_gqa.expected.txt" -z "${DATA}/bpe/tok512.bin")
# written in their own dtype (--dtype): the same text
check(llama_tied_bf16.bf16 "${DATA}/hf/llama_tied_bf16" 48 "${DATA}/hf/llama_tied_bf16.expected.txt" --dtype bfloat16)
check(llama_mqa_f16.f16 "${DATA}/hf/llama_mqa_f16" 48 "${DATA}/hf/llama_mqa_f16.expected.txt" --dtype float16)
# in shards (--max-shard-size): transformers loads model.safetensors.index.json and the shards
check(llama_gqa_f32.sharded "${DATA}/hf/llama_gqa_f32" 48 "${DATA}/hf/llama_gqa_f32.expected.txt" --max-shard-size 50KB)
