// staticformer/kernels/q8/neon.hpp — the AArch64 NEON q8 backends (kernels/q8.hpp has the API).
//
//   q8::neon_dot  (SF_Q8_HAVE_NEON_DOT: the dot-product extension, __ARM_FEATURE_DOTPROD, e.g.
//                  -march=armv8.2-a+dotprod; or, with g++, SF_Q8_ENABLE_DOTPROD defined before
//                  including this header, which compiles these kernels alone for
//                  armv8.2-a+dotprod — only for CPUs known to have it)
//     per step s of a group: the 4 activation bytes broadcast to 4 lanes; each 64-byte weight
//     line (16 columns × 4 inputs) is read as four registers of 4 columns, and
//     iacc = sdot(iacc, qw, qx) sums 4 s8 × s8 products into each int32 lane. 2 column blocks
//     (8 int32 and 8 float accumulators) per pass.
//   q8::neon      (SF_Q8_HAVE_NEON: every AArch64 target)
//     the same lines, two steps at a time: smull + smlal of the low and high 8 bytes of a
//     register (2 columns × 4 inputs each) with the broadcast activations, two products per
//     int16 lane (|q| <= 127: <= 2·127² < 2^15, exact), then sadalp into int32 pairs; per
//     group, addp gives the 4 column sums. 1 column block per pass.
//
// Both: per group  facc = fma((float) iacc, dw·dx, facc), the scalar reference's arithmetic
// (q8/common.hpp): the same bits. The activation quantizer is vectorised (eight registers per
// group), bit-identical to the scalar one.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "staticformer/kernels/q8/common.hpp"
#include "staticformer/simd/neon.hpp"

#if defined(SF_SIMD_HAVE_NEON)
#include <arm_neon.h>
#define SF_Q8_HAVE_NEON 1
#if defined(__ARM_FEATURE_DOTPROD)
#define SF_Q8_DOTPROD_TARGET
#define SF_Q8_HAVE_NEON_DOT 1
#elif defined(SF_Q8_ENABLE_DOTPROD) && defined(__GNUC__) && !defined(__clang__)
#define SF_Q8_DOTPROD_TARGET __attribute__((target("arch=armv8.2-a+dotprod")))
#define SF_Q8_HAVE_NEON_DOT 1
#endif

