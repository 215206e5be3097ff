# Test of `staticformer train --tokenizer` and `convert --llama2c`, run by CTest (tools/CMakeLists.txt,
# label `tool`):
#   cmake -DSTATICFORMER=<staticformer> -DDATA=<test/data> -DCORPUS=<text> -DWORK=<scratch dir>
#         -DCXX=<compiler> "-DFLAGS=a|b|c" "-DINCLUDES=dir|dir" -DLIBS=<libstaticformer_io.a>
#         -DSRC=<tools/export/check.cpp> -P bpe_train_test.cmake
# Trains a tiny LLaMA-kind architecture (V 512 = test/data/bpe/tok512.bin's pieces, T 64, D 32,
# grouped-query attention, SwiGLU, untied) with llama2.c's BPE tokenizer for 40 steps (the train and
# run executables are compiled on first use), then: the checkpoint carries the tokenizer
# (`info`); `convert --llama2c 0 --tokenizer-out` writes llama2.c's version-0 file and the
# tokenizer.bin, the same bytes as tok512.bin; `staticformer run` of the checkpoint prints byte for
# byte what `staticformer run` of the version-0 file with -z prints (the text run.c prints for it:
# tool_staticformer_bpe_runc checks that with run.c itself when one is given) — greedy, sampled,
# -n 0 and an empty prompt; the version-1 file and the int8 checkpoint (convert --int8, which keeps the
# tokenizer) too; version-2 files run on the int8 decoder. `export` writes the checkpoint as a C++ header with the tokenizer's tables:
# tools/export/check.cpp, built against it, finds the checkpoint's weights and tokenizer.bin in it and
# prints `staticformer run`'s greedy text from it (the prompt encoded by the header's tokenizer).
# Then the refusals: a vocabulary that is not the tokenizer's, a file that is not a tokenizer.bin
# (both before anything is compiled), -z with a checkpoint, --tokenizer-out of a character
# tokenizer, norm_eps other than run.c's 1e-5, an int8 checkpoint, a version that does not exist.
# Leaves in WORK what tool_staticformer_bpe_runc compares with run.c: m.v0.bin, tok.bin and
# runc-*.txt (the expected text of each set of flags, named by them).
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(ENV{STATICFORMER_CACHE} "${WORK}/cache")
include("${CMAKE_CURRENT_LIST_DIR}/test_helpers.cmake")  # sf, sf_error, expect_match
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/edit_safetensors_header.cmake")  # sf_edit_header

function(sf_ok)
  sf(${ARGN})
  if(NOT sf_rc EQUAL 0)
    message(FATAL_ERROR "staticformer ${ARGN}: exit status ${sf_rc}\n${sf_out}\n${sf_err}")
  endif()
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "ok: staticformer ${shown}")
  set(sf_out "${sf_out}" PARENT_SCOPE)
  set(sf_err "${sf_err}" PARENT_SCOPE)
endfunction()

set(tok512 "${DATA}/bpe/tok512.bin")
set(llama "\"context\": 64, \"d_model\": 32, \"n_heads\": 4, \"n_kv_heads\": 2, \"n_layers\": 2, \"d_ff\": 96, \"ffn\": \"gated\", \"norm\": \"rmsnorm\", \"position\": \"rope\", \"activation\": \"silu\", \"tied\": false, \"bias\": false, \"norm_eps\": 1e-5, \"rope_theta\": 10000")
file(WRITE "${WORK}/llama.json" "{\"vocab\": 512, ${llama}}\n")
file(WRITE "${WORK}/llama500.json" "{\"vocab\": 500, ${llama}}\n")

# ---- refused before anything is compiled: the vocabulary, the tokenizer file
sf_error(1 "train: --tokenizer .*tok512.bin has 512 pieces; the architecture's vocabulary is 500: they must be equal \\(\"vocab\": 512 in .*llama500.json\\)"
         train --config "${WORK}/llama500.json" --tokenizer "${tok512}" --data "${CORPUS}" --steps 2 --out "${WORK}/x.safetensors")
sf_error(1 "train: --tokenizer: '.*README.md': tokenizer.bin: "
         train --config "${WORK}/llama.json" --tokenizer "${DATA}/bpe/README.md" --data "${CORPUS}" --steps 2 --out "${WORK}/x.safetensors")
sf_error(1 "train: --tokenizer: cannot open '${WORK}/absent.bin'"
         train --config "${WORK}/llama.json" --tokenizer "${WORK}/absent.bin" --data "${CORPUS}" --steps 2 --out "${WORK}/x.safetensors")
if(EXISTS "${WORK}/cache")
  message(FATAL_ERROR "a refused training compiled something: ${WORK}/cache exists")
endif()

# ---- training with the BPE tokenizer
set(model "${WORK}/m.safetensors")
sf_ok(train --config "${WORK}/llama.json" --tokenizer "${tok512}" --data "${CORPUS}" --steps 40 --out "${model}")
expect_match("train" "${sf_out}" "BPE tokenizer .*tok512.bin \\(512 pieces\\): [0-9]+ tokens in [0-9]+ documents")
expect_match("train" "${sf_out}" "final: steps 40 of 40 \\(100% of the schedule\\), ")
sf_ok(info "${model}")
expect_match("info" "${sf_out}" "tokenizer: BPE, 512 pieces \\(metadata tokenizer.bpe")
expect_match("info" "${sf_out}" "train.tokenizer: .*tok512.bin")

