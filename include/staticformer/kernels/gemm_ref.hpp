// staticformer/kernels/gemm_ref.hpp — naive reference matrix products.
//
// Every optimised kernel in gemm.hpp has its plain triple loop here; the tests run
// both on many shapes (odd ones included) and compare. These are also the
// constant-evaluation path, and they sum exactly as the register tiles do: per element
// of C, in k order, one multiply-add at a time (with one rounding where the native SIMD
// backend has FMA), starting from C (accumulate) plus the bias, or the bias, or 0. So a
// product evaluated in the compiler gives the same bits as at run time.
// All matrices are row-major with a compile-time row stride (ld*), so a head's columns
// inside a (T, D) activation are addressed without copies.
//
// `Acc` selects accumulate (C +=) or overwrite (C =): the two halves of the library's
// gradient rule (stated in model.hpp).
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "staticformer/simd.hpp"

namespace sf::kernels::ref {

namespace detail {
// s + Σ_k a[k·sa]·b[k·sb] with a, b already in double, one fma at a time in k order, as
// sf::cx::fma rounds it: the product is exact in double, the sum is rounded to double and then
// to float, which is the fma's one rounding unless the double sum lies exactly halfway between
// two floats (its 29 bits below float precision are 1000…0); then the exact error of the sum
// (TwoSum) decides. Written out with no call and few temporaries per term: during constant
// evaluation every intermediate value is kept by the compiler until the expression ends.
template <std::size_t K, std::size_t sa, std::size_t sb>
constexpr float exact_fma_dot(const double* a, const double* b, float s0) {
  double s = s0;
  for (std::size_t k = 0; k < K; ++k) {
    const double sum = a[k * sa] * b[k * sb] + s;
    const float f = static_cast<float>(sum);
    const bool normal = f > 1.1754944e-38f || f < -1.1754944e-38f;
    if (normal && (std::bit_cast<std::uint64_t>(sum) & 0x1fffffffu) != 0x10000000u) {
      s = f;  // not a tie: one rounding is enough
      continue;
    }
    const double t = 2 * sum - static_cast<double>(f);  // the other float neighbour, if sum is a tie
    if (t != static_cast<double>(f) && static_cast<double>(static_cast<float>(t)) == t && f - f == 0) {
      const double p = a[k * sa] * b[k * sb];
      const double bb = sum - p, err = (p - (sum - bb)) + (s - bb);
      s = err != 0 && (err > 0) == (t > sum) ? static_cast<double>(static_cast<float>(t)) : static_cast<double>(f);
    } else {
      s = f;
    }
  }
  return static_cast<float>(s);
}

// C[m,n] (=|+=) Σ_k a(m,k)·b(k,n) (+ bias[n]),  a(m,k) = A[m·sam + k·sak],  b(k,n) = B[k·sbk + n·sbn]
//   C: (M,N) row stride ldc
// The inner loop calls no function: during constant evaluation a call per multiply-add would
// be evaluated (and memoised) one by one, which costs the compiler minutes and gigabytes.
template <std::size_t M, std::size_t N, std::size_t K, std::size_t ldc, std::size_t sam, std::size_t sak,
          std::size_t sbk, std::size_t sbn, bool Acc, class T>
constexpr void product(T* C, const T* A, const T* B, const T* bias) {
  constexpr bool fused = simd::native<T>::fused;  // the run-time tiles' rounding
  constexpr bool exact = fused && std::is_same_v<T, float>;
  // During constant evaluation: A and B converted to double once (transient compile-time storage).
  constexpr std::size_t na = (M - 1) * sam + (K - 1) * sak + 1, nb = (K - 1) * sbk + (N - 1) * sbn + 1;
  double* Ad = nullptr;
  double* Bd = nullptr;
  if constexpr (exact) {
    if (std::is_constant_evaluated()) {
      Ad = new double[na];
      Bd = new double[nb];
      for (std::size_t i = 0; i < na; ++i) Ad[i] = A[i];
      for (std::size_t i = 0; i < nb; ++i) Bd[i] = B[i];
    }
  }
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) {
      T s = Acc ? C[m * ldc + n] : T{};
      if (bias) s = s + bias[n];
      const T* a = A + m * sam;
      const T* b = B + n * sbn;
      if constexpr (exact) {
        if (std::is_constant_evaluated()) {
          s = exact_fma_dot<K, sak, sbk>(Ad + m * sam, Bd + n * sbn, s);
        } else {
          for (std::size_t k = 0; k < K; ++k) s = simd::scalar<T>::fmadd(a[k * sak], b[k * sbk], s);
        }
      } else if constexpr (fused) {
        for (std::size_t k = 0; k < K; ++k) s = simd::scalar<T>::fmadd(a[k * sak], b[k * sbk], s);
      } else {
        for (std::size_t k = 0; k < K; ++k) s = a[k * sak] * b[k * sbk] + s;
      }
      C[m * ldc + n] = s;
    }
  if constexpr (exact) {
    if (std::is_constant_evaluated()) {
      delete[] Ad;
      delete[] Bd;
    }
  }
}
}  // namespace detail

// C[m,n] (=|+=) sum_k A[m,k] B[k,n] (+ bias[n])        A: (M,K) lda, B: (K,N) ldb, C: (M,N) ldc
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb, std::size_t ldc, bool Acc,
          class T>
constexpr void gemm_nn(T* C, const T* A, const T* B, const T* bias) {
  detail::product<M, N, K, ldc, lda, 1, ldb, 1, Acc>(C, A, B, bias);
}

// C[m,n] (=|+=) sum_k A[m,k] B[n,k]                    A: (M,K) lda, B: (N,K) ldb, C: (M,N) ldc
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb, std::size_t ldc, bool Acc,
          class T>
constexpr void gemm_nt(T* C, const T* A, const T* B) {
  detail::product<M, N, K, ldc, lda, 1, 1, ldb, Acc>(C, A, B, static_cast<const T*>(nullptr));
}

// C[m,n] (=|+=) sum_k A[k,m] B[k,n]                    A: (K,M) lda, B: (K,N) ldb, C: (M,N) ldc
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb, std::size_t ldc, bool Acc,
          class T>
constexpr void gemm_tn(T* C, const T* A, const T* B) {
  detail::product<M, N, K, ldc, 1, lda, ldb, 1, Acc>(C, A, B, static_cast<const T*>(nullptr));
}

}  // namespace sf::kernels::ref