namespace sf::kernels::q8 {
namespace detail::arm {

using V = simd::neon;

// the int32 at p (4 bytes, any alignment) in every lane, as 16 bytes
SF_Q8_INLINE int8x16_t bcast4(const void* p) {
  std::int32_t v;
  std::memcpy(&v, p, sizeof v);
  return vreinterpretq_s8_s32(vdupq_n_s32(v));
}

// (clang's arm_neon.h defines some intrinsics as statement-expression macros, which cannot hold
// an unexpanded parameter pack: the pack expansions below call these functions instead)
SF_Q8_INLINE float32x4_t load4f(const float* p) { return vld1q_f32(p); }
SF_Q8_INLINE int8x16_t load16(const std::int8_t* p) { return vld1q_s8(p); }
SF_Q8_INLINE float32x4_t zero4f() { return vdupq_n_f32(0.0f); }
SF_Q8_INLINE int32x4_t zero4i() { return vdupq_n_s32(0); }

// y[n0 .. n0+4) (those < N) = v (+ bias)
SF_Q8_INLINE void store4(float* y, float32x4_t v, std::size_t n0, std::size_t N, const float* bias) {
  if (n0 + 4 <= N) {
    if (bias) v = vaddq_f32(v, vld1q_f32(bias + n0));
    vst1q_f32(y + n0, v);
  } else if (n0 < N) {  // the last columns: the same sum lane by lane
    float t[4];
    vst1q_f32(t, v);
    for (std::size_t i = 0; i < N - n0; ++i) y[n0 + i] = bias ? t[i] + bias[n0 + i] : t[i];
  }
}

// ---------------------------------------------------------------- plain NEON (smull / sadalp)
// One column block b (16 columns = 4 registers Q of 4 columns), all groups:
//   y[n] = Σ_g fma-chain of (float) isum[n, g] · (dw[n, g]·dx[g])  (+ bias[n])   16b <= n < 16b+16, n < N
//   y: (N)   x: the quantized activation   w: the packed matrix   bias: (N) or nullptr
// Naive reference: detail::matvec_scalar restricted to these columns.
template <std::size_t... Q>
SF_Q8_INLINE void block_body(std::index_sequence<Q...>, float* y, const vec_ref& x, const mat_ref& w, std::size_t b,
                             const float* bias) {
  const std::size_t G = w.groups;
  const std::int8_t* const tq = w.q + b * G * tile_bytes;
  const float* const td = w.d + b * G * block_cols;
  float32x4_t facc[4] = {((void)Q, zero4f())...};
  for (std::size_t g = 0; g < G; ++g) {
    // lo[Q]: int32 lanes (c0: inputs 0+1, c0: 2+3, c1: 0+1, c1: 2+3) of columns 4Q, 4Q+1; hi[Q]: 4Q+2, 4Q+3
    int32x4_t lo[4] = {((void)Q, zero4i())...}, hi[4] = {((void)Q, zero4i())...};
    const std::int8_t* t = tq + g * tile_bytes;
    const std::int8_t* xg = x.q + g * group_size;
    simd::detail::repeat<group_steps / 2>([&](auto p) SF_Q8_LAMBDA_INLINE {  // steps 2p, 2p+1
      const int8x16_t x0 = bcast4(xg + 2 * p * step_inputs), x1 = bcast4(xg + (2 * p + 1) * step_inputs);
      auto one = [&](std::size_t q, int32x4_t& l, int32x4_t& h) SF_Q8_LAMBDA_INLINE {
        const int8x16_t w0 = vld1q_s8(t + 2 * p * step_bytes + q * 16),
                        w1 = vld1q_s8(t + (2 * p + 1) * step_bytes + q * 16);
        int16x8_t pl = vmull_s8(vget_low_s8(w0), vget_low_s8(x0));
        pl = vmlal_s8(pl, vget_low_s8(w1), vget_low_s8(x1));
        int16x8_t ph = vmull_high_s8(w0, x0);
        ph = vmlal_high_s8(ph, w1, x1);
        l = vpadalq_s16(l, pl);
        h = vpadalq_s16(h, ph);
      };
      (one(Q, lo[Q], hi[Q]), ...);
    });
    const float32x4_t dx = vdupq_n_f32(x.d[g]);
    ((facc[Q] = vfmaq_f32(facc[Q], vcvtq_f32_s32(vpaddq_s32(lo[Q], hi[Q])),
                          vmulq_f32(load4f(td + g * block_cols + Q * 4), dx))),
     ...);
  }
  const std::size_t N = w.N;  // (a local: stores to y would force reloads of w.N)
  (store4(y, facc[Q], b * block_cols + Q * 4, N, bias), ...);
}
SF_Q8_NOINLINE inline void block(float* y, const vec_ref& x, const mat_ref& w, std::size_t b, const float* bias) {
  block_body(std::make_index_sequence<4>{}, y, x, w, b, bias);
}
SF_Q8_NOINLINE inline void matvec(float* y, const vec_ref& x, const mat_ref& w, const float* bias) {
  const std::size_t NB = blocks_of(w.N);
  for (std::size_t b = 0; b < NB; ++b) block(y, x, w, b, bias);
}

// ---------------------------------------------------------------- dot product (sdot)
#if defined(SF_Q8_HAVE_NEON_DOT)
// (No lambdas here: a lambda would not inherit SF_Q8_DOTPROD_TARGET, and vdotq_s32 cannot be
// inlined into it. The loops over registers are pack expansions over I = 4·block + quarter.)
template <std::size_t... I>
SF_Q8_DOTPROD_TARGET SF_Q8_INLINE void dot_step(int32x4_t (&acc)[sizeof...(I)], const std::int8_t* t,
                                                std::size_t bstride, int8x16_t xb, std::index_sequence<I...>) {
  ((acc[I] = vdotq_s32(acc[I], load16(t + (I / 4) * bstride + (I % 4) * 16), xb)), ...);
}
// One pass over CB column blocks b0 .. b0+CB-1 (register I: columns 4I .. 4I+3 of the pass).
template <std::size_t CB, std::size_t... I>
SF_Q8_DOTPROD_TARGET SF_Q8_INLINE void dot_pass_body(std::index_sequence<I...> seq, float* y, const vec_ref& x,
                                                     const mat_ref& w, std::size_t b0, const float* bias) {
  const std::size_t G = w.groups, bstride = G * tile_bytes, dstride = G * block_cols;
  const std::int8_t* const tq = w.q + b0 * bstride;
  const float* const td = w.d + b0 * dstride;
  float32x4_t facc[4 * CB] = {((void)I, zero4f())...};
  for (std::size_t g = 0; g < G; ++g) {
    int32x4_t iacc[4 * CB] = {((void)I, zero4i())...};
    const std::int8_t* t = tq + g * tile_bytes;
    const std::int8_t* xg = x.q + g * group_size;
    for (std::size_t s = 0; s < group_steps; ++s)
      dot_step(iacc, t + s * step_bytes, bstride, bcast4(xg + s * step_inputs), seq);
    const float32x4_t dx = vdupq_n_f32(x.d[g]);
    ((facc[I] = vfmaq_f32(facc[I], vcvtq_f32_s32(iacc[I]),
                          vmulq_f32(load4f(td + (I / 4) * dstride + g * block_cols + (I % 4) * 4), dx))),
     ...);
  }
  const std::size_t N = w.N;  // (a local: stores to y would force reloads of w.N)
  (store4(y, facc[I], b0 * block_cols + I * 4, N, bias), ...);
}
template <std::size_t CB>
SF_Q8_DOTPROD_TARGET SF_Q8_NOINLINE void dot_pass(float* y, const vec_ref& x, const mat_ref& w, std::size_t b0,
                                                  const float* bias) {
  dot_pass_body<CB>(std::make_index_sequence<4 * CB>{}, y, x, w, b0, bias);
}
SF_Q8_NOINLINE inline void matvec_dot(float* y, const vec_ref& x, const mat_ref& w, const float* bias) {
  const std::size_t NB = blocks_of(w.N);
  std::size_t b = 0;
  for (; b + 2 <= NB; b += 2) dot_pass<2>(y, x, w, b, bias);
  if (b < NB) dot_pass<1>(y, x, w, b, bias);
}
#endif

// The activation quantizer, one group (eight registers) at a time; bit-identical to
// detail::quantize_scalar (see q8/avx512.hpp for why; simd::neon's max has the x86 NaN rule).
//   q, u: (32·G) written   d: (G) written   x: (K)
SF_Q8_NOINLINE inline void quantize(std::int8_t* q, std::uint8_t* u, float* d, const float* x, std::size_t K) {
  const std::size_t G = groups_of(K);
  const float32x4_t lo = V::set1(-127.0f), hi = V::set1(127.0f), half = V::set1(0.5f);
  for (std::size_t g = 0; g < G; ++g) {
    const std::size_t n = min_(group_size, K - g * group_size);
    const float* xg = x + g * group_size;
    float32x4_t v[8];
    float32x4_t m = V::zero();
    for (std::size_t h = 0; h < 8; ++h) {
      const std::size_t lanes = n > 4 * h ? min_(4, n - 4 * h) : 0;
      v[h] = lanes == 4 ? V::load(xg + 4 * h) : lanes ? V::load_partial(xg + 4 * h, lanes) : V::zero();
      m = V::max(V::abs(v[h]), m);  // NaN |x|: m
    }
    const float amax = V::hmax(m);
    d[g] = amax / 127.0f;
    const float32x4_t id = V::set1(amax > 0.0f ? 127.0f / amax : 0.0f);
    int16x4_t i16[8];
    for (std::size_t h = 0; h < 8; ++h) {
      float32x4_t t = V::mul(v[h], id);
      t = vbslq_f32(vceqq_f32(t, t), t, V::zero());  // NaN → 0
      t = V::min(V::max(t, lo), hi);
      t = V::add(t, V::copysign(half, t));
      i16[h] = vmovn_s32(vcvtq_s32_f32(t));  // truncation toward zero
    }
    for (std::size_t h = 0; h < 2; ++h) {
      const int8x16_t b = vcombine_s8(vmovn_s16(vcombine_s16(i16[4 * h], i16[4 * h + 1])),
                                      vmovn_s16(vcombine_s16(i16[4 * h + 2], i16[4 * h + 3])));
      vst1q_s8(q + g * group_size + h * 16, b);
      vst1q_u8(u + g * group_size + h * 16, veorq_u8(vreinterpretq_u8_s8(b), vdupq_n_u8(0x80)));
    }
  }
}

}  // namespace detail::arm

// y: (N) written   x, w: views of a vector<K> and a matrix<K, N>   bias: (N) or nullptr
// q, u: (32·G) written   d: (G) written   x: (K)
#if defined(SF_Q8_HAVE_NEON_DOT)
struct neon_dot {
  static constexpr const char* name = "neon_dot";
  static constexpr const char* instructions = "NEON sdot";  // (staticformer/cpu_report.hpp)
  static void matvec(float* y, const detail::vec_ref& x, const detail::mat_ref& w, const float* bias) {
    detail::arm::matvec_dot(y, x, w, bias);
  }
  static void quantize(std::int8_t* q, std::uint8_t* u, float* d, const float* x, std::size_t K) {
    detail::arm::quantize(q, u, d, x, K);
  }
};
#endif
struct neon {
  static constexpr const char* name = "neon";
  static constexpr const char* instructions = "NEON smull/sadalp";  // (staticformer/cpu_report.hpp)
  static void matvec(float* y, const detail::vec_ref& x, const detail::mat_ref& w, const float* bias) {
    detail::arm::matvec(y, x, w, bias);
  }
  static void quantize(std::int8_t* q, std::uint8_t* u, float* d, const float* x, std::size_t K) {
    detail::arm::quantize(q, u, d, x, K);
  }
};

}  // namespace sf::kernels::q8

#endif
