// Optimizers, clipping and the learning-rate schedule against PyTorch's numbers and
// against values computed by hand.
//
// The reference numbers below were produced with PyTorch 1.13 (float32) by this script:
//
//   import torch
//   w0 = torch.tensor([[0.5, -0.25, 1.0], [-1.5, 0.75, 0.125]], dtype=torch.float32)
//   b0 = torch.tensor([0.1, -0.2, 0.3], dtype=torch.float32)
//   gw = [torch.tensor([[0.1, -0.2, 0.3], [0.4, -0.5, 0.6]]), torch.tensor([[-0.3, 0.1, 0.0], [0.2, 0.2, -0.1]]),
//         torch.tensor([[0.05, 0.5, -0.7], [1.0, -0.01, 0.02]])]
//   gb = [torch.tensor([1.0, -2.0, 0.5]), torch.tensor([0.25, 0.0, -0.5]), torch.tensor([-1.0, 3.0, 0.1])]
//   def fmt(t): return ", ".join("%.9gf" % x for x in t.flatten().tolist())
//   def run(opt_fn, groups):
//       w = w0.clone().requires_grad_(); b = b0.clone().requires_grad_()
//       opt = opt_fn(groups(w, b))
//       for k in range(3):
//           w.grad = gw[k].clone(); b.grad = gb[k].clone(); opt.step()
//       return w.detach(), b.detach()
//   lr = 0.01
//   w, b = run(lambda g: torch.optim.AdamW(g, lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1),
//              lambda w, b: [w, b])
//   print("adamw all:", fmt(w), "|", fmt(b))
//   w, b = run(lambda g: torch.optim.AdamW(g, lr=lr, betas=(0.9, 0.999), eps=1e-8),
//              lambda w, b: [{"params": [w], "weight_decay": 0.1}, {"params": [b], "weight_decay": 0.0}])
//   print("adamw matrices:", fmt(w), "|", fmt(b))
//   w, b = run(lambda g: torch.optim.SGD(g, lr=lr, momentum=0.9, weight_decay=0.01), lambda w, b: [w, b])
//   print("sgd:", fmt(w), "|", fmt(b))
//   w, b = run(lambda g: torch.optim.SGD(g, lr=lr, momentum=0.9, weight_decay=0.01, nesterov=True),
//              lambda w, b: [w, b])
//   print("sgd nesterov:", fmt(w), "|", fmt(b))
//   w = w0.clone().requires_grad_(); b = b0.clone().requires_grad_()
//   w.grad = gw[0].clone(); b.grad = gb[0].clone()
//   n = torch.nn.utils.clip_grad_norm_([w, b], 1.0)
//   print("clip norm: %.9g" % n.item(), fmt(w.grad), "|", fmt(b.grad))
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "staticformer/optim.hpp"
#include "staticformer/params.hpp"

namespace {

using mat_t = sf::tensor<float, sf::Model<2>, sf::Ffn<3>>;
using vec_t = sf::tensor<float, sf::Ffn<3>>;

struct tiny {
  BOOST_HANA_DEFINE_STRUCT(tiny, (mat_t, w), (vec_t, b));
};

tiny initial() {
  tiny p{};
  p.w = sf::make_tensor<mat_t>(0.5, -0.25, 1.0, -1.5, 0.75, 0.125);
  p.b = sf::make_tensor<vec_t>(0.1, -0.2, 0.3);
  return p;
}

tiny grads(int k) {
  tiny g{};
  if (k == 0) {
    g.w = sf::make_tensor<mat_t>(0.1, -0.2, 0.3, 0.4, -0.5, 0.6);
    g.b = sf::make_tensor<vec_t>(1.0, -2.0, 0.5);
  } else if (k == 1) {
    g.w = sf::make_tensor<mat_t>(-0.3, 0.1, 0.0, 0.2, 0.2, -0.1);
    g.b = sf::make_tensor<vec_t>(0.25, 0.0, -0.5);
  } else {
    g.w = sf::make_tensor<mat_t>(0.05, 0.5, -0.7, 1.0, -0.01, 0.02);
    g.b = sf::make_tensor<vec_t>(-1.0, 3.0, 0.1);
  }
  return g;
}

std::int64_t ulps(float a, float b) {
  auto key = [](float x) {
    const auto i = static_cast<std::int64_t>(std::bit_cast<std::int32_t>(x));
    return i < 0 ? std::int64_t{INT32_MIN} - i : i;
  };
  return std::llabs(key(a) - key(b));
}

// Within `max_ulps` units in the last place: PyTorch's vectorised kernels may fuse a
// multiply-add where we do not (or the reverse), which moves the last bit or two.
void expect_close(const tiny& got, const std::array<float, 6>& w, const std::array<float, 3>& b, int max_ulps = 4) {
  for (std::size_t i = 0; i < 6; ++i)
    EXPECT_LE(ulps(got.w[i], w[i]), max_ulps) << "w[" << i << "] = " << got.w[i] << ", PyTorch " << w[i];
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_LE(ulps(got.b[i], b[i]), max_ulps) << "b[" << i << "] = " << got.b[i] << ", PyTorch " << b[i];
}

}  // namespace

