// staticformer/kernels/q8/avx2.hpp — the AVX2 q8 backends (kernels/q8.hpp has the API).
//
//   q8::avx2      (SF_Q8_HAVE_AVX2: AVX2 + FMA, i.e. Haswell and later)
//     per step s of a group: the 4 activation bytes broadcast to 8 lanes; each 64-byte weight
//     line (16 columns × 4 inputs) is read as two registers (columns 0-7, 8-15), and
//       vpsignb (qx's sign onto qw) → vpmaddubsw(|qx|, ±qw) → vpmaddwd(·, 1) → vpaddd
//     which cannot saturate since |q| <= 127 (two products: <= 2·127² < 2^15).
//   q8::avx_vnni  (SF_Q8_HAVE_AVX_VNNI: AVX-VNNI, the VEX vpdpbusd of Alder Lake and Zen 4+)
//     iacc = vpdpbusd(iacc, qx + 128, qw) from iacc = -128·Σqw (matrix::qsum), as the AVX-512
//     VNNI backend (q8/avx512.hpp) does.
//
// Both: CB = 2 column blocks (32 columns, 4 registers of int32 and 4 of float accumulators)
// per pass (CB = 1 for weights from memory, matvec_stream: the matrix one stream, in address
// order; avx2's also asks for each tile prefetch_tiles ahead, below); per group
// facc = fma((float) iacc, dw·dx, facc), the scalar reference's arithmetic (q8/common.hpp): the
// same bits. The activation quantizer is vectorised too (one
// group = four registers), bit-identical to the scalar one. Declares nothing unless the target
// has AVX2 and FMA (SF_SIMD_HAVE_AVX2).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "staticformer/kernels/q8/common.hpp"
#include "staticformer/simd/avx2.hpp"

#if defined(SF_SIMD_HAVE_AVX2)
#include <immintrin.h>
#define SF_Q8_HAVE_AVX2 1
#if defined(__AVXVNNI__)
#define SF_Q8_HAVE_AVX_VNNI 1
#endif

