// staticformer/simd.hpp — one small SIMD abstraction.
//
// A backend is a struct of static functions over one register type:
//
//   using V = sf::simd::native<float>;         // best backend this translation unit was compiled for
//   V::reg acc = V::zero();
//   acc = V::fmadd(V::load(a), V::set1(s), acc);   // acc += a * s, V::width lanes at once
//
// Backends: scalar<T> (always compiles, the constant-evaluation path, any T),
// avx512 (16 floats), avx2 (8 floats, needs FMA) and neon (4 floats, AArch64).
// Kernels are templates over the backend, so one binary can test every backend the
// CPU has against the naive reference.
//
// Every backend provides the same operations (lane-wise unless said otherwise):
//
//   memory      zero set1 load store load_partial(p, n) store_partial(p, v, n)   (first n lanes; 0 < n <= width)
//   arithmetic  add sub mul div fmadd(a,b,c)=a*b+c fnmadd(a,b,c)=c-a*b min max abs neg sqrt
//               (`fused`: fmadd/fnmadd round once; true except scalar<T> on targets without FMA)
//               min(a, b) / max(a, b) return b when either is NaN (x86 semantics), so put the
//               value that should propagate NaN second.
//   rounding    round(x): to nearest, ties to even.   scale2(x, n): x * 2^n for integral n, |n| <= 252
//               (two exact factors 2^(n/2); AVX-512 uses scalef and takes any n)
//   bits        copysign(mag, sgn)
//   masks       mask lt(a, b) (a < b)   select(m, a, b) (m ? a : b)
//   reductions  hsum hmax
//   shuffles    transpose(reg (&r)[width]): r is a width x width block (r[i] = row i); becomes its transpose
//
// The fast vectorised exp/tanh/erf built on these are in staticformer/kernels/vmath.hpp.
#pragma once
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "staticformer/math.hpp"

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif
#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#include <arm_neon.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SF_SIMD_INLINE __attribute__((always_inline))
#else
#define SF_SIMD_INLINE
#endif

