#!/usr/bin/env bash
# Plots the loss curves of two training runs of examples/train — float32 and --precision bf16 —
# in one figure (docs/training.md, "bf16"): the training loss (mean of 100 steps) and the
# validation points of each, against the step.
#
#   build/examples/train --out out/f32
#   build/examples/train --precision bf16 --out out/bf16
#   tools/plot_precision.sh out/f32/loss.csv out/bf16/loss.csv docs/loss-precision.png
set -euo pipefail
if [[ $# -ne 3 ]]; then
  echo "usage: $0 F32_LOSS_CSV BF16_LOSS_CSV OUT_PNG" >&2
  exit 2
fi
f32=$1 bf16=$2 png=$3
for f in "$f32" "$bf16"; do
  [[ -r $f ]] || { echo "$0: cannot read $f" >&2; exit 1; }
done
command -v gnuplot >/dev/null || { echo "$0: gnuplot is missing (apt-get install gnuplot-nox)" >&2; exit 1; }
last_val() { awk -F, 'NR > 1 && $6 != "" { v = $6 } END { printf "%.4f", v }' "$1"; }
gnuplot <<GP
set terminal pngcairo size 900,520 font ",11"
set output '$png'
set datafile separator ','
set key top right
set grid
set xlabel 'step'
set ylabel 'loss (nats per character)'
set yrange [1.3:3.0]
set title 'nano on tiny-shakespeare: float32 and bf16 products, the same steps and seed'
plot '$f32' every ::1 using 1:7 with lines lw 2 lc rgb '#1f77b4' title 'float32 train (mean of 100 steps)', \
     '' using 1:(strlen(strcol(6)) > 0 ? \$6 : 1/0) with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'float32 validation, final $(last_val "$f32")', \
     '$bf16' every ::1 using 1:7 with lines lw 2 dt 2 lc rgb '#d62728' title 'bf16 train', \
     '' using 1:(strlen(strcol(6)) > 0 ? \$6 : 1/0) with linespoints lw 2 dt 2 pt 5 lc rgb '#d62728' title 'bf16 validation, final $(last_val "$bf16")'
GP
echo "wrote $png"
