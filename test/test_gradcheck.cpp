// Finite-difference checks, in double, of every layer's backward for every variant,
// and of the whole model. For a layer y = f(x; θ) the scalar checked is
// L = Σ G ⊙ y with a fixed random G, so backward(dy = G) must give dL/dx and dL/dθ.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "staticformer/model.hpp"

namespace {
using T = double;

constexpr sf::config small(sf::norm_kind n, sf::position_kind p, sf::activation_kind a, bool bias, bool tied) {
  return sf::config{.V = 11, .T = 5, .D = 8, .H = 2, .L = 2, .F = 12, .B = 2,
                    .norm = n, .position = p, .activation = a, .tied = tied, .bias = bias};
}
using N = sf::norm_kind;
using P = sf::position_kind;
using A = sf::activation_kind;

template <class X>
void randomize(X& t, sf::splitmix64& r, double s = 1.0) {
  for (auto& e : t) e = static_cast<T>(r.normal() * s);
}
template <class S>
void randomize_params(S& p, sf::splitmix64& r, double s = 0.5) {
  sf::visit([&](const sf::param_name& name, auto& t) {
    for (auto& e : t) e = static_cast<T>(r.normal() * s + (name.ends_with("weight") && t.rank == 1 ? 1.0 : 0.0));
  }, p);
}

// Central difference of loss() w.r.t. one element.
template <class F>
double numeric(F&& loss, T& elem) {
  const T old = elem, h = 1e-6;
  elem = old + h;
  const double lp = loss();
  elem = old - h;
  const double lm = loss();
  elem = old;
  return (lp - lm) / (2 * h);
}

// Compares the analytic gradient of every element (up to `max_checks`, evenly spread) of x.
template <class F, class X, class G>
void check(const std::string& what, F&& loss, X& x, const G& analytic, std::size_t max_checks = 60) {
  const std::size_t step = x.size > max_checks ? x.size / max_checks : 1;
  int bad = 0;
  for (std::size_t i = 0; i < x.size; i += step) {
    const double fd = numeric(loss, x[i]);
    const double an = analytic[i];
    // double precision central differences: truncation ~h², rounding ~eps·|L|/h; 1e-7 absolute is far above both
    if (std::fabs(fd - an) > 1e-7 + 1e-6 * std::fabs(fd)) {
      if (bad++ < 3) ADD_FAILURE() << what << "[" << i << "]: finite difference " << fd << ", backward " << an;
    }
  }
}
template <class F, class S>
void check_params(const std::string& what, F&& loss, S& p, S& g, std::size_t max_checks = 60) {
  sf::visit([&](const sf::param_name& name, auto& t, const auto& gt) {
    check(what + " " + name.c_str(), loss, t, gt, max_checks);
  }, p, g);
}
template <class X, class G>
double dot(const X& a, const G& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size; ++i) s += a[i] * b[i];
  return s;
}

// ------------------------------------------------------------------------- norms
template <sf::config C>
void norm_check() {
  using L = sf::layers::norm<C, T>;
  static typename L::params_t p, g;
  static typename L::btd x, y, dy, dx;
  static typename L::saved st;
  static typename L::scratch w;
  typename L::template state<false> nothing;
  sf::splitmix64 r{1};
  randomize(x, r, 2.0);
  randomize(dy, r);
  randomize_params(p, r);
  L::forward(y, x, p, st);
  sf::zero(g);
  L::backward(dx, g, dy, x, p, st, w);
  auto loss = [&] { L::forward(y, x, p, nothing); return dot(y, dy); };
  check("norm dx", loss, x, dx);
  check_params("norm", loss, p, g);
}
TEST(GradCheck, LayerNorm) { norm_check<small(N::layernorm, P::learned, A::gelu, true, false)>(); }
TEST(GradCheck, RMSNorm) { norm_check<small(N::rmsnorm, P::learned, A::gelu, true, false)>(); }

