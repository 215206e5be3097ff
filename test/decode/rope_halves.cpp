// RoPE with Hugging Face's pairs (rope_pairs halves) on ref-llama's shape: every prompt boundary
// (test_decode.cpp's program: see there for what is checked; the checks are decode/checks.hpp).
#include <gtest/gtest.h>

#include "checks.hpp"

using namespace sf_test;

namespace {
constexpr sf::config ref_llama_halves = [] {
  sf::config c = sf::configs::ref_llama;
  c.rope_pairs = sf::rope_pairs_kind::halves;
  return c;
}();
}  // namespace

TEST(Decode, RopeHalvesEveryBoundary) { check_config_all_boundaries<ref_llama_halves>(); }
