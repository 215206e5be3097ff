// int8 weights (quantize.hpp) and the int8 decoder (decode.hpp with sf::int8):
//   - quantize/dequantize of every parameter: matrices within half a step (d/2) of the float
//     values, vectors (norms, biases) copied exactly; names and counts from the same structs;
//   - the int8 decoder is self-consistent: prefill + steps, steps only, and B streams give the
//     same bits at every position (every product is row by row, so chunking cannot matter);
//   - its logits are close to the float model's (the error of int8 weights and activations);
//   - the weights take about 4x less memory.
// (The int8 kernels against the scalar reference: test_q8.cpp. The quality bar on a trained
// model, validation loss within 1% of float: the examples/train CTest.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "decode_check.hpp"
#include "staticformer/data.hpp"
#include "staticformer/decode.hpp"
#include "staticformer/model.hpp"
#include "staticformer/quantize.hpp"
#include "staticformer/reflect.hpp"

namespace {

using sf_test::random_tokens;
using sf_test::randomize;


template <sf::config C>
void check_quantize_roundtrip() {
  static sf::params<C> p, back;
  static sf::params<C, sf::int8> q;
  randomize(p, 1);
  sf::quantize(q, p);
  sf::dequantize(back, q);
  std::size_t matrices = 0, vectors = 0;
  sf::visit_alike(
      [&](const sf::param_name& name, const auto& a, const auto& b, const auto& qi) {
        using Q = std::remove_cvref_t<decltype(qi)>;
        if constexpr (sf::detail::is_q8_weight<Q>::value) {
          ++matrices;
          // every group's scale is amax/127, so |w - ŵ| <= d/2 <= amax/254 of that group
          float amax = 0;
          for (std::size_t i = 0; i < a.size; ++i) amax = std::max(amax, std::fabs(a[i]));
          for (std::size_t i = 0; i < a.size; ++i)
            ASSERT_LE(std::fabs(a[i] - b[i]), amax / 254.0f * 1.0001f) << name.c_str() << " [" << i << "]";
        } else {
          ++vectors;
          EXPECT_EQ(0, std::memcmp(a.data(), b.data(), sizeof(a))) << name.c_str();
        }
      },
      p, back, q);
  EXPECT_EQ(matrices + vectors, sf::tensor_count<sf::params<C>>);
  EXPECT_EQ((sf::parameter_count<sf::params<C, sf::int8>>), (sf::parameter_count<sf::params<C>>));
}

// The int8 decoder three ways (one prefill + steps; steps only; B streams together) and
// against the float decoder.
template <sf::config C>
void check_int8_decoder(std::size_t n0_, double max_rel_rms) {
  const std::size_t n0 = n0_ < C.T ? n0_ : C.T - 1;
  static sf::params<C> p;
  static sf::params<C, sf::int8> q;
  randomize(p, 7 + n0);
  sf::quantize(q, p);
  const auto tok = random_tokens(C.T, C.V, 3 + n0);
  static sf::decoder<C, sf::int8> a, b;
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

}  // namespace

TEST(Int8, QuantizeRoundTrip) {
  check_quantize_roundtrip<sf::configs::ref_gpt2>();
  check_quantize_roundtrip<sf::configs::ref_llama>();
  check_quantize_roundtrip<sf::configs::ref_vaswani>();
  check_quantize_roundtrip<sf::configs::ref_llama2>();
}

TEST(Int8, DecoderConsistentAndCloseToFloat) {
  for (std::size_t n0 : {1u, 5u, 16u}) {
    check_int8_decoder<sf::configs::ref_gpt2>(n0, 0.03);
    check_int8_decoder<sf::configs::ref_llama>(n0, 0.03);
    check_int8_decoder<sf::configs::ref_vaswani>(n0, 0.03);
    // gated: three int8 products per feed-forward, two of whose outputs are multiplied, so their
    // relative errors add (about √2 × one product's): 0.045 = √2 × 0.03 (measured 2.8–3.3% here)
    check_int8_decoder<sf::configs::ref_llama2>(n0, 0.045);
  }
}

// sf::small_ram int8 decoders (prefill by steps) give the default decoder's bits.
TEST(Int8, SmallRamSameBits) {
  constexpr sf::config C = sf::configs::ref_llama;
  static sf::params<C> p;
  static sf::params<C, sf::int8> q;
  randomize(p, 11);
  sf::quantize(q, p);
  const auto tok = random_tokens(C.T, C.V, 12);
  static sf::decoder<C, sf::int8> a;
  static sf::decoder<C, sf::int8, sf::small_ram> b;
  a.use(q), b.use(q);
  ASSERT_TRUE(a.prefill(1, tok.data(), 9));
  ASSERT_TRUE(b.prefill(1, tok.data(), 9));
  EXPECT_EQ(0, std::memcmp(a.logits(1), b.logits(1), C.V * sizeof(float)));
  for (std::size_t t = 9; t < C.T; ++t) {
    ASSERT_TRUE(a.step(1, tok[t]));
    ASSERT_TRUE(b.step(1, tok[t]));
    EXPECT_EQ(0, std::memcmp(a.logits(1), b.logits(1), C.V * sizeof(float))) << "position " << t;
  }
  EXPECT_LT(sizeof b, sizeof a);
}

TEST(Int8, AboutFourTimesLessMemory) {
  using P = sf::params<sf::configs::micro>;
  using Q = sf::params<sf::configs::micro, sf::int8>;
  const double ratio = static_cast<double>(sizeof(P)) / static_cast<double>(sizeof(Q));
  std::printf("micro weights: float %zu bytes, int8 %zu bytes (%.2fx less)\n", sizeof(P), sizeof(Q), ratio);
  EXPECT_GT(ratio, 3.1);  // one float scale per 32 int8 values alone limits it to 3.56
  using Pn = sf::params<sf::configs::nano>;
  using Qn = sf::params<sf::configs::nano, sf::int8>;
  std::printf("nano weights: float %zu bytes, int8 %zu bytes (%.2fx less)\n", sizeof(Pn), sizeof(Qn),
              static_cast<double>(sizeof(Pn)) / static_cast<double>(sizeof(Qn)));
  EXPECT_GT(static_cast<double>(sizeof(Pn)) / static_cast<double>(sizeof(Qn)), 3.1);
}
