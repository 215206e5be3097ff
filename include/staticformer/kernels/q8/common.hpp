// staticformer/kernels/q8/common.hpp — Q8_0 storage, quantization, layout and the scalar
// reference product (every other q8 backend is tested against it bit for bit).
//
// The maths (see kernels/q8.hpp for the API overview):
//
//   quantizing a group v[0..32) of floats (the last group of an odd K padded with zeros):
//     amax = max_i |v[i]|                     (NaN entries ignored)
//     d    = amax / 127                       (the group's scale, float)
//     id   = amax > 0 ? 127 / amax : 0        (float)
//     q[i] = round_half_away(clamp(v[i]·id, -127, 127))   as static_cast<int>(t + (t >= 0 ? 0.5f : -0.5f))
//            (a NaN product, e.g. a NaN input or 0·inf when amax < 127/FLT_MAX, gives 0)
//   so v[i] ≈ q[i]·d, |q| <= 127 (never -128: products of two values fit the int16 tricks).
//
//   weights W (K, N), row k = input k ([in, out], y = x·W): one group per (column n, g),
//   inputs 32g .. 32g+31 of column n.   activations x (K): one group per g.
//
//   the product, per output n (this is the definition every backend reproduces exactly):
//     acc = 0.0f
//     for g = 0 .. G-1, in order:
//       isum = Σ_{k in group g} (int32) qw[n,k] · (int32) qx[k]      exact (|isum| <= 32·127² < 2^24)
//       acc  = fma((float) isum, dw[n,g] * dx[g], acc)               the scale product rounded to float,
//                                                                    then one fused multiply-add
//     y[n] = bias ? acc + bias[n] : acc
//   Integer sums are exact in any order, (float) isum is exact, and the float operations are
//   the same in every backend, in the same order: so every backend gives the same bits.
//
// Layout of q8::matrix<K, N> (G = ⌈K/32⌉ groups, NB = ⌈N/16⌉ column blocks; N padded to 16·NB
// and K to 32·G, padding zero):
//
//   q     int8   [block b][group g][step s = 0..7][column c = 0..15][input j = 0..3]
//                = qw[n = 16b + c, k = 32g + 4s + j]       512 bytes per (b, g)
//                One 64-byte line is 16 columns × 4 consecutive inputs: the operand of
//                AVX-512 VNNI vpdpbusd (4 bytes per int32 lane) against the 4 activation bytes
//                broadcast; AVX2 reads it as two 32-byte halves (columns 0-7, 8-15), NEON as four
//                16-byte quarters (4 columns each).
//   d     float  [block b][group g][column c]              dw[16b + c, g]
//   qsum  int16  [block b][group g][column c]              Σ_{k in g} qw[16b + c, k]  (|.| <= 4064)
//                for the +128 trick of the u8×s8 products: Σ (qx + 128)·qw = Σ qx·qw + 128·Σ qw.
//
// q8::vector<K> (an activation quantized on the fly, shared by the matrices that read it):
//   q     int8   [k]   qx[k], zero for k >= K (padded to 32·G)
//   u     uint8  [k]   qx[k] + 128 (= q ^ 0x80): the unsigned operand of vpdpbusd, precomputed
//   d     float  [g]   dx[g]
//
// Memory: 1 + 6/32 bytes per weight (q; d and qsum per group of 32), plus the padding.
//
// The canonical form (what a checkpoint stores; pack/unpack convert): qw as int8 (N, K)
// row-major [out, in] (K unpadded) and dw as float (N, G) row-major.
//
// Float only: no double at run time, no libm beyond fma (an instruction where the target has one,
// sf::simd::scalar<float>::fused; elsewhere emulated exactly, in double), no heap, no exceptions,
// no iostream: the scalar backend runs on a Cortex-M4 (where its integer sums use the Armv7E-M
// SMLAD instruction, detail::matvec_simd32 below).
#pragma once
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "staticformer/math.hpp"
#include "staticformer/simd/scalar.hpp"

#if defined(__ARM_FEATURE_SIMD32)
#include <arm_acle.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SF_Q8_INLINE inline __attribute__((always_inline))
#define SF_Q8_NOINLINE __attribute__((noinline))
#define SF_Q8_LAMBDA_INLINE __attribute__((always_inline))  // after a lambda's parameter list
#else
#define SF_Q8_INLINE inline
#define SF_Q8_NOINLINE
#define SF_Q8_LAMBDA_INLINE
#endif

