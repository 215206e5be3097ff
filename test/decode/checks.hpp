// decode/checks.hpp — test_decode's checks of a decoder against sf::infer, shared by its
// translation units (test_decode.cpp and test/decode/*.cpp: one or two configurations each, so
// that none takes long to compile).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "../decode_check.hpp"
#include "staticformer/data.hpp"
#include "staticformer/decode.hpp"
#include "staticformer/model.hpp"

namespace sf_test {

template <sf::config C>
constexpr sf::config one_stream() {
  sf::config c = C;
  c.B = 1;
  return c;
}

// The reference: logits of every position of one sequence of T tokens, by sf::infer (B = 1).
template <sf::config C>
std::vector<float> full_logits(const sf::params<C>& p, const std::vector<std::int32_t>& tokens) {
  static constexpr sf::config C1 = one_stream<C>();
  static sf::inference_state<C1> s;
  static sf::tokens_t<C1> tok;
  for (std::size_t t = 0; t < C.T; ++t) tok[t] = t < tokens.size() ? tokens[t] : 0;
  sf::infer(p, s, tok);
  return std::vector<float>(s.logits.data(), s.logits.data() + C.T * C.V);
}

struct diff {
  double max_rel = 0;
  bool same_bits = true;
};
// row (V) against ref (V): the worst |a - b| / |b| and whether the bits agree
template <std::size_t V>
void compare(diff& d, const float* row, const float* ref) {
  for (std::size_t v = 0; v < V; ++v) {
    const double den = std::fabs(ref[v]) > 0 ? std::fabs(ref[v]) : 1e-30;
    const double rel = std::fabs(static_cast<double>(row[v]) - ref[v]) / den;
    if (!(rel <= d.max_rel)) d.max_rel = rel;  // NaN propagates
    if (std::memcmp(&row[v], &ref[v], sizeof(float)) != 0) d.same_bits = false;
  }
}


// One stream of a decoder for C (B = C.B): prefill n0 tokens into stream b, then step to T,
// comparing every position's logits with the full inference.
template <sf::config C, sf::decoder_options O = sf::decoder_options{}>
void check_prefill_then_steps(std::size_t n0, std::uint64_t seed) {
  static sf::params<C> p;
  randomize(p, seed);
  const auto tokens = random_tokens(C.T, C.V, seed + 1);
  const auto ref = full_logits<C>(p, tokens);
  static sf::decoder<C, float, O> dec;
  dec.use(p);
  const std::size_t b = C.B - 1;
  diff d;
  ASSERT_TRUE(dec.prefill(b, tokens.data(), n0)) << "n0 = " << n0;
  ASSERT_EQ(dec.position(b), n0);
  compare<C.V>(d, dec.logits(b), &ref[(n0 - 1) * C.V]);
  for (std::size_t t = n0; t < C.T; ++t) {
    ASSERT_TRUE(dec.step(b, tokens[t]));
    compare<C.V>(d, dec.logits(b), &ref[t * C.V]);
  }
  EXPECT_LE(d.max_rel, 1e-5) << "prefill " << n0 << " then steps to T = " << C.T;
  EXPECT_TRUE(d.same_bits) << "prefill " << n0 << ": not bit-identical to sf::infer (max rel " << d.max_rel << ")";
  // the context is full: nothing more fits, and nothing changes
  const float before = dec.logits(b)[0];
  const sf::status s = dec.step(b, 0);
  EXPECT_FALSE(s);
  EXPECT_NE(std::string(s.message()).find("context full"), std::string::npos) << s.message();
  EXPECT_EQ(dec.position(b), C.T);
  EXPECT_EQ(dec.logits(b)[0], before);
}

// prompt lengths: 1, 2, 3 (single steps), odd ones, both sides of the chunk size P, T-1, T
template <sf::config C>
void check_config_all_boundaries() {
  constexpr std::size_t P = sf::decoder<C>::P;
  std::vector<std::size_t> ns = {1, 2, 3, 5, 7, P - 1, P, P + 1, C.T / 2 + 1, C.T - 1, C.T};
  for (std::size_t n : ns)
    if (n >= 1 && n <= C.T) check_prefill_then_steps<C>(n, 100 + n);
}

// Prefill in several pieces (odd lengths), then steps.
template <sf::config C>
void check_prefill_pieces(std::uint64_t seed) {
  static sf::params<C> p;
  randomize(p, seed);
  const auto tokens = random_tokens(C.T, C.V, seed + 7);
  const auto ref = full_logits<C>(p, tokens);
  static sf::decoder<C> dec;
  dec.use(p);
  diff d;
  std::size_t t = 0;
  for (std::size_t piece : {3u, 1u, 5u, 9u}) {
    if (t + piece > C.T) break;
    ASSERT_TRUE(dec.prefill(0, tokens.data() + t, piece));
    t += piece;
    compare<C.V>(d, dec.logits(0), &ref[(t - 1) * C.V]);
  }
  for (; t < C.T; ++t) {
    ASSERT_TRUE(dec.step(0, tokens[t]));
    compare<C.V>(d, dec.logits(0), &ref[t * C.V]);
  }
  EXPECT_LE(d.max_rel, 1e-5);
  EXPECT_TRUE(d.same_bits);
}

}  // namespace sf_test
