// staticformer/kernels/q8/avx512.hpp — the AVX-512 q8 backends (kernels/q8.hpp has the API).
//
//   q8::avx512_vnni  (SF_Q8_HAVE_AVX512_VNNI: AVX-512F/BW + AVX512-VNNI)
//     per step s of a group: the 4 activation bytes u = qx + 128 broadcast to 16 lanes, and for
//     each column block  iacc = vpdpbusd(iacc, u, 64 bytes of weights)  (16 columns × 4 inputs,
//     u8 × s8, summed into int32 lanes). The +128 is taken back by starting iacc at -128·Σqw,
//     precomputed per (column, group) in matrix::qsum: iacc = Σ (qx+128)·qw - 128·Σ qw = Σ qx·qw.
//   q8::avx512bw     (SF_Q8_HAVE_AVX512BW: AVX-512F/BW; Skylake-X has no VNNI)
//     the same loop with vpmaddubsw: |qx| (unsigned) × qw with qx's sign moved onto qw (masked
//     0 - qw), which cannot saturate since |q| <= 127 (two products: <= 2·127² < 2^15), then
//     vpmaddwd with ones into int32.
//
// Both: CB = 4 column blocks (64 columns) per pass, their 4 int32 and 4 float accumulators in
// registers; per group the exact int32 sums become  facc = fma((float) iacc, dw·dx, facc),
// the scalar reference's arithmetic (common.hpp), so the result is the same bits. The last
// 1 - 3 blocks go through passes of 3, 2 or 1 block, the last partial block is stored masked.
// The activation quantizer is vectorised too (one group = two registers), bit-identical to the
// scalar one. avx512_vnni also has matvec_rows: up to 4 rows (a prefill's positions) per pass over
// the weights, 4 rows × 2 column blocks of accumulators, the same bits as matvec row by row. Declares nothing unless the target has AVX-512F and AVX-512BW.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "staticformer/kernels/q8/common.hpp"
#include "staticformer/simd/avx512.hpp"

#if defined(SF_SIMD_HAVE_AVX512) && defined(__AVX512BW__)
#include <immintrin.h>
#define SF_Q8_HAVE_AVX512BW 1
#if defined(__AVX512VNNI__)
#define SF_Q8_HAVE_AVX512_VNNI 1
#endif

