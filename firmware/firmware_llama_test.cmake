# The firmware test of a stories260K-shaped LLaMA model with llama2.c's BPE tokenizer, run by CTest
# (firmware_cortex_m7_llama):
#   cmake -DSTATICFORMER=<staticformer> -DMODEL=<test/data/stories260k/model-int8.safetensors>
#         -DSOURCE=<staticformer root> -DQEMU=<qemu-system-arm> -DNM=<arm-none-eabi-nm>
#         -DSIZE=<arm-none-eabi-size> -DCXX=<host compiler> "-DINCLUDES=dir|dir" "-DHOST_FLAGS=a|b"
#         -DWORK=<dir> -P firmware_llama_test.cmake
# The model (test/data/stories260k/README.md: trained by `staticformer train` with
# test/data/bpe/tok512.bin, int8) is exported with `staticformer export` (its BPE tokenizer's
# tables in the header); firmware/ is built for QEMU's mps2-an500 (a Cortex-M7, laid out as a part
# with 2 MiB of flash and 1 MiB of RAM) exactly as docs/firmware.md shows; the ELF is checked (no
# heap symbols, no double-precision helpers, the weights and the tokenizer's tables in flash, at
# most 32 KB of flash besides the constant tables); it runs under qemu-system-arm with a timeout.
# Two cases: greedy, 600 tokens after "ROMEO:" (past the context of 512: one slide), and sampled
# with run.c's recipe (temperature 0.8, top-p 0.9, seed 7), 200 tokens. Each is checked
#   - against the same program built for the host (firmware/main.cpp with firmware/host/board.hpp,
#     -DSF_SIMD_FORCE_SCALAR: the device's kernels and order of every sum, and FMA as the device
#     has it: HOST_FLAGS): the prompt's ids, the text, the ids and the bits of the last logits must
#     be the same;
#   - greedy, against `staticformer run` with the same prompt: the text of its first 200 tokens.
#     (Its SIMD kernels sum the softmax and the norms in 4, 8 or 16 lanes, so its logits differ from
#     the scalar ones in the last bits, and int8 makes whole quantization steps of some of those
#     differences: texts part at the first near-tie. With this model the greedy text after "ROMEO:"
#     is the same on AVX-512, AVX2, NEON, x86-64 without AVX2 and the device to token 242; sampled
#     texts part within tens of tokens: docs/firmware.md.)
# The firmware encodes the prompt at compile time and again on the device, and fails if the two
# differ. Then: the same model built for mps2-an386 (a Cortex-M4 part's 128 KiB of RAM) must fail
# with the RAM budget's message (the decoder needs 680 KB: why the Cortex-M7), and a firmware that
# calls malloc must fail to link. WORK/summary.txt gets the figures.
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(ENV{STATICFORMER_CACHE} "${WORK}/cache")  # the architecture's executable is compiled on first use
include("${CMAKE_CURRENT_LIST_DIR}/firmware_checks.cmake")  # run, check_firmware_elf, expect_heap_probe_refused, write_summary
set(board mps2-an500)

string(REPLACE "|" ";" host_flags "${HOST_FLAGS}")
string(REPLACE "|" ";" includes "${INCLUDES}")
foreach(d IN LISTS includes)
  if(d)
    list(APPEND host_flags "-I${d}")
  endif()
endforeach()

# Configures and builds the firmware for `header` in `dir` for the board `fw_board`; extra
# arguments go to the configure. Sets build_rc and build_log in the caller.
function(build_firmware dir fw_board header)
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE}/firmware" -B "${dir}" "-DSF_BOARD=${fw_board}"
                          "-DSF_MODEL_HEADER=${header}" ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring the firmware failed:\n${out}\n${err}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build "${dir}" --target sf_firmware
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(build_rc ${rc} PARENT_SCOPE)
  set(build_log "${out}\n${err}" PARENT_SCOPE)
endfunction()

# ---------------------------------------------------------------- the header
set(header "${WORK}/s260.hpp")
run(o 0 "${STATICFORMER}" export "${MODEL}" -o "${header}")
file(STRINGS "${header}" h REGEX "^(#define SF_MODEL_BPE 1|inline constexpr sf::bpe_tokenizer tokenizer = |// Configuration .*int8 \\(Q8_0\\) weights)")
list(LENGTH h n)
if(NOT n EQUAL 3)
  message(FATAL_ERROR "the exported header has no BPE tokenizer or no int8 weights: of the three lines looked for, only\n${h}")
endif()

# ---------------------------------------------------------------- the runs
set(summary "")
# name | prompt | tokens | the first tokens compared with `staticformer run` (0: none) | its options |
# the firmware's options (within a field, options separated by commas); see the header comment
set(cases "greedy|ROMEO:|600|200|-t,0|"
          "sampled|JULIET: O Romeo, Romeo|200|0||-DSF_TEMPERATURE=0.8,-DSF_TOP_P=0.9,-DSF_SEED=7,-DSF_SAMPLER=llama2c")
