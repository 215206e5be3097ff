// staticformer/layers/attention.hpp — causal multi-head self-attention with a padding mask, and
// grouped-query attention.
//
// Per head h (columns h·d_k … (h+1)·d_k-1 of Q; of K and V, those of its key/value head
// g = h / (H / kv): kv = H is multi-head attention, kv < H groups of H / kv query heads share one
// key/value head, kv = 1 is multi-query; K and V are (B, T, kv·d_k)):
//   S = Q_h K_gᵀ / √d_k,  masked,  P = softmax_rows(S),  O_h = P V_g
// heads are concatenated in order, then y = O W_O + b_O.
// Mask: query i may attend key j iff j ≤ i and token j is not padding. A row with no
// allowed key has P = 0, so its output is 0 and it passes no gradient (never NaN).
// Every product goes through the shape-checked entry points of matmul.hpp, on typed
// views: a head is a (T, d_k) view with row stride D (sf::head), a causal row block a
// (rows, keys) view of P. Layer interface (see model.hpp): state<Save>, scratch, forward, backward.
#pragma once
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "staticformer/config.hpp"
#include "staticformer/kernels/gemv.hpp"
#include "staticformer/kernels/vmath.hpp"
#include "staticformer/layers/position.hpp"
#include "staticformer/matmul.hpp"
#include "staticformer/parallel.hpp"
#include "staticformer/math.hpp"
#include "staticformer/params.hpp"

namespace sf::layers {

template <config C, class T = float>
struct attention {
  static constexpr std::size_t B = C.B, S = C.T, D = C.D, H = C.H, dk = C.D / C.H, N = C.B * C.T;
  static constexpr std::size_t KV = C.kv(), G = H / KV, DK = KV * dk;  // key/value heads, group size, K's width
  static constexpr bool use_rope = C.position == position_kind::rope;
  using params_t = attention_params<arch_of(C), T>;
  using btd = typename types<C, T>::btd;
  using btk = typename types<C, T>::btk;  // (B,T,kv·d_k): K, V (btd without grouped-query attention)
  using bhtt = typename types<C, T>::bhtt;
  using tt = tensor<T, Seq<C.T>, Seq<C.T>>;  // one head's (T, T) scores

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

  // Kept by forward: q, o (B,T,D), k (after RoPE), v (B,T,kv·d_k); the probabilities P of every
  // (b, h), (B,H,T,T), for backward — or, for inference, one (T,T) scratch reused by every (b, h).
  template <bool Save> struct state {
    btd q;
    btk k, v;
    btd o;
    std::conditional_t<Save, bhtt, tt> probs;
  };
  using saved = state<true>;
  struct scratch {
    btd dq;
    btk dkk, dv;  // (B,T,kv·d_k)
    btd dO;       // (B,T,D)
    tt dP;        // (T,T)
  };

