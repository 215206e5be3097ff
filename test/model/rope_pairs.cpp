// The model, continued (part of the test_model program, see test/test_model.cpp): RoPE's two pair
// conventions (arch::rope_pairs; layers/position.hpp) are one model up to a permutation. A model
// with halves (Hugging Face: pairs (i, i + d_k/2)) whose W_q, W_k columns (and b_q, b_k) are those
// of an adjacent model (Meta, llama2.c: pairs (2i, 2i+1)) reordered per head, column i + d_k/2·j
// of a head = column 2i + j of the same head, computes the same scores q·k, so the same loss
// and logits, and its W_q, W_k gradients are the same permutation of the other's; every other
// gradient is the same. Equal up to float rounding (the dot products sum in another order):
// checked to 1e-5 relative, on ref-llama2 (grouped-query: W_k is (D, kv·d_k)) with biases.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "staticformer/init.hpp"
#include "staticformer/model.hpp"
#include "staticformer/reflect.hpp"

namespace {

constexpr sf::config adjacent = [] {
  sf::config c = sf::configs::ref_llama2;
  c.bias = true;
  return c;
}();
constexpr sf::config halves = [] {
  sf::config c = adjacent;
  c.rope_pairs = sf::rope_pairs_kind::halves;
  return c;
}();
constexpr std::size_t dk = adjacent.dk();

// The column of the adjacent model that column j (of width heads·d_k) of the halves model holds.
constexpr std::size_t from_column(std::size_t j) {
  const std::size_t head = j / dk, i = j % dk;
  return head * dk + (i < dk / 2 ? 2 * i : 2 * (i - dk / 2) + 1);
}

// x_h[.., j] = x_a[.., from_column(j)] for the (rows, cols) matrix (or vector: rows = 1)
template <class X>
void permute_columns(X& h, const X& a, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < cols; ++j) h.data()[r * cols + j] = a.data()[r * cols + from_column(j)];
}

// h = a with W_q, W_k, b_q, b_k permuted as above; every other tensor copied.
template <class PH, class PA>
void to_halves(PH& h, const PA& a) {
  sf::visit_alike([](const sf::param_name&, auto& x, const auto& y) { std::memcpy(x.data(), y.data(), sizeof(x)); }, h, a);
  constexpr std::size_t D = adjacent.D, kv = adjacent.kv() * dk;
  for (std::size_t l = 0; l < adjacent.L; ++l) {
    permute_columns(h.blocks[l].attn.wq, a.blocks[l].attn.wq, D, D);
    permute_columns(h.blocks[l].attn.wk, a.blocks[l].attn.wk, D, kv);
    permute_columns(h.blocks[l].attn.bq, a.blocks[l].attn.bq, 1, D);
    permute_columns(h.blocks[l].attn.bk, a.blocks[l].attn.bk, 1, kv);
  }
}

double rel(const float* x, const float* y, std::size_t n) {
  double d = 0, r = 0;
  for (std::size_t i = 0; i < n; ++i) {
    d += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
    r += double(y[i]) * y[i];
  }
  return std::sqrt(d / (r > 0 ? r : 1e-300));
}

TEST(Model, RopePairsAreAPermutation) {
  static sf::params<adjacent> pa, ga;
  static sf::params<halves> ph, gh;
  static sf::activations<adjacent> aa;
  static sf::activations<halves> ah;
  static sf::tokens_t<adjacent> tok;
  static sf::targets_t<adjacent> tgt;
  sf::init_params(pa, 3, 0.5);
  sf::visit([](const sf::param_name&, auto& t) {  // biases too: nonzero
    for (std::size_t i = 0; i < t.size; ++i) t.data()[i] += 0.01f * static_cast<float>(i % 7);
  }, pa);
  to_halves(ph, pa);
  sf::splitmix64 r{5};
  for (std::size_t i = 0; i < tok.size; ++i) {
    tok[i] = static_cast<std::int32_t>(r.next() % adjacent.V);
    tgt[i] = static_cast<std::int32_t>(r.next() % adjacent.V);
  }
  const float la = sf::forward(pa, aa, tok, tgt), lh = sf::forward(ph, ah, tok, tgt);
  EXPECT_NEAR(lh, la, 1e-5 * std::fabs(la));
  const double logits = rel(ah.logits.data(), aa.logits.data(), aa.logits.size);
  EXPECT_LE(logits, 1e-5);
  EXPECT_NE(std::memcmp(ph.blocks[0].attn.wq.data(), pa.blocks[0].attn.wq.data(), sizeof pa.blocks[0].attn.wq), 0);
  sf::zero(ga), sf::zero(gh);
  sf::backward(pa, ga, aa, tok, tgt);
  sf::backward(ph, gh, ah, tok, tgt);
  // the adjacent model's gradients, permuted as its weights were, against the halves model's
  static sf::params<halves> expected;
  to_halves(expected, ga);
  double worst = 0;
  sf::visit_alike(
      [&](const sf::param_name& name, const auto& g, const auto& e) {
        const double d = rel(g.data(), e.data(), g.size);
        EXPECT_LE(d, 1e-5) << name.c_str();
        worst = d > worst ? d : worst;
      },
      gh, expected);
  std::printf("rope_pairs halves vs adjacent, permuted: logits %.2g, worst gradient %.2g (relative)\n", logits, worst);
  // and the two conventions differ when the weights are not permuted
  static sf::params<halves> same_weights;
  sf::visit_alike([](const sf::param_name&, auto& x, const auto& y) { std::memcpy(x.data(), y.data(), sizeof(x)); },
                  same_weights, pa);
  sf::forward(same_weights, ah, tok, tgt);
  EXPECT_GT(rel(ah.logits.data(), aa.logits.data(), aa.logits.size), 1e-3);
}

}  // namespace
