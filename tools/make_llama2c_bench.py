#!/usr/bin/python3
"""The model files of issue #22's speed benchmark (tools/llama2c_files_vs_runc.sh).

Random llama2.c models of two shapes, made with llama2.c's own model.py (its initialisation:
normal, std 0.02, the residual projections scaled down) and written by its own export.py, so the
files are the peer's bytes (version 0, the layout run.c reads; version 1, the same floats with
export.py's header; version 2, Q8_0, what runq.c reads):

  s260k: stories260K's shape: dim 64, hidden 172, 5 layers, 8 heads, 4 kv heads, vocab 512,
         seq_len 512, shared classifier. Versions 0 and 1 (float) and version 2 (Q8_0) with group size 4
         (the hidden width 172 allows only groups that divide gcd(64, 172) = 4; runq.c quantizes
         the FFN's input row in groups too, so a larger group would drop columns).
  s15m:  stories15M's shape: dim 288, hidden 768, 6 layers, 6 heads, 6 kv heads, vocab 32000,
         seq_len 256, shared classifier. Versions 0 and 1, and version 2 with group size 64.

and a tokenizer.bin per vocabulary: s260k uses test/data/bpe/tok512.bin (a sentencepiece model
of 512 pieces, tools/tokenizer_bin.py); s15m a random one of 32000 valid pieces written here in
llama2.c's format (max_token_length, then per piece: float score, int32 length, bytes): <unk>,
"\\n<s>\\n", "\\n</s>\\n", the 256 byte pieces <0xXX> at ids 3..258, the printable ASCII
characters, then concatenations of earlier pieces (so that BPE merges happen), scored by id.
Also, per shape, prompt64.txt: a text that run.c's encoder turns into exactly 64 tokens after
BOS (a Python copy of run.c's encode, below), so that `-n 64` runs 64 prompt positions.

  /usr/bin/python3 tools/make_llama2c_bench.py LLAMA2C_DIR OUT_DIR [--seed N]

LLAMA2C_DIR holds llama2.c's model.py and export.py (torch 1.13 was used). Writes
OUT_DIR/{s260k,s15m}.{v0,v1,v2}.bin, OUT_DIR/{s260k,s15m}.tok.bin, OUT_DIR/{s260k,s15m}.prompt64.txt.
"""
import argparse
import contextlib
import io
import os
import random
import shutil
import struct
import sys

SHAPES = {
    "s260k": dict(dim=64, hidden_dim=172, n_layers=5, n_heads=8, n_kv_heads=4, vocab_size=512, max_seq_len=512,
                  group=4),
    "s15m": dict(dim=288, hidden_dim=768, n_layers=6, n_heads=6, n_kv_heads=6, vocab_size=32000, max_seq_len=256,
                 group=64),
}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_tokenizer(path, vocab):
    with open(path, "rb") as f:
        data = f.read()
    (maxlen,) = struct.unpack_from("<i", data, 0)
    off, pieces, scores = 4, [], []
    for _ in range(vocab):
        score, n = struct.unpack_from("<fi", data, off)
        off += 8
        pieces.append(data[off:off + n])
        scores.append(score)
        off += n
    return pieces, scores


def random_tokenizer(vocab, seed):
    """vocab valid pieces (bytes) and scores, as sentencepiece's byte-fallback models lay them out."""
    rng = random.Random(seed)
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [b"<0x%02X>" % i for i in range(256)]
    seen = set(pieces)
    base = [bytes([c]) for c in range(32, 127)]  # ' ' (run.c's dummy prefix), then the printable characters
    for p in base:
        pieces.append(p)
        seen.add(p)
    letters = b"etaoinshrdlucmfwypvbgkjqxz"
    while len(pieces) < vocab:  # words and word pieces: concatenations of earlier pieces
        if rng.random() < 0.5:
            n = rng.randint(2, 7)
            p = (b" " if rng.random() < 0.6 else b"") + bytes(rng.choice(letters) for _ in range(n))
        else:
            a = rng.choice(pieces[259:])
            b = rng.choice(pieces[259 + 95:] or pieces[259:])
            p = a + b
        if len(p) > 16 or p in seen:
            continue
        seen.add(p)
        pieces.append(p)
    scores = [0.0] * 259 + [-float(i) for i in range(vocab - 259)]
    return pieces, scores


