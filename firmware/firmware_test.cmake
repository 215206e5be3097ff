# The firmware test, run by CTest (firmware_cortex_m4):
#   cmake -DTRAIN=<examples/train> -DLLAMA=<sf_train_llama> -DSTATICFORMER=<staticformer>
#         -DCORPUS=<tinyshakespeare.txt> -DSOURCE=<staticformer root>
#         -DQEMU=<qemu-system-arm> -DNM=<arm-none-eabi-nm> -DSIZE=<arm-none-eabi-size> -DWORK=<dir>
#         -P firmware_test.cmake
# Trains nano (GPT-2 style: LayerNorm, learned positions, GELU, tied, biases) with examples/train
# and ref-llama (RoPE, RMSNorm, ReLU, untied, no biases) with firmware/host/train_llama; for
# each, float and int8 weights: exports the header, configures and builds firmware/ with the
# Cortex-M4 toolchain file exactly as docs/firmware.md shows, checks the ELF (no heap symbols, no
# double-precision helpers, the weights in flash, the library's code within 32 KB), runs it under
# qemu-system-arm -M mps2-an386 with a timeout, and requires the generated tokens to equal
# `staticformer run`'s on the host: greedy, and sampled (temperature, top-k, top-p, seed); runs firmware/kernel_check (the int8 SMLAD kernel and the float products
# against their references on the device). Then: a RAM budget too small for the decoder and a program that calls
# malloc must both fail to build, with their messages. WORK/summary.txt gets the figures.
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(ENV{STATICFORMER_CACHE} "${WORK}/cache")  # ref-llama is compiled on first use
set(tokens 100)
set(prompt "ROMEO:")
set(toolchain "${SOURCE}/cmake/toolchain-cortex-m4.cmake")

include("${CMAKE_CURRENT_LIST_DIR}/firmware_checks.cmake")  # run, check_firmware_elf, expect_heap_probe_refused, write_summary

# Configures and builds the firmware for `header` in `dir`; extra arguments go to the configure.
# Sets build_rc and build_log in the caller.
function(build_firmware dir header)
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE}/firmware" -B "${dir}" "-DCMAKE_TOOLCHAIN_FILE=${toolchain}"
                          "-DSF_MODEL_HEADER=${header}" "-DSF_TOKENS=${tokens}" "-DSF_PROMPT=${prompt}" ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring the firmware failed:\n${out}\n${err}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build "${dir}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(build_rc ${rc} PARENT_SCOPE)
  set(build_log "${out}\n${err}" PARENT_SCOPE)
endfunction()

# ---------------------------------------------------------------- the two models
run(t 0 "${TRAIN}" --steps 300 --no-plot --sample 0 --seconds 3600 --eval-batches 2 --seed 5 --out "${WORK}/nano")
run(t 0 "${LLAMA}" "${CORPUS}" "${WORK}/llama.safetensors" 1500)
message(STATUS "${t}")

set(summary "")
# name | checkpoint | export option | `staticformer run`'s options | the firmware's options
# (within a field, options are separated by commas)
set(greedy "--temperature,0")
set(sampled_host "--temperature,0.8,--top-k,20,--top-p,0.95,--seed,7")
set(sampled_fw "-DSF_TEMPERATURE=0.8,-DSF_TOP_K=20,-DSF_TOP_P=0.95,-DSF_SEED=7")
set(cases "nano-float|${WORK}/nano/model.safetensors||${greedy}|"
          "nano-int8|${WORK}/nano/model-int8.safetensors||${greedy}|"
          "llama-float|${WORK}/llama.safetensors||${greedy}|"
          "llama-int8|${WORK}/llama.safetensors|--int8|--int8,${greedy}|"
          "nano-float-sampled|${WORK}/nano/model.safetensors||${sampled_host}|${sampled_fw}"
          "llama-int8-sampled|${WORK}/llama.safetensors|--int8|--int8,${sampled_host}|${sampled_fw}")
