// q8_check.hpp — the Q8_0 checks shared by test_q8.cpp (GoogleTest, host) and
// cross/kernels_selftest.cpp (no GoogleTest, run under qemu-aarch64).
//
// Shapes: every (K, N) with K in {1, 7, 31, 32, 33, 40, 48, 64, 100, 160, 256} and
// N in {1, 5, 16, 17, 33, 65, 100} (77 shapes; odd K pads the last group, odd N the last column
// block), each with three data sets:
//   0  uniform in [-1, 1]
//   1  scales that differ per column and group (2^-8 .. 2^8), all-zero groups in W and in x
//   2  half-integers with each group's amax = 127 (so 127/amax = 1 and every x·id that is a
//      half-integer is an exact tie: rounding half away from zero is exercised)
//
//   check_backend:             a backend's kernels (what quantize_with<B> / matvec_with<B> call) against
//                              the scalar reference, memcmp-exact: the quantized activation
//                              (q, u, d) and y = x·W with and without bias, and x = 0 → y = bias;
//                              y is written at an odd offset and the 16 floats after y[N-1] are
//                              sentinels that must survive. (test_q8.cpp also runs the public
//                              templates quantize_with<B> / matvec_with<B> on a few shapes.)
//   check_reference:           the scalar reference against formulas written here:
//                                * the product from the canonical form (unpack) with std::fma,
//                                  memcmp-exact, and in double from the dequantized operands,
//                                  |y - y_double| <= γ(G+2)·(Σ_g |isum·dw·dx| + |bias|);
//                                * quality: |y - x·W (double)| <= Σ_k (|x_k| dw/2 + |w_k| dx/2 + dw dx/4)·(1 + 1e-3);
//                                * quantize → dequantize: |w - q·d| <= d·(1/2 + 2^-15) per weight
//                                  (d/2, up to the float roundings of id, t + 0.5 and q·d);
//                                * quantize_transposed(Wᵀ) is the same matrix as quantize(W);
//                                * unpack → pack → the same matrix; pack → unpack → the same
//                                  canonical arrays; all-zero groups give d = 0, q = 0;
//                                * x = 0 gives y = bias exactly (0 without bias);
//                                * the +128 copy u = q ^ 0x80 and Σq of every (column, group).
//   check_quantize_specials:   NaN, ±inf, -0, subnormals, a tiny amax (127/amax = inf), ties:
//                              backend B's activation quantizer gives the scalar one's bytes.
#pragma once
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <limits>
#include <utility>

#include "staticformer/kernels/q8.hpp"

namespace sf_test::q8c {

namespace q8 = sf::kernels::q8;

inline constexpr std::size_t Ks[] = {1, 7, 31, 32, 33, 40, 48, 64, 100, 160, 256};
inline constexpr std::size_t Ns[] = {1, 5, 16, 17, 33, 65, 100};
inline constexpr std::size_t nK = sizeof(Ks) / sizeof(Ks[0]), nN = sizeof(Ns) / sizeof(Ns[0]);
inline constexpr std::size_t n_shapes = nK * nN;
inline constexpr int n_kinds = 3;

struct result {
  int checks = 0, bad = 0;
  double worst_quant = 0;  // max |w - q·d| / d seen (quantize → dequantize)
  char first[512] = {};    // the first failure
  void fail(const char* fmt, ...) {
    if (bad++ == 0) {
      va_list ap;
      va_start(ap, fmt);
      std::vsnprintf(first, sizeof first, fmt, ap);
      va_end(ap);
    }
  }
  void expect(bool ok, const char* what, std::size_t K, std::size_t N, int kind) {
    ++checks;
    if (!ok) fail("%s (K=%zu N=%zu data %d)", what, K, N, kind);
  }
};

// ---------------------------------------------------------------- data (plain functions: compiled once)
struct lcg {
  std::uint64_t s;
  std::uint32_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(s >> 33);
  }
  float uniform() { return static_cast<float>(next() >> 8) / 8388608.0f - 1.0f; }  // [-1, 1)
  int integer(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<std::uint32_t>(hi - lo + 1)); }
};

