# The bad-input suite, run by CTest (`bad_inputs`, test/CMakeLists.txt):
#   cmake -DRUN=<staticformer-run> [-DTRAIN=<examples/train>] -DBAD=<test/data/bad> -DGOLDEN=<test/data/golden>
#         -DCORPUS=<data/tinyshakespeare.txt> -DWORK=<scratch dir> -P bad_inputs.cmake
# Replays the committed corpus test/data/bad/ (test/data/bad/make_bad.py, one file per class of
# error) through the real programs, plus inputs made here: 3 GB sparse files and /dev/zero under
# a 2 GB address-space limit, examples/train --resume of a checkpoint whose settings were edited,
# and meaningless command-line values. Each must end with the expected exit status (1 for a bad
# input, 2 for a bad command line: never an abort or a signal) and a message on stderr that
# contains the expected fragment. Without TRAIN (examples not built) the train cases are skipped.
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(good_model "${GOLDEN}/ref-gpt2.model.safetensors")
set(good_batch "${GOLDEN}/ref-gpt2-none.batch.safetensors")
set(failures 0)
set(checked 0)

# Runs ARGN (a program and its arguments), optionally under the address-space limit; sets rc, out, err.
set(limit_kb 2000000)
function(run limited)
  if(limited)
    execute_process(COMMAND sh -c "ulimit -v ${limit_kb} && exec \"$0\" \"$@\"" ${ARGN}
                    RESULT_VARIABLE r OUTPUT_VARIABLE o ERROR_VARIABLE e)
  else()
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE r OUTPUT_VARIABLE o ERROR_VARIABLE e)
  endif()
  set(rc "${r}" PARENT_SCOPE)
  set(out "${o}" PARENT_SCOPE)
  set(err "${e}" PARENT_SCOPE)
endfunction()

# expect(<status> <fragment> <limited> <program> <args>...): the exit status is <status> and stderr
# contains <fragment> (plain text, not a regex). Failures are counted, reported at the end.
function(expect status fragment limited)
  run(${limited} ${ARGN})
  string(FIND "${err}" "${fragment}" at)
  math(EXPR n "${checked} + 1")
  set(checked ${n} PARENT_SCOPE)
  list(JOIN ARGN " " cmd)
  # (a sanitizer's report also exits with status 1: it must not pass for a refusal)
  if(NOT "${rc}" STREQUAL "${status}" OR at LESS 0 OR err MATCHES "runtime error:|Sanitizer")
    message(SEND_ERROR "FAILED: ${cmd}\n  exit status '${rc}', expected ${status}; stderr:\n${err}\n"
                       "  expected a message containing: ${fragment}")
    math(EXPR f "${failures} + 1")
    set(failures ${f} PARENT_SCOPE)
  else()
    string(STRIP "${err}" line)
    message(STATUS "ok (${rc}): ${cmd}\n    ${line}")
  endif()
endfunction()

# The runner with a bad checkpoint (and a valid batch), or a bad batch (and a valid checkpoint).
macro(bad_model status fragment file)
  expect(${status} "${fragment}" OFF "${RUN}" --model "${file}" --batch "${good_batch}" --out "${WORK}/r.safetensors" ${ARGN})
endmacro()
macro(bad_batch status fragment file)
  expect(${status} "${fragment}" OFF "${RUN}" --model "${good_model}" --batch "${file}" --out "${WORK}/r.safetensors" ${ARGN})
endmacro()

# ------------------------------------------------------------------ the committed corpus: structure
bad_model(1 "has 5 bytes, fewer than the 8 bytes of the header length" "${BAD}/truncated-length.safetensors")
bad_model(1 "the header length is 64 bytes, but only 13 bytes follow it" "${BAD}/truncated-header.safetensors")
bad_model(1 "truncated file: '${BAD}/truncated-data.safetensors': tensor 'a' ends at byte 12 of the data, which has 4 bytes"
          "${BAD}/truncated-data.safetensors")
bad_model(1 "tensor 'a' ends at byte 104 of the data, which has 4 bytes" "${BAD}/offsets-out-of-range.safetensors")
bad_model(1 "tensor 'b' [4, 12) overlaps tensor 'a' [0, 8)" "${BAD}/offsets-overlapping.safetensors")
bad_model(1 "tensor 'b' starts at byte 8 of the data, but the previous data ends at byte 4 (tensors must be contiguous)"
          "${BAD}/offsets-gap.safetensors")
