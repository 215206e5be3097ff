// staticformer/kernels/gemm_bf16.hpp — the products of the bf16 precision policy: float
// matrices in and out, operands rounded to bf16, products summed in float32.
//
//   gemm_nn_bf16: C (=|+=) A · B (+ bias)     gemm_nt_bf16: C (=|+=) A · Bᵀ     gemm_tn_bf16: C (=|+=) Aᵀ · B
//
// Same shapes, strides and modes as gemm.hpp's float products (sf::matmul<precision_kind::bf16>
// reaches them); only the arithmetic differs:
//
//   bf16(x)   x rounded to the nearest bf16 (8 significant bits, ties to even; NaN stays NaN)
//   C[m,n] = s,  s = (Acc ? C[m,n] : 0) + bias[n],  then for every pair p = 0, 1, … of k:
//                s = s + bf16(a(m,2p+1))·bf16(b(2p+1,n));  s = s + bf16(a(m,2p))·bf16(b(2p,n))
//            (a missing odd k of an odd K counts as 0). Each product of two bf16 is exact in
//            float; each sum is rounded to float.
//
// That order is what AVX512-BF16's vdpbf16ps does to a pair (measured on this project's CPU:
// the odd element's product is added first, then the even one's, each rounded; it is the order
// Intel's manual gives), so the reference (the constant-evaluation path), the portable kernel
// and the AVX512-BF16 kernel give the same bits — except where vdpbf16ps flushes a subnormal
// input or sum (|x| < 1.2e-38) to zero, which the others do not.
//
// The kernels (run time): C is cut into blocks of MC rows × NC columns, K into blocks of KC.
// Per (column block, K block) B, and per (row block, column block, K block) A, are rounded and
// re-laid out (split over the runner's tasks, each writing its own rows or columns) once into
// static buffers of compile-time size — A as pairs along k ([m][p], or [p][m] for gemm_tn's
// transposed A), B as pairs along k interleaved by column ([p][n], padded to 16 columns) — then
// register tiles of MR rows × NV vectors of 16 columns run over them: per pair p, NV vectors of
// B, one broadcast pair of A per row, MR·NV dot products of pairs. With an installed runner the
// column panels of a block are split over its tasks (they only read the shared buffers): every
// element is summed the same way by whichever task, so the bits do not depend on the split.
// The buffers are static: the products of one program run one at a time, never from inside
// another split's task (the model calls them at the top level only).
//
// Backends: `bf16_avx512` (needs AVX512-BF16 and AVX512-BW at compile time: vdpbf16ps tiles,
// vectorised rounding) and `bf16_portable` (plain C++, always compiles; the fallback on any
// other target). `bf16_native` is the best of them this translation unit was compiled for.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "staticformer/kernels/attributes.hpp"
#include "staticformer/parallel.hpp"
#include "staticformer/simd.hpp"

#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512F__)
#include <immintrin.h>
#define SF_HAVE_AVX512_BF16 1
#endif