  // q = x Wq + bq, k = x Wk + bk, v = x Wv + bv  (RoPE on q and k), per (b, h): P = softmax(mask(q kᵀ/√d_k)),
  // o = P v (heads side by side), y = o Wo + bo.
  // y: (B,T,D)  x: (B,T,D)  pad: (B,T) or null
  template <bool Save>
  static constexpr void forward(btd& y, const btd& x, const params_t& p, state<Save>& s, const padding_t<C>* pad) {
    forward_impl(y, x, p, s.q, s.k, s.v, s.o, s.probs.data(), Save ? S * S : 0, pad);
  }
  // One function for training and inference (the same code, so the same rounding): the P of
  // (b, h) starts at probs + (b·H + h)·probs_step (probs_step = 0: one scratch for all).
  // q, o: (B,T,D) written  k, v: (B,T,kv·d_k) written
  SF_KERNEL_NOINLINE static constexpr void forward_impl(btd& y, const btd& x, const params_t& p, btd& q, btk& k,
                                                        btk& v, btd& o, T* probs, std::size_t probs_step,
                                                        const padding_t<C>* pad) {
    using pview = view<T, shape<Seq<S>>, Seq<S>, S>;
    const linear<C.precision> lin{};
    lin.qkv(q, k, v, x, p.wq, p.bq, p.wk, p.bk, p.wv, p.bv);
    if constexpr (use_rope) {
      rope<C, T>::forward(q);
      rope<C, T>::forward(k);
    }
    const T sc = scale();
    auto pair = [&](std::size_t b, std::size_t h) {
      const pview P{probs + (b * H + h) * probs_step};        // (T, T)
      const auto Q = head<H>(std::as_const(q), b, h);       // (T, d_k), row stride D
      const auto K = head<KV>(std::as_const(k), b, h / G);  // (T, d_k), row stride kv·d_k
      const auto V = head<KV>(std::as_const(v), b, h / G);
      const auto O = head<H>(o, b, h);
      // Causal: the rows [r0, r0+rows) of S, P only need the keys [0, r0+rows).
      causal_blocks([&](auto r0_, auto rows_) {
        constexpr std::size_t r0 = r0_, rows = rows_, keys = r0 + rows;
        const auto Pb = P.template block<r0, rows, 0, keys>();
        matmul_nt(Pb, Q.template rows_at<r0, rows>(), K.template rows_at<0, keys>());  // S = Q_h K_hᵀ
        for (std::size_t i = r0; i < r0 + rows; ++i) softmax_row(P.row(i), sc, pad, b, i);  // zeroes j > i
        matmul(O.template rows_at<r0, rows>(), Pb, V.template rows_at<0, keys>());     // O_h = P V_h
      });
    };
    // (b, h) pairs split over threads when a pool is installed and every pair has its own P
    // (training); each pair is computed whole by one task: the same bits (parallel.hpp).
    if (!std::is_constant_evaluated() && probs_step != 0) {
      parallel::for_ranges(B * H, [&](std::size_t first, std::size_t last, std::size_t) {
        for (std::size_t bh = first; bh < last; ++bh) pair(bh / H, bh % H);
      });
    } else {
      for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h) pair(b, h);
    }
    lin(y, o, p.wo, p.bo);
  }

  // ---------------------------------------------------------------- rows at positions, with a KV cache
  // Decoding (decode.hpp) runs this layer on a few rows at a time — a prefill chunk (P consecutive
  // positions of one stream) or one token of each of R streams — against a cache of the keys and
  // values of every position seen so far. Each row's result is bit for bit what forward_impl
  // computes for that position: the same products (every sum in k order from 0, one FMA at a
  // time: kernels/gemv.hpp), RoPE's and softmax's row functions, and keys past a query's position
  // enter P·V with probability exactly 0 (the cache past a stream's position holds 0 or values the
  // stream wrote: always finite).
  //
  // The key positions of a prefill chunk's products go in blocks of this many: the largest of 64,
  // 32, 16, 8 that divides T and is less than T (0: none, one product over all T keys).
  static constexpr std::size_t chunk_key_block = [] {
    for (std::size_t kb : {64u, 32u, 16u, 8u})
      if (S % kb == 0 && kb < S) return kb;
    return std::size_t{0};
  }();
  // The cache keeps the keys by blocks of this many positions (the chunks' key blocks, or all T).
  static constexpr std::size_t key_block = chunk_key_block != 0 ? chunk_key_block : S, key_blocks = S / key_block;
  // how many of the first `keys` positions fall in key block j
  static constexpr std::size_t block_keys(std::size_t keys, std::size_t j) {
    return keys - j * key_block < key_block ? keys - j * key_block : key_block;
  }

  // One layer's cache for Streams streams:
  //   kt: (Streams, kv, T/KB, d_k, KB) keys, transposed by blocks of KB = key_block positions:
  //       kt(b, g, j, c, i) is element c of head g's key at position j·KB + i. One query's scores
  //       q_h·K_gᵀ are vector–matrix products over contiguous positions, a chunk's plain matmuls
  //       (rows, d_k)·(d_k, KB), and the first positions of a stream are one contiguous run per
  //       head (d_k rows of KB), not d_k rows T apart (a 16-stream stories15M step: the queries'
  //       products over the keys 6.7 → 4.4% of its cycles, the step 2% shorter; docs/benchmarks.md,
  //       "Keys cached by blocks of 64 positions")
  //   v:  (Streams, T, kv·d_k) values: a key/value head's (T, d_k) slice is the right operand of P·V
  // (sized by the key/value heads: grouped-query attention divides it by H / kv)
  template <std::size_t Streams>
  struct cache {
    tensor<T, Batch<Streams>, Heads<KV>, Seq<key_blocks>, HeadDim<dk>, Seq<key_block>> kt;
    tensor<T, Batch<Streams>, Seq<S>, Model<DK>> v;

