// Finite-difference checks of attention's backward: causal, padded, fully masked rows, the causal
// blocks, RoPE, grouped-query and multi-query attention. Part of the test_gradcheck program (see
// test/test_gradcheck.cpp).
#include <cmath>

#include "gradcheck.hpp"

namespace {

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
constexpr sf::config att_long{{.V = 11, .T = 37, .D = 8, .H = 2, .L = 1, .F = 12, .norm = N::layernorm, .position = P::rope, .activation = A::gelu, .tied = true, .bias = true}, {.B = 1}};
TEST(GradCheck, AttentionCausalBlocks) { attention_check<att_long>(pad_mode::none); }
TEST(GradCheck, AttentionCausalBlocksPadding) { attention_check<att_long>(pad_mode::left); }
TEST(GradCheck, AttentionRope) { attention_check<att_rope>(pad_mode::none); }
TEST(GradCheck, AttentionRopeLeftPadding) { attention_check<att_rope>(pad_mode::left); }
// RoPE with Hugging Face's pairs (i, i + d_k/2), grouped-query
constexpr sf::config att_rope_halves{{.V = 11, .T = 5, .D = 16, .H = 4, .kv_heads = 2, .L = 1, .F = 12, .norm = N::rmsnorm,
                                      .position = P::rope, .activation = A::gelu, .tied = true, .bias = true,
                                      .rope_pairs = sf::rope_pairs_kind::halves},
                                     {.B = 2}};
TEST(GradCheck, AttentionRopeHalves) { attention_check<att_rope_halves>(pad_mode::left); }
// Grouped-query attention: 4 query heads on 2 key/value heads (with biases, RoPE), and multi-query
// (1 key/value head) with padding: dK, dV sum over a group's heads.
constexpr sf::config att_gqa{{.V = 11, .T = 5, .D = 16, .H = 4, .kv_heads = 2, .L = 1, .F = 12, .norm = N::rmsnorm,
                              .position = P::rope, .activation = A::gelu, .tied = true, .bias = true},
                             {.B = 2}};
constexpr sf::config att_mqa{{.V = 11, .T = 5, .D = 16, .H = 4, .kv_heads = 1, .L = 1, .F = 12, .norm = N::layernorm,
                              .position = P::learned, .activation = A::gelu, .tied = true, .bias = true},
                             {.B = 2}};
TEST(GradCheck, AttentionGroupedQuery) { attention_check<att_gqa>(pad_mode::none); }
TEST(GradCheck, AttentionGroupedQueryLeftPadding) { attention_check<att_gqa>(pad_mode::left); }
TEST(GradCheck, AttentionMultiQueryRightPadding) { attention_check<att_mqa>(pad_mode::right); }

}  // namespace