namespace sf::kernels {

// ---------------------------------------------------------------- bf16 values
// x rounded to the nearest bf16 (ties to even), as the upper 16 bits of a float. NaN stays a
// (quiet) NaN; ±inf and values that round past the largest bf16 become ±inf.
constexpr std::uint16_t to_bf16(float x) noexcept {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
constexpr float from_bf16(std::uint16_t b) noexcept { return std::bit_cast<float>(std::uint32_t{b} << 16); }
// x rounded to bf16 and back: what the bf16 products multiply (= from_bf16(to_bf16(x))).
constexpr float round_bf16(float x) noexcept {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return std::bit_cast<float>((u | 0x00400000u) & 0xffff0000u);
  return std::bit_cast<float>((u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u);
}

// ---------------------------------------------------------------- naive reference
namespace ref {
namespace detail {
// C[m,n] (=|+=) Σ_k bf16(a(m,k))·bf16(b(k,n)) (+ bias[n]) in the pair order above,
//   a(m,k) = A[m·sam + k·sak],  b(k,n) = B[k·sbk + n·sbn],  C: (M,N) row stride ldc
// (Run-time sizes, so that the tests call it on any shape. Not vectorised by g++: g++ 12 -O3
// vectorises this loop into wrong sums in some inlining contexts — found by test_gemm_bf16.)
SF_NO_AUTO_VECTORIZE constexpr void product_bf16(float* C, const float* A, const float* B, const float* bias, std::size_t M, std::size_t N,
                            std::size_t K, std::size_t ldc, std::size_t sam, std::size_t sak, std::size_t sbk,
                            std::size_t sbn, bool acc) {
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) {
      float s = acc ? C[m * ldc + n] : 0.0f;
      if (bias) s = s + bias[n];
      const std::size_t pairs = K / 2;
      for (std::size_t p = 0; p < pairs; ++p) {
        const std::size_t k = 2 * p;
        const float p1 = round_bf16(A[m * sam + (k + 1) * sak]) * round_bf16(B[(k + 1) * sbk + n * sbn]);  // exact
        s = s + p1;
        const float p0 = round_bf16(A[m * sam + k * sak]) * round_bf16(B[k * sbk + n * sbn]);
        s = s + p0;
      }
      if (K % 2 != 0) {  // the last pair (a(m,K-1), 0)
        s = s + 0.0f;
        s = s + round_bf16(A[m * sam + (K - 1) * sak]) * round_bf16(B[(K - 1) * sbk + n * sbn]);
      }
      C[m * ldc + n] = s;
    }
}
}  // namespace detail

// C (M,N) (=|+=) A (M,K) · B (K,N) (+ bias (N))
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb, std::size_t ldc, bool Acc>
constexpr void gemm_nn_bf16(float* C, const float* A, const float* B, const float* bias) {
  detail::product_bf16(C, A, B, bias, M, N, K, ldc, lda, 1, ldb, 1, Acc);
}
// C (M,N) (=|+=) A (M,K) · B (N,K)ᵀ
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb, std::size_t ldc, bool Acc>
constexpr void gemm_nt_bf16(float* C, const float* A, const float* B) {
  detail::product_bf16(C, A, B, nullptr, M, N, K, ldc, lda, 1, 1, ldb, Acc);
}
// C (M,N) (=|+=) A (K,M)ᵀ · B (K,N)
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb, std::size_t ldc, bool Acc>
constexpr void gemm_tn_bf16(float* C, const float* A, const float* B) {
  detail::product_bf16(C, A, B, nullptr, M, N, K, ldc, 1, lda, ldb, 1, Acc);
}
}  // namespace ref

namespace bf16_detail {
inline constexpr std::size_t KC = 256;  // k per block (KP pairs)
inline constexpr std::size_t KP = KC / 2;
inline constexpr std::size_t MC = 192;  // rows of C per block
inline constexpr std::size_t NC = 512;  // columns of C per block
inline constexpr std::size_t VW = 16;   // columns per vector of a tile (B's padding)
inline constexpr std::size_t NV = 4;    // vectors per tile row
inline constexpr std::size_t MR = 6;    // rows per tile (then 4, 2, 1)

constexpr std::size_t min_(std::size_t a, std::size_t b) { return a < b ? a : b; }
constexpr std::size_t round_up(std::size_t n, std::size_t m) { return (n + m - 1) / m * m; }

// The pair (x0, x1) as one 32-bit word: bf16(x0) in the low half, bf16(x1) in the high half.
constexpr std::uint32_t pair(float x0, float x1) {
  return std::uint32_t{to_bf16(x0)} | (std::uint32_t{to_bf16(x1)} << 16);
}
constexpr float lo(std::uint32_t w) { return std::bit_cast<float>(w << 16); }
constexpr float hi(std::uint32_t w) { return std::bit_cast<float>(w & 0xffff0000u); }

// The re-laid-out operands: static storage of compile-time size (96 KiB + 256 KiB). (A template,
// so that a program that never runs a bf16 product — the firmware — does not get them.)
template <class = void>
struct buffers {
  alignas(64) static inline std::uint32_t a[MC * KP];
  alignas(64) static inline std::uint32_t b[KP * NC];
};

// Where the rounded operands of one block go (p < kp pairs of the block's kb values of k):
//   pack_a, ATrans = false:  pa[i·lds + p] = pair(a(i, 2p), a(i, 2p+1))      a(i,k) = A[i·lda + k]
//   pack_a, ATrans = true:   pa[p·lds + i] = the same pair                    a(i,k) = A[k·lda + i]
//   pack_b, BCols = false:   pb[p·ncp + j] = pair(b(2p, j), b(2p+1, j))       b(k,j) = B[k·ldb + j]
//   pack_b, BCols = true:    the same                                         b(k,j) = B[j·ldb + k]
// for i < mc, j < ⌈nc/16⌉·16, with 0 for a k ≥ kb and for columns j ≥ nc (A and B already offset
// to the block's first row, column and k; lds = kp or the row block's mc, ncp ≥ ⌈nc/16⌉·16).

// ---------------------------------------------------------------- portable backend
struct bf16_portable {
  // (staticformer/cpu_report.hpp)
  static constexpr const char* instructions = "emulated: operands rounded to bf16, float32 multiplies and adds (portable C++)";
  template <bool ATrans>
  static void pack_a(std::uint32_t* pa, std::size_t lds, const float* A, std::size_t lda, std::size_t mc,
                     std::size_t kb) {
    const std::size_t kp = (kb + 1) / 2;
    for (std::size_t i = 0; i < mc; ++i)
      for (std::size_t p = 0; p < kp; ++p) {
        const std::size_t k = 2 * p;
        const float x0 = ATrans ? A[k * lda + i] : A[i * lda + k];
        const float x1 = k + 1 < kb ? (ATrans ? A[(k + 1) * lda + i] : A[i * lda + k + 1]) : 0.0f;
        (ATrans ? pa[p * lds + i] : pa[i * lds + p]) = pair(x0, x1);
      }
  }
  template <bool BCols>
  static void pack_b(std::uint32_t* pb, std::size_t ncp, const float* B, std::size_t ldb, std::size_t nc,
                     std::size_t kb) {
    const std::size_t kp = (kb + 1) / 2;
    for (std::size_t p = 0; p < kp; ++p)
      for (std::size_t j = 0; j < round_up(nc, VW); ++j) {
        const std::size_t k = 2 * p;
        float x0 = 0, x1 = 0;
        if (j < nc) {
          x0 = BCols ? B[j * ldb + k] : B[k * ldb + j];
          if (k + 1 < kb) x1 = BCols ? B[j * ldb + k + 1] : B[(k + 1) * ldb + j];
        }
        pb[p * ncp + j] = pair(x0, x1);
      }
  }
  // C[i, j] (=|+=) Σ_p ... for i < R, j < cols (≤ NVt·16) of one tile; the pair order above.
  //   pa: the tile's first row (ATrans: element i at pa[i], pair p at + p·as; else row i at
  //   pa + i·as, pair p at + p),  pb: the panel's first column (pair p at + p·ldb).
  template <std::size_t R, std::size_t NVt, bool ATrans>
  static void tile(float* C, std::size_t ldc, const std::uint32_t* pa, std::size_t as, const std::uint32_t* pb,
                   std::size_t ldb, std::size_t kp, std::size_t cols, bool load_c, const float* bias) {
    constexpr std::size_t NR = NVt * VW;
    float acc[R][NR];
    for (std::size_t i = 0; i < R; ++i)
      for (std::size_t j = 0; j < NR; ++j) {
        acc[i][j] = load_c && j < cols ? C[i * ldc + j] : 0.0f;
        if (bias && j < cols) acc[i][j] = acc[i][j] + bias[j];
      }
    for (std::size_t p = 0; p < kp; ++p)
      for (std::size_t i = 0; i < R; ++i) {
        const std::uint32_t a = ATrans ? pa[p * as + i] : pa[i * as + p];
        const float a0 = lo(a), a1 = hi(a);
        for (std::size_t j = 0; j < NR; ++j) {
          const std::uint32_t b = pb[p * ldb + j];
          acc[i][j] = acc[i][j] + a1 * hi(b);
          acc[i][j] = acc[i][j] + a0 * lo(b);
        }
      }
    for (std::size_t i = 0; i < R; ++i)
      for (std::size_t j = 0; j < cols; ++j) C[i * ldc + j] = acc[i][j];
  }
};

#if defined(SF_HAVE_AVX512_BF16)
// ---------------------------------------------------------------- AVX512-BF16 backend
struct bf16_avx512 {
  static constexpr const char* instructions = "AVX512_BF16 vdpbf16ps (zmm)";  // (staticformer/cpu_report.hpp)
  // bf16 of 16 floats, in the upper halves of the lanes (the lower halves are garbage).
  SF_KERNEL_INLINE static __m512i round16(__m512 x) {
    const __m512i u = _mm512_castps_si512(x);
    const __m512i odd = _mm512_and_si512(_mm512_maskz_srli_epi32(0xffff, u, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff)));
    const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    return _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x00400000));
  }
  // Two rows of 16 values → 16 pairs: (x0[j], x1[j]).
  SF_KERNEL_INLINE static __m512i interleave(__m512 x0, __m512 x1) {
    return _mm512_or_si512(_mm512_maskz_srli_epi32(0xffff, round16(x0), 16),
                           _mm512_and_si512(round16(x1), _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
  }
  // 32 consecutive values (x0: the first 16, x1: the next) → 16 pairs (x[2j], x[2j+1]).
  SF_KERNEL_INLINE static __m512i consecutive(__m512 x0, __m512 x1) {
    const __m512i idx = _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31, 29, 27, 25,
                                         23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    return _mm512_permutex2var_epi16(round16(x0), idx, round16(x1));
  }
  // n (≤ 16) floats from p, zeros after
  SF_KERNEL_INLINE static __m512 load(const float* p, std::size_t n) {
    return n >= 16 ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p);
  }
  // 2·n (≤ 32) floats from p as 16 pairs, zeros after (n pairs; the last may be half: m values)
  SF_KERNEL_INLINE static __m512i load_pairs(const float* p, std::size_t m) {
    return consecutive(load(p, m), m > 16 ? load(p + 16, m - 16) : _mm512_setzero_ps());
  }

  template <bool ATrans>
  static void pack_a(std::uint32_t* pa, std::size_t lds, const float* A, std::size_t lda, std::size_t mc,
                     std::size_t kb) {
    const std::size_t kp = (kb + 1) / 2;
    if constexpr (ATrans) {  // pa[p·mc + i]: rows 2p and 2p+1 of A, 16 values of m at a time
      for (std::size_t p = 0; p < kp; ++p) {
        const float* r0 = A + 2 * p * lda;
        const bool has1 = 2 * p + 1 < kb;
        for (std::size_t i = 0; i < mc; i += 16) {
          const std::size_t n = min_(16, mc - i);
          const __m512i w = interleave(load(r0 + i, n), has1 ? load(r0 + lda + i, n) : _mm512_setzero_ps());
          _mm512_mask_storeu_epi32(pa + p * lds + i, static_cast<__mmask16>((1u << n) - 1), w);
        }
      }
    } else {  // pa[i·kp + p]: row i of A, 32 values of k at a time
      for (std::size_t i = 0; i < mc; ++i)
        for (std::size_t p = 0; p < kp; p += 16) {
          const std::size_t m = min_(32, kb - 2 * p);  // values of k in this step
          const __m512i w = load_pairs(A + i * lda + 2 * p, m);
          _mm512_mask_storeu_epi32(pa + i * lds + p, static_cast<__mmask16>((1u << ((m + 1) / 2)) - 1), w);
        }
    }
  }
  template <bool BCols>
  static void pack_b(std::uint32_t* pb, std::size_t ncp, const float* B, std::size_t ldb, std::size_t nc,
                     std::size_t kb) {
    const std::size_t kp = (kb + 1) / 2;
    if constexpr (!BCols) {  // rows 2p and 2p+1 of B, 16 columns at a time
      for (std::size_t p = 0; p < kp; ++p) {
        const float* r0 = B + 2 * p * ldb;
        const bool has1 = 2 * p + 1 < kb;
        for (std::size_t j = 0; j < nc; j += 16) {
          const std::size_t n = min_(16, nc - j);
          _mm512_storeu_si512(pb + p * ncp + j,
                              interleave(load(r0 + j, n), has1 ? load(r0 + ldb + j, n) : _mm512_setzero_ps()));
        }
      }
    } else {  // 16 columns (rows of B) × 16 pairs: 16 rows of pairs, then a 16×16 transpose of words
      for (std::size_t j = 0; j < nc; j += 16)
        for (std::size_t p = 0; p < kp; p += 16) {
          const std::size_t m = min_(32, kb - 2 * p), rows = nc - j < 16 ? nc - j : 16, pn = min_(16, kp - p);
          __m512 r[16];
          for (std::size_t t = 0; t < 16; ++t)
            r[t] = t < rows ? _mm512_castsi512_ps(load_pairs(B + (j + t) * ldb + 2 * p, m)) : _mm512_setzero_ps();
          simd::avx512::transpose(r);
          for (std::size_t t = 0; t < pn; ++t) _mm512_storeu_ps(reinterpret_cast<float*>(pb + (p + t) * ncp + j), r[t]);
        }
    }
  }

  template <std::size_t R, std::size_t NVt, bool ATrans, std::size_t... I, std::size_t... J, std::size_t... Rs>
  SF_KERNEL_INLINE static void tile_body(std::index_sequence<I...>, std::index_sequence<J...>, std::index_sequence<Rs...>,
                                         float* SF_RESTRICT C, std::size_t ldc, const std::uint32_t* SF_RESTRICT pa,
                                         std::size_t as, const std::uint32_t* SF_RESTRICT pb, std::size_t ldb,
                                         std::size_t kp, std::size_t cols, bool load_c, const float* SF_RESTRICT bias) {
    const std::size_t nl = cols - (NVt - 1) * 16;  // lanes of the last vector
    const __mmask16 lm = static_cast<__mmask16>(nl >= 16 ? 0xffffu : (1u << nl) - 1);
    auto mask = [lm](std::size_t j) SF_LAMBDA_INLINE { return j + 1 == NVt ? lm : static_cast<__mmask16>(0xffff); };
    __m512 acc[R * NVt];
    if (load_c) ((acc[I] = _mm512_maskz_loadu_ps(mask(I % NVt), C + (I / NVt) * ldc + (I % NVt) * 16)), ...);
    else ((acc[I] = _mm512_setzero_ps()), ...);
    if (bias) {
      const __m512 bv[NVt] = {_mm512_maskz_loadu_ps(mask(J), bias + J * 16)...};
      ((acc[I] = _mm512_add_ps(acc[I], bv[I % NVt])), ...);
    }
    const std::uint32_t* const arow[R] = {(ATrans ? pa + Rs : pa + Rs * as)...};
    const std::size_t astep = ATrans ? as : 1;
    for (std::size_t p = 0; p < kp; ++p) {
      const __m512bh b[NVt] = {(__m512bh)_mm512_loadu_si512(pb + p * ldb + J * 16)...};
      const __m512i a[R] = {_mm512_set1_epi32(static_cast<int>(arow[Rs][p * astep]))...};
      ((acc[I] = _mm512_dpbf16_ps(acc[I], (__m512bh)a[I / NVt], b[I % NVt])), ...);
    }
    ((_mm512_mask_storeu_ps(C + (I / NVt) * ldc + (I % NVt) * 16, mask(I % NVt), acc[I])), ...);
  }
  template <std::size_t R, std::size_t NVt, bool ATrans>
  SF_KERNEL_NOINLINE static void tile(float* C, std::size_t ldc, const std::uint32_t* pa, std::size_t as,
                                      const std::uint32_t* pb, std::size_t ldb, std::size_t kp, std::size_t cols,
                                      bool load_c, const float* bias) {
    tile_body<R, NVt, ATrans>(std::make_index_sequence<R * NVt>{}, std::make_index_sequence<NVt>{},
                              std::make_index_sequence<R>{}, C, ldc, pa, as, pb, ldb, kp, cols, load_c, bias);
  }
};
#endif

// One (row block, column block, K block) of C over packed operands: column panels of NV
// vectors (the last one narrower), row tiles of MR rows then 4, 2, 1; panels split over tasks.
template <class Impl, bool ATrans>
void run_block(float* C, std::size_t ldc, const std::uint32_t* pa, std::size_t mc, std::size_t kp,
               const std::uint32_t* pb, std::size_t nc, bool load_c, const float* bias) {
  const std::size_t ncp = round_up(nc, VW), panels = (nc + NV * VW - 1) / (NV * VW);
  const std::size_t as = ATrans ? mc : kp;
  auto panel = [&](std::size_t q) {
    const std::size_t j0 = q * NV * VW, cols = min_(NV * VW, nc - j0), nv = (cols + VW - 1) / VW;
    auto rows = [&]<std::size_t R>(std::size_t i0) {
      const std::uint32_t* a = ATrans ? pa + i0 : pa + i0 * kp;
      const float* bj = bias ? bias + j0 : nullptr;
      float* c = C + i0 * ldc + j0;
      switch (nv) {
        case 4: Impl::template tile<R, 4, ATrans>(c, ldc, a, as, pb + j0, ncp, kp, cols, load_c, bj); break;
        case 3: Impl::template tile<R, 3, ATrans>(c, ldc, a, as, pb + j0, ncp, kp, cols, load_c, bj); break;
        case 2: Impl::template tile<R, 2, ATrans>(c, ldc, a, as, pb + j0, ncp, kp, cols, load_c, bj); break;
        default: Impl::template tile<R, 1, ATrans>(c, ldc, a, as, pb + j0, ncp, kp, cols, load_c, bj); break;
      }
    };
    std::size_t i = 0;
    for (; i + MR <= mc; i += MR) rows.template operator()<MR>(i);
    for (; i + 4 <= mc; i += 4) rows.template operator()<4>(i);
    if (i + 2 <= mc) rows.template operator()<2>(i), i += 2;
    if (i < mc) rows.template operator()<1>(i);
  };
  if (mc * nc * kp * 2 >= (std::size_t{1} << 17)) {
    parallel::for_ranges(panels, [&](std::size_t q0, std::size_t q1, std::size_t) {
      for (std::size_t q = q0; q < q1; ++q) panel(q);
    });
  } else {
    for (std::size_t q = 0; q < panels; ++q) panel(q);
  }
}

// f(begin, end) over [0, n), split over the installed runner's tasks when `work` (elements) is
// large enough: the re-layout of a block, whose parts write disjoint parts of the buffers.
template <class F>
void split_if(std::size_t n, std::size_t work, F&& f) {
  if (work >= (std::size_t{1} << 15)) parallel::for_ranges(n, [&](std::size_t b, std::size_t e, std::size_t) { f(b, e); });
  else f(std::size_t{0}, n);
}

// C (M,N) (=|+=) Σ_k a(m,k)·b(k,n) (+ bias[n]) in bf16:
//   a(m,k) = ATrans ? A[k·lda + m] : A[m·lda + k],   b(k,n) = BCols ? B[n·ldb + k] : B[k·ldb + n]
template <class Impl, bool ATrans, bool BCols>
void gemm(float* C, std::size_t ldc, const float* A, std::size_t lda, const float* B, std::size_t ldb, std::size_t M,
          std::size_t N, std::size_t K, bool acc, const float* bias) {
  std::uint32_t* const pa = buffers<>::a;
  std::uint32_t* const pb = buffers<>::b;
  // Each block of B is re-laid out once (per column block and K block), each block of A once per
  // column block; a block of C gets its K blocks in order.
  for (std::size_t n0 = 0; n0 < N; n0 += NC) {
    const std::size_t nc = min_(NC, N - n0), ncp = round_up(nc, VW);
    for (std::size_t k0 = 0; k0 < K; k0 += KC) {
      const std::size_t kb = min_(KC, K - k0), kp = (kb + 1) / 2;
      split_if(ncp / VW, nc * kb, [&](std::size_t g0, std::size_t g1) {  // groups of 16 columns
        const std::size_t j0 = g0 * VW, j1 = min_(nc, g1 * VW);
        Impl::template pack_b<BCols>(pb + j0, ncp, BCols ? B + (n0 + j0) * ldb + k0 : B + k0 * ldb + n0 + j0, ldb,
                                     j1 - j0, kb);
      });
      for (std::size_t m0 = 0; m0 < M; m0 += MC) {
        const std::size_t mc = min_(MC, M - m0), lds = ATrans ? mc : kp;
        split_if(mc, mc * kb, [&](std::size_t i0, std::size_t i1) {  // rows of the block
          Impl::template pack_a<ATrans>(ATrans ? pa + i0 : pa + i0 * kp, lds,
                                        ATrans ? A + k0 * lda + m0 + i0 : A + (m0 + i0) * lda + k0, lda, i1 - i0, kb);
        });
        run_block<Impl, ATrans>(C + m0 * ldc + n0, ldc, pa, mc, kp, pb, nc, acc || k0 > 0,
                                k0 == 0 && bias ? bias + n0 : nullptr);
      }
    }
  }
}

// The same with the operand layouts chosen at run time (the tests): nn, nt (b_cols) or tn (a_trans).
template <class Impl>
void gemm_any(bool a_trans, bool b_cols, float* C, std::size_t ldc, const float* A, std::size_t lda, const float* B,
              std::size_t ldb, std::size_t M, std::size_t N, std::size_t K, bool acc, const float* bias) {
  if (a_trans) gemm<Impl, true, false>(C, ldc, A, lda, B, ldb, M, N, K, acc, bias);
  else if (b_cols) gemm<Impl, false, true>(C, ldc, A, lda, B, ldb, M, N, K, acc, bias);
  else gemm<Impl, false, false>(C, ldc, A, lda, B, ldb, M, N, K, acc, bias);
}
}  // namespace bf16_detail