// ------------------------------------------------------------------------- feed-forward
template <sf::config C>
void ffn_check() {
  using L = sf::layers::ffn<C, T>;
  static typename L::params_t p, g;
  static typename L::btd x, y, dy, dx;
  static typename L::saved st;
  static typename L::scratch w;
  sf::splitmix64 r{2};
  randomize(x, r);
  randomize(dy, r);
  randomize_params(p, r);
  L::forward(y, x, p, st);
  sf::zero(g);
  L::backward(dx, g, dy, x, p, st, w);
  auto loss = [&] { L::forward(y, x, p, st); return dot(y, dy); };
  check("ffn dx", loss, x, dx);
  check_params("ffn", loss, p, g);
}
TEST(GradCheck, FfnRelu) { ffn_check<small(N::layernorm, P::learned, A::relu, true, false)>(); }
TEST(GradCheck, FfnGelu) { ffn_check<small(N::layernorm, P::learned, A::gelu, true, false)>(); }
TEST(GradCheck, FfnGeluTanh) { ffn_check<small(N::layernorm, P::learned, A::gelu_tanh, true, false)>(); }
TEST(GradCheck, FfnNoBias) { ffn_check<small(N::layernorm, P::learned, A::gelu_tanh, false, false)>(); }

// ------------------------------------------------------------------------- attention
enum class pad_mode { none, left, right, full_row };
template <sf::config C>
void attention_check(pad_mode mode) {
  using L = sf::layers::attention<C, T>;
  static typename L::params_t p, g;
  static typename L::btd x, y, dy, dx;
  static typename L::saved st;
  static typename L::template state<false> infer_st;  // inference: one (T,T) scratch, nothing kept
  static typename L::scratch w;
  static sf::padding_t<C> pad;
  pad.zero();
  for (std::size_t t = 0; t < C.T; ++t) {
    if (mode == pad_mode::left && t < 2) pad(0, t) = 1;
    if (mode == pad_mode::right && t >= C.T - 2) pad(1, t) = 1;
    if (mode == pad_mode::full_row) pad(1, t) = 1;  // every key of row 1 is padding
  }
  sf::splitmix64 r{3};
  randomize(x, r);
  randomize(dy, r);
  randomize_params(p, r);
  const sf::padding_t<C>* pp = mode == pad_mode::none ? nullptr : &pad;
  L::forward(y, x, p, st, pp);
  for (auto e : y) ASSERT_TRUE(std::isfinite(e));
  sf::zero(g);
  L::backward(dx, g, dy, x, p, st, w);
  auto loss = [&] { L::forward(y, x, p, infer_st, pp); return dot(y, dy); };
  check("attention dx", loss, x, dx);
  check_params("attention", loss, p, g);
  if (mode == pad_mode::full_row) {
    // no allowed key: output is bo only (0 before the output projection) and no gradient reaches x of that row
    for (std::size_t t = 0; t < C.T; ++t)
      for (std::size_t i = 0; i < C.D; ++i) {
        EXPECT_EQ(st.o(1, t, i), 0.0);
        EXPECT_EQ(dx(1, t, i), 0.0);
      }
  }
}
constexpr auto att_plain = small(N::layernorm, P::learned, A::gelu, true, false);
constexpr auto att_rope = small(N::rmsnorm, P::rope, A::relu, false, false);
TEST(GradCheck, AttentionCausal) { attention_check<att_plain>(pad_mode::none); }
TEST(GradCheck, AttentionLeftPadding) { attention_check<att_plain>(pad_mode::left); }
TEST(GradCheck, AttentionRightPadding) { attention_check<att_plain>(pad_mode::right); }
TEST(GradCheck, AttentionFullyMaskedRow) { attention_check<att_plain>(pad_mode::full_row); }
// T = 37 spans three causal blocks (16 + 16 + 5 rows): the block-triangular products are checked too.
constexpr sf::config att_long{.V = 11, .T = 37, .D = 8, .H = 2, .L = 1, .F = 12, .B = 1,
                              .norm = N::layernorm, .position = P::rope, .activation = A::gelu, .tied = true, .bias = true};
TEST(GradCheck, AttentionCausalBlocks) { attention_check<att_long>(pad_mode::none); }
TEST(GradCheck, AttentionCausalBlocksPadding) { attention_check<att_long>(pad_mode::left); }
TEST(GradCheck, AttentionRope) { attention_check<att_rope>(pad_mode::none); }
TEST(GradCheck, AttentionRopeLeftPadding) { attention_check<att_rope>(pad_mode::left); }

