// staticformer/layers/norm.hpp — LayerNorm and RMSNorm over the model axis D.
//
// The interface every layer of the block has (see layers/README in model.hpp's header):
//   state<Save>  what forward keeps: Save = true for backward, false for inference
//   scratch      what backward needs besides (shared by all blocks)
//   forward(y, x, p, state, padding)   backward(dx, grad, dy, x, p, state, scratch)
#pragma once
#include <cstddef>
#include <type_traits>

#include "staticformer/config.hpp"
#include "staticformer/kernels/gemm.hpp"  // SF_KERNEL_NOINLINE
#include "staticformer/kernels/vmath.hpp"
#include "staticformer/math.hpp"
#include "staticformer/parallel.hpp"
#include "staticformer/params.hpp"

namespace sf::layers {

template <config C, class T = float>
struct norm {
  static constexpr std::size_t D = C.D;
  static constexpr std::size_t N = C.B * C.T;  // rows
  static constexpr bool layernorm = C.norm == norm_kind::layernorm;
  static constexpr T eps = static_cast<T>(C.norm_eps);
  using params_t = norm_params<arch_of(C), T>;
  using btd = typename types<C, T>::btd;
  using bt = typename types<C, T>::bt;

  // Kept by forward: μ (layernorm) and rstd per row for backward; nothing for inference.
  struct saved {
    bt mean, rstd;  // (B,T)
  };
  struct nothing {};
  template <bool Save> using state = std::conditional_t<Save, saved, nothing>;
  struct scratch {};

  // layernorm: y = (x - μ) / sqrt(σ² + eps) * g + b,   μ = mean(x), σ² = mean((x - μ)²) (biased)
  // rmsnorm:   y = x / sqrt(mean(x²) + eps) * g
  // y: (B,T,D)  x: (B,T,D)
  template <class S>
  static constexpr void forward(btd& y, const btd& x, const params_t& p, S& s, const padding_t<C>* = nullptr) {
    if constexpr (std::is_same_v<S, saved>) forward_impl(y, x, p, &s.mean, &s.rstd);
    else forward_impl(y, x, p, nullptr, nullptr);
  }
  // One function for training and inference (the same code, so the same rounding).
  // mean, rstd: (B,T) written, or null (inference)
  SF_KERNEL_NOINLINE static constexpr void forward_impl(btd& y, const btd& x, const params_t& p, bt* mean,
                                                        bt* rstd) {
    parallel::split(N, D, [&](std::size_t r0, std::size_t r1) {  // rows: any split, the same bits
      for (std::size_t r = r0; r < r1; ++r) {
        T mu{}, rs{};
        row(y.data() + r * D, x.data() + r * D, p, mu, rs);
        if (mean) (*mean)[r] = mu;
        if (rstd) (*rstd)[r] = rs;
      }
    });
  }
  // One row, the arithmetic of forward (the decoder normalises one position at a time with it).
  // yr: (D) written  xr: (D)  mu, rs: μ (0 for rmsnorm) and rstd written
  // (NP: norm_params of float or int8 weights — a norm's parameters are float in both)
  template <class NP>
  static constexpr void row(T* yr, const T* xr, const NP& p, T& mu, T& rs) {
    mu = T{};
    T ss{};
    if constexpr (std::is_same_v<T, float>) {  // vectorised sums (kernels/vmath.hpp), also at compile time
      if constexpr (layernorm) mu = simd::row_sum(xr, D) / static_cast<T>(D);
      ss = simd::row_sum_sq_dev(xr, D, mu);
    } else {  // double (finite-difference tests): the plain loops
      if constexpr (layernorm) {
        for (std::size_t i = 0; i < D; ++i) mu += xr[i];
        mu /= static_cast<T>(D);
      }
      for (std::size_t i = 0; i < D; ++i) ss += (xr[i] - mu) * (xr[i] - mu);
    }
    rs = T{1} / math::sqrt(ss / static_cast<T>(D) + eps);
    for (std::size_t i = 0; i < D; ++i) {
      T v = (xr[i] - mu) * rs * p.weight[i];
      if constexpr (layernorm) v += p.bias[i];
      yr[i] = v;
    }
  }
  template <class NP>
  static constexpr void row(T* yr, const T* xr, const NP& p) {
    T mu{}, rs{};
    row(yr, xr, p, mu, rs);
  }

  // With x̂ = (x - μ) rstd and ĝ = dy ⊙ g:
  //   layernorm: dx = rstd (ĝ - mean(ĝ) - x̂ mean(ĝ ⊙ x̂))
  //   rmsnorm:   dx = rstd (ĝ - x̂ mean(ĝ ⊙ x̂))
  //   dg += Σ_rows dy ⊙ x̂,  db += Σ_rows dy
  // dx: (B,T,D) written (may be dy itself)   dy, x: (B,T,D)   s: from forward
  // Two passes, so that each can be split over threads with the same bits: the parameter
  // gradients by columns i (each sums its rows in order), then dx by rows.
  static constexpr void backward(btd& dx, params_t& grad, const btd& dy, const btd& x, const params_t& p,
                                 const saved& s, scratch&) {
    parallel::split(D, N, [&](std::size_t i0, std::size_t i1) {  // dg[i] += Σ_r dy[r,i] x̂[r,i], db[i] += Σ_r dy[r,i]
      for (std::size_t r = 0; r < N; ++r) {
        const T* xr = x.data() + r * D;
        const T* dyr = dy.data() + r * D;
        const T mu = s.mean[r], rs = s.rstd[r];
        for (std::size_t i = i0; i < i1; ++i) {
          const T xh = (xr[i] - mu) * rs;
          grad.weight[i] += dyr[i] * xh;
          if constexpr (layernorm) grad.bias[i] += dyr[i];
        }
      }
    });
    parallel::split(N, D, [&](std::size_t r0, std::size_t r1) {  // dx, row by row (dx may be dy)
      for (std::size_t r = r0; r < r1; ++r) {
        const T* xr = x.data() + r * D;
        const T* dyr = dy.data() + r * D;
        T* dxr = dx.data() + r * D;
        const T mu = s.mean[r], rs = s.rstd[r];
        T sum_g{}, sum_gx{};
        for (std::size_t i = 0; i < D; ++i) {
          const T xh = (xr[i] - mu) * rs;
          const T g = dyr[i] * p.weight[i];
          sum_g += g;
          sum_gx += g * xh;
        }
        const T mean_g = layernorm ? sum_g / static_cast<T>(D) : T{};
        const T mean_gx = sum_gx / static_cast<T>(D);
        for (std::size_t i = 0; i < D; ++i) {
          const T xh = (xr[i] - mu) * rs;
          dxr[i] = rs * (dyr[i] * p.weight[i] - mean_g - xh * mean_gx);
        }
      }
    });
  }
};

}  // namespace sf::layers
