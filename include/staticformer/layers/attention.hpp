// staticformer/layers/attention.hpp — causal multi-head self-attention with a padding mask.
//
// Per head h (columns h·d_k … (h+1)·d_k-1 of Q, K, V):
//   S = Q Kᵀ / √d_k,  masked,  P = softmax_rows(S),  O = P V
// heads are concatenated in order, then y = O W_O + b_O.
// Mask: query i may attend key j iff j ≤ i and token j is not padding. A row with no
// allowed key has P = 0, so its output is 0 and it passes no gradient (never NaN).
#pragma once
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "staticformer/config.hpp"
#include "staticformer/kernels/bias.hpp"
#include "staticformer/kernels/gemm.hpp"
#include "staticformer/kernels/vmath.hpp"
#include "staticformer/layers/position.hpp"
#include "staticformer/math.hpp"
#include "staticformer/params.hpp"

namespace sf::layers {

template <config C, class T = float>
struct attention {
  static constexpr std::size_t B = C.B, S = C.T, D = C.D, H = C.H, dk = C.D / C.H, N = C.B * C.T;
  static constexpr bool use_rope = C.position == position_kind::rope;
  using params_t = attention_params<weights_config(C), T>;
  using btd = typename types<C, T>::btd;
  using bhtt = typename types<C, T>::bhtt;
  using tt = tensor<T, Seq<C.T>, Seq<C.T>>;  // one head's (T, T) scores

  static constexpr const T* bias_ptr(const auto& b) {
    if constexpr (C.bias) return b.data();
    else return nullptr;
  }
  static constexpr T scale() { return T{1} / math::sqrt(static_cast<T>(dk)); }

