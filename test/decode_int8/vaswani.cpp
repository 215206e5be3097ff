// The int8 decoder for ref-vaswani: consistent three ways and close to the float decoder.
// (test_decode_int8.cpp's program: see there; the check is decode_int8/checks.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "checks.hpp"

using namespace sf_test;

TEST(Int8, DecoderConsistentAndCloseToFloatRefVaswani) {
  for (std::size_t n0 : {1u, 5u, 16u}) check_int8_decoder<sf::configs::ref_vaswani>(n0, 0.03);
}
