// bench_decode.hpp — sf_bench_decode's benchmarks (see bench_decode.cpp), shared by its translation
// units: bench_decode.cpp (float weights), bench_decode_int8.cpp and bench_decode_int8_nano.cpp
// (int8), so that none takes long to compile.
#pragma once
#include <benchmark/benchmark.h>

#include <cstdint>
#include <type_traits>

#include "cpu_context.hpp"
#include "staticformer/decode.hpp"
#include "staticformer/init.hpp"
#include "staticformer/quantize.hpp"
#include "staticformer/sampling.hpp"

namespace sf_bench_decode {

constexpr sf::arch gpt2_style(sf::arch c) {
  c.norm = sf::norm_kind::layernorm, c.position = sf::position_kind::learned;
  c.activation = sf::activation_kind::gelu_tanh, c.tied = true, c.bias = true;
  return c;
}
constexpr sf::arch llama_style(sf::arch c) {
  c.norm = sf::norm_kind::rmsnorm, c.position = sf::position_kind::rope;
  c.activation = sf::activation_kind::relu, c.tied = false, c.bias = false;
  return c;
}
inline constexpr sf::arch nano_shape{.V = 65, .T = 64, .D = 64, .H = 4, .L = 2, .F = 256};
inline constexpr sf::arch dim128_shape{.V = 256, .T = 128, .D = 128, .H = 4, .L = 4, .F = 512};

// FLOPs of generating T positions.
constexpr double flops_per_context(const sf::config& c) {
  const double per_token = 2.0 * (c.L * (4.0 * c.D * c.D + 2.0 * c.D * c.F) + c.D * c.V);
  const double attention = 2.0 * 2.0 * c.D * c.L * (c.T * (c.T + 1) / 2.0);  // q·k and p·v, positions 1..T
  return per_token * c.T + attention;
}

// A decoder with weights W (float, or int8 quantized from the same float weights) bound.
template <sf::config C, class W>
sf::decoder<C, W>& bound_decoder() {
  static sf::params<C> p;  // static storage, never the stack
  static sf::params<C, sf::int8> q;
  static sf::decoder<C, W> dec;
  sf::init_params(p, 1, 0.1);
  if constexpr (std::is_same_v<W, sf::int8>) {
    sf::quantize(q, p);
    dec.use(q);
  } else {
    dec.use(p);
  }
  return dec;
}

template <sf::config C, class W>
void decode(benchmark::State& bs) {
  auto& dec = bound_decoder<C, W>();
  std::int64_t sink = 0;
  for (auto _ : bs) {
    dec.reset(0);
    std::int32_t token = 1;
    (void)dec.prefill(0, &token, 1);
    for (std::size_t t = 1; t < C.T; ++t) {
      token = sf::sampler<C.V>::argmax(dec.logits(0));
      (void)dec.step(0, token);
    }
    sink += sf::sampler<C.V>::argmax(dec.logits(0));
  }
  benchmark::DoNotOptimize(sink);
  const double iters = static_cast<double>(bs.iterations());
  bs.counters["tokens/s"] = benchmark::Counter(iters * C.T, benchmark::Counter::kIsRate);
  bs.counters["GFLOP/s"] = benchmark::Counter(iters * flops_per_context(C) * 1e-9, benchmark::Counter::kIsRate);
}

// Prefill of a whole context (T tokens of a prompt in one call, B = 1): the matrix–matrix path.
// Counters: tokens/s and GFLOP/s as above (the same FLOPs as generating the context).
template <sf::config C, class W>
void prefill(benchmark::State& bs) {
  auto& dec = bound_decoder<C, W>();
  static std::int32_t prompt[C.T];
  for (std::size_t t = 0; t < C.T; ++t) prompt[t] = static_cast<std::int32_t>((t * 7 + 3) % C.V);
  std::int64_t sink = 0;
  for (auto _ : bs) {
    dec.reset(0);
    (void)dec.prefill(0, prompt, C.T);
    sink += sf::sampler<C.V>::argmax(dec.logits(0));
  }
  benchmark::DoNotOptimize(sink);
  const double iters = static_cast<double>(bs.iterations());
  bs.counters["tokens/s"] = benchmark::Counter(iters * C.T, benchmark::Counter::kIsRate);
  bs.counters["GFLOP/s"] = benchmark::Counter(iters * flops_per_context(C) * 1e-9, benchmark::Counter::kIsRate);
}

}  // namespace sf_bench_decode