TEST(AdamW, FirstStepIsSignTimesLearningRate) {
  // t = 1: m̂ = g and v̂ = g², so the update is lr · g / (|g| + ε) ≈ lr · sign(g).
  tiny p = initial(), g = grads(0);
  static sf::adamw_state<tiny> opt;
  opt.reset();
  opt.step(p, g, 0.01f);
  EXPECT_EQ(opt.t, 1);
  const tiny p0 = initial();
  for (std::size_t i = 0; i < 6; ++i) {
    const float expect = p0.w[i] - 0.01f * g.w[i] / (std::fabs(g.w[i]) + 1e-8f);
    EXPECT_NEAR(p.w[i], expect, 2e-7f) << i;
    EXPECT_FLOAT_EQ(opt.m.w[i], 0.1f * g.w[i]);
    EXPECT_FLOAT_EQ(opt.v.w[i], 0.001f * g.w[i] * g.w[i]);  // 1 − β2 in double, as PyTorch
  }
}

TEST(AdamW, MatchesPyTorchDecayAll) {
  tiny p = initial();
  static sf::adamw_state<tiny> opt;
  opt.reset();
  opt.options = {.beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.1, .decay = sf::decay_on::all};
  for (int k = 0; k < 3; ++k) opt.step(p, grads(k), 0.01f);
  expect_close(p, {0.496233463f, -0.241602585f, 0.984163165f, -1.52356887f, 0.763974667f, 0.104894586f},
               {0.0812668651f, -0.185172468f, 0.289154351f});
}

TEST(AdamW, MatchesPyTorchDecayMatricesOnly) {
  // PyTorch equivalent: two parameter groups, weight_decay 0.1 for w and 0 for b.
  tiny p = initial();
  static sf::adamw_state<tiny> opt;
  opt.reset();
  opt.options = {.weight_decay = 0.1, .decay = sf::decay_on::matrices};
  for (int k = 0; k < 3; ++k) opt.step(p, grads(k), 0.01f);
  expect_close(p, {0.496233463f, -0.241602585f, 0.984163165f, -1.52356887f, 0.763974667f, 0.104894586f},
               {0.0815382674f, -0.185745195f, 0.290033996f});
}

TEST(AdamW, ResetAndStateCopyReproduce) {
  // Copying the state mid-run and continuing from the copy gives identical bits.
  tiny p = initial();
  static sf::adamw_state<tiny> a, b;
  a.reset();
  a.options.weight_decay = 0.05;
  a.step(p, grads(0), 0.02f);
  b = a;
  tiny q = p;
  for (int k = 1; k < 3; ++k) {
    a.step(p, grads(k), 0.02f);
    b.step(q, grads(k), 0.02f);
  }
  EXPECT_TRUE(p.w == q.w && p.b == q.b);
  a.reset();
  EXPECT_EQ(a.t, 0);
  EXPECT_EQ(a.m.w[0], 0.0f);
}

TEST(SGD, MatchesPyTorchMomentumAndWeightDecay) {
  tiny p = initial();
  static sf::sgd_state<tiny> opt;
  opt.reset();
  opt.options = {.momentum = 0.9, .weight_decay = 0.01};
  for (int k = 0; k < 3; ++k) opt.step(p, grads(k), 0.01f);
  expect_close(p, {0.502209604f, -0.251340419f, 0.998310208f, -1.5237968f, 0.759427607f, 0.110372059f},
               {0.0780979544f, -0.175695419f, 0.294783115f});
}

TEST(SGD, MatchesPyTorchNesterov) {
  tiny p = initial();
  static sf::sgd_state<tiny> opt;
  opt.reset();
  opt.options = {.momentum = 0.9, .weight_decay = 0.01, .nesterov = true};
  for (int k = 0; k < 3; ++k) opt.step(p, grads(k), 0.01f);
  expect_close(p, {0.503338575f, -0.255132526f, 1.00218129f, -1.53696406f, 0.761357069f, 0.106601216f},
               {0.0777657256f, -0.18807964f, 0.294216931f});
}

