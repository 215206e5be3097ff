// staticformer/model.hpp — the pre-norm decoder of SPEC.md, forward and backward.
//
//   x      = tok_emb[tokens] (+ pos)                                (B,T,D)
//   block: a = norm1(x); x += attn(a); f = norm2(x); x += ffn(f)
//   h      = norm_f(x);  logits = h W_head  (W_head = lm_head or tok_embᵀ)   (B,T,V)
//   loss   = mean over targets ≠ -1 of -log softmax(logits)[target]
//
// All storage is caller-owned, its size a compile-time constant:
//   static sf::params<C> p, g;          // parameters and gradients (same type)
//   static sf::activations<C> acts;     // saved for backward (+ backward scratch)
//   float loss = sf::forward(p, acts, tokens, targets, &padding);
//   sf::zero(g); sf::backward(p, g, acts, tokens, targets, &padding);
// Inference without saved activations, also usable in a constant expression:
//   static sf::inference_state<C> s;  sf::infer(p, s, tokens, &padding);  // s.logits
//
// Gradient rule: parameter gradients accumulate (+=), activation gradients are written.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "staticformer/config.hpp"
#include "staticformer/kernels/gemm.hpp"
#include "staticformer/layers/attention.hpp"
#include "staticformer/layers/embedding.hpp"
#include "staticformer/layers/ffn.hpp"
#include "staticformer/layers/loss.hpp"
#include "staticformer/layers/norm.hpp"
#include "staticformer/math.hpp"
#include "staticformer/params.hpp"
#include "staticformer/reflect.hpp"

