#!/usr/bin/env python3
"""One training step of the same GPT-2-style model in staticformer, PyTorch and llm.c, on one core.

Issue #11 ("Training near the machine's peak"). A step is forward, zero-grad, backward and an
AdamW update (lr 1e-4, betas 0.9/0.999, eps 1e-8, no weight decay), float32, single-threaded,
at the shapes of sf_bench_train:

    nano      V65  T64  D64  H4 L2 F256 B4        micro  V256 T128 D128 H4 L4 F512 B4
    small     V512 T256 D192 H6 L6 F768 B2        nano_b32 = nano with B32 (llm.c: nano32)

The model: token embedding (V,D) tied with the LM head, learned positions (T,D), L pre-norm
blocks x += attn(LN(x)); x += ffn(LN(x)) with separate Q,K,V,O Linear(D,D)+bias, H heads,
causal softmax(QK^T/sqrt(d_k)); FFN Linear(D,F)+bias, GELU (tanh), Linear(F,D)+bias; final
LayerNorm (eps 1e-5); logits = x tok_emb^T; mean cross-entropy over the B*T next tokens.

Three implementations, each a separate process pinned with taskset to one core (--cpu), run
interleaved: for each of --rounds rounds, for each shape, staticformer, then PyTorch with each
BLAS of --blas, then llm.c. The table shows the median over rounds of the CPU milliseconds per
step, GFLOP/s (FLOPs per step = B*T*(6N + 12*L*T*D), N = parameter count, tied embedding
counted once) and the ratio other/staticformer (> 1: staticformer is faster).

  - staticformer: BUILD/benchmark/sf_bench_train (Google Benchmark), train_step/<shape>,
    cpu_time per step; its own counters give % of the AVX FMA peak measured in the same process.
  - PyTorch: this script re-run as a worker (--worker) under a Python that has torch, with
    torch.set_num_threads(1), and LD_LIBRARY_PATH choosing the BLAS that torch's libblas.so.3
    resolves to: Debian's reference BLAS (ref) or OpenBLAS's serial build (openblas). The worker
    checks which library actually provides sgemm_ and reports it. Warm-up 3 steps, then the
    median of per-step time.process_time(). The AdamW implementation (foreach or per-tensor)
    and zero_grad(set_to_none=...) are chosen by timing all four in the first round (per shape
    and BLAS), then kept; the choice is printed. On an AVX-512 CPU PyTorch also gets its fastest
    kernels by default: ATEN_CPU_CAPABILITY=avx512 (Debian's torch 1.13 dispatches AVX2 there)
    and OPENBLAS_CORETYPE=SKYLAKEX (OpenBLAS 0.3.21 takes e.g. Zen 5 for Haswell, AVX2);
    --torch-cpu-capability default / --openblas-coretype default leave the libraries' choice.
  - llm.c: PEERS/run.sh train <shape> (../shared/peers beside the repository by default; it
    builds llm.c's train_gpt2.c with gcc -Ofast -march=native), its "cpu_ms median".

bf16 mixed precision (opt-in, --bf16): two more runs per round for nano, micro and small (the
shapes sf_bench_train has bf16 rows for), right after their float counterparts, and a second
table after the float one (which is unchanged):

  - staticformer bf16: sf_bench_train's train_step_bf16/<shape> (config.precision = bf16: bf16
    matrix products, float32 master weights and AdamW; same FLOP count as train_step/<shape>),
    its cpu_time and pct_bf16_peak, the % of the vdpbf16ps peak it measures in the same process.
  - PyTorch autocast bf16: the same worker, model and step, with forward and loss under
    torch.autocast("cpu", dtype=torch.bfloat16), the standard CPU mixed-precision recipe
    (no GradScaler: bf16 has float32's exponent range): parameters, gradients and AdamW stay
    float32; autocast casts the inputs of Linear/matmul/bmm to bf16, so every matrix product,
    forward and backward, is a bf16 oneDNN (mkldnn) matmul; the attention softmax and GELU
    follow their bf16 inputs, while LayerNorm, log-softmax and the loss (autocast's float32 list)
    and the residual stream stay float32. Same timing (warm-up, process_time, median) and AdamW/zero_grad
    choice as the float runs. It runs once per shape, not once per BLAS, because no sgemm_ is
    called: with the same LD_LIBRARY_PATH machinery, under OpenBLAS if installed (else the
    reference BLAS). After timing, the worker checks what autocast did in one more step and
    reports it: the dtype of a Linear's output inside autocast, the dtypes of every aten matrix
    product of forward + backward (counted by a TorchDispatchMode), the gradients' dtype, and
    oneDNN's ISA and kernel for a bf16 matmul with its 256^3 GFLOP/s.

  The bf16 table: staticformer bf16 ms (GFLOP/s at the same FLOP count), % bf16 peak,
  sf f32/bf16 (staticformer's own speed-up: its float median / its bf16 median, same run),
  PyTorch bf16 ms (GFLOP/s, ×sf-bf16 = that time / staticformer bf16's), and PyTorch's own
  f32/bf16 against its float run under the same BLAS.

Usage (torch comes from Debian's python3-torch, so /usr/bin/python3, not a pyenv shim):

    /usr/bin/python3 benchmark/compare_pytorch.py --build build-release
    /usr/bin/python3 benchmark/compare_pytorch.py --build B --shapes nano,micro --rounds 3 --markdown
    /usr/bin/python3 benchmark/compare_pytorch.py --build B --shapes nano,micro,small --bf16
    /usr/bin/python3 benchmark/compare_pytorch.py --check        # quick self-test (< 10 s), no timing

--check tests the PyTorch model in float32 and under bf16 autocast (Linear output dtype,
matrix-product dtypes forward and backward, loss near the float one, float32 gradients and
parameters), then runs the bf16 worker once at nano with 5 steps.

The OpenBLAS column needs OpenBLAS's single-threaded build:

    sudo apt-get install libopenblas0-serial

It installs /usr/lib/x86_64-linux-gnu/openblas-serial/ and registers its libblas.so.3 through
update-alternatives (then the system default BLAS; `sudo update-alternatives --config
libblas.so.3-x86_64-linux-gnu` switches back). This script does not depend on that default: each
PyTorch run selects its BLAS with LD_LIBRARY_PATH (the reference run also puts the reference
LAPACK first, so that OpenBLAS's liblapack does not load libopenblas), so both are measured in
one run. Missing directory: that column says "not installed"; missing peers: "n/a".

Python 3.11, standard library only (torch only in the worker and --check).
"""
import argparse
import json
import math
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