  // Causal blocking: f(r0, rows) for row blocks [r0, r0+rows) covering [0, T), as compile-time
  // constants, so a block's products only span the keys [0, r0+rows). At most 4 blocks (about 62%
  // of the full T×T work), at least 16 rows each.
  static constexpr std::size_t block_rows = S <= 64 ? 16 : (S / 4 + 15) / 16 * 16;
  template <class F>
  static constexpr void causal_blocks(F&& f) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (f(std::integral_constant<std::size_t, I * block_rows>{},
         std::integral_constant<std::size_t, (I * block_rows + block_rows <= S ? block_rows : S - I * block_rows)>{}),
       ...);
    }(std::make_index_sequence<(S + block_rows - 1) / block_rows>{});
  }
  static constexpr bool allowed(const padding_t<C>* pad, std::size_t b, std::size_t i, std::size_t j) {
    return j <= i && !(pad && (*pad)(b, j));
  }

  // q = x Wq + bq, k = x Wk + bk, v = x Wv + bv  (RoPE on q and k), per (b, h): P = softmax(mask(q kᵀ/√d_k)),
  // o = P v (heads side by side), y = o Wo + bo.
  // y: (B,T,D)  x: (B,T,D)  q, k, v, o: (B,T,D) saved   probs: P of every (b,h) when `save`, else one (T,T) scratch
  static constexpr void forward(btd& y, btd& q, btd& k, btd& v, btd& o, T* probs, bool save, const btd& x,
                                const params_t& p, const padding_t<C>* pad) {
    kernels::gemm_nn<N, D, D>(q.data(), x.data(), p.wq.data(), bias_ptr(p.bq));
    kernels::gemm_nn<N, D, D>(k.data(), x.data(), p.wk.data(), bias_ptr(p.bk));
    kernels::gemm_nn<N, D, D>(v.data(), x.data(), p.wv.data(), bias_ptr(p.bv));
    if constexpr (use_rope) {
      rope<C, T>::forward(q.data());
      rope<C, T>::forward(k.data());
    }
    const T sc = scale();
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t h = 0; h < H; ++h) {
        T* P = save ? probs + (b * H + h) * S * S : probs;
        const std::size_t off = b * S * D + h * dk;
        // Causal: the rows [r0, r0+rows) of S, P only need the keys [0, r0+rows).
        causal_blocks([&](auto r0_, auto rows_) {
          constexpr std::size_t r0 = r0_, rows = rows_, keys = r0 + rows;
          // S = Q_h K_hᵀ          Q_h, K_h: (T, d_k) with row stride D
          kernels::gemm_nt<rows, keys, dk, D, D, S>(P + r0 * S, q.data() + off + r0 * D, k.data() + off);
          for (std::size_t i = r0; i < r0 + rows; ++i) softmax_row(P + i * S, sc, pad, b, i);  // zeroes j > i
          // O_h = P V_h           O_h, V_h: (T, d_k) with row stride D
          kernels::gemm_nn<rows, dk, keys, S, D, D>(o.data() + off + r0 * D, P + r0 * S, v.data() + off);
        });
      }
    kernels::gemm_nn<N, D, D>(y.data(), o.data(), p.wo.data(), bias_ptr(p.bo));
  }

  // row[j] = softmax over allowed j of (row[j]·scale), 0 where not allowed (all 0 if none is allowed)
  // row: (T), query i of batch row b
  static constexpr void softmax_row(T* row, T sc, const padding_t<C>* pad, std::size_t b, std::size_t i) {
    if constexpr (std::is_same_v<T, float>) {
      if (!std::is_constant_evaluated()) return softmax_row_simd(row, sc, pad, b, i);
    }
    T mx{};
    bool any = false;
    for (std::size_t j = 0; j <= i; ++j)
      if (allowed(pad, b, i, j)) {
        const T s = row[j] * sc;
        if (!any || s > mx) mx = s;
        any = true;
      }
    T sum{};
    for (std::size_t j = 0; j < S; ++j) {
      const T e = allowed(pad, b, i, j) ? math::exp(row[j] * sc - mx) : T{};
      row[j] = e;
      sum += e;
    }
    if (any) {
      const T inv = T{1} / sum;
      for (std::size_t j = 0; j <= i; ++j) row[j] *= inv;
    }
  }

  // The same, vectorised (float, run time): keys 0..i, padding keys set to -inf first.
  static void softmax_row_simd(float* row, float sc, const padding_t<C>* pad, std::size_t b, std::size_t i) {
    using V = simd::native<float>;
    using reg = typename V::reg;
    constexpr std::size_t W = V::width;
    const std::size_t len = i + 1, full = len / W * W, tail = len - full;
    constexpr float ninf = -std::numeric_limits<float>::infinity();
    if (pad)
      for (std::size_t j = 0; j < len; ++j)
        if ((*pad)(b, j)) row[j] = ninf;
    const reg vsc = V::set1(sc);
    reg vm = V::set1(ninf);  // max of the scaled scores
    for (std::size_t j = 0; j < full; j += W) vm = V::max(vm, V::mul(V::load(row + j), vsc));
    float m = V::hmax(vm);
    for (std::size_t j = full; j < len; ++j) m = std::max(m, row[j] * sc);
    if (m == ninf) {  // no allowed key: output 0, no gradient
      for (std::size_t j = 0; j < S; ++j) row[j] = 0.0f;
      return;
    }
    const reg mv = V::set1(m);
    reg vs = V::zero();
    for (std::size_t j = 0; j < full; j += W) {
      const reg e = simd::vexp<V>(V::sub(V::mul(V::load(row + j), vsc), mv));  // e^{s·sc - m}
      V::store(row + j, e);
      vs = V::add(vs, e);
    }
    if (tail) {
      const reg e = simd::vexp<V>(V::sub(V::mul(V::load_partial(row + full, tail), vsc), mv));
      V::store_partial(row + full, e, tail);
      vs = V::add(vs, V::load_partial(row + full, tail));
    }
    const reg r = V::set1(1.0f / V::hsum(vs));
    for (std::size_t j = 0; j < full; j += W) V::store(row + j, V::mul(V::load(row + j), r));
    if (tail) V::store_partial(row + full, V::mul(V::load_partial(row + full, tail), r), tail);
    for (std::size_t j = len; j < S; ++j) row[j] = 0.0f;
  }

  // do = dy Woᵀ;  dWo += oᵀ dy;  dbo += Σ dy
  // per (b,h): dP = dO_h V_hᵀ;  dV_h = Pᵀ dO_h;  dS = P ⊙ (dP - rowsum(P ⊙ dP)) / √d_k;
  //            dQ_h = dS K_h;  dK_h = dSᵀ Q_h           (RoPE⁻¹ on dQ, dK)
  // dWq += xᵀ dQ, ... ;  dx = dQ Wqᵀ + dK Wkᵀ + dV Wvᵀ
  // dx: (B,T,D) written  dy, x: (B,T,D)  q, k, v, o, probs: from forward
  // scratch: dq, dk, dv, dO: (B,T,D); dP: (T,T)
  static void backward(btd& dx, params_t& grad, btd& dq, btd& dkk, btd& dv, btd& dO, tt& dP, const btd& dy,
                       const btd& x, const btd& q, const btd& k, const btd& v, const btd& o, const bhtt& probs,
                       const params_t& p) {
    kernels::gemm_nt<N, D, D>(dO.data(), dy.data(), p.wo.data());
    kernels::gemm_tn<D, D, N, D, D, D, true>(grad.wo.data(), o.data(), dy.data());
    if constexpr (C.bias) kernels::bias_backward<N, D>(grad.bo.data(), dy.data());
    const T sc = scale();
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t h = 0; h < H; ++h) {
        const T* P = probs.data() + (b * H + h) * S * S;
        const std::size_t off = b * S * D + h * dk;
        causal_blocks([&](auto r0_, auto rows_) {  // query rows [r0, r0+rows) see keys [0, r0+rows)
          constexpr std::size_t r0 = r0_, rows = rows_, keys = r0 + rows;
          kernels::gemm_nt<rows, keys, dk, D, D, S>(dP.data() + r0 * S, dO.data() + off + r0 * D,
                                                    v.data() + off);  // dP = dO_h V_hᵀ
          for (std::size_t i = r0; i < r0 + rows; ++i) {  // dS = P ⊙ (dP - rowsum(P ⊙ dP)) / √d_k, 0 for j > i
            T* dpr = dP.data() + i * S;
            const T* pr = P + i * S;
            T dot{};
            for (std::size_t j = 0; j <= i; ++j) dot += pr[j] * dpr[j];
            for (std::size_t j = 0; j <= i; ++j) dpr[j] = pr[j] * (dpr[j] - dot) * sc;
            for (std::size_t j = i + 1; j < S; ++j) dpr[j] = T{};
          }
          kernels::gemm_nn<rows, dk, keys, S, D, D>(dq.data() + off + r0 * D, dP.data() + r0 * S,
                                                    k.data() + off);  // dQ_h = dS K_h
        });
        causal_blocks([&](auto c0_, auto cols_) {  // keys [c0, c0+cols) are seen by queries [c0, T)
          constexpr std::size_t c0 = c0_, cols = cols_, queries = S - c0;
          kernels::gemm_tn<cols, dk, queries, S, D, D>(dv.data() + off + c0 * D, P + c0 * S + c0,
                                                       dO.data() + off + c0 * D);  // dV_h = Pᵀ dO_h
          kernels::gemm_tn<cols, dk, queries, S, D, D>(dkk.data() + off + c0 * D, dP.data() + c0 * S + c0,
                                                       q.data() + off + c0 * D);   // dK_h = dSᵀ Q_h
        });
      }
    if constexpr (use_rope) {
      rope<C, T>::backward(dq.data());
      rope<C, T>::backward(dkk.data());
    }
    kernels::gemm_tn<D, D, N, D, D, D, true>(grad.wq.data(), x.data(), dq.data());
    kernels::gemm_tn<D, D, N, D, D, D, true>(grad.wk.data(), x.data(), dkk.data());
    kernels::gemm_tn<D, D, N, D, D, D, true>(grad.wv.data(), x.data(), dv.data());
    if constexpr (C.bias) {
      kernels::bias_backward<N, D>(grad.bq.data(), dq.data());
      kernels::bias_backward<N, D>(grad.bk.data(), dkk.data());
      kernels::bias_backward<N, D>(grad.bv.data(), dv.data());
    }
    kernels::gemm_nt<N, D, D>(dx.data(), dq.data(), p.wq.data());
    kernels::gemm_nt<N, D, D, D, D, D, true>(dx.data(), dkk.data(), p.wk.data());
    kernels::gemm_nt<N, D, D, D, D, D, true>(dx.data(), dv.data(), p.wv.data());
  }
};

}  // namespace sf::layers