namespace sf::kernels::q8 {

inline constexpr std::size_t group_size = 32;  // inputs per scale
inline constexpr std::size_t block_cols = 16;  // output columns per block
inline constexpr std::size_t step_inputs = 4;  // consecutive inputs per column in one step (one int32 lane)
inline constexpr std::size_t group_steps = group_size / step_inputs;  // 8
inline constexpr std::size_t step_bytes = block_cols * step_inputs;   // 64
inline constexpr std::size_t tile_bytes = group_steps * step_bytes;   // 512: one (block, group)

constexpr std::size_t groups_of(std::size_t K) { return (K + group_size - 1) / group_size; }
constexpr std::size_t blocks_of(std::size_t N) { return (N + block_cols - 1) / block_cols; }

// An activation of K floats quantized per group of 32 (see the header comment).
template <std::size_t K>
struct vector {
  static_assert(K > 0, "sf::kernels::q8::vector<K>: K must be positive");
  static constexpr std::size_t in = K, groups = groups_of(K), padded = groups * group_size;
  alignas(64) std::int8_t q[padded];   // q[k]: qx[k], 0 for k >= K
  alignas(64) std::uint8_t u[padded];  // u[k] = qx[k] + 128
  alignas(64) float d[groups];         // d[g]: dx[g]
};

// A (K, N) weight matrix quantized per output column and group of 32 inputs, packed (see the
// header comment for the layout). An aggregate of compile-time size: static storage, no heap.
template <std::size_t K, std::size_t N>
struct matrix {
  static_assert(K > 0 && N > 0, "sf::kernels::q8::matrix<K, N>: K and N must be positive");
  static constexpr std::size_t in = K, out = N;
  static constexpr std::size_t groups = groups_of(K), blocks = blocks_of(N);
  static constexpr std::size_t in_padded = groups * group_size, out_padded = blocks * block_cols;
  alignas(64) std::int8_t q[blocks * groups * tile_bytes];      // [b][g][s][c][j]
  alignas(64) float d[blocks * groups * block_cols];            // [b][g][c]
  alignas(64) std::int16_t qsum[blocks * groups * block_cols];  // [b][g][c]: Σ q over the group
};

// Where weight (n, k) and the scale (n, g) live in matrix::q and matrix::d / qsum.
constexpr std::size_t q_index(std::size_t groups, std::size_t n, std::size_t k) {
  return ((n / block_cols * groups + k / group_size) * group_steps + k % group_size / step_inputs) * step_bytes +
         n % block_cols * step_inputs + k % step_inputs;
}
constexpr std::size_t d_index(std::size_t groups, std::size_t n, std::size_t g) {
  return (n / block_cols * groups + g) * block_cols + n % block_cols;
}

namespace detail {

// Run-time views the backends take (one function per backend serves every shape).
struct mat_ref {
  const std::int8_t* q;      // matrix::q
  const float* d;            // matrix::d
  const std::int16_t* qsum;  // matrix::qsum
  std::size_t groups, N;     // G, N (blocks = ⌈N/16⌉)
};
struct vec_ref {
  const std::int8_t* q;   // vector::q
  const std::uint8_t* u;  // vector::u
  const float* d;         // vector::d
  std::size_t groups;
};
template <std::size_t K, std::size_t N>
constexpr mat_ref ref(const matrix<K, N>& w) {
  return {w.q, w.d, w.qsum, matrix<K, N>::groups, N};
}
template <std::size_t K>
constexpr vec_ref ref(const vector<K>& x) {
  return {x.q, x.u, x.d, vector<K>::groups};
}

constexpr std::size_t min_(std::size_t a, std::size_t b) { return a < b ? a : b; }

// |v| by clearing the sign bit (NaN stays NaN), as the vector backends' abs.
constexpr float abs_bits(float v) { return std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) & 0x7fffffffu); }

// a·b + c with one rounding: the fma instruction where the target has one (std::fma is then
// inlined: no libm call), sf::cx::fma (exact, in double) otherwise and in constant expressions.
constexpr float fma_exact(float a, float b, float c) {
  if (std::is_constant_evaluated()) return sf::cx::fma(a, b, c);
  if constexpr (simd::scalar<float>::fused)
    return std::fma(a, b, c);
  else
    return sf::cx::fma(a, b, c);
}

