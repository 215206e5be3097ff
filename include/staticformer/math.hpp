// staticformer/math.hpp — elementary functions usable in constant expressions.
//
// sf::cx::{exp, expm1, log, sqrt, tanh, erf, sin, cos, pow} are portable
// implementations that g++ and clang both evaluate at compile time (clang does not
// constant-fold the <cmath> builtins). They are written in double with careful
// range reduction, and the test suite checks them at run time against the standard
// library to within a few ulp over the ranges the model uses.
//
// sf::math::{...} is what layers call: the portable version during constant
// evaluation, the standard library at run time. Vectorised fast versions for hot
// loops live in staticformer/simd.hpp.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace sf::cx {

namespace detail {
inline constexpr double ln2_hi = 6.93147180369123816490e-01;  // high bits of ln 2 (Cody–Waite split)
inline constexpr double ln2_lo = 1.90821492927058770002e-10;  // ln 2 - ln2_hi
inline constexpr double inv_ln2 = 1.44269504088896338700e+00;
inline constexpr double pi = 3.14159265358979323846;
// pi/2 in three parts for argument reduction of sin/cos
inline constexpr double pio2_1 = 1.57079632673412561417e+00;
inline constexpr double pio2_2 = 6.07710050630396597660e-11;   // next 33 bits
inline constexpr double pio2_3 = 2.02226624879595063154e-21;   // pi/2 - pio2_1 - pio2_2

constexpr bool is_nan(double x) { return x != x; }

// 2^k as a double, for k in the normal range.
constexpr double pow2i(int k) {
  if (k > 1023) return std::numeric_limits<double>::infinity();
  if (k < -1022) {  // subnormal: scale in two steps
    if (k < -1074) return 0.0;
    return pow2i(k + 1022) * std::bit_cast<double>(std::uint64_t{1} << 52);  // 2^-1022
  }
  return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52);
}

constexpr double round_nearest(double x) {
  // Round half away from zero; exact for |x| < 2^52.
  const auto i = static_cast<std::int64_t>(x < 0 ? x - 0.5 : x + 0.5);
  return static_cast<double>(i);
}

// exp(r) - 1 for |r| <= ln2/2 by the Taylor series to degree 15 (truncation < 1e-19),
// nested as r (1 + r/2 (1 + r/3 (1 + ...))) so that rounding errors stay near one ulp.
constexpr double expm1_reduced(double r) {
  double p = 1.0;
  for (int n = 15; n >= 2; --n) p = 1.0 + r * p / n;
  return r * p;
}
}  // namespace detail

constexpr double exp(double x) {
  if (detail::is_nan(x)) return x;
  if (x > 709.782712893384) return std::numeric_limits<double>::infinity();
  if (x < -745.1332191019412) return 0.0;
  // x = k ln2 + r, |r| <= ln2 / 2
  const double k = detail::round_nearest(x * detail::inv_ln2);
  const double r = (x - k * detail::ln2_hi) - k * detail::ln2_lo;
  const double er = 1.0 + detail::expm1_reduced(r);
  const int ki = static_cast<int>(k);
  if (ki > 1000) return er * detail::pow2i(ki - 2) * 4.0;
  return er * detail::pow2i(ki);
}

constexpr double expm1(double x) {
  if (detail::is_nan(x)) return x;
  if (x > -0.34657359027997264 && x < 0.34657359027997264) return detail::expm1_reduced(x);
  if (x < -40.0) return -1.0;
  if (x > 709.0) return exp(x);
  // x = k ln2 + r: expm1(x) = 2^k expm1(r) + (2^k - 1), which avoids the cancellation of exp(x) - 1
  const double k = detail::round_nearest(x * detail::inv_ln2);
  const double r = (x - k * detail::ln2_hi) - k * detail::ln2_lo;
  const double p2 = detail::pow2i(static_cast<int>(k));
  return p2 * detail::expm1_reduced(r) + (p2 - 1.0);
}

