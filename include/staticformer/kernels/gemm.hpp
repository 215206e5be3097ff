// staticformer/kernels/gemm.hpp — the matrix products backprop needs, on compile-time shapes.
//
//   gemm_nn: C (=|+=) A · B (+ bias)     forward  Y = X·W + b,  attention O = P·V,  dQ = dS·K
//   gemm_nt: C (=|+=) A · Bᵀ             backward dX = dY·Wᵀ,   attention S = Q·Kᵀ, dP = dO·Vᵀ
//   gemm_tn: C (=|+=) Aᵀ · B             backward dW += Xᵀ·dY,  attention dV = Pᵀ·dO, dK = dSᵀ·Q
//
// Shapes and row strides are template arguments. During constant evaluation the
// naive reference runs (gemm_ref.hpp); at run time the register-blocked SIMD
// kernel for the chosen backend does. `*_with<Backend>` picks a backend
// explicitly (tests use it to check every backend against the reference).
#pragma once
#include <cstddef>
#include <type_traits>

#include "staticformer/kernels/gemm_ref.hpp"
#include "staticformer/simd.hpp"

namespace sf::kernels {

namespace detail {
template <class Backend, class T>
inline constexpr bool backend_fits = std::is_same_v<typename Backend::value_type, T>;
}

template <class Backend, std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb,
          std::size_t ldc, bool Acc, class T>
void gemm_nn_with(T* C, const T* A, const T* B, const T* bias) {
  static_assert(detail::backend_fits<Backend, T>, "sf::kernels::gemm_nn_with: backend element type differs from T");
  ref::gemm_nn<M, N, K, lda, ldb, ldc, Acc>(C, A, B, bias);
}
template <class Backend, std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb,
          std::size_t ldc, bool Acc, class T>
void gemm_nt_with(T* C, const T* A, const T* B) {
  static_assert(detail::backend_fits<Backend, T>, "sf::kernels::gemm_nt_with: backend element type differs from T");
  ref::gemm_nt<M, N, K, lda, ldb, ldc, Acc>(C, A, B);
}
template <class Backend, std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb,
          std::size_t ldc, bool Acc, class T>
void gemm_tn_with(T* C, const T* A, const T* B) {
  static_assert(detail::backend_fits<Backend, T>, "sf::kernels::gemm_tn_with: backend element type differs from T");
  ref::gemm_tn<M, N, K, lda, ldb, ldc, Acc>(C, A, B);
}

// C (M,N) (=|+=) A (M,K) · B (K,N) (+ bias (N))
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda = K, std::size_t ldb = N,
          std::size_t ldc = N, bool Acc = false, class T>
constexpr void gemm_nn(T* C, const T* A, const T* B, const T* bias = nullptr) {
  if (std::is_constant_evaluated()) ref::gemm_nn<M, N, K, lda, ldb, ldc, Acc>(C, A, B, bias);
  else gemm_nn_with<simd::native<T>, M, N, K, lda, ldb, ldc, Acc>(C, A, B, bias);
}
// C (M,N) (=|+=) A (M,K) · B (N,K)ᵀ
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda = K, std::size_t ldb = K,
          std::size_t ldc = N, bool Acc = false, class T>
constexpr void gemm_nt(T* C, const T* A, const T* B) {
  if (std::is_constant_evaluated()) ref::gemm_nt<M, N, K, lda, ldb, ldc, Acc>(C, A, B);
  else gemm_nt_with<simd::native<T>, M, N, K, lda, ldb, ldc, Acc>(C, A, B);
}
// C (M,N) (=|+=) A (K,M)ᵀ · B (K,N)
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda = M, std::size_t ldb = N,
          std::size_t ldc = N, bool Acc = false, class T>
constexpr void gemm_tn(T* C, const T* A, const T* B) {
  if (std::is_constant_evaluated()) ref::gemm_tn<M, N, K, lda, ldb, ldc, Acc>(C, A, B);
  else gemm_tn_with<simd::native<T>, M, N, K, lda, ldb, ldc, Acc>(C, A, B);
}

}  // namespace sf::kernels
