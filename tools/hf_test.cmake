# Test of `staticformer run` and `convert` on Hugging Face Llama directories, run by CTest
# (tools/CMakeLists.txt, label `tool`):
#   cmake -DSTATICFORMER=<staticformer> -DDATA=<test/data> -DWORK=<scratch dir> [-DQUICK=ON] -P hf_test.cmake
# Three directories written by transformers' save_pretrained (test/data/hf/README.md): float32 with
# grouped-query attention and rope_theta 5000, bfloat16 with a tied head, float16 with one key/value
# head and rms_norm_eps 1e-6; each with sentencepiece's tokenizer.model; and the bfloat16 one in three
# shards and with only tokenizer.json (both print its text). `staticformer run DIR -t 0`
# must print transformers' greedy text byte for byte (test/data/hf/<name>.expected.txt; the
# architecture is compiled on first use); `convert DIR -o M.safetensors` keeps the weights and the
# tokenizer (the checkpoint prints the same text, greedy and sampled), and the checkpoint converts
# to llama2.c's version 0 file and to GGUF (RoPE's pairs permuted), which print the same greedy
# text; -z gives the tokenizer another way. Writing: `convert DIR -o OUT --hf` writes a directory that
# prints the same text and converts back to the same checkpoint bytes; llama2.c's version 0 file
# (adjacent RoPE pairs) written as a directory (permuted to halves) converts back to the same
# version 1 and GGUF bytes (transformers' own text of the written directories: tools/hf_write_test.cmake);
# --dtype and --max-shard-size write transformers' own model.safetensors, shards and index byte for byte.
# Then the refusals. QUICK (the sanitizer build): one directory, not the conversions to llama2.c and
# GGUF, the sharded and tokenizer.json directories (each of their architectures is one more
# compilation on first use).
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(ENV{STATICFORMER_CACHE} "${WORK}/cache")
include("${CMAKE_CURRENT_LIST_DIR}/test_helpers.cmake")  # sf, sf_error, expect_text, expect_match

set(H "${DATA}/hf")
set(names llama_gqa_f32 llama_tied_bf16 llama_mqa_f16)
if(QUICK)
  set(names llama_mqa_f16)
endif()
list(GET names 0 first)
foreach(name ${names})
  expect_text("${H}/${name}.expected.txt" "${H}/${name}" -t 0 -n 48)
  sf(convert "${H}/${name}" -o "${WORK}/${name}.safetensors")
  if(NOT sf_rc EQUAL 0)
    message(FATAL_ERROR "convert ${name}: exit status ${sf_rc}\n${sf_err}")
  endif()
  expect_match("convert ${name}" "${sf_err}" "saved .*${name}.safetensors \\(a float checkpoint of the Hugging Face directory .*, (F32|BF16|F16) weights; .*rope_pairs=halves; with the tokenizer .*tokenizer.model, 512 pieces\\)")
  expect_text("${H}/${name}.expected.txt" "${WORK}/${name}.safetensors" -t 0 -n 48)
  # sampled (run.c's recipe): the directory and its checkpoint give the same text
  sf(run "${H}/${name}" -t 0.9 -p 0.9 -s 11 -n 0 -i "JULIET:")
  set(sampled "${sf_out}")
  sf(run "${WORK}/${name}.safetensors" -t 0.9 -p 0.9 -s 11 -n 0 -i "JULIET:")
  if(NOT sf_rc EQUAL 0 OR NOT sf_out STREQUAL sampled OR NOT sampled MATCHES "^JULIET:")
    message(FATAL_ERROR "run -t 0.9 -s 11 of ${name} and of its checkpoint differ:\n${sampled}\n---\n${sf_out}\n${sf_err}")
  endif()
  message(STATUS "ok: ${name} and its checkpoint sample the same text")
  # written as a Hugging Face directory (float32): the same text, and back to the same checkpoint bytes
  sf(convert "${WORK}/${name}.safetensors" -o "${WORK}/${name}.hf" --hf)
  if(NOT sf_rc EQUAL 0 OR NOT sf_err MATCHES "saved .*${name}.hf \\(a Hugging Face Llama directory, float32 in model.safetensors, from a float checkpoint; .*rope_pairs=halves; with the tokenizer as tokenizer.model and tokenizer.json, 512 pieces\\)")
    message(FATAL_ERROR "convert ${name}.safetensors -o ${name}.hf --hf: exit status ${sf_rc}\n${sf_err}")
  endif()
  expect_text("${H}/${name}.expected.txt" "${WORK}/${name}.hf" -t 0 -n 48)
  # its tokenizer.json is transformers' own for tok512.model (test/data/hf/llama_tied_bf16_fast)
  same("${WORK}/${name}.hf/tokenizer.json" "${H}/llama_tied_bf16_fast/tokenizer.json" "${name}.hf/tokenizer.json = transformers' tokenizer.json")
  convert("${WORK}/${name}.hf" -o "${WORK}/${name}.hf.safetensors")
  same("${WORK}/${name}.hf.safetensors" "${WORK}/${name}.safetensors" "${name}: checkpoint -> Hugging Face directory -> checkpoint")
