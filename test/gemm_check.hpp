// gemm_check.hpp — shapes and checks shared by test_gemm.cpp (GoogleTest, host) and
// cross/kernels_selftest.cpp (no GoogleTest, run under qemu-aarch64).
//
// One check runs one kernel with one backend on one shape against a reference computed
// in higher precision (double for float, long double for double), and verifies element by element
//
//   |C - C_ref| <= γ(K+2, u) · (|C0| + |bias| + Σ_k |a(m,k)| |b(k,n)|) + the same with u_ref
//
// where γ(n, u) = n·u / (1 - n·u), u = ε/2 of T (Higham, Accuracy and Stability of
// Numerical Algorithms, §3.1: the bound of a dot product evaluated in any order, with or
// without FMA; +2 for the initial C and the bias). It is the bound that holds for every
// input and every blocking/summation order, so the test can never fail because a kernel
// sums in a different order; the statistical sqrt(K)·u estimate would, now and then. It is
// still tight enough to catch real bugs: with random entries in [-1, 1] a single product
// term is about 0.25 while the bound at K = 128 is ~2e-5 · Σ|ab| ≈ 3e-4 (float), so a
// missing, duplicated or misplaced term, a wrong stride or a lost bias fails by orders of
// magnitude. The worst observed error is also reported in units of sqrt(K+2)·u·Σ|ab|.
//
// Guards: the C buffer is filled with a sentinel outside the (M, N) window (stride padding
// and beyond the end); every sentinel must survive, so masked stores may not spill over.
#pragma once
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "staticformer/kernels/gemm.hpp"

namespace sf_test {

enum class op { nn, nt, tn };
inline const char* op_name(op o) { return o == op::nn ? "nn" : o == op::nt ? "nt" : "tn"; }

struct shape {
  std::size_t M, N, K;
  std::size_t pad_a, pad_b, pad_c;  // row stride = row length + pad
  std::size_t off;                  // A, B, C start `off` elements into their buffers (misaligned)
  bool acc, bias;                   // C += ... ; + bias (nn only)
};

inline constexpr std::size_t sizes[] = {1, 5, 15, 16, 17, 31, 33, 40, 64, 65, 100, 128};
inline constexpr std::size_t n_sizes = sizeof(sizes) / sizeof(sizes[0]);

// 144 shapes: every (M, N) pair of `sizes`, with K = sizes[(a + b) % 12], so every (M, K)
// and every (N, K) pair appears too (a Latin square). Strides, offsets, Acc and bias vary
// with the index.
constexpr shape latin_shape(std::size_t i) {
  const std::size_t a = i / n_sizes, b = i % n_sizes;
  constexpr std::size_t pads_a[] = {0, 3, 0, 16, 1};
  constexpr std::size_t pads_b[] = {0, 0, 7, 1};
  constexpr std::size_t pads_c[] = {0, 5, 0};
  return {sizes[a], sizes[b], sizes[(a + b) % n_sizes], pads_a[i % 5], pads_b[i % 4], pads_c[i % 3], (i / 7) % 2,
          (a + b) % 2 == 1, (a * 5 + b) % 3 == 0};
}
inline constexpr std::size_t n_latin = n_sizes * n_sizes;

// Shapes the model uses: heads as column slices of a (T, D) activation, projections, FFN.
inline constexpr shape model_shapes[] = {
    // M    N    K  pad_a pad_b pad_c off acc   bias
    {64, 64, 16, 48, 48, 0, 0, false, false},   // S = Q_h·K_hᵀ   (T=64, D=64, d_k=16): lda = ldb = D
    {64, 16, 64, 0, 48, 48, 16, false, false},  // O_h = P·V_h    (ldb = ldc = D, C is a head's columns)
    {64, 16, 64, 0, 48, 48, 32, true, false},   // dV_h += Pᵀ·dO_h
    {24, 8, 8, 40, 40, 0, 8, false, false},     // S per head, T=24, D=48, d_k=8
    {12, 8, 12, 0, 32, 32, 8, true, false},     // T=12, D=40, d_k=8
    {128, 192, 64, 0, 0, 0, 0, false, true},    // X·W + b (T=128, D=64 → 192)
    {256, 64, 256, 0, 0, 0, 0, false, true},    // FFN down
    {256, 256, 64, 0, 0, 0, 0, true, false},    // dW += Xᵀ·dY
    {129, 130, 131, 2, 3, 1, 1, true, true},    // odd everything, > pack_kc
    {7, 200, 3, 0, 0, 0, 0, false, true},
    {200, 7, 70, 0, 0, 0, 3, true, false},
    {1, 1, 1, 0, 0, 0, 0, false, false},
    {1, 1, 300, 0, 0, 0, 0, true, true},
    {160, 40, 70, 32, 0, 8, 0, true, false},   // tn: lda = 192 (768 B) → A copied in 96-column chunks
    {200, 130, 100, 56, 0, 0, 0, false, true},  // tn: lda = 256; nn: lda = 156
};
inline constexpr std::size_t n_model = sizeof(model_shapes) / sizeof(model_shapes[0]);

constexpr shape any_shape(std::size_t i) { return i < n_latin ? latin_shape(i) : model_shapes[i - n_latin]; }
inline constexpr std::size_t n_shapes = n_latin + n_model;

struct result {
  std::size_t bad = 0, guard_bad = 0;  // elements over the bound; sentinels overwritten
  std::size_t m = 0, n = 0;            // first bad element
  double got = 0, want = 0, bound = 0;
  double worst_rel = 0;  // max |err| / bound
  double worst_sqrt = 0; // max |err| / (sqrt(K+2)·u·Σ|ab|)
  bool ok() const { return bad == 0 && guard_bad == 0; }
};

inline constexpr std::size_t buffer_cap = 300 * 300 + 4096;

template <class T>
struct buffers {  // static: never on the stack
  static inline T a[buffer_cap], b[buffer_cap], c[buffer_cap], c0[buffer_cap], bias[512];
};

template <class T>
constexpr T sentinel() { return T(-1234.5); }

template <class T>
using kernel_fn = void (*)(T* C, const T* A, const T* B, const T* bias);

// The one instantiation per (backend, op, shape): the kernel call with compile-time shape.
template <class V, op O, std::size_t Index, class T = typename V::value_type>
void call_kernel(T* C, const T* A, const T* B, const T* bias) {
  constexpr shape S = any_shape(Index);
  constexpr std::size_t lda = (O == op::tn ? S.M : S.K) + S.pad_a, ldb = (O == op::nt ? S.K : S.N) + S.pad_b;
  constexpr std::size_t ldc = S.N + S.pad_c;
  if constexpr (O == op::nn) sf::kernels::gemm_nn_with<V, S.M, S.N, S.K, lda, ldb, ldc, S.acc>(C, A, B, bias);
  else if constexpr (O == op::nt) sf::kernels::gemm_nt_with<V, S.M, S.N, S.K, lda, ldb, ldc, S.acc>(C, A, B);
  else sf::kernels::gemm_tn_with<V, S.M, S.N, S.K, lda, ldb, ldc, S.acc>(C, A, B);
}

// Runs `kernel` (op O on shape S) on random data and checks it. Not a template over the
// shape, so the test compiles one checker per element type, not one per shape.
template <class T>
result check(const shape& S, op O, kernel_fn<T> kernel, std::uint32_t seed) {
  const std::size_t M = S.M, N = S.N, K = S.K;
  const std::size_t a_rows = O == op::tn ? K : M, a_cols = O == op::tn ? M : K;
  const std::size_t b_rows = O == op::nt ? N : K, b_cols = O == op::nt ? K : N;
  const std::size_t lda = a_cols + S.pad_a, ldb = b_cols + S.pad_b, ldc = N + S.pad_c;
  result r;
  if (S.off + a_rows * lda > buffer_cap || S.off + b_rows * ldb > buffer_cap || S.off + M * ldc + 64 > buffer_cap ||
      N > 512) {
    r.bad = 1;  // a shape that does not fit the buffers is a test bug
    return r;
  }
  using B_ = buffers<T>;
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto dist = [&state] {  // uniform in [-1, 1) with 53 random bits (rounded to T by the caller)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    constexpr double two52 = 4503599627370496.0;
    return (static_cast<double>(state >> 11) - two52) / two52;
  };
  const std::size_t a_end = S.off + a_rows * lda, b_end = S.off + b_rows * ldb;  // what the kernel may read
  for (std::size_t i = 0; i < a_end; ++i) B_::a[i] = static_cast<T>(dist());
  for (std::size_t i = 0; i < b_end; ++i) B_::b[i] = static_cast<T>(dist());
  for (std::size_t i = 0; i < 512; ++i) B_::bias[i] = static_cast<T>(dist());
  for (std::size_t i = 0; i < buffer_cap; ++i) B_::c[i] = sentinel<T>();
  T* const C = B_::c + S.off;
  const T* const A = B_::a + S.off;
  const T* const Bm = B_::b + S.off;
  const bool has_bias = S.bias && O == op::nn;
  const T* const bias = has_bias ? static_cast<const T*>(B_::bias) : nullptr;
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) C[m * ldc + n] = B_::c0[m * ldc + n] = static_cast<T>(dist());

