// constexpr math: evaluated at compile time on both g++ and clang, and within a few
// ulp of the C library at run time over the ranges the model uses.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "staticformer/math.hpp"

// Compile-time evaluation (this file is built by g++ and, in CI, by clang too).
static_assert(sf::cx::exp(0.0) == 1.0);
static_assert(sf::cx::exp(1.0) > 2.7182818284 && sf::cx::exp(1.0) < 2.7182818285);
static_assert(sf::cx::log(1.0) == 0.0);
static_assert(sf::cx::log(2.0) > 0.6931471805 && sf::cx::log(2.0) < 0.6931471806);
static_assert(sf::cx::sqrt(16.0) == 4.0 && sf::cx::sqrt(2.0f) == 1.41421356f);
static_assert(sf::cx::tanh(0.5) > 0.4621171572 && sf::cx::tanh(0.5) < 0.4621171573);
static_assert(sf::cx::erf(1.0) > 0.8427007929 && sf::cx::erf(1.0) < 0.842700793);
static_assert(sf::cx::sin(1.0) > 0.8414709848 && sf::cx::sin(1.0) < 0.8414709849);
static_assert(sf::cx::cos(1.0) > 0.5403023058 && sf::cx::cos(1.0) < 0.5403023059);
static_assert(sf::math::exp(1.0f) > 2.71828f && sf::math::erf(-1.0f) < -0.8427f);

namespace {
std::int64_t ordered(double x) {
  auto i = std::bit_cast<std::int64_t>(x);
  return i < 0 ? INT64_MIN - i : i;
}
std::int64_t ulp_distance(double a, double b) { return std::llabs(ordered(a) - ordered(b)); }

template <class F, class G>
std::int64_t max_ulps(F f, G g, double lo, double hi, bool log_spaced = false, int n = 100000) {
  std::int64_t worst = 0;
  for (int i = 0; i <= n; ++i) {
    const double u = static_cast<double>(i) / n;
    const double x = log_spaced ? std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * u) : lo + (hi - lo) * u;
    worst = std::max(worst, ulp_distance(f(x), g(x)));
  }
  return worst;
}
}  // namespace

// Ranges: activations and scores (|x| up to ~100 for exp, softmax inputs), norms
// (sqrt of variances), positions (sin/cos of t·ω up to t = 300).
TEST(Math, ExpWithinFewUlp) {
  EXPECT_LE(max_ulps([](double x) { return sf::cx::exp(x); }, [](double x) { return std::exp(x); }, -100, 88), 2);
}
TEST(Math, Expm1WithinFewUlp) {
  EXPECT_LE(max_ulps([](double x) { return sf::cx::expm1(x); }, [](double x) { return std::expm1(x); }, -5, 5), 3);
}
TEST(Math, LogWithinFewUlp) {
  EXPECT_LE(max_ulps([](double x) { return sf::cx::log(x); }, [](double x) { return std::log(x); }, 1e-30, 1e6, true), 2);
}
TEST(Math, SqrtWithinOneUlp) {
  EXPECT_LE(max_ulps([](double x) { return sf::cx::sqrt(x); }, [](double x) { return std::sqrt(x); }, 1e-10, 1e6, true), 1);
}
TEST(Math, TanhWithinFewUlp) {
  EXPECT_LE(max_ulps([](double x) { return sf::cx::tanh(x); }, [](double x) { return std::tanh(x); }, -10, 10), 4);
}
TEST(Math, ErfWithinFewUlp) {
  EXPECT_LE(max_ulps([](double x) { return sf::cx::erf(x); }, [](double x) { return std::erf(x); }, -7, 7), 4);
}
TEST(Math, SinCosWithinFewUlp) {
  EXPECT_LE(max_ulps([](double x) { return sf::cx::sin(x); }, [](double x) { return std::sin(x); }, -300, 300), 4);
  EXPECT_LE(max_ulps([](double x) { return sf::cx::cos(x); }, [](double x) { return std::cos(x); }, -300, 300), 4);
}
TEST(Math, FloatOverloadsRoundOnce) {
  // float results computed in double and rounded once: within one float ulp of the double result
  for (float x = -9.0f; x <= 9.0f; x += 0.01f) {
    EXPECT_EQ(sf::cx::tanh(x), static_cast<float>(std::tanh(static_cast<double>(x))));
    EXPECT_NEAR(sf::cx::erf(x), static_cast<float>(std::erf(static_cast<double>(x))), 1e-7f);
  }
}
TEST(Math, SpecialValues) {
  EXPECT_TRUE(std::isnan(sf::cx::log(-1.0)));
  EXPECT_EQ(sf::cx::log(0.0), -INFINITY);
  EXPECT_EQ(sf::cx::exp(1000.0), INFINITY);
  EXPECT_EQ(sf::cx::exp(-1000.0), 0.0);
  EXPECT_EQ(sf::cx::tanh(50.0), 1.0);
  EXPECT_EQ(sf::cx::erf(-10.0), -1.0);
}

