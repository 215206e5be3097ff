# Test of the `staticformer` command, run by CTest (tools/CMakeLists.txt, label `tool`):
#   cmake -DSTATICFORMER=<staticformer> -DCORPUS=<text> -DWORK=<scratch dir> [-DINSTALL_FROM=<build dir>]
#         -P staticformer_test.cmake
# Without INSTALL_FROM: trains the precompiled shape nano from a --config file and runs it (no
# compiling), then a shape no program has (V 65, T 96, D 80, H 5, L 3, F 224): `train` and `run`
# compile their executables on first use and say so, the second `run` starts without compiling
# and prints the same text; run.c's flags (seeded sampling repeats, -n counts the prompt), info,
# export, convert --int8, and the errors (exit status and message).
# With INSTALL_FROM (and CXX): installs that build tree into WORK/prefix and runs
# prefix/bin/staticformer: a precompiled shape, and a new shape compiled on first use from the
# installed headers; then a project of one's own uses staticformer_add_model (its executables with
# the start-up CPU check, src/cpu_check.cpp).
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(ENV{STATICFORMER_CACHE} "${WORK}/cache")

include("${CMAKE_CURRENT_LIST_DIR}/test_helpers.cmake")  # sf, sf_error, expect_match
# A run that must succeed; `compiles` YES: it must say it compiles an executable, NO: it must not.
function(sf_ok compiles)
  sf(${ARGN})
  if(NOT sf_rc EQUAL 0)
    message(FATAL_ERROR "staticformer ${ARGN}: exit status ${sf_rc}\n${sf_out}\n${sf_err}")
  endif()
  string(FIND "${sf_err}" "compiling one with" at)
  if(compiles AND at EQUAL -1)
    message(FATAL_ERROR "staticformer ${ARGN}: expected to compile an executable first; stderr:\n${sf_err}")
  elseif(NOT compiles AND NOT at EQUAL -1)
    message(FATAL_ERROR "staticformer ${ARGN}: compiled an executable; expected none:\n${sf_err}")
  endif()
  message(STATUS "ok: staticformer ${ARGN}")
  set(sf_out "${sf_out}" PARENT_SCOPE)
  set(sf_err "${sf_err}" PARENT_SCOPE)
endfunction()

set(shape "\"vocab\": 65, \"norm\": \"layernorm\", \"position\": \"learned\", \"activation\": \"gelu_tanh\", \"tied\": true, \"bias\": true, \"norm_eps\": 1e-5")
file(WRITE "${WORK}/nano.json" "{\"context\": 64, \"d_model\": 64, \"n_heads\": 4, \"n_layers\": 2, \"d_ff\": 256, ${shape}}\n")
file(WRITE "${WORK}/odd.json" "{\"context\": 96, \"d_model\": 80, \"n_heads\": 5, \"n_layers\": 3, \"d_ff\": 224, ${shape}}\n")

