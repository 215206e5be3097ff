"""The memory roofline of the side-by-side speed scripts (tools/llama2c_files_vs_runc.sh,
benchmark/llamacpp.sh): the weight bytes a decoder reads per token and the read bandwidth measured
in the same run (tools/bench_helpers.sh's bench_bandwidth lines) -> tokens/s at most.

Imported by the scripts' Python (sys.path gets tools/); no dependency but the standard library.
"""

from make_llama2c_bench import SHAPES  # the benchmark's model shapes (s260k, s15m)


def matrices(shape):
    """The matrices a token reads, per layer and in total: {kind: weights}. A shared classifier is
    read once, as the head (the embedding's one row per token is left out)."""
    c = SHAPES[shape]
    D, F, L, V = c["dim"], c["hidden_dim"], c["n_layers"], c["vocab_size"]
    kvd = D // c["n_heads"] * c["n_kv_heads"]
    return {"wq": L * D * D, "wk": L * D * kvd, "wv": L * D * kvd, "wo": L * D * D,
            "w1": L * D * F, "w2": L * F * D, "w3": L * D * F, "head": V * D}


def input_width(shape, kind):
    c = SHAPES[shape]
    return c["hidden_dim"] if kind == "w2" else c["dim"]


def weight_bytes(shape, block_bytes=None):
    """Bytes of weights read per token: float32 (block_bytes None), or blocks of 32 weights of
    block_bytes bytes each (Q8_0: 34 in ggml — a float16 scale —, 36 in staticformer's int8 — a
    float32 scale) for every matrix whose input width is a multiple of 32; float32 for the others
    (`staticformer convert --gguf q8_0` leaves those F32)."""
    total = 0.0
    for kind, n in matrices(shape).items():
        if block_bytes is None or input_width(shape, kind) % 32:
            total += 4 * n
        else:
            total += n / 32 * block_bytes
    return total


def bandwidths(lines):
    """{(kib, name): best GB/s over the rounds} of the "bw KIB NAME GB/S" lines. The best, not the
    median: the roofline is a ceiling, and on a shared machine the bandwidth one core gets swings
    from round to round (on the Zen 4 VM of docs/benchmarks.md, 31 to 43 GB/s at 59344 KiB), so a
    median let a decoder's median rate exceed it."""
    bw = {}
    for line in lines:
        w = line.split()
        if len(w) == 4 and w[0] == "bw":
            bw.setdefault((int(w[1]), w[2]), []).append(float(w[3]))
    return {k: max(x) for k, x in bw.items()}


def roofline(bwm, kib, wbytes):
    """(4 KiB pages GB/s, huge pages GB/s, tokens/s at most with the better of the two) at the
    buffer size kib, or None when it was not measured. Each of the two is the best of the read
    kernels of that page size (four or two vector sums: "_2chains"), each the best of its rounds."""
    small = max([v for (k, n), v in bwm.items() if k == kib and "thp" not in n], default=0.0)
    huge = max([v for (k, n), v in bwm.items() if k == kib and "thp" in n], default=0.0)
    best = max(small, huge)
    return (small, huge, best * 1e9 / wbytes) if best else None
