#!/usr/bin/env bash
# Issue #23's speed benchmark: `staticformer run` beside llama.cpp (llama-bench) on the same GGUF
# files, one core, interleaved rounds (docs/benchmarks.md, "llama.cpp beside staticformer").
#
#   LLAMA_CPP_DIR=/path/to/llama.cpp benchmark/llamacpp.sh BUILD_DIR [ROUNDS=5] [CPU=1]
#
# llama.cpp is not part of the project and is never fetched by it: LLAMA_CPP_DIR names a llama.cpp
# source tree (built in its build/, or built here if not yet: the four tools below, with
# LLAMA_CPP_JOBS jobs, default 1) or a directory holding llama-bench itself; else llama-bench on
# the PATH. When none is found the script says how to get one and exits with status 0.
#
# BUILD_DIR holds tools/staticformer and benchmark/sf_bench_kernels (Release). The script
#   1. writes the model files with tools/make_llama2c_bench.py (llama2.c's own model.py and
#      export.py from PEERS_DIR/llama2c, default ../shared/peers; /usr/bin/python3 with torch, or
#      $PYTHON): random models of a stories260K-like and a stories15M-like shape (s260k, s15m), their
#      tokenizer.bin and a 64-token prompt (FILES_DIR=dir keeps them there and reuses them; the
#      directory is shared with tools/llama2c_files_vs_runc.sh);
#   2. converts each to GGUF with staticformer itself: `staticformer convert S.v0.bin -z S.tok.bin
#      -o S.f32.gguf --gguf f32` and `... -o S.q8_0.gguf --gguf q8_0` (Q8_0 matrices; a matrix whose
#      input width is not a multiple of 32 — s260k's w2, 172 — stays F32, in both programs);
#   3. runs `staticformer run` once on each file (the first use compiles the architecture's
#      executable, cached in $STATICFORMER_CACHE);
#   4. ROUNDS times, every program pinned to core CPU (taskset), alternating on each file:
#        llama.cpp:    llama-bench -m FILE -t 1 -p 64 -n 128 -r 1 -o jsonl (its pp64 and tg128 tok/s);
#        staticformer: run FILE -t 0 -n 128 -i "Once upon a time" (its "achieved tok/s") and
#                      run FILE -t 0 -n 64 -i PROMPT64 (prompt N tokens in X s: BOS + 64 tokens),
#                      on the Q8_0 file with int8 weights (the file's own blocks where every
#                      matrix is Q8_0, else `--int8`: groups of 32 quantized at load);
#      then sf_bench_kernels' read bandwidth at the float and int8 weight sizes (tools/bench_helpers.sh);
#   5. prints the machine, the load before and after, the medians, the ratios against issue #23's
#      targets, and the memory roofline (weight bytes per token ÷ the best read bandwidth measured
#      in this run → tokens/s at most; each program's share: tools/bench_roofline.py).
set -euo pipefail
build=${1:?usage: LLAMA_CPP_DIR=DIR $0 BUILD_DIR [ROUNDS] [CPU]}
rounds=${2:-5}
cpu=${3:-1}
root="$(cd "$(dirname "$0")/.." && pwd)"
peers=${PEERS_DIR:-$root/../shared/peers}
python=${PYTHON:-/usr/bin/python3}
sf="$build/tools/staticformer"
bench="$build/benchmark/sf_bench_kernels"

how_to_get() {
  cat <<'EOF'
llamacpp.sh: llama.cpp not found (set LLAMA_CPP_DIR to a llama.cpp source tree or to a directory
holding llama-bench). It is not part of staticformer; to get and build it outside the repository:

  # a llama.cpp release: the npm package node-llama-cpp@3.21.1 carries one as a git bundle
  mkdir -p /tmp/npm-llama && cd /tmp/npm-llama && npm i -E node-llama-cpp@3.21.1 --ignore-scripts
  git clone node_modules/node-llama-cpp/llama/gitRelease.bundle ~/llama.cpp
  # (or: git clone https://github.com/ggml-org/llama.cpp ~/llama.cpp)
  cd ~/llama.cpp
  cmake -B build -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DGGML_OPENMP=OFF
  cmake --build build -j1 --target llama-bench llama-simple llama-convert-llama2c-to-ggml llama-tokenize

then: LLAMA_CPP_DIR=~/llama.cpp benchmark/llamacpp.sh BUILD_DIR [ROUNDS] [CPU]
EOF
}

