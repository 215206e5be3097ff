// peak.hpp — the core's peak FMA throughput, measured, for the "% of peak" figures of the benchmarks
// (sf_bench_kernels, sf_bench_train) and `staticformer bench --decode`, and print_cpu, the first lines
// of their output (the products' instruction sets, this CPU's, the peak): 24 independent FMA chains on registers (2 FMA units ×
// 4-cycle latency × 3), nothing from memory, with the native SIMD backend. Thread CPU time.
#pragma once
#include <time.h>

#include <cstddef>
#include <cstdio>
#include <utility>

#include "staticformer/cpu_report.hpp"
#include "staticformer/simd.hpp"
#if defined(__AVX512BF16__) && defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace sf_bench {
using V = sf::simd::native<float>;

// Thread CPU time, the clock Google Benchmark's rate counters use too, so GFLOPs and pct_peak agree
// and other processes sharing the core do not count against the code measured.
inline double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// An empty asm that "modifies" a register value: the compiler can neither hoist nor fold across
// it. (benchmark::DoNotOptimize has a memory clobber, which would push every chain to memory.)
template <class R>
inline void opaque(R& r) {
#if defined(__x86_64__)
  asm volatile("" : "+v"(r));
#elif defined(__aarch64__)
  asm volatile("" : "+w"(r));
#else
  asm volatile("" : : "r"(&r) : "memory");
#endif
}
template <std::size_t... I>
__attribute__((noinline)) void fma_chains(typename V::reg* state, long n, std::index_sequence<I...>) {
  typename V::reg a[sizeof...(I)] = {state[I]...};
  typename V::reg x = V::set1(0.999f), y = V::set1(1e-4f);  // a ← a·x + y: converges to 0.1, no denormals
  for (long r = 0; r < n; ++r) {
    ((a[I] = V::fmadd(a[I], x, y)), ...);
    opaque(x);
  }
  ((state[I] = a[I]), ...);
}
inline constexpr std::size_t chains = 24;  // 2 × 12
inline constexpr long chain_steps = 4096;

// GFLOP/s of run_chains(steps) (chain_steps at a time, flops_per_step FLOPs per step) over about
// `seconds` of CPU time.
template <class Run>
double chains_rate(Run run_chains, double flops_per_step, double seconds) {
  const double t0 = cpu_seconds();
  long steps = 0;
  do {
    run_chains(chain_steps);
    steps += chain_steps;
  } while (cpu_seconds() - t0 < seconds);
  return flops_per_step * static_cast<double>(steps) / (cpu_seconds() - t0) * 1e-9;
}

// The peak FMA rate right now, in GFLOP/s: the chains for about `seconds` of CPU time.
inline double peak_now(double seconds = 0.01) {
  alignas(64) static typename V::reg st[chains];
  for (auto& r : st) r = V::set1(0.5f);
  return chains_rate([](long n) { fma_chains(st, n, std::make_index_sequence<chains>{}); },
                     2.0 * chains * V::width, seconds);
}

// The peak bf16 dot-product rate right now, in GFLOP/s, where this build has AVX512-BF16 (else
// 0): 24 independent vdpbf16ps chains (each instruction: 16 lanes × 2 products and 2 sums = 64
// FLOPs), nothing from memory.
#if defined(__AVX512BF16__) && defined(__AVX512F__)
template <std::size_t... I>
__attribute__((noinline)) void bf16_chains(__m512* state, long n, std::index_sequence<I...>) {
  __m512 a[sizeof...(I)] = {state[I]...};
  __m512i x = _mm512_set1_epi32(0x3c003c00), y = _mm512_set1_epi32(0x38003800);  // pairs (2^-7, 2^-7), (2^-15, 2^-15)
  for (long r = 0; r < n; ++r) {
    ((a[I] = _mm512_dpbf16_ps(a[I], (__m512bh)x, (__m512bh)y)), ...);
    opaque(x);
  }
  ((state[I] = a[I]), ...);
}
inline double bf16_peak_now(double seconds = 0.01) {
  alignas(64) static __m512 st[chains];
  for (auto& r : st) r = _mm512_set1_ps(0.5f);
  return chains_rate([](long n) { bf16_chains(st, n, std::make_index_sequence<chains>{}); }, 64.0 * chains, seconds);
}
#else
inline double bf16_peak_now(double = 0.01) { return 0; }
#endif

// The peaks measured now, over about `seconds` of CPU time each, as the lines `key: value` that
// print_cpu and the benchmarks' context block (benchmark/cpu_context.hpp) show:
//   FMA peak: 160.3 GFLOP/s (AVX-512F FMA (zmm, 16 floats))
//   bf16 peak: 512.0 GFLOP/s (vdpbf16ps)           (where this build has AVX512-BF16)
// line(key, value) for each. Returns the FMA peak.
template <class Line>
double peak_lines(double seconds, Line line) {
  char text[128];
  const double peak = peak_now(seconds);
  std::snprintf(text, sizeof text, "%.1f GFLOP/s (%s)", peak, V::instructions);
  line("FMA peak", text);
  if (const double p16 = bf16_peak_now(seconds); p16 > 0) {
    std::snprintf(text, sizeof text, "%.1f GFLOP/s (vdpbf16ps)", p16);
    line("bf16 peak", text);
  }
  return peak;
}

// The first lines of a benchmark's output: what the float, bf16 and int8 products of this build run
// on and what this CPU has (staticformer/cpu_report.hpp), then the FMA peak measured now (and the
// vdpbf16ps peak where the build has it: peak_lines), each line after `indent`. Returns the FMA peak.
inline double print_cpu(std::FILE* out, const char* indent, double seconds = 0.02) {
  char text[4096];
  sf::cpu::report(text, sizeof text, indent);
  std::fputs(text, out);
  return peak_lines(seconds,
                    [&](const char* key, const char* value) { std::fprintf(out, "%s%s: %s\n", indent, key, value); });
}
}  // namespace sf_bench
