// staticformer/layers/ffn.hpp — the position-wise feed-forward, of the kind the architecture
// names (sf::arch::ffn): sf::layers::ffn<C> is the layer of kind C.ffn, which the block
// (model.hpp) and the decoder (decode.hpp) run.
//
// The kinds. Each is a specialization feed_forward<ffn_kind::K, C, T> (its parameters: a
// specialization of params.hpp's feed_forward_params) with the layer interface (see model.hpp: state<Save>, scratch,
// forward, backward) and rows(lin, y, x, p, h, a), the forward of any R rows that training,
// prefill and single steps share. A kind in its own header includes this one and is registered
// by one #include line at the end of this file.
//   mlp    y = act(x W1 + b1) W2 + b2                  (below)
//   gated  y = (act(x W1 + b1) ⊙ (x W3 + b3)) W2 + b2  (ffn_gated.hpp; silu: LLaMA's SwiGLU)
// The decoder runs a kind through decode_rows(lin, y, x, p, f, f2) with decode_buffers (R, F)
// buffers f, f2 (f2 is sf::none when decode_buffers is 1).
#pragma once
#include <cstddef>

#include "staticformer/config.hpp"
#include "staticformer/layers/activation.hpp"
#include "staticformer/matmul.hpp"
#include "staticformer/parallel.hpp"
#include "staticformer/params.hpp"

namespace sf::layers {

template <ffn_kind K, config C, class T>
struct feed_forward;
template <config C, class T = float> using ffn = feed_forward<C.ffn, C, T>;

// mlp: h = x W1 + b1;  a = act(h);  y = a W2 + b2
template <config C, class T>
struct feed_forward<ffn_kind::mlp, C, T> {
  static constexpr std::size_t N = C.B * C.T, D = C.D, F = C.F;
  using act = activation<C.activation, T>;
  using params_t = ffn_params<arch_of(C), T>;
  using btd = typename types<C, T>::btd;
  using btf = typename types<C, T>::btf;

  // Kept by forward (inference uses the same buffers): pre- and post-activation.
  struct saved {
    btf h, a;  // (B,T,F)
  };
  template <bool Save> using state = saved;
  struct scratch {
    btf dh;  // (B,T,F)
  };

  // h = x W1 + b1;  a = act(h);  y = a W2 + b2
  // y: (B,T,D)  x: (B,T,D)
  static constexpr void forward(btd& y, const btd& x, const params_t& p, saved& s, const padding_t<C>* = nullptr) {
    rows(linear<C.precision>{}, y, x, p, s.h, s.a);
  }

  // The same for any R rows and any weights — training's forward above, a decoder's prefill chunk
  // and its single-token steps (decode.hpp) all run this: y = act(x W1 + b1) W2 + b2.
  // y: (R,D) written  x: (R,D)  h: (R,F) pre-activation, written  a: (R,F) post-activation, written
  // (a may be h)  lin: the product (sf::linear<P>, or a decoder's: float or int8 weights)  p: float
  // or int8 parameters (params.hpp, quantize.hpp)
  template <class Lin, class Y, class X, class P, class HF, class AF>
  static constexpr void rows(const Lin& lin, Y&& y, const X& x, const P& p, HF&& h, AF&& a) {
    constexpr std::size_t R = sf::detail::mt<HF>::rows, ldh = sf::detail::mt<HF>::ld, lda = sf::detail::mt<AF>::ld;
    static_assert(sf::detail::mt<HF>::cols == F && sf::detail::mt<AF>::cols == F && sf::detail::mt<AF>::rows == R,
                  "sf::layers::ffn::rows: h and a must be (R, F) (internal)");
    lin(h, x, p.w1, p.b1);
    parallel::split(R, F, [&](std::size_t r0, std::size_t r1) {  // rows, element-wise: any split, the same bits
      for (std::size_t r = r0; r < r1; ++r) act::template forward<F>(a.data() + r * lda, h.data() + r * ldh);
    });
    lin(y, a, p.w2, p.b2);
  }
  // The decoder's: one (R,F) buffer, h and a in place.
  static constexpr std::size_t decode_buffers = 1;
  template <class Lin, class Y, class X, class P, class HF, class Unused>
  static constexpr void decode_rows(const Lin& lin, Y&& y, const X& x, const P& p, HF&& f, Unused&&) {
    rows(lin, y, x, p, f, f);
  }

  // da = dy W2ᵀ;  dW2 += aᵀ dy;  db2 += Σ dy
  // dh = da ⊙ act'(h);  dW1 += xᵀ dh;  db1 += Σ dh;  dx = dh W1ᵀ
  // dx: (B,T,D) written   dy, x: (B,T,D)   s: from forward
  static constexpr void backward(btd& dx, params_t& grad, const btd& dy, const btd& x, const params_t& p,
                                 const saved& s, scratch& w) {
    matmul_backward_input<C.precision>(w.dh, dy, p.w2);                     // da = dy W2ᵀ
    matmul_backward_weight<C.precision>(grad.w2, s.a, dy);                  // dW2 += aᵀ dy
    matmul_backward_bias(grad.b2, dy);                         // db2 += Σ dy
    parallel::split(N, F, [&](std::size_t r0, std::size_t r1) {  // dh = da ⊙ act'(h)
      for (std::size_t r = r0; r < r1; ++r)
        act::template backward<F>(w.dh.data() + r * F, w.dh.data() + r * F, s.h.data() + r * F);
    });
    matmul_backward_weight<C.precision>(grad.w1, x, w.dh);                  // dW1 += xᵀ dh
    matmul_backward_bias(grad.b1, w.dh);                       // db1 += Σ dh
    matmul_backward_input<C.precision>(dx, w.dh, p.w1);                     // dx = dh W1ᵀ
  }
};

}  // namespace sf::layers

// The kinds in headers of their own, one #include line each.
#include "staticformer/layers/ffn_gated.hpp"
