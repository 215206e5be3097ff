// staticformer/matmul.hpp — shape-checked matrix products on tensors and typed views.
//
//   sf::matmul(y, x, w);                      // y  = x·w         x: (..., K)  w: (K, N)  y: (..., N)
//   sf::matmul(y, x, w, b);                   // y  = x·w + b     b: (N), or sf::none (no bias)
//   sf::matmul_nt(s, q, k);                   // s  = q·kᵀ        q: (..., K)  k: (N, K)  s: (..., N)
//   sf::matmul_tn(dw, x, dy, sf::accumulate); // dw += xᵀ·dy      x: (..., K)  dy: (..., N)  dw: (K, N)
//   sf::matmul_backward_input(dx, dy, w);     // dx  = dy·wᵀ   (written)
//   sf::matmul_backward_weight(dw, x, dy);    // dw += xᵀ·dy   (accumulated)
//   sf::matmul_backward_bias(db, dy);         // db += Σ_rows dy (accumulated)
//   sf::matmul<sf::precision_kind::bf16>(y, x, w, b);   // the same with bf16 operands, float32 sums
//                                                        // (every product but matmul_backward_bias)
//
// Every operand is a tensor or a typed view (sf::view): a matrix whose rows are named by
// axes (flattened), whose columns are one axis, with a compile-time row stride. A head's
// (T, d_k) slice of a (B, T, D) activation is such a view (sf::head), so is a block of rows
// of the causal attention (view.rows<R0, N>()): the products inside the layers are checked
// axis by axis, exactly like the public ones. Every shape rule is checked here, at the entry
// point, by SF_SHAPE_ERROR (shape_error.hpp): the first error line names the operation, the
// shapes of the operands (X is (T=64, D=64), ...) and the fix; the compiler's "required from"
// lines name the tensor types. The raw kernels (kernels/gemm.hpp) are reached
// only through these entry points.
#pragma once
#include <cstddef>
#include <type_traits>
#include <utility>

#include "staticformer/config.hpp"
#include "staticformer/kernels/bias.hpp"
#include "staticformer/kernels/gemm.hpp"
#include "staticformer/kernels/gemm_bf16.hpp"
#include "staticformer/reflect.hpp"
#include "staticformer/shape_error.hpp"
#include "staticformer/tensor.hpp"

namespace sf {

// ---------------------------------------------------------------- typed views
// A strided matrix: rows named by the axes of Rows (an sf::shape, flattened row-major),
// columns by the axis Col, row stride LD elements. T may be const (a read-only view).
template <class T, class Rows, class Col, std::size_t LD = Col::size>
struct view {
  static_assert(is_axis_v<Col>, "sf::view<T, Rows, Col, LD>: Col must be an sf::axis");
  static_assert(LD >= Col::size || Rows::size <= 1,
                "sf::view: the row stride LD is shorter than a row (Col::size); rows would overlap");
  using value_type = std::remove_const_t<T>;
  using rows_shape = Rows;
  using col_axis = Col;
  static constexpr std::size_t rows = Rows::size, cols = Col::size, ld = LD;

  T* ptr;

  constexpr T* data() const noexcept { return ptr; }
  constexpr T* row(std::size_t r) const noexcept { return ptr + r * LD; }
  constexpr T& operator()(std::size_t r, std::size_t c) const noexcept { return ptr[r * LD + c]; }

