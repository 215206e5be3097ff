// staticformer/simd/emulated.hpp — the compile-time twin of a vector backend.
//
// sf::simd::emulated<Like> has Like::width float lanes in plain constexpr C++ and rounds
// exactly as the hardware backend Like does: lane-wise IEEE add/sub/mul/div/sqrt, fmadd with
// one rounding when Like is fused (sf::cx::fma), x86 min/max (the second operand when either
// is NaN), round to nearest even, scale2 as Like computes it (AVX-512's scalef rounds once,
// the others multiply by two powers of two), and hsum/hmax in Like's reduction order (the
// halving tree of AVX2/AVX-512, NEON's pairwise addv). So a kernel written once against
// sf::simd (kernels/vmath.hpp) gives the same bits in a constant expression, run with
// twin<native<float>>, as at run time with native<float>.
//
// transpose is not provided: the matrix kernels run the naive reference during constant
// evaluation (kernels/gemm_ref.hpp), which sums in the same order as the register tiles.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "staticformer/math.hpp"
#include "staticformer/simd/scalar.hpp"

namespace sf::simd {

template <class Like>
struct emulated {
  static_assert(std::is_same_v<typename Like::value_type, float>, "sf::simd::emulated: float backends only");
  using value_type = float;
  static constexpr std::size_t width = Like::width;
  static constexpr std::size_t registers = Like::registers;
  static constexpr bool fused = Like::fused;
  static constexpr const char* name = "emulated";
  struct reg {
    float v[width];
  };
  struct mask {
    bool v[width];
  };