# llama-bench: $LLAMA_CPP_DIR/build/bin, $LLAMA_CPP_DIR/bin, $LLAMA_CPP_DIR, else the PATH; a source
# tree without it is built (the four tools, in its build/).
lb=""
if [ -n "${LLAMA_CPP_DIR:-}" ]; then
  for d in "$LLAMA_CPP_DIR/build/bin" "$LLAMA_CPP_DIR/bin" "$LLAMA_CPP_DIR"; do
    if [ -x "$d/llama-bench" ]; then lb="$d/llama-bench"; break; fi
  done
  if [ -z "$lb" ] && [ -f "$LLAMA_CPP_DIR/CMakeLists.txt" ] && [ -d "$LLAMA_CPP_DIR/ggml" ]; then
    echo "llamacpp.sh: building llama.cpp in $LLAMA_CPP_DIR/build (-j${LLAMA_CPP_JOBS:-1})" >&2
    cmake -S "$LLAMA_CPP_DIR" -B "$LLAMA_CPP_DIR/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
      -DLLAMA_CURL=OFF -DGGML_OPENMP=OFF >&2
    cmake --build "$LLAMA_CPP_DIR/build" -j"${LLAMA_CPP_JOBS:-1}" \
      --target llama-bench llama-simple llama-convert-llama2c-to-ggml llama-tokenize >&2
    lb="$LLAMA_CPP_DIR/build/bin/llama-bench"
  fi
elif command -v llama-bench >/dev/null; then
  lb=$(command -v llama-bench)
fi
if [ -z "$lb" ] || [ ! -x "$lb" ]; then
  how_to_get
  exit 0
fi
[ -x "$sf" ] || { echo "no $sf: build the target staticformer_cli first" >&2; exit 1; }
[ -x "$bench" ] || { echo "no $bench: build the target sf_bench_kernels first" >&2; exit 1; }
[ -f "$peers/llama2c/model.py" ] || { echo "no $peers/llama2c/model.py (set PEERS_DIR)" >&2; exit 1; }
# shellcheck source=../tools/bench_helpers.sh
. "$root/tools/bench_helpers.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=${FILES_DIR:-$tmp/files}
if [ ! -f "$files/s15m.prompt64.txt" ]; then
  "$python" "$root/tools/make_llama2c_bench.py" "$peers/llama2c" "$files" 2>&1 | grep -v '^WARNING: using slow attention' >&2
fi
shapes="s260k s15m"
types="f32 q8_0"
prompt="Once upon a time"
pin() { taskset -c "$cpu" "$@"; }
declare -A int8flag
for s in $shapes; do
  for q in $types; do
    g="$files/$s.$q.gguf"
    [ -f "$g" ] || "$sf" convert "$files/$s.v0.bin" -z "$files/$s.tok.bin" -o "$g" --gguf "$q" 2>"$tmp/e" ||
      { cat "$tmp/e" >&2; exit 1; }
    "$sf" run "$g" -t 0 -n 4 -i "$prompt" >/dev/null 2>"$tmp/e" || { cat "$tmp/e" >&2; exit 1; }  # (compiles)
    int8flag[$s.$q]=""
    if [ "$q" = q8_0 ] && [ "$(bench_weights "$tmp/e")" != int8 ]; then int8flag[$s.$q]="--int8"; fi
  done
done

log="$tmp/log"
{
  echo "machine $(lscpu | sed -n 's/^Model name: *//p' | head -1); $(nproc) CPUs"
  echo "llama.cpp $lb ($(git -C "$(dirname "$lb")" describe --tags --always 2>/dev/null || echo '?'))"
  echo "load before $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$log"
for r in $(seq "$rounds"); do
  for s in $shapes; do
    p64=$(cat "$files/$s.prompt64.txt")
    for q in $types; do
      g="$files/$s.$q.gguf"
      pin "$lb" -m "$g" -t 1 -p 64 -n 128 -r 1 -o jsonl >"$tmp/lb" 2>"$tmp/e" || { cat "$tmp/e" >&2; exit 1; }
      sed -n 's/.*"n_prompt": *\([0-9]*\), *"n_gen": *\([0-9]*\),.*"avg_ts": *\([0-9.e+]*\),.*/\1 \2 \3/p' "$tmp/lb" |
        while read -r np ng ts; do
          if [ "$ng" = 0 ]; then echo "$s $q pp llama $ts $np"; else echo "$s $q tg llama $ts $ng"; fi
        done >>"$log"
      # shellcheck disable=SC2086
      pin "$sf" run "$g" ${int8flag[$s.$q]} -t 0 -n 128 -i "$prompt" >/dev/null 2>"$tmp/e"
      echo "$s $q tg sf $(bench_rate "$tmp/e") $(sed -n 's/^[^:]*: \([0-9]*\) tokens in .*/\1/p' "$tmp/e") $(bench_weights "$tmp/e")" >>"$log"
      # shellcheck disable=SC2086
      pin "$sf" run "$g" ${int8flag[$s.$q]} -t 0 -n 64 -i "$p64" >/dev/null 2>"$tmp/e"
      echo "$s $q pp sf $(bench_prompt_rate "$tmp/e") $(bench_prompt_tokens "$tmp/e") $(bench_weights "$tmp/e")" >>"$log"
    done
  done
  bench_bandwidth "$cpu" "$bench" 1016 16700 59344 >>"$log"
done
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)" >>"$log"
[ -z "${KEEP_LOG:-}" ] || cp "$log" "$KEEP_LOG"

