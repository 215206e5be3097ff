#!/usr/bin/env bash
# The time `staticformer run` takes to print its first token, from each model format, beside run.c
# (docs/benchmarks.md, "Starting faster: the header alone before the executable, ...").
#
#   FILES_DIR=dir [RUNC=path/to/run] benchmark/start_time.sh [--rounds N] [--cpu C] BUILD_DIR [BUILD_DIR ...]
#
# FILES_DIR holds the model files of tools/llama2c_files_vs_runc.sh and benchmark/llamacpp.sh
# (s15m.v0.bin ..., s15m.f32.gguf, s15m.q8_0.gguf, s260k.*, S.tok.bin) and, when present,
# s15m.safetensors (`staticformer convert s15m.v0.bin -z s15m.tok.bin -o s15m.safetensors`).
# Each BUILD_DIR holds tools/staticformer (two builds: before and after a change). N rounds
# (default 7), every program pinned to core C (default 1), the builds alternated on each file:
#   /usr/bin/time -f %e staticformer run FILE [-z TOK] -t 0 -n 2 -i Once   (one prompt token, one generated)
# and, on the version 0 files, RUNC (llama2.c's run.c, built) with the same flags. A run that
# compiled the executable (the first use of a shape: "compiled in" on stderr) is left out.
# Prints, per file and program, the median wall clock (min-max) and the executable's "loaded in".
set -euo pipefail
rounds=7 cpu=1 builds=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --cpu) cpu=$2; shift 2 ;;
    *) builds+=("$1"); shift ;;
  esac
done
[[ ${#builds[@]} -gt 0 && -n "${FILES_DIR:-}" ]] || { sed -n 2,15p "$0" >&2; exit 2; }
cd "$FILES_DIR"
files=()
for f in s15m.v0.bin s15m.v1.bin s15m.v2.bin s15m.f32.gguf s15m.q8_0.gguf s15m.safetensors s260k.v0.bin s260k.f32.gguf; do
  [[ -f $f ]] && files+=("$f")
done
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for ((r = 1; r <= rounds; ++r)); do
  for f in "${files[@]}"; do
    z=()
    [[ $f == *.bin ]] && z=(-z "${f%%.*}.tok.bin")
    for b in "${builds[@]}"; do
      out=$({ /usr/bin/time -f "WALL %e" taskset -c "$cpu" "$b/tools/staticformer" run "$f" "${z[@]}" -t 0 -n 2 -i Once >/dev/null; } 2>&1 || true)
      grep -q "compiled in" <<<"$out" && continue
      echo "$f $b $(grep -o 'loaded in [0-9.e-]*' <<<"$out" | awk '{print $3}') $(grep -o 'WALL [0-9.]*' <<<"$out" | awk '{print $2}')" >>"$log"
    done
    if [[ -n "${RUNC:-}" && $f == *.v0.bin ]]; then
      out=$({ /usr/bin/time -f "WALL %e" taskset -c "$cpu" "$RUNC" "$f" "${z[@]}" -t 0 -n 2 -i Once >/dev/null; } 2>&1 || true)
      echo "$f run.c - $(grep -o 'WALL [0-9.]*' <<<"$out" | awk '{print $2}')" >>"$log"
    fi
  done
done
python3 - "$log" <<'EOF'
import collections, statistics, sys
wall, loaded, order = collections.defaultdict(list), collections.defaultdict(list), []
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) < 4 or not p[3]:
        continue
    k = (p[0], p[1])
    if k not in wall:
        order.append(k)
    wall[k].append(float(p[3]))
    if p[2] != "-":
        loaded[k].append(float(p[2]))
for k in order:
    w = wall[k]
    s = f"{k[0]:18} {k[1]}: wall {statistics.median(w):.2f} s ({min(w):.2f}-{max(w):.2f}, {len(w)} runs)"
    if loaded[k]:
        s += f", loaded in {statistics.median(loaded[k]):.3f} s"
    print(s)
EOF