SHAPES = {
    "nano": dict(V=65, T=64, D=64, H=4, L=2, F=256, B=4),
    "micro": dict(V=256, T=128, D=128, H=4, L=4, F=512, B=4),
    "small": dict(V=512, T=256, D=192, H=6, L=6, F=768, B=2),
    "nano_b32": dict(V=65, T=64, D=64, H=4, L=2, F=256, B=32),
}
LLMC_NAME = {"nano": "nano", "micro": "micro", "small": "small", "nano_b32": "nano32"}
BF16_SHAPES = ("nano", "micro", "small")  # the shapes sf_bench_train has train_step_bf16/ rows for
BF16_BLAS = ("openblas", "ref")  # the PyTorch bf16 run's BLAS: the first installed (it calls no sgemm_)

LIBDIR = "/usr/lib/x86_64-linux-gnu"
# BLAS choice -> (label, LD_LIBRARY_PATH entries; the first must exist).
BLAS = {
    "ref": ("PyTorch ref-BLAS", [f"{LIBDIR}/blas", f"{LIBDIR}/lapack"]),
    "openblas": ("PyTorch OpenBLAS", [f"{LIBDIR}/openblas-serial"]),
}

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def param_count(s):
    V, T, D, L, F = s["V"], s["T"], s["D"], s["L"], s["F"]
    block = 2 * 2 * D + 4 * (D * D + D) + (D * F + F) + (F * D + D)
    return V * D + T * D + L * block + 2 * D


def flops_per_step(s):
    return s["B"] * s["T"] * (6 * param_count(s) + 12 * s["L"] * s["T"] * s["D"])


# ---------------------------------------------------------------------------------------------
# The PyTorch side (imported only in the worker and in --check).

def build_torch(shape, seed=0):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    V, T, D, H, L, FF = (shape[k] for k in "VTDHLF")

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D, eps=1e-5), nn.LayerNorm(D, eps=1e-5)
            self.q, self.k, self.v, self.o = (nn.Linear(D, D) for _ in range(4))
            self.fc, self.proj = nn.Linear(D, FF), nn.Linear(FF, D)
            self.register_buffer("mask", torch.ones(T, T, dtype=torch.bool).triu(1), persistent=False)

        def forward(self, x):
            B, t, _ = x.shape
            h = self.ln1(x)
            q = self.q(h).view(B, t, H, D // H).transpose(1, 2)
            k = self.k(h).view(B, t, H, D // H).transpose(1, 2)
            v = self.v(h).view(B, t, H, D // H).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D // H))
            att = F.softmax(att.masked_fill(self.mask[:t, :t], float("-inf")), dim=-1)
            x = x + self.o((att @ v).transpose(1, 2).reshape(B, t, D))
            return x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(V, D), nn.Embedding(T, D)
            self.blocks = nn.ModuleList(Block() for _ in range(L))
            self.lnf = nn.LayerNorm(D, eps=1e-5)

        def forward(self, idx, targets):
            t = idx.shape[1]
            x = self.tok(idx) + self.pos.weight[:t]
            for b in self.blocks:
                x = b(x)
            logits = F.linear(self.lnf(x), self.tok.weight)  # tied head, no bias
            return F.cross_entropy(logits.view(-1, V), targets.reshape(-1))

    torch.manual_seed(seed)
    model = GPT()
    for name, p in model.named_parameters():  # GPT-2 init: N(0, 0.02) matrices, zero biases
        if name.endswith("bias"):
            nn.init.zeros_(p)
        elif "ln" not in name:
            nn.init.normal_(p, 0.0, 0.02)
    gen = torch.Generator().manual_seed(seed + 1)
    ids = torch.randint(0, V, (shape["B"], T + 1), generator=gen)
    return model, ids[:, :T].contiguous(), ids[:, 1:].contiguous()


def make_opt(torch, model, foreach):
    return torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.999), eps=1e-8,
                             weight_decay=0.0, foreach=foreach)


def blas_report(torch):
    """Which library provides the sgemm_ torch calls, what is mapped, and its sgemm speed."""
    import ctypes

    a, b = torch.randn(256, 256), torch.randn(256, 256)
    a @ b
    mapped = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and re.search(r"blas|lapack", os.path.basename(parts[5])):
                mapped.add(parts[5])
    provider, config = "?", ""
    try:
        class DlInfo(ctypes.Structure):
            _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p),
                        ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]
        libc = ctypes.CDLL(None)
        lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
        try:  # the lookup torch's own library sees (its dependency tree, in load order)
            handle = ctypes.CDLL(lib, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        except OSError:
            handle = libc
        addr = ctypes.cast(handle.sgemm_, ctypes.c_void_p).value
        info = DlInfo()
        if libc.dladdr(ctypes.c_void_p(addr), ctypes.byref(info)):
            provider = os.path.realpath(info.fname.decode())
            prov = ctypes.CDLL(provider)
            if hasattr(prov, "openblas_get_config"):
                prov.openblas_get_config.restype = ctypes.c_char_p
                prov.openblas_get_corename.restype = ctypes.c_char_p
                config = "%s, core %s" % (prov.openblas_get_config().decode().strip(),
                                          prov.openblas_get_corename().decode())
    except Exception as e:  # report, never fail the benchmark on the probe
        provider = f"? ({e})"
    n, reps, t0 = 256, 0, time.process_time()
    while time.process_time() - t0 < 0.1:
        a @ b
        reps += 1
    gf = 2 * n ** 3 * reps / (time.process_time() - t0) / 1e9
    return {"sgemm_from": provider, "openblas": config, "mapped": sorted(mapped), "sgemm_256_gflops": gf}


MATMUL_OPS = {"mm", "addmm", "bmm", "baddbmm", "addbmm", "matmul", "linear", "mv", "addmv", "dot"}


def autocast(torch, enabled=True):
    """The CPU mixed-precision context of the bf16 runs (forward and loss only)."""
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=enabled)


