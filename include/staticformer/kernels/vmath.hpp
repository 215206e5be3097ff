// staticformer/kernels/vmath.hpp — fast vectorised exp, tanh and erf for float, and the
// row helpers the layers need (softmax, GELU), written once against sf::simd.
//
//   using V = sf::simd::native<float>;
//   V::reg y = sf::simd::vexp<V>(x);                   // e^x, lane-wise
//   sf::simd::softmax_row<64>(scores_row);             // in place, max-subtracted
//   sf::simd::gelu_tanh_row<256>(h, h);                // y = x Φ(x), tanh approximation
//
// Accuracy (float, checked against the C library in test/test_vmath.cpp on every backend):
//   vexp   ≤ 1 ulp for x in [-87.3, 88.7] (the normal range) and on the subnormal results
//          below (gradual underflow); +inf above 88.73, 0 for -inf, NaN stays NaN.
//   vtanh  ≤ 1 ulp and abs error ≤ 1e-7: x + x³P(x²) for |x| < 0.625, else
//          1 - 2/(e^{2|x|} + 1); ±1 for large |x|, tanh(-0) = -0.
//   verf   ≤ 2 ulp and abs error ≤ 1.25e-7 everywhere: x·P(x²) for |x| < 0.9,
//          1 - e^{-x²}·R(t), t = 1/(1 + |x|/2), for 0.9 ≤ |x| < 4; ±1 beyond.
// (Measured on dense scans; with scalar<float> on a target without FMA instructions, where
// fmadd rounds twice, verf's abs error reaches 1.28e-7.) docs/design.md ("SIMD and matrix
// kernels") has the figures.
//
// Coefficients: exp and the small-|x| tanh polynomial are Cephes' (expf, tanhf); the erf
// polynomials were fitted for this file (mpmath chebyfit, degree 6 in x² on [0, 0.81] and
// degree 7 in t on [1/3, 1/1.45]; fit error 3e-10 and 1.1e-9 relative).
//
// All are constexpr: with the scalar backend, or with a vector backend's emulated twin
// (simd/emulated.hpp) for bit-identical compile-time results.
#pragma once
#include <cstddef>
#include <limits>
#include <type_traits>

#include "staticformer/simd.hpp"

