// Sampling (staticformer/sampling.hpp): option checks as error values, greedy, temperature,
// top-k, top-p and their combination against the distributions they define, reproducibility
// from the seed, and use in a constant expression. Then llama2.c's recipe (sampling_recipe::llama2c):
// run.c's generator and run.c's tokens, against values printed by run.c's own code.
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

// ---------------------------------------------------------------- llama2.c's recipe
// The reference values below were printed by run.c's own random_u32, random_f32 and sample()
// (llama2.c's run.c compiled with -Dmain=runc_main and linked to a small C program calling them).
namespace {
constexpr sf::sampling_options runc(float temperature, float top_p) {
  return {.temperature = temperature, .top_k = 0, .top_p = top_p, .recipe = sf::sampling_recipe::llama2c};
}
}  // namespace

TEST(SamplingLlama2c, GeneratorIsRunCs) {
  sf::xorshift64star a{42};
  for (const std::uint32_t want : {1456360119u, 3359763283u, 3393612768u, 4054632243u, 3283045847u, 3589475362u})
    EXPECT_EQ(a.next_u32(), want);
  sf::xorshift64star b{static_cast<std::uint64_t>(-5)};  // run.c's -s -5: the seed modulo 2^64
  for (const float want :
       {0x1.487948p-3f, 0x1.6da424p-2f, 0x1.54be1p-3f, 0x1.fee20cp-2f, 0x1.55c558p-2f, 0x1.044414p-2f})
    EXPECT_EQ(b.next_f32(), want);
  static_assert([] {
    sf::xorshift64star c{42};
    return c.next_u32() == 1456360119u && c.next_f32() == 0x1.9083d6p-1f;
  }());
}

// run.c's sample() on the same logits, seed 2024, 24 draws: the same tokens. Logits 2 and 3 tie,
// so the nucleus (top_p < 1) depends on the order of equal probabilities (by id).
TEST(SamplingLlama2c, TokensAreRunCs) {
  constexpr std::size_t V8 = 8;
  const float logits[V8] = {0.5f, -1.25f, 2.0f, 2.0f, 0.0f, -3.0f, 1.5f, 0.75f};
  struct reference {
    float temperature, top_p;
    std::array<std::int32_t, 24> tokens;
  };
  const reference refs[] = {
      {1.0f, 1.0f, {7, 1, 2, 2, 6, 2, 0, 6, 6, 7, 3, 3, 0, 3, 2, 3, 2, 4, 2, 2, 3, 2, 2, 3}},  // (run.c's -p 0 too)
      {0.7f, 0.9f, {7, 2, 2, 2, 6, 2, 2, 6, 6, 7, 3, 3, 2, 3, 2, 3, 2, 3, 2, 2, 3, 2, 2, 3}},
      {1.3f, 0.5f, {3, 2, 2, 2, 3, 2, 2, 3, 3, 3, 2, 2, 2, 3, 2, 3, 2, 3, 2, 2, 2, 2, 2, 2}},
  };
  for (const reference& r : refs) {
    sf::sampler<V8> s{2024};
    ASSERT_TRUE(s.configure(runc(r.temperature, r.top_p)));
    for (std::size_t i = 0; i < r.tokens.size(); ++i)
      EXPECT_EQ(s.sample(logits), r.tokens[i]) << "draw " << i << ", -t " << r.temperature << " -p " << r.top_p;
  }
}