    // block j of K_gᵀ for stream b: (d_k, KB), row stride KB
    constexpr const T* keys(std::size_t b, std::size_t g, std::size_t j) const { return kt.data() + kt.offset(b, g, j, 0, 0); }
    constexpr void reset(std::size_t b) {  // stream b: zeros
      T* k = kt.data() + b * (KV * dk * S);
      T* vb = v.data() + b * (S * DK);
      for (std::size_t i = 0; i < KV * dk * S; ++i) k[i] = T{};
      for (std::size_t i = 0; i < S * DK; ++i) vb[i] = T{};
    }
    // k_row, v_row (kv·d_k) of stream b at position t
    constexpr void store(std::size_t b, std::size_t t, const T* k_row, const T* v_row) {
      for (std::size_t g = 0; g < KV; ++g) {  // kt(b, g, t / KB, c, t % KB) = kg[c·KB]
        T* kg = kt.data() + kt.offset(b, g, t / key_block, 0, t % key_block);
        for (std::size_t c = 0; c < dk; ++c) kg[c * key_block] = k_row[g * dk + c];
      }
      T* vr = v.data() + (b * S + t) * DK;
      for (std::size_t i = 0; i < DK; ++i) vr[i] = v_row[i];
    }
  };
  // What a decoder keeps besides: the q, k, v, o rows (1, R, D) of R rows at a time (a prefill
  // chunk, or one row per stream) and the scores, then probabilities, of a chunk's R queries of one
  // head (R, T), or of one query's H heads (H, T).
  template <std::size_t R, bool Chunk>
  struct rows_scratch {
    tensor<T, Batch<1>, Seq<R>, Model<D>> q;
    tensor<T, Batch<1>, Seq<R>, Model<DK>> k, v;
    tensor<T, Batch<1>, Seq<R>, Model<D>> o;
    std::conditional_t<Chunk, tensor<T, Seq<R>, Seq<S>>, tensor<T, Heads<H>, Seq<S>>> scores;
  };

  // Prefill: positions s0 … s0+R-1 of stream b (s0 + R ≤ T). Their keys and values are written to
  // the cache; every query attends positions 0 … its own.
  // y: (1,R,D) written  x: (1,R,D)  p: float or int8 parameters  lin: the product (ffn::rows)
  template <std::size_t R, std::size_t Streams, class Lin, class P>
  static constexpr void forward_chunk(const Lin& lin, tensor<T, Batch<1>, Seq<R>, Model<D>>& y,
                                      const tensor<T, Batch<1>, Seq<R>, Model<D>>& x, const P& p,
                                      cache<Streams>& c, std::size_t b, std::size_t s0, rows_scratch<R, true>& w) {
    lin.qkv(w.q, w.k, w.v, x, p.wq, p.bq, p.wk, p.bk, p.wv, p.bv);
    if constexpr (use_rope)
      for (std::size_t i = 0; i < R; ++i) rope<C, T>::rotate_row(w.q.data() + i * D, s0 + i);
    store_chunk(c, b, s0, w);
    const T sc = scale();
    if constexpr (chunk_key_block != 0) {
      // Keys in blocks of KB positions, up to the chunk's last position: the cache past it holds
      // only probability-0 keys for every row, which add nothing to a sum (a step leaves them out
      // too), so the products stop there; o_h accumulates block after block, continuing each
      // element's k-order chain (the same bits as the product over all T keys).
      constexpr std::size_t KB = chunk_key_block;
      const std::size_t nb = (s0 + R + KB - 1) / KB;  // key blocks that hold positions 0 … s0+R-1
      using scores_block = view<T, shape<Seq<R>>, Seq<KB>, S>;  // (R, KB) of the (R, T) scores
      for (std::size_t h = 0; h < H; ++h) {
        const std::size_t g = h / G;
        const T* vg = c.v.data() + b * S * DK + g * dk;           // V_g: (T, d_k), row stride kv·d_k
        for (std::size_t j = 0; j < nb; ++j)                      // q_h · K_gᵀ, keys of block j
          matmul(scores_block{w.scores.data() + j * KB}, head<H>(std::as_const(w.q), 0, h),
                 view<const T, shape<HeadDim<dk>>, Seq<KB>, KB>{c.keys(b, g, j)});
        // query i attends keys 0 … s0 + i: rows one key longer each (= softmax_scaled of each
        // row), the blocks' later keys 0
        simd::softmax_scaled_rows(w.scores.data(), R, S, s0 + 1, sc, 1, nb * KB);
        for (std::size_t j = 0; j < nb; ++j) {                    // o_h = P · V_g, block after block
          const auto Pb = scores_block{w.scores.data() + j * KB}.as_const();
          const view<const T, shape<Seq<KB>>, HeadDim<dk>, DK> Vb{vg + j * KB * DK};
          if (j == 0) matmul(head<H>(w.o, 0, h), Pb, Vb);
          else matmul(head<H>(w.o, 0, h), Pb, Vb, accumulate);
        }
      }
    } else {
      for (std::size_t h = 0; h < H; ++h) {
        const auto Sc = as_view(w.scores);                                              // (R, T) scores, then P
        matmul(Sc, head<H>(std::as_const(w.q), 0, h),                                   // q_h · K_gᵀ (one block)
               view<const T, shape<HeadDim<dk>>, Seq<S>, S>{c.keys(b, h / G, 0)});
        simd::softmax_scaled_rows(w.scores.data(), R, S, s0 + 1, sc, 1, S);  // query i: keys 0 … s0 + i, the rest 0
        matmul(head<H>(w.o, 0, h), Sc.as_const(), head<KV>(std::as_const(c.v), b, h / G));  // o_h = P · V_g
      }
    }
    lin(y, w.o, p.wo, p.bo);
  }

