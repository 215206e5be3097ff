#!/usr/bin/env python3
"""Golden files for staticformer, computed with PyTorch from the definitions of docs/model.md.

    /usr/bin/python3 tools/make_golden.py                  # every config x padding -> test/data/golden/
    /usr/bin/python3 tools/make_golden.py --small --out D  # a 3.6 MB subset (see below) into D
    /usr/bin/python3 tools/make_golden.py --check          # also the self-checks (f32 vs f64, gradcheck)
    /usr/bin/python3 tools/make_golden.py --seed 123 --out D   # fresh random models (CTest: golden_fresh_pytorch)

The model is written in plain PyTorch (no nn.Transformer, no nn.LayerNorm), term by term
from docs/model.md, so that it is an independent reference for the C++ implementation; it lives in
python/staticformer/model.py, shared with the PyTorch interop package (docs/python.md,
PyTorch"). Files are written in the safetensors format by hand (struct + json,
python/staticformer/safetensors.py): the `safetensors` Python package is not needed.

For each reference configuration <c> (ref-gpt2, ref-llama, ref-vaswani, nano):
  <c>.model.safetensors              random F32 parameters, docs/model.md names, docs/model.md __metadata__
and for each padding variant <p> of the set (none, left, right):
  <c>-<p>.batch.safetensors          tokens I32 [B,T], targets I32 [B,T] (-1 = ignore),
                                     padding U8 [B,T] unless <p> = none
  <c>-<p>.expected.safetensors       float64 results from the F32 parameters cast to float64:
      logits    F64 [B,T,V]   at the parameters as loaded
      loss      F64 [1]
      grad.<P>  F32 (P's shape)  d loss / d P, float64 result rounded to float32
      losses    F64 [3]       losses before each of 3 AdamW steps on the same batch
      after.<P> F32 (P's shape)  P after those 3 steps

All of it is about 7.0 MB (nano alone 3.4 MB). `--small` writes a 3.6 MB subset: ref-gpt2,
ref-llama and ref-vaswani with all three variants, nano with `none`, and after.* only in the
three ref-*-none files (AdamW is element-wise: padding and sizes do not change it).
"""
import argparse
import hashlib
import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import staticformer.model as sfm  # noqa: E402  (the model, term by term: python/staticformer/model.py)
from staticformer.model import activation, layer_norm, loss_fn  # noqa: E402
from staticformer.safetensors import read_safetensors, write_safetensors  # noqa: E402

# ----------------------------------------------------------------------------- configs
CONFIGS = {
    "ref-gpt2": dict(V=65, T=16, D=32, H=4, L=2, F=128, B=2, norm="layernorm", position="learned",
                     activation="gelu_tanh", tied=True, bias=True),
    "ref-llama": dict(V=96, T=24, D=48, H=6, L=3, F=96, B=3, norm="rmsnorm", position="rope",
                      activation="relu", tied=False, bias=False),
    "ref-vaswani": dict(V=50, T=12, D=40, H=5, L=1, F=160, B=1, norm="layernorm", position="sinusoidal",
                        activation="gelu", tied=False, bias=True),
    "nano": dict(V=65, T=64, D=64, H=4, L=2, F=256, B=4, norm="layernorm", position="learned",
                 activation="gelu_tanh", tied=True, bias=True),
    "ref-llama2": dict(V=90, T=20, D=48, H=6, KV=2, L=2, F=100, B=2, norm="rmsnorm", position="rope",
                       activation="silu", tied=False, bias=False, ffn="gated"),
}
NORM_EPS = 1e-5
PADS = ("none", "left", "right")

# (config, pad) -> include after.*, for the --small subset
SMALL = {
    ("ref-gpt2", "none"): True, ("ref-gpt2", "left"): False, ("ref-gpt2", "right"): False,
    ("ref-llama", "none"): True, ("ref-llama", "left"): False, ("ref-llama", "right"): False,
    ("ref-vaswani", "none"): True, ("ref-vaswani", "left"): False, ("ref-vaswani", "right"): False,
    ("nano", "none"): False,
    ("ref-llama2", "none"): True, ("ref-llama2", "left"): False, ("ref-llama2", "right"): False,
}

ADAM = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, steps=3)


def metadata_of(cfg):
    """docs/model.md's __metadata__: every value a string."""
    return config_of(cfg).metadata()