namespace sf::simd {

// e^x. x = n ln2 + r with |r| <= ln2/2 (Cody–Waite: ln2 = c1 + c2, c1 exact in 9 bits),
// e^r = 1 + r + r² P(r) (Cephes expf, degree 5), then the result is scaled by 2^n.
// Naive reference: std::exp(x).
template <class V>
constexpr typename V::reg vexp(typename V::reg x) {
  using reg = typename V::reg;
  x = V::max(V::set1(-104.0f), x);  // below: 0 after rounding; keeps n in scale2's range (NaN passes)
  x = V::min(V::set1(89.0f), x);    // above: +inf
  const reg n = V::round(V::mul(x, V::set1(1.44269504088896341f)));  // n = round(x / ln2)
  reg r = V::fnmadd(n, V::set1(0.693359375f), x);                     // r = x - n c1   (exact)
  r = V::fnmadd(n, V::set1(-2.12194440e-4f), r);                      //     - n c2
  reg p = V::set1(1.9875691500e-4f);  // P(r), Horner
  p = V::fmadd(p, r, V::set1(1.3981999507e-3f));
  p = V::fmadd(p, r, V::set1(8.3334519073e-3f));
  p = V::fmadd(p, r, V::set1(4.1665795894e-2f));
  p = V::fmadd(p, r, V::set1(1.6666665459e-1f));
  p = V::fmadd(p, r, V::set1(5.0000001201e-1f));
  const reg er = V::add(V::fmadd(V::mul(r, r), p, r), V::set1(1.0f));  // e^r = 1 + r + r² P(r)
  return V::scale2(er, n);                                             // e^r 2^n
}

// tanh(x). |x| < 0.625: x + x³ P(x²) (Cephes tanhf); otherwise sign(x) (1 - 2/(e^{2|x|} + 1)).
// Naive reference: std::tanh(x).
template <class V>
constexpr typename V::reg vtanh(typename V::reg x) {
  using reg = typename V::reg;
  const reg ax = V::abs(x);
  const reg z = V::mul(x, x);
  reg p = V::set1(-5.70498872745e-3f);
  p = V::fmadd(p, z, V::set1(2.06390887954e-2f));
  p = V::fmadd(p, z, V::set1(-5.37397155531e-2f));
  p = V::fmadd(p, z, V::set1(1.33314422036e-1f));
  p = V::fmadd(p, z, V::set1(-3.33332819422e-1f));
  const reg small = V::fmadd(V::mul(p, z), x, x);  // x + x z P(z) (its sign is fixed below)
  const reg e = vexp<V>(V::add(ax, ax));           // e^{2|x|} (inf for large |x|: the result is then 1)
  const reg big = V::sub(V::set1(1.0f), V::div(V::set1(2.0f), V::add(e, V::set1(1.0f))));
  return V::copysign(V::select(V::lt(ax, V::set1(0.625f)), small, big), x);  // odd: tanh(-0) = -0
}

// erf(x). |x| < 0.9: x P(x²); 0.9 <= |x| < 4: sign(x) (1 - e^{-x²} R(t)), t = 1/(1 + |x|/2),
// R(t) ≈ erfc(x) e^{x²}; |x| >= 4: ±1 (erf(4) rounds to 1 in float).
// e^{-x²} uses x² = hi + lo exactly (FMA), e^{-x²} = e^{-hi} (1 - lo).
// Naive reference: std::erf(x).
template <class V>
constexpr typename V::reg verf(typename V::reg x) {
  using reg = typename V::reg;
  const reg ax = V::min(V::set1(4.0f), V::abs(x));  // NaN passes
  const reg z = V::mul(ax, ax);
  // |x| < 0.9: erf(x)/x = P(z)
  reg p = V::set1(8.5294013228368622e-5f);
  p = V::fmadd(p, z, V::set1(-8.1796321808882654e-4f));
  p = V::fmadd(p, z, V::set1(5.2042266937523017e-3f));
  p = V::fmadd(p, z, V::set1(-2.6860664791130850e-2f));
  p = V::fmadd(p, z, V::set1(1.1283718049593898e-1f));
  p = V::fmadd(p, z, V::set1(-3.7612635193967827e-1f));
  p = V::fmadd(p, z, V::set1(1.1283791667892224f));
  const reg small = V::mul(x, p);
  // 0.9 <= |x|: erfc(|x|) = e^{-x²} R(t)
  const reg t = V::div(V::set1(1.0f), V::fmadd(ax, V::set1(0.5f), V::set1(1.0f)));
  reg q = V::set1(0.12099648304723198f);
  q = V::fmadd(q, t, V::set1(-0.47707328944998695f));
  q = V::fmadd(q, t, V::set1(0.57214416075354291f));
  q = V::fmadd(q, t, V::set1(-0.11097915733138358f));
  q = V::fmadd(q, t, V::set1(0.35142967409204757f));
  q = V::fmadd(q, t, V::set1(0.25862911801637417f));
  q = V::fmadd(q, t, V::set1(0.28508210078600055f));
  q = V::fmadd(q, t, V::set1(-1.6568544978219617e-4f));
  const reg z_lo = V::fmadd(ax, ax, V::neg(z));  // ax² - z, exact
  const reg ez = vexp<V>(V::neg(z));
  const reg g = V::fnmadd(ez, z_lo, ez);            // e^{-x²} = e^{-z} (1 - z_lo)
  const reg big = V::fnmadd(g, q, V::set1(1.0f));  // 1 - e^{-x²} R
  return V::select(V::lt(ax, V::set1(0.9f)), small, V::copysign(big, x));
}

// ---------------------------------------------------------------- rows
// The row helpers are constexpr: during constant evaluation they run the same code with
// twin<V> (simd/emulated.hpp), so compile-time results are bit-identical to run-time ones.
namespace detail {
// k.template operator()<W>() with W = V at run time and W = twin<V> in a constant expression.
template <class V, class K>
constexpr decltype(auto) dispatch(K&& k) {
  if (std::is_constant_evaluated()) return k.template operator()<twin<V>>();
  return k.template operator()<V>();
}
// y[i] = f(x[i]) for i < N: full vectors, then one partial vector (extra lanes are 0 on input
// and never stored).
template <class V, std::size_t N, class F>
constexpr void map_row(float* y, const float* x, F f) {
  constexpr std::size_t W = V::width, full = N / W * W;
  for (std::size_t i = 0; i < full; i += W) V::store(y + i, f(V::load(x + i)));
  if constexpr (full < N) V::store_partial(y + full, f(V::load_partial(x + full, N - full)), N - full);
}
// y[i] = f(a[i], b[i]) for i < N, the same way.
template <class V, std::size_t N, class F>
constexpr void map_row2(float* y, const float* a, const float* b, F f) {
  constexpr std::size_t W = V::width, full = N / W * W;
  for (std::size_t i = 0; i < full; i += W) V::store(y + i, f(V::load(a + i), V::load(b + i)));
  if constexpr (full < N)
    V::store_partial(y + full, f(V::load_partial(a + full, N - full), V::load_partial(b + full, N - full)), N - full);
}
// The mask of a vector's first n lanes (n < W::width ≤ 16), for W::select.
inline constexpr float lane_ones[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
template <class W>
constexpr typename W::mask first_lanes(std::size_t n) {
  static_assert(W::width <= 16, "sf::simd::detail::first_lanes: at most 16 lanes");
  return W::lt(W::zero(), W::load_partial(lane_ones, n));
}
}  // namespace detail

// y = e^x, y and x (N), may alias.          Naive reference: for i < N: y[i] = std::exp(x[i]);
template <std::size_t N, class V = native<float>>
constexpr void exp_row(float* y, const float* x) {
  detail::dispatch<V>([&]<class W>() { detail::map_row<W, N>(y, x, [](typename W::reg v) { return vexp<W>(v); }); });
}
// y = tanh(x), y and x (N), may alias.      Naive reference: for i < N: y[i] = std::tanh(x[i]);
template <std::size_t N, class V = native<float>>
constexpr void tanh_row(float* y, const float* x) {
  detail::dispatch<V>([&]<class W>() { detail::map_row<W, N>(y, x, [](typename W::reg v) { return vtanh<W>(v); }); });
}
// GELU, exact form: y = x Φ(x) = x/2 (1 + erf(x/√2)), y and x (N), may alias.
// Naive reference: for i < N: y[i] = 0.5f * x[i] * (1 + std::erf(x[i] / std::sqrt(2.0f)));
template <std::size_t N, class V = native<float>>
constexpr void gelu_row(float* y, const float* x) {
  detail::dispatch<V>([&]<class W>() {
    detail::map_row<W, N>(y, x, [](typename W::reg v) {
      const typename W::reg h = W::mul(W::set1(0.5f), v);
      return W::fmadd(h, verf<W>(W::mul(v, W::set1(0.70710678118654752f))), h);  // x/2 + x/2 erf(x/√2)
    });
  });
}
// GELU, tanh form (GPT-2): y = x/2 (1 + tanh(√(2/π) (x + 0.044715 x³))), y and x (N), may alias.
// Naive reference: for i < N: y[i] = 0.5f*x[i]*(1 + std::tanh(0.7978845608f*(x[i] + 0.044715f*x[i]*x[i]*x[i])));
template <std::size_t N, class V = native<float>>
constexpr void gelu_tanh_row(float* y, const float* x) {
  detail::dispatch<V>([&]<class W>() {
    detail::map_row<W, N>(y, x, [](typename W::reg v) {
      const typename W::reg h = W::mul(W::set1(0.5f), v);
      const typename W::reg v3 = W::mul(W::mul(v, v), v);
      const typename W::reg u = W::mul(W::set1(0.79788456080286536f), W::fmadd(W::set1(0.044715f), v3, v));
      return W::fmadd(h, vtanh<W>(u), h);  // x/2 + x/2 tanh(u)
    });
  });
}

// SiLU (LLaMA's gate): y = x σ(x) = x / (1 + e^{-x}), y and x (N), may alias.
// Naive reference: for i < N: y[i] = x[i] / (1 + std::exp(-x[i]));
template <std::size_t N, class V = native<float>>
constexpr void silu_row(float* y, const float* x) {
  detail::dispatch<V>([&]<class W>() {
    detail::map_row<W, N>(y, x, [](typename W::reg v) { return W::div(v, W::add(W::set1(1.0f), vexp<W>(W::neg(v)))); });
  });
}

// The one softmax kernel of the library (attention rows, the loss, softmax_row below).
// x[i] = e^{s·x[i] - m} / Σ_j e^{s·x[j] - m} for i < n, m = max_i s·x[i], s = scale; -inf
// entries (masked keys) give 0; a row with no finite entry (or n = 0) becomes all 0.
// Returns m and the sum Σ_j e^{s·x[j] - m} before normalisation (for the loss: log Σ + m).
// Naive reference: the formula, in double.
struct softmax_stats {
  float max, sum;
};
namespace detail {
// max_i s·x[i] of a row of full + tail entries (full a multiple of W's width, tail < it), as a
// vector whose hmax is the maximum (max is exact: the order does not matter). The tail is one
// vector, its lanes past the row taken as -inf: no loop whose count changes with the row's length
// (a prefill chunk's causal rows, each one longer than the one before, mispredicted that loop's
// end at every row; docs/benchmarks.md). st: s·x of the tail's vector (0 when tail = 0).
template <class W>
SF_SIMD_INLINE constexpr typename W::reg scaled_max(const float* x, std::size_t full, std::size_t tail, typename W::reg vsc,
                                     typename W::reg& st) {
  typename W::reg vm = W::set1(-std::numeric_limits<float>::infinity());
  for (std::size_t i = 0; i < full; i += W::width) vm = W::max(vm, W::mul(W::load(x + i), vsc));
  st = W::zero();
  if (tail) {
    st = W::mul(W::load_partial(x + full, tail), vsc);
    vm = W::max(vm, W::select(first_lanes<W>(tail), st, W::set1(-std::numeric_limits<float>::infinity())));
  }
  return vm;
}
}  // namespace detail
template <class V = native<float>>
constexpr softmax_stats softmax_scaled(float* x, std::size_t n, float scale) {
  return detail::dispatch<V>([&]<class W>() {
    using reg = typename W::reg;
    constexpr std::size_t Wd = W::width;
    constexpr float ninf = -std::numeric_limits<float>::infinity();
    const std::size_t full = n / Wd * Wd, tail = n - full;
    const reg vsc = W::set1(scale);
    reg st;  // s·x of the last n mod W, kept in a register for the exponential
    const float m = W::hmax(detail::scaled_max<W>(x, full, tail, vsc, st));  // m = max_i s·x[i]
    if (m == ninf) {  // nothing allowed: 0
      for (std::size_t i = 0; i < n; ++i) x[i] = 0.0f;
      return softmax_stats{ninf, 0.0f};
    }
    const reg mv = W::set1(m);
    reg acc = W::zero();  // Σ e^{s·x - m}, x[i] = e^{s·x[i] - m}
    for (std::size_t i = 0; i < full; i += Wd) {
      const reg e = vexp<W>(W::sub(W::mul(W::load(x + i), vsc), mv));
      W::store(x + i, e);
      acc = W::add(acc, e);
    }
    // The last n mod W: kept in a register from the exponential to the division (its extra lanes
    // added as 0), not stored and read back (a load of a masked store's bytes waits for it).
    reg et = W::zero();
    if (tail) {
      et = vexp<W>(W::sub(st, mv));
      acc = W::add(acc, W::select(detail::first_lanes<W>(tail), et, W::zero()));
    }
    const float sum = W::hsum(acc);
    const reg r = W::set1(1.0f / sum);  // x[i] /= Σ
    for (std::size_t i = 0; i < full; i += Wd) W::store(x + i, W::mul(W::load(x + i), r));
    if (tail) W::store_partial(x + full, W::mul(et, r), tail);
    return softmax_stats{m, sum};
  });
}

// Σ_i x[i] and Σ_i (x[i] - m)² for i < n (the norms' mean and variance): W lanes of partial sums
// over the full vectors (lane j adds x[j], x[j+W], ... in order), their tree sum (W::hsum), then
// the last n mod W elements in order. A sum of 64 is then 4 dependent additions, not 64.
// Naive reference: the same order written out (with W = 1 it is the plain loop from 0).
template <class V = native<float>>
constexpr float row_sum(const float* x, std::size_t n) {
  return detail::dispatch<V>([&]<class W>() {
    constexpr std::size_t Wd = W::width;
    const std::size_t full = n / Wd * Wd;
    typename W::reg acc = W::zero();
    for (std::size_t i = 0; i < full; i += Wd) acc = W::add(acc, W::load(x + i));
    float s = W::hsum(acc);
    for (std::size_t i = full; i < n; ++i) s += x[i];
    return s;
  });
}
template <class V = native<float>>
constexpr float row_sum_sq_dev(const float* x, std::size_t n, float m) {
  return detail::dispatch<V>([&]<class W>() {
    constexpr std::size_t Wd = W::width;
    const std::size_t full = n / Wd * Wd;
    const typename W::reg mv = W::set1(m);
    typename W::reg acc = W::zero();
    for (std::size_t i = 0; i < full; i += Wd) {
      const typename W::reg d = W::sub(W::load(x + i), mv);
      acc = W::add(acc, W::mul(d, d));
    }
    float s = W::hsum(acc);
    for (std::size_t i = full; i < n; ++i) s += (x[i] - m) * (x[i] - m);
    return s;
  });
}

// softmax_scaled of `rows` rows, row r at x + r·stride with n + growth·r entries (growth 0: rows
// of one length, the H heads of one query in a decoder step; growth 1: a prefill chunk's causal
// rows, query i attending one key more than query i − 1), each row computed with exactly
// softmax_scaled's operations (so the same bits), but phase by phase across the rows (their
// maxima, then their exponentials and sums, then the scaling), so that the rows' horizontal
// reductions overlap instead of following one another. clear_to: each row's entries from its end
// to clear_to (when that is further) are set to 0 in the same pass (a chunk's scores past each
// query's keys, up to the end of the key blocks its product reads).
template <class V = native<float>>
constexpr void softmax_scaled_rows(float* x, std::size_t rows, std::size_t stride, std::size_t n, float scale,
                                   std::size_t growth = 0, std::size_t clear_to = 0) {
  detail::dispatch<V>([&]<class W>() {
    using reg = typename W::reg;
    constexpr std::size_t Wd = W::width, chunk = 16;
    constexpr float ninf = -std::numeric_limits<float>::infinity();
    const reg vsc = W::set1(scale);
    for (std::size_t r0 = 0; r0 < rows; r0 += chunk) {
      const std::size_t nr = rows - r0 < chunk ? rows - r0 : chunk;
      float m[chunk] = {}, sum[chunk] = {};
      auto length = [&](std::size_t r) { return n + growth * (r0 + r); };  // row r0 + r
      for (std::size_t r = 0; r < nr; ++r) {  // m = max_i s·x[i]
        const float* xr = x + (r0 + r) * stride;
        const std::size_t nl = length(r), full = nl / Wd * Wd, tail = nl - full;
        reg st;
        m[r] = W::hmax(detail::scaled_max<W>(xr, full, tail, vsc, st));
      }
      for (std::size_t r = 0; r < nr; ++r) {  // x = e^{s·x - m}, Σ
        float* xr = x + (r0 + r) * stride;
        const std::size_t nl = length(r), full = nl / Wd * Wd, tail = nl - full;
        if (m[r] == ninf) {
          for (std::size_t i = 0; i < (nl > clear_to ? nl : clear_to); ++i) xr[i] = 0.0f;
          continue;
        }
        const reg mv = W::set1(m[r]);
        reg acc = W::zero();
        for (std::size_t i = 0; i < full; i += Wd) {
          const reg e = vexp<W>(W::sub(W::mul(W::load(xr + i), vsc), mv));
          W::store(xr + i, e);
          acc = W::add(acc, e);
        }
        if (tail) {  // (the sum takes the tail from the register, as softmax_scaled)
          const reg et = vexp<W>(W::sub(W::mul(W::load_partial(xr + full, tail), vsc), mv));
          W::store_partial(xr + full, et, tail);
          acc = W::add(acc, W::select(detail::first_lanes<W>(tail), et, W::zero()));
        }
        sum[r] = W::hsum(acc);
      }
      for (std::size_t r = 0; r < nr; ++r) {  // x /= Σ; x[nl … clear_to) = 0
        if (m[r] == ninf) continue;
        float* xr = x + (r0 + r) * stride;
        const std::size_t nl = length(r), full = nl / Wd * Wd, tail = nl - full;
        const reg rv = W::set1(1.0f / sum[r]);
        for (std::size_t i = 0; i < full; i += Wd) W::store(xr + i, W::mul(W::load(xr + i), rv));
        std::size_t z = nl;  // the first entry still to clear
        if (tail) {
          const reg t = W::mul(W::load_partial(xr + full, tail), rv);
          if (full + Wd <= clear_to) {  // the tail's vector whole, its lanes past nl 0
            W::store(xr + full, W::select(detail::first_lanes<W>(tail), t, W::zero()));
            z = full + Wd;
          } else {
            W::store_partial(xr + full, t, tail);
          }
        }
        for (; z + Wd <= clear_to; z += Wd) W::store(xr + z, W::zero());
        if (z < clear_to) W::store_partial(xr + z, W::zero(), clear_to - z);
      }
    }
  });
}

// The first index of the largest of x[0 … n-1] (n ≥ 1), the answer of the plain loop
//   best = 0; for (i = 1; i < n; ++i) if (x[i] > x[best]) best = i;
// (NaN is never larger, so it is skipped, and x[0] = NaN gives 0; of equal values, -0 and +0
// included, the first wins). W lanes each keep the loop over its own indices i ≡ lane (mod W):
// its largest value by `>` and the index where it first appeared (held as a float: exact below
// 2^24; longer rows take the plain loop); the lanes then give the largest value's lowest index,
// and the last n mod W elements continue the plain loop. Greedy decoding's pick over V logits.
// Naive reference: the plain loop above.
template <class V = native<float>>
constexpr std::size_t argmax(const float* x, std::size_t n) {
  return detail::dispatch<V>([&]<class W>() -> std::size_t {
    constexpr std::size_t Wd = W::width;
    const std::size_t full = n < (std::size_t{1} << 24) ? n / Wd * Wd : 0;
    std::size_t best = 0;
    float m = x[0];
    if (full > 0 && m == m) {  // (x[0] = NaN: nothing is larger)
      float lane[Wd] = {};
      for (std::size_t l = 0; l < Wd; ++l) lane[l] = static_cast<float>(l);
      typename W::reg vm = W::set1(m), vi = W::zero(), at = W::load(lane);
      const typename W::reg step = W::set1(static_cast<float>(Wd));
      for (std::size_t i = 0; i < full; i += Wd) {  // per lane: if (x > max) max = x, index = i + lane
        const typename W::reg v = W::load(x + i);
        const auto larger = W::lt(vm, v);
        vm = W::select(larger, v, vm);
        vi = W::select(larger, at, vi);
        at = W::add(at, step);
      }
      float mv[Wd] = {}, iv[Wd] = {};
      W::store(mv, vm), W::store(iv, vi);
      float mi = iv[0];
      m = mv[0];
      for (std::size_t l = 1; l < Wd; ++l)
        if (mv[l] > m || (mv[l] == m && iv[l] < mi)) m = mv[l], mi = iv[l];
      best = static_cast<std::size_t>(mi);
    }
    for (std::size_t i = full > 0 ? full : 1; i < n; ++i)
      if (x[i] > m) m = x[i], best = i;
    return best;
  });
}

// Softmax of one row in place: x = e^{x - max x} / Σ e^{x - max x}, x (N).
// -inf entries (masked attention) give 0; a row of only -inf gives 0.
// Naive reference: m = max_i x[i]; s = Σ_i e^{x[i]-m}; for i < N: x[i] = e^{x[i]-m} / s;
template <std::size_t N, class V = native<float>>
constexpr void softmax_row(float* x) {
  softmax_scaled<V>(x, N, 1.0f);
}

}  // namespace sf::simd
