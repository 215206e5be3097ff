// staticformer/layers/position.hpp — fixed sinusoidal positions and RoPE.
// (Learned positions are a parameter table added in embedding.hpp.)
#pragma once
#include <cstddef>

#include "staticformer/config.hpp"
#include "staticformer/math.hpp"

namespace sf::layers {

// PE[t, 2i] = sin(t / 10000^(2i/D)),  PE[t, 2i+1] = cos(t / 10000^(2i/D))
template <config C, class T = float>
struct sinusoidal {
  static constexpr std::size_t D = C.D;
  // x[i] += PE[t, i]      x: (D)
  static constexpr void add(T* x, std::size_t t) {
    for (std::size_t i = 0; 2 * i < D; ++i) {
      const double angle = static_cast<double>(t) * math::exp(-static_cast<double>(2 * i) / D * 9.210340371976184);  // ln 10000
      x[2 * i] += static_cast<T>(math::sin(angle));
      if (2 * i + 1 < D) x[2 * i + 1] += static_cast<T>(math::cos(angle));
    }
  }
};

// RoPE: rotate the pairs (2i, 2i+1) of every head's q (or k) at position t by t·ω_i,
// ω_i = 10000^(-2i/d_k), t 0-based:
//   x'[2i]   = x[2i] cos θ - x[2i+1] sin θ
//   x'[2i+1] = x[2i] sin θ + x[2i+1] cos θ
// Backward is the inverse rotation (Rᵀ = R(-θ)).
template <config C, class T = float>
struct rope {
  static constexpr std::size_t B = C.B, S = C.T, D = C.D, H = C.H, dk = C.D / C.H;
  static_assert(dk % 2 == 0, "sf::layers::rope: d_k = D / H must be even");

  // rotate in place   x: (B,T,D), heads side by side along D;  sign = +1 forward, -1 backward
  static constexpr void rotate(T* x, int sign) {
    for (std::size_t t = 0; t < S; ++t)
      for (std::size_t i = 0; i < dk / 2; ++i) {
        const double theta = static_cast<double>(t) * math::exp(-static_cast<double>(2 * i) / dk * 9.210340371976184);
        const T c = static_cast<T>(math::cos(theta));
        const T s = static_cast<T>(sign) * static_cast<T>(math::sin(theta));
        for (std::size_t b = 0; b < B; ++b)
          for (std::size_t h = 0; h < H; ++h) {
            T* p = x + (b * S + t) * D + h * dk + 2 * i;
            const T x0 = p[0], x1 = p[1];
            p[0] = x0 * c - x1 * s;
            p[1] = x0 * s + x1 * c;
          }
      }
  }
  static constexpr void forward(T* x) { rotate(x, +1); }   // x: (B,T,D)
  static void backward(T* dx) { rotate(dx, -1); }           // dx: (B,T,D), in place
};

}  // namespace sf::layers