def param_shapes(cfg):
    """docs/model.md's checkpoint table, in declaration order (the order of sf::params)."""
    return sfm.param_shapes(config_of(cfg))


def init_params(cfg, gen):
    """Small random float32 parameters; every bias and norm parameter is nonzero."""
    params = {}
    for name, shape in param_shapes(cfg):
        leaf = name.rsplit(".", 1)[1]
        if name.endswith("norm1.weight") or name.endswith("norm2.weight") or name == "norm_f.weight":
            t = 1.0 + 0.1 * torch.randn(shape, generator=gen, dtype=torch.float64)
        elif leaf in ("bias", "bq", "bk", "bv", "bo", "b1", "b2", "b3"):
            t = 0.1 * torch.randn(shape, generator=gen, dtype=torch.float64)
        else:
            t = 0.2 * torch.randn(shape, generator=gen, dtype=torch.float64)
        params[name] = t.to(torch.float32)
    return params


# ----------------------------------------------------------------------------- the model
# docs/model.md's model, term by term in plain PyTorch, lives in the package python/staticformer (model.py):
# the same functions serve the golden files and the PyTorch interop (docs/python.md).
def config_of(cfg):
    return sfm.Config(vocab=cfg["V"], context=cfg["T"], d_model=cfg["D"], n_heads=cfg["H"], n_layers=cfg["L"],
                      d_ff=cfg["F"], norm=cfg["norm"], position=cfg["position"], activation=cfg["activation"],
                      tied=cfg["tied"], bias=cfg["bias"], norm_eps=NORM_EPS, ffn=cfg.get("ffn", "mlp"),
                      n_kv_heads=cfg.get("KV", 0))


# The smallest |x| / rms(x) of a ReLU input seen in float64 since the last reset (generate()).
# ReLU has no derivative at 0: an input within float32 rounding of 0 may fall on the other side
# in a float32 implementation, and its gradient then differs by a whole unit's contribution
# (seen with fresh models: |h| = 1.9e-7 at rms 1.4 gave a 3% gradient error). Batches with an
# input closer to 0 than RELU_MARGIN x rms, at any of the forward passes (the gradient's and the
# AdamW steps'), are drawn again. (The float32 error of an input is a few 1e-7 x rms; the
# committed files' closest inputs are 4e-6 x rms and above, so they are unchanged.)
RELU_MARGIN = 2e-6
relu_margin_seen = [math.inf]


def observe_relu_input(name, x):
    if x.dtype == torch.float64 and x.numel() > 0:
        rms = x.pow(2).mean().sqrt().item()
        if rms > 0:
            relu_margin_seen[0] = min(relu_margin_seen[0], x.abs().min().item() / rms)


def forward(cfg, P, tokens, padding):
    """Logits (B, T, V) in the dtype of P."""
    return sfm.forward(config_of(cfg), P, tokens, padding,
                       observe=observe_relu_input if cfg["activation"] == "relu" else None)


def loss_and_grads(cfg, P, batch):
    names = list(P.keys())
    leaves = {n: P[n].detach().clone().requires_grad_(True) for n in names}
    logits = forward(cfg, leaves, batch["tokens"], batch.get("padding"))
    loss = loss_fn(logits, batch["targets"])
    grads = torch.autograd.grad(loss, [leaves[n] for n in names])
    return logits.detach(), loss.detach(), {n: g for n, g in zip(names, grads)}


def adamw(cfg, P, batch, steps, lr, beta1, beta2, eps):
    """docs/model.md's AdamW (PyTorch's, weight decay 0). Returns (losses, updated params)."""
    P = {n: t.detach().clone() for n, t in P.items()}
    m = {n: torch.zeros_like(t) for n, t in P.items()}
    v = {n: torch.zeros_like(t) for n, t in P.items()}
    losses = []
    for step in range(1, steps + 1):
        _, loss, g = loss_and_grads(cfg, P, batch)
        losses.append(loss.item())
        for n in P:
            m[n] = beta1 * m[n] + (1 - beta1) * g[n]
            v[n] = beta2 * v[n] + (1 - beta2) * g[n] * g[n]
            mhat = m[n] / (1 - beta1 ** step)
            vhat = v[n] / (1 - beta2 ** step)
            P[n] = P[n] - lr * mhat / (torch.sqrt(vhat) + eps)
    return losses, P


