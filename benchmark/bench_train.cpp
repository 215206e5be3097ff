// sf_bench_train — one full training step (forward, zero-grad, backward, AdamW) at the benchmark
// shapes, single-threaded, with its FLOP rate as a percentage of the core's peak measured in the
// same run; and the step's parts, so that a regression can be located.
//
//   build/benchmark/sf_bench_train --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//   python3 benchmark/compare_pytorch.py --build build      # beside PyTorch and llm.c (docs/benchmarks.md, "Training speed")
//
// Shapes (GPT-2 style: LayerNorm, learned positions, GELU-tanh, tied head, biases):
//   nano      V65  T64  D64  H4 L2 F256 B4        micro  V256 T128 D128 H4 L4 F512 B4
//   small     V512 T256 D192 H6 L6 F768 B2        nano_b32  nano with B32
// Rows, each per shape:
//   train_step/<shape>   zero-grad + forward + backward + AdamW: one optimizer step, as sf::trainer
//                        runs it (sf::forward_backward: nano_b32 in 4 chunks of 8 sequences)
//   forward/<shape>      the loss's forward pass over the whole batch (what backward needs is kept)
//   backward/<shape>     zero-grad + backward over the whole batch (the activations of one forward)
//   adamw/<shape>        the optimizer step alone
//   train_step_threads/<shape>/<n>   the step on an sf::thread_pool of n threads (1, 2), wall-clock time
//   train_step_bf16/, forward_bf16/, backward_bf16/, train_step_threads_bf16/<shape>   the same in the bf16 precision policy
//                        (nano, micro, small), with pct_bf16_peak and bf16_peak_GFLOPs too
// Counters: tokens/s (B·T per iteration); GFLOPs, counting a step as B·T·(6·N + 12·L·T·D) FLOPs
// (N parameters; forward one third of it, zero-grad + backward two thirds); pct_peak = GFLOPs over
// the peak FMA rate measured right after the timed loop (tools/generate/peak.hpp) ×100; peak_GFLOPs;
// adamw: GB/s of its memory traffic (parameters, gradients and both moments read, three written).
// Thread CPU time; data in static storage. The rows are registered by shape in this file (nano),
// bench_train_nano_b32.cpp, bench_train_micro.cpp and bench_train_small.cpp; the code is bench_train.hpp.
#include "bench_train.hpp"

SF_BENCH_SHAPE(sf::configs::nano, "nano")
SF_BENCH_SHAPE_BF16(sf::configs::nano, "nano")

static const bool cpu_context = (sf_bench::add_cpu_context(/*bf16_rows=*/true), true);  // (cpu_context.hpp)

BENCHMARK_MAIN();