def bf16_step_report(torch, model, x, y):
    """What autocast does to one forward + backward of the model: the dtype of a Linear's output
    inside autocast, the dtypes of every aten matrix product (counted by a TorchDispatchMode,
    which sees the ops after autocast's casts, backward included: {"bfloat16": n, ...}), and the
    dtypes of the loss, the parameters and their gradients. Leaves the gradients cleared."""
    lin = []
    hook = model.blocks[0].q.register_forward_hook(lambda m, i, o: lin.append(str(o.dtype)))
    counts = {}
    try:
        from torch.utils._python_dispatch import TorchDispatchMode

        class Count(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                if func.overloadpacket.__name__ in MATMUL_OPS:
                    dt = ",".join(sorted({str(a.dtype).replace("torch.", "") for a in args
                                          if isinstance(a, torch.Tensor)}))
                    counts[dt] = counts.get(dt, 0) + 1
                return func(*args, **(kwargs or {}))
        mode = Count()
    except ImportError:  # no dispatch mode in this torch: counts stay empty
        import contextlib
        mode = contextlib.nullcontext()
    model.zero_grad(set_to_none=True)
    try:
        with mode:
            with autocast(torch):
                loss = model(x, y)
            loss.backward()
    finally:
        hook.remove()
    rep = {"linear_out": lin[0] if lin else "?", "matmuls": counts, "loss": str(loss.dtype),
           "params": sorted({str(p.dtype) for p in model.parameters()}),
           "grads": sorted({str(p.grad.dtype) for p in model.parameters() if p.grad is not None})}
    model.zero_grad(set_to_none=True)
    return rep


def onednn_report(torch):
    """oneDNN's version, ISA and the kernel of a 256^3 bf16 matmul (from its verbose output,
    caught at the file-descriptor level), and that matmul's speed in GFLOP/s."""
    import ctypes
    import tempfile

    a, b = torch.randn(256, 256).bfloat16(), torch.randn(256, 256).bfloat16()
    a @ b
    info = {"version": "?", "isa": "?", "impl": "?"}
    try:
        with tempfile.TemporaryFile(mode="w+") as tmp:
            sys.stdout.flush()
            saved = os.dup(1)
            os.dup2(tmp.fileno(), 1)
            try:
                with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON):
                    a @ b
                ctypes.CDLL(None).fflush(None)
            finally:
                os.dup2(saved, 1)
                os.close(saved)
            tmp.seek(0)
            for line in tmp:
                f = line.strip().split(",")
                if line.startswith("onednn_verbose,info,oneDNN"):
                    info["version"] = (re.findall(r"v[\d.]+", f[2]) or [f[2]])[0]
                elif line.startswith("onednn_verbose,info,cpu,isa:"):
                    info["isa"] = f[3][4:]
                elif line.startswith("onednn_verbose,exec,cpu,matmul"):
                    info["impl"] = f[4]
    except Exception as e:  # report, never fail the benchmark on the probe
        info["impl"] = f"? ({e})"
    n, reps, t0 = 256, 0, time.process_time()
    while time.process_time() - t0 < 0.1:
        a @ b
        reps += 1
    info["bf16_gemm_256_gflops"] = 2 * n ** 3 * reps / (time.process_time() - t0) / 1e9
    return info