namespace sf {

// What one block saves for backward.
template <config C, class T = float>
struct block_activations {
  using btd = typename types<C, T>::btd;
  using btf = typename types<C, T>::btf;
  using bt = typename types<C, T>::bt;
  using bhtt = typename types<C, T>::bhtt;
  BOOST_HANA_DEFINE_STRUCT(block_activations,
                           (btd, x),                 // block input (residual stream)
                           (btd, a), (bt, mean1), (bt, rstd1),        // norm1
                           (btd, q), (btd, k), (btd, v), (btd, o),     // attention (q, k after RoPE)
                           (bhtt, probs),                              // softmax of every (b, h)
                           (btd, xm),                                  // residual after attention
                           (btd, f), (bt, mean2), (bt, rstd2),         // norm2
                           (btf, h), (btf, act));                      // ffn pre- and post-activation
};

// Saved activations of the whole model, and the scratch backward needs.
template <config C, class T = float>
struct activations {
  static_assert(check_config<C>());
  using btd = typename types<C, T>::btd;
  using btf = typename types<C, T>::btf;
  using btv = typename types<C, T>::btv;
  using bt = typename types<C, T>::bt;
  using tt = tensor<T, Seq<C.T>, Seq<C.T>>;
  using blocks_t = std::array<block_activations<C, T>, C.L>;
  BOOST_HANA_DEFINE_STRUCT(activations,
                           (blocks_t, blocks),
                           (btd, x_final), (btd, hf), (bt, mean_f), (bt, rstd_f),  // final norm
                           (btv, logits),                                          // (B,T,V)
                           (btv, probs),                                           // softmax; dlogits in backward
                           (btd, y),                                               // sub-layer output scratch
                           (btd, dx), (btd, dtmp), (btd, dq), (btd, dk), (btd, dv), (btd, dO),  // backward scratch
                           (btf, dh), (tt, dP));
};

// Buffers for inference (nothing is kept for backward).
template <config C, class T = float>
struct inference_state {
  static_assert(check_config<C>());
  using btd = typename types<C, T>::btd;
  using btf = typename types<C, T>::btf;
  using btv = typename types<C, T>::btv;
  using tt = tensor<T, Seq<C.T>, Seq<C.T>>;
  BOOST_HANA_DEFINE_STRUCT(inference_state,
                           (btd, x), (btd, a), (btd, q), (btd, k), (btd, v), (btd, o), (btd, y),
                           (btf, h), (btf, act), (tt, scores),
                           (btv, logits));  // (B,T,V)
};

namespace detail {
// logits = h W_head     h: (B,T,D)  logits: (B,T,V)
template <config C, class T>
constexpr void lm_head_forward(typename types<C, T>::btv& logits, const typename types<C, T>::btd& h,
                               const params<C, T>& p) {
  constexpr std::size_t N = C.B * C.T;
  if constexpr (C.tied) kernels::gemm_nt<N, C.V, C.D>(logits.data(), h.data(), p.tok_emb.weight.data());  // h tok_embᵀ
  else kernels::gemm_nn<N, C.V, C.D>(logits.data(), h.data(), p.lm_head.weight.data());
}
}  // namespace detail

// Forward with saved activations; returns the mean loss and leaves the logits in a.logits.
// tokens, targets, padding: (B,T); padding may be null (no padding).
template <config C, class T>
T forward(const params<C, T>& p, activations<C, T>& a, const tokens_t<C>& tokens, const targets_t<C>& targets,
          const padding_t<C>* padding = nullptr) {
  using norm = layers::norm<C, T>;
  layers::embedding<C, T>::forward(a.blocks[0].x, tokens, p);
  for (std::size_t l = 0; l < C.L; ++l) {
    auto& s = a.blocks[l];
    const auto& w = p.blocks[l];
    auto& x_out = l + 1 < C.L ? a.blocks[l + 1].x : a.x_final;
    norm::forward(s.a, s.x, w.norm1, &s.mean1, &s.rstd1);
    layers::attention<C, T>::forward(a.y, s.q, s.k, s.v, s.o, s.probs.data(), true, s.a, w.attn, padding);
    for (std::size_t i = 0; i < s.x.size; ++i) s.xm[i] = s.x[i] + a.y[i];
    norm::forward(s.f, s.xm, w.norm2, &s.mean2, &s.rstd2);
    layers::ffn<C, T>::forward(a.y, s.h, s.act, s.f, w.ffn);
    for (std::size_t i = 0; i < s.x.size; ++i) x_out[i] = s.xm[i] + a.y[i];
  }
  norm::forward(a.hf, a.x_final, p.norm_f, &a.mean_f, &a.rstd_f);
  detail::lm_head_forward<C, T>(a.logits, a.hf, p);
  return layers::cross_entropy<C, T>::forward(a.probs, a.logits, targets);
}

// Backward after forward on the same inputs: grads += d loss / d params.
template <config C, class T>
void backward(const params<C, T>& p, params<C, T>& g, activations<C, T>& a, const tokens_t<C>& tokens,
              const targets_t<C>& targets, const padding_t<C>* padding = nullptr) {
  (void)padding;  // the mask is already folded into the saved probabilities
  using norm = layers::norm<C, T>;
  constexpr std::size_t N = C.B * C.T;
  auto& dlogits = a.probs;  // overwritten in place
  layers::cross_entropy<C, T>::backward(dlogits, a.probs, targets);
  // h W_head:  dh = dlogits W_headᵀ,  dW_head += hᵀ dlogits
  if constexpr (C.tied) {
    kernels::gemm_nn<N, C.D, C.V>(a.dtmp.data(), dlogits.data(), p.tok_emb.weight.data());
    kernels::gemm_tn<C.V, C.D, N, C.V, C.D, C.D, true>(g.tok_emb.weight.data(), dlogits.data(), a.hf.data());
  } else {
    kernels::gemm_nt<N, C.D, C.V>(a.dtmp.data(), dlogits.data(), p.lm_head.weight.data());
    kernels::gemm_tn<C.D, C.V, N, C.D, C.V, C.V, true>(g.lm_head.weight.data(), a.hf.data(), dlogits.data());
  }
  norm::backward(a.dx, g.norm_f, a.dtmp, a.x_final, p.norm_f, a.mean_f, a.rstd_f);
  for (std::size_t l = C.L; l-- > 0;) {
    auto& s = a.blocks[l];
    const auto& w = p.blocks[l];
    auto& gw = g.blocks[l];
    // x_out = xm + ffn(norm2(xm))
    layers::ffn<C, T>::backward(a.dtmp, gw.ffn, a.dh, a.dx, s.f, s.h, s.act, w.ffn);
    norm::backward(a.dtmp, gw.norm2, a.dtmp, s.xm, w.norm2, s.mean2, s.rstd2);
    a.dx += a.dtmp;
    // xm = x + attn(norm1(x))
    layers::attention<C, T>::backward(a.dtmp, gw.attn, a.dq, a.dk, a.dv, a.dO, a.dP, a.dx, s.a, s.q, s.k, s.v,
                                      s.o, s.probs, w.attn);
    norm::backward(a.dtmp, gw.norm1, a.dtmp, s.x, w.norm1, s.mean1, s.rstd1);
    a.dx += a.dtmp;
  }
  layers::embedding<C, T>::backward(g, a.dx, tokens);
}

// Inference forward: logits only, nothing saved. Runs in constant expressions too.
template <config C, class T>
constexpr void infer(const params<C, T>& p, inference_state<C, T>& s, const tokens_t<C>& tokens,
                     const padding_t<C>* padding = nullptr) {
  using norm = layers::norm<C, T>;
  layers::embedding<C, T>::forward(s.x, tokens, p);
  for (std::size_t l = 0; l < C.L; ++l) {
    const auto& w = p.blocks[l];
    norm::forward(s.a, s.x, w.norm1, nullptr, nullptr);
    layers::attention<C, T>::forward(s.y, s.q, s.k, s.v, s.o, s.scores.data(), false, s.a, w.attn, padding);
    s.x += s.y;
    norm::forward(s.a, s.x, w.norm2, nullptr, nullptr);
    layers::ffn<C, T>::forward(s.y, s.h, s.act, s.a, w.ffn);
    s.x += s.y;
  }
  norm::forward(s.a, s.x, p.norm_f, nullptr, nullptr);
  detail::lm_head_forward<C, T>(s.logits, s.a, p);
}

// A small, portable PRNG (splitmix64): the same numbers on every platform, constexpr.
struct splitmix64 {
  std::uint64_t state;
  constexpr std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  constexpr double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  constexpr double normal() {                                                              // Box–Muller
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return math::sqrt(-2.0 * math::log(u1)) * math::cos(6.283185307179586 * u2);
  }
};

// GPT-2 style initialisation: matrices ~ N(0, 0.02) (the residual projections wo and
// w2 scaled by 1/√(2L)), norm weights 1, biases 0. Deterministic for a seed; constexpr.
// (Takes model_params<C', T> so that C' — the batch-free config — is deduced: sf::init_params(p, seed).)
template <config C, class T>
constexpr void init_params(model_params<C, T>& p, std::uint64_t seed, double std = 0.02) {
  splitmix64 rng{seed};
  const double resid_std = std / math::sqrt(2.0 * static_cast<double>(C.L));
  visit(
      [&](const param_name& name, auto& t) {
        using X = std::remove_cvref_t<decltype(t)>;
        if constexpr (X::rank == 1) {
          t.fill(name.ends_with("weight") ? T{1} : T{0});  // norm gains 1, biases 0
        } else {
          const double s = name.ends_with("wo") || name.ends_with("w2") ? resid_std : std;
          for (auto& e : t) e = static_cast<T>(rng.normal() * s);
        }
      },
      p);
}

// Bytes of each part of a configuration's storage (all compile-time constants).
template <config C, class T = float>
struct memory_footprint {
  static constexpr std::size_t parameters = sizeof(params<C, T>);
  static constexpr std::size_t gradients = sizeof(params<C, T>);
  static constexpr std::size_t activations = sizeof(sf::activations<C, T>);
  static constexpr std::size_t inference = sizeof(inference_state<C, T>);
  static constexpr std::size_t adam_moments = 2 * sizeof(params<C, T>);
  static constexpr std::size_t training_total = parameters + gradients + activations + adam_moments;
  static constexpr std::size_t parameter_count = sf::parameter_count<params<C, T>>;
};

}  // namespace sf
