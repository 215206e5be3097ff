// bench_train.hpp — sf_bench_train's benchmarks (see bench_train.cpp), shared by its translation
// units: bench_train.cpp (nano), bench_train_nano_b32.cpp, bench_train_micro.cpp and
// bench_train_small.cpp, one shape each so that none takes long to compile. SF_BENCH_SHAPE(C, name) and
// SF_BENCH_SHAPE_BF16(C, name) register a shape's rows.
#pragma once
#include <benchmark/benchmark.h>

#include <cstdint>

#include "../tools/generate/peak.hpp"
#include "cpu_context.hpp"
#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/reflect.hpp"
#include "staticformer/threads.hpp"

namespace sf_bench_train {
inline constexpr sf::config nano_b32 = [] {
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

}  // namespace sf_bench_train

#define SF_BENCH_SHAPE(C, name)                                                                           \
  BENCHMARK(sf_bench_train::run<C, sf_bench_train::part::step>)->Name("train_step/" name)->Unit(benchmark::kMillisecond);                 \
  BENCHMARK(sf_bench_train::run<C, sf_bench_train::part::forward>)->Name("forward/" name)->Unit(benchmark::kMillisecond);                 \
  BENCHMARK(sf_bench_train::run<C, sf_bench_train::part::backward>)->Name("backward/" name)->Unit(benchmark::kMillisecond);               \
  BENCHMARK(sf_bench_train::run<C, sf_bench_train::part::adamw>)->Name("adamw/" name)->Unit(benchmark::kMillisecond);                     \
  BENCHMARK(sf_bench_train::threaded<C>)->Name("train_step_threads/" name)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// The bf16 precision policy (config.precision = bf16, kernels/gemm_bf16.hpp): same rows, same FLOP
// count; pct_bf16_peak is against the vdpbf16ps peak measured in the same run (where the CPU has it).
#define SF_BENCH_SHAPE_BF16(C, name)                                                                      \
  BENCHMARK(sf_bench_train::run<C.with(sf::precision_kind::bf16), sf_bench_train::part::step>)->Name("train_step_bf16/" name)->Unit(benchmark::kMillisecond);      \
  BENCHMARK(sf_bench_train::run<C.with(sf::precision_kind::bf16), sf_bench_train::part::forward>)->Name("forward_bf16/" name)->Unit(benchmark::kMillisecond);      \
  BENCHMARK(sf_bench_train::run<C.with(sf::precision_kind::bf16), sf_bench_train::part::backward>)->Name("backward_bf16/" name)->Unit(benchmark::kMillisecond);    \
  BENCHMARK(sf_bench_train::threaded<C.with(sf::precision_kind::bf16)>)->Name("train_step_threads_bf16/" name)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