foreach(c IN LISTS cases)
  string(REPLACE "|" ";" f "${c}")
  list(GET f 0 name)
  list(GET f 1 ckpt)
  list(GET f 2 export_opt)
  list(GET f 3 gen_opt)
  list(GET f 4 fw_opt)
  string(REPLACE "," ";" gen_opt "${gen_opt}")
  string(REPLACE "," ";" fw_opt "${fw_opt}")
  set(header "${WORK}/${name}.hpp")
  run(o 0 "${STATICFORMER}" export "${ckpt}" -o "${header}" ${export_opt})
  set(dir "${WORK}/fw-${name}")
  build_firmware("${dir}" "${header}" ${fw_opt})
  if(NOT build_rc EQUAL 0)
    message(FATAL_ERROR "${name}: building the firmware failed:\n${build_log}")
  endif()
  set(elf "${dir}/sf_firmware.elf")

  # No heap, no double helpers, the weights in flash; the sizes.
  check_firmware_elf("${name}" "${elf}" sf_model::weights)
  set(wbytes ${elf_bytes_0})
  set(text ${elf_text})
  set(data ${elf_data})
  set(bss ${elf_bss})
  math(EXPR code "${text} + ${data} - ${wbytes}")
  math(EXPR ram "${data} + ${bss}")
  if(code GREATER 32768)
    message(FATAL_ERROR "${name}: ${code} bytes of flash besides the weights (the goal is 32 KB)")
  endif()

  # Run it: the text must be the host's, token for token.
  run(out 0 timeout 300 "${QEMU}" -M mps2-an386 -nographic -monitor none -serial none
             -chardev stdio,id=out -semihosting-config enable=on,target=native,chardev=out -icount shift=0 -kernel "${elf}")
  if(NOT out MATCHES "text: <<<(.*)>>>\n" )
    message(FATAL_ERROR "${name}: no text in the firmware's output:\n${out}")
  endif()
  set(device "${CMAKE_MATCH_1}")
  run(host 0 "${STATICFORMER}" run "${ckpt}" ${gen_opt} --prompt "${prompt}" --tokens ${tokens} --no-echo -q)
  string(LENGTH "${device}" len)
  if(NOT len EQUAL tokens OR NOT device STREQUAL host)
    message(FATAL_ERROR "${name}: the firmware's text\n[${device}]\ndiffers from the host's\n[${host}]\n${out}")
  endif()
  if(NOT out MATCHES "decoding [0-9]+ \\(${tokens} tokens: ([0-9]+) per token\\)")
    message(FATAL_ERROR "${name}: no instruction count in the output:\n${out}")
  endif()
  set(per_token ${CMAKE_MATCH_1})
  string(APPEND summary "${name}: ${tokens} tokens identical to the host's; weights ${wbytes} B, flash besides "
                        "the weights ${code} B, RAM (.data+.bss) ${ram} B; ${per_token} instructions per token\n")
  message(STATUS "${name}: ${tokens} tokens identical to the host's [${device}]")
endforeach()

# ---------------------------------------------------------------- the kernels on the device
# (built with every firmware; the int8 SMLAD product and the float products against references)
run(out 0 timeout 300 "${QEMU}" -M mps2-an386 -nographic -monitor none -serial none
           -chardev stdio,id=out -semihosting-config enable=on,target=native,chardev=out
           -kernel "${WORK}/fw-nano-int8/sf_kernel_check.elf")
if(NOT out MATCHES "kernel check: 0 failures")
  message(FATAL_ERROR "the kernel check on the Cortex-M4 failed:\n${out}")
endif()
message(STATUS "${out}")
string(APPEND summary "${out}")

# ---------------------------------------------------------------- what must not build
# A RAM budget smaller than the decoder's state: the static_assert, with both sizes.
build_firmware("${WORK}/fw-small-budget" "${WORK}/nano-float.hpp" -DSF_RAM_BUDGET=16384)
if(build_rc EQUAL 0)
  message(FATAL_ERROR "a firmware whose decoder exceeds SF_RAM_BUDGET built")
endif()
if(NOT build_log MATCHES "exceeds the RAM budget SF_RAM_BUDGET" OR NOT build_log MATCHES "ram_budget_check<[0-9]+, 16384>")
  message(FATAL_ERROR "RAM budget: not the expected message:\n${build_log}")
endif()
# A program that allocates: the link fails (--wrap leaves __wrap_malloc undefined).
build_firmware("${WORK}/fw-heap" "${WORK}/llama-int8.hpp" -DSF_FIRMWARE_HEAP_PROBE=ON)
expect_heap_probe_refused()

write_summary()
