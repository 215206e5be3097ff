"""Shared pieces of the interop tests: the package on sys.path, data, a few training steps in
PyTorch, batch files, staticformer-run, the command line."""
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
ROOT = os.path.dirname(PYTHON_DIR)
sys.path.insert(0, PYTHON_DIR)
sys.path.insert(0, HERE)

import staticformer as sf  # noqa: E402

CORPUS = os.path.join(ROOT, "data", "tinyshakespeare.txt")
GOLDEN = os.path.join(ROOT, "test", "data", "golden")


def corpus_ids(n=40000):
    """The first n bytes of tiny-shakespeare as ids 0..64 (its 65 distinct bytes, sorted: examples/train's
    tokenizer)."""
    with open(CORPUS, "rb") as f:
        text = f.read()
    vocab = sorted(set(text))
    idx = {b: i for i, b in enumerate(vocab)}
    return torch.tensor([idx[b] for b in text[:n]], dtype=torch.long)


def train_steps(module, ids, T, steps=30, batch=8, lr=3e-3, seed=0):
    """A few AdamW steps of next-token prediction on windows of ``ids``; returns the losses."""
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(module.parameters(), lr=lr, weight_decay=0.0)
    losses = []
    module.train()
    for _ in range(steps):
        starts = torch.randint(0, len(ids) - T - 1, (batch,), generator=gen)
        x = torch.stack([ids[s:s + T] for s in starts])
        y = torch.stack([ids[s + 1:s + T + 1] for s in starts])
        logits = module(x)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    module.eval()
    return losses


def eval_tokens(ids, B, T, offset=20000):
    """B rows of T tokens from later in the corpus (not the training windows' start)."""
    return torch.stack([ids[offset + b * T: offset + (b + 1) * T] for b in range(B)])


def write_batch(path, tokens):
    targets = torch.cat([tokens[:, 1:], torch.full((tokens.shape[0], 1), -1, dtype=tokens.dtype)], dim=1)
    sf.write_safetensors(path, [("tokens", tokens.to(torch.int32).numpy()),
                                ("targets", targets.to(torch.int32).numpy())], {"format": "staticformer-batch"})


def run_staticformer(runner, model_path, tokens, workdir, name):
    """staticformer-run's logits (numpy float32 [B,T,V]) and loss for ``tokens``."""
    batch = os.path.join(workdir, name + ".batch.safetensors")
    out = os.path.join(workdir, name + ".results.safetensors")
    write_batch(batch, tokens)
    r = subprocess.run([runner, "--model", model_path, "--batch", batch, "--out", out],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"staticformer-run failed ({r.returncode}): {r.stderr}")
    res, _ = sf.read_safetensors(out)
    return res["logits"], float(res["loss"][0])


def cli(*args):
    """python3 -m staticformer ARGS -> (returncode, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "staticformer", *map(str, args)], capture_output=True, text=True,
                       env=env)
    return r.returncode, r.stdout, r.stderr


def max_abs(a, b):
    a = a.detach().double().numpy() if torch.is_tensor(a) else np.asarray(a, dtype=np.float64)
    b = b.detach().double().numpy() if torch.is_tensor(b) else np.asarray(b, dtype=np.float64)
    return float(np.abs(a - b).max())
