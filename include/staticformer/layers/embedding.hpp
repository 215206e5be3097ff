// staticformer/layers/embedding.hpp — token embedding lookup (+ learned or sinusoidal positions).
#pragma once
#include <cstddef>
#include <cstdint>

#include "staticformer/config.hpp"
#include "staticformer/layers/position.hpp"
#include "staticformer/params.hpp"

namespace sf::layers {

template <config C, class T = float>
struct embedding {
  static constexpr std::size_t B = C.B, S = C.T, D = C.D;
  using params_t = params<C, T>;
  using btd = typename types<C, T>::btd;

  // x[b,t,:] = tok_emb[tokens[b,t], :] + pos(t)
  //   learned: pos(t) = pos_emb[t, :];  sinusoidal: the fixed table;  rope: 0 (applied in attention)
  // x: (B,T,D)  tokens: (B,T) with ids in [0, V) (checked by the caller/loader)
  static constexpr void forward(btd& x, const tokens_t<C>& tokens, const params_t& p) {
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t t = 0; t < S; ++t) row(x.data() + (b * S + t) * D, tokens(b, t), t, p);
  }
  // One position: xr = tok_emb[token, :] + pos(t)     xr: (D)  token in [0, V)  t < T
  static constexpr void row(T* xr, std::int32_t token, std::size_t t, const params_t& p) {
    const T* e = p.tok_emb.weight.data() + static_cast<std::size_t>(token) * D;
    for (std::size_t i = 0; i < D; ++i) xr[i] = e[i];
    if constexpr (C.position == position_kind::learned) {
      const T* pe = p.pos_emb.weight.data() + t * D;
      for (std::size_t i = 0; i < D; ++i) xr[i] += pe[i];
    } else if constexpr (C.position == position_kind::sinusoidal) {
      sinusoidal<C, T>::add(xr, t);
    }
  }

  // dtok_emb[tokens[b,t], :] += dx[b,t,:]   (scatter-add into the rows used)
  // dpos_emb[t, :] += Σ_b dx[b,t,:]          (learned positions only)
  // dx: (B,T,D)
  static constexpr void backward(params_t& grad, const btd& dx, const tokens_t<C>& tokens) {
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t t = 0; t < S; ++t) {
        const T* g = dx.data() + (b * S + t) * D;
        T* e = grad.tok_emb.weight.data() + static_cast<std::size_t>(tokens(b, t)) * D;
        for (std::size_t i = 0; i < D; ++i) e[i] += g[i];
        if constexpr (C.position == position_kind::learned) {
          T* pe = grad.pos_emb.weight.data() + t * D;
          for (std::size_t i = 0; i < D; ++i) pe[i] += g[i];
        }
      }
  }
};

}  // namespace sf::layers