  // Every operation is a plain loop over the lanes, with no call per lane: during constant
  // evaluation each call costs the compiler far more than the arithmetic.
  static constexpr reg zero() { return reg{}; }
  static constexpr reg set1(float x) {
    reg r{};
    for (std::size_t i = 0; i < width; ++i) r.v[i] = x;
    return r;
  }
  static constexpr reg load(const float* p) {
    reg r{};
    for (std::size_t i = 0; i < width; ++i) r.v[i] = p[i];
    return r;
  }
  static constexpr void store(float* p, const reg& a) {
    for (std::size_t i = 0; i < width; ++i) p[i] = a.v[i];
  }
  static constexpr reg load_partial(const float* p, std::size_t n) {
    reg r{};
    for (std::size_t i = 0; i < n && i < width; ++i) r.v[i] = p[i];
    return r;
  }
  static constexpr void store_partial(float* p, const reg& a, std::size_t n) {
    for (std::size_t i = 0; i < n && i < width; ++i) p[i] = a.v[i];
  }
  static constexpr reg add(reg a, const reg& b) {
    for (std::size_t i = 0; i < width; ++i) a.v[i] = a.v[i] + b.v[i];
    return a;
  }
  static constexpr reg sub(reg a, const reg& b) {
    for (std::size_t i = 0; i < width; ++i) a.v[i] = a.v[i] - b.v[i];
    return a;
  }
  static constexpr reg mul(reg a, const reg& b) {
    for (std::size_t i = 0; i < width; ++i) a.v[i] = a.v[i] * b.v[i];
    return a;
  }
  static constexpr reg div(reg a, const reg& b) {
    for (std::size_t i = 0; i < width; ++i) a.v[i] = a.v[i] / b.v[i];
    return a;
  }
  // c + s·a·b with one rounding when Like is fused: sf::cx::fma, written out. (Calling cx::fma
  // per lane makes g++ evaluate and memoise one call per lane: the ref-gpt2 compile-time test
  // went from 17.8 s to 28.6 s. kernels/gemm_ref.hpp writes it out for the same reason.)
  static constexpr reg fma_signed(const reg& a, const reg& b, reg c, float sign) {
    for (std::size_t i = 0; i < width; ++i) {
      if constexpr (fused) {
        const double p = static_cast<double>(sign * a.v[i]) * static_cast<double>(b.v[i]);
        const double cd = c.v[i], sum = p + cd;
        float f = static_cast<float>(sum);
        const double back = f;
        if (back != sum && sum - sum == 0 && back - back == 0) {
          const double d = sum - back, t = back + 2 * d;
          if (static_cast<double>(static_cast<float>(t)) == t) {
            const double bb = sum - p, err = (p - (sum - bb)) + (cd - bb);
            if (err != 0 && (err > 0) == (d > 0)) f = static_cast<float>(t);
          }
        }
        c.v[i] = f;
      } else {
        c.v[i] = sign * a.v[i] * b.v[i] + c.v[i];
      }
    }
    return c;
  }
  static constexpr reg fmadd(const reg& a, const reg& b, const reg& c) { return fma_signed(a, b, c, 1.0f); }
  static constexpr reg fnmadd(const reg& a, const reg& b, const reg& c) { return fma_signed(a, b, c, -1.0f); }
  static constexpr reg max(reg a, const reg& b) {
    for (std::size_t i = 0; i < width; ++i) a.v[i] = a.v[i] > b.v[i] ? a.v[i] : b.v[i];
    return a;
  }
  static constexpr reg min(reg a, const reg& b) {
    for (std::size_t i = 0; i < width; ++i) a.v[i] = a.v[i] < b.v[i] ? a.v[i] : b.v[i];
    return a;
  }
  static constexpr reg abs(reg a) {
    for (std::size_t i = 0; i < width; ++i)
      a.v[i] = std::bit_cast<float>(std::bit_cast<std::uint32_t>(a.v[i]) & 0x7fffffffu);
    return a;
  }
  static constexpr reg neg(reg a) {
    for (std::size_t i = 0; i < width; ++i)
      a.v[i] = std::bit_cast<float>(std::bit_cast<std::uint32_t>(a.v[i]) ^ 0x80000000u);
    return a;
  }
  static constexpr reg sqrt(reg a) {
    for (std::size_t i = 0; i < width; ++i) a.v[i] = cx::sqrt(a.v[i]);
    return a;
  }
  static constexpr reg round(reg a) {  // to nearest even, via the 1.5·2^23 trick (|a| ≥ 2^23 is integral)
    for (std::size_t i = 0; i < width; ++i)
      if (a.v[i] < 12582912.0f && a.v[i] > -12582912.0f) a.v[i] = (a.v[i] + 12582912.0f) - 12582912.0f;
    return a;
  }
  static constexpr reg scale2(reg x, const reg& n) {
    for (std::size_t i = 0; i < width; ++i) {
      if constexpr (requires { Like::exact_scale2; }) {  // x · 2^⌊n⌋, one rounding (AVX-512 scalef)
        const float ni = n.v[i];
        if (!(ni == ni)) {
          x.v[i] = x.v[i] + ni;
          continue;
        }
        const float r = (ni + 12582912.0f) - 12582912.0f;  // n is integral in every caller; floor anyway
        const float fl = ni < 12582912.0f && ni > -12582912.0f ? (r > ni ? r - 1.0f : r) : ni;
        const int k = fl > 400.0f ? 400 : fl < -400.0f ? -400 : static_cast<int>(fl);
        x.v[i] = static_cast<float>(static_cast<double>(x.v[i]) * cx::detail::pow2i(k));
      } else {
        x.v[i] = scalar<float>::scale2(x.v[i], n.v[i]);
      }
    }
    return x;
  }
  static constexpr reg copysign(reg mag, const reg& sgn) {
    for (std::size_t i = 0; i < width; ++i)
      mag.v[i] = std::bit_cast<float>((std::bit_cast<std::uint32_t>(mag.v[i]) & 0x7fffffffu) |
                                      (std::bit_cast<std::uint32_t>(sgn.v[i]) & 0x80000000u));
    return mag;
  }
  static constexpr mask lt(const reg& a, const reg& b) {
    mask m{};
    for (std::size_t i = 0; i < width; ++i) m.v[i] = a.v[i] < b.v[i];
    return m;
  }
  static constexpr reg select(const mask& m, const reg& a, reg b) {
    for (std::size_t i = 0; i < width; ++i)
      if (m.v[i]) b.v[i] = a.v[i];
    return b;
  }
  static constexpr reg swap_pairs(const reg& a) {
    reg r{};
    for (std::size_t i = 0; i < width; ++i) r.v[i] = a.v[i ^ 1];
    return r;
  }

  // Reductions in Like's order: width 4 (NEON addv/maxv) pairwise, (a0∘a1)∘(a2∘a3); otherwise
  // halving: fold the upper half onto the lower one until one lane is left.
  static constexpr float hsum(reg a) {
    if constexpr (width == 4) return (a.v[0] + a.v[1]) + (a.v[2] + a.v[3]);
    for (std::size_t h = width / 2; h >= 1; h /= 2)
      for (std::size_t i = 0; i < h; ++i) a.v[i] = a.v[i] + a.v[i + h];
    return a.v[0];
  }
  static constexpr float hmax(reg a) {
    auto mx = [](float x, float y) { return x > y ? x : y; };
    if constexpr (width == 4) return mx(mx(a.v[0], a.v[1]), mx(a.v[2], a.v[3]));
    for (std::size_t h = width / 2; h >= 1; h /= 2)
      for (std::size_t i = 0; i < h; ++i) a.v[i] = mx(a.v[i], a.v[i + h]);
    return a.v[0];
  }
};

// The backend a kernel written for V runs with during constant evaluation: V itself when it is
// already constexpr (scalar), else its emulated twin.
template <class V>
using twin = std::conditional_t<(V::width > 1), emulated<V>, V>;

}  // namespace sf::simd