# ----------------------------------------------------------------------------- batches
LEFT_PADS = {1: [3], 2: [5, 1], 3: [4, None, 1], 4: [7, 1, 0, None]}   # None = the whole row
RIGHT_PADS = {1: [4], 2: [3, 6], 3: [1, 6, 0], 4: [2, 9, 0, 30]}


def make_batch(cfg, pad, gen):
    B, T, V = cfg["B"], cfg["T"], cfg["V"]
    tokens = torch.randint(0, V, (B, T), generator=gen, dtype=torch.int64)
    tokens[0, 1] = V - 1  # the vocabulary's edges are used
    tokens[B - 1, T - 2] = 0
    targets = torch.cat([tokens[:, 1:], torch.randint(0, V, (B, 1), generator=gen)], dim=1)
    ignore = torch.rand(B, T, generator=gen) < 0.15
    targets[ignore] = -1
    targets[0, 0] = V - 1
    targets[B - 1, T - 1] = 0
    padding = None
    if pad != "none":
        padding = torch.zeros(B, T, dtype=torch.uint8)
        counts = (LEFT_PADS if pad == "left" else RIGHT_PADS)[B]
        for b, c in enumerate(counts):
            c = T if c is None else c
            if pad == "left":
                padding[b, :c] = 1
            else:
                padding[b, T - c:] = 1
        targets[padding.bool()] = -1  # padding tokens are never predicted
    assert (targets != -1).any(), "a batch needs at least one target"
    batch = {"tokens": tokens.to(torch.int32), "targets": targets.to(torch.int32)}
    if padding is not None:
        batch["padding"] = padding
    return batch


# ----------------------------------------------------------------------------- safetensors
# write_safetensors, read_safetensors: python/staticformer/safetensors.py (hand-written, no package needed)


# ----------------------------------------------------------------------------- generation
# --seed S draws a fresh set of models and batches (the committed files use no seed).
SEED_SUFFIX = ""


def seed_of(*parts):
    parts = (parts[0] + SEED_SUFFIX,) + parts[1:]
    return int.from_bytes(hashlib.sha256("/".join(parts).encode()).digest()[:8], "little") & ((1 << 63) - 1)


def model_params(cname):
    gen = torch.Generator().manual_seed(seed_of("staticformer-golden", cname, "model"))
    return init_params(CONFIGS[cname], gen)


def batch_of(cname, pad, retry=0):
    parts = ("staticformer-golden", cname, pad, "batch") + ((f"retry={retry}",) if retry else ())
    gen = torch.Generator().manual_seed(seed_of(*parts))
    return make_batch(CONFIGS[cname], pad, gen)


def to64(P):
    return {n: t.to(torch.float64) for n, t in P.items()}


def generate(out_dir, small):
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for cname, cfg in CONFIGS.items():
        P32 = model_params(cname)
        path = os.path.join(out_dir, f"{cname}.model.safetensors")
        write_safetensors(path, [(n, t.numpy()) for n, t in P32.items()], metadata_of(cfg))
        written.append(path)
        P64 = to64(P32)
        for pad in PADS:
            if not small:
                with_after = True
            elif (cname, pad) in SMALL:
                with_after = SMALL[(cname, pad)]
            else:
                continue
            for retry in range(100):  # a batch whose ReLU inputs keep RELU_MARGIN from 0 (every step)
                batch = batch_of(cname, pad, retry)
                relu_margin_seen[0] = math.inf
                logits, loss, grads = loss_and_grads(cfg, P64, batch)
                losses, after = adamw(cfg, P64, batch, ADAM["steps"], ADAM["lr"], ADAM["beta1"], ADAM["beta2"],
                                      ADAM["eps"])
                if relu_margin_seen[0] >= RELU_MARGIN:
                    break
                print(f"{cname}/{pad}: a ReLU input at {relu_margin_seen[0]:.2e} x rms from 0; batch drawn again",
                      file=sys.stderr)
            else:
                raise RuntimeError(f"{cname}/{pad}: no batch keeps the ReLU inputs {RELU_MARGIN} x rms from 0")
            bpath = os.path.join(out_dir, f"{cname}-{pad}.batch.safetensors")
            write_safetensors(bpath, [(k, t.numpy()) for k, t in batch.items()], {"format": "staticformer-batch"})
            assert abs(losses[0] - loss.item()) == 0.0
            tensors = [("logits", logits.numpy()), ("loss", loss.reshape(1).numpy())]
            tensors += [("grad." + n, g.to(torch.float32).numpy()) for n, g in grads.items()]
            tensors.append(("losses", np.array(losses, dtype="<f8")))
            if with_after:
                tensors += [("after." + n, t.to(torch.float32).numpy()) for n, t in after.items()]
            meta = {"format": "staticformer-golden", "config": cname, "padding": pad,
                    "model": f"{cname}.model.safetensors", "batch": f"{cname}-{pad}.batch.safetensors",
                    "adamw": json.dumps({**ADAM, "weight_decay": 0.0}),
                    "computed": "torch %s float64 from the F32 parameters; grad.* and after.* rounded to F32"
                                % torch.__version__,
                    "after": "true" if with_after else "false"}
            epath = os.path.join(out_dir, f"{cname}-{pad}.expected.safetensors")
            write_safetensors(epath, tensors, meta)
            written += [bpath, epath]
    return written


