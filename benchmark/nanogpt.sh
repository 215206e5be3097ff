#!/usr/bin/env bash
# benchmark/nanogpt.sh — issue #23: nanoGPT's CPU recipe for shakespeare_char (its README: block 64,
# batch 12, 4 layers, 4 heads, width 128, 2000 iterations, lr 1e-3 warmed up over 100 iterations
# then cosine down to 1e-4, beta2 0.99, dropout 0, no biases, 20 evaluation batches every 250
# iterations) run by nanoGPT itself and by `staticformer train` with the same recipe, interleaved
# (nanoGPT, staticformer, nanoGPT, staticformer, ...), each run a process pinned to one core with
# one thread. Prints the validation losses at every evaluation, the wall and CPU (user + system)
# times and their ratios (benchmark/nanogpt_report.py), and draws both loss curves (--plot).
#
#   benchmark/nanogpt.sh [--build DIR] [--rounds N] [--iters N] [--cpu C] [--work DIR]
#                        [--python PY]... [--plot FILE.svg] [--precision f32|bf16]
#
#   --build   the build tree holding tools/staticformer (default: build)
#   --rounds  nanoGPT/staticformer pairs (default 2)
#   --iters   iterations (default 2000, the recipe's; fewer for a quick try: the schedule follows)
#   --cpu     the core every run is pinned to (taskset; default 1)
#   --work    scratch directory (default /tmp/sf-nanogpt): nanoGPT is copied there, the data
#             prepared there, the logs written there; the nanoGPT directory is left unchanged
#   --python  a python3 with torch and numpy for nanoGPT (default /usr/bin/python3: Debian's
#             python3-torch); repeat it to time several (e.g. a venv with PyPI's torch) in each round
#   --plot    an SVG of the loss curves of the first round (gnuplot; else drawn by hand)
#   --precision  staticformer's matrix products (`train --precision`; default f32, nanoGPT's CPU
#             arithmetic; bf16: bf16 operands, float32 sums and weights — nanoGPT's train.py runs
#             float32 on a CPU whatever its --dtype)
#
# nanoGPT is not part of this project and is not copied into it (only into --work, to run it): the
# script runs it where it is found, $NANOGPT_DIR, else ../shared/peers/nanogpt beside the
# repository. Without it the script says how to get it and exits (status 0). The data is
# data/tinyshakespeare.txt, nanoGPT's input.txt for shakespeare_char (prepare.py reads it instead
# of downloading).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
build=$repo/build rounds=2 iters=2000 cpu=1 work=/tmp/sf-nanogpt plot="" pythons=() precision=f32
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --cpu) cpu=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --python) pythons+=("$2"); shift 2 ;;
    --plot) plot=$2; shift 2 ;;
    --precision) precision=$2; shift 2 ;;
    -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "nanogpt.sh: unknown argument '$1' (--help lists them)" >&2; exit 2 ;;
  esac