namespace sf::kernels::q8 {
namespace detail::x256 {

using V = simd::avx2;

// the int32 at p (4 bytes, any alignment) in every lane
SF_Q8_INLINE __m256i bcast4(const void* p) {
  std::int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}
SF_Q8_INLINE __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// One pass over CB column blocks b0 .. b0+CB-1 (2·CB registers of 8 columns; register R covers
// columns 8R .. 8R+7 of the pass), all groups:
//   y[n] = Σ_g fma-chain of (float) isum[n, g] · (dw[n, g]·dx[g])  (+ bias[n])   n in those blocks, n < N
//   y: (N)   x: the quantized activation   w: the packed matrix   bias: (N) or nullptr
// Naive reference: detail::matvec_scalar restricted to these columns.
// Weights from memory with avx2 (matvec_stream): each (block, group) tile of q, and its line of
// scales, is asked for prefetch_tiles tiles (8 KiB of q) ahead of the one being summed
// (prefetcht0), within the matrix. The whole matrix is one stream in address order (CB = 1), so
// the tile prefetch_tiles further on is the one read that many tiles later. On the Zen 3 VM this
// was measured on (docs/benchmarks.md, "Zen 3: int8 weights from L3 prefetched, ..."), the int8
// products of a stories15M step (17 MB, from L3) ran 1.6-2.0 times faster with it (medians of
// alternated runs), the decoder +56%; 2, 3, 4, 6, 8 and 16 KiB ahead were tried, 8 the best. The
// float panels (kernels/gemv.hpp), which stream from memory, ran no faster with the same
// prefetches, and the VNNI backends were not measured: they have none.
inline constexpr std::size_t prefetch_tiles = 16;

template <bool Vnni, std::size_t CB, bool Prefetch, std::size_t... R>
SF_Q8_INLINE void pass_body(std::index_sequence<R...>, float* y, const vec_ref& x, const mat_ref& w, std::size_t b0,
                            const float* bias) {
  const std::size_t G = w.groups, N = w.N;  // (N copied: stores to y would force reloads of w.N)
  const std::size_t bstride = G * tile_bytes, dstride = G * block_cols;
  const std::int8_t* const tq = w.q + b0 * bstride;  // register R: tq + (R/2)·bstride + (R%2)·32
  const float* const td = w.d + b0 * dstride;        // register R: td + (R/2)·dstride + (R%2)·8
  const std::int16_t* const ts = w.qsum + b0 * dstride;
  constexpr std::size_t half = block_cols / 2;
  __m256 facc[2 * CB] = {((void)R, _mm256_setzero_ps())...};
  [[maybe_unused]] const std::size_t tiles = blocks_of(N) * G;  // the matrix's (block, group) tiles
  for (std::size_t g = 0; g < G; ++g) {
    if constexpr (Prefetch) {
      static_assert(CB == 1, "q8 avx2: the prefetches follow one stream (one column block per pass)");
      if (const std::size_t t = b0 * G + g + prefetch_tiles; t < tiles) {
        const char* p = reinterpret_cast<const char*>(w.q + t * tile_bytes);
        simd::detail::repeat<tile_bytes / 64>(
            [&](auto l) SF_Q8_LAMBDA_INLINE { _mm_prefetch(p + l * 64, _MM_HINT_T0); });
        _mm_prefetch(reinterpret_cast<const char*>(w.d + t * block_cols), _MM_HINT_T0);  // (16 floats: one line)
      }
    }
    __m256i iacc[2 * CB];
    if constexpr (Vnni) {  // iacc = -128·Σq: int16 pairs (Σq, 0 or -1) · (-128, 0)
      const __m256i m128 = _mm256_set1_epi32(0x0000ff80);
      ((iacc[R] = _mm256_madd_epi16(_mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(
                                        ts + (R / 2) * dstride + g * block_cols + (R % 2) * half))),
                                    m128)),
       ...);
    } else {
      ((iacc[R] = _mm256_setzero_si256()), ...);
    }
    const std::size_t goff = g * tile_bytes;
    simd::detail::repeat<group_steps>([&](auto s) SF_Q8_LAMBDA_INLINE {
      const std::size_t off = goff + s * step_bytes;
      if constexpr (Vnni) {
#if defined(SF_Q8_HAVE_AVX_VNNI)
        const __m256i xu = bcast4(x.u + g * group_size + s * step_inputs);  // qx + 128
        ((iacc[R] = _mm256_dpbusd_avx_epi32(iacc[R], xu, load256(tq + (R / 2) * bstride + off + (R % 2) * 32))), ...);
#endif
      } else {
        const __m256i xs = bcast4(x.q + g * group_size + s * step_inputs);
        const __m256i ax = _mm256_sign_epi8(xs, xs);  // |qx|
        const __m256i ones = _mm256_set1_epi16(1);
        auto dot = [&](const std::int8_t* p) SF_Q8_LAMBDA_INLINE {
          const __m256i sw = _mm256_sign_epi8(load256(p), xs);  // qw·sign(qx) (0 where qx = 0)
          return _mm256_madd_epi16(_mm256_maddubs_epi16(ax, sw), ones);
        };
        ((iacc[R] = _mm256_add_epi32(iacc[R], dot(tq + (R / 2) * bstride + off + (R % 2) * 32))), ...);
      }
    });
    const __m256 dx = _mm256_set1_ps(x.d[g]);
    ((facc[R] = _mm256_fmadd_ps(
          _mm256_cvtepi32_ps(iacc[R]),
          _mm256_mul_ps(_mm256_loadu_ps(td + (R / 2) * dstride + g * block_cols + (R % 2) * half), dx), facc[R])),
     ...);
  }
  auto store = [&](std::size_t r, __m256 v) SF_Q8_LAMBDA_INLINE {
    const std::size_t n0 = b0 * block_cols + r * half;
    if (n0 + half <= N) {
      if (bias) v = _mm256_add_ps(v, _mm256_loadu_ps(bias + n0));
      _mm256_storeu_ps(y + n0, v);
    } else if (n0 < N) {  // the last columns: the same sum lane by lane
      alignas(32) float t[half];
      _mm256_store_ps(t, v);
      for (std::size_t i = 0; i < N - n0; ++i) y[n0 + i] = bias ? t[i] + bias[n0 + i] : t[i];
    }
  };
  (store(R, facc[R]), ...);
}
template <bool Vnni, std::size_t CB, bool Prefetch = false>
SF_Q8_NOINLINE void pass(float* y, const vec_ref& x, const mat_ref& w, std::size_t b0, const float* bias) {
  pass_body<Vnni, CB, Prefetch>(std::make_index_sequence<2 * CB>{}, y, x, w, b0, bias);
}

