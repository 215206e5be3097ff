// staticformer/simd/avx512.hpp — the AVX-512 backend: 16 floats per register.
//
// Declares sf::simd::avx512 and defines SF_SIMD_HAVE_AVX512 only when the target has
// AVX-512F (e.g. -march=native on such a CPU); otherwise this header declares nothing.
// The operations are those listed in staticformer/simd.hpp, which includes this header and
// picks sf::simd::native<float>.
#pragma once
#include <cstddef>
#include <cstdint>

#include "staticformer/simd/common.hpp"
#include "staticformer/simd/x86.hpp"

#if defined(__AVX512F__)
#include <immintrin.h>
#define SF_SIMD_HAVE_AVX512 1

namespace sf::simd {

struct avx512 {
  using value_type = float;
  using reg = __m512;
  using mask = __mmask16;
  static constexpr std::size_t width = 16;
  static constexpr std::size_t registers = 32;
  static constexpr const char* name = "avx512";
  static constexpr const char* instructions = "AVX-512F FMA (zmm, 16 floats)";  // (staticformer/cpu_report.hpp)
  static constexpr bool fused = true;  // fmadd/fnmadd round once
  static constexpr bool exact_scale2 = true;  // scale2 is scalef: x · 2^⌊n⌋ rounded once
  static __mmask16 lanes(std::size_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static reg zero() { return _mm512_setzero_ps(); }
  static reg set1(float x) { return _mm512_set1_ps(x); }
  static reg load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, reg v) { _mm512_storeu_ps(p, v); }
  static reg load_partial(const float* p, std::size_t n) { return _mm512_maskz_loadu_ps(lanes(n), p); }
  static void store_partial(float* p, reg v, std::size_t n) { _mm512_mask_storeu_ps(p, lanes(n), v); }
  static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
  static reg sub(reg a, reg b) { return _mm512_sub_ps(a, b); }
  static reg mul(reg a, reg b) { return _mm512_mul_ps(a, b); }
  static reg div(reg a, reg b) { return _mm512_div_ps(a, b); }
  static reg fmadd(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static reg fnmadd(reg a, reg b, reg c) { return _mm512_fnmadd_ps(a, b, c); }
  // (g++ 12's unmasked max/min/sqrt/roundscale/scalef/unpack/shuffle/extract intrinsics read an
  // _mm512_undefined_ps() and warn under -Wall; the all-lanes masked forms are the same instructions)
  static constexpr __mmask16 all = 0xffff;
  static reg max(reg a, reg b) { return _mm512_mask_max_ps(a, all, a, b); }
  static reg min(reg a, reg b) { return _mm512_mask_min_ps(a, all, a, b); }
  static reg abs(reg a) { return _mm512_abs_ps(a); }
  static reg neg(reg a) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN)));
  }
  static reg sqrt(reg a) { return _mm512_mask_sqrt_ps(a, all, a); }
  static reg round(reg a) { return _mm512_mask_roundscale_ps(a, all, a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static reg scale2(reg x, reg n) { return _mm512_mask_scalef_ps(x, all, x, n); }  // x * 2^floor(n)
  static reg copysign(reg mag, reg sgn) {
    // bit = sgn's sign bit, mag's other bits: ternary logic with the select mask 0x7fffffff
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_set1_epi32(0x7fffffff), _mm512_castps_si512(mag),
                                                         _mm512_castps_si512(sgn), 0xca));
  }
  static mask lt(reg a, reg b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static reg select(mask m, reg a, reg b) { return _mm512_mask_blend_ps(m, b, a); }
  static reg swap_pairs(reg a) { return _mm512_mask_permute_ps(a, all, a, 0xb1); }  // (a1, a0, a3, a2, …)
  template <int Half> static __m256 half(reg a) {  // (g++ 12's _mm512_castps512_ps256 warns the same way)
    return _mm256_castpd_ps(_mm512_mask_extractf64x4_pd(_mm256_setzero_pd(), 0xf, _mm512_castps_pd(a), Half));
  }
  static float hsum(reg a) { return detail::fold8(_mm256_add_ps(half<0>(a), half<1>(a)), detail::x86_add{}); }
  static float hmax(reg a) { return detail::fold8(_mm256_max_ps(half<0>(a), half<1>(a)), detail::x86_max{}); }
  // 16x16 transpose in four rounds of 16 two-source shuffles.
  static reg unpacklo(reg a, reg b) { return _mm512_mask_unpacklo_ps(a, all, a, b); }
  static reg unpackhi(reg a, reg b) { return _mm512_mask_unpackhi_ps(a, all, a, b); }
  template <int Imm> static reg shuffle(reg a, reg b) { return _mm512_mask_shuffle_ps(a, all, a, b, Imm); }
  template <int Imm> static reg shuffle128(reg a, reg b) { return _mm512_mask_shuffle_f32x4(a, all, a, b, Imm); }
  SF_SIMD_INLINE static void transpose(reg (&r)[16]) {
    reg t[16], u[16];
    detail::repeat<8>([&](auto i) SF_SIMD_INLINE {  // t[2i]: lane-wise [a0 b0 a1 b1], t[2i+1]: [a2 b2 a3 b3]
      t[2 * i] = unpacklo(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = unpackhi(r[2 * i], r[2 * i + 1]);
    });
    detail::repeat<4>([&](auto i) SF_SIMD_INLINE {  // u[4i+j], 128-bit lane L: rows 4i..4i+3 of column 4L+j
      u[4 * i + 0] = shuffle<0x44>(t[4 * i], t[4 * i + 2]);
      u[4 * i + 1] = shuffle<0xee>(t[4 * i], t[4 * i + 2]);
      u[4 * i + 2] = shuffle<0x44>(t[4 * i + 1], t[4 * i + 3]);
      u[4 * i + 3] = shuffle<0xee>(t[4 * i + 1], t[4 * i + 3]);
    });
    detail::repeat<4>([&](auto j) SF_SIMD_INLINE {  // lane L of u[j], u[4+j], u[8+j], u[12+j] → row 4L+j
      const reg v1 = shuffle128<0x88>(u[j], u[4 + j]), v2 = shuffle128<0xdd>(u[j], u[4 + j]);
      const reg w1 = shuffle128<0x88>(u[8 + j], u[12 + j]), w2 = shuffle128<0xdd>(u[8 + j], u[12 + j]);
      r[0 + j] = shuffle128<0x88>(v1, w1);
      r[4 + j] = shuffle128<0x88>(v2, w2);
      r[8 + j] = shuffle128<0xdd>(v1, w1);
      r[12 + j] = shuffle128<0xdd>(v2, w2);
    });
  }
};

}  // namespace sf::simd

#endif
