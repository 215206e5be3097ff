#!/usr/bin/env python3
"""Hugging Face Llama directories and the text transformers generates from them, for the tests of
staticformer's reader (test/data/hf/README.md, tools/hf_test.cmake).

    python3 tools/make_hf_reference.py test/data/bpe/tok512.model test/data/hf

Needs transformers (any version with LlamaForCausalLM and num_key_value_heads: 4.35.2 with
Debian's python3-torch 1.13 in a venv made with --system-site-packages), safetensors,
sentencepiece and protobuf (LlamaTokenizerFast's conversion of the sentencepiece model). For
each model: a random LlamaForCausalLM (fixed seed) saved by save_pretrained
(config.json, model.safetensors) with LlamaTokenizer's tokenizer.model (tok512.model, a
sentencepiece BPE model of 512 pieces), and <name>.expected.txt: transformers' greedy generate()
after the prompt "ROMEO: But soft" (BOS and sentencepiece's ids, as llama2.c's run.c encodes it),
printed as run.c prints (and `staticformer run -t 0 -n 48` prints): the 48 tokens after BOS, the
prompt's included, each piece after the previous one (no space after BOS, <0xXX> as its byte,
nothing for an unprintable lone byte), then a newline; a generated BOS ends the text.

Then the same llama_tied_bf16 model twice more: llama_tied_bf16_sharded, saved with
save_pretrained(max_shard_size="40KB") (model.safetensors.index.json and its shards, with
tokenizer.model), and llama_tied_bf16_fast, saved whole with only LlamaTokenizerFast's tokenizer.json
(tokenizer.model deleted); their text is llama_tied_bf16.expected.txt. And tokenizer_json_ids.txt:
per line, a text (hex of its UTF-8), the ids LlamaTokenizerFast (the tokenizer.json) gives it (<s>
first) and its decode(skip_special_tokens=True) (hex) — what staticformer's reading of the
tokenizer.json must give.
"""
import os
import sys

import sentencepiece
import torch
import transformers
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM, LlamaTokenizer, LlamaTokenizerFast

from hf_generate import runc_text  # run.c's printing (tools/hf_generate.py, beside this script)

PROMPT = "ROMEO: But soft"
STEPS = 48  # run.c's -n
# Texts encoded by the tokenizer.json (tokenizer_json_ids.txt): ASCII, runs of spaces, leading and
# trailing spaces, newlines, UTF-8 that needs byte fallback (pieces the 512-piece vocabulary lacks),
# the empty text.
TEXTS = ["ROMEO: But soft", "hello world", "a  b", "a   b    c", " lead", "  two leading", "end ", "end   ",
         "line one\nline two\n", "\n", "\n\nJULIET:\nWhat light", "tab\there", "naïve café", "日本語",
         "emoji 🙂!", "Zoë's ÆØÅ", "x", " ", "", "The quick brown fox jumps over the lazy dog."]


def make(name, sp_model, out_dir, seed, dtype, variants=False, **config):
    torch.manual_seed(seed)
    cfg = LlamaConfig(**config)
    model = LlamaForCausalLM(cfg).eval()
    with torch.no_grad():  # larger weights than the default init (0.02), so that the text varies
        for p in model.parameters():
            if p.dim() == 2:
                p.normal_(0.0, 0.1)
            else:
                p.uniform_(0.8, 1.2)
    d = os.path.join(out_dir, name)
    model.to(dtype).save_pretrained(d, safe_serialization=True)
    LlamaTokenizer(vocab_file=sp_model).save_pretrained(d)
    remove(d, "tokenizer.json", "generation_config.json")  # (not needed: keep the directory small)
    if variants:
        sharded = d + "_sharded"  # the same weights in shards of at most 40 KB
        model.to(dtype).save_pretrained(sharded, safe_serialization=True, max_shard_size="40KB")
        LlamaTokenizer(vocab_file=sp_model).save_pretrained(sharded)
        remove(sharded, "tokenizer.json", "generation_config.json")
        print(f"{sharded}: {sorted(os.listdir(sharded))}")
        fast = d + "_fast"  # the same weights with only the fast tokenizer's tokenizer.json
        model.to(dtype).save_pretrained(fast, safe_serialization=True)
        LlamaTokenizerFast(vocab_file=sp_model).save_pretrained(fast)
        remove(fast, "tokenizer.model", "generation_config.json")
        print(f"{fast}: {sorted(os.listdir(fast))}")
        tokenizer_ids(fast, sp_model, os.path.join(out_dir, "tokenizer_json_ids.txt"))
    # generate from the weights as stored (bf16 values, computed in float32)
    model = LlamaForCausalLM.from_pretrained(d, torch_dtype=torch.float32).eval()
    sp = sentencepiece.SentencePieceProcessor(model_file=sp_model)
    prompt = [1] + sp.encode(PROMPT)
    with torch.no_grad():
        out = model.generate(torch.tensor([prompt]), max_new_tokens=STEPS + 1 - len(prompt), do_sample=False,
                             num_beams=1, pad_token_id=0, eos_token_id=None)[0].tolist()
    text = runc_text(sp, out, STEPS)
    with open(os.path.join(out_dir, name + ".expected.txt"), "wb") as f:
        f.write(text)
    print(f"{d}: {dtype}, {sum(p.numel() for p in model.parameters())} parameters; {text!r}")


def remove(d, *names):
    for extra in names:
        if os.path.exists(os.path.join(d, extra)):
            os.remove(os.path.join(d, extra))


def tokenizer_ids(fast_dir, sp_model, out):
    """TEXTS through the directory's own tokenizer (tokenizer.json alone: LlamaTokenizerFast)."""
    tok = AutoTokenizer.from_pretrained(fast_dir)
    assert isinstance(tok, LlamaTokenizerFast) and not os.path.exists(os.path.join(fast_dir, "tokenizer.model"))
    sp = sentencepiece.SentencePieceProcessor(model_file=sp_model)
    with open(out, "w") as f:
        for text in TEXTS:
            ids = tok(text).input_ids
            decoded = tok.decode(ids, skip_special_tokens=True)
            same = "same as sentencepiece" if ids == [1] + sp.encode(text) else "differs from sentencepiece"
            print(f"{text!r}: {ids} -> {decoded!r} ({same})")
            f.write(f"{text.encode().hex()}\t{' '.join(map(str, ids))}\t{decoded.encode().hex()}\n")


def main():
    sp_model, out_dir = sys.argv[1], sys.argv[2]
    print(f"transformers {transformers.__version__}, torch {torch.__version__}")
    base = dict(vocab_size=512, hidden_size=32, intermediate_size=96, num_attention_heads=4, num_hidden_layers=2,
                max_position_embeddings=64, rms_norm_eps=1e-5)
    make("llama_gqa_f32", sp_model, out_dir, 1, torch.float32, num_key_value_heads=2, rope_theta=5000.0,
         tie_word_embeddings=False, **base)
    make("llama_tied_bf16", sp_model, out_dir, 5, torch.bfloat16, variants=True, num_key_value_heads=4,
         rope_theta=10000.0, tie_word_embeddings=True, **base)
    make("llama_mqa_f16", sp_model, out_dir, 3, torch.float16, num_key_value_heads=1, rope_theta=10000.0,
         tie_word_embeddings=False, **dict(base, rms_norm_eps=1e-6))


if __name__ == "__main__":
    main()
