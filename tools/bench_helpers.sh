# Shell helpers of the side-by-side speed scripts (tools/llama2c_files_vs_runc.sh,
# benchmark/llamacpp.sh); source it. The figures they read are the programs' own lines on stderr.

# The "achieved tok/s: X" figure (run.c's, runq.c's, and `staticformer run`'s copy of it) in FILE.
bench_rate() { sed -n 's/^achieved tok\/s: \([0-9.]*\).*/\1/p' "$1"; }

# `staticformer run`'s prompt rate in FILE: the tokens of "prompt N tokens in X s" over X.
bench_prompt_rate() {
  sed -n 's/.*(prompt \([0-9]*\) tokens in \([0-9.e+-]*\) s;.*/\1 \2/p' "$1" | awk '{ printf "%.1f\n", $1 / $2 }'
}

# The N of "prompt N tokens" in FILE (the prefilled tokens, BOS included).
bench_prompt_tokens() { sed -n 's/.*(prompt \([0-9]*\) tokens.*/\1/p' "$1"; }

# `staticformer run`'s statistics line: "float" or "int8", the weights it ran on.
bench_weights() { sed -n 's/.*; \(float\|int8\) weights, .*/\1/p' "$1"; }

# bench_bandwidth CPU SF_BENCH_KERNELS KIB...: one run of sf_bench_kernels' read_bandwidth kernels
# (read_bandwidth, read_bandwidth_thp — huge pages —, their _2chains, _pf — prefetching — and _4streams forms) at each size in KiB
# (sizes it registers: 32 400 1016 3100 8192 16700 59344), pinned to core CPU; prints
# "bw KIB NAME GB/S" lines, the log format that tools/bench_roofline.py reads.
bench_bandwidth() {
  local cpu=$1 bench=$2
  shift 2
  local sizes
  sizes=$(IFS='|'; echo "$*")
  taskset -c "$cpu" "$bench" --benchmark_filter="^read_bandwidth[a-z0-9_]*/($sizes)/" 2>/dev/null |
    sed -n 's/^\(read_bandwidth[a-z0-9_]*\)\/\([0-9]*\)\/.*GB\/s=\([0-9.]*\).*/bw \2 \1 \3/p'
}
