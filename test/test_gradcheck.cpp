// Finite-difference checks, in double, of every layer's backward for every variant,
// and of the whole model. For a layer y = f(x; θ) the scalar checked is
// L = Σ G ⊙ y with a fixed random G, so backward(dy = G) must give dL/dx and dL/dθ.
// One GoogleTest program in several translation units, to keep each quick to compile: this file
// (norms, feed-forward, embedding, loss), test/gradcheck/attention.cpp and the whole model in
// test/gradcheck/model*.cpp; the helpers are in test/gradcheck/gradcheck.hpp.
#include <cmath>

#include "gradcheck/gradcheck.hpp"

namespace {

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
TEST(GradCheck, FfnSilu) { ffn_check<small(N::layernorm, P::learned, A::silu, true, false)>(); }
// The gated kind: SwiGLU (silu, no biases, as LLaMA) and GeGLU with biases.
TEST(GradCheck, FfnSwiGLU) { ffn_check<gated(small(N::rmsnorm, P::rope, A::silu, false, false))>(); }
TEST(GradCheck, FfnGeGLUBias) { ffn_check<gated(small(N::layernorm, P::learned, A::gelu, true, false))>(); }

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

}  // namespace
