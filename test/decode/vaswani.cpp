// ref-vaswani: every prompt boundary, sf::small_ram, prefill in pieces, another batch size.
// (test_decode.cpp's program: see there for what is checked; the checks are decode/checks.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "checks.hpp"

using namespace sf_test;

TEST(Decode, RefVaswaniEveryBoundary) { check_config_all_boundaries<sf::configs::ref_vaswani>(); }

// sf::small_ram (no prefill chunk buffers, a tied head read in place) and an odd chunk size: the
// same bits, less memory.
TEST(Decode, SmallRamOptionsRefVaswani) {
  for (std::size_t n : {1u, 2u, 5u, 11u}) check_prefill_then_steps<sf::configs::ref_vaswani, sf::small_ram>(n, 320 + n);
}

TEST(Decode, PrefillInPiecesRefVaswani) { check_prefill_pieces<sf::configs::ref_vaswani>(7); }

// A decoder with B = 4 streams runs weights of the same model trained with B = 1 (only the
// weights' shapes must match: sf::params<C> does not depend on B).
TEST(Decode, OtherBatchSize) {
  constexpr sf::config C4 = [] {
    sf::config c = sf::configs::ref_vaswani;
    c.B = 4;
    return c;
  }();
  static sf::params<sf::configs::ref_vaswani> p;  // trained at B = 1
  randomize(p, 3);
  static sf::decoder<C4> dec;
  dec.use(p);  // same type
  const auto tok = random_tokens(C4.T, C4.V, 9);
  const auto ref = full_logits<sf::configs::ref_vaswani>(p, tok);
  ASSERT_TRUE(dec.prefill(2, tok.data(), 4));
  diff d;
  compare<C4.V>(d, dec.logits(2), &ref[3 * C4.V]);
  EXPECT_TRUE(d.same_bits);
}