// q = round_half_away(clamp(t, -127, 127)) for t = v·id; NaN gives 0.
constexpr std::int8_t quantize_value(float t) {
  if (!(t == t)) t = 0.0f;
  t = t > 127.0f ? 127.0f : (t < -127.0f ? -127.0f : t);
  return static_cast<std::int8_t>(static_cast<int>(t + (t >= 0.0f ? 0.5f : -0.5f)));
}

// One group: v(i) = src[i·stride] for i < n (n <= 32), zero beyond.
//   q: (32) written (q[i] = 0 for i >= n)      returns d = amax / 127
// Naive and deliberately so: this is the definition the vectorised quantizers reproduce.
constexpr float quantize_group(std::int8_t* q, const float* src, std::size_t stride, std::size_t n) {
  float amax = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    const float a = abs_bits(src[i * stride]);
    amax = a > amax ? a : amax;  // NaN ignored
  }
  const float d = amax / 127.0f;
  const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
  for (std::size_t i = 0; i < group_size; ++i) q[i] = i < n ? quantize_value(src[i * stride] * id) : std::int8_t{0};
  return d;
}

// The scalar activation quantizer (the reference for the vectorised ones).
//   q, u: (32·G) written   d: (G) written   x: (K)
SF_Q8_NOINLINE inline void quantize_scalar(std::int8_t* q, std::uint8_t* u, float* d, const float* x, std::size_t K) {
  const std::size_t G = groups_of(K);
  for (std::size_t g = 0; g < G; ++g) {
    std::int8_t* qg = q + g * group_size;
    d[g] = quantize_group(qg, x + g * group_size, 1, min_(group_size, K - g * group_size));
    for (std::size_t i = 0; i < group_size; i += 4) {  // u = q ^ 0x80, a word (4 values) at a time
      std::uint32_t v;
      std::memcpy(&v, qg + i, sizeof v);
      v ^= 0x80808080u;
      std::memcpy(u + g * group_size + i, &v, sizeof v);
    }
  }
}

// Σ_j q over each (block, group, column), from the packed values.
//   qsum: (NB·G·16) written   q: (NB·G·512)
SF_Q8_NOINLINE inline void compute_qsum(std::int16_t* qsum, const std::int8_t* q, std::size_t tiles) {
  for (std::size_t t = 0; t < tiles; ++t)
    for (std::size_t c = 0; c < block_cols; ++c) {
      int s = 0;
      for (std::size_t st = 0; st < group_steps; ++st)
        for (std::size_t j = 0; j < step_inputs; ++j) s += q[t * tile_bytes + st * step_bytes + c * step_inputs + j];
      qsum[t * block_cols + c] = static_cast<std::int16_t>(s);
    }
}

// Quantizes a float matrix whose element (k, n) is W[k·sk + n·sn] into the packed arrays.
//   q: (NB·G·512), d, qsum: (NB·G·16) all written (padding zero)
SF_Q8_NOINLINE inline void quantize_matrix(std::int8_t* q, float* d, std::int16_t* qsum, const float* W, std::size_t K,
                                           std::size_t N, std::size_t sk, std::size_t sn) {
  const std::size_t G = groups_of(K), tiles = blocks_of(N) * G;
  std::memset(q, 0, tiles * tile_bytes);
  std::memset(d, 0, tiles * block_cols * sizeof(float));
  std::int8_t g8[group_size];
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t g = 0; g < G; ++g) {
      d[d_index(G, n, g)] =
          quantize_group(g8, W + g * group_size * sk + n * sn, sk, min_(group_size, K - g * group_size));
      for (std::size_t i = 0; i < group_size; ++i) q[q_index(G, n, g * group_size + i)] = g8[i];
    }
  compute_qsum(qsum, q, tiles);
}

