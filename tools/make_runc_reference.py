#!/usr/bin/env python3
"""Writes test/data/llama2c/runc_gqa.v0.bin and runc_gqa.expected.txt: a random LLaMA-2 model of
llama2.c's stories260K kind (grouped-query attention, SwiGLU with a hidden width of no power of
two, a shared classifier), exported by llama2.c's own export.py (version 0, run.c's file), and the
text llama2.c's run.c prints for it at temperature 0 with the BPE tokenizer test/data/bpe/tok512.bin.
CTest's tool_staticformer_llama2c runs `staticformer run` on the same file and flags and compares.

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
    text = subprocess.run([run, model_path, "-z", tokenizer, "-t", "0", "-n", STEPS, "-i", PROMPT], check=True,
                          capture_output=True).stdout
with open(os.path.join(out, "runc_gqa.expected.txt"), "wb") as f:
    f.write(text)
print(f"wrote {model_path} and runc_gqa.expected.txt ({len(text)} bytes): run.c -t 0 -n {STEPS} -i {PROMPT!r}")
