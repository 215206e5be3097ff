// staticformer/params.hpp — the model's parameters, declared once.
//
// Member names are the checkpoint names of docs/model.md: visiting sf::params<C> yields
// "tok_emb.weight", "pos_emb.weight", "blocks.0.norm1.weight", "blocks.0.attn.wq",
// ..., "norm_f.weight", "lm_head.weight". A parameter the configuration does not
// have (a bias when bias = false, pos_emb unless position = learned, lm_head when
// tied) is sf::none and is skipped by every visit.
//
// The same struct type holds parameters, gradients and optimizer moments.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "staticformer/config.hpp"
#include "staticformer/reflect.hpp"
#include "staticformer/tensor.hpp"

namespace sf {

// Tensor types of a configuration, named by their axes.
template <config C, class T = float>
struct types {
  using ax = axes<C>;
  using vec_d = tensor<T, typename ax::model>;                          // (D)
  using vec_f = tensor<T, typename ax::ffn>;                            // (F)
  using mat_dd = tensor<T, typename ax::model, typename ax::model>;     // (D, D)  [in, out]
  using mat_dkv = tensor<T, typename ax::model, typename ax::kv_model>; // (D, kv·d_k): Wk, Wv
  using vec_kv = tensor<T, typename ax::kv_model>;                      // (kv·d_k)
  using mat_df = tensor<T, typename ax::model, typename ax::ffn>;       // (D, F)
  using mat_fd = tensor<T, typename ax::ffn, typename ax::model>;       // (F, D)
  using mat_vd = tensor<T, typename ax::vocab, typename ax::model>;     // (V, D)
  using mat_td = tensor<T, typename ax::seq, typename ax::model>;       // (T, D)
  using mat_dv = tensor<T, typename ax::model, typename ax::vocab>;     // (D, V)
  using btd = tensor<T, typename ax::batch, typename ax::seq, typename ax::model>;  // (B, T, D)
  using btk = tensor<T, typename ax::batch, typename ax::seq, typename ax::kv_model>;  // (B, T, kv·d_k): K, V
  using btf = tensor<T, typename ax::batch, typename ax::seq, typename ax::ffn>;    // (B, T, F)
  using btv = tensor<T, typename ax::batch, typename ax::seq, typename ax::vocab>;  // (B, T, V)
  using bt = tensor<T, typename ax::batch, typename ax::seq>;                       // (B, T)
  // attention scores and probabilities, per (b, h): (B, H, T, T)
  using bhtt = tensor<T, typename ax::batch, typename ax::heads, typename ax::seq, typename ax::seq>;
  using bht = tensor<T, typename ax::batch, typename ax::heads, typename ax::seq>;  // (B, H, T)
};

// Token ids, targets (-1 = ignore) and the padding mask (1 = padding) of a batch.
template <config C> using tokens_t = tensor<std::int32_t, Batch<C.B>, Seq<C.T>>;
template <config C> using targets_t = tensor<std::int32_t, Batch<C.B>, Seq<C.T>>;
template <config C> using padding_t = tensor<std::uint8_t, Batch<C.B>, Seq<C.T>>;

template <arch A, class T = float>
struct embedding_params {
  using weight_t = typename types<A, T>::mat_vd;
  BOOST_HANA_DEFINE_STRUCT(embedding_params, (weight_t, weight));  // (V, D)
};

template <arch A, class T = float>
struct position_params {
  using weight_t = typename types<A, T>::mat_td;
  BOOST_HANA_DEFINE_STRUCT(position_params, (weight_t, weight));  // (T, D)
};

template <arch A, class T = float>
struct norm_params {
  using weight_t = typename types<A, T>::vec_d;
  using bias_t = maybe<A.norm == norm_kind::layernorm, typename types<A, T>::vec_d>;
  BOOST_HANA_DEFINE_STRUCT(norm_params, (weight_t, weight), (bias_t, bias));  // (D), (D) layernorm only
};

template <arch A, class T = float>
struct attention_params {
  using w_t = typename types<A, T>::mat_dd;
  using wkv_t = typename types<A, T>::mat_dkv;  // (D, kv·d_k): (D, D) without grouped-query attention
  using b_t = maybe<A.bias, typename types<A, T>::vec_d>;
  using bkv_t = maybe<A.bias, typename types<A, T>::vec_kv>;
  BOOST_HANA_DEFINE_STRUCT(attention_params,
                           (w_t, wq), (wkv_t, wk), (wkv_t, wv), (w_t, wo),   // [in, out]
                           (b_t, bq), (bkv_t, bk), (bkv_t, bv), (b_t, bo));  // bias = true
};

// The feed-forward's parameters, per kind (sf::ffn_kind; the layers: layers/ffn.hpp): one
// specialization of feed_forward_params each; ffn_params<A> is architecture A's.
template <ffn_kind K, arch A, class T>
struct feed_forward_params;
template <arch A, class T = float> using ffn_params = feed_forward_params<A.ffn, A, T>;

template <arch A, class T>
struct feed_forward_params<ffn_kind::mlp, A, T> {
  using w1_t = typename types<A, T>::mat_df;
  using w2_t = typename types<A, T>::mat_fd;
  using b1_t = maybe<A.bias, typename types<A, T>::vec_f>;
  using b2_t = maybe<A.bias, typename types<A, T>::vec_d>;
  BOOST_HANA_DEFINE_STRUCT(feed_forward_params, (w1_t, w1), (b1_t, b1), (w2_t, w2), (b2_t, b2));  // (D,F) (F) (F,D) (D)
};

// gated (LLaMA's SwiGLU with silu): w1 the gate, w3 the up projection, w2 the down one.
template <arch A, class T>
struct feed_forward_params<ffn_kind::gated, A, T> {
  using w1_t = typename types<A, T>::mat_df;
  using w2_t = typename types<A, T>::mat_fd;
  using b1_t = maybe<A.bias, typename types<A, T>::vec_f>;
  using b2_t = maybe<A.bias, typename types<A, T>::vec_d>;
  BOOST_HANA_DEFINE_STRUCT(feed_forward_params, (w1_t, w1), (b1_t, b1), (w2_t, w2), (b2_t, b2), (w1_t, w3),
                           (b1_t, b3));  // (D,F) (F) (F,D) (D) (D,F) (F)
};

template <arch A, class T = float>
struct block_params {
  using norm_t = norm_params<A, T>;
  using attn_t = attention_params<A, T>;
  using ffn_t = ffn_params<A, T>;
  BOOST_HANA_DEFINE_STRUCT(block_params, (norm_t, norm1), (attn_t, attn), (norm_t, norm2), (ffn_t, ffn));
};

template <arch A, class T = float>
struct lm_head_params {
  using weight_t = typename types<A, T>::mat_dv;
  BOOST_HANA_DEFINE_STRUCT(lm_head_params, (weight_t, weight));  // (D, V)
};

template <arch A, class T = float>
struct model_params {
  static_assert(check_config<A>());
  using tok_emb_t = embedding_params<A, T>;
  using pos_emb_t = maybe<A.position == position_kind::learned, position_params<A, T>>;
  using blocks_t = std::array<block_params<A, T>, A.L>;
  using norm_f_t = norm_params<A, T>;
  using lm_head_t = maybe<!A.tied, lm_head_params<A, T>>;
  BOOST_HANA_DEFINE_STRUCT(model_params, (tok_emb_t, tok_emb), (pos_emb_t, pos_emb), (blocks_t, blocks),
                           (norm_f_t, norm_f), (lm_head_t, lm_head));
};

// The parameters (or gradients, or optimizer moments) of an architecture, or of a config's
// architecture: params<C> for B = 32 and B = 1, f32 and bf16, is one type, so a model trained
// one way runs another.
template <auto C, class T = float>
  requires std::is_convertible_v<decltype(C), const arch&>
using params = model_params<arch_of(C), T>;

}  // namespace sf
