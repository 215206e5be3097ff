#!/usr/bin/env python3
"""Writes test/data/llama2c/runc_gqa.v0.bin and runc_gqa*.expected.txt: a random LLaMA-2 model of
llama2.c's stories260K kind (grouped-query attention, SwiGLU with a hidden width of no power of
two, a shared classifier), exported by llama2.c's own export.py (version 0, run.c's file), and the
texts llama2.c's run.c prints for it with the BPE tokenizer test/data/bpe/tok512.bin: at
temperature 0 (runc_gqa.expected.txt), and sampled with run.c's random numbers
(runc_gqa.<flags>.expected.txt, SAMPLED below). CTest's tool_staticformer_llama2c runs
`staticformer run` on the same file and flags and compares.

The sampled cases use -n 0 (the context length, 128): run.c stops there, where staticformer goes
on. Their seeds were chosen (among 1 to 200, with a run.c printing its margins) so that no coin
and no nucleus cut lies within 1e-4 of a boundary of run.c's cumulative sums: staticformer's
logits differ from run.c's by float rounding (another order of summation), which may decide a
draw that close (docs/tools.md, "Generating text").

    /usr/bin/python3 tools/make_runc_reference.py /work/shared/peers/llama2c test/data/llama2c

(the first argument: a directory with llama2.c's model.py, export.py and run.c; run.c is built
with gcc -O2 into a temporary directory; Debian's python3-torch.)"""
import os
import subprocess
import sys
import tempfile

peers, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, peers)
import torch  # noqa: E402
from model import ModelArgs, Transformer  # noqa: E402  (llama2.c's)
from export import legacy_export  # noqa: E402  (llama2.c's)

PROMPT = "ROMEO: But soft"
STEPS = "200"
SAMPLED = [["-t", "0.8", "-p", "0.9", "-s", "96", "-n", "0"],  # nucleus
           ["-t", "1.0", "-p", "0", "-s", "179", "-n", "0"]]   # -p 0: the whole distribution
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
tokenizer = os.path.join(root, "test", "data", "bpe", "tok512.bin")

torch.manual_seed(263)
args = ModelArgs(dim=32, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=512, hidden_dim=76, multiple_of=4,
                 max_seq_len=128, dropout=0.0)
m = Transformer(args)
with torch.no_grad():  # larger than model.py's init, so that the text is not one token repeated
    for name, p in m.named_parameters():
        if p.dim() >= 2:
            p.normal_(0.0, 0.5 if name.startswith("tok") else 0.2)
        else:
            p.uniform_(0.8, 1.2)
m.eval()
model_path = os.path.join(out, "runc_gqa.v0.bin")
legacy_export(m, model_path)
with tempfile.TemporaryDirectory() as tmp:
    run = os.path.join(tmp, "run")
    subprocess.run(["gcc", "-O2", "-o", run, os.path.join(peers, "run.c"), "-lm"], check=True)
    cases = [("runc_gqa.expected.txt", ["-t", "0", "-n", STEPS])]
    cases += [("runc_gqa." + "-".join(f[1:] + v for f, v in zip(flags[::2], flags[1::2])) + ".expected.txt", flags) for flags in SAMPLED]
    for name, flags in cases:
        text = subprocess.run([run, model_path, "-z", tokenizer] + flags + ["-i", PROMPT], check=True,
                              capture_output=True).stdout
        with open(os.path.join(out, name), "wb") as f:
            f.write(text)
        print(f"wrote {name} ({len(text)} bytes): run.c {' '.join(flags)} -i {PROMPT!r}")
print(f"wrote {model_path}")
