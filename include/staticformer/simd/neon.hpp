// staticformer/simd/neon.hpp — the NEON backend (AArch64): 4 floats per register.
//
// Declares sf::simd::neon and defines SF_SIMD_HAVE_NEON only when compiling for AArch64 with
// NEON (always the case there); otherwise this header declares nothing.
// The operations are those listed in staticformer/simd.hpp, which includes this header and
// picks sf::simd::native<float>.
#pragma once
#include <cstddef>
#include <cstdint>

#include "staticformer/simd/common.hpp"

#if (defined(__ARM_NEON) || defined(__ARM_NEON__)) && defined(__aarch64__)
#include <arm_neon.h>
#define SF_SIMD_HAVE_NEON 1

namespace sf::simd {

struct neon {
  using value_type = float;
  using reg = float32x4_t;
  using mask = uint32x4_t;
  static constexpr std::size_t width = 4;
  static constexpr std::size_t registers = 32;
  static constexpr const char* name = "neon";
  static constexpr const char* instructions = "NEON FMA (4 floats)";  // (staticformer/cpu_report.hpp)
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
  static reg swap_pairs(reg a) { return vrev64q_f32(a); }  // (a1, a0, a3, a2)
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

}  // namespace sf::simd

#endif