namespace sf::kernels::q8 {
namespace detail::x512 {

using V = simd::avx512;
// (g++ 12's unmasked forms of some intrinsics read an undefined register and warn under -Wall;
// the all-lanes masked forms are the same instructions, as in simd/avx512.hpp)
inline constexpr __mmask16 all = 0xffff;

// the int32 at p (4 bytes, any alignment) in every lane
SF_Q8_INLINE __m512i bcast4(const void* p) {
  std::int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm512_set1_epi32(v);
}

// One pass over CB column blocks b0 .. b0+CB-1, all groups:
//   y[n] = Σ_g fma-chain of (float) isum[n, g] · (dw[n, g]·dx[g])  (+ bias[n])   n in those blocks, n < N
//   y: (N)   x: the quantized activation   w: the packed matrix   bias: (N) or nullptr
// Naive reference: detail::matvec_scalar restricted to these columns.
template <bool Vnni, std::size_t CB, std::size_t... C>
SF_Q8_INLINE void pass_body(std::index_sequence<C...>, float* y, const vec_ref& x, const mat_ref& w, std::size_t b0,
                            const float* bias) {
  const std::size_t G = w.groups, N = w.N;                  // (N copied: stores to y would force reloads of w.N)
  const std::int8_t* const tq = w.q + b0 * G * tile_bytes;  // block b0 + c: tq + c·G·512
  const float* const td = w.d + b0 * G * block_cols;        // block b0 + c: td + c·G·16
  const std::int16_t* const ts = w.qsum + b0 * G * block_cols;
  const std::size_t bstride = G * tile_bytes, dstride = G * block_cols;
  __m512 facc[CB] = {((void)C, _mm512_setzero_ps())...};
  const __m512i m128 = _mm512_set1_epi32(0x0000ff80);  // int16 pairs (-128, 0): madd gives -128·Σq
  const __m512i ones = _mm512_set1_epi16(1);
  for (std::size_t g = 0; g < G; ++g) {
    __m512i iacc[CB];
    if constexpr (Vnni) {  // iacc = -128·Σq (Σq sign-extended to the low half of each int32, 0 or -1 above)
      ((iacc[C] = _mm512_madd_epi16(
            _mm512_maskz_cvtepi16_epi32(
                all, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ts + C * dstride + g * block_cols))),
            m128)),
       ...);
    } else {
      ((iacc[C] = _mm512_setzero_si512()), ...);
    }
    const std::size_t goff = g * tile_bytes;
    simd::detail::repeat<group_steps>([&](auto s) SF_Q8_LAMBDA_INLINE {
      const std::size_t off = goff + s * step_bytes;
      if constexpr (Vnni) {
        const __m512i xu = bcast4(x.u + g * group_size + s * step_inputs);  // qx + 128, 4 bytes per lane
        ((iacc[C] = _mm512_dpbusd_epi32(iacc[C], xu, _mm512_loadu_si512(tq + C * bstride + off))), ...);
      } else {
        const __m512i xs = bcast4(x.q + g * group_size + s * step_inputs);
        const __m512i ax = _mm512_abs_epi8(xs);
        const __mmask64 neg = _mm512_movepi8_mask(xs);  // qx < 0: negate the weight
        auto dot = [&](const std::int8_t* p) SF_Q8_LAMBDA_INLINE {
          const __m512i wv = _mm512_loadu_si512(p);
          const __m512i sw = _mm512_mask_sub_epi8(wv, neg, _mm512_setzero_si512(), wv);
          return _mm512_madd_epi16(_mm512_maddubs_epi16(ax, sw), ones);
        };
        ((iacc[C] = _mm512_add_epi32(iacc[C], dot(tq + C * bstride + off))), ...);
      }
    });
    const __m512 dx = _mm512_set1_ps(x.d[g]);
    ((facc[C] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(all, iacc[C]),
                                _mm512_mul_ps(_mm512_loadu_ps(td + C * dstride + g * block_cols), dx), facc[C])),
     ...);
  }
  auto store = [&](std::size_t c, __m512 v) SF_Q8_LAMBDA_INLINE {
    const std::size_t n0 = (b0 + c) * block_cols;
    if (n0 + block_cols <= N) {
      if (bias) v = _mm512_add_ps(v, _mm512_loadu_ps(bias + n0));
      _mm512_storeu_ps(y + n0, v);
    } else {
      const __mmask16 m = static_cast<__mmask16>((1u << (N - n0)) - 1u);
      if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias + n0));
      _mm512_mask_storeu_ps(y + n0, m, v);
    }
  };
  (store(C, facc[C]), ...);
}
template <bool Vnni, std::size_t CB>
SF_Q8_NOINLINE void pass(float* y, const vec_ref& x, const mat_ref& w, std::size_t b0, const float* bias) {
  pass_body<Vnni, CB>(std::make_index_sequence<CB>{}, y, x, w, b0, bias);
}

// y (N) = x·W (+ bias): passes of CB blocks, then one of the remaining 1 - 3. CB = 4 for a matrix
// in cache (more chains in flight); CB = 1 for weights read from memory (matvec_stream): a pass then
// reads 3 streams (q, d, qsum) instead of 12, which the prefetchers follow better (the stories15M
// int8 decode on a Zen 4: +14%, 7 interleaved runs; in L2 CB = 1 is 13% slower).
template <bool Vnni, std::size_t CB = 4>
SF_Q8_NOINLINE void matvec(float* y, const vec_ref& x, const mat_ref& w, const float* bias) {
  const std::size_t NB = blocks_of(w.N);
  std::size_t b = 0;
  for (; b + CB <= NB; b += CB) pass<Vnni, CB>(y, x, w, b, bias);
  switch (NB - b) {
    case 3:
      pass<Vnni, 3>(y, x, w, b, bias);
      break;
    case 2:
      pass<Vnni, 2>(y, x, w, b, bias);
      break;
    case 1:
      pass<Vnni, 1>(y, x, w, b, bias);
      break;
    default:
      break;
  }
}

