// ref-llama2 (gated feed-forward, grouped-query attention): every prompt boundary, sf::small_ram.
// (test_decode.cpp's program: see there for what is checked; the checks are decode/checks.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "checks.hpp"

using namespace sf_test;

TEST(Decode, RefLlama2EveryBoundary) { check_config_all_boundaries<sf::configs::ref_llama2>(); }  // gated (SwiGLU)

// sf::small_ram (no prefill chunk buffers, a tied head read in place) and an odd chunk size: the
// same bits, less memory.
TEST(Decode, SmallRamOptionsRefLlama2) {
  for (std::size_t n : {1u, 2u, 5u, 11u})
    check_prefill_then_steps<sf::configs::ref_llama2, sf::small_ram>(n, 350 + n);  // gated: a second F buffer
}

// Prefill chunks of P = 32 and of Q = P/4 = 8 (decoder::small_chunks): a prompt's last positions
// go in chunks of Q when at most 2Q are left, in single steps when fewer than Q/4 are. Every
// length of 1 to T = 80 — steps alone, one or two chunks of Q, a chunk of P with padding, chunks
// of P then of Q or then steps, a chunk that starts earlier at T — gives sf::infer's bits, and so
// does a prompt in pieces.
TEST(Decode, SmallChunksEveryPromptLength) {
  constexpr sf::decoder_options O{.prefill_chunk = 32};
  static_assert(sf::decoder<long_llama2, float, O>::Q == 8 && sf::decoder<long_llama2, float, O>::small_chunks);
  static_assert(!sf::decoder<long_llama2>::small_chunks, "the default chunk (16) has no smaller one");
  for (std::size_t n = 1; n <= long_llama2.T; ++n) check_prefill_then_steps<long_llama2, O>(n, 900 + n);
}

// The same decoder fed a prompt in pieces (each piece's own chunks of 32, of 8, or steps), then
// stepped to T: sf::infer's bits at every position.
TEST(Decode, SmallChunksPromptInPieces) {
  constexpr sf::config C = long_llama2;
  static sf::params<C> p;
  randomize(p, 77);
  const auto tokens = random_tokens(C.T, C.V, 78);
  const auto ref = full_logits<C>(p, tokens);
  static sf::decoder<C, float, sf::decoder_options{.prefill_chunk = 32}> dec;
  dec.use(p);
  diff d;
  std::size_t t = 0;
  for (std::size_t piece : {3u, 9u, 17u, 2u, 40u}) {
    ASSERT_TRUE(dec.prefill(1, tokens.data() + t, piece));
    t += piece;
    ASSERT_EQ(dec.position(1), t);
    compare<C.V>(d, dec.logits(1), &ref[(t - 1) * C.V]);
  }
  for (; t < C.T; ++t) {
    ASSERT_TRUE(dec.step(1, tokens[t]));
    compare<C.V>(d, dec.logits(1), &ref[t * C.V]);
  }
  EXPECT_TRUE(d.same_bits) << "max rel " << d.max_rel;
}
