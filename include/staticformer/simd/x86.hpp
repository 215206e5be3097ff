// staticformer/simd/x86.hpp — what the AVX2 and AVX-512 backends share.
//
// detail::fold8(h, op): lane 0 of `op` (a lane-wise add or max of two __m128) folded over
// the 8 floats of a 256-bit register, 256 -> 128 bits, then 4 -> 2 -> 1 lanes. The hsum and
// hmax of both backends end with it (AVX-512 first folds its two 256-bit halves). Declares
// nothing unless the target has AVX.
#pragma once
#include "staticformer/simd/common.hpp"

#if defined(__AVX__)
#include <immintrin.h>

namespace sf::simd::detail {

struct x86_add {
  __m128 operator()(__m128 a, __m128 b) const { return _mm_add_ps(a, b); }
};
struct x86_max {
  __m128 operator()(__m128 a, __m128 b) const { return _mm_max_ps(a, b); }
};

template <class Op>
inline float fold8(__m256 h, Op op) {
  __m128 s = op(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = op(s, _mm_movehl_ps(s, s));
  s = op(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace sf::simd::detail

#endif
