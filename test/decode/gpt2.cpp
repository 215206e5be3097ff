// ref-gpt2 (tied, learned positions): every prompt boundary, prefill in pieces, the slide at the end of
// the context, errors as values.
// (test_decode.cpp's program: see there for what is checked; the checks are decode/checks.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "checks.hpp"

using namespace sf_test;

TEST(Decode, RefGpt2EveryBoundary) { check_config_all_boundaries<sf::configs::ref_gpt2>(); }

TEST(Decode, PrefillInPiecesRefGpt2) { check_prefill_pieces<sf::configs::ref_gpt2>(5); }

// Position T: slide(b, keep) keeps the last `keep` tokens at positions 0 … keep-1.
TEST(Decode, SlideAtTheEndOfTheContext) {
  constexpr sf::config C = sf::configs::ref_gpt2;  // learned positions: the window really moves
  static sf::params<C> p;
  randomize(p, 21);
  const auto tok = random_tokens(2 * C.T, C.V, 22);
  static sf::decoder<C> dec;
  dec.use(p);
  ASSERT_TRUE(dec.prefill(0, tok.data(), C.T));
  EXPECT_FALSE(dec.prefill(0, tok.data(), 1));
  EXPECT_FALSE(dec.step(0, tok[C.T]));
  const std::size_t keep = 9;
  ASSERT_TRUE(dec.slide(0, keep));
  EXPECT_EQ(dec.position(0), keep);
  // the window is tok[T-keep, T): compare with sf::infer on it, then keep stepping
  std::vector<std::int32_t> window(tok.begin() + (C.T - keep), tok.begin() + (C.T - keep) + C.T);
  const auto ref = full_logits<C>(p, window);
  diff d;
  compare<C.V>(d, dec.logits(0), &ref[(keep - 1) * C.V]);
  for (std::size_t t = keep; t < C.T; ++t) {
    ASSERT_TRUE(dec.step(0, window[t]));
    compare<C.V>(d, dec.logits(0), &ref[t * C.V]);
  }
  EXPECT_TRUE(d.same_bits);
  EXPECT_LE(d.max_rel, 1e-5);
  EXPECT_FALSE(dec.slide(0, 0));
  EXPECT_FALSE(dec.slide(0, C.T));
}

TEST(Decode, ErrorsAreValues) {
  constexpr sf::config C = sf::configs::ref_gpt2;
  static sf::decoder<C> dec;
  const std::int32_t ok[2] = {1, 2};
  sf::status s = dec.prefill(0, ok, 1);
  EXPECT_FALSE(s);
  EXPECT_NE(std::string(s.message()).find("use(params)"), std::string::npos) << s.message();
  static sf::params<C> p;
  randomize(p, 1);
  dec.use(p);
  const std::int32_t bad[2] = {1, static_cast<std::int32_t>(C.V)};
  s = dec.prefill(0, bad, 2);
  EXPECT_FALSE(s);
  EXPECT_NE(std::string(s.message()).find("outside the vocabulary"), std::string::npos) << s.message();
  EXPECT_EQ(dec.position(0), 0u);
  EXPECT_FALSE(dec.step(0, -1));
  EXPECT_FALSE(dec.prefill(C.B, ok, 1));
  EXPECT_FALSE(dec.prefill(0, ok, 0));
  EXPECT_TRUE(dec.prefill(0, ok, 2));
  const std::int32_t steps[C.B] = {3, static_cast<std::int32_t>(C.V) + 5};
  EXPECT_FALSE(dec.step(steps));
  EXPECT_EQ(dec.position(0), 2u);
}