// v(i) = p[i·stride], i < n: the values of one group of kind `kind`; gi, gj identify the group.
SF_Q8_NOINLINE inline void fill_group(float* p, std::size_t stride, std::size_t n, int kind, std::size_t gi,
                                      std::size_t gj, lcg& r) {
  if (kind == 0) {
    for (std::size_t i = 0; i < n; ++i) p[i * stride] = r.uniform();
  } else if (kind == 1) {
    const bool zero = (gi * 3 + gj * 5) % 7 == 2;
    const float scale = std::ldexp(1.0f, static_cast<int>((gi * 7 + gj * 3) % 17) - 8);
    for (std::size_t i = 0; i < n; ++i) p[i * stride] = zero ? 0.0f : r.uniform() * scale;
  } else {
    for (std::size_t i = 0; i < n; ++i) p[i * stride] = static_cast<float>(r.integer(-254, 254)) * 0.5f;
    p[(gi + gj) % n * stride] = (gi + gj) % 2 ? 127.0f : -127.0f;  // amax = 127
  }
}
// W: (K, N) row-major, group by group (column n, group g)
SF_Q8_NOINLINE inline void fill_weights(float* W, std::size_t K, std::size_t N, int kind, std::uint64_t seed) {
  lcg r{seed};
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t g = 0; g * 32 < K; ++g)
      fill_group(W + g * 32 * N + n, N, K - g * 32 < 32 ? K - g * 32 : 32, kind, n, g, r);
}
// x: (K)
SF_Q8_NOINLINE inline void fill_x(float* x, std::size_t K, int kind, std::uint64_t seed) {
  lcg r{seed};
  for (std::size_t g = 0; g * 32 < K; ++g)
    fill_group(x + g * 32, 1, K - g * 32 < 32 ? K - g * 32 : 32, kind, 1000, g, r);
}
SF_Q8_NOINLINE inline void fill_bias(float* b, std::size_t N, std::uint64_t seed) {
  lcg r{seed};
  for (std::size_t n = 0; n < N; ++n) b[n] = r.uniform() * 4.0f;
}

inline constexpr float sentinel = -1234.5f;

// ---------------------------------------------------------------- one shape, type-erased
// The checks are plain functions over run-time sizes (compiled once); what depends on (K, N) is a
// table (built at compile time) of pointers into static storage and of thin wrappers around the
// library's templates for that shape; a backend is its two run-time-sized kernels. So 77 shapes ×
// 5 backends compile in a few seconds (g++ 12 -O3: 1 TU, ~5 s; with ASan+UBSan ~6.5 s).
struct mat_view {
  std::int8_t* q;
  float* d;
  std::int16_t* qsum;
  std::size_t nq, nd;  // elements of q and of d (= of qsum)
};
struct vec_view {
  std::int8_t* q;
  std::uint8_t* u;
  float* d;
  std::size_t padded, groups;
};
struct shape_ops {
  std::size_t K, N, G, in_padded, out_padded;
  float *W, *Wt, *W2, *x, *zeros, *bias, *y, *y_ref;  // W, Wt, W2: K·N; x, zeros: K; bias: N; y, y_ref: N + 20
  std::int8_t *cq, *cq2;                              // (N, K)
  float *cd, *cd2;                                    // (N, G)
  mat_view w, w2, one;                                // one: x quantized as a (K, 1) matrix
  vec_view v, v_ref;
  q8::detail::mat_ref wr;                                  // w, as the backends see it
  q8::detail::vec_ref vr, vr_ref;                          // v, v_ref
  void (*quantize)(const float* W);                        // w = Q8_0(W)
  void (*quantize_transposed)(const float* Wt);            // w2 = Q8_0(Wtᵀ)
  void (*quantize_one)(const float* x);                    // one = Q8_0(x as (K, 1))
  void (*dequantize)(float* W2);                           // W2 = w dequantized
  void (*pack_w2)(const std::int8_t* q, const float* d);   // w2 = pack(q, d)
  void (*unpack)(std::int8_t* q, float* d, bool from_w2);  // (q, d) = unpack(w or w2)
  void (*quantize_ref)(const float* x);                    // v_ref = quantize_with<scalar>(x)
  void (*matvec_ref)(float* y, const float* bias);         // y = v_ref·w (+ bias), scalar
};
// A backend's two functions (what q8::quantize_with<B> and q8::matvec_with<B> call, on views of
// the shape's vector<K> and matrix<K, N>).
struct backend_ops {
  const char* name;
  void (*quantize)(std::int8_t* q, std::uint8_t* u, float* d, const float* x, std::size_t K);
  void (*matvec)(float* y, const q8::detail::vec_ref& x, const q8::detail::mat_ref& w, const float* bias);
};
template <class B>
constexpr backend_ops make_backend() {
  return {B::name, &B::quantize, &B::matvec};
}
// The Armv7E-M DSP kernel (q8/common.hpp: the scalar backend's product on a Cortex-M4) with a C
// model of SXTB16 and SMLAD, so that its byte pairing and loops are checked on any host.
struct simd32_model {
  static constexpr const char* name = "simd32 model";
  static void matvec(float* y, const q8::detail::vec_ref& x, const q8::detail::mat_ref& w, const float* bias) {
    q8::detail::matvec_simd32<q8::detail::simd32_portable>(y, x, w, bias);
  }
  static void quantize(std::int8_t* q, std::uint8_t* u, float* d, const float* x, std::size_t K) {
    q8::scalar::quantize(q, u, d, x, K);
  }
};