namespace sf::simd {

namespace detail {
// f(integral_constant<0>), ..., f(integral_constant<N-1>): unrolled at compile time, so that
// arrays of registers indexed by the constant stay in registers.
template <class F, std::size_t... I>
SF_SIMD_INLINE constexpr void repeat_seq(F& f, std::index_sequence<I...>) {
  (f(std::integral_constant<std::size_t, I>{}), ...);
}
template <std::size_t N, class F>
SF_SIMD_INLINE constexpr void repeat(F&& f) {
  repeat_seq(f, std::make_index_sequence<N>{});
}
}  // namespace detail

// ---------------------------------------------------------------- scalar fallback
template <class T>
struct scalar {
  using value_type = T;
  using reg = T;
  using mask = bool;
  static constexpr std::size_t width = 1;
  static constexpr std::size_t registers = 16;  // a guess that keeps register tiles modest
  static constexpr const char* name = "scalar";
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
  static constexpr reg fmadd(reg a, reg b, reg c) {
    if constexpr (fused && (std::is_same_v<T, float> || std::is_same_v<T, double>))
      if (!std::is_constant_evaluated()) return std::fma(a, b, c);
    return a * b + c;
  }
  static constexpr reg fnmadd(reg a, reg b, reg c) {
    if constexpr (fused && (std::is_same_v<T, float> || std::is_same_v<T, double>))
      if (!std::is_constant_evaluated()) return std::fma(-a, b, c);
    return c - a * b;
  }
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

// ---------------------------------------------------------------- AVX-512
#if defined(__AVX512F__)
#define SF_SIMD_HAVE_AVX512 1
struct avx512 {
  using value_type = float;
  using reg = __m512;
  using mask = __mmask16;
  static constexpr std::size_t width = 16;
  static constexpr std::size_t registers = 32;
  static constexpr const char* name = "avx512";
  static constexpr bool fused = true;  // fmadd/fnmadd round once
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
  template <int Half> static __m256 half(reg a) {  // (g++ 12's _mm512_castps512_ps256 warns the same way)
    return _mm256_castpd_ps(_mm512_mask_extractf64x4_pd(_mm256_setzero_pd(), 0xf, _mm512_castps_pd(a), Half));
  }
  static float hsum(reg a) {
    __m256 h = _mm256_add_ps(half<0>(a), half<1>(a));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float hmax(reg a) {
    __m256 h = _mm256_max_ps(half<0>(a), half<1>(a));
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
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
#endif

// ---------------------------------------------------------------- AVX2 + FMA
#if defined(__AVX2__) && defined(__FMA__)
#define SF_SIMD_HAVE_AVX2 1
struct avx2 {
  using value_type = float;
  using reg = __m256;
  using mask = __m256;
  static constexpr std::size_t width = 8;
  static constexpr std::size_t registers = 16;
  static constexpr const char* name = "avx2";
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
  static float hsum(reg a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float hmax(reg a) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
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
#endif

// ---------------------------------------------------------------- NEON (AArch64)
#if (defined(__ARM_NEON) || defined(__ARM_NEON__)) && defined(__aarch64__)
#define SF_SIMD_HAVE_NEON 1
struct neon {
  using value_type = float;
  using reg = float32x4_t;
  using mask = uint32x4_t;
  static constexpr std::size_t width = 4;
  static constexpr std::size_t registers = 32;
  static constexpr const char* name = "neon";
  static constexpr bool fused = true;  // fmadd/fnmadd round once
  static reg zero() { return vdupq_n_f32(0.0f); }
  static reg set1(float x) { return vdupq_n_f32(x); }
  static reg load(const float* p) { return vld1q_f32(p); }
  static void store(float* p, reg v) { vst1q_f32(p, v); }
  static reg load_partial(const float* p, std::size_t n) {
    float t[4] = {0, 0, 0, 0};
    for (std::size_t i = 0; i < n; ++i) t[i] = p[i];
    return vld1q_f32(t);
  }
  static void store_partial(float* p, reg v, std::size_t n) {
    float t[4];
    vst1q_f32(t, v);
    for (std::size_t i = 0; i < n; ++i) p[i] = t[i];
  }
  static reg add(reg a, reg b) { return vaddq_f32(a, b); }
  static reg sub(reg a, reg b) { return vsubq_f32(a, b); }
  static reg mul(reg a, reg b) { return vmulq_f32(a, b); }
  static reg div(reg a, reg b) { return vdivq_f32(a, b); }
  static reg fmadd(reg a, reg b, reg c) { return vfmaq_f32(c, a, b); }
  static reg fnmadd(reg a, reg b, reg c) { return vfmsq_f32(c, a, b); }
  // x86 semantics (b when either is NaN), so kernels behave the same on every backend
  static reg max(reg a, reg b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
  static reg min(reg a, reg b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
  static reg abs(reg a) { return vabsq_f32(a); }
  static reg neg(reg a) { return vnegq_f32(a); }
  static reg sqrt(reg a) { return vsqrtq_f32(a); }
  static reg round(reg a) { return vrndnq_f32(a); }
  static reg scale2(reg x, reg n) {
    const int32x4_t ni = vcvtnq_s32_f32(n);
    const int32x4_t h = vshrq_n_s32(ni, 1);
    const int32x4_t bias = vdupq_n_s32(127);
    const reg f1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(h, bias), 23));
    const reg f2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vsubq_s32(ni, h), bias), 23));
    return vmulq_f32(vmulq_f32(x, f1), f2);
  }
  static reg copysign(reg mag, reg sgn) { return vbslq_f32(vdupq_n_u32(0x80000000u), sgn, mag); }
  static mask lt(reg a, reg b) { return vcltq_f32(a, b); }
  static reg select(mask m, reg a, reg b) { return vbslq_f32(m, a, b); }
  static float hsum(reg a) { return vaddvq_f32(a); }
  static float hmax(reg a) { return vmaxvq_f32(a); }
  SF_SIMD_INLINE static void transpose(reg (&r)[4]) {
    const reg t0 = vtrn1q_f32(r[0], r[1]), t1 = vtrn2q_f32(r[0], r[1]);
    const reg t2 = vtrn1q_f32(r[2], r[3]), t3 = vtrn2q_f32(r[2], r[3]);
    auto d = [](reg x) { return vreinterpretq_f64_f32(x); };
    r[0] = vreinterpretq_f32_f64(vtrn1q_f64(d(t0), d(t2)));
    r[1] = vreinterpretq_f32_f64(vtrn1q_f64(d(t1), d(t3)));
    r[2] = vreinterpretq_f32_f64(vtrn2q_f64(d(t0), d(t2)));
    r[3] = vreinterpretq_f32_f64(vtrn2q_f64(d(t1), d(t3)));
  }
};
#endif

// ---------------------------------------------------------------- selection
namespace detail {
template <class T> struct native_impl { using type = scalar<T>; };
#if defined(SF_SIMD_HAVE_AVX512) && !defined(SF_SIMD_FORCE_SCALAR)
template <> struct native_impl<float> { using type = avx512; };
#elif defined(SF_SIMD_HAVE_AVX2) && !defined(SF_SIMD_FORCE_SCALAR)
template <> struct native_impl<float> { using type = avx2; };
#elif defined(SF_SIMD_HAVE_NEON) && !defined(SF_SIMD_FORCE_SCALAR)
template <> struct native_impl<float> { using type = neon; };
#endif
}  // namespace detail

// The widest backend available for T (scalar for double and on plain targets).
template <class T> using native = typename detail::native_impl<T>::type;

}  // namespace sf::simd