// The reference product (see the header comment): per output n, groups in order, one exact
// int32 sum and one fma per group, then the bias.
//   y: (N) written   x: the quantized activation   w: the packed matrix   bias: (N) or nullptr
SF_Q8_NOINLINE inline void matvec_scalar(float* y, const vec_ref& x, const mat_ref& w, const float* bias) {
  const std::size_t G = w.groups, N = w.N;
  for (std::size_t n = 0; n < N; ++n) {
    const std::int8_t* col = w.q + n / block_cols * G * tile_bytes + n % block_cols * step_inputs;
    const float* dcol = w.d + n / block_cols * G * block_cols + n % block_cols;
    float acc = 0.0f;
    for (std::size_t g = 0; g < G; ++g) {
      const std::int8_t* t = col + g * tile_bytes;  // t[s·64 + j] = qw[n, 32g + 4s + j]
      const std::int8_t* xg = x.q + g * group_size;
      std::int32_t isum = 0;
      for (std::size_t s = 0; s < group_steps; ++s)
        for (std::size_t j = 0; j < step_inputs; ++j)
          isum += static_cast<std::int32_t>(t[s * step_bytes + j]) * static_cast<std::int32_t>(xg[s * step_inputs + j]);
      acc = fma_exact(static_cast<float>(isum), dcol[g * block_cols] * x.d[g], acc);
    }
    y[n] = bias ? acc + bias[n] : acc;
  }
}

// ---------------------------------------------------------------- Armv7E-M DSP (Cortex-M4/M7/M33)
// The same product with the 32-bit SIMD instructions: SXTB16 sign-extends bytes 0 and 2 of a word
// (after a rotation by 8: bytes 1 and 3) into two int16 lanes, SMLAD adds both lane products to an
// int32. So 4 int8 products (4 consecutive inputs of one column, one word of the layout) cost one
// load, 2 SXTB16 and 2 SMLAD; the activation's words are split once per group. The sums are the
// exact integers of matvec_scalar, everything else is its arithmetic: the same bits.
// Ops: simd32_acle (the instructions, arm_acle.h) or simd32_portable (their definitions in C,
// which the tests run on any host).
struct simd32_portable {
  static constexpr std::uint32_t sxtb16(std::uint32_t a) {  // (int16) (int8) byte 0, (int16) (int8) byte 2
    const auto lo = static_cast<std::uint16_t>(static_cast<std::int16_t>(static_cast<std::int8_t>(a & 0xffu)));
    const auto hi = static_cast<std::uint16_t>(static_cast<std::int16_t>(static_cast<std::int8_t>((a >> 16) & 0xffu)));
    return static_cast<std::uint32_t>(lo) | static_cast<std::uint32_t>(hi) << 16;
  }
  static constexpr std::int32_t smlad(std::uint32_t a, std::uint32_t b, std::int32_t c) {  // c + a.lo·b.lo + a.hi·b.hi
    auto lane = [](std::uint32_t v, int h) {
      return static_cast<std::int32_t>(static_cast<std::int16_t>(v >> (16 * h)));
    };
    return c + lane(a, 0) * lane(b, 0) + lane(a, 1) * lane(b, 1);
  }
  static constexpr std::uint32_t sxtb16_ror8(std::uint32_t a) { return sxtb16(a >> 8 | a << 24); }  // bytes 1, 3
};
#if defined(__ARM_FEATURE_SIMD32)
struct simd32_acle {
  static std::uint32_t sxtb16(std::uint32_t a) {
    return static_cast<std::uint32_t>(__sxtb16(static_cast<std::int32_t>(a)));
  }
  static std::int32_t smlad(std::uint32_t a, std::uint32_t b, std::int32_t c) {
    return __smlad(static_cast<std::int32_t>(a), static_cast<std::int32_t>(b), c);
  }
  static std::uint32_t sxtb16_ror8(std::uint32_t a) {  // one instruction (the rotation is an operand)
    std::uint32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(a));
    return r;
  }
};
#endif
SF_Q8_INLINE std::uint32_t load_word(const void* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// y = x·W (+ bias), group by group (y accumulates, so each output still sums its groups in order):
// per group, the activation's 8 words split into their even and odd bytes once (xs), then for
// every column block, two columns at a time, the 8 words of weights each, unrolled: per 4
// products one load, SXTB16, SXTB16 with ROR #8 and 2 SMLAD, the activation's words shared by the
// two columns.
//   y: (N) written   x, w: views   bias: (N) or nullptr
// Naive reference: matvec_scalar.
template <class Ops>
SF_Q8_NOINLINE void matvec_simd32(float* y, const vec_ref& x, const mat_ref& w, const float* bias) {
  const std::size_t G = w.groups, N = w.N, NB = blocks_of(N);
  for (std::size_t n = 0; n < N; ++n) y[n] = 0.0f;  // y accumulates group by group (the same order)
  for (std::size_t g = 0; g < G; ++g) {
    std::uint32_t xs[2 * group_steps];  // step s: inputs 4s, 4s+2 then 4s+1, 4s+3, as int16 pairs
    for (std::size_t s = 0; s < group_steps; ++s) {
      const std::uint32_t xv = load_word(x.q + g * group_size + s * step_inputs);
      xs[2 * s] = Ops::sxtb16(xv);
      xs[2 * s + 1] = Ops::sxtb16_ror8(xv);
    }
    const float dx = x.d[g];
    for (std::size_t b = 0; b < NB; ++b) {
      const std::size_t nc = min_(block_cols, N - b * block_cols);
      const std::int8_t* t = w.q + (b * G + g) * tile_bytes;
      const float* dg = w.d + (b * G + g) * block_cols;
      float* yb = y + b * block_cols;
      std::size_t c = 0;
      for (; c + 2 <= nc; c += 2) {  // two columns: each pair of activation words loaded once
        const std::int8_t* tc = t + c * step_inputs;
        std::int32_t i0 = 0, i1 = 0;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 8
#endif
        for (std::size_t s = 0; s < group_steps; ++s) {
          const std::uint32_t x02 = xs[2 * s], x13 = xs[2 * s + 1];
          const std::uint32_t w0 = load_word(tc + s * step_bytes), w1 = load_word(tc + s * step_bytes + step_inputs);
          i0 = Ops::smlad(Ops::sxtb16(w0), x02, i0);
          i1 = Ops::smlad(Ops::sxtb16(w1), x02, i1);
          i0 = Ops::smlad(Ops::sxtb16_ror8(w0), x13, i0);
          i1 = Ops::smlad(Ops::sxtb16_ror8(w1), x13, i1);
        }
        yb[c] = fma_exact(static_cast<float>(i0), dg[c] * dx, yb[c]);
        yb[c + 1] = fma_exact(static_cast<float>(i1), dg[c + 1] * dx, yb[c + 1]);
      }
      if (c < nc) {  // an odd last column
        const std::int8_t* tc = t + c * step_inputs;
        std::int32_t isum = 0;
        for (std::size_t s = 0; s < group_steps; ++s) {
          const std::uint32_t wv = load_word(tc + s * step_bytes);
          isum = Ops::smlad(Ops::sxtb16(wv), xs[2 * s], isum);
          isum = Ops::smlad(Ops::sxtb16_ror8(wv), xs[2 * s + 1], isum);
        }
        yb[c] = fma_exact(static_cast<float>(isum), dg[c] * dx, yb[c]);
      }
    }
  }
  if (bias)
    for (std::size_t n = 0; n < N; ++n) y[n] = y[n] + bias[n];
}

}  // namespace detail