  kernel(C, A, Bm, bias);

  const double u = std::numeric_limits<T>::epsilon() / 2;
  using R = std::conditional_t<std::is_same_v<T, float>, double, long double>;  // reference precision
  const double u_ref = static_cast<double>(std::numeric_limits<R>::epsilon() / 2);
  const double nterms = static_cast<double>(K + 2);
  const double gamma = nterms * u / (1 - nterms * u) + nterms * u_ref / (1 - nterms * u_ref);
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) {
      R s = 0, mag = 0;
      if (S.acc) s += B_::c0[m * ldc + n], mag += std::fabs(static_cast<R>(B_::c0[m * ldc + n]));
      if (has_bias) s += bias[n], mag += std::fabs(static_cast<R>(bias[n]));
      for (std::size_t k = 0; k < K; ++k) {  // s += a(m,k) · b(k,n)
        const R a = O == op::tn ? A[k * lda + m] : A[m * lda + k];
        const R b = O == op::nt ? Bm[n * ldb + k] : Bm[k * ldb + n];
        s += a * b;
        mag += std::fabs(a * b);
      }
      const double got = static_cast<double>(C[m * ldc + n]);
      const double err = std::fabs(static_cast<double>(static_cast<R>(got) - s));
      const double bound = gamma * static_cast<double>(mag);
      const double rel = bound > 0 ? err / bound : (err > 0 ? 1e300 : 0);
      if (rel > r.worst_rel) r.worst_rel = rel;
      if (mag > 0) {
        const double sq = err / (std::sqrt(nterms) * u * static_cast<double>(mag));
        if (sq > r.worst_sqrt) r.worst_sqrt = sq;
      }
      if (!(err <= bound)) {  // also catches NaN
        if (r.bad++ == 0) r.m = m, r.n = n, r.got = got, r.want = static_cast<double>(s), r.bound = bound;
      }
    }
  // sentinels: everything in the buffer outside the window
  for (std::size_t i = 0; i < buffer_cap; ++i) {
    if (B_::c[i] == sentinel<T>()) continue;
    const bool inside = i >= S.off && (i - S.off) / ldc < M && (i - S.off) % ldc < N;
    if (!inside) ++r.guard_bad;
  }
  return r;
}

}  // namespace sf_test