def worker(args):
    import torch
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    shape = SHAPES[args.shape]
    model, x, y = build_torch(shape, seed=0)
    nparams = sum(p.numel() for p in model.parameters())
    variants = [(fe, stn) for fe in (True, False) for stn in (True, False)]
    if args.variant:
        fe, stn = (v == "1" for v in args.variant.split(","))
        chosen = (fe, stn)
    else:
        chosen = (True, True)
    opt = make_opt(torch, model, chosen[0])

    if args.bf16:  # forward and loss under autocast; backward and AdamW outside, float32 master weights
        def forward():
            with autocast(torch):
                return model(x, y)
    else:
        def forward():
            return model(x, y)

    def step(stn):
        loss = forward()
        opt.zero_grad(set_to_none=stn)
        loss.backward()
        opt.step()
        return loss

    loss0 = float(forward().detach())
    t0 = time.process_time()
    for _ in range(3):  # warm-up (also allocates the optimizer's state)
        step(chosen[1])
    est = (time.process_time() - t0) / 3

    calib = {}
    if not args.variant:  # round-robin over the four variants, keep the fastest median
        k = max(2, min(30, round(0.1 / est)))
        times = {v: [] for v in variants}
        for _ in range(3):
            for fe, stn in variants:
                opt.param_groups[0]["foreach"] = fe
                for _ in range(k):
                    t = time.process_time()
                    step(stn)
                    times[(fe, stn)].append(time.process_time() - t)
        calib = {f"{int(fe)},{int(stn)}": statistics.median(v) * 1e3 for (fe, stn), v in times.items()}
        chosen = min(variants, key=lambda v: statistics.median(times[v]))
    opt.param_groups[0]["foreach"] = chosen[0]

    steps = args.steps or max(5, min(500, round(1.5 / est)))
    times = []
    for _ in range(steps):
        t = time.process_time()
        loss = step(chosen[1])
        times.append(time.process_time() - t)
    out = {
        "ms": statistics.median(times) * 1e3, "min_ms": min(times) * 1e3, "steps": steps,
        "loss0": loss0, "loss": float(loss.detach()), "params": nparams,
        "foreach": chosen[0], "set_to_none": chosen[1], "calib_ms": calib,
        "torch": torch.__version__, "threads": torch.get_num_threads(), "blas": blas_report(torch),
        "capability": (re.findall(r"CPU capability usage: (\S+)", torch.__config__.show()) or ["?"])[0],
    }
    if args.bf16:  # after timing: what autocast did in one more step, and oneDNN's bf16 kernel
        out["bf16"] = dict(bf16_step_report(torch, model, x, y), onednn=onednn_report(torch))
    print(json.dumps(out))


def check():
    """Self-test: the PyTorch model at nano has N parameters, loss at init ~ ln V, one step runs."""
    import torch
    torch.set_num_threads(1)
    t0 = time.time()
    shape = SHAPES["nano"]
    model, x, y = build_torch(shape, seed=0)
    n = sum(p.numel() for p in model.parameters())
    ok = True

    def expect(cond, what):
        nonlocal ok
        print(("ok   " if cond else "FAIL ") + what)
        ok = ok and cond

    expect(n == param_count(shape), f"parameter count {n} == formula {param_count(shape)}")
    loss = model(x, y)
    expect(math.isfinite(loss.item()) and abs(loss.item() - math.log(shape["V"])) < 0.5,
           f"loss at init {loss.item():.4f} within 0.5 of ln {shape['V']} = {math.log(shape['V']):.4f}")
    opt = make_opt(torch, model, True)
    before = model.tok.weight.detach().clone()
    for stn in (True, False):
        loss = model(x, y)
        opt.zero_grad(set_to_none=stn)
        loss.backward()
        opt.step()
    after = model(x, y).item()
    moved = (model.tok.weight.detach() - before).abs().max().item()
    expect(math.isfinite(after) and 0 < moved <= 2 * 1e-4 * 1.01,
           f"two AdamW steps: loss {after:.4f}, max |delta tok_emb| {moved:.2e} (<= 2 lr)")

    # The module is docs/model.md's model: its loss equals that of tools/make_golden.py's functional model
    # (the one the golden files and staticformer are checked against) on the same random
    # parameters, every bias and LayerNorm parameter nonzero, in float64.
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "make_golden", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "make_golden.py"))
    mg = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mg)
    cfg = dict(mg.CONFIGS["nano"])
    gen = torch.Generator().manual_seed(5)
    P = {k: v.to(torch.float64) for k, v in mg.init_params(cfg, gen).items()}
    m64 = model.to(torch.float64)
    with torch.no_grad():
        m64.tok.weight.copy_(P["tok_emb.weight"])
        m64.pos.weight.copy_(P["pos_emb.weight"])
        for l, b in enumerate(m64.blocks):
            pre = f"blocks.{l}."
            b.ln1.weight.copy_(P[pre + "norm1.weight"]), b.ln1.bias.copy_(P[pre + "norm1.bias"])
            b.ln2.weight.copy_(P[pre + "norm2.weight"]), b.ln2.bias.copy_(P[pre + "norm2.bias"])
            for lin, w, bias in ((b.q, "wq", "bq"), (b.k, "wk", "bk"), (b.v, "wv", "bv"), (b.o, "wo", "bo")):
                lin.weight.copy_(P[pre + "attn." + w].t()), lin.bias.copy_(P[pre + "attn." + bias])
            b.fc.weight.copy_(P[pre + "ffn.w1"].t()), b.fc.bias.copy_(P[pre + "ffn.b1"])
            b.proj.weight.copy_(P[pre + "ffn.w2"].t()), b.proj.bias.copy_(P[pre + "ffn.b2"])
        m64.lnf.weight.copy_(P["norm_f.weight"]), m64.lnf.bias.copy_(P["norm_f.bias"])
        ours = m64(x, y).item()
        ref = mg.loss_fn(mg.forward(cfg, P, x, None), y).item()
    expect(abs(ours - ref) <= 1e-12 * abs(ref),
           f"the module is the model of docs/model.md: loss {ours:.15f} == make_golden.py's {ref:.15f} (float64)")

    # bf16 autocast (--bf16): on CPU in this torch, a Linear's output inside autocast is bf16 and
    # every matrix product of forward and backward runs in bf16; the loss is float32 and near the
    # float one; parameters and gradients stay float32; AdamW still moves the weights.
    lin = torch.nn.Linear(64, 32)
    with autocast(torch):
        out = lin(torch.randn(8, 64))
    expect(out.dtype == torch.bfloat16, f"autocast('cpu', bfloat16): nn.Linear output dtype {out.dtype}")
    model, x, y = build_torch(shape, seed=0)
    with torch.no_grad():
        loss32 = model(x, y).item()
    rep = bf16_step_report(torch, model, x, y)
    mm = rep["matmuls"]
    expect(rep["linear_out"] == "torch.bfloat16" and set(mm) == {"bfloat16"},
           f"bf16 step: block Linear output {rep['linear_out']}, matrix products forward+backward by dtype {mm}")
    expect(rep["loss"] == "torch.float32" and rep["params"] == ["torch.float32"] and rep["grads"] == ["torch.float32"],
           f"bf16 step: loss {rep['loss']}, parameters {rep['params']}, gradients {rep['grads']}")
    opt = make_opt(torch, model, True)
    before = model.tok.weight.detach().clone()
    with autocast(torch):
        loss16 = model(x, y)
    opt.zero_grad(set_to_none=True)
    loss16.backward()
    opt.step()
    moved = (model.tok.weight.detach() - before).abs().max().item()
    expect(abs(loss16.item() - loss32) < 0.02 and 0 < moved <= 1e-4 * 1.01,
           f"bf16 step: loss {loss16.item():.4f} vs float32 {loss32:.4f} (within 0.02), max |delta tok_emb| {moved:.2e} (<= lr)")
    dnn = onednn_report(torch)
    print(f"     oneDNN {dnn['version']}, ISA {dnn['isa']}, bf16 matmul kernel {dnn['impl']}, "
          f"256^3 {dnn['bf16_gemm_256_gflops']:.0f} GFLOP/s")
    # The --bf16 worker path itself, in a fresh process (a few untimed-quality steps).
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--bf16", "--shape", "nano",
           "--steps", "5", "--variant", "1,1"]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd="/",
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
    try:
        w = json.loads(p.stdout.strip().splitlines()[-1])
        b = w["bf16"]
        expect(p.returncode == 0 and w["ms"] > 0 and set(b["matmuls"]) == {"bfloat16"} and math.isfinite(w["loss"]),
               f"--worker --bf16 --shape nano: {w['ms']:.3f} ms/step, loss {w['loss0']:.4f} -> {w['loss']:.4f}, "
               f"matmuls {b['matmuls']}, kernel {b['onednn']['impl']}")
    except (IndexError, ValueError, KeyError) as e:
        expect(False, f"--worker --bf16 --shape nano: {e}: {(p.stdout + p.stderr).strip()[-500:]}")
    print(f"{'passed' if ok else 'FAILED'} in {time.time() - t0:.1f} s (torch {torch.__version__})")
    return 0 if ok else 1


