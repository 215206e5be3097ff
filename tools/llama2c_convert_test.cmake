# Test of `staticformer convert` with llama2.c's model files as input, run by CTest
# (tools/CMakeLists.txt, label `tool`):
#   cmake -DSTATICFORMER=<staticformer> -DDATA=<test/data> -DWORK=<scratch dir> -DCACHE=<cache dir>
#         -P llama2c_convert_test.cmake
# Versions 0, 1 and 2 into one another and back, and into a float checkpoint and back, compared
# byte for byte with `cmake -E compare_files` — against the files llama2.c's own export.py wrote
# (test/data/llama2c, tools/make_llama2c_reference.py) and against the earlier files of the round
# trip. What "back" means (docs/tools.md, "llama2.c's model files as input"):
# - versions 0 and 1 hold the same float32 weights: v1 -> v0 -> v1 gives the same bytes, and
#   v0 -> v1 gives export.py's version-1 file. A version-0 file also holds RoPE's cos and sin
#   tables (run.c skips them), which version 1 and a checkpoint do not: written again they are
#   computed as model.py computes them, correctly rounded, where PyTorch's float32 cos and sin may
#   be 1 ulp off. So export.py's v0 -> v1 -> v0 differs from export.py's file in those tables only,
#   by at most 1 ulp per value (checked here), and a version-0 file written by staticformer comes
#   back byte for byte.
# - version 2 -> 1 is the dequantized weights (q * scale: not the float weights export.py
#   quantized); quantizing them again gives the same groups, so v1 -> v2 -> v1 -> v2 gives the same
#   version-2 bytes, and a version-2 input written as version 2 keeps its groups as they are.
# The model of tool_staticformer_llama2c (runc_gqa.v0.bin, whose executable that test compiles into
# CACHE: nothing is compiled here) goes through the same conversions, and `staticformer run` prints
# run.c's own text (test/data/llama2c/runc_gqa*.expected.txt) for its version-1 file and for the
# checkpoint that carries its tokenizer.bin. Then the refusals.
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(ENV{STATICFORMER_CACHE} "${CACHE}")
include("${CMAKE_CURRENT_LIST_DIR}/test_helpers.cmake")  # sf, sf_error, expect_text

set(L "${DATA}/llama2c")
set(tok "${DATA}/bpe/tok512.bin")

# Version-0 files a (ours) and b (export.py's) of a model with seq_len T, head size dk and
# `classifier` bytes of untied classifier after the RoPE tables: equal bytes but in the tables,
# whose values (float32, little-endian; of the same sign, the difference of their bits is the ulp
# distance) may differ by 1 ulp.
function(same_but_rope a b T dk classifier what)
  file(SIZE "${a}" size_a)
  file(SIZE "${b}" size_b)
  if(NOT size_a EQUAL size_b)
    message(FATAL_ERROR "${what}: ${a} has ${size_a} bytes, ${b} ${size_b}")
  endif()
  math(EXPR tables "2 * ${T} * (${dk} / 2) * 4")
  math(EXPR end "${size_a} - ${classifier}")
  math(EXPR begin "${end} - ${tables}")
  foreach(part "0;${begin}" "${end};${classifier}")
    list(GET part 0 offset)
    list(GET part 1 length)
    if(length EQUAL 0)
      continue()
    endif()
    file(READ "${a}" ha OFFSET ${offset} LIMIT ${length} HEX)
    file(READ "${b}" hb OFFSET ${offset} LIMIT ${length} HEX)
    if(NOT ha STREQUAL hb)
      message(FATAL_ERROR "${what}: ${a} and ${b} differ outside the RoPE tables (bytes ${offset} + ${length})")
    endif()
  endforeach()
  file(READ "${a}" ha OFFSET ${begin} LIMIT ${tables} HEX)
  file(READ "${b}" hb OFFSET ${begin} LIMIT ${tables} HEX)
  math(EXPR last "${tables} / 4 - 1")
  set(ulp1 0)
  foreach(i RANGE ${last})
    math(EXPR at "${i} * 8")
    string(SUBSTRING "${ha}" ${at} 8 wa)
    string(SUBSTRING "${hb}" ${at} 8 wb)
    if(wa STREQUAL wb)
      continue()
    endif()
    foreach(w wa wb)  # little-endian bytes -> the int32
      string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1" x "${${w}}")
      math(EXPR ${w} "${x}")
    endforeach()
    math(EXPR d "${wa} - ${wb}")
    if(d GREATER 1 OR d LESS -1)
      message(FATAL_ERROR "${what}: RoPE table value ${i} differs by ${d} ulp (${a}, ${b})")
    endif()
    math(EXPR ulp1 "${ulp1} + 1")
  endforeach()
  get_filename_component(na "${a}" NAME)
  get_filename_component(nb "${b}" NAME)
  math(EXPR n "${tables} / 4")
  message(STATUS "ok: ${what}: ${na} = ${nb} but ${ulp1} of the ${n} RoPE table values, 1 ulp apart")