TEST(SGD, PlainStepByHand) {
  // momentum 0, no decay: p ← p − lr·g exactly.
  tiny p = initial();
  const tiny g = grads(1);
  static sf::sgd_state<tiny> opt;
  opt.reset();
  opt.options = {.momentum = 0.0};
  opt.step(p, g, 0.5f);
  const tiny p0 = initial();
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(p.w[i], p0.w[i] + (-0.5f) * g.w[i]);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(p.b[i], p0.b[i] + (-0.5f) * g.b[i]);
}

TEST(Clip, MatchesPyTorchAndReturnsPreClipNorm) {
  tiny g = grads(0);
  const float norm = sf::clip_grad_norm(g, 1.0f);
  // by hand: √(0.01+0.04+0.09+0.16+0.25+0.36 + 1+4+0.25) = √6.16
  EXPECT_NEAR(norm, std::sqrt(6.16f), 1e-6f);
  EXPECT_LE(ulps(norm, 2.48193479f), 1);
  expect_close(g, {0.0402911305f, -0.0805822611f, 0.120873399f, 0.161164522f, -0.201455653f, 0.241746798f},
               {0.402911305f, -0.805822611f, 0.201455653f}, 2);
  EXPECT_NEAR(sf::global_norm(g), 1.0, 1e-6);
}

TEST(Clip, BelowThresholdLeavesGradientsAlone) {
  tiny g = grads(0);
  const tiny before = g;
  const float norm = sf::clip_grad_norm(g, 10.0f);
  EXPECT_NEAR(norm, std::sqrt(6.16f), 1e-6f);
  EXPECT_TRUE(g.w == before.w && g.b == before.b);
}

TEST(Clip, NonFiniteNormIsReturnedAndNothingChanges) {
  tiny g = grads(0);
  g.b[1] = std::numeric_limits<float>::infinity();
  const tiny before = g;
  EXPECT_FALSE(std::isfinite(sf::clip_grad_norm(g, 1.0f)));
  EXPECT_TRUE(g.w == before.w);
}

// The schedule is constexpr.
constexpr sf::lr_schedule sched{.max_lr = 1e-2, .min_lr = 1e-3, .warmup_steps = 10, .total_steps = 110};
static_assert(sched(0) == 1e-2 / 10);  // (0+1)/10 · max
static_assert(sched(9) == 1e-2);       // end of warm-up
static_assert(sched(10) - 1e-2 < 1e-17 && 1e-2 - sched(10) < 1e-17);  // the cosine starts at max
static_assert(sched(110) == 1e-3 && sched(100000) == 1e-3);

TEST(Schedule, WarmupThenCosineToFloor) {
  for (std::int64_t s = 0; s < 10; ++s) EXPECT_DOUBLE_EQ(sched(s), 1e-2 * static_cast<double>(s + 1) / 10.0);
  EXPECT_NEAR(sched(60), 0.5 * (1e-2 + 1e-3), 1e-15);  // half-way: cos(π/2) = 0
  EXPECT_DOUBLE_EQ(sched(35), 1e-3 + 0.5 * 9e-3 * (1.0 + std::cos(3.14159265358979323846 * 0.25)));
  for (std::int64_t s = 10; s < 110; ++s) EXPECT_LT(sched(s + 1), sched(s)) << s;  // strictly decaying
  EXPECT_GT(sched(109), 1e-3);
}

TEST(Schedule, NoWarmup) {
  constexpr sf::lr_schedule s{.max_lr = 2.0, .min_lr = 0.0, .warmup_steps = 0, .total_steps = 4};
  EXPECT_DOUBLE_EQ(s(0), 2.0);
  EXPECT_NEAR(s(2), 1.0, 1e-15);
  EXPECT_DOUBLE_EQ(s(4), 0.0);
}

TEST(AdamW, WorksOnModelParams) {
  // The real parameter struct: every tensor is visited and moves.
  using P = sf::params<sf::configs::ref_gpt2>;
  static P p, g;
  static sf::adamw_state<P> opt;
  sf::visit([](const sf::param_name&, auto& t, auto& gt) { t.fill(1.0f); gt.fill(0.5f); }, p, g);
  opt.options = {.weight_decay = 0.1, .decay = sf::decay_on::matrices};
  opt.step(p, g, 0.1f);
  sf::visit(
      [](const sf::param_name& name, auto& t) {
        using X = std::remove_cvref_t<decltype(t)>;
        // matrices: 1·(1 − 0.1·0.1) − 0.1·(0.5/(0.5+1e-8)); vectors: 1 − 0.1·(...)
        const float expect = (X::rank >= 2 ? 0.99f : 1.0f) - 0.1f * (0.5f / (0.5f + 1e-8f));
        EXPECT_NEAR(t[0], expect, 1e-6f) << name.c_str();
        EXPECT_NEAR(t[X::size - 1], expect, 1e-6f) << name.c_str();
      },
      p);
}