// The same for R rows at once (R ≤ 4 quantized activations, e.g. a prefill's positions): each
// weight vector loaded once for all R rows. Every (row, column) is computed exactly as by pass_body
// (same initial -128·Σq, same int32 sums, same fma chain over the groups), so the result is the
// same bits as R calls of matvec. VNNI only.
//   y: (R, N) row stride ldy   x: R quantized activations   w, b0, bias: as for pass_body
template <std::size_t R, std::size_t CB, std::size_t... I, std::size_t... C, std::size_t... Rs>
SF_Q8_INLINE void rows_body(std::index_sequence<I...>, std::index_sequence<C...>, std::index_sequence<Rs...>, float* y,
                            std::size_t ldy, const vec_ref* x, const mat_ref& w, std::size_t b0, const float* bias) {
  const std::size_t G = w.groups, N = w.N;
  const std::int8_t* const tq = w.q + b0 * G * tile_bytes;
  const float* const td = w.d + b0 * G * block_cols;
  const std::int16_t* const ts = w.qsum + b0 * G * block_cols;
  const std::size_t bstride = G * tile_bytes, dstride = G * block_cols;
  const std::uint8_t* const xu[R] = {x[Rs].u...};
  const float* const xd[R] = {x[Rs].d...};
  __m512 facc[R * CB] = {((void)I, _mm512_setzero_ps())...};  // facc[r·CB + c]
  const __m512i m128 = _mm512_set1_epi32(0x0000ff80);
  for (std::size_t g = 0; g < G; ++g) {
    const __m512i init[CB] = {_mm512_madd_epi16(
        _mm512_maskz_cvtepi16_epi32(
            all, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ts + C * dstride + g * block_cols))),
        m128)...};
    __m512i iacc[R * CB] = {init[I % CB]...};
    const std::size_t goff = g * tile_bytes;
    simd::detail::repeat<group_steps>([&](auto s) SF_Q8_LAMBDA_INLINE {
      const std::size_t off = goff + s * step_bytes;
      const __m512i wv[CB] = {_mm512_loadu_si512(tq + C * bstride + off)...};
      const __m512i xb[R] = {bcast4(xu[Rs] + g * group_size + s * step_inputs)...};
      ((iacc[I] = _mm512_dpbusd_epi32(iacc[I], xb[I / CB], wv[I % CB])), ...);
    });
    const __m512 dw[CB] = {_mm512_loadu_ps(td + C * dstride + g * block_cols)...};
    ((facc[I] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(all, iacc[I]),
                                _mm512_mul_ps(dw[I % CB], _mm512_set1_ps(xd[I / CB][g])), facc[I])),
     ...);
  }
  auto store = [&](std::size_t r, std::size_t c, __m512 v) SF_Q8_LAMBDA_INLINE {
    const std::size_t n0 = (b0 + c) * block_cols;
    if (n0 + block_cols <= N) {
      if (bias) v = _mm512_add_ps(v, _mm512_loadu_ps(bias + n0));
      _mm512_storeu_ps(y + r * ldy + n0, v);
    } else {
      const __mmask16 m = static_cast<__mmask16>((1u << (N - n0)) - 1u);
      if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias + n0));
      _mm512_mask_storeu_ps(y + r * ldy + n0, m, v);
    }
  };
  (store(I / CB, I % CB, facc[I]), ...);
}
template <std::size_t R, std::size_t CB>
SF_Q8_NOINLINE void rows_pass(float* y, std::size_t ldy, const vec_ref* x, const mat_ref& w, std::size_t b0,
                              const float* bias) {
  rows_body<R, CB>(std::make_index_sequence<R * CB>{}, std::make_index_sequence<CB>{}, std::make_index_sequence<R>{},
                   y, ldy, x, w, b0, bias);
}
// y (R, N) = x_r·W (+ bias) for R ≤ 4 rows: passes of 2 column blocks (then 1).
template <std::size_t R>
SF_Q8_NOINLINE void matvec_rows_n(float* y, std::size_t ldy, const vec_ref* x, const mat_ref& w, const float* bias) {
  const std::size_t NB = blocks_of(w.N);
  std::size_t b = 0;
  for (; b + 2 <= NB; b += 2) rows_pass<R, 2>(y, ldy, x, w, b, bias);
  if (b < NB) rows_pass<R, 1>(y, ldy, x, w, b, bias);
}