endfunction()

# ---- export.py's files: versions 0 and 1 (gqa_unshared: grouped-query attention, its own classifier
# after the RoPE tables; mha_shared: a shared classifier). dim 64, 8 heads: head size 8; seq_len 64.
foreach(name gqa_unshared mha_shared)
  set(w "${WORK}/${name}")
  if(name STREQUAL "gqa_unshared")
    set(classifier 24576)  # 96 * 64 float32
  else()
    set(classifier 0)
  endif()
  convert("${L}/${name}.v0.bin" -o "${w}.v0-v1.bin" --llama2c 1)
  same("${w}.v0-v1.bin" "${L}/${name}.v1.bin" "${name}: export.py's v0 -> v1 is export.py's v1")
  convert("${L}/${name}.v1.bin" -o "${w}.v1-v0.bin" --llama2c 0)
  same_but_rope("${w}.v1-v0.bin" "${L}/${name}.v0.bin" 64 8 ${classifier} "${name}: export.py's v1 -> v0 is export.py's v0")
  convert("${w}.v1-v0.bin" -o "${w}.v1-v0-v1.bin" --llama2c 1)
  same("${w}.v1-v0-v1.bin" "${L}/${name}.v1.bin" "${name}: v1 -> v0 -> v1")
  convert("${w}.v0-v1.bin" -o "${w}.v0-v1-v0.bin" --llama2c 0)
  same_but_rope("${w}.v0-v1-v0.bin" "${L}/${name}.v0.bin" 64 8 ${classifier} "${name}: export.py's v0 -> v1 -> v0")
  convert("${w}.v1-v0.bin" -o "${w}.ours-v1.bin" --llama2c 1)
  convert("${w}.ours-v1.bin" -o "${w}.ours-v1-v0.bin" --llama2c 0)
  same("${w}.ours-v1-v0.bin" "${w}.v1-v0.bin" "${name}: staticformer's v0 -> v1 -> v0")
  convert("${L}/${name}.v0.bin" -o "${w}.v0-v0.bin" --llama2c 0)
  same("${w}.v0-v0.bin" "${L}/${name}.v0.bin" "${name}: v0 -> v0 (its RoPE tables kept)")
  # .bin -> checkpoint -> .bin
  convert("${L}/${name}.v1.bin" -o "${w}.v1.safetensors")
  convert("${w}.v1.safetensors" -o "${w}.v1-ck-v1.bin" --llama2c 1)
  same("${w}.v1-ck-v1.bin" "${L}/${name}.v1.bin" "${name}: v1 -> checkpoint -> v1")
  convert("${L}/${name}.v0.bin" -o "${w}.v0.safetensors")
  same("${w}.v0.safetensors" "${w}.v1.safetensors" "${name}: the checkpoints of v0 and of v1")
  convert("${w}.v0.safetensors" -o "${w}.v0-ck-v0.bin" --llama2c 0)
  same("${w}.v0-ck-v0.bin" "${w}.v1-v0.bin" "${name}: v0 -> checkpoint -> v0 (computed RoPE tables)")