# ---- llama2.c's files: version 0 with its tokenizer.bin, version 1
sf_ok(convert "${model}" -o "${WORK}/m.v0.bin" --llama2c 0 --tokenizer-out "${WORK}/tok.bin")
expect_match("convert" "${sf_err}" "saved .*m.v0.bin \\(llama2.c's version 0 file, V=512 T=64 D=32 H=4 kv_heads=2 L=2 F=96 gated rmsnorm rope silu untied no-bias\\)")
execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${WORK}/tok.bin" "${tok512}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "convert --tokenizer-out: ${WORK}/tok.bin differs from ${tok512}")
endif()
sf_ok(convert "${model}" -o "${WORK}/m.v1.bin" --llama2c 1)

# The checkpoint's text equals the version-0 file's with -z (and the version-1 file's): greedy,
# sampled, the whole context (-n 0), an empty prompt (run.c: <s> only).
# (name|flags, the flags separated by commas)
set(cases "greedy|-t,0,-n,64,-i,ROMEO:" "t0.8-p0.9-s7|-t,0.8,-p,0.9,-s,7,-n,0,-i,JULIET: O Romeo"
          "t1-p0-s3-noprompt|-t,1.0,-p,0,-s,3,-n,50" "greedy-n10|-t,0,-n,10,-i,KING RICHARD III:")
foreach(c IN LISTS cases)
  string(REPLACE "|" ";" parts "${c}")
  list(POP_FRONT parts name)
  string(REPLACE "," ";" parts "${parts}")
  sf_ok(run "${model}" ${parts} -q)
  set(text "${sf_out}")
  string(LENGTH "${text}" n)
  if(n LESS 2 OR NOT text MATCHES "\n$")
    message(FATAL_ERROR "run ${parts}: expected a text ending in a newline (as run.c's), got ${n} bytes:\n${text}")
  endif()
  foreach(other "${WORK}/m.v0.bin|-z|${WORK}/tok.bin" "${WORK}/m.v1.bin|-z|${tok512}")
    string(REPLACE "|" ";" other "${other}")
    sf_ok(run ${other} ${parts} -q)
    if(NOT sf_out STREQUAL text)
      message(FATAL_ERROR "run ${other} ${parts}: another text than the checkpoint's:\n${text}\n---\n${sf_out}")
    endif()
  endforeach()
  file(WRITE "${WORK}/runc-${name}.txt" "${text}")
  file(WRITE "${WORK}/runc-${name}.flags" "${parts}")
  message(STATUS "ok: ${name}: the checkpoint, the version-0 and the version-1 files print the same ${n} bytes")
  if(name STREQUAL "greedy")
    set(greedy "${text}")
  endif()
endforeach()
expect_match("the greedy text" "${greedy}" "^ROMEO:")
# -n counts the printed tokens, the prompt's included (not its <s>): of a longer prompt, as run.c,
# only the first -n tokens are printed ("KING RICHARD III:" is 12 tokens of tok512.bin).
file(READ "${WORK}/runc-greedy-n10.txt" n10)
if(NOT n10 STREQUAL "KING RICHARD II\n")
  message(FATAL_ERROR "run -n 10 -i \"KING RICHARD III:\": expected run.c's 'KING RICHARD II' and a newline, got '${n10}'")
endif()

# int8: convert --int8 keeps the tokenizer; its text is --int8's of the float checkpoint.
sf_ok(convert "${model}" -o "${WORK}/m-int8.safetensors" --int8)
sf_ok(info "${WORK}/m-int8.safetensors")
expect_match("info of the int8 checkpoint" "${sf_out}" "tokenizer: BPE, 512 pieces")
sf_ok(run "${WORK}/m-int8.safetensors" -t 0 -n 64 -i "ROMEO:" -q)
set(int8_text "${sf_out}")
sf_ok(run "${model}" --int8 -t 0 -n 64 -i "ROMEO:" -q)
if(NOT sf_out STREQUAL int8_text OR NOT int8_text MATCHES "^ROMEO:")
  message(FATAL_ERROR "the int8 checkpoint and --int8 differ:\n${int8_text}\n---\n${sf_out}")
endif()

# llama2.c's version 2 (Q8_0) runs on the int8 decoder: groups of 32 as they are in the file (the
# weights are export.py's quantization, not convert --int8's), groups of 8 requantized in groups of 32.
sf_ok(convert "${model}" -o "${WORK}/m.v2.bin" --llama2c 2 --group-size 32)
sf_ok(run "${WORK}/m.v2.bin" -z "${tok512}" -t 0 -n 64 -i "ROMEO:")
expect_match("run m.v2.bin" "${sf_err}" "; int8 weights, ")
expect_match("run m.v2.bin" "${sf_out}" "^ROMEO:")
if(sf_err MATCHES "requantized")
  message(FATAL_ERROR "run m.v2.bin (groups of 32): requantized:\n${sf_err}")
