// staticformer/tensor.hpp — a tensor whose extents are template parameters.
//
//   sf::tensor<float, sf::Seq<64>, sf::Model<64>> x{};   // 64x64 floats, zeroed
//   x(3, 5) = 1.0f;                                      // row-major indexing
//
// Storage is an aligned array inside the object: no heap, sizeof is a
// compile-time constant, and construction, indexing and arithmetic are constexpr.
// Large tensors belong in static or caller-owned storage, never on the stack.
#pragma once
#include <cstddef>
#include <type_traits>

#include "staticformer/axis.hpp"
#include "staticformer/shape_error.hpp"

namespace sf {

inline constexpr std::size_t tensor_alignment = 64;  // one cache line, one AVX-512 vector

namespace detail {
template <class A, class B> constexpr void check_elementwise();  // defined below
}

template <class T, class... Axes>
struct tensor {
  static_assert(sizeof...(Axes) >= 1, "sf::tensor: a tensor needs at least one axis");
  static_assert((is_axis_v<Axes> && ...),
                "sf::tensor<T, Axes...>: every axis must be an sf::axis<Tag, N> (e.g. sf::Seq<64>)");

  using value_type = T;
  using shape_type = sf::shape<Axes...>;
  static constexpr std::size_t rank = sizeof...(Axes);
  static constexpr std::size_t size = (std::size_t{1} * ... * Axes::size);
  static constexpr std::size_t extents[rank] = {Axes::size...};
  template <std::size_t I> using axis_t = nth_axis_t<I, Axes...>;
  using first_axis = nth_axis_t<0, Axes...>;
  using last_axis = nth_axis_t<rank - 1, Axes...>;
  static constexpr std::size_t cols = last_axis::size;   // innermost extent
  static constexpr std::size_t rows = size / cols;        // product of the leading extents

  alignas(tensor_alignment) T data_[size];

  constexpr T* data() noexcept { return data_; }
  constexpr const T* data() const noexcept { return data_; }
  constexpr T* begin() noexcept { return data_; }
  constexpr T* end() noexcept { return data_ + size; }
  constexpr const T* begin() const noexcept { return data_; }
  constexpr const T* end() const noexcept { return data_ + size; }

  // Flat, row-major element access.
  constexpr T& operator[](std::size_t i) noexcept { return data_[i]; }
  constexpr const T& operator[](std::size_t i) const noexcept { return data_[i]; }

  // Row-major offset of a multi-index; one index per axis.
  template <class... I>
  static constexpr std::size_t offset(I... idx) noexcept {
    if constexpr (sizeof...(I) != rank) {
      SF_SHAPE_ERROR("sf::tensor::operator(): wrong number of indices - give exactly one index per axis "
                     "(the rank of the tensor); use operator[] for a flat index",
                     shape_error::index<shape_error::role_t<shape_error::x_is, shape_type>,
                                        shape_error::indices<sizeof...(I)>>);
      return 0;
    } else {
      std::size_t o = 0, k = 0;
      ((o = o * extents[k++] + static_cast<std::size_t>(idx)), ...);
      return o;
    }
  }
  template <class... I> constexpr T& operator()(I... idx) noexcept { return data_[offset(idx...)]; }
  template <class... I> constexpr const T& operator()(I... idx) const noexcept { return data_[offset(idx...)]; }

  // Pointer to the start of the row given by all indices but the last.
  template <class... I> constexpr T* row(I... idx) noexcept { return data_ + offset(idx..., 0); }
  template <class... I> constexpr const T* row(I... idx) const noexcept { return data_ + offset(idx..., 0); }

  constexpr void fill(T v) noexcept {
    for (std::size_t i = 0; i < size; ++i) data_[i] = v;
  }
  constexpr void zero() noexcept { fill(T{}); }

