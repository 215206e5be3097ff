// staticformer/model.hpp — the pre-norm decoder of docs/model.md: the block described once,
// forward, backward and inference derived from that description.
//
//   x      = tok_emb[tokens] (+ pos)                                (B,T,D)
//   block: x += attn(norm1(x)); x += ffn(norm2(x))                  (the list sf::block<C> below)
//   h      = norm_f(x);  logits = h W_head  (W_head = lm_head or tok_embᵀ)   (B,T,V)
//   loss   = mean over targets ≠ -1 of -log softmax(logits)[target]
//
// All storage is caller-owned, its size a compile-time constant:
//   static sf::params<C> p, g;          // parameters and gradients (same type)
//   static sf::activations<C> acts;     // saved for backward (+ backward scratch)
//   float loss = sf::forward(p, acts, tokens, targets, &padding);
//   sf::zero(g); sf::backward(p, g, acts, tokens, targets, &padding);
// Inference is the same forward, saving nothing; also usable in a constant expression:
//   static sf::inference_state<C> s;  sf::infer(p, s, tokens, &padding);  // s.logits
//
// Gradient rule (the whole library): parameter gradients accumulate (+=), activation
// gradients are written (=).
//
// The layer interface. Every layer of the block (layers/norm.hpp, attention.hpp, ffn.hpp) has
//   params_t                     its parameters (a struct of params.hpp)
//   state<Save>                  what forward keeps: Save = true for backward, false for inference
//   scratch                      what backward needs besides (one, shared by all blocks)
//   forward(y, x, p, state, padding)                  y: (B,T,D) written   x: (B,T,D)
//   backward(dx, grad, dy, x, p, saved, scratch)      dx written, grad accumulated
// The block is the flat list of its residual sub-layers, x ← x + Layer(Norm(x)); the saved
// activations, the backward scratch, the inference buffers and the three loops below are all
// derived from that list. Adding a layer: its header, its parameters in block_params
// (params.hpp), one line in sf::block.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include <boost/hana/at.hpp>
#include <boost/hana/tuple.hpp>

#include "staticformer/config.hpp"
#include "staticformer/init.hpp"
#include "staticformer/layers/attention.hpp"
#include "staticformer/layers/embedding.hpp"
#include "staticformer/layers/ffn.hpp"
#include "staticformer/layers/loss.hpp"
#include "staticformer/layers/norm.hpp"
#include "staticformer/matmul.hpp"
#include "staticformer/parallel.hpp"
#include "staticformer/params.hpp"
#include "staticformer/reflect.hpp"

namespace sf {

// ---------------------------------------------------------------- residual sub-layers
// x ← x + Layer(Norm(x)), the norm's parameters at block_params::*NormP, the layer's at ::*LayerP.
template <class Norm, class Layer, auto NormP, auto LayerP>
struct residual {
  using norm = Norm;
  using layer = Layer;
  template <class BP> static constexpr auto& norm_of(BP& p) { return p.*NormP; }
  template <class BP> static constexpr auto& layer_of(BP& p) { return p.*LayerP; }
};

// What one residual sub-layer keeps; Save = false (inference): no copy of its input.
template <class R, bool Save, class Btd>
struct residual_state {
  [[no_unique_address]] maybe<Save, Btd> x;                         // input: the residual stream (B,T,D)
  Btd a;                                                            // Norm(x), the layer's input (B,T,D)
  [[no_unique_address]] typename R::norm::template state<Save> norm;  // the norm's kept state
  typename R::layer::template state<Save> layer;                    // the layer's kept state
};
template <class R>
struct residual_scratch {
  [[no_unique_address]] typename R::norm::scratch norm;
  [[no_unique_address]] typename R::layer::scratch layer;
};

// A block: its residual sub-layers in order, and the storage derived from them.
template <class... R>
struct sublayers {
  static constexpr std::size_t size = sizeof...(R);
  template <std::size_t J> using at = std::tuple_element_t<J, std::tuple<R...>>;
  template <bool Save, class Btd> using state = boost::hana::tuple<residual_state<R, Save, Btd>...>;
  using scratch = boost::hana::tuple<residual_scratch<R>...>;
};

// ---------------------------------------------------------------- the block, described once
template <config C, class T = float>
using block = sublayers<
    residual<layers::norm<C, T>, layers::attention<C, T>, &block_params<arch_of(C), T>::norm1,
             &block_params<arch_of(C), T>::attn>,
    residual<layers::norm<C, T>, layers::ffn<C, T>, &block_params<arch_of(C), T>::norm2,
             &block_params<arch_of(C), T>::ffn>>;

// ---------------------------------------------------------------- storage derived from the block
// Saved activations of the whole model, and the scratch backward needs.
template <config C, class T = float>
struct activations {
  static_assert(check_config<C>());
  using btd = typename types<C, T>::btd;
  using btv = typename types<C, T>::btv;
  using blocks_t = std::array<typename block<C, T>::template state<true, btd>, C.L>;
  using norm_f_t = typename layers::norm<C, T>::template state<true>;
  using scratch_t = typename block<C, T>::scratch;
  BOOST_HANA_DEFINE_STRUCT(activations,
                           (blocks_t, blocks),                            // per block, per sub-layer
                           (btd, x_final), (btd, hf), (norm_f_t, norm_f),  // final norm: input, output, μ/rstd
                           (btv, logits),                                  // (B,T,V)
                           (btv, probs),                                   // softmax; dlogits in backward
                           (btd, y),                                       // sub-layer output scratch
                           (btd, dx), (btd, da), (scratch_t, scratch));    // backward scratch
};

// Buffers for inference: one residual state per sub-layer, reused by every block; nothing kept.
template <config C, class T = float>
struct inference_state {
  static_assert(check_config<C>());
  using btd = typename types<C, T>::btd;
  using btv = typename types<C, T>::btv;
  using blocks_t = typename block<C, T>::template state<false, btd>;
  using norm_f_t = typename layers::norm<C, T>::template state<false>;
  BOOST_HANA_DEFINE_STRUCT(inference_state,
                           (btd, x),                 // the residual stream
                           (blocks_t, blocks),       // one state per sub-layer
                           (btd, y),                 // sub-layer output
                           (norm_f_t, norm_f), (btd, hf),
                           (btv, logits));           // (B,T,V)
};

namespace detail {
// The forward / backward / inference loops, derived from sf::block<C, T>.
template <config C, class T>
struct decoder {
  using blk = block<C, T>;
  using btd = typename types<C, T>::btd;
  using btv = typename types<C, T>::btv;
  using norm = layers::norm<C, T>;
  static constexpr std::size_t n = blk::size;