constexpr double log(double x) {
  if (detail::is_nan(x) || x < 0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return -std::numeric_limits<double>::infinity();
  if (x == std::numeric_limits<double>::infinity()) return x;
  // x = m 2^e with m in [sqrt(1/2), sqrt(2))
  std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  int e = static_cast<int>((bits >> 52) & 0x7ff);
  if (e == 0) {  // subnormal: normalise
    x *= 18014398509481984.0;  // 2^54
    bits = std::bit_cast<std::uint64_t>(x);
    e = static_cast<int>((bits >> 52) & 0x7ff) - 54;
  }
  e -= 1023;
  double m = std::bit_cast<double>((bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    ++e;
  }
  // log(m) = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.1716
  const double f = m - 1.0;
  const double s = f / (m + 1.0);
  const double s2 = s * s;
  double poly = 0.0;
  for (int n = 23; n >= 3; n -= 2) poly = poly * s2 + 1.0 / n;
  // 2 atanh(s) = 2s + s R with R = 2 (s^2/3 + s^4/5 + ...), and 2s = f - s f, so
  // log(m) = f - s (f - R): f is exact and the correction is small, which keeps it accurate near m = 1.
  const double R = 2.0 * s2 * poly;
  const double logm = f - s * (f - R);
  const double ed = static_cast<double>(e);
  return ed * detail::ln2_hi + (logm + ed * detail::ln2_lo);
}

// log x in float arithmetic only (no double: for targets without a double FPU), Cephes' logf:
// x = m·2^e with m in [√½, √2), log m = f - f²/2 + f³P(f), f = m - 1; about 1 ulp. Plain
// multiply-adds, the same bits at compile and run time (the library builds with -ffp-contract=off).
constexpr float logf(float x) {
  if (!(x > 0.0f)) return x == 0.0f ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  if (x == std::numeric_limits<float>::infinity()) return x;
  std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  int e = static_cast<int>((bits >> 23) & 0xff);
  if (e == 0) {  // subnormal: normalise
    x *= 16777216.0f;  // 2^24
    bits = std::bit_cast<std::uint32_t>(x);
    e = static_cast<int>((bits >> 23) & 0xff) - 24;
  }
  e -= 126;  // x = m·2^e with m in [0.5, 1)
  float m = std::bit_cast<float>((bits & 0x007fffffu) | 0x3f000000u);
  float f;
  if (m < 0.707106781186547524f) {
    --e;
    f = m + m - 1.0f;
  } else {
    f = m - 1.0f;
  }
  const float z = f * f;
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z;
  const float ef = static_cast<float>(e);
  y += -2.12194440e-4f * ef;
  y += -0.5f * z;
  return (f + y) + 0.693359375f * ef;
}

// Correctly rounded √x (the IEEE result, as std::sqrt and every SIMD sqrt instruction give it):
// x = m·2^e with e even, r = ⌊√(m·2^54)⌋ in integers (54 bits), rounded to 53 bits with the
// remainder as sticky bit.
// (Targets without 128-bit integers, e.g. 32-bit Arm, use Newton's iteration and the neighbour
// whose square is closest to x: within an ulp, correctly rounded in all but rare near-ties.)
constexpr double sqrt(double x) {
  if (detail::is_nan(x) || x < 0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0 || x == std::numeric_limits<double>::infinity()) return x;
#if !defined(__SIZEOF_INT128__)
  std::uint64_t nb = std::bit_cast<std::uint64_t>(x);
  double g = std::bit_cast<double>((nb >> 1) + (std::uint64_t{1023} << 51));
  for (int i = 0; i < 8; ++i) g = 0.5 * (g + x / g);
  const double up = std::bit_cast<double>(std::bit_cast<std::uint64_t>(g) + 1);
  const double dn = std::bit_cast<double>(std::bit_cast<std::uint64_t>(g) - 1);
  auto err = [x](double c) { const double d = c * c - x; return d < 0 ? -d : d; };
  if (err(up) < err(g)) g = up;
  if (err(dn) < err(g)) g = dn;
  return g;
#else
  __extension__ using u128 = unsigned __int128;
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  int e = static_cast<int>((bits >> 52) & 0x7ff);
  std::uint64_t m = bits & ((std::uint64_t{1} << 52) - 1);
  if (e == 0) {  // subnormal: normalise
    const int shift = std::countl_zero(m) - 11;
    m <<= shift;
    e = 1 - shift;
  } else {
    m |= std::uint64_t{1} << 52;
  }
  int ex = e - 1075;  // x = m · 2^ex, m in [2^52, 2^53)
  if (ex & 1) {
    m <<= 1;
    ex -= 1;
  }
  const u128 M = static_cast<u128>(m) << 54;  // in [2^106, 2^108)
  // floor(√M) from a double estimate, then exact integer correction
  double est = static_cast<double>(M);
  std::uint64_t eb = std::bit_cast<std::uint64_t>(est);
  double y = std::bit_cast<double>((eb >> 1) + (std::uint64_t{1023} << 51));
  for (int i = 0; i < 6; ++i) y = 0.5 * (y + est / y);
  u128 r = static_cast<u128>(y);
  while (r * r > M) --r;
  while ((r + 1) * (r + 1) <= M) ++r;
  const bool sticky = r * r != M;
  std::uint64_t q = static_cast<std::uint64_t>(r >> 1);  // 53 bits
  const bool half = (r & 1) != 0;
  if (half && (sticky || (q & 1))) ++q;
  int eres = ex / 2 - 27 + 1;  // √x = q · 2^eres
  if (q == (std::uint64_t{1} << 53)) {
    q >>= 1;
    ++eres;
  }
  return std::bit_cast<double>((static_cast<std::uint64_t>(eres + 52 + 1023) << 52) |
                               (q & ((std::uint64_t{1} << 52) - 1)));
#endif
}

// a·b + c with one rounding (IEEE fma), for float: a·b is exact in double and the sum is
// rounded to double; rounding that to float is then right unless the double sum is exactly
// halfway between two floats (double rounding), where the sum's exact error (TwoSum) decides.
constexpr float fma(float a, float b, float c) {
  const double p = static_cast<double>(a) * static_cast<double>(b);
  const double cd = c, sum = p + cd;
  float f = static_cast<float>(sum);
  const double back = f;
  if (back != sum && sum - sum == 0 && back - back == 0) {
    const double d = sum - back, t = back + 2 * d;  // t: the other float neighbour when sum is a tie
    if (static_cast<double>(static_cast<float>(t)) == t) {
      const double bb = sum - p, err = (p - (sum - bb)) + (cd - bb);
      if (err != 0 && (err > 0) == (d > 0)) f = static_cast<float>(t);
    }
  }
  return f;
}

// x^n for an integer n >= 0, in double-double (about 106 bits) and rounded once: the correctly
// rounded power in all but astronomically rare cases. The same code at compile and run time.
constexpr double powi(double x, std::int64_t n) {
  struct dd {
    double hi, lo;
  };
  auto split = [](double a, double& h, double& l) {  // Veltkamp: a = h + l, 26 bits each
    const double t = 134217729.0 * a;
    h = t - (t - a);
    l = a - h;
  };
  auto mul = [&](dd a, dd b) {  // (a.hi + a.lo)(b.hi + b.lo), Dekker's product
    const double p = a.hi * b.hi;
    double ah = 0, al = 0, bh = 0, bl = 0;
    split(a.hi, ah, al);
    split(b.hi, bh, bl);
    double e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    e += a.hi * b.lo + a.lo * b.hi;
    const double hi = p + e;
    return dd{hi, e - (hi - p)};
  };
  dd r{1.0, 0.0}, b{x, 0.0};
  for (; n > 0; n >>= 1) {
    if (n & 1) r = mul(r, b);
    b = mul(b, b);
  }
  return r.hi + r.lo;
}

constexpr double tanh(double x) {
  if (detail::is_nan(x)) return x;
  const double ax = x < 0 ? -x : x;
  if (ax > 22.0) return x < 0 ? -1.0 : 1.0;
  // tanh(a) = expm1(2a) / (expm1(2a) + 2)
  const double e = expm1(2.0 * ax);
  const double t = e / (e + 2.0);
  return x < 0 ? -t : t;
}

constexpr double erf(double x) {
  if (detail::is_nan(x)) return x;
  const double ax = x < 0 ? -x : x;
  if (ax >= 6.0) return x < 0 ? -1.0 : 1.0;
  const double a2 = ax * ax;
  // a2_err = ax*ax - a2 exactly (Dekker), so e^{-ax^2} = e^{-a2} (1 - a2_err)
  const double c = 134217729.0 * ax;  // 2^27 + 1
  const double hi = c - (c - ax), lo = ax - hi;
  const double a2_err = ((hi * hi - a2) + 2.0 * hi * lo) + lo * lo;
  const double g = exp(-a2) * (1.0 - a2_err);  // e^{-ax^2}
  double r = 0.0;
  if (ax < 1.0) {
    // erf(a) = 2/sqrt(pi) e^{-a^2} sum_n 2^n a^{2n+1} / (1·3·5···(2n+1)) — every term positive —
    // nested as a (1 + 2a^2/3 (1 + 2a^2/5 (1 + ...))) and evaluated from the tail (60 terms: < 1e-20 at a = 1).
    double sum = 1.0;
    for (int n = 60; n >= 1; --n) sum = 1.0 + (2.0 * a2 / (2 * n + 1)) * sum;
    sum *= ax;
    r = 1.1283791670955126 * g * sum;  // 2/sqrt(pi)
  } else {
    // erfc(a) = e^{-a^2}/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...)))), evaluated from the tail
    double f = ax;
    for (int k = 400; k >= 1; --k) f = ax + (0.5 * k) / f;
    r = 1.0 - 0.5641895835477563 * g / f;  // 1/sqrt(pi)
  }
  return x < 0 ? -r : r;
}

namespace detail {
// sin and cos on |r| <= pi/4 by Taylor series (truncation < 1e-18)
constexpr double sin_reduced(double r) {
  const double r2 = r * r;
  double term = r, sum = r;
  for (int n = 1; n <= 10; ++n) {
    term *= -r2 / ((2 * n) * (2 * n + 1));
    sum += term;
  }
  return sum;
}
constexpr double cos_reduced(double r) {
  const double r2 = r * r;
  double term = 1.0, sum = 1.0;
  for (int n = 1; n <= 10; ++n) {
    term *= -r2 / ((2 * n - 1) * (2 * n));
    sum += term;
  }
  return sum;
}
// x = q (pi/2) + r; returns r and q mod 4. Accurate for |x| < 2^20 or so.
constexpr double reduce_pio2(double x, int& quadrant) {
  const double q = round_nearest(x * (2.0 / pi));
  quadrant = static_cast<int>(static_cast<std::int64_t>(q) & 3);
  return ((x - q * pio2_1) - q * pio2_2) - q * pio2_3;
}
}  // namespace detail

namespace detail {
// sin(r + q·π/2) for the reduced r
constexpr double sin_quadrant(double r, int q) {
  switch (q & 3) {
    case 0: return sin_reduced(r);
    case 1: return cos_reduced(r);
    case 2: return -sin_reduced(r);
    default: return -cos_reduced(r);
  }
}
}  // namespace detail

constexpr double sin(double x) {
  if (detail::is_nan(x)) return x;
  int q = 0;
  const double r = detail::reduce_pio2(x, q);
  return detail::sin_quadrant(r, q);
}

constexpr double cos(double x) {  // cos x = sin(x + π/2)
  if (detail::is_nan(x)) return x;
  int q = 0;
  const double r = detail::reduce_pio2(x, q);
  return detail::sin_quadrant(r, q + 1);
}

// x^y for x > 0 (enough for 10000^(-2i/d)).
constexpr double pow(double x, double y) { return exp(y * log(x)); }

// float overloads compute in double and round once.
constexpr float exp(float x) { return static_cast<float>(exp(static_cast<double>(x))); }
constexpr float expm1(float x) { return static_cast<float>(expm1(static_cast<double>(x))); }
constexpr float log(float x) { return static_cast<float>(log(static_cast<double>(x))); }
// Correctly rounded float √: Newton in double to within an ulp of double, then one rounding to
// float. (A float's √ is never within 2^-51 relative of a float midpoint, so an ulp of double,
// 2^-52, cannot move it across one.) Cheap, for the compiler's sake: the optimizers call it per element.
constexpr float sqrt(float x) {
  if (!(x > 0) || x == std::numeric_limits<float>::infinity()) return x == 0 || x == std::numeric_limits<float>::infinity() ? x : std::numeric_limits<float>::quiet_NaN();
  const double xd = x;
  double y = std::bit_cast<double>((std::bit_cast<std::uint64_t>(xd) >> 1) + (std::uint64_t{1023} << 51));
  for (int i = 0; i < 5; ++i) y = 0.5 * (y + xd / y);
  return static_cast<float>(y);
}
constexpr float tanh(float x) { return static_cast<float>(tanh(static_cast<double>(x))); }
constexpr float erf(float x) { return static_cast<float>(erf(static_cast<double>(x))); }
constexpr float sin(float x) { return static_cast<float>(sin(static_cast<double>(x))); }
constexpr float cos(float x) { return static_cast<float>(cos(static_cast<double>(x))); }

}  // namespace sf::cx

namespace sf::math {
// What layers call: portable during constant evaluation, the C library at run time.
#define SF_MATH_DISPATCH(fn)                                                   \
  template <class T>                                                           \
  constexpr T fn(T x) {                                                        \
    static_assert(std::is_floating_point_v<T>, "sf::math::" #fn ": float or double"); \
    if (std::is_constant_evaluated()) return ::sf::cx::fn(x);                  \
    return static_cast<T>(std::fn(x));                                         \
  }
SF_MATH_DISPATCH(exp)
SF_MATH_DISPATCH(expm1)
SF_MATH_DISPATCH(log)
SF_MATH_DISPATCH(sqrt)
SF_MATH_DISPATCH(tanh)
SF_MATH_DISPATCH(erf)
SF_MATH_DISPATCH(sin)
SF_MATH_DISPATCH(cos)
#undef SF_MATH_DISPATCH
}  // namespace sf::math
