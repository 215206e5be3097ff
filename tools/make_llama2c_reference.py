#!/usr/bin/python3
"""Reference llama2.c model files for test/test_llama2c.cpp (test/data/llama2c/README.md).

Builds small random models with llama2.c's model.py and writes them with llama2.c's own
export.py (legacy_export = version 0, version1_export, version2_export), plus, per model,
a JSON of what the files must read to in staticformer's names and [in, out] layout:
every tensor's shape, its sum, and a few of its elements (computed here from the PyTorch
model, transposed here, independently of the C++ reader).

  /usr/bin/python3 tools/make_llama2c_reference.py LLAMA2C_DIR OUT_DIR

LLAMA2C_DIR holds llama2.c's model.py and export.py (torch 1.13 was used).
"""
import contextlib
import io
import json
import os
import sys

import torch

llama2c_dir, out_dir = sys.argv[1], sys.argv[2]
sys.path.insert(0, llama2c_dir)
from model import ModelArgs, Transformer  # noqa: E402  (llama2.c's)
import export  # noqa: E402  (llama2.c's)

# name: (ModelArgs, shared classifier, versions: list of (version, group size))
MODELS = {
    # grouped-query attention, a hidden width no multiple of 32, a separate classifier
    "gqa_unshared": (dict(dim=64, n_layers=2, n_heads=8, n_kv_heads=4, vocab_size=96, hidden_dim=76,
                          max_seq_len=64), False, [(0, 0), (1, 0)]),
    # kv = heads, shared classifier, every version; version 2 at export.py's group size 64 and at 32
    "mha_shared": (dict(dim=64, n_layers=2, n_heads=8, n_kv_heads=8, vocab_size=96, hidden_dim=64,
                        max_seq_len=64), True, [(0, 0), (1, 0), (2, 64), (2, 32)]),
    # version 2 with grouped-query attention and a separate classifier (3 layers)
    "gqa_unshared_q8": (dict(dim=64, n_layers=3, n_heads=8, n_kv_heads=4, vocab_size=64, hidden_dim=128,
                             max_seq_len=64), False, [(2, 64)]),
}


def ours(model, shared):
    """The tensors in staticformer's names and layout ([in, out] for the linear layers)."""
    t = {"tok_emb.weight": model.tok_embeddings.weight}
    for l, layer in enumerate(model.layers):
        b = f"blocks.{l}."
        t[b + "norm1.weight"] = layer.attention_norm.weight
        t[b + "attn.wq"] = layer.attention.wq.weight.t()
        t[b + "attn.wk"] = layer.attention.wk.weight.t()
        t[b + "attn.wv"] = layer.attention.wv.weight.t()
        t[b + "attn.wo"] = layer.attention.wo.weight.t()
        t[b + "norm2.weight"] = layer.ffn_norm.weight
        t[b + "ffn.w1"] = layer.feed_forward.w1.weight.t()
        t[b + "ffn.w2"] = layer.feed_forward.w2.weight.t()
        t[b + "ffn.w3"] = layer.feed_forward.w3.weight.t()
    t["norm_f.weight"] = model.norm.weight
    if not shared:
        t["lm_head.weight"] = model.output.weight.t()
    return t


def describe(tensors):
    out = {}
    for name, w in tensors.items():
        w = w.detach().float()
        flat = w.reshape(-1)
        n = flat.numel()
        picks = sorted({0, 1, n // 3, n // 2, n - 1})
        elems = []
        for k in picks:
            idx = [k] if w.dim() == 1 else [k // w.shape[1], k % w.shape[1]]
            elems.append({"index": idx, "value": float(flat[k])})
        out[name] = {"shape": list(w.shape), "sum": float(w.double().sum()),
                     "abs_sum": float(w.double().abs().sum()), "elements": elems}
    return out


os.makedirs(out_dir, exist_ok=True)
for seed, (name, (args, shared, versions)) in enumerate(MODELS.items()):
    torch.manual_seed(1000 + seed)
    model = Transformer(ModelArgs(**args))
    with torch.no_grad():
        for layer in model.layers:  # RMSNorm weights start at 1: make them tell the layers apart
            layer.attention_norm.weight.normal_(1.0, 0.1)
            layer.ffn_norm.weight.normal_(1.0, 0.1)
        model.norm.weight.normal_(1.0, 0.1)
        if not shared:  # model.py ties them: a classifier of its own
            model.output.weight = torch.nn.Parameter(torch.randn_like(model.output.weight) * 0.02)
    model.eval()
    files = []
    for version, gs in versions:
        suffix = f"v{version}" + (f"_gs{gs}" if version == 2 else "")
        path = os.path.join(out_dir, f"{name}.{suffix}.bin")
        vocab = model.params.vocab_size
        with contextlib.redirect_stdout(io.StringIO()):
            if version == 0:
                export.legacy_export(model, path)
            elif version == 1:
                export.version1_export(model, path)
            else:
                export.version2_export(model, path, group_size=gs)
        model.params.vocab_size = vocab  # (legacy_export negates it for a separate classifier)
        files.append(os.path.basename(path))
    meta = {"args": args, "shared_classifier": shared, "files": files,
            "tensors": describe(ours(model, shared))}
    with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(name, files)