// ------------------------------------------------------------------------- embedding + positions
template <sf::config C>
void embedding_check() {
  using L = sf::layers::embedding<C, T>;
  static sf::params<C, T> p, g;
  static typename L::btd x, dy;
  static sf::tokens_t<C> tok;
  sf::splitmix64 r{4};
  for (auto& t : tok) t = static_cast<std::int32_t>(r.next() % 4);  // few distinct ids: rows are used repeatedly
  randomize(dy, r);
  randomize_params(p, r);
  sf::zero(g);
  L::backward(g, dy, tok);
  auto loss = [&] { L::forward(x, tok, p); return dot(x, dy); };
  check("embedding tok_emb", loss, p.tok_emb.weight, g.tok_emb.weight);
  if constexpr (C.position == P::learned) check("embedding pos_emb", loss, p.pos_emb.weight, g.pos_emb.weight);
}
TEST(GradCheck, EmbeddingLearned) { embedding_check<small(N::layernorm, P::learned, A::gelu, true, true)>(); }
TEST(GradCheck, EmbeddingSinusoidal) { embedding_check<small(N::layernorm, P::sinusoidal, A::gelu, true, true)>(); }
TEST(GradCheck, EmbeddingRope) { embedding_check<small(N::layernorm, P::rope, A::gelu, true, true)>(); }

// ------------------------------------------------------------------------- cross-entropy
template <sf::config C>
void loss_check(bool all_ignored) {
  using L = sf::layers::cross_entropy<C, T>;
  static typename L::btv logits, probs, dlogits;
  static sf::targets_t<C> tgt;
  sf::splitmix64 r{5};
  randomize(logits, r, 3.0);
  for (std::size_t i = 0; i < tgt.size; ++i)
    tgt[i] = all_ignored || i % 3 == 1 ? -1 : static_cast<std::int32_t>(r.next() % C.V);
  const double l0 = L::forward(probs, logits, tgt);
  ASSERT_TRUE(std::isfinite(l0));
  if (all_ignored) {
    EXPECT_EQ(l0, 0.0);
  }
  L::backward(dlogits, probs, tgt);
  auto loss = [&] { return static_cast<double>(L::forward(probs, logits, tgt)); };
  check("cross_entropy dlogits", loss, logits, dlogits);
}
TEST(GradCheck, CrossEntropyIgnoresMinusOne) { loss_check<small(N::layernorm, P::learned, A::gelu, true, true)>(false); }
TEST(GradCheck, CrossEntropyAllIgnored) { loss_check<small(N::layernorm, P::learned, A::gelu, true, true)>(true); }

// ------------------------------------------------------------------------- the whole model
template <sf::config C>
void model_check(bool padded, std::size_t max_checks = 60) {
  static sf::params<C, T> p, g;
  static sf::activations<C, T> a;
  static sf::tokens_t<C> tok;
  static sf::targets_t<C> tgt;
  static sf::padding_t<C> pad;
  sf::splitmix64 r{6};
  randomize_params(p, r, 0.3);
  pad.zero();
  for (std::size_t i = 0; i < tok.size; ++i) {
    tok[i] = static_cast<std::int32_t>(r.next() % C.V);
    tgt[i] = i % 4 == 3 ? -1 : static_cast<std::int32_t>(r.next() % C.V);
  }
  if (padded) {
    pad(0, 0) = 1;  // left padding in row 0: query 0 of row 0 has no allowed key
    tgt(0, 0) = -1;
    pad(C.B - 1, C.T - 1) = 1;  // right padding in the last row
    tgt(C.B - 1, C.T - 1) = -1;
  }
  const sf::padding_t<C>* pp = padded ? &pad : nullptr;
  sf::forward(p, a, tok, tgt, pp);
  sf::zero(g);
  sf::backward(p, g, a, tok, tgt, pp);
  auto loss = [&] { return static_cast<double>(sf::forward(p, a, tok, tgt, pp)); };
  check_params("model", loss, p, g, max_checks);
}
TEST(GradCheck, ModelGpt2Style) { model_check<small(N::layernorm, P::learned, A::gelu_tanh, true, true)>(true); }
TEST(GradCheck, ModelLlamaStyle) { model_check<small(N::rmsnorm, P::rope, A::relu, false, false)>(true); }
TEST(GradCheck, ModelVaswaniStyle) { model_check<small(N::layernorm, P::sinusoidal, A::gelu, true, false)>(false); }
TEST(GradCheck, ModelReferenceConfigs) {
  model_check<sf::configs::ref_gpt2>(true, 8);
  model_check<sf::configs::ref_llama>(true, 8);
  model_check<sf::configs::ref_vaswani>(false, 8);
}
}  // namespace
