#!/usr/bin/env bash
# Decoding speed beside llama2.c's run.c, in one run, on one core: the peers' script
# (../shared/peers/run.sh decode nano|dim128) and sf_bench_decode alternate ROUNDS times, each
# pinned to core CPU; prints the median tokens/s of each and their ratios.
#
#   tools/decode_vs_llama2c.sh BUILD_DIR [ROUNDS=5] [CPU=1]
#
# BUILD_DIR holds benchmark/sf_bench_decode (Release). The peers' directory is taken from
# PEERS_DIR (default: ../shared/peers beside the repository).
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [ROUNDS] [CPU]}
rounds=${2:-5}
cpu=${3:-1}
root="$(cd "$(dirname "$0")/.." && pwd)"
peers=${PEERS_DIR:-$root/../shared/peers}
bench="$build/benchmark/sf_bench_decode"
[ -x "$bench" ] || { echo "no $bench: build the target sf_bench_decode first" >&2; exit 1; }
[ -x "$peers/run.sh" ] || { echo "no $peers/run.sh (set PEERS_DIR)" >&2; exit 1; }
log=$(mktemp)
for i in $(seq "$rounds"); do
  for shape in nano dim128; do
    PEERS_CPU=$cpu "$peers/run.sh" decode "$shape" | sed "s/^/peer $shape /" >>"$log"
  done
  taskset -c "$cpu" "$bench" --benchmark_min_time=0.3 2>/dev/null | grep '^decode/' | sed 's/^/sf /' >>"$log"
done
python3 - "$log" <<'PY'
import re, sys, statistics
peer, sf = {}, {}
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == 'peer':
        m = re.search(r'tok_per_cpu_s median ([0-9.]+)', line)
        peer.setdefault(w[1], []).append(float(m.group(1)))
    elif w[0] == 'sf':
        m = re.search(r'tokens/s=([0-9.]+)([kM]?)/s', line)
        v = float(m.group(1)) * {'': 1, 'k': 1e3, 'M': 1e6}[m.group(2)]
        sf.setdefault(w[1], []).append(v)
med = {k: statistics.median(v) for k, v in peer.items()}
print(f"llama2.c run.c: nano {med['nano']:.0f} tok/s, dim128 {med['dim128']:.0f} tok/s (medians of {len(peer['nano'])})")
for name, v in sorted(sf.items()):
    shape = name.split('/')[2]
    m = statistics.median(v)
    print(f"{name:32s} {m:12.0f} tok/s   {m / med[shape]:5.2f}x llama2.c")
PY
rm -f "$log"
