// decode_check.hpp — shared by test_decode.cpp and test_decode_int8.cpp: random parameters
// (every tensor, biases and norms included) and random token sequences.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "staticformer/data.hpp"
#include "staticformer/reflect.hpp"

namespace sf_test {

// Every parameter random in [-0.3, 0.3] (norm weights in [0.7, 1.3]), so biases and norm
// parameters matter.
template <class P>
void randomize(P& p, std::uint64_t seed) {
  sf::xoshiro256 rng(seed);
  sf::visit(
      [&](const auto& name, auto& t) {
        const bool norm_w = std::string(name.c_str()).find("norm") != std::string::npos;
        for (std::size_t i = 0; i < t.size; ++i) {
          const float u = static_cast<float>(rng.next() >> 40) * 0x1p-24f * 2.0f - 1.0f;
          t[i] = norm_w ? 1.0f + 0.3f * u : 0.3f * u;
        }
      },
      p);
}

// n token ids in [0, V)
inline std::vector<std::int32_t> random_tokens(std::size_t n, std::size_t V, std::uint64_t seed) {
  sf::xoshiro256 rng(seed);
  std::vector<std::int32_t> t(n);
  for (auto& x : t) x = static_cast<std::int32_t>(rng.next() % V);
  return t;
}

// ref-llama2's model with a longer context (T = 80), for decoders whose prefill chunk (32 and
// more) has a smaller one (sf::decoder::small_chunks): every prompt length (test_decode) and a few
// (test_decode_int8).
inline constexpr sf::config long_llama2 = [] {
  sf::config c = sf::configs::ref_llama2;
  c.T = 80;
  return c;
}();

}  // namespace sf_test