"$python" - "$log" "$rounds" "$root/tools" "${int8flag[s260k.q8_0]}" "${int8flag[s15m.q8_0]}" <<'PY'
import statistics, sys
log, rounds = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from bench_roofline import SHAPES, bandwidths, roofline, round_shares, share_summary, weight_bytes
int8flag = {"s260k": sys.argv[4], "s15m": sys.argv[5]}
v, extra, head = {}, {}, []
lines = open(log).read().splitlines()
for line in lines:
    w = line.split()
    if w[0] in ("machine", "llama.cpp", "load"):
        head.append(line)
    elif w[0] in SHAPES and len(w) >= 5 and w[4]:
        v.setdefault(tuple(w[:4]), []).append(float(w[4]))
        extra[tuple(w[:4])] = " ".join(w[5:])
med = {k: statistics.median(x) for k, x in v.items()}
rng = {k: (min(x), max(x)) for k, x in v.items()}
bwm = bandwidths(lines)
print("\n".join(head))
print(f"medians of {rounds} interleaved rounds, tokens/s (min-max); llama.cpp: llama-bench -t 1 pp64 / tg128; "
      "staticformer: run -t 0, prompt = BOS + 64 tokens, generation = achieved tok/s over -n 128")
print(f"{'shape':6} {'file':5} {'case':11} {'llama.cpp':>22} {'staticformer':>22} {'ratio':>7}  target")
target = {("s260k", "tg"): 2.0, ("s15m", "tg"): 1.0, ("s260k", "pp"): 1.0, ("s15m", "pp"): 1.0}
for s in SHAPES:
    for q in ("f32", "q8_0"):
        for case, name in (("tg", "generation"), ("pp", "prompt")):
            a, b = (s, q, case, "llama"), (s, q, case, "sf")
            if a not in med or b not in med:
                continue
            ratio = med[b] / med[a]
            t = target[(s, case)]
            fa = f"{med[a]:.0f} ({rng[a][0]:.0f}-{rng[a][1]:.0f})"
            fb = f"{med[b]:.0f} ({rng[b][0]:.0f}-{rng[b][1]:.0f})"
            verdict = "met" if ratio >= t else f"missed by {(1 - ratio / t) * 100:.0f}%"
            print(f"{s:6} {q:5} {name:11} {fa:>22} {fb:>22} {ratio:6.2f}x  >= {t:g}x: {verdict}")
        note = extra.get((s, q, "tg", "sf"), "").split()
        if note:
            print(f"{s:6} {q:5} staticformer: {note[0]} tokens generated, {note[-1]} weights"
                  + (f" ({int8flag[s]})" if q == "q8_0" and int8flag[s] else ""))
# roofline: llama.cpp's Q8_0 blocks are 34 bytes (float16 scale), staticformer's int8 36 (float32 scale)
for s, q, kib in (("s260k", "f32", 1016), ("s15m", "f32", 59344), ("s15m", "q8_0", 16700)):
    for who, name, bb in (("llama", "llama.cpp", 34), ("sf", "staticformer", 36)):
        k = (s, q, "tg", who)
        wb = weight_bytes(s, bb if q == "q8_0" else None)
        r = roofline(bwm, kib, wb)
        if not r or k not in med:
            continue
        small, huge, peak = r
        share = med[k] / peak * 100
        goal = "  (target >= 80%: " + ("met)" if share >= 80 else f"missed by {80 - share:.0f} points)") \
            if (s, q, who) == ("s15m", "f32", "sf") else ""
        print(f"roofline {s} {q} {name}: {wb / 1e6:.2f} MB of weights per token; read bandwidth at {kib} KiB "
              f"{small:.1f} GB/s (4 KiB pages), {huge:.1f} GB/s (huge pages) -> at most {peak:.0f} tok/s; "
              f"{name} {share:.0f}%{goal}")

        def parse(line, s=s, q=q, who=who):
            w = line.split()
            if len(w) >= 5 and tuple(w[:4]) == (s, q, "tg", who) and w[4]:
                return who, float(w[4])
        per = round_shares(lines, parse, kib, wb).get(who)
        if per:
            print(f"  share in each round (its tok/s / that round's best bandwidth) {s} {q} {name}: "
                  f"{share_summary(per)}")
PY