bad_model(1 "tensor 'a': data_offsets [0, 8] hold 8 bytes, but F32 [3] needs 12" "${BAD}/offsets-size-mismatch.safetensors")
bad_model(1 "8 bytes after the last tensor's data" "${BAD}/trailing-bytes.safetensors")
bad_model(1 "tensor 'a': unknown dtype \"F99\"" "${BAD}/unknown-dtype.safetensors")
bad_model(1 "the header is not valid JSON" "${BAD}/not-json.safetensors")
bad_model(1 "the header is not a JSON object" "${BAD}/not-an-object.safetensors")
bad_model(1 "ill-formed UTF-8 byte" "${BAD}/bad-utf8.safetensors")
bad_model(1 "ill-formed UTF-8 byte" "${BAD}/bad-utf8-metadata.safetensors")
bad_model(1 "the header nests JSON deeper than 64 levels" "${BAD}/deep-nesting.safetensors")
bad_model(1 "the header names 'a' twice" "${BAD}/duplicate-tensor.safetensors")
bad_model(1 "__metadata__ names 'n_layers' twice" "${BAD}/duplicate-metadata-key.safetensors")

# ------------------------------------------------------------------ the committed corpus: checkpoints
bad_model(1 "tensor 'blocks.0.attn.wq': element [3, 1] is nan (weights must be finite)"
          "${BAD}/non-finite.model.safetensors")
bad_model(1 "missing tensor 'pos_emb.weight'" "${BAD}/missing-tensor.model.safetensors")
bad_model(1 "unexpected tensor 'lm_head.weight'" "${BAD}/extra-tensor.model.safetensors")
bad_model(1 "tensor 'tok_emb.weight': expected dtype F32, found F64" "${BAD}/wrong-dtype.model.safetensors")
bad_model(1 "tensor 'blocks.0.attn.wq': expected shape [32, 32], found [32, 48]" "${BAD}/wrong-shape.model.safetensors")
bad_model(1 "metadata 'norm_eps': expected a positive number, found \"inf\"" "${BAD}/non-finite-metadata.model.safetensors")
# The opt-out: --allow-non-finite loads the NaN weights (and the loss is NaN).
run(OFF "${RUN}" --model "${BAD}/non-finite.model.safetensors" --batch "${good_batch}" --out "${WORK}/nan.safetensors"
    --allow-non-finite)
math(EXPR checked "${checked} + 1")
if(NOT rc STREQUAL "0" OR NOT out MATCHES "^loss nan")
  message(SEND_ERROR "FAILED: --allow-non-finite: exit status '${rc}', stdout '${out}', stderr:\n${err}")
  math(EXPR failures "${failures} + 1")
else()
  message(STATUS "ok (0): --allow-non-finite loads the NaN checkpoint: ${out}")
endif()

# ------------------------------------------------------------------ the committed corpus: batches
bad_batch(1 "tokens[1, 5] = 65 is out of range [0, 65)" "${BAD}/token-too-large.batch.safetensors")
bad_batch(1 "tokens[0, 2] = -1 is out of range [0, 65)" "${BAD}/token-negative.batch.safetensors")
bad_batch(1 "targets[0, 3] = -2 is out of range: expected -1 (ignore) or a token id in [0, 65)"
          "${BAD}/target-out-of-range.batch.safetensors")
bad_batch(1 "missing tensor 'targets'" "${BAD}/missing-tensor.batch.safetensors")
bad_batch(1 "unexpected tensor 'mask' in a batch" "${BAD}/extra-tensor.batch.safetensors")
bad_batch(1 "tensor 'tokens': expected dtype I32, found F32" "${BAD}/wrong-dtype.batch.safetensors")
bad_batch(1 "tensor 'tokens': expected shape [2, 16], found [32]" "${BAD}/wrong-shape.batch.safetensors")

# ------------------------------------------------------------------ 3 GB sparse files and /dev/zero, 2 GB address space
# Under AddressSanitizer a program cannot start with an address-space limit (its shadow memory):
# then these run without it, and the 3 GB file that is valid (it would be read whole) is skipped.
run(ON "${RUN}" --list)
if(rc STREQUAL "0")
  set(limited ON)
else()
  set(limited OFF)
  message(STATUS "the runner does not start under 'ulimit -v ${limit_kb}' (a sanitizer build?): the large inputs "
                 "run without the limit; the valid 3 GB checkpoint is skipped")