set(num "[0-9.e+-]+")
if(INSTALL_FROM)
  execute_process(COMMAND "${CMAKE_COMMAND}" --install "${INSTALL_FROM}" --prefix "${WORK}/prefix"
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake --install ${INSTALL_FROM}: ${err}")
  endif()
  set(STATICFORMER "${WORK}/prefix/bin/staticformer")
  sf_ok(NO train --config "${WORK}/nano.json" --data "${CORPUS}" --steps 20 --out "${WORK}/nano.safetensors")
  sf_ok(NO info "${WORK}/nano.safetensors")
  expect_match("info" "${sf_out}" "run executable: compiled in advance \\(nano\\), ${WORK}/prefix/")
  sf_ok(NO run "${WORK}/nano.safetensors" -t 0 -n 40 -i "ROMEO:")
  string(LENGTH "${sf_out}" n)
  if(NOT n EQUAL 40)
    message(FATAL_ERROR "run -n 40: ${n} characters, expected 40:\n${sf_out}")
  endif()
  # A new shape, compiled from the installed headers and sources (share/staticformer).
  sf_ok(YES bench --config "${WORK}/odd.json" --steps 2)
  expect_match("bench" "${sf_out}" "train step: V=65 T=96 D=80 H=5 L=3 F=224 .*B 4, f32 products")
  file(GLOB cmd "${WORK}/cache/*/command.txt")
  file(READ "${cmd}" cmd_text)
  expect_match("the compile command" "${cmd_text}" "-I${WORK}/prefix/include .*${WORK}/prefix/share/staticformer/engine/")
  sf_ok(NO bench --config "${WORK}/odd.json" --steps 2)
  # The cache key covers the headers the executables are compiled with (build.txt's depends=): after
  # a header changes, the cached executable is not the one for this architecture any more.
  file(APPEND "${WORK}/prefix/include/staticformer/config.hpp" "// changed\n")
  sf_ok(NO info --config "${WORK}/odd.json")
  expect_match("info after a header changed" "${sf_out}" "train executable \\(B 4, f32\\): not built yet")
  # A project of one's own: find_package(staticformer) and staticformer_add_model, for the
  # command's own executable (KIND run) and for a program that uses SF_ENGINE_ARCH.
  file(MAKE_DIRECTORY "${WORK}/consumer")
  file(WRITE "${WORK}/consumer/CMakeLists.txt" "cmake_minimum_required(VERSION 3.20)
project(models LANGUAGES CXX)
find_package(staticformer REQUIRED)
staticformer_add_model(odd_run CONFIG \"${WORK}/odd.json\")
staticformer_add_model(odd_app CONFIG \"${WORK}/odd.json\" SOURCES app.cpp)
")
  file(WRITE "${WORK}/consumer/app.cpp" "#include <cstdio>
#include <staticformer/io/config_codec.hpp>
#include <staticformer/params.hpp>
int main() {
  std::printf(\"%zu parameters: %s\\n\", sf::parameter_count<sf::params<SF_ENGINE_ARCH>>, sf::io::describe(SF_ENGINE_ARCH).c_str());
}
")
  foreach(step "-S;${WORK}/consumer;-B;${WORK}/consumer/build;-DCMAKE_CXX_COMPILER=${CXX};-DCMAKE_PREFIX_PATH=${WORK}/prefix"
               "--build;${WORK}/consumer/build")
    execute_process(COMMAND "${CMAKE_COMMAND}" ${step} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "the consumer project (staticformer_add_model): cmake ${step}\n${out}\n${err}")
    endif()
  endforeach()
  execute_process(COMMAND "${WORK}/consumer/build/odd_run" --architecture OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  expect_match("odd_run --architecture (exit ${rc})" "${out}" "^V=65 T=96 D=80 H=5 L=3 F=224 layernorm learned gelu_tanh tied bias\n$")
  execute_process(COMMAND "${WORK}/consumer/build/odd_app" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  expect_match("odd_app (exit ${rc})" "${out}" "^[0-9]+ parameters: V=65 T=96 D=80 H=5 L=3 F=224 ")
  # Both have the start-up CPU check (cpu_check.cpp, compiled into them by staticformer_add_model):
  # its constructor, sf_cpu_check, is in their symbol tables.
  find_program(NM nm REQUIRED)
  foreach(exe odd_run odd_app)
    execute_process(COMMAND "${NM}" -C "${WORK}/consumer/build/${exe}" OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
    expect_match("nm ${exe} (exit ${rc}): the start-up CPU check" "${syms}" "[tT] [^\n]*sf_cpu_check\\(int, char\\*\\*, char\\*\\*\\)")
  endforeach()
  message(STATUS "ok: staticformer_add_model in a project of one's own: ${out} (with the start-up CPU check)")
  return()
endif()

# ---- a precompiled shape: nano, from a --config file; nothing is compiled
sf_ok(NO --help)
expect_match("--help" "${sf_out}" "usage: staticformer COMMAND")
sf_ok(NO train --help)  # that command's entry only
expect_match("train --help" "${sf_out}" "usage: staticformer COMMAND \\[arguments\\]\n  train --config FILE.json")
if(sf_out MATCHES "\n  run MODEL")
  message(FATAL_ERROR "train --help: shows the other commands' entries:\n${sf_out}")
endif()
sf_ok(NO train --config "${WORK}/nano.json" --data "${CORPUS}" --steps 30 --out "${WORK}/nano.safetensors")
expect_match("train" "${sf_out}" "final: steps 30 of 30 \\(100% of the schedule\\), train loss ${num}, val loss ${num}")
sf_ok(NO info "${WORK}/nano.safetensors")
expect_match("info" "${sf_out}" "architecture: V=65 T=64 D=64 H=4 L=2 F=256 layernorm learned gelu_tanh tied bias, the shape nano")
expect_match("info" "${sf_out}" "train.total_steps: 30")
expect_match("info" "${sf_out}" "  products of this build:\n    float: [^\n]+\n    bf16: [^\n]+\n    int8: [^\n]+\n    cpu: this CPU has ")
# --seconds S (issue #25; staticformer/budget.hpp): alone, the schedule is sized to S CPU seconds
# from the step rate measured at its start (shortened if the rate falls), and all of it runs
# inside S; with --steps N, a run the budget stops says so, and the final line says how much ran.
sf_ok(NO train --config "${WORK}/nano.json" --data "${CORPUS}" --seconds 1.5 --eval-batches 4 --out "${WORK}/sized.safetensors")
expect_match("train --seconds" "${sf_out}" "\nschedule: [0-9]+ steps of 256 tokens, [^\n]*\\(measured: [0-9]+ steps in ${num} CPU seconds")
string(REGEX MATCHALL "\nschedule: (shortened to )?[0-9]+ steps" lengths "${sf_out}")
list(GET lengths -1 sized)
string(REGEX REPLACE "[^0-9]" "" sized "${sized}")
expect_match("train --seconds" "${sf_out}" "final: steps ${sized} of ${sized} \\(100% of the schedule\\), train loss ${num}")
if(NOT sf_out MATCHES "time: ${num} s wall clock, (${num}) s CPU" OR CMAKE_MATCH_1 GREATER 1.7)
  message(FATAL_ERROR "train --seconds 1.5: not inside the budget (one step and one validation over at most):\n${sf_out}")
endif()
sf_ok(NO info "${WORK}/sized.safetensors")
expect_match("info of the sized run" "${sf_out}" "train.total_steps: ${sized}\n")
sf_ok(NO train --config "${WORK}/nano.json" --data "${CORPUS}" --steps 100000 --seconds 0.3 --out "${WORK}/cut.safetensors")
expect_match("train --steps 100000 --seconds 0.3" "${sf_out}"
             "stopped at step ([0-9]+) of 100000 by the budget of 0.3 CPU seconds \\(--seconds\\)\n")
expect_match("train --steps 100000 --seconds 0.3" "${sf_out}" "final: steps [0-9]+ of 100000 \\(0% of the schedule\\)")
sf_ok(NO --version)
expect_match("--version" "${sf_out}" "^staticformer [0-9.]+\n  float: [^\n]+\n  bf16: [^\n]+\n  int8: [^\n]+\n  cpu: this CPU has ")
# The same flags and seed: the same checkpoint, bit for bit.
sf_ok(NO train --config "${WORK}/nano.json" --data "${CORPUS}" --steps 30 --out "${WORK}/nano2.safetensors")
# (train.seconds and train.cpu_seconds differ between runs: the tensors are compared through run's text)
sf_ok(NO run "${WORK}/nano.safetensors" -t 0 -n 100 -i "ROMEO:")
set(greedy "${sf_out}")
string(LENGTH "${greedy}" n)
if(NOT n EQUAL 100 OR NOT greedy MATCHES "^ROMEO:")
  message(FATAL_ERROR "run -t 0 -n 100 -i ROMEO: expected 100 characters starting with the prompt, got ${n}:\n${greedy}")
endif()
expect_match("run's stderr" "${sf_err}" "achieved tok/s: ${num}\n")
sf_ok(NO run "${WORK}/nano2.safetensors" -t 0 -n 100 -i "ROMEO:")
if(NOT sf_out STREQUAL greedy)
  message(FATAL_ERROR "two trainings with the same flags generate different text:\n${greedy}\n---\n${sf_out}")
endif()
# The recipe's options (nanoGPT's, benchmark/nanogpt.sh): the schedule and AdamW they give, kept in the
# checkpoint; --beta2 alone changes the losses, and so do the others (the losses, not the times, compared).
set(recipe --lr 1e-3 --min-lr-ratio 0.1 --warmup 0.1 --clip 0.5 --eval-every 10 --eval-batches 2)
sf_ok(NO train --config "${WORK}/nano.json" --data "${CORPUS}" --steps 30 ${recipe} --beta2 0.99 --out "${WORK}/nano3.safetensors")
expect_match("train with the recipe's options" "${sf_out}"
             "AdamW lr 0.001 \\(warm-up 3, cosine to 0.0001\\), beta2 0.99, clip 0.5,.*step 10/30: .*step 30/30: ")
string(REGEX MATCH "final: steps 30 of 30 \\(100% of the schedule\\), train loss [0-9.]+, val loss [0-9.]+" recipe_final "${sf_out}")
sf_ok(NO info "${WORK}/nano3.safetensors")
foreach(kv "beta2: 0.99" "min_lr_ratio: 0.1" "warmup: 0.1" "clip: 0.5" "eval_batches: 2" "eval_every: 10")
  expect_match("info of the recipe's checkpoint" "${sf_out}" "train.${kv}\n")
endforeach()
sf_ok(NO train --config "${WORK}/nano.json" --data "${CORPUS}" --steps 30 ${recipe} --out "${WORK}/nano4.safetensors")
string(REGEX MATCH "final: steps 30 of 30 \\(100% of the schedule\\), train loss [0-9.]+, val loss [0-9.]+" beta2_default_final "${sf_out}")
sf_ok(NO train --config "${WORK}/nano.json" --data "${CORPUS}" --steps 30 --eval-every 10 --eval-batches 2 --out "${WORK}/nano5.safetensors")
string(REGEX MATCH "final: steps 30 of 30 \\(100% of the schedule\\), train loss [0-9.]+, val loss [0-9.]+" default_final "${sf_out}")
if(recipe_final STREQUAL beta2_default_final OR beta2_default_final STREQUAL default_final)
  message(FATAL_ERROR "--beta2 0.99, or the recipe's other options, changed no loss:\n"
                      "${recipe_final}\n${beta2_default_final}\n${default_final}")
endif()
# Seeded sampling repeats; another seed differs; -n 0 is the context length (64 positions).
sf_ok(NO run "${WORK}/nano.safetensors" -t 0.9 -p 0.95 -s 7 -n 0 -q)
set(a "${sf_out}")
string(LENGTH "${a}" n)
if(NOT n EQUAL 63)  # an empty prompt: a newline (not printed), then 63 tokens
  message(FATAL_ERROR "run -n 0: ${n} characters, expected 63:\n${a}")
endif()
if(NOT sf_err STREQUAL "")
  message(FATAL_ERROR "run -q: wrote on stderr:\n${sf_err}")
endif()
sf_ok(NO run "${WORK}/nano.safetensors" -t 0.9 -p 0.95 -s 7 -n 0 -q)
if(NOT sf_out STREQUAL a)
  message(FATAL_ERROR "run -s 7 twice: different text:\n${a}\n---\n${sf_out}")
endif()
sf_ok(NO run "${WORK}/nano.safetensors" -t 0.9 -p 0.95 -s 8 -n 0 -q)
if(sf_out STREQUAL a)
  message(FATAL_ERROR "run -s 7 and -s 8 gave the same text:\n${a}")
endif()
# export and convert
sf_ok(NO export "${WORK}/nano.safetensors" -o "${WORK}/nano.hpp" --int8)
file(READ "${WORK}/nano.hpp" header LIMIT 4000)
expect_match("the exported header" "${header}" "inline constexpr sf::arch config\\{\\.V = 65, \\.T = 64, \\.D = 64")
sf_ok(NO convert "${WORK}/nano.safetensors" -o "${WORK}/nano-int8.safetensors" --int8)
sf_ok(NO run "${WORK}/nano-int8.safetensors" -t 0 -n 100 -i "ROMEO:")
expect_match("run of the int8 checkpoint" "${sf_err}" "int8 weights")

# ---- a shape nothing has compiled: compiled on first use, then cached
sf_ok(NO info --config "${WORK}/odd.json")
expect_match("info" "${sf_out}" "run executable: not built yet")
sf_ok(YES train --config "${WORK}/odd.json" --data "${CORPUS}" --steps 20 --out "${WORK}/odd.safetensors")
expect_match("train" "${sf_out}" "V=65 T=96 D=80 H=5 L=3 F=224 layernorm learned gelu_tanh tied bias; B 4, f32 products")
sf_ok(YES run "${WORK}/odd.safetensors" -t 0 -n 200 -i "ROMEO:")
expect_match("the first run" "${sf_err}" "staticformer: compiled in ${num} s: ")
set(first "${sf_out}")
string(LENGTH "${first}" n)
if(NOT n EQUAL 200)  # 96 positions, then the stream slides
  message(FATAL_ERROR "run -n 200 of a context of 96: ${n} characters, expected 200:\n${first}")
endif()
sf_ok(NO run "${WORK}/odd.safetensors" -t 0 -n 200 -i "ROMEO:")
if(NOT sf_out STREQUAL first)
  message(FATAL_ERROR "the cached executable prints other text:\n${first}\n---\n${sf_out}")
endif()
sf_ok(NO info "${WORK}/odd.safetensors")
expect_match("info" "${sf_out}" "run executable: cached, ${WORK}/cache/")
# The flags: the build's own compiler got the flag.cxx= ones of staticformer-build.txt (g++'s
# -fvect-cost-model=dynamic: cmake/engine_flags.cmake); another compiler ($STATICFORMER_CXX, here
# one that fails at once, whose message shows the command) gets the flag= ones only.
get_filename_component(sf_dir "${STATICFORMER}" DIRECTORY)
file(STRINGS "${sf_dir}/staticformer-build.txt" own_flags REGEX "^flag\\.cxx=")
file(GLOB cmds "${WORK}/cache/*/command.txt")
list(GET cmds 0 cmd)
file(READ "${cmd}" cmd_text)
expect_match("the compile command" "${cmd_text}" " -O2 ")
set(ENV{STATICFORMER_CXX} false)
sf(bench --config "${WORK}/odd.json" --batch 3 --steps 1)
unset(ENV{STATICFORMER_CXX})
expect_match("bench with STATICFORMER_CXX=false (exit ${sf_rc})" "${sf_err}" "compiling failed \\(exit status 1\\): false -std=c\\+\\+20 -O2 ")
foreach(f IN LISTS own_flags)
  string(REGEX REPLACE "^flag\\.cxx=" "" f "${f}")
  string(FIND "${cmd_text}" " ${f} " at)
  string(FIND "${sf_err}" "${f}" at_other)
  if(at EQUAL -1 OR NOT at_other EQUAL -1)
    message(FATAL_ERROR "flag.cxx=${f}: expected in the build compiler's command only:\n${cmd_text}\n---\n${sf_err}")
  endif()
  message(STATUS "ok: flag.cxx=${f} with the build's compiler, not with another")
endforeach()

# ---- bench --decode: R streams stepping together, on an executable compiled once for max(--streams) streams
sf_ok(YES bench "${WORK}/nano.safetensors" --decode --streams 1,3 -n 20 --repeat 1 -i "ROMEO:")
expect_match("bench --decode" "${sf_out}" "^decode bench: nano, float weights, prompt 6 tokens, 14 steps, median of 1 runs \\(CPU time\\)\n")
expect_match("bench --decode" "${sf_out}"
             "\n  streams  1: ${num} ms per step [^\n]*\n  streams  3: ${num} ms per step [^\n]*, ${num} tokens/s aggregate, ${num} GFLOP/s in the weight products = [0-9]+% of the FMA peak \\(${num} GFLOP/s: the best of 3 measurements in this run, ${num}-${num}\\); ")
sf_ok(NO bench "${WORK}/nano.safetensors" --decode --streams 3,2 --tokens 5 --repeat 2 --int8)
expect_match("bench --decode --int8" "${sf_out}" "int8 weights, prompt 1 tokens, 5 steps, median of 2 runs \\(CPU time\\)\n  float: [^\n]+\n  bf16: [^\n]+\n  int8: [^\n]+\n  cpu: this CPU has [^\n]+\n  FMA peak: ${num} GFLOP/s \\([^\n]+\\)\n(  bf16 peak: ${num} GFLOP/s \\(vdpbf16ps\\)\n)?  streams  3: .*\n  streams  2: ")
sf_error(2 "bench: --streams: '0,2' is not a list of counts in \\[1, 256\\]" bench "${WORK}/nano.safetensors" --decode --streams 0,2)

# ---- errors
sf_error(2 "unknown command 'fly'" fly)
sf_error(2 "train: --config FILE.json is needed" train --data "${CORPUS}" --steps 1 --out "${WORK}/x.safetensors")
file(WRITE "${WORK}/bad-key.json" "{\"context\": 8, \"d_model\": 8, \"n_heads\": 2, \"n_layers\": 1, \"d_ff\": 8, \"batch\": 4, ${shape}}")
sf_error(1 "unknown key \"batch\" \\(the batch size is a run setting: --batch\\)" info --config "${WORK}/bad-key.json")
file(WRITE "${WORK}/bad-heads.json" "{\"context\": 8, \"d_model\": 10, \"n_heads\": 3, \"n_layers\": 1, \"d_ff\": 8, ${shape}}")
sf_error(1 "n_heads 3 does not divide d_model 10" train --config "${WORK}/bad-heads.json" --data "${CORPUS}" --steps 1 --out "${WORK}/x.safetensors")
file(WRITE "${WORK}/missing.json" "{\"context\": 8}")
sf_error(1 "missing metadata 'vocab'" info --config "${WORK}/missing.json")
file(WRITE "${WORK}/not.json" "{\"context\": ")
sf_error(1 "not a JSON object" info --config "${WORK}/not.json")
# A stream without end: refused after its first MiB, not read whole (a hang or all the memory).
set(sf_timeout 60)
sf_error(1 "train: '/dev/zero': larger than 1 MiB" train --config /dev/zero --data "${CORPUS}" --steps 1 --out "${WORK}/x.safetensors")
unset(sf_timeout)
sf_error(1 "cannot open '${WORK}/absent.safetensors'" run "${WORK}/absent.safetensors")
sf_error(1 "run: .*nano.hpp: neither a staticformer checkpoint \\(truncated file: .*nano.hpp.: the header length is.* nor a llama2.c model file" run "${WORK}/nano.hpp")
sf_error(2 "carries its own tokenizer" run "${WORK}/nano.safetensors" -z tokenizer.bin)
sf_error(2 "-n: '-3' is not a non-negative integer" run "${WORK}/nano.safetensors" -n -3)
sf_error(2 "only the generate mode" run "${WORK}/nano.safetensors" -m chat)
sf_error(1 "the prompt's character '~' \\(byte 126\\) at offset 0 is not in the checkpoint's vocabulary" run "${WORK}/nano.safetensors" -i "~")
sf_error(2 "run: -t needs a value" run "${WORK}/nano.safetensors" -t)
sf_error(2 "train: --beta2: expected a number > 0 and < 1, found \"1\"" train --config "${WORK}/nano.json" --data "${CORPUS}" --steps 1 --beta2 1 --out "${WORK}/x.safetensors")
sf_error(2 "train: --warmup: expected a number >= 0 and < 1, found \"1\"" train --config "${WORK}/nano.json" --data "${CORPUS}" --steps 1 --warmup 1 --out "${WORK}/x.safetensors")
sf_error(2 "train: --min-lr-ratio: expected a number from 0 to 1" train --config "${WORK}/nano.json" --data "${CORPUS}" --steps 1 --min-lr-ratio 2 --out "${WORK}/x.safetensors")
sf_error(2 "bench: unknown argument '--beta2'" bench --config "${WORK}/nano.json" --beta2 0.9)
