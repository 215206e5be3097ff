// staticformer/layers/ffn.hpp — position-wise feed-forward: act(f W1 + b1) W2 + b2.
#pragma once
#include <cstddef>

#include "staticformer/config.hpp"
#include "staticformer/kernels/bias.hpp"
#include "staticformer/kernels/gemm.hpp"
#include "staticformer/layers/activation.hpp"
#include "staticformer/params.hpp"

namespace sf::layers {

template <config C, class T = float>
struct ffn {
  static constexpr std::size_t N = C.B * C.T, D = C.D, F = C.F;
  using act = activation<C.activation, T>;
  using params_t = ffn_params<weights_config(C), T>;
  using btd = typename types<C, T>::btd;
  using btf = typename types<C, T>::btf;

  static constexpr const T* bias_ptr(const auto& b) {
    if constexpr (C.bias) return b.data();
    else return nullptr;
  }

  // h = x W1 + b1;  a = act(h);  y = a W2 + b2
  // y: (B,T,D)  x: (B,T,D)  h, a: (B,T,F) saved for backward
  static constexpr void forward(btd& y, btf& h, btf& a, const btd& x, const params_t& p) {
    kernels::gemm_nn<N, F, D>(h.data(), x.data(), p.w1.data(), bias_ptr(p.b1));
    act::template forward<N * F>(a.data(), h.data());
    kernels::gemm_nn<N, D, F>(y.data(), a.data(), p.w2.data(), bias_ptr(p.b2));
  }

  // da = dy W2ᵀ;  dW2 += aᵀ dy;  db2 += Σ dy
  // dh = da ⊙ act'(h);  dW1 += xᵀ dh;  db1 += Σ dh;  dx = dh W1ᵀ
  // dx: (B,T,D) written   dy, x: (B,T,D)   h, a: (B,T,F) from forward   dh: (B,T,F) scratch
  static void backward(btd& dx, params_t& grad, btf& dh, const btd& dy, const btd& x, const btf& h, const btf& a,
                       const params_t& p) {
    kernels::gemm_nt<N, F, D>(dh.data(), dy.data(), p.w2.data());            // da = dy W2ᵀ
    kernels::gemm_tn<F, D, N, F, D, D, true>(grad.w2.data(), a.data(), dy.data());  // dW2 += aᵀ dy
    if constexpr (C.bias) kernels::bias_backward<N, D>(grad.b2.data(), dy.data());
    act::template backward<N * F>(dh.data(), dh.data(), h.data());            // dh = da ⊙ act'(h)
    kernels::gemm_tn<D, F, N, D, F, F, true>(grad.w1.data(), x.data(), dh.data());  // dW1 += xᵀ dh
    if constexpr (C.bias) kernels::bias_backward<N, F>(grad.b1.data(), dh.data());
    kernels::gemm_nt<N, D, F>(dx.data(), dh.data(), p.w1.data());            // dx = dh W1ᵀ
  }

};

}  // namespace sf::layers