  // Prefill, keys and values only: what forward_chunk writes to the cache for positions s0 … s0+R-1
  // of stream b (the same products and RoPE: the same bits), without the queries, attention and
  // output (a decoder's last layer, whose outputs at these positions nothing reads).
  // x: (1,R,D)  p: float or int8 parameters  lin: the product
  template <std::size_t R, std::size_t Streams, class Lin, class P>
  static constexpr void keys_values_chunk(const Lin& lin, const tensor<T, Batch<1>, Seq<R>, Model<D>>& x, const P& p,
                                          cache<Streams>& c, std::size_t b, std::size_t s0, rows_scratch<R, true>& w) {
    lin(w.k, x, p.wk, p.bk);
    lin(w.v, x, p.wv, p.bv);
    store_chunk(c, b, s0, w);
  }
  // the chunk's keys (RoPE at their positions) and values into the cache
  template <std::size_t R, std::size_t Streams>
  static constexpr void store_chunk(cache<Streams>& c, std::size_t b, std::size_t s0, rows_scratch<R, true>& w) {
    for (std::size_t i = 0; i < R; ++i) {
      if constexpr (use_rope) rope<C, T>::template rotate_row<false, KV>(w.k.data() + i * DK, s0 + i);
      c.store(b, s0 + i, w.k.data() + i * DK, w.v.data() + i * DK);
    }
  }

