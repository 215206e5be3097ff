# Test of `staticformer run` on checkpoints of examples/train, run by CTest (tools/CMakeLists.txt,
# label `tool`; it was staticformer-generate's test, and the generation code is the same):
#   cmake -DSTATICFORMER=<staticformer> -DTRAIN=<examples/train> -DGOLDEN=<test/data/golden>
#         -DWORK=<scratch dir> -P run_test.cmake
# Trains a small checkpoint with examples/train (60 steps), then checks generation with float and
# int8 weights, reproducibility from the seed, the int8 checkpoint written by --save-int8, a long
# generation through the context slides, and that each error is one line with its exit status
# (1: the files; 2: the command line).
cmake_minimum_required(VERSION 3.20)
set(ENV{STATICFORMER_CACHE} "${WORK}/cache")
foreach(program STATICFORMER TRAIN)
  if(NOT EXISTS "${${program}}")
    message(FATAL_ERROR "${${program}} is missing: build the targets staticformer_cli and train first")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# ------------------------------------------------------------------ helpers

# Runs `staticformer run` with ARGN; sets <p>_rc, <p>_out (stdout), <p>_err (stderr).
function(gen p)
  execute_process(COMMAND "${STATICFORMER}" run ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${p}_rc "${rc}" PARENT_SCOPE)
  set(${p}_out "${out}" PARENT_SCOPE)
  set(${p}_err "${err}" PARENT_SCOPE)
endfunction()

# Runs a generation that must succeed, print `chars` characters on stdout and end with the
# statistics line of `tokens` tokens with `weights` (float|int8) on stderr; sets <p>_out, <p>_err.
function(gen_ok p chars tokens weights)
  gen(g ${ARGN})
  string(LENGTH "${g_out}" n)
  if(NOT g_rc EQUAL 0)
    message(FATAL_ERROR "staticformer run ${ARGN}: exit status ${g_rc}\n${g_err}")
  endif()
  if(NOT n EQUAL chars)
    message(FATAL_ERROR "staticformer run ${ARGN}: ${n} characters on stdout, expected ${chars}:\n${g_out}")
  endif()
  set(num "[0-9.e+-]+")
  if(NOT g_err MATCHES "staticformer run: ${tokens} tokens in ${num} s, [0-9]+ tokens/s \\(prompt [0-9]+ tokens?(, the last [0-9]+)? in ${num} s; ${weights} weights, nano; loaded in ${num} s\\)\n$")
    message(FATAL_ERROR "staticformer run ${ARGN}: no statistics line for ${tokens} tokens, ${weights} weights, on stderr:\n${g_err}")
  endif()
  message(STATUS "ok: ${ARGN}\n  ${g_err}")
  set(${p}_out "${g_out}" PARENT_SCOPE)
  set(${p}_err "${g_err}" PARENT_SCOPE)
endfunction()

# Runs a command line that must fail: exit status `status`, nothing on stdout, and on stderr exactly
# one line, "staticformer run: ..." matching `regex`.
function(gen_error status regex)
  sf_error(${status} "${regex}" run ${ARGN})
  if(NOT sf_out STREQUAL "")
    message(FATAL_ERROR "staticformer run ${ARGN}: wrote on stdout:\n${sf_out}")
  endif()
  if(NOT sf_err MATCHES "^staticformer run: [^\n]*\n$")
    message(FATAL_ERROR "staticformer run ${ARGN}: stderr is not one line:\n${sf_err}")
  endif()
endfunction()

function(expect_equal a b what)
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "${what}: the texts differ:\n---\n${a}\n---\n${b}")
  endif()
endfunction()

include("${CMAKE_CURRENT_LIST_DIR}/test_helpers.cmake")  # sf_error
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/edit_safetensors_header.cmake")  # sf_edit_header

