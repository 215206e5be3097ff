#!/usr/bin/env bash
# Writes test/data/llamacpp (tool_staticformer_llamacpp_gguf): a GGUF file written by llama.cpp's own
# converter from tool_staticformer_llama2c's llama2.c model, and the text llama.cpp's llama-simple
# (greedy) prints for it.
#
#   LLAMA_CPP_BIN=/path/to/llama.cpp/build/bin tools/make_llamacpp_reference.sh [OUT_DIR]
#
# LLAMA_CPP_BIN holds llama-convert-llama2c-to-ggml and llama-simple (benchmark/llamacpp.sh says how
# to build them; llama.cpp is not part of the project). OUT_DIR defaults to test/data/llamacpp.
# tool_staticformer_llamacpp (tools/llamacpp_interop_test.cmake) runs the same two commands again
# when llama.cpp is there and checks that they still give these bytes.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin=${LLAMA_CPP_BIN:?set LLAMA_CPP_BIN to the directory of llama-convert-llama2c-to-ggml and llama-simple}
out=${1:-$root/test/data/llamacpp}
mkdir -p "$out"
cd "$root"  # (relative paths: the commands as written in test/data/llamacpp/README.md)
# llama2.c's version 0 file (runc_gqa: dim 32, 2 layers, 4 heads on 2 key/value heads, hidden 76,
# vocabulary 512, shared classifier) with its tokenizer.bin as the vocabulary.
"$bin/llama-convert-llama2c-to-ggml" --copy-vocab-from-model test/data/bpe/tok512.bin \
  --llama2c-model test/data/llama2c/runc_gqa.v0.bin --llama2c-output-model "$out/runc_gqa.llamacpp.gguf" \
  >"$out/.convert.log" 2>&1 || { cat "$out/.convert.log" >&2; exit 1; }
rm -f "$out/.convert.log"
# Greedy (llama-simple has only its greedy sampler), 100 tokens after the prompt's.
"$bin/llama-simple" -m "$out/runc_gqa.llamacpp.gguf" -n 100 "ROMEO: But soft" \
  >"$out/runc_gqa.llama-simple.txt" 2>"$out/.simple.log" || { cat "$out/.simple.log" >&2; exit 1; }
rm -f "$out/.simple.log"
ls -l "$out"