using bf16_detail::bf16_portable;
#if defined(SF_HAVE_AVX512_BF16)
using bf16_detail::bf16_avx512;
using bf16_native = bf16_avx512;
#else
using bf16_native = bf16_portable;
#endif

// C (M,N) (=|+=) A (M,K) · B (K,N) (+ bias (N)), bf16 operands, with backend Impl.
template <class Impl, std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb, std::size_t ldc,
          bool Acc>
void gemm_nn_bf16_with(float* C, const float* A, const float* B, const float* bias) {
  if constexpr (K == 0) ref::gemm_nn_bf16<M, N, K, lda, ldb, ldc, Acc>(C, A, B, bias);
  else if constexpr (M != 0 && N != 0) bf16_detail::gemm<Impl, false, false>(C, ldc, A, lda, B, ldb, M, N, K, Acc, bias);
}
// C (M,N) (=|+=) A (M,K) · B (N,K)ᵀ
template <class Impl, std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb, std::size_t ldc,
          bool Acc>
void gemm_nt_bf16_with(float* C, const float* A, const float* B) {
  if constexpr (K == 0) ref::gemm_nt_bf16<M, N, K, lda, ldb, ldc, Acc>(C, A, B);
  else if constexpr (M != 0 && N != 0) bf16_detail::gemm<Impl, false, true>(C, ldc, A, lda, B, ldb, M, N, K, Acc, nullptr);
}
// C (M,N) (=|+=) A (K,M)ᵀ · B (K,N)
template <class Impl, std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb, std::size_t ldc,
          bool Acc>