template <std::size_t K, std::size_t N>
struct store {
  static constexpr std::size_t G = q8::groups_of(K);
  static inline float W[K * N], Wt[N * K], W2[K * N], x[K], zeros[K], bias[N], y[N + 20], y_ref[N + 20];
  static inline q8::matrix<K, N> w, w2;
  static inline q8::matrix<K, 1> one;
  static inline q8::vector<K> v, v_ref;
  static inline std::int8_t cq[N * K], cq2[N * K];
  static inline float cd[N * G], cd2[N * G];
};
template <std::size_t K, std::size_t M>
constexpr mat_view view(q8::matrix<K, M>& m) {
  return {m.q, m.d, m.qsum, sizeof m.q, sizeof m.d / sizeof(float)};
}
template <std::size_t K>
constexpr vec_view view(q8::vector<K>& v) {
  return {v.q, v.u, v.d, q8::vector<K>::padded, q8::vector<K>::groups};
}
// (static member functions rather than lambdas: one function each, no conversion thunk)
template <std::size_t K, std::size_t N>
struct shape_fns {
  using S = store<K, N>;
  static void quantize(const float* W) { q8::quantize(S::w, W); }
  static void quantize_transposed(const float* Wt) { q8::quantize_transposed(S::w2, Wt); }
  static void quantize_one(const float* x) { q8::quantize(S::one, x); }
  static void dequantize(float* W2) { q8::dequantize(W2, S::w); }
  static void pack_w2(const std::int8_t* q, const float* d) { q8::pack(S::w2, q, d); }
  static void unpack(std::int8_t* q, float* d, bool from_w2) { q8::unpack(q, d, from_w2 ? S::w2 : S::w); }
  static void quantize_ref(const float* x) { q8::quantize_with<q8::scalar>(S::v_ref, x); }
  static void matvec_ref(float* y, const float* bias) { q8::matvec_with<q8::scalar>(y, S::v_ref, S::w, bias); }
};
template <std::size_t K, std::size_t N>
constexpr shape_ops make_shape() {
  using S = store<K, N>;
  using M = q8::matrix<K, N>;
  using F = shape_fns<K, N>;
  return {K,
          N,
          S::G,
          M::in_padded,
          M::out_padded,
          S::W,
          S::Wt,
          S::W2,
          S::x,
          S::zeros,
          S::bias,
          S::y,
          S::y_ref,
          S::cq,
          S::cq2,
          S::cd,
          S::cd2,
          view(S::w),
          view(S::w2),
          view(S::one),
          view(S::v),
          view(S::v_ref),
          q8::detail::ref(S::w),
          q8::detail::ref(S::v),
          q8::detail::ref(S::v_ref),
          &F::quantize,
          &F::quantize_transposed,
          &F::quantize_one,
          &F::dequantize,
          &F::pack_w2,
          &F::unpack,
          &F::quantize_ref,
          &F::matvec_ref};
}
inline bool same(const vec_view& a, const vec_view& b) {
  return std::memcmp(a.q, b.q, a.padded) == 0 && std::memcmp(a.u, b.u, a.padded) == 0 &&
         std::memcmp(a.d, b.d, a.groups * sizeof(float)) == 0;
}
inline bool same(const mat_view& a, const mat_view& b) {
  return std::memcmp(a.q, b.q, a.nq) == 0 && std::memcmp(a.d, b.d, a.nd * sizeof(float)) == 0 &&
         std::memcmp(a.qsum, b.qsum, a.nd * sizeof(std::int16_t)) == 0;
}

