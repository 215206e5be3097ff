// staticformer/layers/ffn_gated.hpp — the gated feed-forward: y = (act(x W1 + b1) ⊙ (x W3 + b3)) W2 + b2.
// With silu it is LLaMA's SwiGLU (llama2.c's model.py: w2(F.silu(w1(x)) * w3(x))): W1 the gate,
// W3 the up projection, W2 the down one. A kind of layers/ffn.hpp (the layer interface is there).
#pragma once
#include <cstddef>

#include "staticformer/layers/ffn.hpp"

namespace sf::layers {

template <config C, class T>
struct feed_forward<ffn_kind::gated, C, T> {
  static constexpr std::size_t N = C.B * C.T, D = C.D, F = C.F;
  using act = activation<C.activation, T>;
  using params_t = ffn_params<arch_of(C), T>;
  using btd = typename types<C, T>::btd;
  using btf = typename types<C, T>::btf;

  // Kept by forward: the gate before its activation, the up projection, their product.
  struct saved {
    btf h, g, a;  // (B,T,F)
  };
  template <bool Save> using state = saved;
  struct scratch {
    btf dh, dg;  // (B,T,F)
  };

  // h = x W1 + b1;  g = x W3 + b3;  a = act(h) ⊙ g;  y = a W2 + b2
  // y: (B,T,D)  x: (B,T,D)
  static constexpr void forward(btd& y, const btd& x, const params_t& p, saved& s, const padding_t<C>* = nullptr) {
    rows(linear<C.precision>{}, y, x, p, s.h, s.g, s.a);
  }

  // The same for any R rows and any weights: training's forward above and the decoder's.
  // y: (R,D) written  x: (R,D)  h, g: (R,F) gate and up projection, written  a: (R,F) written (may be h)
  template <class Lin, class Y, class X, class P, class HF, class GF, class AF>
  static constexpr void rows(const Lin& lin, Y&& y, const X& x, const P& p, HF&& h, GF&& g, AF&& a) {
    constexpr std::size_t R = sf::detail::mt<HF>::rows, ldh = sf::detail::mt<HF>::ld, ldg = sf::detail::mt<GF>::ld,
                          lda = sf::detail::mt<AF>::ld;
    static_assert(sf::detail::mt<HF>::cols == F && sf::detail::mt<GF>::cols == F && sf::detail::mt<AF>::cols == F &&
                      sf::detail::mt<GF>::rows == R && sf::detail::mt<AF>::rows == R,
                  "sf::layers::ffn<gated>::rows: h, g and a must be (R, F) (internal)");
    lin(h, x, p.w1, p.b1);
    lin(g, x, p.w3, p.b3);
    parallel::split(R, F, [&](std::size_t r0, std::size_t r1) {  // rows, element-wise: any split, the same bits
      for (std::size_t r = r0; r < r1; ++r) {
        T* ar = a.data() + r * lda;
        const T* gr = g.data() + r * ldg;
        act::template forward<F>(ar, h.data() + r * ldh);
        for (std::size_t i = 0; i < F; ++i) ar[i] *= gr[i];
      }
    });
    lin(y, a, p.w2, p.b2);
  }
  // The decoder's: two (R,F) buffers, the gate's product written over the gate.
  static constexpr std::size_t decode_buffers = 2;
  template <class Lin, class Y, class X, class P, class HF, class GF>
  static constexpr void decode_rows(const Lin& lin, Y&& y, const X& x, const P& p, HF&& f, GF&& f2) {
    rows(lin, y, x, p, f, f2, f);
  }

  // da = dy W2ᵀ;  dW2 += aᵀ dy;  db2 += Σ dy
  // dg = da ⊙ act(h);  dh = da ⊙ g ⊙ act'(h)
  // dW1 += xᵀ dh;  db1 += Σ dh;  dW3 += xᵀ dg;  db3 += Σ dg;  dx = dh W1ᵀ + dg W3ᵀ
  // dx: (B,T,D) written   dy, x: (B,T,D)   s: from forward
  static constexpr void backward(btd& dx, params_t& grad, const btd& dy, const btd& x, const params_t& p,
                                 const saved& s, scratch& w) {
    matmul_backward_input<C.precision>(w.dh, dy, p.w2);     // da = dy W2ᵀ (in dh)
    matmul_backward_weight<C.precision>(grad.w2, s.a, dy);  // dW2 += aᵀ dy
    matmul_backward_bias(grad.b2, dy);                      // db2 += Σ dy
    parallel::split(N, F, [&](std::size_t r0, std::size_t r1) {
      for (std::size_t r = r0; r < r1; ++r) {
        T* dh = w.dh.data() + r * F;
        T* dg = w.dg.data() + r * F;
        const T* h = s.h.data() + r * F;
        const T* g = s.g.data() + r * F;
        act::template forward<F>(dg, h);                             // act(h)
        for (std::size_t i = 0; i < F; ++i) {
          const T da = dh[i];
          dh[i] = da * g[i];                                         // da ⊙ g (then ⊙ act'(h), below)
          dg[i] = da * dg[i];                                        // dg = da ⊙ act(h)
        }
        act::template backward<F>(dh, dh, h);                        // dh = (da ⊙ g) ⊙ act'(h)
      }
    });
    matmul_backward_weight<C.precision>(grad.w1, x, w.dh);                 // dW1 += xᵀ dh
    matmul_backward_bias(grad.b1, w.dh);                                   // db1 += Σ dh
    matmul_backward_weight<C.precision>(grad.w3, x, w.dg);                 // dW3 += xᵀ dg
    matmul_backward_bias(grad.b3, w.dg);                                   // db3 += Σ dg
    matmul_backward_input<C.precision>(dx, w.dh, p.w1);                    // dx  = dh W1ᵀ
    matmul_backward_input<C.precision>(dx, w.dg, p.w3, sf::accumulate);    // dx += dg W3ᵀ
  }
};

}  // namespace sf::layers
