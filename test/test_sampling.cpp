// Sampling (staticformer/sampling.hpp): option checks as error values, greedy, temperature,
// top-k, top-p and their combination against the distributions they define, reproducibility
// from the seed, and use in a constant expression.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "staticformer/sampling.hpp"

namespace {
constexpr std::size_t V = 4;
// logits with softmax = (0.1, 0.2, 0.3, 0.4)
const std::array<float, V> probs_logits = {std::log(0.1f), std::log(0.2f), std::log(0.3f), std::log(0.4f)};

std::array<double, V> frequencies(sf::sampler<V>& s, const float* logits, int n) {
  std::array<double, V> f{};
  for (int i = 0; i < n; ++i) f[static_cast<std::size_t>(s.sample(logits))] += 1.0 / n;
  return f;
}
}  // namespace

TEST(Sampling, BadOptionsAreErrorValues) {
  sf::sampler<V> s{1};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(s.configure({.temperature = -0.5f}));
  EXPECT_FALSE(s.configure({.temperature = nan}));
  EXPECT_FALSE(s.configure({.temperature = std::numeric_limits<float>::infinity()}));
  EXPECT_FALSE(s.configure({.top_k = V + 1}));
  EXPECT_FALSE(s.configure({.top_p = 0.0f}));
  EXPECT_FALSE(s.configure({.top_p = 1.5f}));
  EXPECT_FALSE(s.configure({.top_p = nan}));
  EXPECT_STREQ(s.configure({.top_k = 9}).message(), "sampling: top_k must be between 0 (off) and V = 4, got 9");
  EXPECT_STREQ(s.configure({.temperature = -1.0f}).message(),
               "sampling: temperature must be a finite number >= 0 (0 = greedy)");
  EXPECT_STREQ(s.configure({.top_p = 2.0f}).message(), "sampling: top_p must be in (0, 1] (1 = off)");
  EXPECT_EQ(s.options().temperature, 1.0f);  // the previous options stay
  EXPECT_TRUE(s.configure({.temperature = 0.0f, .top_k = V, .top_p = 1.0f}));
}

TEST(Sampling, GreedyTakesTheLowestIdAmongTies) {
  sf::sampler<V> s{1};
  ASSERT_TRUE(s.configure({.temperature = 0.0f}));
  const float l[V] = {0.5f, 2.0f, 2.0f, -1.0f};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(s.sample(l), 1);
  ASSERT_TRUE(s.configure({.temperature = 1e-45f}));  // 1/T overflows to inf: greedy
  EXPECT_EQ(s.sample(l), 1);
  ASSERT_TRUE(s.configure({.temperature = 1e-30f}));  // tiny but finite 1/T: the top token only, no NaN
  for (int i = 0; i < 10; ++i) EXPECT_EQ(s.sample(probs_logits.data()), 3);
}

TEST(Sampling, TemperatureOneFollowsTheSoftmax) {
  sf::sampler<V> s{7};
  const auto f = frequencies(s, probs_logits.data(), 40000);
  for (std::size_t i = 0; i < V; ++i) EXPECT_NEAR(f[i], 0.1 * static_cast<double>(i + 1), 0.01) << i;
}

TEST(Sampling, TemperatureSharpensAndFlattens) {
  sf::sampler<V> s{8};
  ASSERT_TRUE(s.configure({.temperature = 0.5f}));  // p ∝ p₀²: (1, 4, 9, 16)/30
  auto f = frequencies(s, probs_logits.data(), 40000);
  for (std::size_t i = 0; i < V; ++i) EXPECT_NEAR(f[i], static_cast<double>((i + 1) * (i + 1)) / 30, 0.01) << i;
  ASSERT_TRUE(s.configure({.temperature = 1000.0f}));  // nearly uniform
  f = frequencies(s, probs_logits.data(), 40000);
  for (std::size_t i = 0; i < V; ++i) EXPECT_NEAR(f[i], 0.25, 0.01) << i;
}

TEST(Sampling, TopKKeepsTheKMostLikely) {
  sf::sampler<V> s{9};
  ASSERT_TRUE(s.configure({.top_k = 2}));  // (0.3, 0.4) renormalised: 3/7, 4/7
  const auto f = frequencies(s, probs_logits.data(), 40000);
  EXPECT_EQ(f[0], 0.0);
  EXPECT_EQ(f[1], 0.0);
  EXPECT_NEAR(f[2], 3.0 / 7, 0.01);
  EXPECT_NEAR(f[3], 4.0 / 7, 0.01);
  ASSERT_TRUE(s.configure({.top_k = 1}));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(s.sample(probs_logits.data()), 3);
}

