#!/usr/bin/env python3
"""Reference GGUF files for test/test_gguf.cpp, written by the `gguf` package (gguf-py, PyPI).

    python3 -m venv /work/venv-gguf && /work/venv-gguf/bin/pip install gguf numpy sentencepiece
    /work/venv-gguf/bin/python tools/make_gguf_reference.py test/data/gguf

Deterministic (fixed seeds). Writes, in OUT:
  llama_f32.gguf      V=512 (tok512's tokenizer), tied, 1 block, every tensor F32
  llama_f16.gguf      V=64, its own output.weight, 2 blocks, matrices F16, norms F32, no tokenizer
  llama_q8.gguf       the same weights as llama_f16 with the matrices (and tok_emb, output) Q8_0
  from_llama2c.gguf   test/data/llama2c/gqa_unshared.v1.bin's weights as F32, in ggml's names
  tiny_f16.gguf       V=5, D=4, 2 heads, 1 kv head, 1 block, F=6, tied, matrices F16 (a fuzzing seed)
  <file>.json         per tensor, in staticformer's names and [in, out] layout (transposed here,
                      not by the reader under test): shape, sum, abs sum, five elements
The tokenizer of llama_f32 is tok512.model's pieces, scores and types as llama.cpp's converter
stores a sentencepiece vocabulary (the pieces as they are, U+2581 included).
"""
import json
import struct
import sys
from pathlib import Path

import numpy as np
import gguf

ROOT = Path(__file__).resolve().parent.parent


def ours(name, w):
    """staticformer's name and layout of a ggml tensor given PyTorch-style ([out, in])."""
    if name == "token_embd.weight":
        return "tok_emb.weight", w
    if name == "output_norm.weight":
        return "norm_f.weight", w
    if name == "output.weight":
        return "lm_head.weight", w.T
    _, l, rest = name.split(".", 2)
    m = {"attn_norm.weight": "norm1.weight", "ffn_norm.weight": "norm2.weight", "attn_q.weight": "attn.wq",
         "attn_k.weight": "attn.wk", "attn_v.weight": "attn.wv", "attn_output.weight": "attn.wo",
         "ffn_gate.weight": "ffn.w1", "ffn_down.weight": "ffn.w2", "ffn_up.weight": "ffn.w3"}[rest]
    return f"blocks.{l}.{m}", (w if w.ndim == 1 else w.T)