endforeach()
# --dtype: transformers' bfloat16 and float16 directories written again in their own dtype: its
# model.safetensors byte for byte (and config.json says so)
foreach(case "llama_tied_bf16;bfloat16" "llama_mqa_f16;float16")
  list(POP_FRONT case name)
  sf(convert "${H}/${name}" -o "${WORK}/${name}.again" --hf --dtype ${case})
  if(NOT sf_rc EQUAL 0 OR NOT sf_err MATCHES "a Hugging Face Llama directory, ${case} in model.safetensors, from ")
    message(FATAL_ERROR "convert ${name} --hf --dtype ${case}: exit status ${sf_rc}\n${sf_err}")
  endif()
  same("${WORK}/${name}.again/model.safetensors" "${H}/${name}/model.safetensors" "${name} --dtype ${case}: transformers' model.safetensors")
  file(READ "${WORK}/${name}.again/config.json" config)
  if(NOT config MATCHES "\"torch_dtype\": \"${case}\"")
    message(FATAL_ERROR "${name}.again/config.json: no torch_dtype ${case}\n${config}")
  endif()
endforeach()
sf_error(2 "--dtype: 'float64' is not float32, float16 or bfloat16" convert "${H}/llama_mqa_f16" -o "${WORK}/x" --hf --dtype float64)
# --max-shard-size: the bfloat16 model in shards of at most 40 KB, as transformers' save_pretrained(
# max_shard_size="40KB") wrote llama_tied_bf16_sharded: its three shards and its index byte for byte;
# then in one file again over it (the shards and the index removed)
sf(convert "${H}/llama_tied_bf16" -o "${WORK}/sharded" --hf --dtype bfloat16 --max-shard-size 40KB)
expect_match("convert --max-shard-size 40KB" "${sf_err}" "a Hugging Face Llama directory, bfloat16 in 3 shards and model.safetensors.index.json, from ")
foreach(f model-00001-of-00003.safetensors model-00002-of-00003.safetensors model-00003-of-00003.safetensors
          model.safetensors.index.json)
  same("${WORK}/sharded/${f}" "${H}/llama_tied_bf16_sharded/${f}" "--max-shard-size 40KB: transformers' ${f}")
endforeach()
sf(convert "${WORK}/sharded" -o "${WORK}/sharded" --hf --dtype bfloat16)
same("${WORK}/sharded/model.safetensors" "${H}/llama_tied_bf16/model.safetensors" "the sharded directory in one file again")
if(EXISTS "${WORK}/sharded/model-00001-of-00003.safetensors" OR EXISTS "${WORK}/sharded/model.safetensors.index.json")
  message(FATAL_ERROR "convert --hf over a sharded directory left its shards or its index")
endif()
sf_error(2 "--max-shard-size: '1.5GB' is not a size" convert "${H}/llama_mqa_f16" -o "${WORK}/x" --hf --max-shard-size 1.5GB)
# llama2.c's version 0 file (adjacent pairs) as a directory (halves), and back: the same version 1
# file and the same GGUF file as converted directly (the permutation is undone exactly)
set(v0 "${DATA}/llama2c/runc_gqa.v0.bin")
sf(convert "${v0}" -z "${DATA}/bpe/tok512.bin" -o "${WORK}/runc_gqa.hf" --hf)
if(NOT sf_rc EQUAL 0 OR NOT sf_err MATCHES "from llama2.c's version 0 file; .*RoPE's adjacent pairs as Hugging Face's halves")
  message(FATAL_ERROR "convert runc_gqa.v0.bin --hf: exit status ${sf_rc}\n${sf_err}")