endforeach()

# ---- version 2 (mha_shared: export.py's files at group sizes 64 and 32; gqa_unshared_q8: 64)
set(w "${WORK}/mha_shared")
convert("${L}/mha_shared.v1.bin" -o "${w}.v1-v2.bin" --llama2c 2)
same("${w}.v1-v2.bin" "${L}/mha_shared.v2_gs64.bin" "mha_shared: export.py's v1 -> v2 is export.py's v2 (groups of 64)")
# info of llama2.c's files: the architecture and the version (nothing compiled)
sf(info "${L}/mha_shared.v2_gs64.bin")
expect_match("info of a version 2 file (exit ${sf_rc})" "${sf_out}"
             "architecture: V=96 T=64 D=64 H=8 L=2 F=64 gated .*\n  file: llama2.c's model file, version 2, Q8_0 groups of 64 \\(its tokenizer.bin comes with -z\\)\n")
convert("${L}/mha_shared.v0.bin" -o "${w}.v0-v2_gs32.bin" --llama2c 2 --group-size 32)
same("${w}.v0-v2_gs32.bin" "${L}/mha_shared.v2_gs32.bin" "mha_shared: export.py's v0 -> v2 --group-size 32 is export.py's v2")
foreach(gs 64 32)
  set(v2 "${L}/mha_shared.v2_gs${gs}.bin")
  convert("${v2}" -o "${w}.gs${gs}-v1.bin" --llama2c 1)
  differ("${w}.gs${gs}-v1.bin" "${L}/mha_shared.v1.bin" "mha_shared: v2 (groups of ${gs}) -> v1 is the dequantized weights, not the original v1")
  convert("${w}.gs${gs}-v1.bin" -o "${w}.gs${gs}-v1-v2.bin" --llama2c 2 --group-size ${gs})
  same("${w}.gs${gs}-v1-v2.bin" "${v2}" "mha_shared: v1 -> v2 -> v1 -> v2 (groups of ${gs})")
  convert("${v2}" -o "${w}.gs${gs}-v2.bin" --llama2c 2)  # (its own group size, the default for a v2 input)
  same("${w}.gs${gs}-v2.bin" "${v2}" "mha_shared: v2 -> v2 (groups of ${gs} kept)")
  convert("${v2}" -o "${w}.gs${gs}-v0.bin" --llama2c 0)
  convert("${w}.gs${gs}-v0.bin" -o "${w}.gs${gs}-v0-v1.bin" --llama2c 1)
  same("${w}.gs${gs}-v0-v1.bin" "${w}.gs${gs}-v1.bin" "mha_shared: v2 (groups of ${gs}) -> v0 -> v1 = v2 -> v1")
  convert("${v2}" -o "${w}.gs${gs}.safetensors")
  convert("${w}.gs${gs}.safetensors" -o "${w}.gs${gs}-ck-v2.bin" --llama2c 2 --group-size ${gs})
  same("${w}.gs${gs}-ck-v2.bin" "${v2}" "mha_shared: v2 (groups of ${gs}) -> checkpoint -> v2")
  convert("${w}.gs${gs}.safetensors" -o "${w}.gs${gs}-ck-v1.bin" --llama2c 1)
  same("${w}.gs${gs}-ck-v1.bin" "${w}.gs${gs}-v1.bin" "mha_shared: v2 (groups of ${gs}) -> checkpoint -> v1 = v2 -> v1")