  // The input of sub-layer J of block l; J = n: the block's output, the next block's input.
  template <std::size_t J>
  static constexpr btd& stream(activations<C, T>& a, std::size_t l) {
    if constexpr (J == n) return l + 1 < C.L ? boost::hana::at_c<0>(a.blocks[l + 1]).x : a.x_final;
    else return boost::hana::at_c<J>(a.blocks[l]).x;
  }
  template <std::size_t J>
  static constexpr btd& stream(inference_state<C, T>& s, std::size_t) { return s.x; }  // updated in place
  static constexpr btd& final_stream(activations<C, T>& a) { return a.x_final; }
  static constexpr btd& final_stream(inference_state<C, T>& s) { return s.x; }
  template <std::size_t J>
  static constexpr auto& state(activations<C, T>& a, std::size_t l) { return boost::hana::at_c<J>(a.blocks[l]); }
  template <std::size_t J>
  static constexpr auto& state(inference_state<C, T>& s, std::size_t) { return boost::hana::at_c<J>(s.blocks); }

  // logits = h W_head     h: (B,T,D)  logits: (B,T,V)
  static constexpr void lm_head_forward(btv& logits, const btd& h, const params<C, T>& p) {
    if constexpr (C.tied) matmul_nt<C.precision>(logits, h, p.tok_emb.weight);  // h tok_embᵀ
    else matmul<C.precision>(logits, h, p.lm_head.weight);
  }

  // out = in + Layer(Norm(in)) for sub-layer J of block l (out may be in: inference)
  template <std::size_t J, class S>
  static constexpr void sublayer_forward(const block_params<arch_of(C), T>& bp, S& s, std::size_t l,
                                         const padding_t<C>* pad) {
    using R = typename blk::template at<J>;
    auto& st = state<J>(s, l);
    const btd& in = stream<J>(s, l);
    btd& out = stream<J + 1>(s, l);
    R::norm::forward(st.a, in, R::norm_of(bp), st.norm, pad);
    R::layer::forward(s.y, st.a, R::layer_of(bp), st.layer, pad);
    parallel::split(C.B * C.T, C.D, [&](std::size_t r0, std::size_t r1) {  // rows of (B·T, D)
      for (std::size_t i = r0 * C.D; i < r1 * C.D; ++i) out[i] = in[i] + s.y[i];
    });
  }