// The exact ones: √ correctly rounded (double and float), fma with one rounding, logf (float only)
// within 1 ulp, powi correctly rounded (double-double) — the compile-time twins of the hardware.
namespace {
template <class T, class U>
T bits_to(U u) {
  T t;
  std::memcpy(&t, &u, sizeof t);
  return t;
}
}  // namespace
TEST(Math, ExactSqrtFmaLogfPowi) {
  std::uint64_t s = 88172645463325252ull;
  auto next = [&] { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; };
  long sqrt_bad = 0, sqrtf_bad = 0, fma_bad = 0, logf_worst = 0;
  for (int i = 0; i < 300000; ++i) {
    const double x = std::fabs(bits_to<double>(next()));
    if (std::isfinite(x) && sf::cx::sqrt(x) != std::sqrt(x)) ++sqrt_bad;
    const float xf = std::fabs(bits_to<float>(static_cast<std::uint32_t>(next())));
    if (std::isfinite(xf) && sf::cx::sqrt(xf) != std::sqrt(xf)) ++sqrtf_bad;
    const float a = bits_to<float>(static_cast<std::uint32_t>(next() & 0xbfffffffu));  // |a| < 2
    const float b = static_cast<float>(static_cast<std::int32_t>(next())) * 1e-9f;
    const float c = static_cast<float>(static_cast<std::int32_t>(next())) * 1e-12f;
    const float r1 = sf::cx::fma(a, b, c), r2 = std::fma(a, b, c);
    if (!(r1 == r2) && !(std::isnan(r1) && std::isnan(r2))) ++fma_bad;
    if (std::isfinite(xf) && xf > 0) {
      const float l = sf::cx::logf(xf), ref = static_cast<float>(std::log(static_cast<double>(xf)));
      const long d = std::labs(static_cast<long>(bits_to<std::int32_t>(l)) - static_cast<long>(bits_to<std::int32_t>(ref)));
      logf_worst = d > logf_worst ? d : logf_worst;
    }
  }
  EXPECT_EQ(sqrt_bad, 0) << "cx::sqrt(double) must equal std::sqrt";
  EXPECT_EQ(sqrtf_bad, 0) << "cx::sqrt(float) must equal std::sqrt";
  EXPECT_EQ(fma_bad, 0) << "cx::fma(float) must equal std::fma";
  EXPECT_LE(logf_worst, 1) << "cx::logf within 1 ulp";
  // A double rounding trap: the exact a·b + c = 1 + 2^-23 + 2^-24 - 2^-60 rounds to the float tie
  // 1 + 2^-23 + 2^-24 in double (ties-to-even would then give 1 + 2^-22); the fma gives 1 + 2^-23.
  constexpr float ta = 0x1p-24f * (1.0f - 0x1p-18f), tb = 1.0f + 0x1p-18f, tc = 1.0f + 0x1p-23f;
  static_assert(sf::cx::fma(ta, tb, tc) == 1.0f + 0x1p-23f);
  EXPECT_EQ(sf::cx::fma(ta, tb, tc), std::fma(ta, tb, tc));
  EXPECT_NE(static_cast<float>(static_cast<double>(ta) * tb + tc), std::fma(ta, tb, tc));  // the trap is real
  // powi: correctly rounded (checked against long double)
  for (std::int64_t t : {1, 2, 3, 10, 100, 1000, 12345}) {
    const long double ref = std::pow(static_cast<long double>(0.999), static_cast<long double>(t));
    EXPECT_EQ(sf::cx::powi(0.999, t), static_cast<double>(ref)) << "0.999^" << t;
  }
}
static_assert(sf::cx::sqrt(2.0f) == 1.41421354f && sf::cx::fma(3.0f, 5.0f, -1.0f) == 14.0f);
static_assert(sf::cx::logf(1.0f) == 0.0f);