// ---------------------------------------------------------------- weights: quantize, pack, unpack
namespace detail {
// The run-time-sized bodies of the functions below (one copy serves every shape).
//   q: (NB·G·512), d, qsum: (NB·G·16): the packed arrays   cq: (N, K)   cd: (N, G)   W: (K, N)
SF_Q8_NOINLINE inline void pack(std::int8_t* q, float* d, std::int16_t* qsum, const std::int8_t* cq, const float* cd,
                                std::size_t K, std::size_t N) {
  const std::size_t G = groups_of(K), tiles = blocks_of(N) * G;
  std::memset(q, 0, tiles * tile_bytes);
  std::memset(d, 0, tiles * block_cols * sizeof(float));
  for (std::size_t n = 0; n < N; ++n) {
    for (std::size_t k = 0; k < K; ++k) q[q_index(G, n, k)] = cq[n * K + k] < -127 ? std::int8_t{-127} : cq[n * K + k];
    for (std::size_t g = 0; g < G; ++g) d[d_index(G, n, g)] = cd[n * G + g];
  }
  compute_qsum(qsum, q, tiles);
}
SF_Q8_NOINLINE inline void unpack(std::int8_t* cq, float* cd, const std::int8_t* q, const float* d, std::size_t K,
                                  std::size_t N) {
  const std::size_t G = groups_of(K);
  for (std::size_t n = 0; n < N; ++n) {
    for (std::size_t k = 0; k < K; ++k) cq[n * K + k] = q[q_index(G, n, k)];
    for (std::size_t g = 0; g < G; ++g) cd[n * G + g] = d[d_index(G, n, g)];
  }
}
SF_Q8_NOINLINE inline void dequantize(float* W, const std::int8_t* q, const float* d, std::size_t K, std::size_t N) {
  const std::size_t G = groups_of(K);
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t n = 0; n < N; ++n)
      W[k * N + n] = static_cast<float>(q[q_index(G, n, k)]) * d[d_index(G, n, k / group_size)];
}
}  // namespace detail

