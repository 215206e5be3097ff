#!/usr/bin/env python3
"""Writes the corpus of bad inputs in this directory (test/data/bad/), one file per class of error.

    /usr/bin/python3 test/data/bad/make_bad.py     # rewrites the files (deterministic: same bytes every time)

Standard library only. test/bad_inputs.cmake (CTest `bad_inputs`) replays every file through
the real programs (staticformer-run --model / --batch, examples/train --resume) and checks the
exit status and the message; docs/hostile-input.md lists the classes. The model files are
ref-gpt2 checkpoints (docs/model.md's names, shapes and metadata, all weights 0 but the bad one) and the
batch files ref-gpt2 batches (B 2, T 16, V 65), each broken in exactly one way; the others are
safetensors files broken in their structure; non-finite.llama2c.bin is a llama2.c model file
(tools/llama2c_test.cmake runs it through `staticformer run`). The 3 GB files are made by the test itself
(sparse: a 3 GB length costs no disk) from the two `*.prefix` files below.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# ref-gpt2 (docs/model.md): V 65, T 16, D 32, H 4, L 2, F 128, layernorm, learned, gelu_tanh, tied, bias.
V, T, D, L, F, B = 65, 16, 32, 2, 128, 2
METADATA = {"format": "staticformer", "vocab": "65", "context": "16", "d_model": "32", "n_heads": "4",
            "n_layers": "2", "d_ff": "128", "norm": "layernorm", "position": "learned",
            "activation": "gelu_tanh", "tied": "true", "bias": "true", "norm_eps": "1e-05"}


def params():
    """(name, shape) of every ref-gpt2 parameter, in docs/model.md's order."""
    out = [("tok_emb.weight", [V, D]), ("pos_emb.weight", [T, D])]
    for l in range(L):
        p = f"blocks.{l}."
        out += [(p + "norm1.weight", [D]), (p + "norm1.bias", [D])]
        out += [(p + f"attn.w{x}", [D, D]) for x in "qkvo"]
        out += [(p + f"attn.b{x}", [D]) for x in "qkvo"]
        out += [(p + "norm2.weight", [D]), (p + "norm2.bias", [D])]
        out += [(p + "ffn.w1", [D, F]), (p + "ffn.b1", [F]), (p + "ffn.w2", [F, D]), (p + "ffn.b2", [D])]
    return out + [("norm_f.weight", [D]), ("norm_f.bias", [D])]


SIZE = {"F64": 8, "F32": 4, "I32": 4, "U8": 1}


def count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def safetensors(tensors, metadata=None):
    """A well-formed file: tensors = [(name, dtype, shape, bytes)], data in that order."""
    header, data, at = {}, b"", 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        assert len(raw) == count(shape) * SIZE[dtype], name
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + len(raw)]}
        data += raw
        at += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def raw_file(header, data=b""):
    """A file from a header text (str or bytes) and a data section, as given."""
    if isinstance(header, str):
        header = header.encode()
    return struct.pack("<Q", len(header)) + header + data


def zeros(dtype, shape):
    return bytes(count(shape) * SIZE[dtype])


def model(change=None, drop=None, extra=()):
    """A ref-gpt2 checkpoint of zero weights; change(name, shape) -> (dtype, shape, bytes) or None."""
    tensors = []
    for name, shape in params():
        if name == drop:
            continue
        t = change(name, shape) if change else None
        tensors.append((name,) + (t if t else ("F32", shape, zeros("F32", shape))))
    return safetensors(tensors + list(extra), METADATA)


def i32(values):
    return struct.pack(f"<{len(values)}i", *values)


def batch(tokens=None, targets=None, extra=(), drop=None, tokens_tensor=None):
    tok = tokens or [(7 * k) % V for k in range(B * T)]
    tgt = targets or [(11 * k) % V for k in range(B * T)]
    tensors = [tokens_tensor or ("tokens", "I32", [B, T], i32(tok)), ("targets", "I32", [B, T], i32(tgt))]
    tensors = [t for t in tensors if t[0] != drop] + list(extra)
    return safetensors(tensors, {"format": "staticformer-batch"})


def with_value(tokens, row, col, value):
    t = list(tokens)
    t[row * T + col] = value
    return t