# ------------------------------------------------------------------ a checkpoint
execute_process(COMMAND "${TRAIN}" --steps 60 --no-plot --sample 0 --seconds 3600 --eval-batches 2 --seed 3
                        --out "${WORK}/run"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS "${WORK}/run/model.safetensors")
  message(FATAL_ERROR "train exited with ${rc}\n${out}${err}")
endif()
set(model "${WORK}/run/model.safetensors")

# ------------------------------------------------------------------ float weights
gen_ok(f 200 200 float "${model}" --no-echo --tokens 200 --seed 5)
gen_ok(echo 56 50 float "${model}" --prompt "ROMEO:" --tokens 50 --seed 5)  # the prompt, then 50 characters
string(SUBSTRING "${echo_out}" 0 6 head)
expect_equal("${head}" "ROMEO:" "--prompt is printed first")
# A prompt longer than the context (T = 64): its last 64 tokens are prefilled.
string(REPEAT "To be, or not to be. " 5 long_prompt)  # 105 characters
gen_ok(lp 115 10 float "${model}" --prompt "${long_prompt}" --tokens 10)
if(NOT lp_err MATCHES "prompt 105 tokens, the last 64 in" OR NOT lp_out MATCHES "^To be, or not")
  message(FATAL_ERROR "a long prompt of 105 characters:\n${lp_out}\n${lp_err}")
endif()
gen(quiet "${model}" --no-echo --tokens 20 --quiet)  # no statistics line
string(LENGTH "${quiet_out}" n)
if(NOT quiet_rc EQUAL 0 OR NOT n EQUAL 20 OR NOT quiet_err STREQUAL "")
  message(FATAL_ERROR "--quiet: exit status ${quiet_rc}, ${n} characters, stderr '${quiet_err}'")
endif()

# The seed: the same one gives the same text, another one another text (temperature 1).
gen_ok(s1 300 300 float "${model}" --no-echo --tokens 300 --temperature 1 --seed 11)
gen_ok(s2 300 300 float "${model}" --no-echo --tokens 300 --temperature 1 --seed 11)
gen_ok(s3 300 300 float "${model}" --no-echo --tokens 300 --temperature 1 --seed 12)
expect_equal("${s1_out}" "${s2_out}" "the same seed twice")
if(s1_out STREQUAL s3_out)
  message(FATAL_ERROR "seeds 11 and 12 gave the same text:\n${s1_out}")
endif()
# Greedy: deterministic, whatever the seed. top-k and top-p run.
gen_ok(g1 300 300 float "${model}" --no-echo --tokens 300 --temperature 0 --seed 1)
gen_ok(g2 300 300 float "${model}" --no-echo --tokens 300 --temperature 0 --seed 2)
expect_equal("${g1_out}" "${g2_out}" "greedy decoding with two seeds")
gen_ok(k 100 100 float "${model}" --no-echo --tokens 100 --top-k 5 --top-p 0.9 --seed 4)
# Past the context (T = 64): the stream slides, any number of tokens.
gen_ok(long 1000 1000 float "${model}" --no-echo --tokens 1000 --seed 6)

# ------------------------------------------------------------------ int8 weights
gen_ok(q 300 300 int8 "${model}" --int8 --no-echo --tokens 300 --temperature 1 --seed 11)
gen_ok(qlong 1000 1000 int8 "${model}" --int8 --no-echo --tokens 1000 --seed 6)
# --save-int8 then --tokens 0: only the file; it loads (int8 recognised) and gives --int8's text.
gen(save "${model}" --save-int8 "${WORK}/m8.safetensors" --tokens 0)
if(NOT save_rc EQUAL 0 OR NOT EXISTS "${WORK}/m8.safetensors" OR NOT save_out STREQUAL "")
  message(FATAL_ERROR "--save-int8 --tokens 0: exit status ${save_rc}, stdout '${save_out}'\n${save_err}")