# ---------------------------------------------------------------------------------------------
# The driver (standard library only).

def torch_python(requested):
    """A Python that can import torch: --python, this one, or Debian's /usr/bin/python3."""
    cands = [requested] if requested else [sys.executable, "/usr/bin/python3"]
    for py in cands:
        if py and shutil.which(py) and subprocess.run(
                [py, "-c", "import torch"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                cwd="/").returncode == 0:
            return py
    return None


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run_sf(binary, shape, cpu, min_time, bench="train_step"):
    """One sf_bench_train process for bench/shape; bench train_step_bf16 gives the bf16 policy's
    row, whose pct_peak/peak are then its pct_bf16_peak/bf16_peak_GFLOPs."""
    cmd = ["taskset", "-c", str(cpu), binary, f"--benchmark_filter=^{bench}/{shape}$",
           "--benchmark_format=json", f"--benchmark_min_time={min_time}"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed: {p.stderr.strip()[-500:]}")
    doc = json.loads(p.stdout)
    b = next(b for b in doc["benchmarks"] if b["name"] == f"{bench}/{shape}")
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
    bf16 = bench.endswith("_bf16")
    return {"ms": b["cpu_time"] * scale, "gflops": b.get("GFLOPs"),
            "pct_peak": b.get("pct_bf16_peak" if bf16 else "pct_peak"),
            "peak": b.get("bf16_peak_GFLOPs" if bf16 else "peak_GFLOPs"),
            "iterations": b["iterations"], "context": doc["context"]}, cmd


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def torch_env(args):
    """Environment giving PyTorch its fastest kernels: on an AVX-512 CPU, ATen's AVX-512 build of
    its own kernels (Debian's torch 1.13 dispatches AVX2 by default) and OpenBLAS's SkylakeX
    kernels (0.3.21's DYNAMIC_ARCH does not know newer CPUs such as Zen 5 and falls back to
    Haswell, AVX2). 'default' leaves the library's own choice."""
    avx512 = {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= cpu_flags()
    env = {}
    for opt, var, fast in ((args.torch_cpu_capability, "ATEN_CPU_CAPABILITY", "avx512"),
                           (args.openblas_coretype, "OPENBLAS_CORETYPE", "SKYLAKEX")):
        if opt == "auto":
            opt = fast if avx512 else "default"
        if opt != "default":
            env[var] = opt
    return env


def run_torch(py, blas, shape, cpu, steps, variant, extra_env, bf16=False):
    env = dict(os.environ, **extra_env)
    env["LD_LIBRARY_PATH"] = ":".join(BLAS[blas][1] + [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p])
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[v] = "1"
    cmd = ["taskset", "-c", str(cpu), py, os.path.abspath(__file__), "--worker", "--shape", shape]
    if steps:
        cmd += ["--steps", str(steps)]
    if variant:
        cmd += ["--variant", "%d,%d" % variant]
    if bf16:
        cmd.append("--bf16")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/")
    if p.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed: {p.stderr.strip()[-800:]}")
    pre = " ".join(f"{k}={env[k]}" for k in sorted(extra_env)) + " " if extra_env else ""
    return json.loads(p.stdout.strip().splitlines()[-1]), "%sLD_LIBRARY_PATH=%s %s" % (pre, env["LD_LIBRARY_PATH"], shlex.join(cmd))


def run_llmc(peers, shape, cpu):
    cmd = ["bash", os.path.join(peers, "run.sh"), "train", LLMC_NAME[shape]]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PEERS_CPU=str(cpu)))
    m = re.search(r"params (\d+) .*cpu_ms median ([\d.eE+-]+)", p.stdout)
    if p.returncode != 0 or not m:
        raise RuntimeError(f"PEERS_CPU={cpu} {shlex.join(cmd)}: {(p.stdout + p.stderr).strip()[-500:]}")
    return {"ms": float(m.group(2)), "params": int(m.group(1)), "line": p.stdout.strip().splitlines()[-1]}, \
        f"PEERS_CPU={cpu} {shlex.join(cmd)}"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="build directory holding benchmark/sf_bench_train (default: build)")
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma list of " + ", ".join(SHAPES))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cpu", type=int, default=1, help="core every run is pinned to (default 1)")
    ap.add_argument("--steps", type=int, default=0, help="PyTorch timed steps per run (default: ~1.5 s worth)")
    ap.add_argument("--blas", default="ref,openblas", help="PyTorch columns: ref, openblas (comma list)")
    ap.add_argument("--peers", default=os.path.join(ROOT, "..", "shared", "peers"),
                    help="llm.c/llama2.c peers directory (default ../shared/peers beside the repository)")
    ap.add_argument("--min-time", default="0.5", help="sf_bench_train --benchmark_min_time (libbenchmark 1.7: seconds)")
    ap.add_argument("--python", default="", help="Python with torch for the workers (default: this one or /usr/bin/python3)")
    ap.add_argument("--torch-cpu-capability", default="auto",
                    help="ATEN_CPU_CAPABILITY for PyTorch: auto (avx512 on an AVX-512 CPU), default (torch's choice), avx2, ...")
    ap.add_argument("--openblas-coretype", default="auto",
                    help="OPENBLAS_CORETYPE: auto (SKYLAKEX on an AVX-512 CPU), default (OpenBLAS's detection), HASWELL, ...")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--bf16", action="store_true",
                    help="also time bf16 mixed precision at " + ", ".join(BF16_SHAPES) +
                    ": staticformer's train_step_bf16 and PyTorch under CPU autocast (a second table)")
    ap.add_argument("--check", action="store_true", help="quick self-test of the PyTorch model, no timing")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--shape", default="nano", help=argparse.SUPPRESS)
    ap.add_argument("--variant", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        return worker(args)
    if args.check:
        try:
            import torch  # noqa: F401
        except ImportError:
            py = torch_python(args.python)
            if not py:
                print("no Python with torch found (install python3-torch)", file=sys.stderr)
                return 1
            return subprocess.run([py, os.path.abspath(__file__), "--check"], cwd="/").returncode
        return check()

    shapes = [s for s in args.shapes.split(",") if s]
    blases = [b for b in args.blas.split(",") if b]
    for s in shapes:
        if s not in SHAPES:
            ap.error(f"unknown shape {s}")
    for b in blases:
        if b not in BLAS:
            ap.error(f"unknown BLAS {b}")
    build = args.build if os.path.isabs(args.build) else os.path.join(os.getcwd(), args.build)
    if not os.path.isdir(build) and os.path.isdir(os.path.join(ROOT, args.build)):
        build = os.path.join(ROOT, args.build)
    binary = os.path.join(build, "benchmark", "sf_bench_train")
    have_sf = os.access(binary, os.X_OK)
    if not have_sf:
        log(f"note: {binary} not found (build the target sf_bench_train, or pass --build): staticformer column empty")
    py = torch_python(args.python)
    if not py:
        log("note: no Python with torch (python3-torch): PyTorch columns empty")
    peers = os.path.normpath(args.peers)
    have_peers = os.path.isfile(os.path.join(peers, "run.sh"))
    blas_ok = {b: os.path.isdir(BLAS[b][1][0]) for b in blases}

    tenv = torch_env(args)
    cols = ["sf"] + [f"torch:{b}" for b in blases] + ["llmc"]
    # --bf16: staticformer bf16 and PyTorch autocast-bf16 (one BLAS: it calls no sgemm_), each run
    # right after its float counterparts, at the shapes sf_bench_train has bf16 rows for.
    bcols = ["sf:bf16", "torch:bf16"] if args.bf16 else []
    b16 = next((b for b in BF16_BLAS if os.path.isdir(BLAS[b][1][0])), None)
    order = cols[:1] + bcols[:1] + cols[1:-1] + bcols[1:] + cols[-1:]
    res = {s: {c: [] for c in cols + bcols} for s in shapes}
    extra = {s: {} for s in shapes}  # last details per column
    pct = {s: [] for s in shapes}  # staticformer's pct_peak per round
    peaks = []  # its measured peak GFLOP/s, every run
    pct16 = {s: [] for s in shapes}  # the same for its bf16 rows: pct_bf16_peak, bf16_peak_GFLOPs
    peaks16 = []
    errors, commands = {}, {}
    variant = {}
    for r in range(args.rounds):
        for s in shapes:
            for c in order:
                if c in bcols and s not in BF16_SHAPES:
                    continue
                try:
                    if c == "sf":
                        if not have_sf:
                            continue
                        out, cmd = run_sf(binary, s, args.cpu, args.min_time)
                    elif c == "sf:bf16":
                        if not have_sf:
                            continue
                        out, cmd = run_sf(binary, s, args.cpu, args.min_time, "train_step_bf16")
                    elif c == "torch:bf16":
                        if not py or not b16:
                            continue
                        out, cmd = run_torch(py, b16, s, args.cpu, args.steps, variant.get((s, "bf16")), tenv, bf16=True)
                        variant.setdefault((s, "bf16"), (out["foreach"], out["set_to_none"]))
                        if r == 0:
                            extra[s][c + ":calib"] = out["calib_ms"]
                    elif c == "llmc":
                        if not have_peers:
                            continue
                        out, cmd = run_llmc(peers, s, args.cpu)
                    else:
                        b = c.split(":")[1]
                        if not py or not blas_ok[b]:
                            continue
                        out, cmd = run_torch(py, b, s, args.cpu, args.steps, variant.get((s, b)), tenv)
                        variant.setdefault((s, b), (out["foreach"], out["set_to_none"]))
                        if r == 0:
                            extra[s][c + ":calib"] = out["calib_ms"]
                except (RuntimeError, json.JSONDecodeError, StopIteration, KeyError) as e:
                    errors[(s, c)] = str(e)
                    log(f"round {r + 1} {s} {c}: ERROR {e}")
                    continue
                res[s][c].append(out["ms"])
                if c == "sf":
                    pct[s].append(out["pct_peak"])
                    if out["peak"]:
                        peaks.append(out["peak"])
                elif c == "sf:bf16":
                    pct16[s].append(out["pct_peak"])
                    if out["peak"]:
                        peaks16.append(out["peak"])
                extra[s][c] = out
                commands.setdefault(c, cmd)
                log(f"round {r + 1}/{args.rounds} {s:8s} {c:14s} {out['ms']:9.3f} ms")

    # ---- report
    def med(s, c):
        return statistics.median(res[s][c]) if res[s][c] else None

    lines = []

    def optimizer_lines(c, key):
        """The AdamW/zero_grad variant chosen for PyTorch run c (variant key: BLAS or "bf16"), with its calibration."""
        ch = ", ".join(f"{s} foreach={variant[(s, key)][0]} set_to_none={variant[(s, key)][1]}"
                       for s in shapes if (s, key) in variant)
        lines.append(f"  AdamW/zero_grad chosen in round 1 (fastest of 4): {ch}")
        for s in shapes:
            cal = extra[s].get(c + ":calib")
            if cal:
                lines.append(f"    {s} calibration ms (foreach,set_to_none): " +
                             ", ".join(f"{k}: {v:.3f}" for k, v in cal.items()))

    lines.append(f"CPU: {cpu_model()}, all runs pinned to core {args.cpu}, {args.rounds} rounds interleaved, medians over rounds")
    if have_sf:
        btype = "?"
        try:
            with open(os.path.join(build, "CMakeCache.txt")) as f:
                btype = (re.findall(r"^CMAKE_BUILD_TYPE:\w+=(.*)$", f.read(), re.M) or ["?"])[0] or "(none)"
        except OSError:
            pass
        lines.append(f"staticformer: {commands.get('sf') and shlex.join(commands['sf'])}  (per shape)")
        pk = f"median {statistics.median(peaks):.1f}, range {min(peaks):.1f}-{max(peaks):.1f}" if peaks else "?"
        lines.append(f"  build type {btype}; AVX FMA peak measured by sf_bench_train after each run: {pk} GFLOP/s")
        if args.bf16:
            pk = f"median {statistics.median(peaks16):.1f}, range {min(peaks16):.1f}-{max(peaks16):.1f}" if peaks16 else "?"
            lines.append(f"staticformer bf16: {commands.get('sf:bf16') and shlex.join(commands['sf:bf16'])}  (per shape)")
            lines.append(f"  vdpbf16ps peak measured by sf_bench_train after each run: {pk} GFLOP/s")
    else:
        lines.append(f"staticformer: {binary} not built")
    for b in blases:
        c = f"torch:{b}"
        if not blas_ok[b]:
            lines.append(f"{BLAS[b][0]}: {BLAS[b][1][0]} not installed")
            continue
        d = next((extra[s][c] for s in shapes if c in extra[s]), None)
        if d is None:
            lines.append(f"{BLAS[b][0]}: no result")
            continue
        bl = d["blas"]
        lines.append(f"{BLAS[b][0]}: torch {d['torch']} ({py}), {d['threads']} thread, ATen {d['capability']}; sgemm_ from {bl['sgemm_from']}"
                     f"{' [' + bl['openblas'] + ']' if bl['openblas'] else ''}; sgemm 256^3 {bl['sgemm_256_gflops']:.1f} GFLOP/s")
        others = [m for m in bl["mapped"] if os.path.realpath(m) != bl["sgemm_from"]]
        if others:
            lines.append(f"  also mapped: {', '.join(others)}")
        lines.append(f"  {commands[c]}  (per shape)")
        optimizer_lines(c, b)
    if args.bf16:
        c = "torch:bf16"
        d = next((extra[s][c] for s in shapes if c in extra[s]), None)
        if not b16:
            lines.append(f"PyTorch autocast bf16: no BLAS directory installed ({', '.join(BLAS[b][1][0] for b in BF16_BLAS)})")
        elif d is None:
            lines.append("PyTorch autocast bf16: no result")
        else:
            dn = d["bf16"]["onednn"]
            lines.append(f"PyTorch autocast bf16: torch.autocast('cpu', dtype=torch.bfloat16) around forward + loss; "
                         f"float32 parameters, gradients {'/'.join(g.replace('torch.', '') for g in d['bf16']['grads'])}, AdamW; "
                         f"torch {d['torch']}, {d['threads']} thread, ATen {d['capability']}, BLAS {BLAS[b16][0][8:]} "
                         f"(sgemm_ from {d['blas']['sgemm_from']}, not called by the step)")
            lines.append(f"  oneDNN {dn['version']}, ISA {dn['isa']}; bf16 matmul kernel {dn['impl']}, "
                         f"256^3 {dn['bf16_gemm_256_gflops']:.1f} GFLOP/s")
            for s in shapes:
                if c in extra[s]:
                    b = extra[s][c]["bf16"]
                    lines.append(f"  {s}: checked after timing: Linear output {b['linear_out'].replace('torch.', '')}, "
                                 f"matrix products of forward + backward by dtype "
                                 + (", ".join(f"{k} {v}" for k, v in sorted(b["matmuls"].items())) or "?"))
            lines.append(f"  {commands[c]}  (per shape)")
            optimizer_lines(c, "bf16")
    if have_peers:
        d = next((extra[s]["llmc"] for s in shapes if "llmc" in extra[s]), None)
        lines.append(f"llm.c: {commands.get('llmc', '?')}  (per shape)" + (f"\n  e.g. {d['line']}" if d else ""))
    else:
        lines.append(f"llm.c: {peers}/run.sh not found (--peers)")
    for s in shapes:
        n = param_count(SHAPES[s])
        chk = [extra[s][c]["params"] for c in cols + bcols if not c.startswith("sf") and c in extra[s]]
        bad = [p for p in chk if p != n]
        sh = SHAPES[s]
        lines.append(f"{s}: V{sh['V']} T{sh['T']} D{sh['D']} H{sh['H']} L{sh['L']} F{sh['F']} B{sh['B']}, "
                     f"N = {n} parameters, {flops_per_step(sh) / 1e6:.1f} MFLOP/step"
                     + (f"  WARNING: parameter counts differ: {bad}" if bad else ""))
    for (s, c), e in errors.items():
        lines.append(f"error {s} {c}: {e}")
    print("\n".join(lines))
    print()

    head = ["shape", "staticformer ms (GFLOP/s)", "% peak"]
    for b in blases:
        head.append(f"{BLAS[b][0]} ms (GFLOP/s, ×sf)")
    head.append("llm.c ms (GFLOP/s, ×sf)")
    def sf_cells(ms, pcts, fl):
        """staticformer's two cells: "ms (GFLOP/s)" and the median % of peak."""
        if ms is None:
            return ["not built" if not have_sf else "error", "—"]
        pp = [x for x in pcts if x is not None]
        return [f"{ms:.3f} ({fl / ms / 1e6:.1f})", f"{statistics.median(pp):.0f}%" if pp else "—"]

    rows = []
    for s in shapes:
        fl = flops_per_step(SHAPES[s])
        sf = med(s, "sf")
        row = [s] + sf_cells(sf, pct[s], fl)
        for c in cols[1:]:
            m = med(s, c)
            if m is None:
                if c == "llmc":
                    row.append("n/a" if not have_peers else "error")
                else:
                    b = c.split(":")[1]
                    row.append("not installed" if not blas_ok[b] else ("n/a" if not py else "error"))
                continue
            ratio = f", ×{m / sf:.2f}" if sf else ""
            row.append(f"{m:.3f} ({fl / m / 1e6:.1f}{ratio})")
        rows.append(row)
    def table(head, rows):
        if args.markdown:
            print("| " + " | ".join(head) + " |")
            print("|" + "|".join("---" if i == 0 else "--:" for i in range(len(head))) + "|")
            for row in rows:
                print("| " + " | ".join(row) + " |")
        else:
            w = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
            for r in [head] + rows:
                print("  ".join(x.ljust(w[i]) if i == 0 else x.rjust(w[i]) for i, x in enumerate(r)))

    table(head, rows)
    print("\nms = median CPU milliseconds per training step; ×sf = that time / staticformer's (> 1: staticformer faster).")
    if not args.bf16:
        return 1 if errors else 0

    # ---- --bf16: the mixed-precision table
    print()
    s16 = [s for s in shapes if s in BF16_SHAPES]
    if not s16:
        print(f"bf16: none of the shapes has bf16 rows (only {', '.join(BF16_SHAPES)})")
        return 1 if errors else 0
    print(f"bf16 mixed precision (--bf16; bf16 rows exist for {', '.join(BF16_SHAPES)}):\n")
    t32 = f"torch:{b16}" if b16 else None
    tname = BLAS[b16][0] if b16 else "PyTorch"
    head = ["shape", "staticformer bf16 ms (GFLOP/s)", "% bf16 peak", "sf f32/bf16",
            "PyTorch autocast-bf16 ms (GFLOP/s, ×sf-bf16)", f"{tname} f32/bf16"]
    rows = []
    for s in s16:
        fl = flops_per_step(SHAPES[s])
        sf, sf16, t16 = med(s, "sf"), med(s, "sf:bf16"), med(s, "torch:bf16")
        f32 = med(s, t32) if t32 in res[s] else None
        row = [s] + sf_cells(sf16, pct16[s], fl)
        row.append(f"×{sf / sf16:.2f}" if sf and sf16 else "—")
        if t16 is None:
            row.append("n/a" if not py or not b16 else "error")
        else:
            ratio = f", ×{t16 / sf16:.2f}" if sf16 else ""
            row.append(f"{t16:.3f} ({fl / t16 / 1e6:.1f}{ratio})")
        row.append(f"×{f32 / t16:.2f}" if f32 and t16 else "—")
        rows.append(row)
    table(head, rows)
    print("\nbf16 mixed precision: bf16 matrix products, float32 master weights, gradients and AdamW; GFLOP/s at the float"
          " FLOP count. ×sf-bf16 = that time / staticformer bf16's (> 1: staticformer faster); f32/bf16 = the float"
          " median / the bf16 median of the same implementation in this run (> 1: bf16 faster)"
          + (f"; PyTorch's float run: {tname}." if b16 else "."))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