def main():
    files = {}
    f32 = lambda n: ("F32", [n], zeros("F32", [n]))  # noqa: E731

    # ---- the file's structure (refused while reading any file: given as --model)
    files["truncated-length.safetensors"] = b"\x10\x00\x00\x00\x00"
    files["truncated-header.safetensors"] = struct.pack("<Q", 64) + b'{"a":{"dtype"'
    files["truncated-data.safetensors"] = raw_file('{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}}', bytes(4))
    files["offsets-out-of-range.safetensors"] = raw_file(
        '{"a":{"dtype":"U8","shape":[4],"data_offsets":[100,104]}}', bytes(4))
    files["offsets-overlapping.safetensors"] = raw_file(
        '{"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[8],"data_offsets":[4,12]}}',
        bytes(12))
    files["offsets-gap.safetensors"] = raw_file(
        '{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[8,12]}}',
        bytes(12))
    files["offsets-size-mismatch.safetensors"] = raw_file(
        '{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', bytes(8))
    files["trailing-bytes.safetensors"] = raw_file('{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}', bytes(12))
    files["unknown-dtype.safetensors"] = raw_file('{"a":{"dtype":"F99","shape":[3],"data_offsets":[0,12]}}', bytes(12))
    files["not-json.safetensors"] = raw_file('{"a":{"dtype":"F32",')
    files["not-an-object.safetensors"] = raw_file("[1, 2]")
    files["bad-utf8.safetensors"] = raw_file(b'{"tok\xff_emb":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', bytes(1))
    files["bad-utf8-metadata.safetensors"] = raw_file(b'{"__metadata__":{"format":"static\xc3\x28former"}}')
    # 100000 nested arrays in a shape: the reader that dumped it into its message overflowed the stack.
    deep = 100000
    files["deep-nesting.safetensors"] = raw_file(
        '{"a":{"dtype":"F32","shape":' + "[" * deep + "]" * deep + ',"data_offsets":[0,0]}}')
    files["duplicate-tensor.safetensors"] = raw_file(
        '{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"a":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}}',
        bytes(8))
    meta = json.dumps(METADATA, separators=(",", ":"))
    files["duplicate-metadata-key.safetensors"] = raw_file(
        '{"__metadata__":' + meta[:-1] + ',"n_layers":"7"}}')

    # ---- checkpoints (given as --model with a valid batch)
    def nan_at(name, shape):
        if name != "blocks.0.attn.wq":
            return None
        v = [0.0] * count(shape)
        v[3 * D + 1] = float("nan")  # element [3, 1]
        return ("F32", shape, struct.pack(f"<{len(v)}f", *v))

    files["non-finite.model.safetensors"] = model(nan_at)
    files["missing-tensor.model.safetensors"] = model(drop="pos_emb.weight")
    files["extra-tensor.model.safetensors"] = model(extra=[("lm_head.weight", "F32", [D, V], zeros("F32", [D, V]))])
    files["wrong-dtype.model.safetensors"] = model(
        lambda n, s: ("F64", s, zeros("F64", s)) if n == "tok_emb.weight" else None)
    files["wrong-shape.model.safetensors"] = model(
        lambda n, s: ("F32", [D, 48], zeros("F32", [D, 48])) if n == "blocks.0.attn.wq" else None)
    bad_eps = dict(METADATA, norm_eps="inf")
    files["non-finite-metadata.model.safetensors"] = safetensors([("norm_f.bias",) + f32(D)], bad_eps)

    # ---- llama2.c's model file (run.c's version 0; the shape of test/data/llama2c/runc_gqa.v0.bin:
    # dim 32, hidden_dim 76, 2 layers, 4 heads, 2 key/value heads, a shared vocabulary of 512,
    # seq_len 128), all zeros but a NaN as tok_emb's first value: `staticformer run` refuses it, with
    # and without an executable for its shape (tools/llama2c_test.cmake)
    dim, hidden, layers, heads, kv, vocab, seq = 32, 76, 2, 4, 2, 512, 128
    hs = dim // heads
    n = vocab * dim + layers * (2 * dim + 2 * dim * dim + 2 * dim * kv * hs + 3 * hidden * dim) + dim + seq * hs
    v = [0.0] * n
    v[0] = float("nan")
    files["non-finite.llama2c.bin"] = struct.pack("<7i", dim, hidden, layers, heads, kv, vocab, seq) + struct.pack(f"<{n}f", *v)

    # ---- batches (given as --batch with a valid checkpoint)
    tok = [(7 * k) % V for k in range(B * T)]
    files["token-too-large.batch.safetensors"] = batch(tokens=with_value(tok, 1, 5, V))
    files["token-negative.batch.safetensors"] = batch(tokens=with_value(tok, 0, 2, -1))
    files["target-out-of-range.batch.safetensors"] = batch(targets=with_value([(11 * k) % V for k in range(B * T)], 0, 3, -2))
    files["missing-tensor.batch.safetensors"] = batch(drop="targets")
    files["extra-tensor.batch.safetensors"] = batch(extra=[("mask", "U8", [B, T], zeros("U8", [B, T]))])
    files["wrong-dtype.batch.safetensors"] = batch(tokens_tensor=("tokens", "F32", [B, T], zeros("F32", [B, T])))
    files["wrong-shape.batch.safetensors"] = batch(tokens_tensor=("tokens", "I32", [B * T], i32(tok)))

    # ---- the first bytes of the 3 GB files the test makes (truncate -s 3G: sparse)
    big = 3 << 30
    files["huge-header.prefix"] = struct.pack("<Q", 1 << 31)  # a header length of 2 GiB, over the 100 MB limit
    h = lambda n: '{"a":{"dtype":"U8","shape":[%d],"data_offsets":[0,%d]}}' % (n, n)  # noqa: E731
    text = h(big)
    n = big - 8 - len(h(big - 8 - len(text)))  # a valid file: one U8 tensor filling the 3 GB
    text = h(n)
    assert 8 + len(text) + n == big
    files["huge-data.prefix"] = struct.pack("<Q", len(text)) + text.encode()

    for name, data in sorted(files.items()):
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(files)} files in {HERE}")


if __name__ == "__main__":
    main()