endif()
sf_ok(convert "${model}" -o "${WORK}/m.v2g8.bin" --llama2c 2 --group-size 8)
sf_ok(run "${WORK}/m.v2g8.bin" -z "${tok512}" -t 0 -n 64 -i "ROMEO:")
expect_match("run m.v2g8.bin" "${sf_err}" "m.v2g8.bin: Q8_0 groups of 8 requantized in groups of 32 \\(staticformer's int8\\)")
expect_match("run m.v2g8.bin" "${sf_err}" "; int8 weights, ")

# export: a C++ header with the weights and the tokenizer's tables; greedy text from it (check.cpp,
# built with the project's compiler and flags) is `staticformer run`'s.
sf_ok(export "${model}" -o "${WORK}/m.hpp")
expect_match("export" "${sf_err}" "wrote .*m.hpp \\(.*, float weights, BPE tokenizer\\)")
file(READ "${WORK}/m.hpp" header LIMIT 3000)
expect_match("the header" "${header}" "#define SF_MODEL_BPE 1\ninline constexpr std::size_t vocab_size = 512;")
string(REPLACE "|" ";" flags "${FLAGS}")
string(REPLACE "|" ";" includes "${INCLUDES}")
set(incs)
foreach(d IN LISTS includes)
  if(d)
    list(APPEND incs "-I${d}")
  endif()
endforeach()
execute_process(COMMAND "${CXX}" ${flags} ${incs} "-DSF_EXPORTED_HEADER=\"${WORK}/m.hpp\"" "${SRC}" ${LIBS} -o "${WORK}/check"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building tools/export/check.cpp against the BPE header failed:\n${out}\n${err}")
endif()
foreach(prompt "ROMEO:" "JULIET: O Romeo, Romeo! wherefore art thou Romeo?")  # (the second: past the context, a slide)
  execute_process(COMMAND "${WORK}/check" "${model}" "${prompt}" 40 RESULT_VARIABLE rc OUTPUT_VARIABLE from_header ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "check ${model} \"${prompt}\" 40: exit status ${rc}\n${from_header}\n${err}")
  endif()
  sf_ok(run "${model}" -t 0 --tokens 40 -i "${prompt}" --no-echo -q)
  if(NOT from_header STREQUAL sf_out)
    message(FATAL_ERROR "the exported header's greedy text after \"${prompt}\"\n[${from_header}]\ndiffers from the host's\n[${sf_out}]")
  endif()
  message(STATUS "ok: the exported header's greedy text after \"${prompt}\" is the host's: [${from_header}]")
endforeach()

# ---- refusals
sf_error(2 "carries its own tokenizer \\(its metadata 'tokenizer.vocab' or 'tokenizer.bpe'\\)" run "${model}" -z "${tok512}")
sf_error(2 "--llama2c: '3' is not a version of llama2.c's model file \\(0, 1 or 2\\)" convert "${model}" -o "${WORK}/x.bin" --llama2c 3)
sf_error(2 "--int8 and --llama2c: one conversion at a time" convert "${model}" -o "${WORK}/x.bin" --llama2c 0 --int8)
sf_error(1 "convert: .*m-int8.safetensors: an int8 checkpoint; convert its float original"
         convert "${WORK}/m-int8.safetensors" -o "${WORK}/x.bin" --llama2c 2)
# run.c's RMSNorm adds 1e-5: another norm_eps is refused (the same checkpoint with "1e-05" edited).
sf_edit_header("${model}" "${WORK}/eps.safetensors" "\"1e-05\"" "\"2e-05\"")
sf_error(1 "convert: .*eps.safetensors': llama2.c holds only norm_eps 1e-5 models \\(this one: 2e-05\\)"
         convert "${WORK}/eps.safetensors" -o "${WORK}/x.bin" --llama2c 0)
# A character tokenizer (the same architecture, trained without --tokenizer): the weights convert,
# the tokenizer does not.
sf_ok(train --config "${WORK}/llama.json" --data "${CORPUS}" --steps 2 --out "${WORK}/chars.safetensors")
sf_ok(info "${WORK}/chars.safetensors")
expect_match("info" "${sf_out}" "tokenizer: characters, 65 \\(metadata tokenizer.vocab\\)")
sf_error(1 "convert: --tokenizer-out: .*chars.safetensors carries a character tokenizer"
         convert "${WORK}/chars.safetensors" -o "${WORK}/x.bin" --llama2c 0 --tokenizer-out "${WORK}/x-tok.bin")
sf_ok(convert "${WORK}/chars.safetensors" -o "${WORK}/chars.v0.bin" --llama2c 0)
foreach(x x.bin x-tok.bin)
  if(EXISTS "${WORK}/${x}")
    message(FATAL_ERROR "a refused conversion wrote ${WORK}/${x}")
  endif()
endforeach()
message(STATUS "staticformer train --tokenizer, convert --llama2c, export: the same text from the checkpoint, llama2.c's files and the header; refusals as expected")