endif()
gen_ok(q8 300 300 int8 "${WORK}/m8.safetensors" --no-echo --tokens 300 --temperature 1 --seed 11)
expect_equal("${q_out}" "${q8_out}" "--int8 and the checkpoint written by --save-int8")
# --save-int8 with generation: the weights are float unless --int8; the same texts again.
gen_ok(save2 300 300 float "${model}" --save-int8 "${WORK}/m8b.safetensors" --no-echo --tokens 300 --temperature 1 --seed 11)
expect_equal("${s1_out}" "${save2_out}" "float weights with and without --save-int8")
gen_ok(save3 300 300 int8 "${model}" --int8 --save-int8 "${WORK}/m8c.safetensors" --no-echo --tokens 300 --temperature 1 --seed 11)
expect_equal("${q_out}" "${save3_out}" "--int8 with and without --save-int8")
execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${WORK}/m8.safetensors" "${WORK}/m8c.safetensors"
                RESULT_VARIABLE differ)
if(differ)
  message(FATAL_ERROR "two --save-int8 of the same checkpoint wrote different files")
endif()
# examples/train's own int8 checkpoint: the same weights, the same text.
gen_ok(qt 300 300 int8 "${WORK}/run/model-int8.safetensors" --no-echo --tokens 300 --temperature 1 --seed 11)
expect_equal("${q_out}" "${qt_out}" "--int8 and examples/train's model-int8.safetensors")
if(q_out STREQUAL s1_out)
  message(FATAL_ERROR "int8 and float weights gave exactly the same 300 characters (the int8 path did not run?)")
endif()

# ------------------------------------------------------------------ errors: one line each
gen_error(1 "cannot open '.*missing.safetensors': No such file or directory" "${WORK}/missing.safetensors")
file(WRITE "${WORK}/not-safetensors.txt" "This is a text file, not a safetensors checkpoint.\n")
gen_error(1 "truncated file: '.*not-safetensors.txt': the header length is [0-9]+ bytes" "${WORK}/not-safetensors.txt")
gen_error(1 "the prompt's character '@' \\(byte 64\\) at offset 5 is not in the checkpoint's vocabulary"
          "${model}" --prompt "To be@")
gen_error(1 "sampling: top_k must be between 0 \\(off\\) and V = 65" "${model}" --top-k 66)
gen_error(2 "--tokens: 'ten' is not a non-negative integer" "${model}" --tokens ten)
gen_error(2 "-t: '0.8x' is not a number" "${model}" --temperature 0.8x)
gen_error(2 "unknown option '--bogus'" "${model}" --bogus)
gen_error(2 "--int8 takes no value" "${model}" --int8=yes)
# No tokenizer: the same checkpoint with the key renamed, and a golden file (docs/model.md's, no tokenizer).
sf_edit_header("${model}" "${WORK}/notok.safetensors" "\"tokenizer.vocab\"" "\"tokenizer.other\"")
gen_error(1 "no tokenizer vocabulary \\(metadata 'tokenizer.vocab', or 'tokenizer.bpe' for a BPE one\\)" "${WORK}/notok.safetensors")
gen_error(1 "no tokenizer vocabulary" "${GOLDEN}/ref-gpt2.model.safetensors")
# A safetensors file that is not a checkpoint (a batch file).
gen_error(1 "not a staticformer checkpoint: missing metadata" "${GOLDEN}/ref-gpt2-none.batch.safetensors")
# run.c's rule for a top-p outside [0, 1]: 0.9 (not an error); the same text as -p 0.9.
gen_ok(p15 100 100 float "${model}" --no-echo --tokens 100 --seed 3 --top-p 1.5)
gen_ok(p09 100 100 float "${model}" --no-echo --tokens 100 --seed 3 --top-p 0.9)
expect_equal("${p15_out}" "${p09_out}" "-p 1.5 (run.c: 0.9) and -p 0.9")

message(STATUS "staticformer run: float and int8 generation, seeds, --save-int8, slides and errors as expected")