# ----------------------------------------------------------------------------- self-checks
def rel_l2(a, b):
    a, b = a.to(torch.float64).flatten(), b.to(torch.float64).flatten()
    d = torch.linalg.norm(a - b).item()
    n = torch.linalg.norm(b).item()
    return d / n if n > 0 else d


def tensor_class(name):
    if name.startswith("tok_emb") or name.startswith("pos_emb"):
        return "embeddings"
    if name.startswith("lm_head"):
        return "lm_head"
    if ".attn.w" in name:
        return "attn.W"
    if ".attn.b" in name:
        return "attn.b"
    if ".ffn.w" in name:
        return "ffn.W"
    if ".ffn.b" in name:
        return "ffn.b"
    return "norms"


def check_f32_vs_f64():
    print("== float32 run vs float64 run (relative L2 of the float32 result against float64)")
    worst = 0.0
    for cname, cfg in CONFIGS.items():
        P32 = model_params(cname)
        P64 = to64(P32)
        for pad in PADS:
            batch = batch_of(cname, pad)
            l32, s32, g32 = loss_and_grads(cfg, P32, batch)
            l64, s64, g64 = loss_and_grads(cfg, P64, batch)
            assert torch.isfinite(l64).all() and all(torch.isfinite(g).all() for g in g64.values())
            row = {"logits": rel_l2(l32, l64), "loss": rel_l2(s32, s64)}
            classes = {}
            for n in g64:
                classes.setdefault(tensor_class(n), []).append(n)
            for c, ns in classes.items():
                row["grad." + c] = rel_l2(torch.cat([g32[n].flatten() for n in ns]),
                                          torch.cat([g64[n].flatten() for n in ns]))
            L32, A32 = adamw(cfg, P32, batch, 3, ADAM["lr"], ADAM["beta1"], ADAM["beta2"], ADAM["eps"])
            L64, A64 = adamw(cfg, P64, batch, 3, ADAM["lr"], ADAM["beta1"], ADAM["beta2"], ADAM["eps"])
            row["losses"] = rel_l2(torch.tensor(L32), torch.tensor(L64))
            # The AdamW update (after - before), compared as a whole, without attn.bk: d loss / d bk
            # is exactly 0 (a key bias adds the same q.bk to every score of a row, and softmax is
            # shift-invariant), so float32 rounding noise (~1e-9) there is amplified by Adam's
            # normalisation into steps of up to lr; reported separately as an absolute difference.
            nk = [n for n in P64 if not n.endswith(".attn.bk")]
            d32 = torch.cat([(A32[n].double() - P64[n]).flatten() for n in nk])
            d64 = torch.cat([(A64[n] - P64[n]).flatten() for n in nk])
            row["adamw.delta"] = rel_l2(d32, d64)
            bk = [n for n in P64 if n.endswith(".attn.bk")]
            if bk:
                row["|after.bk32-after.bk64|max"] = max((A32[n].double() - A64[n]).abs().max().item() for n in bk)
                row["|grad.bk64|max"] = max(g64[n].abs().max().item() for n in bk)
            worst = max(worst, max(v for k, v in row.items() if not k.startswith("|") and k != "adamw.delta"))
            print(f"  {cname:12s} {pad:5s} loss={s64.item():.6f} " +
                  " ".join(f"{k}={v:.1e}" for k, v in row.items()))
    print(f"  worst (logits, loss, grads, losses): {worst:.2e}")
    return worst