  // Embedding, every block, final norm and head. S: activations (saving) or inference_state.
  template <class S>
  static constexpr void forward(const params<C, T>& p, S& s, const tokens_t<C>& tokens, const padding_t<C>* pad) {
    layers::embedding<C, T>::forward(stream<0>(s, 0), tokens, p);
    for (std::size_t l = 0; l < C.L; ++l)
      [&]<std::size_t... J>(std::index_sequence<J...>) {
        (sublayer_forward<J>(p.blocks[l], s, l, pad), ...);
      }(std::make_index_sequence<n>{});
    norm::forward(s.hf, final_stream(s), p.norm_f, s.norm_f, pad);
    lm_head_forward(s.logits, s.hf, p);
  }

  // Given dx = d loss / d out of sub-layer J of block l: dx ← d loss / d in (+= the residual path).
  template <std::size_t J>
  static constexpr void sublayer_backward(const block_params<arch_of(C), T>& bp,
                                          block_params<arch_of(C), T>& gb, activations<C, T>& a,
                                          std::size_t l) {
    using R = typename blk::template at<J>;
    const auto& st = state<J>(a, l);
    auto& w = boost::hana::at_c<J>(a.scratch);
    R::layer::backward(a.da, R::layer_of(gb), a.dx, st.a, R::layer_of(bp), st.layer, w.layer);  // d Layer input
    R::norm::backward(a.da, R::norm_of(gb), a.da, st.x, R::norm_of(bp), st.norm, w.norm);      // d Norm input
    parallel::split(C.B * C.T, C.D, [&](std::size_t r0, std::size_t r1) {                     // + residual
      for (std::size_t i = r0 * C.D; i < r1 * C.D; ++i) a.dx[i] += a.da[i];
    });
  }

