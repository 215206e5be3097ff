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

// The cache keeps the keys by blocks of attention::key_block positions, (streams, kv, T/KB, d_k,
// KB): the prefill chunks' key block (the largest of 64, 32, 16, 8 that divides T and is less than
// it), else all T. A key stored at position t is element (t / KB, c, t % KB) of its head's blocks,
// which cache::keys gives; the other positions stay as reset left them.
template <sf::config C> inline constexpr std::size_t key_block = sf::layers::attention<C, float>::key_block;
static_assert(key_block<sf::configs::small> == 64 && key_block<sf::configs::micro> == 64 &&
              key_block<sf::configs::nano> == 32 && key_block<sf::configs::ref_gpt2> == 8 &&
              key_block<sf::configs::ref_llama> == 8 && key_block<sf::configs::ref_llama2> == 20 &&
              key_block<sf::configs::ref_vaswani> == 12);
TEST(Decode, CacheKeysByBlocks) {
  using A = sf::layers::attention<sf::configs::small, float>;  // T 256, d_k 32, 6 heads: blocks of 64
  static A::cache<2> c;
  constexpr std::size_t KB = A::key_block, dk = A::dk, KV = A::KV;
  float k[KV * dk], v[KV * dk];
  for (std::size_t i = 0; i < KV * dk; ++i) k[i] = static_cast<float>(i + 1), v[i] = -static_cast<float>(i + 1);
  c.reset(0), c.reset(1);
  c.store(1, 100, k, v);  // block 1, column 36
  for (std::size_t g = 0; g < KV; ++g)
    for (std::size_t j = 0; j < A::key_blocks; ++j)
      for (std::size_t ci = 0; ci < dk; ++ci)
        for (std::size_t i = 0; i < KB; ++i) {
          const float want = j * KB + i == 100 ? k[g * dk + ci] : 0.0f;
          ASSERT_EQ(c.keys(1, g, j)[ci * KB + i], want) << "head " << g << ", block " << j << ", row " << ci << ", column " << i;
          ASSERT_EQ(c.keys(0, g, j)[ci * KB + i], 0.0f);
        }
  for (std::size_t i = 0; i < KV * dk; ++i) ASSERT_EQ(c.v(1, 100, i), v[i]);
}