void gemm_tn_bf16_with(float* C, const float* A, const float* B) {
  if constexpr (K == 0) ref::gemm_tn_bf16<M, N, K, lda, ldb, ldc, Acc>(C, A, B);
  else if constexpr (M != 0 && N != 0) bf16_detail::gemm<Impl, true, false>(C, ldc, A, lda, B, ldb, M, N, K, Acc, nullptr);
}

// The entry points: the reference during constant evaluation, the native backend at run time.
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda = K, std::size_t ldb = N, std::size_t ldc = N,
          bool Acc = false>
constexpr void gemm_nn_bf16(float* C, const float* A, const float* B, const float* bias = nullptr) {
  if (std::is_constant_evaluated()) ref::gemm_nn_bf16<M, N, K, lda, ldb, ldc, Acc>(C, A, B, bias);
  else gemm_nn_bf16_with<bf16_native, M, N, K, lda, ldb, ldc, Acc>(C, A, B, bias);
}
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda = K, std::size_t ldb = K, std::size_t ldc = N,
          bool Acc = false>
constexpr void gemm_nt_bf16(float* C, const float* A, const float* B) {
  if (std::is_constant_evaluated()) ref::gemm_nt_bf16<M, N, K, lda, ldb, ldc, Acc>(C, A, B);
  else gemm_nt_bf16_with<bf16_native, M, N, K, lda, ldb, ldc, Acc>(C, A, B);
}
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda = M, std::size_t ldb = N, std::size_t ldc = N,
          bool Acc = false>
constexpr void gemm_tn_bf16(float* C, const float* A, const float* B) {
  if (std::is_constant_evaluated()) ref::gemm_tn_bf16<M, N, K, lda, ldb, ldc, Acc>(C, A, B);
  else gemm_tn_bf16_with<bf16_native, M, N, K, lda, ldb, ldc, Acc>(C, A, B);
}

}  // namespace sf::kernels
