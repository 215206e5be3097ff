#!/usr/bin/env bash
# Issue #22's speed benchmark: `staticformer run` beside llama2.c's run.c and runq.c on the same
# model files, one core, interleaved rounds (docs/benchmarks.md, "llama2.c's own files").
#
#   tools/llama2c_files_vs_runc.sh BUILD_DIR [ROUNDS=5] [CPU=1]
#
# BUILD_DIR holds tools/staticformer and benchmark/sf_bench_kernels (Release). It
#   1. builds run.c and runq.c from ../shared/peers/llama2c (PEERS_DIR) with
#      `gcc -Ofast -march=native ... -lm` into a temporary directory;
#   2. writes the model files with tools/make_llama2c_bench.py (llama2.c's own model.py and
#      export.py; /usr/bin/python3 with torch, or $PYTHON): a stories260K-shaped and a
#      stories15M-shaped random model, versions 0, 1 and 2, their tokenizer.bin and a 64-token
#      prompt (FILES_DIR=dir keeps them there and reuses them);
#   3. runs `staticformer run` once per file (the first use compiles the architecture's executable,
#      cached in $STATICFORMER_CACHE);
#   4. ROUNDS times, each program pinned to core CPU, alternating:
#        float: run FILE.v0 vs staticformer run FILE.v0 (run.c reads only version 0; the same floats
#               as version 1, which staticformer also reads: both are run, the v1 figure is printed);
#        int8:  runq FILE.v2 vs staticformer on version 2 (INT8=v2: the int8 decoder on the
#               file's groups), or on the float file quantized at load (INT8=convert, the
#               default: `staticformer run FILE.v1 --int8`, groups of 32);
#        prompt: -n 64 with the 64-token prompt: run.c's "achieved tok/s" is then its prompt rate
#               (every step is a prompt token), staticformer's is "prompt N tokens in X s";
#        bandwidth: sf_bench_kernels --benchmark_filter=read_bandwidth at each weight size;
#      all with `-z TOK -t 0 -n 256 -i "Once upon a time"` but the prompt case;
#   5. prints the medians, the ratios (each against issue #22's target: met, or missed by how
#      much), the memory roofline of each (weight bytes per token ÷ the best read bandwidth at that
#      size in this run → tokens/s at most; staticformer's share of it, the stories15M float one
#      against the 85% asked; and the median over the rounds of each round's share, against that
#      round's best bandwidth), and whether staticformer's text is run.c's (float, -t 0; byte for
#      byte). KEEP_LOG=file keeps the raw log.
# The helpers (rates, bandwidth, roofline) are shared with benchmark/llamacpp.sh:
# tools/bench_helpers.sh and tools/bench_roofline.py.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [ROUNDS] [CPU]}
rounds=${2:-5}
cpu=${3:-1}
root="$(cd "$(dirname "$0")/.." && pwd)"
peers=${PEERS_DIR:-$root/../shared/peers}
python=${PYTHON:-/usr/bin/python3}
int8=${INT8:-convert}
sf="$build/tools/staticformer"
bench="$build/benchmark/sf_bench_kernels"
[ -x "$sf" ] || { echo "no $sf: build the target staticformer_cli first" >&2; exit 1; }
[ -x "$bench" ] || { echo "no $bench: build the target sf_bench_kernels first" >&2; exit 1; }
[ -f "$peers/llama2c/run.c" ] || { echo "no $peers/llama2c/run.c (set PEERS_DIR)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=${FILES_DIR:-$tmp/files}
gcc -Ofast -march=native -o "$tmp/run" "$peers/llama2c/run.c" -lm
gcc -Ofast -march=native -o "$tmp/runq" "$peers/llama2c/runq.c" -lm
if [ ! -f "$files/s15m.prompt64.txt" ]; then
  "$python" "$root/tools/make_llama2c_bench.py" "$peers/llama2c" "$files" 2>&1 | grep -v '^WARNING: using slow attention' >&2
fi
# shellcheck source=bench_helpers.sh
. "$root/tools/bench_helpers.sh"
pin() { taskset -c "$cpu" "$@"; }
prompt="Once upon a time"
shapes="s260k s15m"
int8_args() {  # staticformer's int8 run of shape $1
  if [ "$int8" = v2 ]; then echo "$files/$1.v2.bin"; else echo "$files/$1.v1.bin --int8"; fi
}
for s in $shapes; do  # first use: compile (and check that every file runs)
  "$sf" run "$files/$s.v0.bin" -z "$files/$s.tok.bin" -t 0 -n 4 -i "$prompt" >/dev/null 2>"$tmp/first.err" ||
    { cat "$tmp/first.err" >&2; exit 1; }
  # shellcheck disable=SC2046
  "$sf" run $(int8_args "$s") -z "$files/$s.tok.bin" -t 0 -n 4 -i "$prompt" >/dev/null 2>"$tmp/first.err" ||
    { cat "$tmp/first.err" >&2; exit 1; }
done
log="$tmp/log"
: >"$log"
for r in $(seq "$rounds"); do
  for s in $shapes; do
    z=(-z "$files/$s.tok.bin" -t 0)
    p64=$(cat "$files/$s.prompt64.txt")
    pin "$tmp/run" "$files/$s.v0.bin" "${z[@]}" -n 256 -i "$prompt" >"$tmp/$s.run.txt" 2>"$tmp/e"
    echo "$s float runc $(bench_rate "$tmp/e")" >>"$log"
    pin "$sf" run "$files/$s.v0.bin" "${z[@]}" -n 256 -i "$prompt" >"$tmp/$s.sf.txt" 2>"$tmp/e"
    echo "$s float sf $(bench_rate "$tmp/e")" >>"$log"
    pin "$sf" run "$files/$s.v1.bin" "${z[@]}" -n 256 -i "$prompt" >"$tmp/$s.sf1.txt" 2>"$tmp/e"
    echo "$s float sf_v1 $(bench_rate "$tmp/e")" >>"$log"
    if [ "$r" = 1 ]; then
      if cmp -s "$tmp/$s.run.txt" "$tmp/$s.sf.txt" && cmp -s "$tmp/$s.run.txt" "$tmp/$s.sf1.txt"; then
        echo "$s text same" >>"$log"
      else
        echo "$s text differs" >>"$log"
      fi
    fi
    pin "$tmp/runq" "$files/$s.v2.bin" "${z[@]}" -n 256 -i "$prompt" >/dev/null 2>"$tmp/e"
    echo "$s int8 runq $(bench_rate "$tmp/e")" >>"$log"
    # shellcheck disable=SC2046
    pin "$sf" run $(int8_args "$s") "${z[@]}" -n 256 -i "$prompt" >/dev/null 2>"$tmp/e"
    echo "$s int8 sf $(bench_rate "$tmp/e")" >>"$log"
    pin "$tmp/run" "$files/$s.v0.bin" "${z[@]}" -n 64 -i "$p64" >/dev/null 2>"$tmp/e"
    echo "$s prompt runc $(bench_rate "$tmp/e")" >>"$log"
    pin "$sf" run "$files/$s.v0.bin" "${z[@]}" -n 64 -i "$p64" >/dev/null 2>"$tmp/e"
    echo "$s prompt sf $(bench_prompt_rate "$tmp/e") $(bench_prompt_tokens "$tmp/e")" >>"$log"
  done
  bench_bandwidth "$cpu" "$bench" 1016 16700 59344 >>"$log"
done
[ -z "${KEEP_LOG:-}" ] || cp "$log" "$KEEP_LOG"
"$python" - "$log" "$files" "$int8" "$rounds" "$root/tools" <<'PY'
import statistics, sys
log, files, int8, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
sys.path.insert(0, sys.argv[5])
from bench_roofline import SHAPES, bandwidths, roofline, round_shares, share_summary, weight_bytes
v, text, ptoks = {}, {}, {}
for line in open(log):
    w = line.split()
    if w[0] == "bw":
        continue
    elif w[1] == "text":
        text[w[0]] = w[2]
    elif len(w) >= 4 and w[3]:
        v.setdefault((w[0], w[1], w[2]), []).append(float(w[3]))
        if w[1] == "prompt" and w[2] == "sf" and len(w) > 4:
            ptoks[w[0]] = int(w[4])
med = {k: statistics.median(x) for k, x in v.items()}
rng = {k: (min(x), max(x)) for k, x in v.items()}
bwm = bandwidths(open(log))
size_kib = {("s260k", "float"): 1016, ("s15m", "float"): 59344, ("s15m", "int8"): 16700}
print(f"medians of {rounds} interleaved rounds (achieved tok/s; min-max); int8 for staticformer: "
      + ("the version 2 file" if int8 == "v2" else "the version 1 file quantized at load (--int8, groups of 32)"))
print(f"{'shape':6} {'case':7} {'llama2.c':>22} {'staticformer':>22} {'ratio':>7}  target (issue #22)")
target = {("s260k", "float"): 2.0, ("s260k", "int8"): 3.0, ("s260k", "prompt"): 10.0,
          ("s15m", "float"): 1.0, ("s15m", "int8"): 5.0, ("s15m", "prompt"): 10.0}
for s in SHAPES:
    for case, peer in (("float", "runc"), ("int8", "runq"), ("prompt", "runc")):
        a, b = (s, case, peer), (s, case, "sf")
        if a not in med or b not in med:
            continue
        ratio, t = med[b] / med[a], target[(s, case)]
        fa = f"{med[a]:.0f} ({rng[a][0]:.0f}-{rng[a][1]:.0f})"
        fb = f"{med[b]:.0f} ({rng[b][0]:.0f}-{rng[b][1]:.0f})"
        verdict = "met" if ratio >= t else f"missed by {(1 - ratio / t) * 100:.0f}%"
        print(f"{s:6} {case:7} {fa:>22} {fb:>22} {ratio:6.2f}x  >= {t:g}x: {verdict}")
    if (s, "float", "sf_v1") in med:
        print(f"{s:6} float, staticformer on the version 1 file: {med[(s, 'float', 'sf_v1')]:.0f} tok/s")
    if s in ptoks:
        print(f"{s:6} prompt: staticformer prefilled {ptoks[s]} tokens (BOS included); run.c stepped 64 prompt positions")
    print(f"{s:6} text at -t 0 (float, run.c vs staticformer on v0 and v1): {text.get(s, '?')}")
for (s, kind), kib in size_kib.items():
    wb = weight_bytes(s, 36 if kind == "int8" else None)  # int8: a float scale per group of 32 (staticformer's)
    r = roofline(bwm, kib, wb)
    if not r:
        continue
    small, huge, peak = r
    line = (f"roofline {s} {kind}: {wb / 1e6:.2f} MB of weights per token; read bandwidth at {kib} KiB "
            f"{small:.1f} GB/s (4 KiB pages), {huge:.1f} GB/s (huge pages) -> at most {peak:.0f} tok/s")
    for who in ("sf", "runc" if kind == "float" else "runq"):
        k = (s, kind, who)
        if k in med:
            share = med[k] / peak * 100
            line += f"; {'staticformer' if who == 'sf' else who} {share:.0f}%"
            if (s, kind, who) == ("s15m", "float", "sf"):
                line += " (target >= 85%: " + ("met)" if share >= 85 else f"missed by {85 - share:.0f} points)")
    print(line)

    def parse(line, s=s, kind=kind):
        w = line.split()
        if len(w) >= 4 and w[0] == s and w[1] == kind and w[3]:
            return w[2], float(w[3])
    per = round_shares(open(log).read().splitlines(), parse, kib, wb)
    for who in ("sf", "runc" if kind == "float" else "runq"):
        if per.get(who):
            print(f"  share in each round (its tok/s / that round's best bandwidth) {s} {kind}, "
                  f"{'staticformer' if who == 'sf' else who}: {share_summary(per[who])}")
PY