  // Single-token steps: row r is stream streams[r] at position pos[streams[r]] (< T), its key and
  // value written to the cache; it attends positions 0 … pos[streams[r]]. Two rows may be the same
  // stream (then with the same input: they write the same key and value and give the same output).
  // y: (R,D) written  x: (R,D) (views)  streams: (R)  pos: the streams' positions  w: rows_scratch of ≥ R rows
  template <std::size_t R, std::size_t Streams, std::size_t WR, class Lin, class P, class Y, class X>
  static constexpr void forward_step(const Lin& lin, Y&& y, const X& x, const P& p, cache<Streams>& c,
                                     const std::size_t* streams, const std::size_t* pos, rows_scratch<WR, false>& w) {
    static_assert(R <= WR, "sf::layers::attention::forward_step: R rows need a scratch of R rows (internal)");
    using rd = view<T, shape<Batch<R>>, Model<D>, D>;
    using rk = view<T, shape<Batch<R>>, Model<DK>, DK>;
    const rd q{w.q.data()}, o{w.o.data()};
    const rk k{w.k.data()}, v{w.v.data()};
    lin.qkv(q, k, v, x, p.wq, p.bq, p.wk, p.bk, p.wv, p.bv);
    const T sc = scale();
    for (std::size_t r = 0; r < R; ++r) {
      const std::size_t b = streams[r], t = pos[b], keys = t + 1;
      if constexpr (use_rope) {
        rope<C, T>::rotate_row(q.row(r), t);
        rope<C, T>::template rotate_row<false, KV>(k.row(r), t);
      }
      c.store(b, t, k.row(r), v.row(r));
      // one query, every head: scores over positions 0 … t (rows of w.scores: one per head), softmax, P·V
      kernels::gemv_job<T> jobs[H];
      for (std::size_t j = 0; j * key_block < keys; ++j) {  // s_h = q_h · K_gᵀ   (keys), block after block
        for (std::size_t h = 0; h < H; ++h)
          jobs[h] = {w.scores.row(h) + j * key_block, q.row(r) + h * dk, c.keys(b, h / G, j), nullptr};
        kernels::gemv_batch<G>(jobs, H, key_block, block_keys(keys, j), dk);  // (the G heads of a key/value head: its keys read once)
      }
      simd::softmax_scaled_rows(w.scores.data(), H, S, keys, sc);  // = softmax_scaled of each head's row
      for (std::size_t h = 0; h < H; ++h)  // o_h = P_h · V_g   (d_k)
        jobs[h] = {o.row(r) + h * dk, w.scores.row(h), c.v.data() + b * S * DK + (h / G) * dk, nullptr};
      kernels::gemv_batch<G>(jobs, H, DK, dk, keys);  // (and its values)
    }
    lin(y, o, p.wo, p.bo);
  }

