// The int8 decoder for ref-llama2 (gated feed-forward, grouped-query attention): consistent three ways and close to the float decoder.
// (test_decode_int8.cpp's program: see there; the check is decode_int8/checks.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "checks.hpp"

using namespace sf_test;

TEST(Int8, DecoderConsistentAndCloseToFloatRefLlama2) {
  // gated: three int8 products per feed-forward, two of whose outputs are multiplied, so their
  // relative errors add (about √2 × one product's): 0.045 = √2 × 0.03 (measured 2.8–3.3% here)
  for (std::size_t n0 : {1u, 5u, 16u}) check_int8_decoder<sf::configs::ref_llama2>(n0, 0.045);
}

// The int8 decoder with prefill chunks of 32 and of 8 (sf::decoder::small_chunks): prompts that end
// in steps, in one or two chunks of 8, in a chunk of 32 with padding, in chunks of 32 then of 8.
TEST(Int8, DecoderSmallChunksLongLlama2) {
  for (std::size_t n0 : {3u, 5u, 8u, 13u, 20u, 33u, 45u, 70u})
    check_int8_decoder<long_llama2, sf::decoder_options{.prefill_chunk = 32}>(n0, 0.045);
}
