// staticformer/layers/norm.hpp — LayerNorm and RMSNorm over the model axis D.
//
// Gradient rule (the whole library): parameter gradients accumulate (+=),
// activation gradients are written (=).
#pragma once
#include <cstddef>

#include "staticformer/config.hpp"
#include "staticformer/math.hpp"
#include "staticformer/params.hpp"

namespace sf::layers {

template <config C, class T = float>
struct norm {
  static constexpr std::size_t D = C.D;
  static constexpr std::size_t N = C.B * C.T;  // rows
  static constexpr bool layernorm = C.norm == norm_kind::layernorm;
  static constexpr T eps = static_cast<T>(C.norm_eps);
  using params_t = norm_params<weights_config(C), T>;
  using btd = typename types<C, T>::btd;
  using bt = typename types<C, T>::bt;

  // layernorm: y = (x - μ) / sqrt(σ² + eps) * g + b,   μ = mean(x), σ² = mean((x - μ)²) (biased)
  // rmsnorm:   y = x / sqrt(mean(x²) + eps) * g
  // Saves μ (layernorm only) and rstd = 1/sqrt(...) per row for backward; mean/rstd may be null (inference).
  // y: (B,T,D)  x: (B,T,D)  mean, rstd: (B,T)
  static constexpr void forward(btd& y, const btd& x, const params_t& p, bt* mean, bt* rstd) {
    for (std::size_t r = 0; r < N; ++r) {
      const T* xr = x.data() + r * D;
      T* yr = y.data() + r * D;
      T mu{};
      if constexpr (layernorm) {
        for (std::size_t i = 0; i < D; ++i) mu += xr[i];
        mu /= static_cast<T>(D);
      }
      T ss{};
      for (std::size_t i = 0; i < D; ++i) ss += (xr[i] - mu) * (xr[i] - mu);
      const T rs = T{1} / math::sqrt(ss / static_cast<T>(D) + eps);
      for (std::size_t i = 0; i < D; ++i) {
        T v = (xr[i] - mu) * rs * p.weight[i];
        if constexpr (layernorm) v += p.bias[i];
        yr[i] = v;
      }
      if (mean) (*mean)[r] = mu;
      if (rstd) (*rstd)[r] = rs;
    }
  }

  // With x̂ = (x - μ) rstd and ĝ = dy ⊙ g:
  //   layernorm: dx = rstd (ĝ - mean(ĝ) - x̂ mean(ĝ ⊙ x̂))
  //   rmsnorm:   dx = rstd (ĝ - x̂ mean(ĝ ⊙ x̂))
  //   dg += Σ_rows dy ⊙ x̂,  db += Σ_rows dy
  // dx: (B,T,D) written   dy, x: (B,T,D)   mean, rstd: (B,T) from forward
  static void backward(btd& dx, params_t& grad, const btd& dy, const btd& x, const params_t& p, const bt& mean,
                       const bt& rstd) {
    for (std::size_t r = 0; r < N; ++r) {
      const T* xr = x.data() + r * D;
      const T* dyr = dy.data() + r * D;
      T* dxr = dx.data() + r * D;
      const T mu = mean[r], rs = rstd[r];
      T sum_g{}, sum_gx{};
      for (std::size_t i = 0; i < D; ++i) {
        const T xh = (xr[i] - mu) * rs;
        const T g = dyr[i] * p.weight[i];
        sum_g += g;
        sum_gx += g * xh;
        grad.weight[i] += dyr[i] * xh;
        if constexpr (layernorm) grad.bias[i] += dyr[i];
      }
      const T mean_g = layernorm ? sum_g / static_cast<T>(D) : T{};
      const T mean_gx = sum_gx / static_cast<T>(D);
      for (std::size_t i = 0; i < D; ++i) {
        const T xh = (xr[i] - mu) * rs;
        dxr[i] = rs * (dyr[i] * p.weight[i] - mean_g - xh * mean_gx);
      }
    }
  }
};

}  // namespace sf::layers
