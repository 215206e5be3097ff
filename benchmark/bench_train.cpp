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
// the peak FMA rate measured right after the timed loop (benchmark/peak.hpp) ×100; peak_GFLOPs;
// adamw: GB/s of its memory traffic (parameters, gradients and both moments read, three written).
// Thread CPU time; data in static storage.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "peak.hpp"
#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/reflect.hpp"
#include "staticformer/threads.hpp"

namespace {
constexpr sf::config nano_b32 = [] {
  sf::config c = sf::configs::nano;
  c.B = 32;
  return c;
}();


template <sf::config C>
struct state {
  sf::params<C> p, g;
  sf::activations<C> a;              // forward/, backward/: the whole batch's
  sf::batch_activations<C> ba;       // train_step: one chunk's (sf::forward_backward)
  sf::adamw<sf::params<C>> opt;
  sf::tokens_t<C> x;
  sf::targets_t<C> y;
};
template <sf::config C>
state<C>& setup() {
  static state<C> st;  // static storage, never the stack
  static bool ready = false;
  if (!ready) {
    ready = true;
    sf::init_params(st.p, 1);
    sf::splitmix64 r{3};
    for (std::size_t i = 0; i < st.x.size; ++i) {
      st.x[i] = static_cast<std::int32_t>(r.next() % C.V);
      st.y[i] = static_cast<std::int32_t>(r.next() % C.V);
    }
    sf::forward(st.p, st.a, st.x, st.y);  // (backward/<shape> runs on these activations)
  }
  return st;
}

// FLOPs of one training step: B·T·(6·N + 12·L·T·D)
template <sf::config C>
constexpr double step_flops() {
  constexpr double N = static_cast<double>(sf::parameter_count<sf::params<C>>);
  return static_cast<double>(C.B * C.T) * (6.0 * N + 12.0 * static_cast<double>(C.L * C.T * C.D));
}

enum class part { step, forward, backward, adamw };

template <sf::config C, part What>
void run(benchmark::State& bs) {
  auto& st = setup<C>();
  const double t0 = sf_bench::cpu_seconds();
  for (auto _ : bs) {
    if constexpr (What == part::step) {  // what sf::trainer::step does, the batch drawn
      sf::zero(st.g);
      const float loss = sf::forward_backward(st.p, st.g, st.ba, st.x, st.y);
      benchmark::DoNotOptimize(loss);
    }
    if constexpr (What == part::forward) {
      const float loss = sf::forward(st.p, st.a, st.x, st.y);
      benchmark::DoNotOptimize(loss);
    }
    if constexpr (What == part::backward) {
      sf::zero(st.g);
      sf::backward(st.p, st.g, st.a, st.x, st.y);
      benchmark::ClobberMemory();
    }
    if constexpr (What == part::step || What == part::adamw) {
      st.opt.step(st.p, st.g, 1e-4);
      benchmark::ClobberMemory();
    }
  }
  const double seconds = sf_bench::cpu_seconds() - t0;
  const double iters = static_cast<double>(bs.iterations());
  bs.counters["tokens/s"] = benchmark::Counter(static_cast<double>(C.B * C.T), benchmark::Counter::kIsIterationInvariantRate);
  if constexpr (What == part::adamw) {
    constexpr double bytes = 7.0 * 4.0 * static_cast<double>(sf::parameter_count<sf::params<C>>);
    bs.counters["GB/s"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  } else {
    const double flops = What == part::step ? step_flops<C>()
                         : What == part::forward ? step_flops<C>() / 3.0
                                                 : step_flops<C>() * 2.0 / 3.0;
    const double peak = sf_bench::peak_now(0.02);
    bs.counters["GFLOPs"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    bs.counters["pct_peak"] = seconds > 0 ? 100.0 * flops * iters / seconds * 1e-9 / peak : 0.0;
    bs.counters["peak_GFLOPs"] = peak;
    if constexpr (C.precision == sf::precision_kind::bf16) {
      const double peak16 = sf_bench::bf16_peak_now(0.02);
      if (peak16 > 0) {
        bs.counters["pct_bf16_peak"] = seconds > 0 ? 100.0 * flops * iters / seconds * 1e-9 / peak16 : 0.0;
        bs.counters["bf16_peak_GFLOPs"] = peak16;
      }
    }
  }
}

// The whole step on a thread pool of state.range(0) threads (wall-clock time: UseRealTime).
template <sf::config C>
void threaded(benchmark::State& bs) {
  auto& st = setup<C>();
  sf::thread_pool pool(static_cast<std::size_t>(bs.range(0)));
  sf::use_threads use(pool);
  for (auto _ : bs) {
    sf::zero(st.g);
    const float loss = sf::forward_backward(st.p, st.g, st.ba, st.x, st.y);
    benchmark::DoNotOptimize(loss);
    st.opt.step(st.p, st.g, 1e-4);
    benchmark::ClobberMemory();
  }
  bs.counters["tokens/s"] = benchmark::Counter(static_cast<double>(C.B * C.T), benchmark::Counter::kIsIterationInvariantRate);
  bs.counters["GFLOPs"] = benchmark::Counter(step_flops<C>() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

#define SF_BENCH_SHAPE(C, name)                                                                           \
  BENCHMARK(run<C, part::step>)->Name("train_step/" name)->Unit(benchmark::kMillisecond);                 \
  BENCHMARK(run<C, part::forward>)->Name("forward/" name)->Unit(benchmark::kMillisecond);                 \
  BENCHMARK(run<C, part::backward>)->Name("backward/" name)->Unit(benchmark::kMillisecond);               \
  BENCHMARK(run<C, part::adamw>)->Name("adamw/" name)->Unit(benchmark::kMillisecond);                     \
  BENCHMARK(threaded<C>)->Name("train_step_threads/" name)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
SF_BENCH_SHAPE(sf::configs::nano, "nano")
SF_BENCH_SHAPE(sf::configs::micro, "micro")
SF_BENCH_SHAPE(sf::configs::small, "small")
SF_BENCH_SHAPE(nano_b32, "nano_b32")
// The bf16 precision policy (config.precision = bf16, kernels/gemm_bf16.hpp): same rows, same FLOP
// count; pct_bf16_peak is against the vdpbf16ps peak measured in the same run (where the CPU has it).
#define SF_BENCH_SHAPE_BF16(C, name)                                                                      \
  BENCHMARK(run<C.with(sf::precision_kind::bf16), part::step>)->Name("train_step_bf16/" name)->Unit(benchmark::kMillisecond);      \
  BENCHMARK(run<C.with(sf::precision_kind::bf16), part::forward>)->Name("forward_bf16/" name)->Unit(benchmark::kMillisecond);      \
  BENCHMARK(run<C.with(sf::precision_kind::bf16), part::backward>)->Name("backward_bf16/" name)->Unit(benchmark::kMillisecond);    \
  BENCHMARK(threaded<C.with(sf::precision_kind::bf16)>)->Name("train_step_threads_bf16/" name)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
SF_BENCH_SHAPE_BF16(sf::configs::nano, "nano")
SF_BENCH_SHAPE_BF16(sf::configs::micro, "micro")
SF_BENCH_SHAPE_BF16(sf::configs::small, "small")
}  // namespace

BENCHMARK_MAIN();
