// ref-gpt2 with the decoder options: sf::small_ram, an odd prefill chunk, the tied head read in place.
// (test_decode.cpp's program: see there for what is checked; the checks are decode/checks.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "checks.hpp"

using namespace sf_test;

// sf::small_ram (no prefill chunk buffers, a tied head read in place) and an odd chunk size: the
// same bits, less memory.
TEST(Decode, SmallRamOptionsRefGpt2) {
  for (std::size_t n : {1u, 2u, 5u, 11u}) {
    check_prefill_then_steps<sf::configs::ref_gpt2, sf::small_ram>(n, 300 + n);  // tied, learned
    check_prefill_then_steps<sf::configs::ref_gpt2, sf::decoder_options{.prefill_chunk = 5}>(n, 330 + n);
    check_prefill_then_steps<sf::configs::ref_gpt2, sf::decoder_options{.tied_head_copy = false}>(n, 340 + n);
  }
}
