#!/usr/bin/env bash
# Installs what is missing (Debian 12), builds the main demo and runs it: examples/train
# trains the `nano` model on tiny-shakespeare (about 60 s of one core), writes
# out/train/{model.safetensors, loss.csv, loss.png, sample.txt} and prints a sample.
# Arguments are passed to train (e.g. tools/demo.sh --seconds 20 --seed 2).
# Environment: SF_BUILD_DIR (default build), JOBS (default nproc).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash tools/install-deps.sh
dir="${SF_BUILD_DIR:-build}"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release
cmake --build "$dir" -j"${JOBS:-$(nproc)}" --target train
"$dir/examples/train" "$@"