// The activation quantizer, one group (two registers) at a time; bit-identical to
// detail::quantize_scalar: the same amax (a maximum is exact in any order; x86 max returns its
// second operand for a NaN first one, so NaN entries are ignored), the same scalar d and id, the
// same product, NaN → 0, clamp, ±0.5 (copysign differs from `t >= 0` only at t = -0, where both
// truncate to 0) and truncation.
//   q, u: (32·G) written   d: (G) written   x: (K)
SF_Q8_NOINLINE inline void quantize(std::int8_t* q, std::uint8_t* u, float* d, const float* x, std::size_t K) {
  const std::size_t G = groups_of(K);
  const __m512 lo = V::set1(-127.0f), hi = V::set1(127.0f), half = V::set1(0.5f);
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
  for (std::size_t g = 0; g < G; ++g) {
    const std::size_t n = min_(group_size, K - g * group_size);
    const float* xg = x + g * group_size;
    __m512 v[2];
    if (n == group_size) {
      v[0] = V::load(xg), v[1] = V::load(xg + 16);
    } else {
      v[0] = V::load_partial(xg, min_(n, 16));
      v[1] = n > 16 ? V::load_partial(xg + 16, n - 16) : V::zero();
    }
    const __m512 m = V::max(V::abs(v[1]), V::max(V::abs(v[0]), V::zero()));
    const float amax = V::hmax(m);
    d[g] = amax / 127.0f;
    const __m512 id = V::set1(amax > 0.0f ? 127.0f / amax : 0.0f);
    for (std::size_t h = 0; h < 2; ++h) {
      __m512 t = V::mul(v[h], id);
      t = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(t, t, _CMP_ORD_Q), t);  // NaN → 0
      t = V::min(V::max(t, lo), hi);
      t = V::add(t, V::copysign(half, t));
      const __m128i b = _mm512_mask_cvtepi32_epi8(_mm_setzero_si128(), 0xffff, _mm512_maskz_cvttps_epi32(all, t));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q + g * group_size + h * 16), b);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(u + g * group_size + h * 16), _mm_xor_si128(b, flip));
    }
  }
}

}  // namespace detail::x512

// y: (N) written   x, w: views of a vector<K> and a matrix<K, N>   bias: (N) or nullptr
// q, u: (32·G) written   d: (G) written   x: (K)
#if defined(SF_Q8_HAVE_AVX512_VNNI)
struct avx512_vnni {
  static constexpr const char* name = "avx512_vnni";
  static constexpr const char* instructions = "AVX512_VNNI vpdpbusd (zmm)";  // (staticformer/cpu_report.hpp)
  static void matvec(float* y, const detail::vec_ref& x, const detail::mat_ref& w, const float* bias) {
    detail::x512::matvec<true>(y, x, w, bias);
  }
  static void matvec_stream(float* y, const detail::vec_ref& x, const detail::mat_ref& w, const float* bias) {
    detail::x512::matvec<true, 1>(y, x, w, bias);
  }
  static void quantize(std::int8_t* q, std::uint8_t* u, float* d, const float* x, std::size_t K) {
    detail::x512::quantize(q, u, d, x, K);
  }
  // y: (R, N) row stride ldy, R = rows ≤ max_rows   x: R quantized activations   (matvec of each)
  static constexpr std::size_t max_rows = 4;
  static void matvec_rows(float* y, std::size_t ldy, const detail::vec_ref* x, std::size_t rows,
                          const detail::mat_ref& w, const float* bias) {
    switch (rows) {
      case 4: detail::x512::matvec_rows_n<4>(y, ldy, x, w, bias); break;
      case 3: detail::x512::matvec_rows_n<3>(y, ldy, x, w, bias); break;
      case 2: detail::x512::matvec_rows_n<2>(y, ldy, x, w, bias); break;
      default: detail::x512::matvec<true>(y, x[0], w, bias); break;
    }
  }
};
#endif
struct avx512bw {
  static constexpr const char* name = "avx512bw";
  static constexpr const char* instructions = "AVX-512BW vpmaddubsw (zmm)";  // (staticformer/cpu_report.hpp)
  static void matvec(float* y, const detail::vec_ref& x, const detail::mat_ref& w, const float* bias) {
    detail::x512::matvec<false>(y, x, w, bias);
  }
  static void matvec_stream(float* y, const detail::vec_ref& x, const detail::mat_ref& w, const float* bias) {
    detail::x512::matvec<false, 1>(y, x, w, bias);
  }
  static void quantize(std::int8_t* q, std::uint8_t* u, float* d, const float* x, std::size_t K) {
    detail::x512::quantize(q, u, d, x, K);
  }
};

}  // namespace sf::kernels::q8

#endif