  // row[j] = softmax over allowed j of (row[j]·scale), 0 where not allowed (all 0 if none is allowed)
  // row: (T), query i of batch row b. Keys j > i are 0; padding keys are set to -inf first.
  static constexpr void softmax_row(T* row, T sc, const padding_t<C>* pad, std::size_t b, std::size_t i) {
    if constexpr (std::is_same_v<T, float>) {
      if (pad)
        for (std::size_t j = 0; j <= i; ++j)
          if ((*pad)(b, j)) row[j] = -std::numeric_limits<float>::infinity();
      simd::softmax_scaled(row, i + 1, sc);  // the library's one softmax kernel (kernels/vmath.hpp)
      for (std::size_t j = i + 1; j < S; ++j) row[j] = 0.0f;
    } else {  // double (finite-difference tests): the formula
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
  }

  // do = dy Woᵀ;  dWo += oᵀ dy;  dbo += Σ dy
  // per (b,h), g = h / (H/kv): dP = dO_h V_gᵀ;  dV_g (+)= Pᵀ dO_h;  dS = P ⊙ (dP - rowsum(P ⊙ dP)) / √d_k;
  //            dQ_h = dS K_g;  dK_g (+)= dSᵀ Q_h           (RoPE⁻¹ on dQ, dK)
  //            (a group's first head writes dK_g, dV_g, the others add to them, in head order)
  // dWq += xᵀ dQ, ... ;  dx = dQ Wqᵀ + dK Wkᵀ + dV Wvᵀ
  // dx: (B,T,D) written  dy, x: (B,T,D)  s: from forward
  static constexpr void backward(btd& dx, params_t& grad, const btd& dy, const btd& x, const params_t& p,
                                 const saved& s, scratch& w) {
    matmul_backward_input<C.precision>(w.dO, dy, p.wo);     // dO = dy Woᵀ
    matmul_backward_weight<C.precision>(grad.wo, s.o, dy);  // dWo += oᵀ dy
    matmul_backward_bias(grad.bo, dy);
    const T sc = scale();
    using pview = view<T, shape<Seq<S>>, Seq<S>, S>;
    // One (b, h) pair: dP is a (T, T) scratch — w.dP, or a task's own when pairs are split over
    // threads (each pair computed whole by one task: the same bits; parallel.hpp).
    auto pair = [&](std::size_t b, std::size_t h, const pview dP) {
        const std::size_t g = h / G;
        const bool first = h % G == 0;     // the group's first head writes dK_g, dV_g; the others add
        const auto P = at(s.probs, b, h);  // (T, T) from forward
        const auto Q = head<H>(s.q, b, h);
        const auto K = head<KV>(s.k, b, g), V = head<KV>(s.v, b, g);  // (row stride kv·d_k)
        const auto dO = head<H>(std::as_const(w.dO), b, h);
        const auto dQ = head<H>(w.dq, b, h);
        const auto dK = head<KV>(w.dkk, b, g), dV = head<KV>(w.dv, b, g);
        causal_blocks([&](auto r0_, auto rows_) {  // query rows [r0, r0+rows) see keys [0, r0+rows)
          constexpr std::size_t r0 = r0_, rows = rows_, keys = r0 + rows;
          const auto dPb = dP.template block<r0, rows, 0, keys>();
          matmul_nt(dPb, dO.template rows_at<r0, rows>(), V.template rows_at<0, keys>());  // dP = dO_h V_hᵀ
          for (std::size_t i = r0; i < r0 + rows; ++i) {  // dS = P ⊙ (dP - rowsum(P ⊙ dP)) / √d_k, 0 for j > i
            T* dpr = dP.row(i);
            const T* pr = P.row(i);
            T dot{};
            for (std::size_t j = 0; j <= i; ++j) dot += pr[j] * dpr[j];
            for (std::size_t j = 0; j <= i; ++j) dpr[j] = pr[j] * (dpr[j] - dot) * sc;
            for (std::size_t j = i + 1; j < S; ++j) dpr[j] = T{};
          }
          matmul(dQ.template rows_at<r0, rows>(), dPb.as_const(), K.template rows_at<0, keys>());  // dQ_h = dS K_h
        });
        causal_blocks([&](auto c0_, auto cols_) {  // keys [c0, c0+cols) are seen by queries [c0, T)
          constexpr std::size_t c0 = c0_, cols = cols_, queries = S - c0;
          const auto dVb = dV.template rows_at<c0, cols>(), dKb = dK.template rows_at<c0, cols>();
          const auto Pb = P.template block<c0, queries, c0, cols>();
          const auto dSb = dP.as_const().template block<c0, queries, c0, cols>();
          if (first) {
            matmul_tn(dVb, Pb, dO.template rows_at<c0, queries>());  // dV_g = Pᵀ dO_h
            matmul_tn(dKb, dSb, Q.template rows_at<c0, queries>());  // dK_g = dSᵀ Q_h
          } else {
            matmul_tn(dVb, Pb, dO.template rows_at<c0, queries>(), sf::accumulate);  // dV_g += Pᵀ dO_h
            matmul_tn(dKb, dSb, Q.template rows_at<c0, queries>(), sf::accumulate);  // dK_g += dSᵀ Q_h
          }
        });
    };
    bool split = false;
    if constexpr (S * S * sizeof(T) <= parallel::scratch_bytes) {
      if (!std::is_constant_evaluated()) {
        split = true;  // by (b, key/value head): a group's heads add to one dK_g, dV_g, in order, in one task
        parallel::for_ranges(B * KV, [&](std::size_t first, std::size_t last, std::size_t task) {
          const pview dP{task == 0 ? w.dP.data() : static_cast<T*>(parallel::task_scratch(*parallel::current, task))};
          for (std::size_t bg = first; bg < last; ++bg)
            for (std::size_t j = 0; j < G; ++j) pair(bg / KV, bg % KV * G + j, dP);
        });
      }
    }
    if (!split)
      for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h) pair(b, h, pview{w.dP.data()});
    if constexpr (use_rope) {
      rope<C, T>::backward(w.dq);
      rope<C, T>::backward(w.dkk);
    }
    matmul_backward_weight<C.precision>(grad.wq, x, w.dq);
    matmul_backward_weight<C.precision>(grad.wk, x, w.dkk);
    matmul_backward_weight<C.precision>(grad.wv, x, w.dv);
    matmul_backward_bias(grad.bq, w.dq);
    matmul_backward_bias(grad.bk, w.dkk);
    matmul_backward_bias(grad.bv, w.dv);
    matmul_backward_input<C.precision>(dx, w.dq, p.wq);                    // dx  = dQ Wqᵀ
    matmul_backward_input<C.precision>(dx, w.dkk, p.wk, sf::accumulate);   // dx += dK Wkᵀ
    matmul_backward_input<C.precision>(dx, w.dv, p.wv, sf::accumulate);    // dx += dV Wvᵀ
  }
};

}  // namespace sf::layers