// The nucleus on a hand-made distribution, with the coins drawn by a second generator: four equal
// probabilities (exactly 0.25), top_p 0.5. The list is ordered by id; its running sum 0.5 does not
// exceed 0.5, so the third token is taken too (run.c's "exceeds", where the library's own recipe
// stops at "reaches"): r = coin · 0.75 picks 0, 1 or 2, never 3.
TEST(SamplingLlama2c, NucleusTakesTokensUntilTheSumExceedsP) {
  const float equal[V] = {1.5f, 1.5f, 1.5f, 1.5f};
  sf::sampler<V> s{77};
  ASSERT_TRUE(s.configure(runc(1.0f, 0.5f)));
  sf::xorshift64star coins{77};
  std::array<int, V> seen{};
  for (int i = 0; i < 2000; ++i) {
    const float r = coins.next_f32() * 0.75f;
    const std::int32_t want = r < 0.25f ? 0 : r < 0.5f ? 1 : 2;
    const std::int32_t got = s.sample(equal);
    ASSERT_EQ(got, want) << "draw " << i;
    ++seen[static_cast<std::size_t>(got)];
  }
  EXPECT_GT(seen[0] * seen[1] * seen[2], 0);
  // (0.1, 0.2, 0.3, 0.4): top_p 0.35 keeps 0.4 alone; 0.65 keeps 0.4 and 0.3 (0.7 > 0.65), 4:3.
  ASSERT_TRUE(s.configure(runc(1.0f, 0.35f)));
  for (int i = 0; i < 20; ++i) EXPECT_EQ(s.sample(probs_logits.data()), 3);
  ASSERT_TRUE(s.configure(runc(1.0f, 0.65f)));
  std::array<double, V> f{};
  for (int i = 0; i < 40000; ++i) f[static_cast<std::size_t>(s.sample(probs_logits.data()))] += 1.0 / 40000;
  EXPECT_EQ(f[0] + f[1], 0.0);
  EXPECT_NEAR(f[3], 4.0 / 7, 0.01);
  // top_p 1: the whole distribution, in id order.
  ASSERT_TRUE(s.configure(runc(1.0f, 1.0f)));
  f = {};
  for (int i = 0; i < 40000; ++i) f[static_cast<std::size_t>(s.sample(probs_logits.data()))] += 1.0 / 40000;
  for (std::size_t i = 0; i < V; ++i) EXPECT_NEAR(f[i], 0.1 * static_cast<double>(i + 1), 0.01) << i;
}

// Greedy (temperature 0) draws no random number, as run.c: the coins after it are a fresh generator's.
TEST(SamplingLlama2c, GreedyDrawsNoRandomNumber) {
  sf::sampler<V> a{5}, b{5};
  ASSERT_TRUE(a.configure(runc(0.0f, 0.9f)));
  const float l[V] = {0.5f, 2.0f, 2.0f, -1.0f};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(a.sample(l), 1);  // the lowest id among the largest
  ASSERT_TRUE(a.configure(runc(1.0f, 1.0f)));
  ASSERT_TRUE(b.configure(runc(1.0f, 1.0f)));
  for (int i = 0; i < 50; ++i) EXPECT_EQ(a.sample(probs_logits.data()), b.sample(probs_logits.data())) << i;
  ASSERT_TRUE(a.configure(runc(1e-45f, 0.9f)));  // logits / T overflows (run.c: NaN): greedy
  EXPECT_EQ(a.sample(l), 1);
}

TEST(SamplingLlama2c, TopKIsRefused) {
  sf::sampler<V> s{1};
  sf::sampling_options o = runc(1.0f, 0.9f);
  o.top_k = 2;
  EXPECT_STREQ(s.configure(o).message(), "sampling: llama2.c's recipe has no top_k (it must be 0), got 2");
  EXPECT_EQ(s.options().recipe, sf::sampling_recipe::staticformer);  // the previous options stay
}

namespace {
constexpr std::array<std::int32_t, 8> first_runc_tokens(float top_p) {
  sf::sampler<V> s{2024};
  (void)s.configure(runc(0.9f, top_p));
  const float l[V] = {-2.3f, -1.6f, -1.2f, -0.9f};
  std::array<std::int32_t, 8> t{};
  for (auto& x : t) x = s.sample(l);
  return t;
}
constexpr auto compile_time_runc_nucleus = first_runc_tokens(0.8f);
constexpr auto compile_time_runc_whole = first_runc_tokens(1.0f);
}  // namespace
TEST(SamplingLlama2c, ConstexprEqualsRunTime) {
  const float top_ps[] = {0.8f, 1.0f};
  for (int k = 0; k < 2; ++k) {
    sf::sampler<V> s{2024};
    ASSERT_TRUE(s.configure(runc(0.9f, top_ps[k])));
    const float l[V] = {-2.3f, -1.6f, -1.2f, -0.9f};
    const auto& want = k == 0 ? compile_time_runc_nucleus : compile_time_runc_whole;
    for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(s.sample(l), want[i]) << i;
  }
}
