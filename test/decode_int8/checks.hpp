// decode_int8/checks.hpp — test_decode_int8's check of the int8 decoder, shared by its translation
// units (test/decode_int8/*.cpp: one configuration each, so that none takes long to compile).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../decode_check.hpp"
#include "staticformer/decode.hpp"
#include "staticformer/model.hpp"
#include "staticformer/quantize.hpp"

namespace sf_test {

// a: prefilled (a decoder with options O), b: every stream stepped from position 0, f: float.
template <sf::config C, sf::decoder_options O = sf::decoder_options{}>
void check_int8_decoder(std::size_t n0_, double max_rel_rms) {
  const std::size_t n0 = n0_ < C.T ? n0_ : C.T - 1;
  static sf::params<C> p;
  static sf::params<C, sf::int8> q;
  randomize(p, 7 + n0);
  sf::quantize(q, p);
  const auto tok = random_tokens(C.T, C.V, 3 + n0);
  static sf::decoder<C, sf::int8, O> a;
  static sf::decoder<C, sf::int8> b;
  static sf::decoder<C> f;
  a.use(q), b.use(q), f.use(p);
  std::vector<float> la, lb, lf;
  ASSERT_TRUE(a.prefill(0, tok.data(), n0));
  ASSERT_TRUE(f.prefill(0, tok.data(), n0));
  for (std::size_t t = 0; t < n0; ++t) {  // every stream of b gets the same tokens, one step at a time
    std::int32_t all[C.B];
    for (auto& x : all) x = tok[t];
    ASSERT_TRUE(b.step(all));
  }
  auto take = [](std::vector<float>& v, const float* row) { v.insert(v.end(), row, row + C.V); };
  take(la, a.logits(0)), take(lb, b.logits(0)), take(lf, f.logits(0));
  for (std::size_t t = n0; t < C.T; ++t) {
    ASSERT_TRUE(a.step(0, tok[t]));
    ASSERT_TRUE(f.step(0, tok[t]));
    std::int32_t all[C.B];
    for (auto& x : all) x = tok[t];
    ASSERT_TRUE(b.step(all));  // every stream of b gets the same tokens
    take(la, a.logits(0)), take(lb, b.logits(0)), take(lf, f.logits(0));
    for (std::size_t s = 1; s < C.B; ++s) EXPECT_EQ(0, std::memcmp(b.logits(0), b.logits(s), C.V * sizeof(float)));
  }
  std::size_t first = la.size();
  for (std::size_t i = 0; i < la.size() && first == la.size(); ++i)
    if (std::memcmp(&la[i], &lb[i], sizeof(float)) != 0) first = i;
  EXPECT_EQ(first, la.size()) << "prefill " << n0 << ": first difference at position " << n0 - 1 + first / C.V
                              << ", logit " << first % C.V << ": " << la[first] << " vs " << lb[first];
  double e = 0, r = 0;
  for (std::size_t i = 0; i < la.size(); ++i) {
    e += (la[i] - lf[i]) * (la[i] - lf[i]);
    r += lf[i] * lf[i];
  }
  const double rel = std::sqrt(e / r);
  std::printf("int8 vs float logits, prefill %zu: relative RMS error %.3g\n", n0, rel);
  EXPECT_LT(rel, max_rel_rms);
  EXPECT_GT(rel, 0.0);  // int8 is not float
}

}  // namespace sf_test