// y (N floats) compared with want; the 16 floats after y[N-1] must still be the sentinel.
SF_Q8_NOINLINE inline bool guarded_equal(const float* y, const float* want, std::size_t N) {
  if (std::memcmp(y, want, N * sizeof(float)) != 0) return false;
  for (std::size_t i = N; i < N + 16; ++i)
    if (std::memcmp(&y[i], &sentinel, sizeof(float)) != 0) return false;
  return true;
}
SF_Q8_NOINLINE inline void set_guard(float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = sentinel;
}

// ---------------------------------------------------------------- backend against scalar
SF_Q8_NOINLINE inline void check_backend(const shape_ops& s, const backend_ops& b, result& r, int kind) {
  const std::size_t K = s.K, N = s.N;
  const std::uint64_t seed = 1000003ull * K + 7919ull * N + static_cast<std::uint64_t>(kind);
  fill_weights(s.W, K, N, kind, seed);
  fill_x(s.x, K, kind, seed + 1);
  fill_bias(s.bias, N, seed + 2);
  s.quantize(s.W);
  s.quantize_ref(s.x);
  b.quantize(s.v.q, s.v.u, s.v.d, s.x, K);
  r.expect(same(s.v, s.v_ref), "quantize_with<B>(vector) differs from scalar", K, N, kind);
  const std::size_t off = (K + N + static_cast<std::size_t>(kind)) % 3;  // y at an odd offset
  for (int with_bias = 0; with_bias < 2; ++with_bias) {
    const float* bias = with_bias ? s.bias : nullptr;
    s.matvec_ref(s.y_ref, bias);
    set_guard(s.y, N + 20);
    b.matvec(s.y + off, s.vr_ref, s.wr, bias);
    r.expect(guarded_equal(s.y + off, s.y_ref, N),
             with_bias ? "matvec_with<B>(bias) differs from scalar or wrote past y[N-1]"
                       : "matvec_with<B>(no bias) differs from scalar or wrote past y[N-1]",
             K, N, kind);
  }
  // x = 0: y = bias exactly
  b.quantize(s.v.q, s.v.u, s.v.d, s.zeros, K);
  set_guard(s.y, N + 20);
  b.matvec(s.y, s.vr, s.wr, s.bias);
  r.expect(guarded_equal(s.y, s.bias, N), "x = 0 does not give y = bias", K, N, kind);
}

