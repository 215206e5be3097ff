// staticformer/simd/scalar.hpp — the scalar SIMD backend: one lane, any T, constexpr.
//
// sf::simd::scalar<T> always compiles, on every target and during constant evaluation;
// it is sf::simd::native<T> where no vector backend applies (double, plain targets,
// SF_SIMD_FORCE_SCALAR) and the reference the vector backends are tested against. The
// operations are those listed in staticformer/simd.hpp, which includes this header.
#pragma once
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "staticformer/math.hpp"

namespace sf::simd {

template <class T>
struct scalar {
  using value_type = T;
  using reg = T;
  using mask = bool;
  static constexpr std::size_t width = 1;
  static constexpr std::size_t registers = 16;  // a guess that keeps register tiles modest
  static constexpr const char* name = "scalar";
  static constexpr const char* instructions = "scalar (no vector backend in this build)";  // (cpu_report.hpp)
  static constexpr reg zero() { return T{}; }
  static constexpr reg set1(T x) { return x; }
  static constexpr reg load(const T* p) { return *p; }
  static constexpr void store(T* p, reg v) { *p = v; }
  static constexpr reg load_partial(const T* p, std::size_t n) { return n ? *p : T{}; }
  static constexpr void store_partial(T* p, reg v, std::size_t n) { if (n) *p = v; }
  static constexpr reg add(reg a, reg b) { return a + b; }
  static constexpr reg sub(reg a, reg b) { return a - b; }
  static constexpr reg mul(reg a, reg b) { return a * b; }
  static constexpr reg div(reg a, reg b) { return a / b; }
  // a*b + c and c - a*b, with one rounding (like every SIMD backend) when the target has FMA
  // instructions; otherwise, and during constant evaluation, two roundings.
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
  static constexpr bool fused = true;
#else
  static constexpr bool fused = false;
#endif
  // (During constant evaluation a float fmadd is the exact one-rounding emulation sf::cx::fma,
  // so compile-time results equal run-time ones; a double one rounds twice there.)
  static constexpr reg fmadd(reg a, reg b, reg c) {
    if constexpr (fused && std::is_same_v<T, float>)
      if (std::is_constant_evaluated()) return sf::cx::fma(a, b, c);
    if constexpr (fused && (std::is_same_v<T, float> || std::is_same_v<T, double>))
      if (!std::is_constant_evaluated()) return std::fma(a, b, c);
    return a * b + c;
  }
  static constexpr reg fnmadd(reg a, reg b, reg c) { return fmadd(-a, b, c); }
  static constexpr reg max(reg a, reg b) { return a > b ? a : b; }        // b if either is NaN
  static constexpr reg min(reg a, reg b) { return a < b ? a : b; }        // b if either is NaN
  static constexpr reg abs(reg a) { return a < T{} ? -a : (a == T{} ? T{} : a); }
  static constexpr reg neg(reg a) { return -a; }
  static constexpr reg sqrt(reg a) { return static_cast<T>(sf::math::sqrt(a)); }
  static constexpr reg round(reg a) {  // to nearest even, via the 1.5*2^(digits-1) trick
    constexpr T big = std::is_same_v<T, float> ? T(12582912.0) : T(6755399441055744.0);
    if (!(a < big && a > -big)) return a;  // already integral (or NaN / inf)
    return (a + big) - big;
  }
  static constexpr reg scale2(reg x, reg n) {  // x * 2^n, n integral: x * 2^h * 2^(n-h), h = floor(n/2)
    if (!(n == n)) return x + n;  // NaN: no conversion to an integer
    if constexpr (std::is_same_v<T, float>) {
      const auto ni = static_cast<std::int32_t>(n), h = ni >> 1;  // |n| <= 252: both factors normal
      const float f1 = std::bit_cast<float>(static_cast<std::uint32_t>(h + 127) << 23);
      const float f2 = std::bit_cast<float>(static_cast<std::uint32_t>(ni - h + 127) << 23);
      return x * f1 * f2;
    } else if constexpr (std::is_same_v<T, double>) {
      const auto ni = static_cast<std::int64_t>(n), h = ni >> 1;  // |n| <= 2044
      const double f1 = std::bit_cast<double>(static_cast<std::uint64_t>(h + 1023) << 52);
      const double f2 = std::bit_cast<double>(static_cast<std::uint64_t>(ni - h + 1023) << 52);
      return x * f1 * f2;
    } else {
      T r = x;
      for (T k = n; k > T{0}; k -= T{1}) r *= T{2};
      for (T k = n; k < T{0}; k += T{1}) r *= T{0.5};
      return r;
    }
  }
  static constexpr reg copysign(reg mag, reg sgn) {
    if constexpr (std::is_same_v<T, float>) {
      return std::bit_cast<float>((std::bit_cast<std::uint32_t>(mag) & 0x7fffffffu) |
                                  (std::bit_cast<std::uint32_t>(sgn) & 0x80000000u));
    } else if constexpr (std::is_same_v<T, double>) {
      return std::bit_cast<double>((std::bit_cast<std::uint64_t>(mag) & 0x7fffffffffffffffull) |
                                   (std::bit_cast<std::uint64_t>(sgn) & 0x8000000000000000ull));
    } else {
      const T m = mag < T{} ? -mag : mag;
      return sgn < T{} ? -m : m;
    }
  }
  static constexpr mask lt(reg a, reg b) { return a < b; }
  static constexpr reg select(mask m, reg a, reg b) { return m ? a : b; }
  static constexpr T hsum(reg a) { return a; }
  static constexpr T hmax(reg a) { return a; }
  static constexpr void transpose(reg (&)[1]) {}
};

}  // namespace sf::simd
