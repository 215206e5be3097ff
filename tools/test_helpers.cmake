# Helpers of the tests run as CMake scripts (the `staticformer` command's, tools/*_test.cmake, and
# the firmware's, firmware/firmware_checks.cmake): include() it; sf and sf_error run STATICFORMER.

# Runs staticformer ARGN; sets sf_rc, sf_out, sf_err. Where the caller sets sf_timeout (seconds),
# a run that takes longer is stopped and sf_rc says so (it equals no exit status).
function(sf)
  set(timeout)
  if(DEFINED sf_timeout)
    set(timeout TIMEOUT ${sf_timeout})
  endif()
  execute_process(COMMAND "${STATICFORMER}" ${ARGN} ${timeout} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(sf_rc "${rc}" PARENT_SCOPE)
  set(sf_out "${out}" PARENT_SCOPE)
  set(sf_err "${err}" PARENT_SCOPE)
endfunction()

# A run that must fail with exit status `status` and a message matching `regex` on stderr; sets
# sf_out and sf_err, for the caller's further checks.
function(sf_error status regex)
  sf(${ARGN})
  if(NOT sf_rc EQUAL status)
    message(FATAL_ERROR "staticformer ${ARGN}: exit status ${sf_rc}, expected ${status}\n${sf_out}\n${sf_err}")
  endif()
  if(NOT sf_err MATCHES "${regex}")
    message(FATAL_ERROR "staticformer ${ARGN}: the message does not match '${regex}':\n${sf_err}")
  endif()
  message(STATUS "ok (refused): staticformer ${ARGN}\n  ${sf_err}")
  set(sf_out "${sf_out}" PARENT_SCOPE)
  set(sf_err "${sf_err}" PARENT_SCOPE)
endfunction()

# Runs the command ARGN; its exit status must be expect_rc. Sets out_var (stdout) and out_var_err.
function(run out_var expect_rc)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expect_rc)
    message(FATAL_ERROR "${ARGN}\nexited with ${rc} (expected ${expect_rc})\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${out_var}_err "${err}" PARENT_SCOPE)
endfunction()

# `text` must match `regex`; else the test fails naming `what`.
function(expect_match what text regex)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: does not match '${regex}':\n${text}")
  endif()
endfunction()

# staticformer run MODEL ARGN -i "ROMEO: But soft" must print, byte for byte, the text of the file
# `expected`: what the reference program printed for the same model and flags (llama2.c's run.c:
# test/data/llama2c/*.expected.txt by tools/make_runc_reference.py; transformers' generate():
# test/data/hf/*.expected.txt by tools/make_hf_reference.py), and run.c's "achieved tok/s" line on
# stderr. Sets sf_out.
function(expect_text expected model)
  sf(run "${model}" ${ARGN} -i "ROMEO: But soft")
  file(READ "${expected}" want)
  get_filename_component(name "${expected}" NAME)
  if(NOT sf_rc EQUAL 0 OR NOT sf_out STREQUAL want)
    file(WRITE "${WORK}/got-${name}" "${sf_out}")
    message(FATAL_ERROR "staticformer run ${model} ${ARGN}: exit status ${sf_rc}, the text is not the reference's "
                        "(${WORK}/got-${name} vs ${expected})\nexpected:\n${want}\nstaticformer:\n${sf_out}\n${sf_err}")
  endif()
  if(NOT sf_err MATCHES "achieved tok/s: [0-9.]+")
    message(FATAL_ERROR "staticformer run ${model} ${ARGN}: no 'achieved tok/s' line on stderr:\n${sf_err}")
  endif()
  get_filename_component(m "${model}" NAME)
  string(LENGTH "${sf_out}" n)
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "ok: staticformer run ${m} ${shown}: the reference's text (${name}), ${n} bytes")
  set(sf_out "${sf_out}" PARENT_SCOPE)
endfunction()