endif()
convert("${v0}" -o "${WORK}/a.v1.bin" --llama2c 1)
convert("${WORK}/runc_gqa.hf" -o "${WORK}/b.safetensors")
convert("${WORK}/b.safetensors" -o "${WORK}/b.v1.bin" --llama2c 1)
same("${WORK}/b.v1.bin" "${WORK}/a.v1.bin" "llama2.c's file -> Hugging Face directory -> version 1 = version 1 directly")
convert("${v0}" -z "${DATA}/bpe/tok512.bin" -o "${WORK}/a.gguf")
convert("${WORK}/runc_gqa.hf" -o "${WORK}/b.gguf")
same("${WORK}/b.gguf" "${WORK}/a.gguf" "llama2.c's file -> Hugging Face directory -> GGUF = GGUF directly")
# To llama2.c's version 0 file (RoPE's halves pairs permuted to adjacent ones): the same greedy text
# from the .bin and its tokenizer.bin (what run.c prints for it).
set(to_llama2c llama_tied_bf16)  # (the others: rope_theta 5000 and eps 1e-6, which llama2.c cannot hold)
if(QUICK)
  set(to_llama2c "")
endif()
foreach(name ${to_llama2c})
  sf(convert "${WORK}/${name}.safetensors" -o "${WORK}/${name}.v0.bin" --llama2c 0 --tokenizer-out "${WORK}/${name}.tok.bin")
  if(NOT sf_rc EQUAL 0 OR NOT sf_err MATCHES "RoPE's halves pairs \\(Hugging Face's rotate_half\\) as llama2.c's adjacent pairs")
    message(FATAL_ERROR "convert ${name}.safetensors --llama2c 0: exit status ${sf_rc}\n${sf_err}")
  endif()
  expect_text("${H}/${name}.expected.txt" "${WORK}/${name}.v0.bin" -z "${WORK}/${name}.tok.bin" -t 0 -n 48)
  # and to GGUF (adjacent pairs too, the tokenizer along): the same text
  sf(convert "${WORK}/${name}.safetensors" -o "${WORK}/${name}.gguf")
  if(NOT sf_rc EQUAL 0)
    message(FATAL_ERROR "convert ${name}.safetensors -o ${name}.gguf: exit status ${sf_rc}\n${sf_err}")
  endif()
  expect_text("${H}/${name}.expected.txt" "${WORK}/${name}.gguf" -t 0 -n 48)
endforeach()
# The same bfloat16 model saved in three shards (model.safetensors.index.json) and saved with only
# the fast tokenizer's tokenizer.json: transformers' text of llama_tied_bf16, and converted, the same
# checkpoint bytes as the single-file directory with tokenizer.model (the sharded weights bit for bit,
# tokenizer.json read as the same pieces and scores)
set(variants sharded fast)
if(QUICK)
  set(variants "")  # (the bfloat16 architecture would be one more compilation on first use)
else()
  convert("${H}/llama_tied_bf16" -o "${WORK}/tied.safetensors")
endif()
foreach(variant ${variants})
  set(d "${H}/llama_tied_bf16_${variant}")
  expect_text("${H}/llama_tied_bf16.expected.txt" "${d}" -t 0 -n 48)
  sf(convert "${d}" -o "${WORK}/tied_${variant}.safetensors")
  set(tokfile tokenizer.model)
  if(variant STREQUAL "fast")
    set(tokfile tokenizer.json)
  endif()
  if(NOT sf_rc EQUAL 0 OR NOT sf_err MATCHES "with the tokenizer .*llama_tied_bf16_${variant}/${tokfile}, 512 pieces")
    message(FATAL_ERROR "convert llama_tied_bf16_${variant}: exit status ${sf_rc}\n${sf_err}")
  endif()
  same("${WORK}/tied_${variant}.safetensors" "${WORK}/tied.safetensors" "llama_tied_bf16_${variant} -> checkpoint = llama_tied_bf16 -> checkpoint")
endforeach()
# info reads config.json only (nothing compiled)
sf(info "${H}/llama_tied_bf16_sharded")
expect_match("info of a sharded directory (exit ${sf_rc})" "${sf_out}"
             "file: a Hugging Face Llama directory \\(config.json read; model.safetensors.index.json's shards and tokenizer.model are read by run and convert\\)\n")