endif()
find_program(TRUNCATE truncate)
if(TRUNCATE)
  set(zeros "${WORK}/zeros-3G.safetensors")
  set(huge_header "${WORK}/huge-header-3G.safetensors")
  set(huge_data "${WORK}/huge-data-3G.safetensors")
  file(COPY_FILE "${BAD}/huge-header.prefix" "${huge_header}")
  file(COPY_FILE "${BAD}/huge-data.prefix" "${huge_data}")
  foreach(f "${zeros}" "${huge_header}" "${huge_data}")
    execute_process(COMMAND "${TRUNCATE}" -s 3G "${f}" RESULT_VARIABLE r)
    if(NOT r EQUAL 0)
      message(FATAL_ERROR "truncate -s 3G ${f} failed")
    endif()
  endforeach()
  foreach(as model batch)
    set(pair --model "${zeros}" --batch "${good_batch}")
    set(pair_h --model "${huge_header}" --batch "${good_batch}")
    if(as STREQUAL "batch")
      set(pair --model "${good_model}" --batch "${zeros}")
      set(pair_h --model "${good_model}" --batch "${huge_header}")
    endif()
    expect(1 "the header is not a JSON object" ${limited} "${RUN}" ${pair} --out "${WORK}/r.safetensors")
    expect(1 "the header length 2147483648 exceeds the limit of 100000000 bytes" ${limited}
           "${RUN}" ${pair_h} --out "${WORK}/r.safetensors")
  endforeach()
  if(limited)
    # A valid file of one 3 GB tensor: reading it needs more memory than the limit allows.
    expect(1 "not enough memory to read its 3221225472 bytes" ON
           "${RUN}" --model "${huge_data}" --batch "${good_batch}" --out "${WORK}/r.safetensors")
  endif()
  file(REMOVE "${zeros}" "${huge_header}" "${huge_data}")
else()
  message(STATUS "no truncate: the 3 GB sparse files are skipped")
endif()
if(EXISTS /dev/zero)
  expect(1 "'/dev/zero': the header is not a JSON object" ${limited}
         "${RUN}" --model /dev/zero --batch "${good_batch}" --out "${WORK}/r.safetensors")
  expect(1 "'/dev/zero': the header is not a JSON object" ${limited}
         "${RUN}" --model "${good_model}" --batch /dev/zero --out "${WORK}/r.safetensors")
else()
  message(STATUS "no /dev/zero: skipped")
endif()

# ------------------------------------------------------------------ command-line values of the runner
bad_model(2 "--lr: expected a number > 0, found \"nan\"" "${good_model}" --lr nan)
bad_model(2 "--lr: expected a number > 0, found \"inf\"" "${good_model}" --lr inf)
bad_model(2 "--lr: expected a number > 0, found \"0\"" "${good_model}" --lr 0)
bad_model(2 "--steps: expected an integer from 0 to 1000000, found \"-1\"" "${good_model}" --steps -1)
bad_model(2 "--steps: expected an integer from 0 to 1000000, found \"2x\"" "${good_model}" --steps 2x)