def write_tokenizer(path, pieces, scores):
    with open(path, "wb") as f:
        f.write(struct.pack("<i", max(len(p) for p in pieces)))
        for p, s in zip(pieces, scores):
            f.write(struct.pack("<fi", s, len(p)))
            f.write(p)


def encode(text, pieces, scores):
    """run.c's encode(text, bos=1, eos=0), in Python."""
    lookup = {}
    for i, p in enumerate(pieces):
        lookup.setdefault(p, i)
    toks = [1]
    if text:
        toks.append(lookup[b" "])
    data = text.encode("utf-8")
    i = 0
    while i < len(data):
        j = i + 1
        while j < len(data) and (data[j] & 0xC0) == 0x80 and j - i < 4:
            j += 1
        cp = data[i:j]
        if cp in lookup:
            toks.append(lookup[cp])
        else:
            toks.extend(b + 3 for b in cp)
        i = j
    start = 1
    while True:
        best, best_id, best_i = -1e10, -1, -1
        for k in range(start, len(toks) - 1):
            m = pieces[toks[k]] + pieces[toks[k + 1]]
            if m in lookup and scores[lookup[m]] > best:
                best, best_id, best_i = scores[lookup[m]], lookup[m], k
        if best_i == -1:
            break
        toks[best_i:best_i + 2] = [best_id]
    return toks


def prompt_of(n, pieces, scores, seed):
    """A text of words that encodes to exactly n tokens after BOS."""
    rng = random.Random(seed)
    words = ["Once", "upon", "a", "time", "there", "was", "a", "little", "girl", "named", "Lily", "she", "liked",
             "to", "play", "in", "the", "park", "with", "her", "friends", "and", "big", "red", "ball", "sun"]
    text = "Once upon a time"
    while len(encode(text, pieces, scores)) - 1 < n:
        text += " " + rng.choice(words)
    while len(encode(text, pieces, scores)) - 1 > n:  # too many: characters off the end
        text = text[:-1]
    while len(encode(text, pieces, scores)) - 1 < n:  # a one-token character to fill
        text += "."
    toks = encode(text, pieces, scores)
    assert len(toks) - 1 == n, (len(toks), text)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("llama2c_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--shapes", default="s260k,s15m")
    args = ap.parse_args()
    import torch  # (here: tools/bench_roofline.py imports SHAPES without torch)
    sys.path.insert(0, os.path.abspath(args.llama2c_dir))
    from model import ModelArgs, Transformer  # llama2.c's
    import export  # llama2.c's
    os.makedirs(args.out_dir, exist_ok=True)
    for name in args.shapes.split(","):
        s = dict(SHAPES[name])
        group = s.pop("group")
        torch.manual_seed(args.seed)
        model = Transformer(ModelArgs(**s, multiple_of=4, norm_eps=1e-5, dropout=0.0))
        model.eval()
        out = os.path.join(args.out_dir, name)
        with contextlib.redirect_stdout(io.StringIO()):  # export.py prints every tensor
            export.legacy_export(model, out + ".v0.bin")
            export.version1_export(model, out + ".v1.bin")
            export.version2_export(model, out + ".v2.bin", group_size=group)
        if s["vocab_size"] == 512:
            shutil.copyfile(os.path.join(ROOT, "test/data/bpe/tok512.bin"), out + ".tok.bin")
            pieces, scores = read_tokenizer(out + ".tok.bin", 512)
        else:
            pieces, scores = random_tokenizer(s["vocab_size"], args.seed)
            write_tokenizer(out + ".tok.bin", pieces, scores)
        with open(out + ".prompt64.txt", "w") as f:
            f.write(prompt_of(64, pieces, scores, args.seed))
        print(f"{out}.v0.bin, {out}.v1.bin ({os.path.getsize(out + '.v1.bin')} bytes), {out}.v2.bin (group {group}, "
              f"{os.path.getsize(out + '.v2.bin')} bytes), {out}.tok.bin, {out}.prompt64.txt")


if __name__ == "__main__":
    main()
