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
    kernels of that page size (four or two vector sums: "_2chains"; the native vectors or, "_mem",
    those the decoder reads weights from memory with), each the best of its rounds."""
    small = max([v for (k, n), v in bwm.items() if k == kib and "thp" not in n], default=0.0)
    huge = max([v for (k, n), v in bwm.items() if k == kib and "thp" in n], default=0.0)
    best = max(small, huge)
    return (small, huge, best * 1e9 / wbytes) if best else None


def round_shares(lines, parse, kib, wbytes):
    """{decoder key: [share of each round]}: a decoder's tok/s in one round divided by the tokens/s
    at most of the same round's best read bandwidth at kib (the best of that round's read kernels,
    either page size). The rounds are the log's blocks, each ending with its "bw" lines. A ratio
    taken between neighbours in time, so the bandwidth's swings from round to round (on a shared
    machine) meet the decoder's own; its median is printed beside the share of the medians against
    the run's best bandwidth (roofline above), which takes the best of one against the median of
    the other. parse(line) -> (key, tok/s) or None for a decoder's line."""
    shares, rates, bw = {}, {}, []

    def close():
        if bw and rates:
            peak = max(bw) * 1e9 / wbytes
            for k, rate in rates.items():
                shares.setdefault(k, []).append(rate / peak)
        rates.clear()
        bw.clear()

    for line in lines:
        w = line.split()
        if len(w) == 4 and w[0] == "bw":
            if int(w[1]) == kib:
                bw.append(float(w[3]))
            continue
        if bw:  # the first line after a round's bandwidth block
            close()
        p = parse(line)
        if p:
            rates[p[0]] = p[1]
    close()
    return shares


def share_summary(xs):
    """ "median M% (min-max, N rounds)" of round_shares' list."""
    import statistics
    return (f"median {statistics.median(xs) * 100:.0f}% ({min(xs) * 100:.0f}-{max(xs) * 100:.0f}%, "
            f"{len(xs)} rounds)")