  // Rows [R0, R0+N) of a view with one row axis: the axis keeps its identity, its size is N.
  template <std::size_t R0, std::size_t N>
  constexpr auto rows_at() const noexcept {
    static_assert(Rows::rank == 1, "sf::view::rows_at: only a view with one row axis can be cut into rows");
    static_assert(R0 + N <= rows, "sf::view::rows_at<R0, N>: rows [R0, R0+N) run past the view's rows");
    using A = typename Rows::template axis_t<0>;
    return view<T, shape<axis<typename A::tag, N>>, Col, LD>{ptr + R0 * LD};
  }
  // Columns [C0, C0+N): the column axis keeps its identity, its size is N.
  template <std::size_t C0, std::size_t N>
  constexpr auto cols_at() const noexcept {
    static_assert(C0 + N <= cols, "sf::view::cols_at<C0, N>: columns [C0, C0+N) run past the view's columns");
    return view<T, Rows, axis<typename Col::tag, N>, LD>{ptr + C0};
  }
  // Rows [R0, R0+NR) × columns [C0, C0+NC).
  template <std::size_t R0, std::size_t NR, std::size_t C0, std::size_t NC>
  constexpr auto block() const noexcept {
    return rows_at<R0, NR>().template cols_at<C0, NC>();
  }
  // A read-only view of the same matrix.
  constexpr view<const value_type, Rows, Col, LD> as_const() const noexcept { return {ptr}; }
};

template <class X> struct is_view : std::false_type {};
template <class T, class R, class Col, std::size_t LD> struct is_view<view<T, R, Col, LD>> : std::true_type {};
template <class X> inline constexpr bool is_view_v = is_view<std::remove_cvref_t<X>>::value;

namespace detail {
template <class X> using rm = std::remove_cvref_t<X>;

// Leading axes of a tensor (all but the last) as a shape.
template <class X> struct leading;
template <class T, class... A> struct leading<tensor<T, A...>> {
  template <std::size_t... I>
  static auto f(std::index_sequence<I...>) -> shape<nth_axis_t<I, A...>...>;
  using type = decltype(f(std::make_index_sequence<sizeof...(A) - 1>{}));
};
template <class X> using leading_t = typename leading<rm<X>>::type;

// Trailing axes of a tensor after the first K as a shape.
template <std::size_t K, class X> struct trailing;
template <std::size_t K, class T, class... A> struct trailing<K, tensor<T, A...>> {
  template <std::size_t... I>
  static auto f(std::index_sequence<I...>) -> shape<nth_axis_t<K + I, A...>...>;
  using type = decltype(f(std::make_index_sequence<sizeof...(A) - K>{}));
};
}  // namespace detail

// The full view of a tensor: its leading axes are the rows, its last axis the columns.
template <class T, class... A>
constexpr auto as_view(tensor<T, A...>& x) noexcept {
  using X = tensor<T, A...>;
  return view<T, detail::leading_t<X>, typename X::last_axis, X::cols>{x.data()};
}
template <class T, class... A>
constexpr auto as_view(const tensor<T, A...>& x) noexcept {
  using X = tensor<T, A...>;
  return view<const T, detail::leading_t<X>, typename X::last_axis, X::cols>{x.data()};
}

// The (rank-2) matrix x[i0, i1, ...] of a tensor of higher rank: its first axes are fixed,
// its last two remain. E.g. the (T, T) probabilities of (b, h) in a (B, H, T, T) tensor: at(p, b, h).
template <class X, class... I>
constexpr auto at(X& x, I... idx) noexcept {
  using U = std::remove_const_t<X>;
  static_assert(is_tensor_v<U>, "sf::at(x, i...): x must be an sf::tensor");
  static_assert(sizeof...(I) + 2 == U::rank,
                "sf::at(x, i...): give one index for every axis but the last two; the result is the matrix "
                "over x's last two axes");
  using E = std::conditional_t<std::is_const_v<X>, const typename U::value_type, typename U::value_type>;
  using Rest = typename detail::trailing<sizeof...(I), U>::type;  // shape<Row, Col>
  return view<E, shape<typename Rest::template axis_t<0>>, typename U::last_axis, U::cols>{
      x.data() + U::offset(idx..., 0, 0)};
}

// Head h of row b of a (B, T, D) activation: the (T, d_k) view of columns h·d_k … (h+1)·d_k-1,
// row stride D, d_k = D / H. Its column axis is the head axis d_k, not D: a head view cannot be
// passed where a full-width activation is expected, nor the other way round.
template <std::size_t H, class X>
constexpr auto head(X& x, std::size_t b, std::size_t h) noexcept {
  using U = std::remove_const_t<X>;
  static_assert(is_tensor_v<U> && U::rank == 3,
                "sf::head<H>(x, b, h): x must be a (B, T, D) activation tensor");
  using Dax = typename U::last_axis;
  static_assert(std::is_same_v<typename Dax::tag, tag::model>,
                "sf::head<H>(x, b, h): x's last axis must be the model axis D (heads are column slices of D)");
  static_assert(Dax::size % H == 0, "sf::head<H>(x, b, h): H must divide D");
  using E = std::conditional_t<std::is_const_v<X>, const typename U::value_type, typename U::value_type>;
  using Tax = typename U::template axis_t<1>;
  constexpr std::size_t dk = Dax::size / H;
  return view<E, shape<Tax>, HeadDim<dk>, Dax::size>{x.data() + U::offset(b, 0, 0) + h * dk};
}

// Selects "accumulate" (C += ...) instead of "overwrite" (C = ...) in the products.
struct accumulate_t {};
inline constexpr accumulate_t accumulate{};

namespace detail {
// What the products need to know of an operand, tensor or view.
template <class X> struct matrix_traits {
  static constexpr bool ok = false;
};
template <class T, class... A> struct matrix_traits<tensor<T, A...>> {
  static constexpr bool ok = true;
  static constexpr bool writable = true;
  static constexpr std::size_t rank = sizeof...(A);
  using value_type = T;
  using rows_shape = leading_t<tensor<T, A...>>;
  using col = typename tensor<T, A...>::last_axis;
  using first = nth_axis_t<0, A...>;
  static constexpr std::size_t rows = rows_shape::size, cols = col::size, ld = cols;
};
template <class T, class R, class Col, std::size_t LD> struct matrix_traits<view<T, R, Col, LD>> {
  static constexpr bool ok = true;
  static constexpr bool writable = !std::is_const_v<T>;
  static constexpr std::size_t rank = R::rank + 1;
  using value_type = std::remove_const_t<T>;
  using rows_shape = R;
  using col = Col;
  using first = typename R::template axis_t<0>;
  static constexpr std::size_t rows = R::size, cols = Col::size, ld = LD;
};
template <class X> using mt = matrix_traits<rm<X>>;

// An operand as a shape error names it: role<shape_error::X_is, X> is X_is<T<64>, D<64>> for a
// (T, D) tensor or view (shape_error.hpp). Only named where a check fails.
template <class X> struct operand_shape;
template <class T, class... A> struct operand_shape<tensor<T, A...>> { using type = shape<A...>; };
template <class T, class... R, class Col, std::size_t LD> struct operand_shape<view<T, shape<R...>, Col, LD>> {
  using type = shape<R..., Col>;
};
template <template <class...> class Role, class X>
using role = shape_error::role_t<Role, typename operand_shape<rm<X>>::type>;
template <class X, class W>
using matmul_error_xw = shape_error::matmul<role<shape_error::X_is, X>, role<shape_error::W_is, W>>;
template <class Y, class X, class W>
using matmul_error_yxw =
    shape_error::matmul<role<shape_error::Y_is, Y>, role<shape_error::X_is, X>, role<shape_error::W_is, W>>;
template <class A, class B>
using matmul_nt_error_ab = shape_error::matmul_nt<role<shape_error::A_is, A>, role<shape_error::B_is, B>>;
template <class C, class A, class B>
using matmul_nt_error_cab =
    shape_error::matmul_nt<role<shape_error::C_is, C>, role<shape_error::A_is, A>, role<shape_error::B_is, B>>;
template <class A, class B>
using matmul_tn_error_ab = shape_error::matmul_tn<role<shape_error::A_is, A>, role<shape_error::B_is, B>>;
template <class C, class A, class B>
using matmul_tn_error_cab =
    shape_error::matmul_tn<role<shape_error::C_is, C>, role<shape_error::A_is, A>, role<shape_error::B_is, B>>;
template <class X> inline constexpr bool is_matrix_v = mt<X>::ok && (mt<X>::rank >= 2);

template <class A, class B>
inline constexpr bool same_axis_v = std::is_same_v<A, B>;
template <class A, class B>
inline constexpr bool same_size_other_identity_v = (A::size == B::size) && !std::is_same_v<A, B>;

// Checks shared by matmul and its backward: X (..., K) · W (K, N) -> Y (..., N).
template <class Y, class X, class W>
constexpr bool check_matmul() {
  static_assert(mt<Y>::ok && mt<X>::ok && mt<W>::ok,
                "sf::matmul(Y, X, W): Y, X and W must all be sf::tensor or sf::view");
  if constexpr (mt<Y>::ok && mt<X>::ok && mt<W>::ok) {
    if constexpr (mt<W>::rank != 2)
      SF_SHAPE_ERROR("sf::matmul(Y, X, W): wrong rank - W must be a matrix of rank 2 with axes [in, out]; "
                     "reshape the weight to (K, N)",
                     matmul_error_xw<X, W>);
    else if constexpr (mt<X>::rank < 2)
      SF_SHAPE_ERROR("sf::matmul(Y, X, W): wrong rank - X must have at least rank 2, (rows..., K)",
                     matmul_error_xw<X, W>);
    if constexpr (mt<W>::rank == 2 && mt<X>::rank >= 2) {
      using K = typename mt<X>::col;
      using Kw = typename mt<W>::first;
      if constexpr (same_size_other_identity_v<K, Kw>)
        SF_SHAPE_ERROR("sf::matmul(Y, X, W): the last axis of X and the first axis of W have the same size but "
                       "are different axes; pass the tensor whose last axis is the input axis of W, or transpose X",
                       matmul_error_xw<X, W>);
      else if constexpr (K::size != Kw::size)
        SF_SHAPE_ERROR("sf::matmul(Y, X, W): inner axis mismatch - the last axis of X must equal the first axis "
                       "of W (X is (..., K) and W is (K, N)); check which weight you passed or transpose it",
                       matmul_error_xw<X, W>);
      if constexpr (same_axis_v<K, Kw>) {
        if constexpr (mt<Y>::rank != mt<X>::rank)
          SF_SHAPE_ERROR("sf::matmul(Y, X, W): wrong rank - Y must have the same rank as X, (rows..., N)",
                         matmul_error_yxw<Y, X, W>);
        if constexpr (mt<Y>::rank == mt<X>::rank) {
          constexpr bool rows_ok = std::is_same_v<typename mt<Y>::rows_shape, typename mt<X>::rows_shape>;
          if constexpr (!rows_ok)
            SF_SHAPE_ERROR("sf::matmul(Y, X, W): the leading axes of Y must equal the leading axes of X "
                           "(rows...); the output keeps the rows of the input",
                           matmul_error_yxw<Y, X, W>);
          if constexpr (rows_ok) {
            constexpr bool cols_ok = std::is_same_v<typename mt<Y>::col, typename mt<W>::col>;
            if constexpr (!cols_ok)
              SF_SHAPE_ERROR("sf::matmul(Y, X, W): the last axis of Y must equal the second axis of W (N); "
                             "the output has the output width of W",
                             matmul_error_yxw<Y, X, W>);
            static_assert(mt<Y>::writable, "sf::matmul(Y, X, W): Y is a read-only view; pass a writable output");
            return cols_ok && mt<Y>::writable;
          }
        }
      }
    }
  }
  return false;
}

// C = A·Bᵀ:  A (..., K), B (N, K) -> C (..., N).
template <class Cm, class A, class B>
constexpr bool check_matmul_nt() {
  static_assert(mt<Cm>::ok && mt<A>::ok && mt<B>::ok,
                "sf::matmul_nt(C, A, B): C, A and B must all be sf::tensor or sf::view");
  if constexpr (mt<Cm>::ok && mt<A>::ok && mt<B>::ok) {
    if constexpr (mt<B>::rank != 2)
      SF_SHAPE_ERROR("sf::matmul_nt(C, A, B): wrong rank - B must be a matrix (N, K) of rank 2",
                     matmul_nt_error_ab<A, B>);
    else if constexpr (mt<A>::rank < 2)
      SF_SHAPE_ERROR("sf::matmul_nt(C, A, B): wrong rank - A must have at least rank 2, (rows..., K)",
                     matmul_nt_error_ab<A, B>);
    if constexpr (mt<B>::rank == 2 && mt<A>::rank >= 2) {
      using K = typename mt<A>::col;
      using Kb = typename mt<B>::col;
      if constexpr (same_size_other_identity_v<K, Kb>)
        SF_SHAPE_ERROR("sf::matmul_nt(C, A, B): the last axis of A and the last axis of B have the same size but "
                       "are different axes; C = A*B^T contracts the last axis of both, so both must be the same "
                       "axis",
                       matmul_nt_error_ab<A, B>);
      else if constexpr (K::size != Kb::size)
        SF_SHAPE_ERROR("sf::matmul_nt(C, A, B): inner axis mismatch - A is (..., K) and B is (N, K): their last "
                       "axes must be the same axis",
                       matmul_nt_error_ab<A, B>);
      if constexpr (same_axis_v<K, Kb>) {
        constexpr bool rows_ok = std::is_same_v<typename mt<Cm>::rows_shape, typename mt<A>::rows_shape>;
        if constexpr (!rows_ok)
          SF_SHAPE_ERROR("sf::matmul_nt(C, A, B): the leading axes of C must equal the leading axes of A (rows...)",
                         matmul_nt_error_cab<Cm, A, B>);
        if constexpr (rows_ok) {
          constexpr bool cols_ok = std::is_same_v<typename mt<Cm>::col, typename mt<B>::first>;
          if constexpr (!cols_ok)
            SF_SHAPE_ERROR("sf::matmul_nt(C, A, B): the last axis of C must equal the first axis of B (N); "
                           "C = A*B^T has one column per row of B",
                           matmul_nt_error_cab<Cm, A, B>);
          static_assert(mt<Cm>::writable, "sf::matmul_nt(C, A, B): C is a read-only view; pass a writable output");
          return cols_ok && mt<Cm>::writable;
        }
      }
    }
  }
  return false;
}

// C = Aᵀ·B:  A (rows..., K), B (rows..., N) -> C (K, N); the rows are summed over.
template <class Cm, class A, class B>
constexpr bool check_matmul_tn() {
  static_assert(mt<Cm>::ok && mt<A>::ok && mt<B>::ok,
                "sf::matmul_tn(C, A, B): C, A and B must all be sf::tensor or sf::view");
  if constexpr (mt<Cm>::ok && mt<A>::ok && mt<B>::ok) {
    using RA = typename mt<A>::rows_shape;
    using RB = typename mt<B>::rows_shape;
    constexpr bool rows_ok = std::is_same_v<RA, RB>;
    if constexpr (mt<Cm>::rank != 2)
      SF_SHAPE_ERROR("sf::matmul_tn(C, A, B): wrong rank - C = A^T*B must be a matrix (K, N)",
                     matmul_tn_error_cab<Cm, A, B>);
    else if constexpr (RA::size != RB::size)
      SF_SHAPE_ERROR("sf::matmul_tn(C, A, B): A and B must have the same rows (the axes C = A^T*B sums over); "
                     "their row counts differ",
                     matmul_tn_error_ab<A, B>);
    else if constexpr (!rows_ok)
      SF_SHAPE_ERROR("sf::matmul_tn(C, A, B): the rows of A and B have the same count but are different axes; "
                     "C = A^T*B sums over rows that must be the same axes in both",
                     matmul_tn_error_ab<A, B>);
    if constexpr (mt<Cm>::rank == 2 && rows_ok) {
      constexpr bool first_ok = std::is_same_v<typename mt<Cm>::first, typename mt<A>::col>;
      if constexpr (!first_ok)
        SF_SHAPE_ERROR("sf::matmul_tn(C, A, B): the first axis of C must equal the last axis of A (K); "
                       "C = A^T*B is (K, N) - check the order of A and B",
                       matmul_tn_error_cab<Cm, A, B>);
      if constexpr (first_ok) {
        constexpr bool cols_ok = std::is_same_v<typename mt<Cm>::col, typename mt<B>::col>;
        if constexpr (!cols_ok)
          SF_SHAPE_ERROR("sf::matmul_tn(C, A, B): the last axis of C must equal the last axis of B (N)",
                         matmul_tn_error_cab<Cm, A, B>);
        static_assert(mt<Cm>::writable, "sf::matmul_tn(C, A, B): C is a read-only view; pass a writable output");
        return cols_ok && mt<Cm>::writable;
      }
    }
  }
  return false;
}

// The bias of y = x·w + b: a vector over W's output axis, (N). Separate checks, so that a
// non-tensor or a matrix bias gives one message rather than a cascade. sf::none: no bias.
template <class Bv, class W>
constexpr bool check_bias() {
  if constexpr (std::is_same_v<rm<Bv>, none>) {
    return true;
  } else {
    static_assert(is_tensor_v<Bv>, "sf::matmul(Y, X, W, b): the bias must be an sf::tensor, shape (N)");
    if constexpr (is_tensor_v<Bv>) {
      if constexpr (rm<Bv>::rank != 1)
        SF_SHAPE_ERROR("sf::matmul(Y, X, W, b): wrong rank - the bias must be a vector (rank 1) over the output "
                       "axis of W, shape (N)",
                       shape_error::matmul_bias<role<shape_error::b_is, Bv>, role<shape_error::W_is, W>>);
      if constexpr (rm<Bv>::rank == 1) {
        if constexpr (!std::is_same_v<typename rm<Bv>::first_axis, typename mt<W>::col>)
          SF_SHAPE_ERROR("sf::matmul(Y, X, W, b): the bias must be a vector over the output axis of W, shape (N)",
                         shape_error::matmul_bias<role<shape_error::b_is, Bv>, role<shape_error::W_is, W>>);
        return std::is_same_v<typename rm<Bv>::first_axis, typename mt<W>::col>;
      }
    }
    return false;
  }
}
// The kernels, on checked operands (M rows of C, N columns, K the contracted extent), in
// precision P (float32, or bf16 operands with float32 sums: kernels/gemm_bf16.hpp).
template <precision_kind P, class Cm>
constexpr void check_precision() {
  static_assert(P == precision_kind::f32 || std::is_same_v<typename mt<Cm>::value_type, float>,
                "sf::matmul<precision_kind::bf16>: bf16 products take float tensors (they round the operands "
                "to bf16 themselves)");
}
template <bool Acc, precision_kind P = precision_kind::f32, class Cm, class A, class B, class Bias = none>
constexpr void run_nn(Cm& c, const A& a, const B& b, const Bias& bias = {}) {
  check_precision<P, Cm>();
  using E = typename mt<Cm>::value_type;
  const E* bp = nullptr;
  if constexpr (!std::is_same_v<rm<Bias>, none>) bp = bias.data();
  if constexpr (P == precision_kind::bf16)
    kernels::gemm_nn_bf16<mt<Cm>::rows, mt<Cm>::cols, mt<A>::cols, mt<A>::ld, mt<B>::ld, mt<Cm>::ld, Acc>(
        c.data(), a.data(), b.data(), bp);
  else
    kernels::gemm_nn<mt<Cm>::rows, mt<Cm>::cols, mt<A>::cols, mt<A>::ld, mt<B>::ld, mt<Cm>::ld, Acc>(
        c.data(), a.data(), b.data(), bp);
}
template <bool Acc, precision_kind P = precision_kind::f32, class Cm, class A, class B>
constexpr void run_nt(Cm& c, const A& a, const B& b) {
  check_precision<P, Cm>();
  if constexpr (P == precision_kind::bf16)
    kernels::gemm_nt_bf16<mt<Cm>::rows, mt<Cm>::cols, mt<A>::cols, mt<A>::ld, mt<B>::ld, mt<Cm>::ld, Acc>(
        c.data(), a.data(), b.data());
  else
    kernels::gemm_nt<mt<Cm>::rows, mt<Cm>::cols, mt<A>::cols, mt<A>::ld, mt<B>::ld, mt<Cm>::ld, Acc>(
        c.data(), a.data(), b.data());
}
template <bool Acc, precision_kind P = precision_kind::f32, class Cm, class A, class B>
constexpr void run_tn(Cm& c, const A& a, const B& b) {
  check_precision<P, Cm>();
  if constexpr (P == precision_kind::bf16)
    kernels::gemm_tn_bf16<mt<Cm>::rows, mt<Cm>::cols, mt<A>::rows, mt<A>::ld, mt<B>::ld, mt<Cm>::ld, Acc>(
        c.data(), a.data(), b.data());
  else
    kernels::gemm_tn<mt<Cm>::rows, mt<Cm>::cols, mt<A>::rows, mt<A>::ld, mt<B>::ld, mt<Cm>::ld, Acc>(
        c.data(), a.data(), b.data());
}
}  // namespace detail

// Overwrite (C = ...) or accumulate (C += ...): the optional last argument of the products.
struct overwrite_t {};
inline constexpr overwrite_t overwrite{};
namespace detail {
template <class M>
inline constexpr bool is_mode_v = std::is_same_v<rm<M>, overwrite_t> || std::is_same_v<rm<M>, accumulate_t>;
template <class M> inline constexpr bool acc_v = std::is_same_v<rm<M>, accumulate_t>;
}  // namespace detail

// y = x·w          x: (..., K)  w: (K, N)  y: (..., N)
// y = x·w + b      the fourth argument a bias b: (N), or sf::none for no bias
// y += x·w         the fourth argument sf::accumulate
// (matmul<P>: precision P of the product, float32 unless said — the same for the others below)
template <precision_kind P = precision_kind::f32, class Y, class X, class W, class Extra = overwrite_t>
constexpr void matmul(Y&& y, const X& x, const W& w, const Extra& extra = {}) {
  if constexpr (detail::check_matmul<Y, X, W>()) {
    if constexpr (detail::is_mode_v<Extra>) detail::run_nn<detail::acc_v<Extra>, P>(y, x, w);
    else if constexpr (detail::check_bias<Extra, W>()) detail::run_nn<false, P>(y, x, w, extra);
  }
}

// The read-only form of an operand: a view's as_const(), a tensor as a const reference.
template <class X>
constexpr decltype(auto) input(const X& x) noexcept {
  if constexpr (is_view_v<X>) return x.as_const();
  else return (x);
}

// The product of a layer's linear maps, y = x·w + b, as a policy: a layer's forward takes one,
// so that the same forward serves training (sf::linear<P>: the typed matmul in precision P) and
// decoding (the decoder's own policy: the same float products, or int8 weights; decode.hpp).
//   lin(y, x, w, b)                     y = x·w + b (b: a bias or sf::none)
//   lin.qkv(q, k, v, x, wq, bq, ...)    three products of one input (attention's projections)
template <precision_kind P = precision_kind::f32>
struct linear {
  template <class Y, class X, class W, class Bias>
  constexpr void operator()(Y&& y, const X& x, const W& w, const Bias& b) const {
    matmul<P>(y, input(x), w, b);
  }
  // (k and v may be narrower than q: grouped-query attention)
  template <class Yq, class Ykv, class X, class Wq, class Wkv, class Bq, class Bkv>
  constexpr void qkv(Yq&& q, Ykv&& k, Ykv&& v, const X& x, const Wq& wq, const Bq& bq, const Wkv& wk, const Bkv& bk,
                     const Wkv& wv, const Bkv& bv) const {
    (*this)(q, x, wq, bq);
    (*this)(k, x, wk, bk);
    (*this)(v, x, wv, bv);
  }
};

// c (=|+=) a·bᵀ     a: (..., K)  b: (N, K)  c: (..., N)
template <precision_kind P = precision_kind::f32, class Cm, class A, class B, class Mode = overwrite_t>
constexpr void matmul_nt(Cm&& c, const A& a, const B& b, Mode = {}) {
  static_assert(detail::is_mode_v<Mode>, "sf::matmul_nt(C, A, B, mode): mode is sf::overwrite or sf::accumulate");
  if constexpr (detail::check_matmul_nt<Cm, A, B>()) detail::run_nt<detail::acc_v<Mode>, P>(c, a, b);
}

// c (=|+=) aᵀ·b     a: (rows..., K)  b: (rows..., N)  c: (K, N)
template <precision_kind P = precision_kind::f32, class Cm, class A, class B, class Mode = overwrite_t>
constexpr void matmul_tn(Cm&& c, const A& a, const B& b, Mode = {}) {
  static_assert(detail::is_mode_v<Mode>, "sf::matmul_tn(C, A, B, mode): mode is sf::overwrite or sf::accumulate");
  if constexpr (detail::check_matmul_tn<Cm, A, B>()) detail::run_tn<detail::acc_v<Mode>, P>(c, a, b);
}

// dx (=|+=) dy·wᵀ   dy: (..., N)  w: (K, N)  dx: (..., K)   (written unless sf::accumulate)
template <precision_kind P = precision_kind::f32, class DX, class DY, class W, class Mode = overwrite_t>
constexpr void matmul_backward_input(DX&& dx, const DY& dy, const W& w, Mode = {}) {
  static_assert(detail::is_mode_v<Mode>,
                "sf::matmul_backward_input(dx, dy, w, mode): mode is sf::overwrite or sf::accumulate");
  if constexpr (detail::check_matmul<DY, DX, W>()) detail::run_nt<detail::acc_v<Mode>, P>(dx, dy, w);
}

// dw += xᵀ·dy (accumulated)   x: (..., K)  dy: (..., N)  dw: (K, N)
template <precision_kind P = precision_kind::f32, class DW, class X, class DY>
constexpr void matmul_backward_weight(DW&& dw, const X& x, const DY& dy) {
  if constexpr (detail::check_matmul<DY, X, DW>()) detail::run_tn<true, P>(dw, x, dy);
}

// db += Σ_rows dy (accumulated)   dy: (..., N)  db: (N); nothing when db is sf::none (no bias)
template <class DB, class DY>
constexpr void matmul_backward_bias(DB& db, const DY& dy) {
  if constexpr (!std::is_same_v<detail::rm<DB>, none>) {
    static_assert(is_tensor_v<DB> && detail::mt<DY>::ok,
                  "sf::matmul_backward_bias(db, dy): db must be an sf::tensor, dy an sf::tensor or sf::view");
    if constexpr (is_tensor_v<DB> && detail::mt<DY>::ok) {
      if constexpr (detail::rm<DB>::rank != 1 ||
                    !std::is_same_v<typename detail::rm<DB>::first_axis, typename detail::mt<DY>::col>)
        SF_SHAPE_ERROR("sf::matmul_backward_bias(db, dy): db must be a vector over the last axis of dy, shape (N)",
                       shape_error::matmul_backward_bias<detail::role<shape_error::db_is, DB>,
                                                         detail::role<shape_error::dy_is, DY>>);
    }
    static_assert(detail::mt<DY>::ld == detail::mt<DY>::cols,
                  "sf::matmul_backward_bias(db, dy): dy must be contiguous (row stride = its width)");
    kernels::bias_backward<detail::mt<DY>::rows, detail::mt<DY>::cols>(db.data(), dy.data());
  }
}

}  // namespace sf