def summary(tensors):
    out = {}
    for name, w in tensors:
        n, v = ours(name, np.asarray(w, dtype=np.float32))
        v = np.ascontiguousarray(v)
        idx = [tuple(0 for _ in v.shape), tuple(min(1, d - 1) for d in v.shape),
               tuple(d // 2 for d in v.shape), tuple(d // 3 for d in v.shape), tuple(d - 1 for d in v.shape)]
        out[n] = {"shape": list(v.shape), "sum": float(v.astype(np.float64).sum()),
                  "abs_sum": float(np.abs(v.astype(np.float64)).sum()),
                  "elements": [{"index": list(i), "value": float(v[i])} for i in idx]}
    return out


def random_weights(rng, V, D, F, L, H, KV, tied):
    dk = D // H
    t = [("token_embd.weight", rng.standard_normal((V, D)) * 0.1)]
    for l in range(L):
        b = f"blk.{l}."
        t += [(b + "attn_norm.weight", 1 + 0.1 * rng.standard_normal(D)),
              (b + "attn_q.weight", rng.standard_normal((D, D)) * 0.1),
              (b + "attn_k.weight", rng.standard_normal((KV * dk, D)) * 0.1),
              (b + "attn_v.weight", rng.standard_normal((KV * dk, D)) * 0.1),
              (b + "attn_output.weight", rng.standard_normal((D, D)) * 0.1),
              (b + "ffn_norm.weight", 1 + 0.1 * rng.standard_normal(D)),
              (b + "ffn_gate.weight", rng.standard_normal((F, D)) * 0.1),
              (b + "ffn_down.weight", rng.standard_normal((D, F)) * 0.1),
              (b + "ffn_up.weight", rng.standard_normal((F, D)) * 0.1)]
    t.append(("output_norm.weight", 1 + 0.1 * rng.standard_normal(D)))
    if not tied:
        t.append(("output.weight", rng.standard_normal((V, D)) * 0.1))
    return [(n, w.astype(np.float32)) for n, w in t]


def header(w, name, V, T, D, F, L, H, KV, eps, base):
    w.add_name(name)
    w.add_context_length(T)
    w.add_embedding_length(D)
    w.add_feed_forward_length(F)
    w.add_block_count(L)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_rope_dimension_count(D // H)
    w.add_layer_norm_rms_eps(eps)
    w.add_rope_freq_base(base)


def write(path, kv, tensors, kind):
    """kind: 'f32', 'f16' or 'q8' (the matrices; the norms stay F32)."""
    w = gguf.GGUFWriter(str(path), "llama")
    kv(w)
    stored = []
    for name, t in tensors:
        if t.ndim == 1 or kind == "f32":
            w.add_tensor(name, t)
            stored.append((name, t))
        elif kind == "f16":
            h = t.astype(np.float16)
            w.add_tensor(name, h)
            stored.append((name, h.astype(np.float32)))
        else:
            q = gguf.quants.quantize(t, gguf.GGMLQuantizationType.Q8_0)
            w.add_tensor(name, q, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
            stored.append((name, gguf.quants.dequantize(q, gguf.GGMLQuantizationType.Q8_0).reshape(t.shape)))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with open(str(path)[:-len(".gguf")] + ".json", "w") as f:
        json.dump(summary(stored), f, indent=1)
    print(f"{path}: {path.stat().st_size} bytes")


def tokenizer(w):
    import sentencepiece
    sp = sentencepiece.SentencePieceProcessor(model_file=str(ROOT / "test/data/bpe/tok512.model"))
    tokens, scores, types = [], [], []
    for i in range(sp.get_piece_size()):
        tokens.append(sp.id_to_piece(i).encode("utf-8"))
        scores.append(sp.get_score(i))
        t = gguf.TokenType.NORMAL
        if sp.is_unknown(i):
            t = gguf.TokenType.UNKNOWN
        elif sp.is_control(i):
            t = gguf.TokenType.CONTROL
        elif sp.is_unused(i):
            t = gguf.TokenType.UNUSED
        elif sp.is_byte(i):
            t = gguf.TokenType.BYTE
        types.append(t)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(sp.bos_id())
    w.add_eos_token_id(sp.eos_id())
    return sp.get_piece_size()


def from_llama2c(out):
    """gqa_unshared.v1.bin (llama2.c's version 1: 256-byte header, the norms, then the matrices)."""
    b = (ROOT / "test/data/llama2c/gqa_unshared.v1.bin").read_bytes()
    magic, version, D, F, L, H, KV, V, T = struct.unpack_from("<9i", b, 0)
    shared = b[36]
    assert magic == 0x616B3432 and version == 1
    dk = D // H
    a = np.frombuffer(b, dtype="<f4", offset=256)
    at = 0

    def take(*shape):
        nonlocal at
        n = int(np.prod(shape))
        r = a[at:at + n].reshape(shape)
        at += n
        return r
    n1 = take(L, D); n2 = take(L, D); nf = take(D); emb = take(V, D)
    wq = take(L, D, D); wk = take(L, KV * dk, D); wv = take(L, KV * dk, D); wo = take(L, D, D)
    w1 = take(L, F, D); w2 = take(L, D, F); w3 = take(L, F, D)
    cls = None if shared else take(V, D)
    assert at == a.size
    t = [("token_embd.weight", emb)]
    for l in range(L):
        b_ = f"blk.{l}."
        t += [(b_ + "attn_norm.weight", n1[l]), (b_ + "attn_q.weight", wq[l]), (b_ + "attn_k.weight", wk[l]),
              (b_ + "attn_v.weight", wv[l]), (b_ + "attn_output.weight", wo[l]), (b_ + "ffn_norm.weight", n2[l]),
              (b_ + "ffn_gate.weight", w1[l]), (b_ + "ffn_down.weight", w2[l]), (b_ + "ffn_up.weight", w3[l])]
    t.append(("output_norm.weight", nf))
    if cls is not None:
        t.append(("output.weight", cls))
    t = [(n, np.ascontiguousarray(w, dtype=np.float32)) for n, w in t]
    write(out / "from_llama2c.gguf",
          lambda w: header(w, "gqa_unshared", V, T, D, F, L, H, KV, 1e-5, 10000.0), t, "f32")


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "test/data/gguf")
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(23)
    t = random_weights(rng, 512, 32, 64, 1, 4, 2, tied=True)

    def kv_f32(w):
        header(w, "tiny-f32", 512, 16, 32, 64, 1, 4, 2, 1e-6, 500000.0)
        tokenizer(w)
    write(out / "llama_f32.gguf", kv_f32, t, "f32")
    t = random_weights(rng, 64, 32, 64, 2, 4, 4, tied=False)
    write(out / "llama_f16.gguf", lambda w: header(w, "tiny-f16", 64, 32, 32, 64, 2, 4, 4, 1e-5, 10000.0), t, "f16")
    write(out / "llama_q8.gguf", lambda w: header(w, "tiny-q8", 64, 32, 32, 64, 2, 4, 4, 1e-5, 10000.0), t, "q8")
    from_llama2c(out)
    t = random_weights(rng, 5, 4, 6, 1, 2, 1, tied=True)  # (also fuzz/corpus/gguf's gguf-py seed)
    write(out / "tiny_f16.gguf", lambda w: header(w, "tiny", 5, 8, 4, 6, 1, 2, 1, 1e-5, 10000.0), t, "f16")


if __name__ == "__main__":
    main()
