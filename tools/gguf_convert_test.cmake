# Test of `staticformer convert` and `run` with GGUF files, run by CTest (tools/CMakeLists.txt,
# label `tool`):
#   cmake -DSTATICFORMER=<staticformer> -DDATA=<test/data> -DWORK=<scratch dir> -DCACHE=<cache dir>
#         -P gguf_convert_test.cmake
# The model of tool_staticformer_llama2c (runc_gqa.v0.bin and tok512.bin; its executable is in
# CACHE: nothing is compiled here) as GGUF (F32; Q8_0): its float checkpoint is the llama2.c file's
# checkpoint byte for byte (the tokenizer too, through tokenizer.ggml.*), `staticformer run` of the
# GGUF file prints run.c's own text, a Q8_0 file written again keeps its blocks (same bytes). gguf-py's
# F32 file (test/data/gguf) to a checkpoint, to GGUF and back to the same checkpoint; its F16 file
# written again with every value (and again: the same bytes); the model as F16 runs. Then refusals.
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(ENV{STATICFORMER_CACHE} "${CACHE}")
include("${CMAKE_CURRENT_LIST_DIR}/test_helpers.cmake")  # sf, sf_error, expect_text

set(L "${DATA}/llama2c")
set(G "${DATA}/gguf")
set(tok "${DATA}/bpe/tok512.bin")
set(w "${WORK}/runc_gqa")

convert("${L}/runc_gqa.v0.bin" -z "${tok}" -o "${w}.gguf")               # (.gguf: F32 unless --gguf q8_0)
convert("${w}.gguf" -o "${w}.gguf.safetensors")
convert("${L}/runc_gqa.v0.bin" -z "${tok}" -o "${w}.safetensors")
same("${w}.gguf.safetensors" "${w}.safetensors" "runc_gqa: v0 -> GGUF -> checkpoint = v0 -> checkpoint (weights and tokenizer)")
convert("${w}.safetensors" -o "${w}.ck.gguf" --gguf f32)
same("${w}.ck.gguf" "${w}.gguf" "runc_gqa: checkpoint -> GGUF = v0 -> GGUF")

foreach(case "runc_gqa.expected.txt;-t;0;-n;200" "runc_gqa.t0.8-p0.9-s96-n0.expected.txt;-t;0.8;-p;0.9;-s;96;-n;0")
  list(POP_FRONT case expected)
  expect_text("${L}/${expected}" "${w}.gguf" ${case})
endforeach()

convert("${w}.gguf" -o "${w}.q8.gguf" --gguf q8_0)
# info of GGUF files: the architecture and what the file holds (nothing compiled)
sf(info "${w}.q8.gguf")
expect_match("info of a Q8_0 GGUF file (exit ${sf_rc})" "${sf_out}"
             "architecture: V=512 T=128 D=32 H=4 kv_heads=2 L=2 F=76 gated rmsnorm rope silu tied no-bias\n  file: GGUF version 3, 20 tensors \\(13 of them Q8_0\\), 512 tokenizer pieces\n")  # (ffn_down: input width 76, F32)
convert("${w}.q8.gguf" -o "${w}.q8-again.gguf")                         # (a Q8_0 input keeps its blocks)
same("${w}.q8-again.gguf" "${w}.q8.gguf" "runc_gqa: a Q8_0 GGUF written again keeps its blocks")
sf(run "${w}.q8.gguf" -t 0 -n 40 -i "ROMEO: But soft")
if(NOT sf_rc EQUAL 0 OR NOT sf_out MATCHES "^ROMEO: But soft")
  message(FATAL_ERROR "run of a Q8_0 GGUF file: exit status ${sf_rc}\n${sf_out}\n${sf_err}")
endif()
message(STATUS "ok: run of the Q8_0 GGUF file: ${sf_out}")

# gguf-py's file: to a checkpoint, to GGUF, back to the same checkpoint.
convert("${G}/llama_f32.gguf" -o "${WORK}/f32.safetensors")
convert("${WORK}/f32.safetensors" -o "${WORK}/f32.gguf")
convert("${WORK}/f32.gguf" -o "${WORK}/f32-again.safetensors")
same("${WORK}/f32-again.safetensors" "${WORK}/f32.safetensors" "gguf-py's F32 file -> checkpoint -> GGUF -> checkpoint")

# F16: gguf-py's F16 file written again keeps its values (a checkpoint of either is the same), and
# the copy written again is the same file; the llama2.c model as F16 runs; info counts F16 tensors.
convert("${G}/llama_f16.gguf" -o "${WORK}/f16.gguf")                   # (an F16 input stays F16)
sf(info "${WORK}/f16.gguf")
expect_match("info of an F16 GGUF file (exit ${sf_rc})" "${sf_out}" "file: GGUF version 3, 21 tensors \\(0 of them Q8_0, 16 F16\\), no tokenizer\n")
convert("${G}/llama_f16.gguf" -o "${WORK}/f16.safetensors")
convert("${WORK}/f16.gguf" -o "${WORK}/f16-again.safetensors")
same("${WORK}/f16-again.safetensors" "${WORK}/f16.safetensors" "gguf-py's F16 file -> GGUF F16 -> checkpoint = its checkpoint")
convert("${WORK}/f16.gguf" -o "${WORK}/f16-again.gguf")
same("${WORK}/f16-again.gguf" "${WORK}/f16.gguf" "an F16 GGUF written again")
convert("${w}.gguf" -o "${w}.f16.gguf" --gguf f16)
sf(run "${w}.f16.gguf" -t 0 -n 40 -i "ROMEO: But soft")
if(NOT sf_rc EQUAL 0 OR NOT sf_out MATCHES "^ROMEO: But soft")
  message(FATAL_ERROR "run of an F16 GGUF file: exit status ${sf_rc}\n${sf_out}\n${sf_err}")
endif()
message(STATUS "ok: run of the F16 GGUF file: ${sf_out}")
sf_error(2 "--gguf: 'q4_0' is not f32, f16 or q8_0" convert "${w}.gguf" -o "${WORK}/x.gguf" --gguf q4_0)
sf_error(1 "-z .*tok512.bin has 512 pieces; .*llama_f16.gguf's vocabulary is 64: they must be equal"
         convert "${G}/llama_f16.gguf" -z "${tok}" -o "${WORK}/x.safetensors")
sf_error(2 "--gguf needs a value" convert "${L}/runc_gqa.v0.bin" -z "${tok}" -o "${WORK}/x.safetensors" --gguf)
