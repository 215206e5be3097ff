// staticformer/kernels/gemm_ref.hpp — naive reference matrix products.
//
// Every optimised kernel in gemm.hpp has its plain triple loop here; the tests run
// both on many shapes (odd ones included) and compare. These are also the
// constant-evaluation path. All matrices are row-major with a compile-time row
// stride (ld*), so a head's columns inside a (T, D) activation are addressed
// without copies.
//
// Gradient rule of the library: parameter gradients accumulate (+=), activation
// gradients are written (=). `Acc` selects which one a product does.
#pragma once
#include <cstddef>

namespace sf::kernels::ref {

// C[m,n] (=|+=) sum_k A[m,k] B[k,n] (+ bias[n])        A: (M,K) lda, B: (K,N) ldb, C: (M,N) ldc
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb, std::size_t ldc, bool Acc,
          class T>
constexpr void gemm_nn(T* C, const T* A, const T* B, const T* bias) {
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) {
      T s = bias ? bias[n] : T{};
      for (std::size_t k = 0; k < K; ++k) s += A[m * lda + k] * B[k * ldb + n];
      C[m * ldc + n] = Acc ? C[m * ldc + n] + s : s;
    }
}

// C[m,n] (=|+=) sum_k A[m,k] B[n,k]                    A: (M,K) lda, B: (N,K) ldb, C: (M,N) ldc
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb, std::size_t ldc, bool Acc,
          class T>
constexpr void gemm_nt(T* C, const T* A, const T* B) {
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) {
      T s{};
      for (std::size_t k = 0; k < K; ++k) s += A[m * lda + k] * B[n * ldb + k];
      C[m * ldc + n] = Acc ? C[m * ldc + n] + s : s;
    }
}

// C[m,n] (=|+=) sum_k A[k,m] B[k,n]                    A: (K,M) lda, B: (K,N) ldb, C: (M,N) ldc
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb, std::size_t ldc, bool Acc,
          class T>
constexpr void gemm_tn(T* C, const T* A, const T* B) {
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) {
      T s{};
      for (std::size_t k = 0; k < K; ++k) s += A[k * lda + m] * B[k * ldb + n];
      C[m * ldc + n] = Acc ? C[m * ldc + n] + s : s;
    }
}

}  // namespace sf::kernels::ref
