// staticformer/matmul.hpp — shape-checked matrix products on tensors.
//
//   sf::matmul(y, x, w);            // y = x·w          x: (..., K)  w: (K, N)  y: (..., N)
//   sf::matmul(y, x, w, b);         // y = x·w + b      b: (N)
//   sf::matmul_backward_input(dx, dy, w);   // dx  = dy·wᵀ   (written)
//   sf::matmul_backward_weight(dw, x, dy);  // dw += xᵀ·dy   (accumulated)
//   sf::matmul_backward_bias(db, dy);       // db += Σ_rows dy (accumulated)
//
// Leading axes of x are flattened into rows. Every shape rule is a static_assert
// here, at the public entry point, with a message that names the operation and the
// fix; the compiler's "required from" lines name both shapes.
#pragma once
#include <cstddef>
#include <type_traits>
#include <utility>

#include "staticformer/kernels/bias.hpp"
#include "staticformer/kernels/gemm.hpp"
#include "staticformer/tensor.hpp"

namespace sf {

namespace detail {
template <class X> using rm = std::remove_cvref_t<X>;

// Leading axes of X (all but the last) as a shape.
template <class X> struct leading;
template <class T, class... A> struct leading<tensor<T, A...>> {
  template <std::size_t... I>
  static auto f(std::index_sequence<I...>) -> shape<nth_axis_t<I, A...>...>;
  using type = decltype(f(std::make_index_sequence<sizeof...(A) - 1>{}));
};
template <class X> using leading_t = typename leading<rm<X>>::type;

template <class A, class B>
inline constexpr bool same_axis_v = std::is_same_v<A, B>;
template <class A, class B>
inline constexpr bool same_size_other_identity_v = (A::size == B::size) && !std::is_same_v<A, B>;

// Checks shared by matmul and its backward: X (..., K) · W (K, N) -> Y (..., N).
template <class Y, class X, class W>
constexpr bool check_matmul() {
  static_assert(is_tensor_v<Y> && is_tensor_v<X> && is_tensor_v<W>,
                "sf::matmul(Y, X, W): Y, X and W must all be sf::tensor");
  if constexpr (is_tensor_v<Y> && is_tensor_v<X> && is_tensor_v<W>) {
    static_assert(rm<W>::rank == 2,
                  "sf::matmul(Y, X, W): wrong rank — W must be a matrix of rank 2 with axes [in, out]; "
                  "reshape the weight to (K, N)");
    static_assert(rm<X>::rank >= 2,
                  "sf::matmul(Y, X, W): wrong rank — X must have at least rank 2, (rows..., K)");
    if constexpr (rm<W>::rank == 2 && rm<X>::rank >= 2) {
      using K = typename rm<X>::last_axis;
      using Kw = typename rm<W>::first_axis;
      static_assert(!same_size_other_identity_v<K, Kw>,
                    "sf::matmul(Y, X, W): X's last axis and W's first axis have the same size but are "
                    "different axes (e.g. the sequence axis T where the model axis D is expected); pass the "
                    "tensor whose last axis is W's input axis, or transpose X");
      static_assert(K::size == Kw::size,
                    "sf::matmul(Y, X, W): inner axis mismatch — X's last axis must equal W's first axis "
                    "(X is (..., K) and W is (K, N)); check which weight you passed or transpose it");
      if constexpr (same_axis_v<K, Kw>) {
        static_assert(rm<Y>::rank == rm<X>::rank,
                      "sf::matmul(Y, X, W): wrong rank — Y must have the same rank as X, (rows..., N)");
        if constexpr (rm<Y>::rank == rm<X>::rank) {
          static_assert(std::is_same_v<leading_t<Y>, leading_t<X>>,
                        "sf::matmul(Y, X, W): Y's leading axes must equal X's leading axes (rows...); "
                        "the output keeps the rows of the input");
          static_assert(std::is_same_v<typename rm<Y>::last_axis, typename rm<W>::template axis_t<1>>,
                        "sf::matmul(Y, X, W): Y's last axis must equal W's second axis (N); "
                        "the output has W's output width");
          return std::is_same_v<leading_t<Y>, leading_t<X>> &&
                 std::is_same_v<typename rm<Y>::last_axis, typename rm<W>::template axis_t<1>>;
        }
      }
    }
  }
  return false;
}

// The bias of y = x·w + b: a vector over W's output axis, (N). Separate checks, so that a
// non-tensor or a matrix bias gives one message rather than a cascade.
template <class Bv, class W>
constexpr bool check_bias() {
  static_assert(is_tensor_v<Bv>, "sf::matmul(Y, X, W, b): the bias must be an sf::tensor, shape (N)");
  if constexpr (is_tensor_v<Bv>) {
    static_assert(rm<Bv>::rank == 1,
                  "sf::matmul(Y, X, W, b): wrong rank — the bias must be a vector (rank 1) over W's output axis, "
                  "shape (N)");
    if constexpr (rm<Bv>::rank == 1) {
      static_assert(std::is_same_v<typename rm<Bv>::first_axis, typename rm<W>::template axis_t<1>>,
                    "sf::matmul(Y, X, W, b): the bias must be a vector over W's output axis, shape (N)");
      return std::is_same_v<typename rm<Bv>::first_axis, typename rm<W>::template axis_t<1>>;
    }
  }
  return false;
}
}  // namespace detail

// y = x·w   x: (..., K)  w: (K, N)  y: (..., N)
template <class Y, class X, class W>
constexpr void matmul(Y& y, const X& x, const W& w) {
  if constexpr (detail::check_matmul<Y, X, W>()) {
    constexpr std::size_t M = X::rows, K = X::cols, N = W::cols;
    kernels::gemm_nn<M, N, K>(y.data(), x.data(), w.data());
  }
}

// y = x·w + b   b: (N)
template <class Y, class X, class W, class Bv>
constexpr void matmul(Y& y, const X& x, const W& w, const Bv& b) {
  if constexpr (detail::check_matmul<Y, X, W>()) {
    if constexpr (detail::check_bias<Bv, W>()) {
      constexpr std::size_t M = X::rows, K = X::cols, N = W::cols;
      kernels::gemm_nn<M, N, K>(y.data(), x.data(), w.data(), b.data());
    }
  }
}

// dx = dy·wᵀ (written)   dy: (..., N)  w: (K, N)  dx: (..., K)
template <class DX, class DY, class W>
constexpr void matmul_backward_input(DX& dx, const DY& dy, const W& w) {
  if constexpr (detail::check_matmul<DY, DX, W>()) {
    constexpr std::size_t M = DX::rows, K = DX::cols, N = W::cols;
    kernels::gemm_nt<M, K, N>(dx.data(), dy.data(), w.data());
  }
}

// dw += xᵀ·dy (accumulated)   x: (..., K)  dy: (..., N)  dw: (K, N)
template <class DW, class X, class DY>
constexpr void matmul_backward_weight(DW& dw, const X& x, const DY& dy) {
  if constexpr (detail::check_matmul<DY, X, DW>()) {
    constexpr std::size_t M = X::rows, K = X::cols, N = DW::cols;
    kernels::gemm_tn<K, N, M, K, N, N, true>(dw.data(), x.data(), dy.data());
  }
}

// db += Σ_rows dy (accumulated)   dy: (..., N)  db: (N)
template <class DB, class DY>
constexpr void matmul_backward_bias(DB& db, const DY& dy) {
  static_assert(is_tensor_v<DB> && is_tensor_v<DY> && detail::rm<DB>::rank == 1 &&
                    std::is_same_v<typename detail::rm<DB>::first_axis, typename detail::rm<DY>::last_axis>,
                "sf::matmul_backward_bias(db, dy): db must be a vector over dy's last axis, shape (N)");
  kernels::bias_backward<DY::rows, DY::cols>(db.data(), dy.data());
}

}  // namespace sf