endforeach()
set(w "${WORK}/gqa_unshared_q8")
convert("${L}/gqa_unshared_q8.v2_gs64.bin" -o "${w}.v1.bin" --llama2c 1)
convert("${w}.v1.bin" -o "${w}.v1-v2.bin" --llama2c 2)
same("${w}.v1-v2.bin" "${L}/gqa_unshared_q8.v2_gs64.bin" "gqa_unshared_q8: v2 -> v1 -> v2")
convert("${L}/gqa_unshared_q8.v2_gs64.bin" -o "${w}.v2-v0.bin" --llama2c 0)
convert("${w}.v2-v0.bin" -o "${w}.v2-v0-v2.bin" --llama2c 2)
same("${w}.v2-v0-v2.bin" "${L}/gqa_unshared_q8.v2_gs64.bin" "gqa_unshared_q8: v2 -> v0 -> v2")

# ---- run.c's model (tool_staticformer_llama2c's: dim 32, 4 heads: head size 8; seq_len 128;
# shared classifier; hidden_dim 76, so version 2's groups are of 4 at most) with its tokenizer.bin.
set(model "${L}/runc_gqa.v0.bin")
set(w "${WORK}/runc_gqa")
convert("${model}" -o "${w}.v1.bin" --llama2c 1)
convert("${w}.v1.bin" -o "${w}.v1-v0.bin" --llama2c 0)
same_but_rope("${w}.v1-v0.bin" "${model}" 128 8 0 "runc_gqa: export.py's v0 -> v1 -> v0")
convert("${w}.v1-v0.bin" -o "${w}.v1-v0-v1.bin" --llama2c 1)
same("${w}.v1-v0-v1.bin" "${w}.v1.bin" "runc_gqa: v1 -> v0 -> v1")
convert("${w}.v1.bin" -o "${w}.v2.bin" --llama2c 2 --group-size 4)
convert("${w}.v2.bin" -o "${w}.v2-v1.bin" --llama2c 1)
convert("${w}.v2-v1.bin" -o "${w}.v2-v1-v2.bin" --llama2c 2)  # (no --group-size: 64 halved to 4, said on stderr)
if(NOT sf_err MATCHES "Q8_0 groups of 4 \\(the largest of 64, 32, ... that divides dim 32 and hidden_dim 76\\)")
  message(FATAL_ERROR "convert --llama2c 2 of hidden_dim 76 without --group-size: no note of groups of 4:\n${sf_err}")
endif()
same("${w}.v2-v1-v2.bin" "${w}.v2.bin" "runc_gqa: v1 -> v2 -> v1 -> v2 (groups of 4)")
# A version-2 file of groups of 4 runs on the int8 decoder, requantized in groups of 32.
sf(run "${w}.v2.bin" -z "${tok}" -t 0 -n 40 -i "ROMEO: But soft")
if(NOT sf_rc EQUAL 0 OR NOT sf_err MATCHES "Q8_0 groups of 4 requantized in groups of 32" OR NOT sf_err MATCHES "; int8 weights, "
   OR NOT sf_out MATCHES "^ROMEO: But soft")
  message(FATAL_ERROR "run of a version-2 file of groups of 4: exit status ${sf_rc}\n${sf_out}\n${sf_err}")
endif()
convert("${model}" -z "${tok}" -o "${w}.safetensors")
convert("${w}.safetensors" -o "${w}.ck-v1.bin" --llama2c 1 --tokenizer-out "${w}.tok.bin")
same("${w}.ck-v1.bin" "${w}.v1.bin" "runc_gqa: v0 -> checkpoint -> v1 = v0 -> v1")
same("${w}.tok.bin" "${tok}" "runc_gqa: the checkpoint's tokenizer.bin (--tokenizer-out) is -z's")
convert("${w}.safetensors" -o "${w}.ck-v0.bin" --llama2c 0)
same("${w}.ck-v0.bin" "${w}.v1-v0.bin" "runc_gqa: v0 -> checkpoint -> v0 (computed RoPE tables)")
convert("${w}.v2.bin" --tokenizer "${tok}" -o "${w}.v2.safetensors")  # (--tokenizer: train's spelling of -z)