// y (N) = x·W (+ bias): passes of CB blocks, then one of 1. CB = 2 for a matrix in cache; CB = 1
// for weights read from memory (matvec_stream: 3 streams per pass, not 6; see q8/avx512.hpp),
// with Prefetch (CB = 1 only) the tiles asked for ahead (prefetch_tiles).
template <bool Vnni, std::size_t CB = 2, bool Prefetch = false>
SF_Q8_NOINLINE void matvec(float* y, const vec_ref& x, const mat_ref& w, const float* bias) {
  const std::size_t NB = blocks_of(w.N);
  std::size_t b = 0;
  for (; b + CB <= NB; b += CB) pass<Vnni, CB, Prefetch>(y, x, w, b, bias);
  if (b < NB) pass<Vnni, 1, Prefetch>(y, x, w, b, bias);
}

// The activation quantizer, one group (four registers) at a time; bit-identical to
// detail::quantize_scalar (see q8/avx512.hpp for why: the same argument holds here).
//   q, u: (32·G) written   d: (G) written   x: (K)
SF_Q8_NOINLINE inline void quantize(std::int8_t* q, std::uint8_t* u, float* d, const float* x, std::size_t K) {
  const std::size_t G = groups_of(K);
  const __m256 lo = V::set1(-127.0f), hi = V::set1(127.0f), half = V::set1(0.5f);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  for (std::size_t g = 0; g < G; ++g) {
    const std::size_t n = min_(group_size, K - g * group_size);
    const float* xg = x + g * group_size;
    __m256 v[4];
    __m256 m = V::zero();
    for (std::size_t h = 0; h < 4; ++h) {
      const std::size_t lanes = n > 8 * h ? min_(8, n - 8 * h) : 0;
      v[h] = lanes == 8 ? V::load(xg + 8 * h) : lanes ? V::load_partial(xg + 8 * h, lanes) : V::zero();
      m = V::max(V::abs(v[h]), m);  // NaN |x|: m
    }
    const float amax = V::hmax(m);
    d[g] = amax / 127.0f;
    const __m256 id = V::set1(amax > 0.0f ? 127.0f / amax : 0.0f);
    __m256i i32[4];
    for (std::size_t h = 0; h < 4; ++h) {
      __m256 t = V::mul(v[h], id);
      t = _mm256_and_ps(t, _mm256_cmp_ps(t, t, _CMP_ORD_Q));  // NaN → 0
      t = V::min(V::max(t, lo), hi);
      t = V::add(t, V::copysign(half, t));
      i32[h] = _mm256_cvttps_epi32(t);
    }
    // int32 → int8 (values in [-127, 127]: no saturation); packs work per 128-bit lane, the
    // permutation puts the four 32-bit chunks of each source register back in order.
    const __m256i p16a = _mm256_packs_epi32(i32[0], i32[1]), p16b = _mm256_packs_epi32(i32[2], i32[3]);
    const __m256i b = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p16a, p16b), order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + g * group_size), b);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(u + g * group_size), _mm256_xor_si256(b, flip));
  }
}

}  // namespace detail::x256

// y: (N) written   x, w: views of a vector<K> and a matrix<K, N>   bias: (N) or nullptr
// q, u: (32·G) written   d: (G) written   x: (K)
#if defined(SF_Q8_HAVE_AVX_VNNI)
struct avx_vnni {
  static constexpr const char* name = "avx_vnni";
  static constexpr const char* instructions = "AVX_VNNI vpdpbusd (ymm)";  // (staticformer/cpu_report.hpp)
  static void matvec(float* y, const detail::vec_ref& x, const detail::mat_ref& w, const float* bias) {
    detail::x256::matvec<true>(y, x, w, bias);
  }
  static void matvec_stream(float* y, const detail::vec_ref& x, const detail::mat_ref& w, const float* bias) {
    detail::x256::matvec<true, 1>(y, x, w, bias);
  }
  static void quantize(std::int8_t* q, std::uint8_t* u, float* d, const float* x, std::size_t K) {
    detail::x256::quantize(q, u, d, x, K);
  }
};
#endif
struct avx2 {
  static constexpr const char* name = "avx2";
  static constexpr const char* instructions = "AVX2 vpmaddubsw (ymm)";  // (staticformer/cpu_report.hpp)
  static void matvec(float* y, const detail::vec_ref& x, const detail::mat_ref& w, const float* bias) {
    detail::x256::matvec<false>(y, x, w, bias);
  }
  static void matvec_stream(float* y, const detail::vec_ref& x, const detail::mat_ref& w, const float* bias) {
    detail::x256::matvec<false, 1, true>(y, x, w, bias);
  }
  static void quantize(std::int8_t* q, std::uint8_t* u, float* d, const float* x, std::size_t K) {
    detail::x256::quantize(q, u, d, x, K);
  }
};

}  // namespace sf::kernels::q8

#endif