# ------------------------------------------------------------------ examples/train: command line and --resume
if(TRAIN)
  # A small corpus (the first 20000 characters of tiny-shakespeare) keeps every run short.
  file(READ "${CORPUS}" text LIMIT 20000)
  file(WRITE "${WORK}/corpus.txt" "${text}")
  set(data --data "${WORK}/corpus.txt" --no-plot --sample 0)
  macro(bad_train status fragment)
    expect(${status} "${fragment}" OFF "${TRAIN}" ${data} --out "${WORK}/never" ${ARGN})
  endmacro()
  bad_train(2 "--steps: expected an integer from 1 to 1000000000000, found \"0\"" --steps 0)
  bad_train(2 "--steps: expected an integer from 1 to 1000000000000, found \"1e300\"" --steps 1e300)
  bad_train(2 "--lr: expected a number > 0, found \"nan\"" --lr nan)
  bad_train(2 "--eval-batches: expected an integer from 0 to 1000000000, found \"-1\"" --eval-batches -1)
  bad_train(2 "--seed: expected an integer from 0 to 18446744073709551615, found \"-1\"" --seed -1)
  bad_train(2 "--seconds: expected a number > 0 and <= 1000000000, found \"nan\"" --seconds nan)
  bad_train(2 "--warmup: expected a number >= 0 and < 1, found \"1\"" --warmup 1)
  bad_train(2 "--threads: expected an integer from 1 to 64, found \"0\"" --threads 0)
  bad_train(2 "--precision: 'fp16' is not f32 or bf16" --precision fp16)
  if(EXISTS "${WORK}/never")
    message(SEND_ERROR "FAILED: a refused command line wrote ${WORK}/never")
    math(EXPR failures "${failures} + 1")
  endif()
  run(OFF "${TRAIN}" --help)
  if(NOT rc STREQUAL "0" OR NOT out MATCHES "--steps N +schedule length in steps, >= 1" OR NOT out MATCHES "0: no clipping"
     OR NOT out MATCHES "0: do not stop" OR NOT out MATCHES "0: the whole validation split")
    message(SEND_ERROR "FAILED: train --help does not say what a zero means:\n${out}")
    math(EXPR failures "${failures} + 1")
  endif()

  # A checkpoint to resume: one step of a 100000-step schedule, then saved.
  run(OFF "${TRAIN}" ${data} --steps 100000 --stop-after 1 --eval-batches 1000 --seed 12345 --clip 1.25 --seconds 3600
      --out "${WORK}/run")
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "train (the checkpoint to resume) exited with ${rc}\n${out}${err}")
  endif()
  file(GLOB optimizer_files "${WORK}/run/optimizer-*.safetensors")
  list(LENGTH optimizer_files n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "expected one optimizer file in ${WORK}/run, found: ${optimizer_files}")
  endif()
  get_filename_component(optimizer_name "${optimizer_files}" NAME)

  # Copies the run with `from` replaced by `to` (no longer: padded with spaces) in the optimizer
  # file's JSON header.
  include("${CMAKE_CURRENT_LIST_DIR}/../cmake/edit_safetensors_header.cmake")  # sf_edit_header
  function(edited_run dir from to)
    file(MAKE_DIRECTORY "${dir}")
    file(COPY_FILE "${WORK}/run/model.safetensors" "${dir}/model.safetensors")
    sf_edit_header("${WORK}/run/${optimizer_name}" "${dir}/${optimizer_name}" "${from}" "${to}")
  endfunction()

  # bad_resume(<key> <stored value> <bad value> <fragment>): --resume refuses the edited run.
  set(k 0)
  macro(bad_resume key stored value fragment)
    math(EXPR k "${k} + 1")
    edited_run("${WORK}/resume-${k}" "\"${key}\":\"${stored}\"" "\"${key}\":\"${value}\"")
    expect(1 "${fragment}" OFF "${TRAIN}" ${data} --resume "${WORK}/resume-${k}")
  endmacro()
  bad_resume(train.total_steps 100000 nan
             "metadata 'train.total_steps': expected an integer from 1 to 1000000000000, found \"nan\"")
  bad_resume(train.total_steps 100000 1e300
             "metadata 'train.total_steps': expected an integer from 1 to 1000000000000, found \"1e300\"")
  bad_resume(train.total_steps 100000 -5
             "metadata 'train.total_steps': expected an integer from 1 to 1000000000000, found \"-5\"")
  bad_resume(train.eval_batches 1000 -1
             "metadata 'train.eval_batches': expected an integer from 0 to 1000000000, found \"-1\"")
  bad_resume(train.lr 0.004 fast "metadata 'train.lr': expected a number > 0, found \"fast\"")
  bad_resume(train.seed 12345 -1
             "metadata 'train.seed': expected an integer from 0 to 18446744073709551615, found \"-1\"")
  bad_resume(train.warmup 0.05 1.5 "metadata 'train.warmup': expected a number >= 0 and < 1, found \"1.5\"")
  bad_resume(train.clip 1.25 nan "metadata 'train.clip': expected a number >= 0, found \"nan\"")
  bad_resume(beta2 0.999 inf "metadata 'beta2': expected a number >= 0 and < 1, found \"inf\"")
  # A key twice in the metadata (the first value would be lost): in place of "train.batch":"4".
  math(EXPR k "${k} + 1")
  edited_run("${WORK}/resume-${k}" "\"train.batch\":\"4\"" "\"a\":\"1\",\"a\":\"2\"")
  expect(1 "__metadata__ names 'a' twice" OFF "${TRAIN}" ${data} --resume "${WORK}/resume-${k}")
  # A damaged loss.csv beside a good checkpoint: refused with the line, not parsed loosely
  math(EXPR k "${k} + 1")
  edited_run("${WORK}/resume-${k}" "\"train.batch\":\"4\"" "\"train.batch\":\"4\"")
  file(WRITE "${WORK}/resume-${k}/loss.csv" "step,tokens,seconds,lr,train_loss,val_loss,train_loss_avg100\n0,0,0.000,0,,4.2,\n1,256,0.001,fast,4.1,,4.1\n")
  expect(1 "loss.csv' line 3: field 4: expected a number, found \"fast\"" OFF "${TRAIN}" ${data} --resume "${WORK}/resume-${k}")
  if(EXISTS /dev/zero)  # the corpus, and a loss.csv that never ends: read only up to a bound
    math(EXPR k "${k} + 1")
    edited_run("${WORK}/resume-${k}" "\"train.batch\":\"4\"" "\"train.batch\":\"4\"")
    file(CREATE_LINK /dev/zero "${WORK}/resume-${k}/loss.csv" SYMBOLIC)
    expect(1 "loss.csv': it is longer than " ${limited} "${TRAIN}" ${data} --resume "${WORK}/resume-${k}")
    expect(1 "cannot read the corpus '/dev/zero': it is longer than 268435456 bytes" ${limited} "${TRAIN}" --data /dev/zero --no-plot)
  endif()
else()
  message(STATUS "examples/train is not built (STATICFORMER_BUILD_EXAMPLES=OFF): its cases are skipped")
endif()

if(failures GREATER 0)
  message(FATAL_ERROR "${failures} of ${checked} bad inputs were not refused as expected")
endif()
message(STATUS "all ${checked} bad inputs refused as expected")
