// bench_step — one training step (forward, zero, backward, AdamW step) and one inference pass
// of the nano and micro configurations, single-threaded.
//
//   build/benchmark/sf_bench_step --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Counters: tokens/s (B·T tokens per step) and items_per_second (steps/s).
#include <benchmark/benchmark.h>

#include <cstdint>

#include "cpu_context.hpp"
#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"

namespace {
template <sf::config C>
struct state {
  sf::params<C> p, g;
  sf::activations<C> a;
  sf::inference_state<C> s;
  sf::adamw<sf::params<C>> opt;
  sf::tokens_t<C> x;
  sf::targets_t<C> y;
};
template <sf::config C>
state<C>& setup() {
  static state<C> st;  // static storage, never the stack
  sf::init_params(st.p, 1);
  sf::splitmix64 r{3};
  for (std::size_t i = 0; i < st.x.size; ++i) {
    st.x[i] = static_cast<std::int32_t>(r.next() % C.V);
    st.y[i] = static_cast<std::int32_t>(r.next() % C.V);
  }
  return st;
}

template <sf::config C>
void train_step(benchmark::State& bs) {
  auto& st = setup<C>();
  for (auto _ : bs) {
    const float loss = sf::forward(st.p, st.a, st.x, st.y);
    benchmark::DoNotOptimize(loss);
    sf::zero(st.g);
    sf::backward(st.p, st.g, st.a, st.x, st.y);
    st.opt.step(st.p, st.g, 1e-4);
  }
  bs.SetItemsProcessed(bs.iterations());
  bs.counters["tokens/s"] = benchmark::Counter(static_cast<double>(bs.iterations() * C.B * C.T),
                                               benchmark::Counter::kIsRate);
}
template <sf::config C>
void infer(benchmark::State& bs) {
  auto& st = setup<C>();
  for (auto _ : bs) {
    sf::infer(st.p, st.s, st.x);
    benchmark::DoNotOptimize(st.s.logits.data());
  }
  bs.counters["tokens/s"] = benchmark::Counter(static_cast<double>(bs.iterations() * C.B * C.T),
                                               benchmark::Counter::kIsRate);
}
}  // namespace

BENCHMARK(train_step<sf::configs::nano>)->Name("train_step/nano")->Unit(benchmark::kMillisecond);
BENCHMARK(train_step<sf::configs::micro>)->Name("train_step/micro")->Unit(benchmark::kMillisecond);
BENCHMARK(infer<sf::configs::nano>)->Name("infer/nano")->Unit(benchmark::kMillisecond);
static const bool cpu_context = (sf_bench::add_cpu_context(/*bf16_rows=*/false), true);  // (cpu_context.hpp)

BENCHMARK_MAIN();