TEST(Sampling, TopPKeepsTheSmallestSetReachingP) {
  sf::sampler<V> s{10};
  ASSERT_TRUE(s.configure({.top_p = 0.35f}));  // 0.4 alone reaches 0.35
  for (int i = 0; i < 20; ++i) EXPECT_EQ(s.sample(probs_logits.data()), 3);
  ASSERT_TRUE(s.configure({.top_p = 0.65f}));  // 0.4 + 0.3 = 0.7 ≥ 0.65: ids 3 and 2, 4:3
  auto f = frequencies(s, probs_logits.data(), 40000);
  EXPECT_EQ(f[0] + f[1], 0.0);
  EXPECT_NEAR(f[3], 4.0 / 7, 0.01);
  ASSERT_TRUE(s.configure({.top_p = 0.95f}));  // 0.4 + 0.3 + 0.2 = 0.9 < 0.95: all four
  f = frequencies(s, probs_logits.data(), 40000);
  EXPECT_NEAR(f[0], 0.1, 0.01);
}

TEST(Sampling, TopKThenTopPOfTheKeptMass) {
  sf::sampler<V> s{11};
  // top-3 keeps (0.2, 0.3, 0.4), mass 0.9; top_p 0.7 of it = 0.63: 0.4 + 0.3 = 0.7 ≥ 0.63 → ids 3, 2
  ASSERT_TRUE(s.configure({.temperature = 1.0f, .top_k = 3, .top_p = 0.7f}));
  const auto f = frequencies(s, probs_logits.data(), 40000);
  EXPECT_EQ(f[0] + f[1], 0.0);
  EXPECT_NEAR(f[2], 3.0 / 7, 0.01);
}

TEST(Sampling, SameSeedSameTokens) {
  sf::sampler<V> a{123}, b{123}, c{124};
  int differ = 0;
  for (int i = 0; i < 200; ++i) {
    const auto ta = a.sample(probs_logits.data()), tb = b.sample(probs_logits.data());
    EXPECT_EQ(ta, tb);
    differ += ta != c.sample(probs_logits.data());
  }
  EXPECT_GT(differ, 0);
}

// In a constant expression: the same tokens as at run time (float arithmetic, emulated SIMD twin).
namespace {
constexpr std::array<std::int32_t, 8> first_tokens() {
  sf::sampler<V> s{2024};
  const float l[V] = {-2.3f, -1.6f, -1.2f, -0.9f};
  std::array<std::int32_t, 8> t{};
  for (auto& x : t) x = s.sample(l);
  return t;
}
constexpr auto compile_time_tokens = first_tokens();
}  // namespace
TEST(Sampling, ConstexprEqualsRunTime) {
  sf::sampler<V> s{2024};
  const float l[V] = {-2.3f, -1.6f, -1.2f, -0.9f};
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(s.sample(l), compile_time_tokens[i]) << i;
}

// The documented draw, written out independently: p = softmax((logits - max)/T) by the library's
// softmax kernel, the tokens ordered by p (descending) then id, u = 24 random bits · 2^-24 · Σp in
// that order, the first token whose running sum exceeds u. The sampler must give the same token,
// draw after draw, whether it orders the tokens by selection (top-k, top-p) or all at once (heap
// sort, when every token is kept).
TEST(Sampling, WholeDistributionDrawMatchesTheDefinition) {
  constexpr std::size_t V = 65;
  float logits[V];
  std::uint32_t s = 99;
  for (float& l : logits) {
    s = s * 1664525u + 1013904223u;
    l = static_cast<float>(s >> 8) / 16777216.0f * 8.0f - 4.0f;
  }
  logits[7] = logits[9];  // a tie: ordered by id
  for (float t : {1.0f, 0.7f}) {
    static sf::sampler<V> smp{0};
    smp.seed(1234);
    ASSERT_TRUE(smp.configure({.temperature = t}));
    sf::xoshiro256 rng(1234);
    float p[V];
    float m = logits[0];
    for (float l : logits) m = l > m ? l : m;
    for (std::size_t i = 0; i < V; ++i) p[i] = logits[i] - m;
    sf::simd::softmax_scaled(p, V, 1.0f / t);
    std::array<std::int32_t, V> order;
    for (std::size_t i = 0; i < V; ++i) order[i] = static_cast<std::int32_t>(i);
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return p[a] > p[b]; });
    float mass = 0.0f;
    for (std::int32_t i : order) mass += p[i];
    for (int draw = 0; draw < 2000; ++draw) {
      const float u = static_cast<float>(rng.next() >> 40) * 0x1p-24f * mass;
      float acc = 0.0f;
      std::int32_t want = order[V - 1];
      for (std::int32_t i : order) {
        acc += p[i];
        if (u < acc) {
          want = i;
          break;
        }
      }
      ASSERT_EQ(smp.sample(logits), want) << "draw " << draw << ", temperature " << t;
    }
  }
}