# staticformer convert ARGN must succeed; sets sf_err (its report) in the caller.
function(convert)
  sf(convert ${ARGN})
  if(NOT sf_rc EQUAL 0)
    message(FATAL_ERROR "staticformer convert ${ARGN}: exit status ${sf_rc}\n${sf_out}\n${sf_err}")
  endif()
  message(STATUS "ok: ${sf_err}")
  set(sf_err "${sf_err}" PARENT_SCOPE)
endfunction()

# Files a and b must be equal byte for byte (`what` says why).
function(same a b what)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${a}" "${b}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what}: ${a} and ${b} differ")
  endif()
  get_filename_component(na "${a}" NAME)
  get_filename_component(nb "${b}" NAME)
  message(STATUS "ok: ${what}: ${na} = ${nb}")
endfunction()

# Files a and b must differ.
function(differ a b what)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${a}" "${b}" RESULT_VARIABLE rc)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${what}: ${a} and ${b} are equal")
  endif()
  message(STATUS "ok: ${what}: they differ")
endfunction()

# llama.cpp's llama-simple prints the BOS as "<s>", the first piece's space (sentencepiece's U+2581)
# and every byte piece (<0xXX>) as its byte; llama2.c's run.c — and `staticformer run` — print
# neither the BOS nor the space of the piece after it, and skip a lone byte that is neither
# printable nor white space (run.c's safe_printf). llama_simple_as_runc(out_var hex): llama-simple's
# stdout as hex (file(READ ... HEX)) turned into what run.c prints for the same tokens, as hex. Exact
# for a vocabulary whose pieces but the byte ones are printable ASCII (test/data/bpe/tok512.*'s):
# then every other byte is a byte piece's.
function(llama_simple_as_runc out_var hex)
  if(NOT hex MATCHES "^3c733e20")  # "<s> "
    message(FATAL_ERROR "llama-simple's text does not begin with '<s> ' (hex ${hex})")
  endif()
  string(SUBSTRING "${hex}" 8 -1 hex)
  string(LENGTH "${hex}" n)
  set(kept "")
  if(n GREATER 0)
    math(EXPR last "${n} - 2")
    foreach(i RANGE 0 ${last} 2)
      string(SUBSTRING "${hex}" ${i} 2 b)
      math(EXPR v "0x${b}")
      if((v GREATER_EQUAL 32 AND v LESS 127) OR (v GREATER_EQUAL 9 AND v LESS_EQUAL 13))
        string(APPEND kept "${b}")
      endif()
    endforeach()
  endif()
  set(${out_var} "${kept}" PARENT_SCOPE)
endfunction()

# expect_llama_simple_tokens(name model tokens prompt llama_file): `staticformer run MODEL -t 0
# --tokens N -i PROMPT` (its stdout written to WORK/name.staticformer.txt) must print exactly what
# run.c would print for llama-simple's text LLAMA_FILE (llama_simple_as_runc); sets sf_out, sf_err
# and want_hex (that text as hex) in the caller.
function(expect_llama_simple_tokens name model tokens prompt llama_file)
  file(READ "${llama_file}" llama HEX)
  llama_simple_as_runc(want "${llama}")
  sf(run "${model}" -t 0 --tokens ${tokens} -i "${prompt}")
  if(NOT sf_rc EQUAL 0)
    message(FATAL_ERROR "staticformer run ${model}: exit status ${sf_rc}\n${sf_out}\n${sf_err}")
  endif()
  file(WRITE "${WORK}/${name}.staticformer.txt" "${sf_out}")
  file(READ "${WORK}/${name}.staticformer.txt" got HEX)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${name}: staticformer run -t 0 does not print llama-simple's tokens "
                        "(${WORK}/${name}.staticformer.txt vs ${llama_file})\nstaticformer (hex): ${got}\n"
                        "llama-simple as run.c prints it (hex): ${want}\n${sf_err}")
  endif()
  set(sf_out "${sf_out}" PARENT_SCOPE)
  set(sf_err "${sf_err}" PARENT_SCOPE)
  set(want_hex "${want}" PARENT_SCOPE)
endfunction()