done
[ ${#pythons[@]} -gt 0 ] || pythons=(/usr/bin/python3)

# ---- nanoGPT, where it is found
nanogpt="" candidates=("$repo/../shared/peers/nanogpt" "$repo/../../shared/peers/nanogpt")
[ -z "${NANOGPT_DIR:-}" ] || candidates=("$NANOGPT_DIR")  # when given, only there
for d in "${candidates[@]}"; do
  if [ -n "$d" ] && [ -f "$d/train.py" ] && [ -f "$d/model.py" ] && [ -f "$d/config/train_shakespeare_char.py" ] &&
     [ -f "$d/data/shakespeare_char/prepare.py" ]; then
    nanogpt=$(cd "$d" && pwd)
    break
  fi
done
if [ -z "$nanogpt" ]; then
  cat <<'EOF'
nanogpt.sh: nanoGPT not found (looked in $NANOGPT_DIR if set, else in ../shared/peers/nanogpt beside the repository).
Get it and say where it is:
  git clone https://github.com/karpathy/nanoGPT /tmp/nanoGPT
  NANOGPT_DIR=/tmp/nanoGPT benchmark/nanogpt.sh
It runs with a python3 that has torch and numpy (Debian: apt-get install python3-torch python3-numpy
python3-requests; or a venv: python3 -m venv /tmp/venv-torch && /tmp/venv-torch/bin/pip install torch numpy,
then --python /tmp/venv-torch/bin/python).
EOF
  exit 0
fi
for py in "${pythons[@]}"; do
  if ! "$py" -c 'import torch, numpy' 2>/dev/null; then
    echo "nanogpt.sh: $py cannot import torch and numpy (Debian: apt-get install python3-torch python3-numpy)"
    exit 0
  fi
done
staticformer=$build/tools/staticformer
[ -x "$staticformer" ] || { echo "nanogpt.sh: no $staticformer (cmake --build $build --target staticformer_cli)" >&2; exit 1; }
command -v taskset >/dev/null || { echo "nanogpt.sh: taskset (util-linux) is needed" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "nanogpt.sh: /usr/bin/time (Debian: apt-get install time) is needed" >&2; exit 1; }

# ---- the data, prepared by nanoGPT's own prepare.py in a copy of nanoGPT
rm -rf "$work"
mkdir -p "$work/logs"
cp -r "$nanogpt" "$work/nanogpt"
cp "$repo/data/tinyshakespeare.txt" "$work/nanogpt/data/shakespeare_char/input.txt"
(cd "$work/nanogpt/data/shakespeare_char" && "${pythons[0]}" prepare.py > "$work/logs/prepare.log")

# The recipe, both ways. nanoGPT: its README's CPU command line; one thread (OMP_NUM_THREADS, and
# torch.set_num_threads before train.py runs). staticformer: the same shape (GELU with erf, tied
# head, no biases in the linear layers; its LayerNorm has a bias, nanoGPT's none) and schedule
# (warm-up 5% of 2000 = 100 steps, cosine down to 0.1 lr), AdamW beta2 0.99, clipping at 1, weight
# decay 0.1 on the matrices, 20 validation batches every 250 steps.
eval_every=$(( iters >= 8 ? iters / 8 : 1 ))
nanogpt_args=(config/train_shakespeare_char.py --device=cpu --compile=False --eval_iters=20 --log_interval=1
              --block_size=64 --batch_size=12 --n_layer=4 --n_head=4 --n_embd=128 --max_iters=$iters
              --lr_decay_iters=$iters --dropout=0.0 --eval_interval=$eval_every)
warmup_iters=$(( iters * 5 / 100 ))
[ "$iters" = 2000 ] || nanogpt_args+=(--warmup_iters=$warmup_iters)
cat > "$work/shape.json" <<'EOF'
{"vocab": 65, "context": 64, "d_model": 128, "n_heads": 4, "n_layers": 4, "d_ff": 512, "norm": "layernorm",
 "position": "learned", "activation": "gelu", "tied": true, "bias": false, "norm_eps": 1e-5}
EOF
sf_args=(train --config "$work/shape.json" --batch 12 --data "$repo/data/tinyshakespeare.txt" --steps "$iters"
         --lr 1e-3 --min-lr-ratio 0.1 --warmup 0.05 --beta2 0.99 --clip 1 --eval-every "$eval_every"
         --eval-batches 20 --precision "$precision")

# The executable for this shape, compiled (on first use) before anything is timed; its step time.
taskset -c "$cpu" "$staticformer" bench --config "$work/shape.json" --batch 12 --steps 50 --precision "$precision" |
  tee "$work/logs/bench.log"

now() { date +%s.%N; }
cpu_of() { awk '{ printf "%.2f", $1 + $2 }' "$1"; }  # user + system seconds, from /usr/bin/time
{
  echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores; pinned to core $cpu"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "nanogpt: $nanogpt"
  echo "staticformer: $staticformer, --precision $precision"
  for py in "${pythons[@]}"; do echo "python: $py torch $("$py" -c 'import torch; print(torch.__version__)')"; done
} | tee "$work/logs/setup.log"
for ((r = 1; r <= rounds; ++r)); do
  k=0
  for py in "${pythons[@]}"; do
    k=$((k + 1))
    log=$work/logs/nanogpt$k-r$r.log
    echo "round $r: nanoGPT ($py) ..."
    t0=$(now)
    (cd "$work/nanogpt" && OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 /usr/bin/time -f "%U %S" -o "$log.cpu" taskset -c "$cpu" "$py" -c \
      'import runpy, sys, torch; torch.set_num_threads(1); sys.argv = sys.argv[1:]; runpy.run_path("train.py", run_name="__main__")' \
      train.py "${nanogpt_args[@]}" --out_dir="$work/out-nanogpt$k-r$r") > "$log" 2>&1
    t1=$(now)
    echo "wall $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") cpu $(cpu_of "$log.cpu") load $(cut -d' ' -f1 /proc/loadavg) python $py torch $("$py" -c 'import torch; print(torch.__version__)')" >> "$log"
  done
  log=$work/logs/staticformer-r$r.log
  echo "round $r: staticformer ..."
  t0=$(now)
  /usr/bin/time -f "%U %S" -o "$log.cpu" taskset -c "$cpu" "$staticformer" "${sf_args[@]}" --seed "$r" \
    --out "$work/staticformer-r$r.safetensors" > "$log" 2>&1
  t1=$(now)
  echo "wall $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") cpu $(cpu_of "$log.cpu") load $(cut -d' ' -f1 /proc/loadavg)" >> "$log"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$work/logs/setup.log"

"${pythons[0]}" "$here/nanogpt_report.py" "$work/logs" ${plot:+--plot "$plot"}
