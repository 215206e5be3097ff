// staticformer/simd/avx2.hpp — the AVX2 + FMA backend: 8 floats per register.
//
// Declares sf::simd::avx2 and defines SF_SIMD_HAVE_AVX2 only when the target has both AVX2
// and FMA (e.g. -mavx2 -mfma, or -march=native on such a CPU); otherwise it declares nothing.
// The operations are those listed in staticformer/simd.hpp, which includes this header and
// picks sf::simd::native<float>.
#pragma once
#include <cstddef>
#include <cstdint>

#include "staticformer/simd/common.hpp"
#include "staticformer/simd/x86.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define SF_SIMD_HAVE_AVX2 1

namespace sf::simd {

struct avx2 {
  using value_type = float;
  using reg = __m256;
  using mask = __m256;
  static constexpr std::size_t width = 8;
  static constexpr std::size_t registers = 16;
  static constexpr const char* name = "avx2";
  static constexpr const char* instructions = "AVX2 FMA (ymm, 8 floats)";  // (staticformer/cpu_report.hpp)
  static constexpr bool fused = true;  // fmadd/fnmadd round once
  static __m256i lanes(std::size_t n) {
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), idx);
  }
  static reg zero() { return _mm256_setzero_ps(); }
  static reg set1(float x) { return _mm256_set1_ps(x); }
  static reg load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, reg v) { _mm256_storeu_ps(p, v); }
  static reg load_partial(const float* p, std::size_t n) { return _mm256_maskload_ps(p, lanes(n)); }
  static void store_partial(float* p, reg v, std::size_t n) { _mm256_maskstore_ps(p, lanes(n), v); }
  static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
  static reg sub(reg a, reg b) { return _mm256_sub_ps(a, b); }
  static reg mul(reg a, reg b) { return _mm256_mul_ps(a, b); }
  static reg div(reg a, reg b) { return _mm256_div_ps(a, b); }
  static reg fmadd(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static reg fnmadd(reg a, reg b, reg c) { return _mm256_fnmadd_ps(a, b, c); }
  static reg max(reg a, reg b) { return _mm256_max_ps(a, b); }
  static reg min(reg a, reg b) { return _mm256_min_ps(a, b); }
  static reg abs(reg a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static reg neg(reg a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
  static reg sqrt(reg a) { return _mm256_sqrt_ps(a); }
  static reg round(reg a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static reg scale2(reg x, reg n) {
    // x * 2^h * 2^(n-h) with h = n/2: both factors are normal floats for |n| <= 252
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i h = _mm256_srai_epi32(ni, 1);
    const __m256i bias = _mm256_set1_epi32(127);
    const reg f1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h, bias), 23));
    const reg f2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ni, h), bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(x, f1), f2);
  }
  static reg copysign(reg mag, reg sgn) {
    const reg s = _mm256_set1_ps(-0.0f);
    return _mm256_or_ps(_mm256_andnot_ps(s, mag), _mm256_and_ps(s, sgn));
  }
  static mask lt(reg a, reg b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static reg select(mask m, reg a, reg b) { return _mm256_blendv_ps(b, a, m); }
  static reg swap_pairs(reg a) { return _mm256_permute_ps(a, 0xb1); }  // (a1, a0, a3, a2, …)
  static float hsum(reg a) { return detail::fold8(a, detail::x86_add{}); }
  static float hmax(reg a) { return detail::fold8(a, detail::x86_max{}); }
  // 8x8 transpose: unpack, shuffle, then swap 128-bit halves.
  SF_SIMD_INLINE static void transpose(reg (&r)[8]) {
    reg t[8], u[8];
    detail::repeat<4>([&](auto i) SF_SIMD_INLINE {
      t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    });
    detail::repeat<2>([&](auto i) SF_SIMD_INLINE {
      u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
      u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xee);
      u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
      u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xee);
    });
    detail::repeat<4>([&](auto j) SF_SIMD_INLINE {  // swap 128-bit halves
      r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
      r[4 + j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
    });
  }
};

}  // namespace sf::simd

#endif
