// kernels_selftest.cpp — the kernel tests without GoogleTest, for cross targets.
//
// Built by cmake/StaticformerCrossAarch64.cmake with aarch64-linux-gnu-g++ -O2 -static
// and run under qemu-aarch64 (CTest: cross_aarch64_kernels). Same shapes, tolerances and
// guards as test_gemm.cpp (gemm_check.hpp) and test_vmath.cpp (vmath_check.hpp), for the
// NEON backend and the scalar one; and the Q8_0 checks of test_q8.cpp (q8_check.hpp): the
// scalar q8 reference against its formulas, and both NEON q8 backends (plain and dot product)
// bit for bit against it. Prints one line per check; exit status 0 iff all pass.
//
// SF_Q8_ENABLE_DOTPROD compiles the q8 dot-product kernels for armv8.2-a+dotprod although this
// program is built for plain armv8-a: qemu-aarch64's default CPU has the instructions.
#define SF_Q8_ENABLE_DOTPROD 1

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

#include "../gemm_check.hpp"
#include "../q8_check.hpp"
#include "../vmath_check.hpp"
#include "staticformer/kernels/q8.hpp"
#include "staticformer/simd.hpp"

namespace {
int failures = 0;

template <class V, sf_test::op O, std::size_t Stride, std::size_t... I>
void gemm_shapes(std::index_sequence<I...>) {
  using T = typename V::value_type;
  static constexpr sf_test::kernel_fn<T> kernels[] = {&sf_test::call_kernel<V, O, I * Stride>...};
  double worst = 0;
  int bad = 0;
  for (std::size_t i = 0; i < sizeof...(I); ++i) {
    const std::size_t index = i * Stride;
    const sf_test::shape S = sf_test::any_shape(index);
    const sf_test::result r = sf_test::check<T>(S, O, kernels[i], static_cast<std::uint32_t>(7919 * index + static_cast<int>(O)));
    if (r.worst_rel > worst) worst = r.worst_rel;
    if (!r.ok()) {
      ++bad;
      std::printf("FAIL %s gemm_%s shape #%zu M=%zu N=%zu K=%zu: %zu over the bound (first (%zu,%zu) got %g want %g "
                  "bound %g), %zu guards overwritten\n",
                  V::name, sf_test::op_name(O), index, S.M, S.N, S.K, r.bad, r.m, r.n, r.got, r.want, r.bound,
                  r.guard_bad);
    }
  }
  std::printf("%s %-6s gemm_%s: %zu shapes, worst error %.3f of the bound\n", bad ? "FAIL" : "ok  ", V::name,
              sf_test::op_name(O), sizeof...(I), worst);
  failures += bad;
}
template <class V, std::size_t Stride = 1>
void gemm_all() {
  constexpr std::size_t n = (sf_test::n_shapes + Stride - 1) / Stride;
  gemm_shapes<V, sf_test::op::nn, Stride>(std::make_index_sequence<n>{});
  gemm_shapes<V, sf_test::op::nt, Stride>(std::make_index_sequence<n>{});
  gemm_shapes<V, sf_test::op::tn, Stride>(std::make_index_sequence<n>{});
}

template <class V>
void scan(sf_test::fn f, const char* name, double lo, double hi, std::size_t n, std::int64_t max_ulp, double max_abs) {
  const sf_test::scan_result r = sf_test::scan<V>(f, lo, hi, n);
  const bool ok = r.max_ulp <= max_ulp && (max_abs <= 0 || r.max_abs <= max_abs);
  std::printf("%s %-6s %-4s [%g, %g]: max %lld ulp (x = %g), max abs %.3g (x = %g)\n", ok ? "ok  " : "FAIL", V::name,
              name, lo, hi, static_cast<long long>(r.max_ulp), r.x_ulp, r.max_abs, r.x_abs);
  failures += !ok;
}
template <class V>
void vmath_all() {
  scan<V>(sf_test::fn::exp, "exp", -87.3, 88.7, 400001, 1, 0);
  scan<V>(sf_test::fn::exp, "exp", -103.9, -87.3, 100001, 1, 0);
  scan<V>(sf_test::fn::tanh, "tanh", -20, 20, 400001, 1, 1e-7);
  scan<V>(sf_test::fn::erf, "erf", -6, 6, 400001, 2, sf_test::erf_abs_bound<V>);
  const int sv = sf_test::special_values<V>();
  std::printf("%s %-6s special values (inf, NaN, ±0)\n", sv ? "FAIL" : "ok  ", V::name);
  failures += sv != 0;
  const int ops = sf_test::backend_ops<V>();
  std::printf("%s %-6s backend operations (%d wrong)\n", ops ? "FAIL" : "ok  ", V::name, ops);
  failures += ops != 0;
  double worst = 0;
  for (double w : {sf_test::rows_worst<V, 1>(1), sf_test::rows_worst<V, 5>(2), sf_test::rows_worst<V, 17>(4),
                   sf_test::rows_worst<V, 64>(5), sf_test::rows_worst<V, 65>(6), sf_test::rows_worst<V, 100>(7)})
    worst = w > worst ? w : worst;
  std::printf("%s %-6s softmax/gelu/gelu_tanh rows: worst error %.3f of the tolerance\n", worst <= 1 ? "ok  " : "FAIL",
              V::name, worst);
  failures += !(worst <= 1);
}
// The emulated twin of V (the constant-evaluation path, simd/emulated.hpp) gives V's bits:
// every row helper and the softmax kernel on the same inputs (NEON: pairwise addv order).
template <class V>
void twin_all() {
  using E = sf::simd::twin<V>;
  static float x[333], a[333], b[333];
  std::uint32_t s = 777;
  for (float& v : x) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(s >> 8) / 16777216.0f * 220.0f - 110.0f;
  }
  int bad = 0;
  auto same = [&](const char* name, auto f) {
    std::memcpy(a, x, sizeof x);
    std::memcpy(b, x, sizeof x);
    f(a, V{});
    f(b, E{});
    if (std::memcmp(a, b, sizeof a) != 0) {
      ++bad;
      std::printf("FAIL %-6s twin: %s differs\n", V::name, name);
    }
  };
  same("exp_row", [](float* y, auto w) { sf::simd::exp_row<333, decltype(w)>(y, y); });
  same("tanh_row", [](float* y, auto w) { sf::simd::tanh_row<333, decltype(w)>(y, y); });
  same("gelu_row", [](float* y, auto w) { sf::simd::gelu_row<333, decltype(w)>(y, y); });
  same("gelu_tanh_row", [](float* y, auto w) { sf::simd::gelu_tanh_row<333, decltype(w)>(y, y); });
  for (std::size_t n : {1u, 7u, 64u, 333u})
    same("softmax_scaled", [n](float* y, auto w) { sf::simd::softmax_scaled<decltype(w)>(y, n, 0.125f); });
  std::printf("%s %-6s emulated twin: rows and softmax bit-identical\n", bad ? "FAIL" : "ok  ", V::name);
  failures += bad;
}
// Q8_0: one line per backend (q8_check.hpp says what is checked).
template <class B>
void q8_backend() {
  const sf_test::q8c::result r = sf_test::q8c::all_backend<B>();
  std::printf("%s q8 %-12s against scalar: %d checks (%zu shapes x %d data sets, bias on/off, special values), "
              "%d failed%s%s\n",
              r.bad ? "FAIL" : "ok  ", B::name, r.checks, sf_test::q8c::n_shapes, sf_test::q8c::n_kinds, r.bad,
              r.bad ? "; first: " : "", r.first);
  failures += r.bad;
}
void q8_reference() {
  const sf_test::q8c::result r = sf_test::q8c::all_reference();
  std::printf("%s q8 scalar reference against formulas: %d checks, %d failed%s%s; worst quantize error %.7f d\n",
              r.bad ? "FAIL" : "ok  ", r.checks, r.bad, r.bad ? "; first: " : "", r.first, r.worst_quant);
  failures += r.bad;
}
}  // namespace

int main() {
  std::printf("native backend: %s\n", sf::simd::native<float>::name);
#if defined(SF_SIMD_HAVE_NEON)
  gemm_all<sf::simd::neon>();
  vmath_all<sf::simd::neon>();
  twin_all<sf::simd::neon>();
#endif
  gemm_all<sf::simd::scalar<float>, 3>();
  vmath_all<sf::simd::scalar<float>>();
  q8_reference();
  q8_backend<sf_test::q8c::simd32_model>();
#if defined(SF_Q8_HAVE_NEON)
  q8_backend<sf::kernels::q8::neon>();
#endif
#if defined(SF_Q8_HAVE_NEON_DOT)
  q8_backend<sf::kernels::q8::neon_dot>();
#endif
  std::printf("q8 native backend: %s\n", sf::kernels::q8::native::name);
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