// w = Q8_0(W)                            W: (K, N) row-major [in, out] (the library's weights)
template <std::size_t K, std::size_t N>
void quantize(matrix<K, N>& w, const float* W) {
  detail::quantize_matrix(w.q, w.d, w.qsum, W, K, N, N, 1);
}
// w = Q8_0(Wtᵀ)                          Wt: (N, K) row-major [out, in], e.g. a tied embedding
//                                        E (V, D) used as the head: logits = h·Eᵀ, w = matrix<D, V>
template <std::size_t K, std::size_t N>
void quantize_transposed(matrix<K, N>& w, const float* Wt) {
  detail::quantize_matrix(w.q, w.d, w.qsum, Wt, K, N, 1, K);
}
// W[k, n] = qw[n, k] · dw[n, k/32]       W: (K, N) written
template <std::size_t K, std::size_t N>
void dequantize(float* W, const matrix<K, N>& w) {
  detail::dequantize(W, w.q, w.d, K, N);
}
// out[k] = w[k, n] = qw[n, k] · dw[n, k/32]    out: (K) written — column n (a table's row n: an
// embedding lookup); walks the packed layout directly (8 steps of 4 inputs per group, 64 B apart)
template <std::size_t K, std::size_t N>
constexpr void dequantize_column(float* out, const matrix<K, N>& w, std::size_t n) {
  constexpr std::size_t G = matrix<K, N>::groups;
  const std::int8_t* col = w.q + q_index(G, n, 0);
  const float* d = w.d + d_index(G, n, 0);
  for (std::size_t g = 0; g < G; ++g) {
    const float scale = d[g * block_cols];
    const std::size_t k0 = g * group_size, kn = K - k0 < group_size ? K - k0 : group_size;
    for (std::size_t i = 0; i < kn; ++i)
      out[k0 + i] = static_cast<float>(col[g * tile_bytes + i / step_inputs * step_bytes + i % step_inputs]) * scale;
  }
}
// From the canonical form:               q: (N, K) int8 row-major [out, in]   d: (N, G) float, G = ⌈K/32⌉
// Values outside [-127, 127] (i.e. -128) are clamped to -127.
template <std::size_t K, std::size_t N>
void pack(matrix<K, N>& w, const std::int8_t* q, const float* d) {
  detail::pack(w.q, w.d, w.qsum, q, d, K, N);
}
// To the canonical form:                 q: (N, K) written   d: (N, G) written
template <std::size_t K, std::size_t N>
void unpack(std::int8_t* q, float* d, const matrix<K, N>& w) {
  detail::unpack(q, d, w.q, w.d, K, N);
}

// ---------------------------------------------------------------- activations
// x[k] = qx[k] · dx[k/32]                x: (K) written
template <std::size_t K>
void dequantize(float* x, const vector<K>& v) {
  for (std::size_t k = 0; k < K; ++k) x[k] = static_cast<float>(v.q[k]) * v.d[k / group_size];
}

// ---------------------------------------------------------------- the scalar backend
// Always compiled; the reference the others are tested against, and the Cortex-M4 path (where the
// target has the Armv7E-M DSP instructions, __ARM_FEATURE_SIMD32, its sums use SMLAD: the same bits).
struct scalar {
  static constexpr const char* name = "scalar";
  static constexpr const char* instructions = "scalar int32 multiply-adds";  // (staticformer/cpu_report.hpp)
  // y: (N) written   x, w: views of a vector<K> and a matrix<K, N>   bias: (N) or nullptr
  static void matvec(float* y, const detail::vec_ref& x, const detail::mat_ref& w, const float* bias) {
#if defined(__ARM_FEATURE_SIMD32)
    detail::matvec_simd32<detail::simd32_acle>(y, x, w, bias);
#else
    detail::matvec_scalar(y, x, w, bias);
#endif
  }
  // q, u: (32·G) written   d: (G) written   x: (K)
  static void quantize(std::int8_t* q, std::uint8_t* u, float* d, const float* x, std::size_t K) {
    detail::quantize_scalar(q, u, d, x, K);
  }
};

}  // namespace sf::kernels::q8