def check_torch_building_blocks():
    """The hand-written pieces agree with PyTorch's own implementations."""
    g = torch.Generator().manual_seed(7)
    x = torch.randn(3, 5, 8, generator=g, dtype=torch.float64) * 2
    w = torch.randn(8, generator=g, dtype=torch.float64)
    b = torch.randn(8, generator=g, dtype=torch.float64)
    err = {}
    err["layer_norm"] = (layer_norm(x, w, b, NORM_EPS) - torch.nn.functional.layer_norm(x, (8,), w, b, NORM_EPS)).abs().max().item()
    err["gelu"] = (activation("gelu", x) - torch.nn.functional.gelu(x)).abs().max().item()
    err["gelu_tanh"] = (activation("gelu_tanh", x) - torch.nn.functional.gelu(x, approximate="tanh")).abs().max().item()
    err["relu"] = (activation("relu", x) - torch.relu(x)).abs().max().item()
    logits = torch.randn(2, 6, 11, generator=g, dtype=torch.float64)
    targets = torch.randint(0, 11, (2, 6), generator=g)
    targets[0, 2] = -1
    targets[1, 5] = -1
    err["cross_entropy"] = abs(loss_fn(logits, targets).item() -
                               torch.nn.functional.cross_entropy(logits.reshape(-1, 11), targets.reshape(-1),
                                                                 ignore_index=-1).item())
    # AdamW against torch.optim.AdamW
    p0 = torch.randn(4, 3, generator=g, dtype=torch.float64)
    grads = [torch.randn(4, 3, generator=g, dtype=torch.float64) for _ in range(3)]
    p = p0.clone().requires_grad_(True)
    opt = torch.optim.AdamW([p], lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    for gr in grads:
        p.grad = gr.clone()
        opt.step()
    q, m, v = p0.clone(), torch.zeros_like(p0), torch.zeros_like(p0)
    for t, gr in enumerate(grads, 1):
        m = 0.9 * m + 0.1 * gr
        v = 0.999 * v + 0.001 * gr * gr
        q = q - 1e-3 * (m / (1 - 0.9 ** t)) / (torch.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    err["adamw_vs_torch.optim.AdamW"] = (q - p.detach()).abs().max().item()
    print("== hand-written pieces vs torch (max abs difference, float64)")
    for k, e in err.items():
        print(f"  {k:28s} {e:.1e}")
    return max(err.values())


GRADCHECK_VARIANTS = [
    # name, config, padding
    ("layernorm/learned/gelu_tanh/tied/bias/none",
     dict(V=7, T=5, D=8, H=2, L=2, F=12, B=2, norm="layernorm", position="learned", activation="gelu_tanh",
          tied=True, bias=True), "none"),
    ("rmsnorm/rope/relu/untied/nobias/left(+full row)",
     dict(V=7, T=5, D=8, H=2, L=1, F=12, B=2, norm="rmsnorm", position="rope", activation="relu",
          tied=False, bias=False), "left"),
    ("layernorm/sinusoidal/gelu/untied/bias/right",
     dict(V=7, T=5, D=8, H=2, L=1, F=12, B=2, norm="layernorm", position="sinusoidal", activation="gelu",
          tied=False, bias=True), "right"),
    ("rmsnorm/learned/gelu/tied/nobias/left",
     dict(V=6, T=4, D=6, H=3, L=1, F=10, B=2, norm="rmsnorm", position="learned", activation="gelu",
          tied=True, bias=False), "left"),
]


def check_gradcheck():
    print("== torch.autograd.gradcheck (float64; outputs: loss and logits; inputs: every parameter)")
    ok_all = True
    for label, cfg, pad in GRADCHECK_VARIANTS:
        gen = torch.Generator().manual_seed(seed_of("gradcheck", label))
        P = to64(init_params(cfg, gen))
        B, T, V = cfg["B"], cfg["T"], cfg["V"]
        tokens = torch.randint(0, V, (B, T), generator=gen).to(torch.int32)
        targets = torch.randint(0, V, (B, T), generator=gen).to(torch.int32)
        targets[0, 1] = -1
        batch = {"tokens": tokens, "targets": targets}
        if pad != "none":
            padding = torch.zeros(B, T, dtype=torch.uint8)
            if pad == "left":
                padding[0, :2] = 1
                if "full row" in label:
                    padding[1, :] = 1
                else:
                    padding[1, :1] = 1
            else:
                padding[0, T - 2:] = 1
                padding[1, T - 1:] = 1
            targets[padding.bool()] = -1
            batch["padding"] = padding
        names = list(P.keys())

        def f(*leaves):
            logits = forward(cfg, dict(zip(names, leaves)), batch["tokens"], batch.get("padding"))
            return loss_fn(logits, batch["targets"]), logits

        inputs = tuple(P[n].clone().requires_grad_(True) for n in names)
        ok = torch.autograd.gradcheck(f, inputs, eps=1e-6, atol=1e-7, rtol=1e-5, raise_exception=False)
        # the largest |analytic - central difference| of d loss / d params, as a number
        worst = 0.0
        loss = f(*inputs)[0]
        ana = torch.autograd.grad(loss, inputs)
        # central differences on a sample of coordinates of every parameter
        for i, x in enumerate(inputs):
            flat = x.detach().flatten()
            for j in range(0, flat.numel(), max(1, flat.numel() // 6)):
                h = 1e-6
                xp, xm = [t.detach().clone() for t in inputs], [t.detach().clone() for t in inputs]
                xp[i].view(-1)[j] += h
                xm[i].view(-1)[j] -= h
                fd = (f(*xp)[0].item() - f(*xm)[0].item()) / (2 * h)
                worst = max(worst, abs(fd - ana[i].flatten()[j].item()))
        finite = all(torch.isfinite(g).all() for g in ana)
        print(f"  {label:50s} gradcheck={'PASS' if ok else 'FAIL'}  finite grads={finite}  "
              f"max|analytic-central diff| on sampled coords={worst:.1e}")
        ok_all = ok_all and ok and finite
    return ok_all


def verify_written(out_dir):
    """Read the written files back and recompute logits and grads from the files alone."""
    n = 0
    for cname, cfg in CONFIGS.items():
        mpath = os.path.join(out_dir, f"{cname}.model.safetensors")
        params, meta = read_safetensors(mpath)
        assert meta == metadata_of(cfg), (mpath, meta)
        assert [(k, tuple(v.shape)) for k, v in params.items()] == param_shapes(cfg), mpath
        P64 = {k: torch.from_numpy(v.copy()).to(torch.float64) for k, v in params.items()}
        for pad in PADS:
            epath = os.path.join(out_dir, f"{cname}-{pad}.expected.safetensors")
            if not os.path.exists(epath):
                continue
            b, _ = read_safetensors(os.path.join(out_dir, f"{cname}-{pad}.batch.safetensors"))
            batch = {k: torch.from_numpy(v.copy()) for k, v in b.items()}
            exp, _ = read_safetensors(epath)
            logits, loss, grads = loss_and_grads(cfg, P64, batch)
            assert np.array_equal(exp["logits"], logits.numpy()), epath
            assert exp["loss"][0] == loss.item() == exp["losses"][0], epath
            for k, g in grads.items():
                assert np.array_equal(exp["grad." + k], g.to(torch.float32).numpy()), (epath, k)
            n += 1
    print(f"== read back the files: {n} expected files reproduced bit for bit from the stored model and batch")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "test", "data", "golden"))
    ap.add_argument("--small", action="store_true", help="the 3.6 MB subset instead of every config x padding")
    ap.add_argument("--check", action="store_true", help="run the PyTorch self-checks too")
    ap.add_argument("--no-write", action="store_true", help="only the self-checks")
    ap.add_argument("--seed", default="", help="draw fresh random models and batches (any string)")
    args = ap.parse_args()
    global SEED_SUFFIX
    SEED_SUFFIX = "/seed=" + args.seed if args.seed else ""
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    if args.check or args.no_write:
        e = check_torch_building_blocks()
        w = check_f32_vs_f64()
        g = check_gradcheck()
        if e > 1e-12 or w > 1e-4 or not g:
            print("SELF-CHECK FAILED")
            return 1
        print("self-checks passed")
    if not args.no_write:
        out = os.path.normpath(args.out)
        paths = generate(out, args.small)
        verify_written(out)
        total = 0
        for p in paths:
            size = os.path.getsize(p)
            total += size
            with open(p, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()[:16]
            print(f"  {os.path.relpath(p, out):40s} {size:9d} bytes  sha256 {digest}")
        print(f"  total {total} bytes in {len(paths)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