sf(info "${H}/llama_tied_bf16_fast")
expect_match("info of a directory with tokenizer.json (exit ${sf_rc})" "${sf_out}"
             "file: a Hugging Face Llama directory \\(config.json read; model.safetensors and tokenizer.json are read by run and convert\\)\n")

# -z: llama2.c's tokenizer.bin of the same pieces (tools/tokenizer_bin.py of tok512.model)
expect_text("${H}/${first}.expected.txt" "${H}/${first}" -z "${DATA}/bpe/tok512.bin" -t 0 -n 48)

# info of a directory: its config's architecture (nothing compiled)
sf(info "${H}/${first}")
expect_match("info of a Hugging Face directory (exit ${sf_rc})" "${sf_out}"
             "architecture: V=512 T=64 D=32 .*rope_pairs=halves\n  file: a Hugging Face Llama directory \\(config.json read; model.safetensors and tokenizer.model are read by run and convert\\)\n")

# ---- refusals
if(NOT QUICK)
  sf_error(1 "llama2.c holds only rope_base 10000 models \\(this one: 5000\\)" convert "${WORK}/llama_gqa_f32.safetensors" -o "${WORK}/x.bin" --llama2c 0)
endif()
sf_error(2 "is a Hugging Face directory: it converts to a float checkpoint" convert "${H}/llama_gqa_f32" -o "${WORK}/x.bin" --llama2c 1)
sf_error(2 "is a Hugging Face directory: it converts to a float checkpoint" convert "${H}/llama_gqa_f32" -o "${WORK}/x.safetensors" --int8)
file(MAKE_DIRECTORY "${WORK}/gpt2")
file(WRITE "${WORK}/gpt2/config.json" "{\"model_type\": \"gpt2\", \"n_embd\": 32}")
sf_error(1 "config.json': model_type is \"gpt2\": only Hugging Face's Llama" run "${WORK}/gpt2" -t 0)
sf_error(1 "config.json': model_type is \"gpt2\": only Hugging Face's Llama" convert "${WORK}/gpt2" -o "${WORK}/x.safetensors")
file(MAKE_DIRECTORY "${WORK}/notok")
file(COPY "${H}/${first}/config.json" "${H}/${first}/model.safetensors" DESTINATION "${WORK}/notok")
sf_error(1 "notok: no tokenizer.model nor tokenizer.json \\(give llama2.c's tokenizer.bin with -z\\)" run "${WORK}/notok" -t 0)
# a sharded directory whose index maps a tensor out of the directory; a tokenizer.json that is not BPE
function(edited_copy from to file old new)  # a copy of the directory `from` with one replacement in `file`
  file(MAKE_DIRECTORY "${to}")
  file(COPY "${from}/" DESTINATION "${to}")
  file(READ "${to}/${file}" text)
  string(REPLACE "${old}" "${new}" text "${text}")
  file(WRITE "${to}/${file}" "${text}")
endfunction()
if(NOT QUICK)  # (their architecture: as above)
  edited_copy("${H}/llama_tied_bf16_sharded" "${WORK}/badshard" model.safetensors.index.json
              "\"model.norm.weight\": \"model-" "\"model.norm.weight\": \"../model-")
  sf_error(1 "badshard/model.safetensors.index.json': weight_map: tensor 'model.norm.weight' is mapped to \"../model-00003-of-00003.safetensors\": a shard must be a file name in the model's directory" run "${WORK}/badshard" -t 0)
  edited_copy("${H}/llama_tied_bf16_fast" "${WORK}/wordpiece" tokenizer.json "\"type\": \"BPE\"" "\"type\": \"WordPiece\"")
  sf_error(1 "wordpiece/tokenizer.json': model type \"WordPiece\": only BPE with byte_fallback" run "${WORK}/wordpiece" -t 0)
endif()
sf_error(1 "-z .*tok512.model: " run "${H}/${first}" -z "${DATA}/bpe/tok512.model" -t 0)
foreach(x x.bin x.safetensors)
  if(EXISTS "${WORK}/${x}")
    message(FATAL_ERROR "a refused conversion wrote ${WORK}/${x}")
  endif()
endforeach()
message(STATUS "staticformer run and convert of Hugging Face directories: transformers' text; refusals as expected")
