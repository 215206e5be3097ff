// The int8 decoder for ref-llama: consistent three ways and close to the float decoder;
// sf::small_ram's int8 decoder.
// (test_decode_int8.cpp's program: see there; the check is decode_int8/checks.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "checks.hpp"

using namespace sf_test;

TEST(Int8, DecoderConsistentAndCloseToFloatRefLlama) {
  for (std::size_t n0 : {1u, 5u, 16u}) check_int8_decoder<sf::configs::ref_llama>(n0, 0.03);
}

// sf::small_ram int8 decoders (prefill by steps) give the default decoder's bits.
TEST(Int8, SmallRamSameBits) {
  constexpr sf::config C = sf::configs::ref_llama;
  static sf::params<C> p;
  static sf::params<C, sf::int8> q;
  randomize(p, 11);
  sf::quantize(q, p);
  const auto tok = random_tokens(C.T, C.V, 12);
  static sf::decoder<C, sf::int8> a;
  static sf::decoder<C, sf::int8, sf::small_ram> b;
  a.use(q), b.use(q);
  ASSERT_TRUE(a.prefill(1, tok.data(), 9));
  ASSERT_TRUE(b.prefill(1, tok.data(), 9));
  EXPECT_EQ(0, std::memcmp(a.logits(1), b.logits(1), C.V * sizeof(float)));
  for (std::size_t t = 9; t < C.T; ++t) {
    ASSERT_TRUE(a.step(1, tok[t]));
    ASSERT_TRUE(b.step(1, tok[t]));
    EXPECT_EQ(0, std::memcmp(a.logits(1), b.logits(1), C.V * sizeof(float))) << "position " << t;
  }
  EXPECT_LT(sizeof b, sizeof a);
}