  // Element-wise arithmetic. Shapes must match exactly (sizes and identities).
  constexpr tensor& operator+=(const tensor& o) noexcept {
    for (std::size_t i = 0; i < size; ++i) data_[i] += o.data_[i];
    return *this;
  }
  constexpr tensor& operator-=(const tensor& o) noexcept {
    for (std::size_t i = 0; i < size; ++i) data_[i] -= o.data_[i];
    return *this;
  }
  // Any other tensor type is a compile error that names both shapes (rather than "no match").
  template <class U, class... B>
  constexpr tensor& operator+=(const tensor<U, B...>&) noexcept {
    detail::check_elementwise<tensor, tensor<U, B...>>();
    static_assert(!std::is_same_v<shape_type, sf::shape<B...>> || std::is_same_v<T, U>,
                  "sf::tensor::operator+=: the element types differ; convert one tensor first");
    return *this;
  }
  template <class U, class... B>
  constexpr tensor& operator-=(const tensor<U, B...>&) noexcept {
    detail::check_elementwise<tensor, tensor<U, B...>>();
    static_assert(!std::is_same_v<shape_type, sf::shape<B...>> || std::is_same_v<T, U>,
                  "sf::tensor::operator-=: the element types differ; convert one tensor first");
    return *this;
  }
  constexpr tensor& operator*=(T s) noexcept {
    for (std::size_t i = 0; i < size; ++i) data_[i] *= s;
    return *this;
  }
  friend constexpr bool operator==(const tensor& a, const tensor& b) noexcept {
    for (std::size_t i = 0; i < size; ++i)
      if (!(a.data_[i] == b.data_[i])) return false;
    return true;
  }
};

template <class X> struct is_tensor : std::false_type {};
template <class T, class... A> struct is_tensor<tensor<T, A...>> : std::true_type {};
template <class X> inline constexpr bool is_tensor_v = is_tensor<std::remove_cvref_t<X>>::value;

template <class A, class B>
inline constexpr bool same_shape_v =
    std::is_same_v<typename std::remove_cvref_t<A>::shape_type, typename std::remove_cvref_t<B>::shape_type>;

// Value-returning element-wise operators, meant for small (constexpr) tensors.
// Mixing tensors of different shapes is a compile error naming both shapes.
namespace detail {
template <class A, class B>
constexpr void check_elementwise() {
  if constexpr (!same_shape_v<A, B>) {
    SF_SHAPE_ERROR("sf::tensor element-wise op: the two shapes differ (sizes or axis identities); "
                   "both operands must have exactly the same axes - transpose or reshape one of them",
                   shape_error::elementwise<shape_error::role_t<shape_error::lhs_is, typename A::shape_type>,
                                            shape_error::role_t<shape_error::rhs_is, typename B::shape_type>>);
  }
}
}  // namespace detail

template <class T, class... A, class U, class... B>
constexpr tensor<T, A...> operator+(tensor<T, A...> a, const tensor<U, B...>& b) noexcept {
  detail::check_elementwise<tensor<T, A...>, tensor<U, B...>>();
  if constexpr (same_shape_v<tensor<T, A...>, tensor<U, B...>>)
    for (std::size_t i = 0; i < a.size; ++i) a[i] += b[i];
  return a;
}
template <class T, class... A, class U, class... B>
constexpr tensor<T, A...> operator-(tensor<T, A...> a, const tensor<U, B...>& b) noexcept {
  detail::check_elementwise<tensor<T, A...>, tensor<U, B...>>();
  if constexpr (same_shape_v<tensor<T, A...>, tensor<U, B...>>)
    for (std::size_t i = 0; i < a.size; ++i) a[i] -= b[i];
  return a;
}
template <class T, class... A>
constexpr tensor<T, A...> operator*(tensor<T, A...> a, T s) noexcept {
  a *= s;
  return a;
}
template <class T, class... A>
constexpr tensor<T, A...> operator*(T s, tensor<T, A...> a) noexcept {
  a *= s;
  return a;
}

// A tensor from a flat list of values (row-major), usable in constant expressions.
template <class Tensor, class... V>
constexpr Tensor make_tensor(V... v) noexcept {
  static_assert(sizeof...(V) == Tensor::size,
                "sf::make_tensor: the number of values must equal the tensor's element count");
  Tensor t{};
  std::size_t i = 0;
  ((t[i++] = static_cast<typename Tensor::value_type>(v)), ...);
  return t;
}

}  // namespace sf
