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