// ---------------------------------------------------------------- the reference against formulas
// Plain functions over run-time sizes (compiled once). cq: (N, K), cd: (N, G), xq: (32G), xd: (G)
// y = the product from the canonical form, the definition written out with std::fma.
SF_Q8_NOINLINE inline void naive_product(float* y, const std::int8_t* cq, const float* cd, const std::int8_t* xq,
                                         const float* xd, const float* bias, std::size_t K, std::size_t N) {
  const std::size_t G = q8::groups_of(K);
  for (std::size_t n = 0; n < N; ++n) {
    float acc = 0.0f;
    for (std::size_t g = 0; g < G; ++g) {
      std::int32_t isum = 0;
      for (std::size_t k = g * 32; k < K && k < g * 32 + 32; ++k) isum += cq[n * K + k] * xq[k];
      const float s = cd[n * G + g] * xd[g];
      acc = std::fma(static_cast<float>(isum), s, acc);
    }
    y[n] = bias ? acc + bias[n] : acc;
  }
}
// The exact checks of the product against naive formulas; returns a description of the first
// failure or nullptr.
SF_Q8_NOINLINE inline const char* check_product_formulas(const float* y, const float* y_naive, const std::int8_t* cq,
                                                         const float* cd, const std::int8_t* xq, const float* xd,
                                                         const float* W, const float* x, const float* bias,
                                                         std::size_t K, std::size_t N) {
  if (std::memcmp(y, y_naive, N * sizeof(float)) != 0) return "scalar matvec differs from the canonical-form formula";
  const std::size_t G = q8::groups_of(K);
  const double u = std::numeric_limits<float>::epsilon() / 2.0;
  const double gamma = (G + 2) * u / (1 - (G + 2) * u);
  for (std::size_t n = 0; n < N; ++n) {
    double exact = bias ? bias[n] : 0.0, mag = bias ? std::fabs(bias[n]) : 0.0;  // Σ_k (qw dw)(qx dx)
    double truth = exact, qerr = 0;                                              // x·W (+ bias), quantization bound
    for (std::size_t g = 0; g < G; ++g) {
      double gsum = 0;
      const double dw = cd[n * G + g], dx = xd[g];
      for (std::size_t k = g * 32; k < K && k < g * 32 + 32; ++k) {
        gsum += (cq[n * K + k] * dw) * (xq[k] * dx);
        truth += static_cast<double>(x[k]) * W[k * N + n];
        qerr += std::fabs(x[k]) * dw / 2 + std::fabs(W[k * N + n]) * dx / 2 + dw * dx / 4;
      }
      exact += gsum;
      mag += std::fabs(gsum);
    }
    if (!(std::fabs(y[n] - exact) <= gamma * mag * 1.0000001))
      return "scalar matvec off the double-precision dequantized product";
    if (!(std::fabs(y[n] - truth) <= qerr * 1.001 + gamma * mag))
      return "scalar matvec off x·W by more than the quantization bound";
  }
  return nullptr;
}
// |W - q·d| <= d·(1/2 + 2^-15) for every weight; returns the worst |W - q·d|/d (d > 0), or -1 on failure.
SF_Q8_NOINLINE inline double check_dequantize(const float* W, const float* W2, const std::int8_t* cq, const float* cd,
                                              std::size_t K, std::size_t N) {
  const std::size_t G = q8::groups_of(K);
  double worst = 0;
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t k = 0; k < K; ++k) {
      const double d = cd[n * G + k / 32], err = std::fabs(static_cast<double>(W[k * N + n]) - W2[k * N + n]);
      if (W2[k * N + n] != static_cast<float>(cq[n * K + k]) * cd[n * G + k / 32]) return -1;
      if (d == 0) {
        if (W[k * N + n] != 0 || cq[n * K + k] != 0) return -1;  // an all-zero group: q = 0
        continue;
      }
      if (!(err <= d * (0.5 + 1.0 / 32768))) return -1;
      if (cq[n * K + k] < -127) return -1;  // never -128
      if (err / d > worst) worst = err / d;
    }
  return worst;
}
// q (N, K), d (N, G): the amax rule (some |q| = 127 in every non-zero group, d = amax/127).
SF_Q8_NOINLINE inline bool check_scales(const float* W, const std::int8_t* cq, const float* cd, std::size_t K,
                                        std::size_t N) {
  const std::size_t G = q8::groups_of(K);
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t g = 0; g < G; ++g) {
      float amax = 0;
      int qmax = 0;
      for (std::size_t k = g * 32; k < K && k < g * 32 + 32; ++k) {
        amax = std::fabs(W[k * N + n]) > amax ? std::fabs(W[k * N + n]) : amax;
        qmax = std::abs(cq[n * K + k]) > qmax ? std::abs(cq[n * K + k]) : qmax;
      }
      if (cd[n * G + g] != amax / 127.0f) return false;
      if (qmax != (amax > 0 ? 127 : 0)) return false;
    }
  return true;
}

