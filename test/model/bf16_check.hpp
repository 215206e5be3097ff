// model/bf16_check.hpp — the test_model program's check of the bf16
// precision policy (config.precision = bf16). Same weights and batch through the float32 and the
// bf16 path of each of docs/model.md's reference configurations:
//   * loss and logits within bf16 distance of the float ones, and gradients within a stated bf16
//     tolerance, ‖g_bf16 − g_f32‖ ≤ t_all ‖g_f32‖ over all parameters and ≤ t_tensor ‖g_f32‖ + 10⁻⁶
//     for every tensor. bf16 keeps 8 significant bits (2⁻⁹ ≈ 0.002 relative per operand) and the
//     errors add over the layers: with GELU (smooth), t_all = 1% and t_tensor = 2% (measured
//     0.22–0.31% and at most 0.72%); with ReLU, whose gate flips where a pre-activation near 0
//     changes sign under the rounding, t_all = 3% and t_tensor = 10% (ref-llama: 2.6%, one tensor
//     7.0%). The 10⁻⁶ floor is for the key biases, whose exact gradient is 0 (softmax ignores a
//     constant per query): both paths give float noise there (~10⁻¹¹);
//   * and not equal: the products really are rounded (a path that ignored the policy fails);
//   * the parameters' type does not depend on the precision (a bf16-trained model is a float one).
// Used by test/model/bf16*.cpp (one configuration each, so that none takes long to compile).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "staticformer/init.hpp"
#include "staticformer/reflect.hpp"
#include "staticformer/staticformer.hpp"

namespace sf_test {

template <sf::config C>
void bf16_close_to_f32(const char* label) {
  constexpr sf::config C16 = C.with(sf::precision_kind::bf16);
  constexpr bool relu = C.activation == sf::activation_kind::relu;
  constexpr double t_all = relu ? 3e-2 : 1e-2, t_tensor = relu ? 1e-1 : 2e-2;
  static sf::params<C> p, g32, g16;
  static sf::activations<C> a32;
  static sf::activations<C16> a16;
  static sf::tokens_t<C> tok;
  static sf::targets_t<C> tgt;
  sf::init_params(p, 11);
  sf::splitmix64 r{23};
  for (std::size_t i = 0; i < tok.size; ++i) {
    tok[i] = static_cast<std::int32_t>(r.next() % C.V);
    tgt[i] = static_cast<std::int32_t>(r.next() % C.V);
  }
  const float l32 = sf::forward(p, a32, tok, tgt);
  sf::zero(g32);
  sf::backward(p, g32, a32, tok, tgt);
  const float l16 = sf::forward(p, a16, tok, tgt);
  sf::zero(g16);
  sf::backward(p, g16, a16, tok, tgt);

  EXPECT_NEAR(l16, l32, 1e-2 * std::fabs(l32)) << label;
  double dl = 0, nl = 0;
  for (std::size_t i = 0; i < a32.logits.size; ++i) {
    dl += std::pow(double(a16.logits.data()[i]) - a32.logits.data()[i], 2);
    nl += std::pow(double(a32.logits.data()[i]), 2);
  }
  EXPECT_LE(std::sqrt(dl), 2e-2 * std::sqrt(nl)) << label << ": logits";
  EXPECT_GT(std::sqrt(dl), 1e-5 * std::sqrt(nl)) << label << ": logits of the bf16 path equal the float ones";

  double worst = 0, total_diff = 0, all_d = 0, all_n = 0;
  sf::visit(
      [&](const sf::param_name& name, const auto& x, const auto& y) {
        double d = 0, n = 0;
        for (std::size_t i = 0; i < x.size; ++i) {
          d += std::pow(double(x[i]) - y[i], 2);
          n += std::pow(double(x[i]), 2);
        }
        all_d += d, all_n += n;
        d = std::sqrt(d), n = std::sqrt(n);
        total_diff += d;
        EXPECT_LE(d, t_tensor * n + 1e-6) << label << " " << name.c_str() << ": |g_bf16 - g_f32| = " << d << ", |g_f32| = " << n;
        if (n > 1e-6 && d / n > worst) worst = d / n;
      },
      g32, g16);
  EXPECT_GT(total_diff, 0.0) << label << ": the bf16 gradients equal the float ones";
  EXPECT_LE(std::sqrt(all_d), t_all * std::sqrt(all_n)) << label << ": all gradients";
  std::printf("[ %s ] loss f32 %.6f bf16 %.6f; gradient distance %.4f of the norm, worst tensor %.4f of its norm\n",
              label, l32, l16, std::sqrt(all_d / all_n), worst);
}

}  // namespace sf_test