foreach(case "runc_gqa.expected.txt;-t;0;-n;200" "runc_gqa.t0.8-p0.9-s96-n0.expected.txt;-t;0.8;-p;0.9;-s;96;-n;0"
             "runc_gqa.t1.0-p0-s179-n0.expected.txt;-t;1.0;-p;0;-s;179;-n;0")
  list(POP_FRONT case expected)
  expect_text("${L}/${expected}" "${w}.safetensors" ${case})
  expect_text("${L}/${expected}" "${w}.v1.bin" -z "${tok}" ${case})
endforeach()
# Version 2's dequantized weights: the same text from its version-1 file and from its checkpoint.
sf(run "${w}.v2-v1.bin" -z "${tok}" -t 0.8 -p 0.9 -s 5 -n 0 -i "ROMEO: But soft")
set(want "${sf_out}")
sf(run "${w}.v2.safetensors" -t 0.8 -p 0.9 -s 5 -n 0 -i "ROMEO: But soft")
if(NOT sf_rc EQUAL 0 OR NOT sf_out STREQUAL want OR NOT want MATCHES "^ROMEO: But soft.")
  message(FATAL_ERROR "staticformer run of runc_gqa's v2 -> v1 file and of the v2 file's checkpoint: not the same "
                      "text (exit status ${sf_rc}):\n${want}\n---\n${sf_out}\n${sf_err}")
endif()
message(STATUS "ok: staticformer run of the version-2 file's v1 and of its checkpoint: the same text")

# ---- refusals
sf_error(2 "--int8: .*runc_gqa.v0.bin is llama2.c's version 0 file; convert it to a float checkpoint first"
         convert "${model}" -o "${WORK}/x.safetensors" --int8)
sf_error(2 "--group-size 32: .*mha_shared.v2_gs64.bin is a version-2 file of groups of 64; requantizing its int8 weights would quantize them twice"
         convert "${L}/mha_shared.v2_gs64.bin" -o "${WORK}/x.bin" --llama2c 2 --group-size 32)
sf_error(1 "llama2.c v2: group_size 64 does not divide dim 32 and hidden_dim 76" convert "${model}" -o "${WORK}/x.bin" --llama2c 2 --group-size 64)
sf_error(2 "--tokenizer-out: .*holds no tokenizer" convert "${model}" -o "${WORK}/x.bin" --llama2c 1 --tokenizer-out "${WORK}/t.bin")
sf_error(2 "-z: llama2.c's model file holds no tokenizer" convert "${model}" -z "${tok}" -o "${WORK}/x.bin" --llama2c 1)
foreach(to "x.bin;--llama2c;1" "x.safetensors")  # (to a checkpoint: refused before an executable is compiled)
  list(POP_FRONT to out)
  sf_error(2 "-z: .* is a checkpoint, which carries its own tokenizer" convert "${w}.safetensors" -z "${tok}" -o "${WORK}/${out}" ${to})
endforeach()
sf_error(1 "-z .*tok512.bin has 512 pieces; .*mha_shared.v1.bin's vocabulary is 96: they must be equal"
         convert "${L}/mha_shared.v1.bin" -z "${tok}" -o "${WORK}/x.safetensors")
sf_error(1 "-z .*README.md: " convert "${model}" -z "${L}/README.md" -o "${WORK}/x.safetensors")
sf_error(1 "README.md: neither a staticformer checkpoint \\(.*\\) nor a llama2.c model file \\(.*llama2.c v0: "
         convert "${L}/README.md" -o "${WORK}/x.safetensors")
execute_process(COMMAND head -c 1000 "${L}/mha_shared.v1.bin" OUTPUT_FILE "${WORK}/cut.bin")  # cut short
sf_error(1 "nor a llama2.c model file \\(.*cut.bin': llama2.c v1: truncated: tensor blocks.0.norm2.weight"
         convert "${WORK}/cut.bin" -o "${WORK}/x.bin" --llama2c 0)
foreach(x x.safetensors x.bin t.bin)
  if(EXISTS "${WORK}/${x}")
    message(FATAL_ERROR "a refused conversion wrote ${WORK}/${x}")
  endif()
endforeach()