foreach(c IN LISTS cases)
  string(REPLACE "|" ";" f "${c}")
  list(GET f 0 name)
  list(GET f 1 prompt)
  list(GET f 2 tokens)
  list(GET f 3 host_tokens)
  list(GET f 4 gen_opt)
  list(GET f 5 fw_opt)
  string(REPLACE "," ";" gen_opt "${gen_opt}")
  string(REPLACE "," ";" fw_opt "${fw_opt}")
  set(dir "${WORK}/fw-${name}")
  build_firmware("${dir}" ${board} "${header}" "-DSF_PROMPT=${prompt}" "-DSF_TOKENS=${tokens}" ${fw_opt})
  if(NOT build_rc EQUAL 0)
    message(FATAL_ERROR "${name}: building the firmware failed:\n${build_log}")
  endif()
  set(elf "${dir}/sf_firmware.elf")

  # No heap, no double helpers; the weights, the tokenizer's tables and the RoPE table in flash.
  check_firmware_elf("${name}" "${elf}" sf_model::weights sf_model::bpe_bytes sf_model::bpe_offsets
                     sf_model::bpe_scores sf_model::bpe_sorted sf_model::tokenizer "sf::layers::rope<[^\n]*>::table")
  set(wbytes ${elf_bytes_0})
  math(EXPR tokbytes "${elf_bytes_1} + ${elf_bytes_2} + ${elf_bytes_3} + ${elf_bytes_4} + ${elf_bytes_5}")
  set(ropebytes ${elf_bytes_6})
  math(EXPR flash "${elf_text} + ${elf_data}")
  math(EXPR code "${flash} - ${wbytes} - ${tokbytes} - ${ropebytes}")
  math(EXPR ram "${elf_data} + ${elf_bss}")
  if(code GREATER 32768)
    message(FATAL_ERROR "${name}: ${code} bytes of flash besides the weights and the tables (the goal is 32 KB)")
  endif()
  run(syms 0 "${NM}" -S -C "${elf}")
  if(NOT syms MATCHES "[0-9a-f]+ ([0-9a-f]+) [bB] \\(anonymous namespace\\)::dec\n")
    message(FATAL_ERROR "${name}: no decoder in .bss")
  endif()
  math(EXPR decbytes "0x${CMAKE_MATCH_1}")

  # Run it.
  run(out 0 timeout 300 "${QEMU}" -M ${board} -nographic -monitor none -serial none
             -chardev stdio,id=out -semihosting-config enable=on,target=native,chardev=out -icount shift=0 -kernel "${elf}")
  if(NOT out MATCHES "text: <<<(.*)>>>\n")
    message(FATAL_ERROR "${name}: no text in the firmware's output:\n${out}")
  endif()
  set(device_text "${CMAKE_MATCH_1}")

  # The same program on the host, with the device's scalar kernels: the same lines, bit for bit
  # (all but the first, the instruction counts and the stack).
  set(defs "-DSF_MODEL_HEADER=\"${header}\"" "-DSF_PROMPT=\"${prompt}\"" -DSF_TOKENS=${tokens} -DSF_RAM_BUDGET=983040
           -DSF_TEMPERATURE=0 -DSF_TOP_K=0 -DSF_TOP_P=1 -DSF_SEED=1 -DSF_SAMPLER=staticformer)
  foreach(o IN LISTS fw_opt)  # (the case's settings replace the defaults)
    string(REGEX REPLACE "=.*" "" key "${o}")
    list(FILTER defs EXCLUDE REGEX "^${key}=")
    list(APPEND defs "${o}")
  endforeach()
  run(o 0 "${CXX}" -std=c++20 -O2 -ffp-contract=off -fno-math-errno -Wall -Wextra -Werror ${host_flags}
          -DSF_SIMD_FORCE_SCALAR -DSF_HOST_BOARD "-DSF_CPU_NAME=\"host\"" ${defs} -I${SOURCE}/firmware
          "${SOURCE}/firmware/main.cpp" -o "${dir}/host-reference")
  run(ref 0 "${dir}/host-reference")
  foreach(what "prompt ids \\(encoded on the device\\)" "prompt ids" "ids" "logits \\(the last, FNV-1a of their bits\\)")
    if(NOT out MATCHES "(^|\n)${what}: ([^\n]*)\n")
      message(FATAL_ERROR "${name}: no '${what}' line in the firmware's output:\n${out}")
    endif()
    set(a "${CMAKE_MATCH_2}")
    if(NOT ref MATCHES "(^|\n)${what}: ([^\n]*)\n" OR NOT CMAKE_MATCH_2 STREQUAL a)
      message(FATAL_ERROR "${name}: the line '${what}' differs between the device and the host's scalar build:\n${out}\n---\n${ref}")
    endif()
  endforeach()
  string(FIND "${ref}" "text: <<<${device_text}>>>\n" at)  # (the whole text, across its lines)
  if(at LESS 0)
    message(FATAL_ERROR "${name}: the text differs between the device and the host's scalar build:\n${out}\n---\n${ref}")
  endif()

  # `staticformer run`: the same text, that of its first host_tokens tokens.
  if(host_tokens GREATER 0)
    run(host 0 "${STATICFORMER}" run "${MODEL}" ${gen_opt} -i "${prompt}" --tokens ${host_tokens} --no-echo -q)
    string(REGEX REPLACE "\n$" "" host "${host}")  # (staticformer run ends a BPE model's text with a newline, as run.c)
    string(LENGTH "${host}" host_length)
    string(SUBSTRING "${device_text}" 0 ${host_length} device_start)
    if(host_length LESS 200 OR NOT device_start STREQUAL host)
      message(FATAL_ERROR "${name}: the firmware's text\n[${device_text}]\ndoes not start with staticformer run's (${host_tokens} tokens)\n[${host}]\n${out}")
    endif()
    set(compared "; its first ${host_tokens} tokens' text is staticformer run's")
  else()
    set(compared "")
  endif()
  if(NOT out MATCHES "\nids:([ 0-9]*)\n")
    message(FATAL_ERROR "${name}: no ids in the output:\n${out}")
  endif()
  string(REGEX MATCHALL "[0-9]+" ids "${CMAKE_MATCH_1}")
  list(LENGTH ids generated)
  if(NOT generated EQUAL tokens)
    message(FATAL_ERROR "${name}: ${generated} tokens, not ${tokens} (a <s> ended the text)")
  endif()
  if(NOT out MATCHES "prompt ids \\(encoded on the device\\):([ 0-9]*)\n")
    message(FATAL_ERROR "${name}: no prompt ids encoded on the device in the output:\n${out}")
  endif()
  set(device_prompt "${CMAKE_MATCH_1}")
  if(NOT out MATCHES "\nprompt ids:${device_prompt}\n")
    message(FATAL_ERROR "${name}: the prompt's ids encoded on the device are not the compile-time ones:\n${out}")
  endif()
  if(NOT out MATCHES "decoding [0-9]+ \\([0-9]+ tokens: ([0-9]+) per token\\)")
    message(FATAL_ERROR "${name}: no instruction count in the output:\n${out}")
  endif()
  set(per_token ${CMAKE_MATCH_1})
  if(NOT out MATCHES "prefill ([0-9]+) \\(([0-9]+) tokens\\)")
    message(FATAL_ERROR "${name}: no prefill count in the output:\n${out}")
  endif()
  set(prefill "${CMAKE_MATCH_1} instructions for ${CMAKE_MATCH_2} prompt tokens")
  if(NOT out MATCHES "stack: ([0-9]+) bytes used of ([0-9]+)")
    message(FATAL_ERROR "${name}: no stack figure in the output:\n${out}")
  endif()
  set(stack "${CMAKE_MATCH_1} of ${CMAKE_MATCH_2}")
  string(APPEND summary "${name}: ${generated} tokens, the host's scalar build's bit for bit${compared}; flash ${flash} B (weights ${wbytes}, "
                        "tokenizer ${tokbytes}, RoPE table ${ropebytes}, code and the rest ${code}); RAM ${ram} B "
                        "(.data ${elf_data} + .bss ${elf_bss}; decoder ${decbytes}), stack used ${stack} B; "
                        "${per_token} instructions per token (${prefill})\n")
  message(STATUS "${name}: ${generated} tokens, the host's${compared} [${device_text}]")
endforeach()

# ---------------------------------------------------------------- what must not build
# The same model on the Cortex-M4 board (128 KiB of RAM, a budget of 96 KiB): the decoder does not fit.
build_firmware("${WORK}/fw-m4" mps2-an386 "${header}")
if(build_rc EQUAL 0)
  message(FATAL_ERROR "the stories260K-shaped model built for mps2-an386, whose RAM it exceeds")
endif()
if(NOT build_log MATCHES "exceeds the RAM budget SF_RAM_BUDGET" OR NOT build_log MATCHES "ram_budget_check<[0-9]+, 98304>")
  message(FATAL_ERROR "mps2-an386: not the expected RAM budget message:\n${build_log}")
endif()
# A program that allocates: the link fails (--wrap leaves __wrap_malloc undefined).
build_firmware("${WORK}/fw-heap" ${board} "${header}" -DSF_FIRMWARE_HEAP_PROBE=ON)
expect_heap_probe_refused()

write_summary()
