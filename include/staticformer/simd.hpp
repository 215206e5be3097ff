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
#pragma once
#include <cstddef>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif
#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#include <arm_neon.h>
#endif

namespace sf::simd {

// ---------------------------------------------------------------- scalar fallback
template <class T>
struct scalar {
  using value_type = T;
  using reg = T;
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
  static constexpr reg fmadd(reg a, reg b, reg c) { return a * b + c; }  // a*b + c
  static constexpr reg max(reg a, reg b) { return a > b ? a : b; }
  static constexpr T hsum(reg a) { return a; }
  static constexpr T hmax(reg a) { return a; }
};

// ---------------------------------------------------------------- AVX-512
#if defined(__AVX512F__)
#define SF_SIMD_HAVE_AVX512 1
struct avx512 {
  using value_type = float;
  using reg = __m512;
  static constexpr std::size_t width = 16;
  static constexpr std::size_t registers = 32;
  static constexpr const char* name = "avx512";
  static __mmask16 mask(std::size_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static reg zero() { return _mm512_setzero_ps(); }
  static reg set1(float x) { return _mm512_set1_ps(x); }
  static reg load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, reg v) { _mm512_storeu_ps(p, v); }
  static reg load_partial(const float* p, std::size_t n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static void store_partial(float* p, reg v, std::size_t n) { _mm512_mask_storeu_ps(p, mask(n), v); }
  static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
  static reg sub(reg a, reg b) { return _mm512_sub_ps(a, b); }
  static reg mul(reg a, reg b) { return _mm512_mul_ps(a, b); }
  static reg fmadd(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static reg max(reg a, reg b) { return _mm512_max_ps(a, b); }
  static float hsum(reg a) { return _mm512_reduce_add_ps(a); }
  static float hmax(reg a) { return _mm512_reduce_max_ps(a); }
};
#endif

// ---------------------------------------------------------------- AVX2 + FMA
#if defined(__AVX2__) && defined(__FMA__)
#define SF_SIMD_HAVE_AVX2 1
struct avx2 {
  using value_type = float;
  using reg = __m256;
  static constexpr std::size_t width = 8;
  static constexpr std::size_t registers = 16;
  static constexpr const char* name = "avx2";
  static __m256i mask(std::size_t n) {
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), idx);
  }
  static reg zero() { return _mm256_setzero_ps(); }
  static reg set1(float x) { return _mm256_set1_ps(x); }
  static reg load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, reg v) { _mm256_storeu_ps(p, v); }
  static reg load_partial(const float* p, std::size_t n) { return _mm256_maskload_ps(p, mask(n)); }
  static void store_partial(float* p, reg v, std::size_t n) { _mm256_maskstore_ps(p, mask(n), v); }
  static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
  static reg sub(reg a, reg b) { return _mm256_sub_ps(a, b); }
  static reg mul(reg a, reg b) { return _mm256_mul_ps(a, b); }
  static reg fmadd(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static reg max(reg a, reg b) { return _mm256_max_ps(a, b); }
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
};
#endif

// ---------------------------------------------------------------- NEON (AArch64)
#if (defined(__ARM_NEON) || defined(__ARM_NEON__)) && defined(__aarch64__)
#define SF_SIMD_HAVE_NEON 1
struct neon {
  using value_type = float;
  using reg = float32x4_t;
  static constexpr std::size_t width = 4;
  static constexpr std::size_t registers = 32;
  static constexpr const char* name = "neon";
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
  static reg fmadd(reg a, reg b, reg c) { return vfmaq_f32(c, a, b); }
  static reg max(reg a, reg b) { return vmaxq_f32(a, b); }
  static float hsum(reg a) { return vaddvq_f32(a); }
  static float hmax(reg a) { return vmaxvq_f32(a); }
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