  // counted: the number of targets the loss is divided by (this batch's, or that of the batch
  // this is a chunk of)
  static constexpr void backward(const params<C, T>& p, params<C, T>& g, activations<C, T>& a,
                                 const tokens_t<C>& tokens, const targets_t<C>& targets, std::size_t counted) {
    auto& dlogits = a.probs;  // overwritten in place
    layers::cross_entropy<C, T>::backward(dlogits, a.probs, targets, counted);
    // h W_head:  dh = dlogits W_headᵀ,  dW_head += hᵀ dlogits
    if constexpr (C.tied) {
      matmul<C.precision>(a.da, dlogits, p.tok_emb.weight);                      // dh = dlogits tok_emb
      matmul_tn<C.precision>(g.tok_emb.weight, dlogits, a.hf, sf::accumulate);  // dtok_emb += dlogitsᵀ h
    } else {
      matmul_backward_input<C.precision>(a.da, dlogits, p.lm_head.weight);
      matmul_backward_weight<C.precision>(g.lm_head.weight, a.hf, dlogits);
    }
    typename norm::scratch none_needed{};
    norm::backward(a.dx, g.norm_f, a.da, a.x_final, p.norm_f, a.norm_f, none_needed);
    for (std::size_t l = C.L; l-- > 0;)
      [&]<std::size_t... J>(std::index_sequence<J...>) {
        (sublayer_backward<n - 1 - J>(p.blocks[l], g.blocks[l], a, l), ...);  // last sub-layer first
      }(std::make_index_sequence<n>{});
    layers::embedding<C, T>::backward(g, a.dx, tokens);
  }
};
}  // namespace detail

// Forward with saved activations; returns the mean loss and leaves the logits in a.logits.
// tokens, targets, padding: (B,T); padding may be null (no padding).
template <config C, class T>
constexpr T forward(const params<C, T>& p, activations<C, T>& a, const tokens_t<C>& tokens,
                    const targets_t<C>& targets, const padding_t<C>* padding = nullptr) {
  detail::decoder<C, T>::forward(p, a, tokens, padding);
  return layers::cross_entropy<C, T>::forward(a.probs, a.logits, targets);
}

// Backward after forward on the same inputs: grads += d loss / d params.
// (The padding mask is already folded into the saved probabilities.)
template <config C, class T>
constexpr void backward(const params<C, T>& p, params<C, T>& g, activations<C, T>& a, const tokens_t<C>& tokens,
                        const targets_t<C>& targets, const padding_t<C>* = nullptr) {
  detail::decoder<C, T>::backward(p, g, a, tokens, targets, layers::cross_entropy<C, T>::count(targets));
}

// ---------------------------------------------------------------- a batch in chunks of sequences
// A training batch of B sequences can run Rows sequences at a time (gradient accumulation): the
// activations kept for backward are those of one chunk, so that they stay in the core's caches
// (nano at B = 32 keeps 22 MB for the whole batch, 5.6 MB per chunk of 8). The default Rows is the
// largest divisor of B with at most 512 tokens (Rows·T); B itself for every shape up to 512 tokens.
//   static sf::batch_activations<C> ba;                     // one chunk's activations
//   sf::zero(g);
//   float loss = sf::forward_backward(p, g, ba, tokens, targets);   // grads += d loss / d params
// The results are those of sf::forward + sf::backward on the whole batch: the same logits and loss
// bits (rows are independent in forward; the loss's compensated sum continues over the chunks), the
// same gradient bits for an untied model (every parameter gradient accumulates row by row, and a
// product's chain over rows continues from one chunk to the next), and for a tied model the same
// up to rounding in tok_emb's gradient, which sums the head's and the embedding's contributions
// chunk by chunk instead of all of one, then all of the other.
inline constexpr std::size_t chunk_tokens = 512;
constexpr std::size_t default_chunk_rows(config c) {
  std::size_t r = c.B;
  while (r > 1 && (r * c.T > chunk_tokens || c.B % r != 0)) --r;
  return r;
}
template <config C, std::size_t Rows>
inline constexpr config chunk_config = [] {
  config c = C;
  c.B = Rows;
  return c;
}();

template <config C, class T = float, std::size_t Rows = default_chunk_rows(C)>
struct batch_activations {
  static_assert(Rows >= 1 && C.B % Rows == 0,
                "sf::batch_activations<C, T, Rows>: Rows (sequences per chunk) must divide the batch C.B");
  static constexpr config chunk = chunk_config<C, Rows>;
  static constexpr std::size_t rows = Rows, chunks = C.B / Rows;
  activations<chunk, T> a;     // one chunk's saved activations; its logits are the last chunk's
  tokens_t<chunk> tokens;      // one chunk's rows of the batch
  targets_t<chunk> targets;
  padding_t<chunk> padding;
};

namespace detail {
// Copies rows [c·R, (c+1)·R) of a (B,T) tensor into an (R,T) one.
template <class Dst, class Src>
constexpr void copy_rows(Dst& dst, const Src& src, std::size_t c) {
  for (std::size_t i = 0; i < Dst::size; ++i) dst[i] = src[c * Dst::size + i];
}
// Forward (and, Backward: backward) of the batch chunk by chunk; returns the mean loss.
template <bool Backward, config C, class T, std::size_t Rows>
constexpr T chunked(const params<C, T>& p, params<C, T>* g, batch_activations<C, T, Rows>& s,
                    const tokens_t<C>& tokens, const targets_t<C>& targets, const padding_t<C>* padding) {
  using S = batch_activations<C, T, Rows>;
  using ce = layers::cross_entropy<S::chunk, T>;
  const std::size_t n = layers::cross_entropy<C, T>::count(targets);
  typename ce::loss_sum sum;
  for (std::size_t c = 0; c < S::chunks; ++c) {
    copy_rows(s.tokens, tokens, c);
    copy_rows(s.targets, targets, c);
    if (padding) copy_rows(s.padding, *padding, c);
    decoder<S::chunk, T>::forward(p, s.a, s.tokens, padding ? &s.padding : nullptr);
    ce::forward_sum(s.a.probs, s.a.logits, s.targets, sum);
    if constexpr (Backward) decoder<S::chunk, T>::backward(p, *g, s.a, s.tokens, s.targets, n);
  }
  return ce::mean(sum, n);
}
}  // namespace detail

// Forward and backward of a batch, s.rows sequences at a time: grads += d loss / d params; returns
// the mean loss. tokens, targets, padding: (B,T); padding may be null.
template <config C, class T, std::size_t Rows>
constexpr T forward_backward(const params<C, T>& p, params<C, T>& g, batch_activations<C, T, Rows>& s,
                             const tokens_t<C>& tokens, const targets_t<C>& targets,
                             const padding_t<C>* padding = nullptr) {
  return detail::chunked<true>(p, &g, s, tokens, targets, padding);
}
// The mean loss of a batch, s.rows sequences at a time (what forward_backward returns).
template <config C, class T, std::size_t Rows>
constexpr T forward(const params<C, T>& p, batch_activations<C, T, Rows>& s, const tokens_t<C>& tokens,
                    const targets_t<C>& targets, const padding_t<C>* padding = nullptr) {
  return detail::chunked<false, C, T, Rows>(p, nullptr, s, tokens, targets, padding);
}

// Inference: the same forward, saving nothing; logits in s.logits. Runs in constant expressions too.
template <config C, class T>
constexpr void infer(const params<C, T>& p, inference_state<C, T>& s, const tokens_t<C>& tokens,
                     const padding_t<C>* padding = nullptr) {
  detail::decoder<C, T>::forward(p, s, tokens, padding);
}

}  // namespace sf
