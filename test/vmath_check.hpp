// vmath_check.hpp — accuracy scans of vexp/vtanh/verf and the row helpers, shared by
// test_vmath.cpp (GoogleTest) and cross/kernels_selftest.cpp (qemu-aarch64, no GoogleTest).
//
// The reference is the C library in double, rounded to float (for exp, tanh and erf that
// is the correctly rounded float except in rare double-rounding cases). The bounds are
// what vmath.hpp promises, not loosened to pass:
//   exp   ≤ 1 ulp on [-87.3, 88.7] and on the subnormal range [-103.9, -87.3]
//   tanh  ≤ 1 ulp and abs ≤ 1e-7 on [-20, 20]
//   erf   ≤ 2 ulp and abs ≤ 1.25e-7 on [-6, 6] (1.3e-7 for scalar<float> on a target without
//         FMA instructions, where its fmadd rounds twice: 1.277e-7 measured)
#pragma once
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "staticformer/kernels/vmath.hpp"

namespace sf_test {

struct scan_result {
  double max_abs = 0, x_abs = 0;
  std::int64_t max_ulp = 0;
  double x_ulp = 0;
  std::size_t points = 0;
};

inline std::int64_t ordered(float x) {
  const auto i = std::bit_cast<std::int32_t>(x);
  return i < 0 ? static_cast<std::int64_t>(INT32_MIN) - i : i;
}
inline std::int64_t ulp_distance(float a, float b) {
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// verf's absolute error bound for backend V (see above).
template <class V>
inline constexpr double erf_abs_bound = V::fused ? 1.25e-7 : 1.3e-7;

enum class fn { exp, tanh, erf };
inline double reference(fn f, double x) { return f == fn::exp ? std::exp(x) : f == fn::tanh ? std::tanh(x) : std::erf(x); }

// y = f(x) lane-wise with backend V, for n floats (a partial vector at the end).
template <class V>
void apply(fn f, float* y, const float* x, std::size_t n) {
  auto one = [f](typename V::reg v) {
    return f == fn::exp ? sf::simd::vexp<V>(v) : f == fn::tanh ? sf::simd::vtanh<V>(v) : sf::simd::verf<V>(v);
  };
  std::size_t i = 0;
  for (; i + V::width <= n; i += V::width) V::store(y + i, one(V::load(x + i)));
  if (i < n) V::store_partial(y + i, one(V::load_partial(x + i, n - i)), n - i);
}

// Evenly spaced points over [lo, hi] (n of them), through `apply`, against the reference.
template <class V>
scan_result scan(fn f, double lo, double hi, std::size_t n) {
  static float xs[4096], ys[4096];  // static: never on the stack
  scan_result r;
  for (std::size_t base = 0; base < n; base += 4096) {
    const std::size_t m = n - base < 4096 ? n - base : 4096;
    for (std::size_t i = 0; i < m; ++i)
      xs[i] = static_cast<float>(lo + (hi - lo) * static_cast<double>(base + i) / static_cast<double>(n - 1));
    apply<V>(f, ys, xs, m);
    for (std::size_t i = 0; i < m; ++i) {
      const double ref = reference(f, static_cast<double>(xs[i]));
      const double e = std::fabs(static_cast<double>(ys[i]) - ref);
      const std::int64_t u = ulp_distance(ys[i], static_cast<float>(ref));
      if (!(e <= r.max_abs)) r.max_abs = e, r.x_abs = xs[i];  // NaN counts as worst
      if (u > r.max_ulp) r.max_ulp = u, r.x_ulp = xs[i];
      ++r.points;
    }
  }
  return r;
}

// Special values: returns the number of wrong results.
template <class V>
int special_values() {
  constexpr float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  static const float x[] = {0.0f, -0.0f, inf, -inf, nan, 89.0f, -104.0f, 88.72f, -87.0f, 30.0f, -30.0f, 1e-30f, -1e-30f};
  constexpr std::size_t n = sizeof(x) / sizeof(x[0]);
  static float e[n], t[n], r[n];
  apply<V>(fn::exp, e, x, n);
  apply<V>(fn::tanh, t, x, n);
  apply<V>(fn::erf, r, x, n);
  int bad = 0;
  bad += !(e[0] == 1 && e[1] == 1 && e[2] == inf && e[3] == 0 && std::isnan(e[4]) && e[5] == inf && e[6] == 0);
  bad += !(std::isfinite(e[7]) && e[7] > 3.3e38f && e[8] > 0);
  bad += !(t[0] == 0 && !std::signbit(t[0]) && t[1] == 0 && std::signbit(t[1]) && t[2] == 1 && t[3] == -1 &&
           std::isnan(t[4]) && t[9] == 1 && t[10] == -1 && t[11] == 1e-30f && t[12] == -1e-30f);
  bad += !(r[0] == 0 && !std::signbit(r[0]) && r[1] == 0 && std::signbit(r[1]) && r[2] == 1 && r[3] == -1 &&
           std::isnan(r[4]) && r[9] == 1 && r[10] == -1);
  return bad;
}

// The backend's own operations on a few exact cases: returns the number of wrong results.
template <class V>
int backend_ops() {
  constexpr std::size_t W = V::width;
  constexpr float nan = std::numeric_limits<float>::quiet_NaN();
  static float x[64], y[64], out[64];
  int bad = 0;
  auto lanes = [&](typename V::reg v) { V::store(out, v); };
  for (std::size_t i = 0; i < W; ++i) x[i] = static_cast<float>(i) - 2.5f, y[i] = static_cast<float>(W - i);
  const typename V::reg a = V::load(x), b = V::load(y);
  float sum = 0, mx = -1e30f;
  for (std::size_t i = 0; i < W; ++i) sum += x[i], mx = x[i] > mx ? x[i] : mx;
  bad += !(V::hsum(a) == sum && V::hmax(a) == mx);
  lanes(V::sqrt(V::abs(a)));
  for (std::size_t i = 0; i < W; ++i) bad += !(out[i] == std::sqrt(std::fabs(x[i])));
  lanes(V::round(a));  // x = i - 2.5: ties to even
  for (std::size_t i = 0; i < W; ++i) bad += !(out[i] == std::nearbyint(x[i]));
  lanes(V::select(V::lt(a, b), V::neg(a), V::copysign(b, a)));
  for (std::size_t i = 0; i < W; ++i) bad += !(out[i] == (x[i] < y[i] ? -x[i] : std::copysign(y[i], x[i])));
  lanes(V::div(V::fnmadd(a, b, V::set1(1.0f)), b));  // (1 - a b) / b
  for (std::size_t i = 0; i < W; ++i) bad += !(std::fabs(out[i] - (1.0f - x[i] * y[i]) / y[i]) <= 1e-6f * (1 + std::fabs(out[i])));
  lanes(V::scale2(a, V::set1(-3.0f)));
  for (std::size_t i = 0; i < W; ++i) bad += !(out[i] == x[i] / 8);
  // min/max: the second operand when either is NaN
  lanes(V::max(V::set1(nan), a));
  for (std::size_t i = 0; i < W; ++i) bad += !(out[i] == x[i]);
  lanes(V::min(a, V::set1(nan)));
  for (std::size_t i = 0; i < W; ++i) bad += !std::isnan(out[i]);
  // partial loads fill 0, partial stores leave the rest alone
  for (std::size_t n = 1; n <= W; ++n) {
    for (std::size_t i = 0; i < W; ++i) out[i] = -7;
    V::store_partial(out, V::load_partial(x, n), n);
    for (std::size_t i = 0; i < W; ++i) bad += !(out[i] == (i < n ? x[i] : -7.0f));
    lanes(V::load_partial(x, n));
    for (std::size_t i = 0; i < W; ++i) bad += !(out[i] == (i < n ? x[i] : 0.0f));
  }
  // transpose of a W×W block
  static float blk[64 * 64];
  typename V::reg r[W];
  for (std::size_t i = 0; i < W * W; ++i) blk[i] = static_cast<float>(i);
  for (std::size_t i = 0; i < W; ++i) r[i] = V::load(blk + i * W);
  V::transpose(r);
  for (std::size_t i = 0; i < W; ++i) {
    lanes(r[i]);
    for (std::size_t j = 0; j < W; ++j) bad += !(out[j] == blk[j * W + i]);
  }
  return bad;
}

// Row helpers against double references; returns the worst |error| / tolerance (<= 1 passes).
//   softmax: relative, (|x - max| + N + 4) u  (exp of the shifted value, the N-term sum, 1/s, ·)
//   gelu:    |x|/2 (erf_abs_bound + 4u) + 2u |y|   (erf's abs error, the x/√2, the fma)
//   gelu_tanh: |x|/2 (1e-7 + 6u) + 2u |y|     (tanh's abs error, the cubic argument)
template <class V, std::size_t N>
double rows_worst(std::uint32_t seed) {
  static float x[N], y[N], g[N], gt[N];
  constexpr double u = std::numeric_limits<float>::epsilon() / 2;
  std::uint32_t s = seed;
  auto rnd = [&s] { s = s * 1664525u + 1013904223u; return static_cast<double>(s >> 8) / 16777216.0; };  // [0,1)
  for (std::size_t i = 0; i < N; ++i) x[i] = static_cast<float>(20 * rnd() - 10);
  if (N > 3) x[N / 2] = -std::numeric_limits<float>::infinity();  // a masked score
  for (std::size_t i = 0; i < N; ++i) y[i] = x[i];
  sf::simd::softmax_row<N, V>(y);
  double m = -INFINITY, sum = 0, worst = 0;
  for (std::size_t i = 0; i < N; ++i)  // (not std::fmax: aarch64 g++ 12.2 ICEs vectorising that reduction)
    m = static_cast<double>(x[i]) > m ? static_cast<double>(x[i]) : m;
  for (std::size_t i = 0; i < N; ++i) sum += std::exp(static_cast<double>(x[i]) - m);
  for (std::size_t i = 0; i < N; ++i) {
    const double ref = std::exp(static_cast<double>(x[i]) - m) / sum;
    const double tol = (std::fabs(static_cast<double>(x[i]) - m) + N + 4) * u * ref;
    const double e = std::fabs(static_cast<double>(y[i]) - ref);
    if (std::isinf(x[i])) { if (y[i] != 0) worst = 1e300; continue; }
    const double q = tol > 0 ? e / tol : (e > 0 ? 1e300 : 0);
    if (!(q <= worst)) worst = q;
  }
  for (std::size_t i = 0; i < N; ++i) x[i] = static_cast<float>(12 * rnd() - 6);  // activations
  sf::simd::gelu_row<N, V>(g, x);
  sf::simd::gelu_tanh_row<N, V>(gt, x);
  for (std::size_t i = 0; i < N; ++i) {
    const double xi = x[i];
    const double ref = 0.5 * xi * (1 + std::erf(xi / std::sqrt(2.0)));
    const double reft = 0.5 * xi * (1 + std::tanh(0.7978845608028654 * (xi + 0.044715 * xi * xi * xi)));
    const double tol = 0.5 * std::fabs(xi) * (erf_abs_bound<V> + 4 * u) + 2 * u * std::fabs(ref);
    const double tolt = 0.5 * std::fabs(xi) * (1e-7 + 6 * u) + 2 * u * std::fabs(reft);
    const double e = std::fabs(g[i] - ref), et = std::fabs(gt[i] - reft);
    const double q = tol > 0 ? e / tol : (e > 0 ? 1e300 : 0), qt = tolt > 0 ? et / tolt : (et > 0 ? 1e300 : 0);
    if (!(q <= worst)) worst = q;
    if (!(qt <= worst)) worst = qt;
  }
  // silu: e^{-x} within 1 ulp (2u relative), then 1 + e^{-x} and the division each round once
  sf::simd::silu_row<N, V>(g, x);
  for (std::size_t i = 0; i < N; ++i) {
    const double xi = x[i], ref = xi / (1 + std::exp(-xi)), tol = 6 * u * std::fabs(ref);
    const double e = std::fabs(g[i] - ref), q = tol > 0 ? e / tol : (e > 0 ? 1e300 : 0);
    if (!(q <= worst)) worst = q;
  }
  return worst;
}

}  // namespace sf_test
