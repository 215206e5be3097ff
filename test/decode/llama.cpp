// ref-llama (untied, RoPE): every prompt boundary, sf::small_ram, prefill in pieces, B streams at
// different positions.
// (test_decode.cpp's program: see there for what is checked; the checks are decode/checks.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "checks.hpp"

using namespace sf_test;

TEST(Decode, RefLlamaEveryBoundary) { check_config_all_boundaries<sf::configs::ref_llama>(); }

// sf::small_ram (no prefill chunk buffers, a tied head read in place) and an odd chunk size: the
// same bits, less memory.
TEST(Decode, SmallRamOptionsRefLlama) {
  for (std::size_t n : {1u, 2u, 5u, 11u})
    check_prefill_then_steps<sf::configs::ref_llama, sf::small_ram>(n, 310 + n);  // untied, RoPE
}

TEST(Decode, PrefillInPiecesRefLlama) { check_prefill_pieces<sf::configs::ref_llama>(6); }

// B streams stepping together, each at its own position (different prompt lengths), against
// a B = 1 full inference of each stream's sequence. ref_llama has B = 3.
TEST(Decode, StreamsAtDifferentPositions) {
  constexpr sf::config C = sf::configs::ref_llama;
  static_assert(C.B == 3);
  static sf::params<C> p;
  randomize(p, 11);
  std::vector<std::int32_t> tok[C.B];
  std::vector<float> ref[C.B];
  const std::size_t n0[C.B] = {1, 6, 17};
  static sf::decoder<C> dec;
  dec.use(p);
  diff d;
  for (std::size_t b = 0; b < C.B; ++b) {
    tok[b] = random_tokens(C.T, C.V, 40 + b);
    ref[b] = full_logits<C>(p, tok[b]);
    ASSERT_TRUE(dec.prefill(b, tok[b].data(), n0[b]));
    compare<C.V>(d, dec.logits(b), &ref[b][(n0[b] - 1) * C.V]);
  }
  // all streams step together until the longest is full
  for (std::size_t s = 0; n0[C.B - 1] + s < C.T; ++s) {
    std::int32_t next[C.B];
    for (std::size_t b = 0; b < C.B; ++b) next[b] = tok[b][n0[b] + s];
    ASSERT_TRUE(dec.step(next));
    for (std::size_t b = 0; b < C.B; ++b) compare<C.V>(d, dec.logits(b), &ref[b][(n0[b] + s) * C.V]);
  }
  EXPECT_LE(d.max_rel, 1e-5);
  EXPECT_TRUE(d.same_bits);
  // the full stream blocks a step of all streams, and nothing moves
  std::int32_t zeros[C.B] = {};
  const std::size_t pos0 = dec.position(0);
  EXPECT_FALSE(dec.step(zeros));
  EXPECT_EQ(dec.position(0), pos0);
  // but the others go on alone
  EXPECT_TRUE(dec.step(0, tok[0][pos0]));
  compare<C.V>(d, dec.logits(0), &ref[0][pos0 * C.V]);
  EXPECT_TRUE(d.same_bits);
}
