# Test of `staticformer export`, run by CTest (tool_staticformer_export):
#   cmake -DSTATICFORMER=<staticformer> -DTRAIN=<train>
#         -DCXX=<compiler> "-DFLAGS=a|b|c" "-DINCLUDES=dir|dir" -DLIBS=<libstaticformer_io.a> -DSRC=<tools/export/check.cpp>
#         -DWORK=<scratch dir> -P export_test.cmake
# Trains a 60-step checkpoint, exports it (float; int8 quantized by the tool; int8 from train's
# int8 checkpoint), builds tools/export/check.cpp against each header and checks that the
# header's weights are the checkpoint's bit for bit and that greedy decoding from them prints
# exactly `staticformer run`'s greedy text; that a header asked for another configuration
# does not compile (the static_assert's message); that exporting is deterministic; the errors.
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
set(ENV{STATICFORMER_CACHE} "${WORK}/cache")
set(EXPORT "${STATICFORMER};export")
file(MAKE_DIRECTORY "${WORK}")
string(REPLACE "|" ";" flags "${FLAGS}")
string(REPLACE "|" ";" includes "${INCLUDES}")
set(incs)
foreach(d IN LISTS includes)
  if(d)
    list(APPEND incs "-I${d}")
  endif()
endforeach()

include("${CMAKE_CURRENT_LIST_DIR}/test_helpers.cmake")  # run

run(t 0 "${TRAIN}" --steps 60 --no-plot --sample 0 --seconds 3600 --eval-batches 2 --seed 3 --out "${WORK}/run")
set(ckpt "${WORK}/run/model.safetensors")
set(ckpt8 "${WORK}/run/model-int8.safetensors")

run(o 0 ${EXPORT} "${ckpt}" -o "${WORK}/float.hpp")
run(o 0 ${EXPORT} "${ckpt}" -o "${WORK}/int8.hpp" --int8)
run(o 0 ${EXPORT} "${ckpt8}" -o "${WORK}/int8-file.hpp")
run(o 0 ${EXPORT} "${ckpt}" -o "${WORK}/float-again.hpp")
file(SHA256 "${WORK}/float.hpp" h1)
file(SHA256 "${WORK}/float-again.hpp" h2)
if(NOT h1 STREQUAL h2)
  message(FATAL_ERROR "two exports of the same checkpoint differ")
endif()
file(READ "${WORK}/int8.hpp" a)
file(READ "${WORK}/int8-file.hpp" b)
string(FIND "${a}" "#pragma once" ia)  # (the first line names the input file)
string(FIND "${b}" "#pragma once" ib)
string(SUBSTRING "${a}" ${ia} -1 a)
string(SUBSTRING "${b}" ${ib} -1 b)
if(NOT a STREQUAL b)
  message(FATAL_ERROR "the int8 header quantized by the tool differs from the one of train's int8 checkpoint")
endif()

set(prompt "ROMEO:")
foreach(kind float int8 int8-file)
  run(o 0 "${CXX}" ${flags} ${incs} "-DSF_EXPORTED_HEADER=\"${WORK}/${kind}.hpp\"" "${SRC}" ${LIBS} -o "${WORK}/check-${kind}")
  set(input "${ckpt}")
  set(gen_opts)
  if(kind STREQUAL "int8-file")
    set(input "${ckpt8}")
  elseif(kind STREQUAL "int8")
    set(gen_opts --int8)
  endif()
  run(from_header 0 "${WORK}/check-${kind}" "${input}" "${prompt}" 40)
  run(from_host 0 "${STATICFORMER}" run "${input}" ${gen_opts} --prompt "${prompt}" --tokens 40 --temperature 0 --no-echo -q)
  string(LENGTH "${from_header}" len)
  if(NOT len EQUAL 40 OR NOT from_header STREQUAL from_host)
    message(FATAL_ERROR "${kind}: the exported header's greedy text\n[${from_header}]\ndiffers from the host's\n[${from_host}]")
  endif()
  message(STATUS "${kind}: 40 greedy characters identical to the host's: [${from_header}]")
endforeach()

# A header used with another configuration: the static_assert's message.
execute_process(COMMAND "${CXX}" ${flags} ${incs} -fsyntax-only "-DSF_EXPORTED_HEADER=\"${WORK}/int8.hpp\""
                        -DSF_EXPORT_WRONG_CONFIG "${SRC}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "a header used with another configuration compiled")
endif()
if(NOT err MATCHES "these weights are for the configuration V=65 T=64 D=64 H=4 L=2 F=256")
  message(FATAL_ERROR "a header used with another configuration: not the expected message\n${err}")
endif()

# Errors: one line, exit 1 (the files) or 2 (the command line).
run(o 1 ${EXPORT} "${WORK}/missing.safetensors" -o "${WORK}/x.hpp")
if(NOT o_err MATCHES "cannot open")
  message(FATAL_ERROR "missing file: ${o_err}")
endif()
file(WRITE "${WORK}/notes.txt" "hello")
run(o 1 ${EXPORT} "${WORK}/notes.txt" -o "${WORK}/x.hpp")
run(o 1 ${EXPORT} "${ckpt}" -o "${WORK}/no-such-dir/x.hpp")
if(NOT o_err MATCHES "cannot write")
  message(FATAL_ERROR "unwritable output: ${o_err}")
endif()
run(o 2 ${EXPORT} "${ckpt}")