// ---------------------------------------------------------------- the reference, all checks of one shape
SF_Q8_NOINLINE inline void check_reference(const shape_ops& s, result& r, int kind) {
  const std::size_t K = s.K, N = s.N, G = s.G;
  const std::uint64_t seed = 2000003ull * K + 7919ull * N + static_cast<std::uint64_t>(kind);
  fill_weights(s.W, K, N, kind, seed);
  fill_x(s.x, K, kind, seed + 1);
  fill_bias(s.bias, N, seed + 2);
  s.quantize(s.W);
  s.quantize_ref(s.x);
  s.unpack(s.cq, s.cd, false);
  // the activation: q, u = q ^ 0x80, padding zero, the same rule as the weights
  bool vec_ok = true;
  for (std::size_t k = 0; k < s.v_ref.padded; ++k)
    vec_ok = vec_ok && s.v_ref.u[k] == static_cast<std::uint8_t>(s.v_ref.q[k] ^ 0x80) && (k < K || s.v_ref.q[k] == 0);
  r.expect(vec_ok, "vector: u != q ^ 0x80, or non-zero padding", K, N, kind);
  s.quantize_one(s.x);  // x quantized as a one-column matrix: the same q and d
  bool same_rule = true;
  for (std::size_t k = 0; k < K; ++k) same_rule = same_rule && s.one.q[q8::q_index(G, 0, k)] == s.v_ref.q[k];
  for (std::size_t g = 0; g < G; ++g) same_rule = same_rule && s.one.d[q8::d_index(G, 0, g)] == s.v_ref.d[g];
  r.expect(same_rule, "the activation quantizer differs from the weight quantizer", K, N, kind);
  for (int with_bias = 0; with_bias < 2; ++with_bias) {
    const float* bias = with_bias ? s.bias : nullptr;
    s.matvec_ref(s.y, bias);
    naive_product(s.y_ref, s.cq, s.cd, s.v_ref.q, s.v_ref.d, bias, K, N);
    const char* why = check_product_formulas(s.y, s.y_ref, s.cq, s.cd, s.v_ref.q, s.v_ref.d, s.W, s.x, bias, K, N);
    r.expect(why == nullptr, why ? why : "", K, N, kind);
  }
  // quantize → dequantize
  s.dequantize(s.W2);
  const double worst = check_dequantize(s.W, s.W2, s.cq, s.cd, K, N);
  r.expect(worst >= 0, "quantize → dequantize error over d/2, or an all-zero group not zero", K, N, kind);
  if (worst > r.worst_quant) r.worst_quant = worst;
  r.expect(check_scales(s.W, s.cq, s.cd, K, N), "a scale is not amax/127, or no |q| = 127 in a group", K, N, kind);
  // Σq per (column, group), padding zero
  bool ok = true;
  for (std::size_t n = 0; n < s.out_padded; ++n)
    for (std::size_t g = 0; g < G; ++g) {
      int sum = 0;
      for (std::size_t k = g * 32; k < K && k < g * 32 + 32; ++k) sum += n < N ? s.cq[n * K + k] : 0;
      ok = ok && s.w.qsum[q8::d_index(G, n, g)] == sum && (n < N || s.w.d[q8::d_index(G, n, g)] == 0);
    }
  for (std::size_t n = 0; n < s.out_padded; ++n)
    for (std::size_t k = 0; k < s.in_padded; ++k) ok = ok && (n < N && k < K ? true : s.w.q[q8::q_index(G, n, k)] == 0);
  r.expect(ok, "qsum is not Σq, or the padding is not zero", K, N, kind);
  // the transposed quantizer
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t n = 0; n < N; ++n) s.Wt[n * K + k] = s.W[k * N + n];
  s.quantize_transposed(s.Wt);
  r.expect(same(s.w, s.w2), "quantize_transposed(Wᵀ) differs from quantize(W)", K, N, kind);
  // canonical round trips
  std::memset(s.w2.q, 0x5a, s.w2.nq);
  std::memset(s.w2.d, 0x5a, s.w2.nd * sizeof(float));
  std::memset(s.w2.qsum, 0x5a, s.w2.nd * sizeof(std::int16_t));
  s.pack_w2(s.cq, s.cd);
  r.expect(same(s.w, s.w2), "pack(unpack(w)) differs from w", K, N, kind);
  lcg rq{seed + 3};
  for (std::size_t i = 0; i < N * K; ++i) s.cq2[i] = static_cast<std::int8_t>(rq.integer(-127, 127));
  for (std::size_t i = 0; i < N * G; ++i) s.cd2[i] = rq.uniform();
  s.pack_w2(s.cq2, s.cd2);
  std::memset(s.cq, 0, N * K);
  std::memset(s.cd, 0, N * G * sizeof(float));
  s.unpack(s.cq, s.cd, true);
  r.expect(std::memcmp(s.cq, s.cq2, N * K) == 0 && std::memcmp(s.cd, s.cd2, N * G * sizeof(float)) == 0,
           "unpack(pack(q, d)) differs from (q, d)", K, N, kind);
}

