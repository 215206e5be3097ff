// staticformer/layers/activation.hpp — relu, gelu (erf), gelu_tanh and silu, element-wise.
#pragma once
#include <cstddef>
#include <type_traits>

#include "staticformer/config.hpp"
#include "staticformer/kernels/vmath.hpp"
#include "staticformer/math.hpp"
#include "staticformer/simd.hpp"

namespace sf::layers {

template <activation_kind A, class T>
struct activation {
  static constexpr T inv_sqrt2 = static_cast<T>(0.70710678118654752440);
  static constexpr T inv_sqrt_2pi = static_cast<T>(0.39894228040143267794);
  static constexpr T sqrt_2_over_pi = static_cast<T>(0.79788456080286535588);
  static constexpr T c = static_cast<T>(0.044715);

  // relu(x) = max(x, 0)
  // gelu(x) = x Φ(x) = x (1 + erf(x/√2)) / 2
  // gelu_tanh(x) = x (1 + tanh(√(2/π) (x + 0.044715 x³))) / 2
  // silu(x) = x σ(x) = x / (1 + e^{-x})
  static constexpr T f(T x) {
    if constexpr (A == activation_kind::relu) return x > T{0} ? x : T{0};
    else if constexpr (A == activation_kind::gelu) return T{0.5} * x * (T{1} + math::erf(x * inv_sqrt2));
    else if constexpr (A == activation_kind::silu) return x / (T{1} + math::exp(-x));
    else return T{0.5} * x * (T{1} + math::tanh(sqrt_2_over_pi * (x + c * x * x * x)));
  }

  // relu'(x) = [x > 0]
  // gelu'(x) = Φ(x) + x φ(x),  φ(x) = e^{-x²/2} / √(2π)
  // gelu_tanh'(x) = (1 + t)/2 + x (1 - t²) √(2/π) (1 + 3·0.044715 x²) / 2,  t = tanh(√(2/π)(x + 0.044715 x³))
  // silu'(x) = σ(x) (1 + x (1 - σ(x))),  σ(x) = 1 / (1 + e^{-x})
  static constexpr T df(T x) {
    if constexpr (A == activation_kind::relu) return x > T{0} ? T{1} : T{0};
    else if constexpr (A == activation_kind::silu) {
      const T s = T{1} / (T{1} + math::exp(-x));
      return s * (T{1} + x * (T{1} - s));
    }
    else if constexpr (A == activation_kind::gelu)
      return T{0.5} * (T{1} + math::erf(x * inv_sqrt2)) + x * inv_sqrt_2pi * math::exp(T{-0.5} * x * x);
    else {
      const T t = math::tanh(sqrt_2_over_pi * (x + c * x * x * x));
      return T{0.5} * (T{1} + t) + T{0.5} * x * (T{1} - t * t) * sqrt_2_over_pi * (T{1} + T{3} * c * x * x);
    }
  }

  // f'(x) on a SIMD register, the same formulas as df (float, run time).
  template <class V>
  static constexpr typename V::reg vdf(typename V::reg x) {
    using reg = typename V::reg;
    if constexpr (A == activation_kind::relu) {
      return V::select(V::lt(V::zero(), x), V::set1(1.0f), V::zero());
    } else if constexpr (A == activation_kind::silu) {
      const reg s = V::div(V::set1(1.0f), V::add(V::set1(1.0f), simd::vexp<V>(V::neg(x))));
      return V::fmadd(V::mul(s, x), V::sub(V::set1(1.0f), s), s);  // σ + xσ(1 - σ)
    } else if constexpr (A == activation_kind::gelu) {
      const reg cdf = V::fmadd(V::set1(0.5f), simd::verf<V>(V::mul(x, V::set1(inv_sqrt2))), V::set1(0.5f));
      const reg pdf = V::mul(V::set1(inv_sqrt_2pi), simd::vexp<V>(V::mul(V::set1(-0.5f), V::mul(x, x))));
      return V::fmadd(x, pdf, cdf);  // Φ(x) + x φ(x)
    } else {
      const reg x2 = V::mul(x, x);
      const reg t = simd::vtanh<V>(V::mul(V::set1(sqrt_2_over_pi), V::fmadd(V::mul(V::set1(c), x2), x, x)));
      const reg half_x = V::mul(V::set1(0.5f), x);
      const reg one_m_t2 = V::fnmadd(t, t, V::set1(1.0f));
      const reg du = V::mul(V::set1(sqrt_2_over_pi), V::fmadd(V::set1(3.0f * c), x2, V::set1(1.0f)));
      return V::fmadd(V::mul(half_x, one_m_t2), du, V::fmadd(V::set1(0.5f), t, V::set1(0.5f)));
    }
  }

  // y = f(x)          y, x: (n)
  // (float: the vectorised rows of kernels/vmath.hpp, bit-identical at compile and run time)
  template <std::size_t n>
  static constexpr void forward(T* y, const T* x) {
    if constexpr (std::is_same_v<T, float> && A != activation_kind::relu) {
      if constexpr (A == activation_kind::gelu) simd::gelu_row<n>(y, x);
      else if constexpr (A == activation_kind::silu) simd::silu_row<n>(y, x);
      else simd::gelu_tanh_row<n>(y, x);
    } else {
      for (std::size_t i = 0; i < n; ++i) y[i] = f(x[i]);
    }
  }
  // dx = dy ⊙ f'(x)   dx, dy, x: (n); dx may alias dy
  template <std::size_t n>
  static constexpr void backward(T* dx, const T* dy, const T* x) {
    if constexpr (std::is_same_v<T, float>) {
      simd::detail::dispatch<simd::native<float>>([&]<class W>() {
        simd::detail::map_row2<W, n>(dx, dy, x, [](typename W::reg g, typename W::reg v) { return W::mul(g, vdf<W>(v)); });
      });
    } else {
      for (std::size_t i = 0; i < n; ++i) dx[i] = dy[i] * df(x[i]);
    }
  }
};

}  // namespace sf::layers
