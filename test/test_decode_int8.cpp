// int8 weights (quantize.hpp) and the int8 decoder (decode.hpp with sf::int8):
//   - quantize/dequantize of every parameter: matrices within half a step (d/2) of the float
//     values, vectors (norms, biases) copied exactly; names and counts from the same structs;
//   - the int8 decoder is self-consistent: prefill + steps, steps only, and B streams give the
//     same bits at every position (every product is row by row, so chunking cannot matter);
//   - its logits are close to the float model's (the error of int8 weights and activations);
//   - the weights take about 4x less memory.
// (The int8 kernels against the scalar reference: test_q8.cpp. The quality bar on a trained
// model, validation loss within 1% of float: the examples/train CTest.)
// One program: the decoder checks, one configuration per translation unit so that none takes
// long to compile, are in test/decode_int8/*.cpp.
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
}  // namespace

TEST(Int8, QuantizeRoundTrip) {
  check_quantize_roundtrip<sf::configs::ref_gpt2>();
  check_quantize_roundtrip<sf::configs::ref_llama>();
  check_quantize_roundtrip<sf::configs::ref_vaswani>();
  check_quantize_roundtrip<sf::configs::ref_llama2>();
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