// ---------------------------------------------------------------- quantizer special values
inline constexpr std::size_t specials_K = 100;
template <class B>
void quantize_specials_with(q8::vector<specials_K>& v, const float* x) {
  q8::quantize_with<B>(v, x);
}
SF_Q8_NOINLINE inline void check_quantize_specials(const char* name,
                                                   void (*quantize_b)(q8::vector<specials_K>&, const float*),
                                                   result& r) {
  constexpr std::size_t K = specials_K;
  static float x[K];
  static q8::vector<K> a, b;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float den = std::numeric_limits<float>::denorm_min(), fmin = std::numeric_limits<float>::min();
  auto run = [&](const char* what) {
    q8::quantize_with<q8::scalar>(a, x);
    quantize_b(b, x);
    ++r.checks;
    if (!same(view(a), view(b))) r.fail("quantizer special values (%s): %s differs from scalar", what, name);
  };
  lcg g{99};
  for (float& v : x) v = g.uniform();
  x[3] = nan, x[40] = nan, x[41] = -nan;
  run("NaN among normal values");
  for (float& v : x) v = nan;
  run("all NaN");
  for (float& v : x) v = g.uniform();
  x[5] = inf, x[37] = -inf, x[70] = -inf, x[71] = 1.0f;
  run("±inf");
  for (std::size_t i = 0; i < K; ++i) x[i] = (i % 3 ? 1.0f : -1.0f) * den * static_cast<float>(i % 7);
  run("subnormals (127/amax = inf)");
  for (std::size_t i = 0; i < K; ++i)
    x[i] = (i % 2 ? 1e-38f : -3e-38f) * static_cast<float>(i % 5) + (i % 11 ? 0.0f : fmin);
  run("tiny amax");
  for (std::size_t i = 0; i < K; ++i) x[i] = i % 4 ? -0.0f : 0.0f;
  run("±0");
  for (std::size_t i = 0; i < K; ++i) x[i] = (static_cast<float>(i % 64) - 31.5f) * (i % 5 == 0 ? 4.0f : 1.0f);
  x[0] = 127.0f, x[32] = -127.0f, x[64] = 127.0f, x[96] = 127.0f;  // id = 1: every .5 is a tie
  run("ties");
  for (std::size_t i = 0; i < K; ++i) x[i] = (i % 2 ? 0.49999997f : -0.49999997f) + static_cast<float>(i % 3);
  x[0] = 127.0f, x[32] = 127.0f, x[64] = 127.0f, x[96] = 127.0f;
  run("just below ties");
  for (std::size_t i = 0; i < K; ++i) x[i] = (i % 2 ? 3.0e38f : -3.3e38f) * (i % 3 ? 1.0f : 0.5f);
  run("huge");
}

// ---------------------------------------------------------------- drivers over the 77 shapes
// Tables built at compile time: the drivers are plain loops.
template <std::size_t... I>
constexpr auto shape_table(std::index_sequence<I...>) {
  struct table {
    shape_ops s[sizeof...(I)];
  };
  return table{{make_shape<Ks[I / nN], Ns[I % nN]>()...}};
}
inline constexpr auto shapes = shape_table(std::make_index_sequence<n_shapes>{});

template <class B>
result all_backend() {
  constexpr backend_ops b = make_backend<B>();
  result r;
  for (std::size_t i = 0; i < n_shapes; ++i)
    for (int kind = 0; kind < n_kinds; ++kind) check_backend(shapes.s[i], b, r, kind);
  if constexpr (requires { &B::matvec_stream; }) {  // the product for weights_in::memory, on every shape too
    static const std::string name = std::string(B::name) + " matvec_stream";
    const backend_ops s{name.c_str(), &B::quantize, &B::matvec_stream};
    for (std::size_t i = 0; i < n_shapes; ++i)
      for (int kind = 0; kind < n_kinds; ++kind) check_backend(shapes.s[i], s, r, kind);
  }
  check_quantize_specials(B::name, &quantize_specials_with<B>, r);
  return r;
}
inline result all_reference() {
  result r;
  for (std::size_t i = 0; i < n_shapes; ++i)
    for (int kind = 0; kind < n_kinds; ++kind) check_reference(shapes.s[i], r, kind);
  return r;
}

}  // namespace sf_test::q8c
