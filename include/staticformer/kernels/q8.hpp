// staticformer/kernels/q8.hpp — int8 groupwise (Q8_0) matrix-vector products for decoding.
//
// Weights W (K, N) [in, out] (y = x·W) are quantized per output column n and group g of 32
// consecutive inputs (the last group of an odd K padded with zeros) to int8 qw and one float
// scale dw[n, g] = amax/127; an activation x (K) is quantized the same way per group, "on the
// fly", to int8 qx and dx[g]:
//
//   q = round_half_away(clamp(v · 127/amax, -127, 127)),   d = amax / 127,   v ≈ q·d
//
// and the product is defined exactly, so that every backend gives the same bits as the scalar
// reference (q8/common.hpp):
//
//   y[n] = (fma chain over g = 0..G-1 of  (float) Σ_{k in g} qw[n,k]·qx[k]  ×  (dw[n,g]·dx[g]))  (+ bias[n])
//
//   acc = 0; for g in order: acc = fma((float) isum, dw·dx rounded to float, acc);  y = acc + bias
//
// API (namespace sf::kernels::q8; storage is the caller's, static in practice, no heap):
//
//   matrix<K, N> w;                       packed int8 values, float scales, int16 group sums
//   vector<K> v;                          a quantized activation (int8, +128 copy, scales)
//   quantize(w, W);                       W: (K, N) row-major [in, out]
//   quantize_transposed(w, Wt);           Wt: (N, K) [out, in], e.g. a tied embedding E (V, D)
//                                         as the head (logits = h·Eᵀ): matrix<D, V>
//   dequantize(W, w);  dequantize(x, v);  back to float (tests, quality checks)
//   pack(w, q, d);  unpack(q, d, w);      canonical form: q (N, K) int8 [out, in], d (N, ⌈K/32⌉)
//   quantize(v, x);                       x: (K) floats → v (once per activation, shared by
//                                         the matrices that read it: Q, K, V)
//   matvec(y, v, w, bias[, where]);       y: (N) = x·W (+ bias (N), or nullptr); where =
//                                         weights_in::memory: weights past the caches, read in
//                                         fewer streams (matvec_stream, x86 backends)
//   matvec_rows(y, ldy, vs, n, w, bias);  y: (n, N), n ≤ rows_per_pass<native> quantized rows at
//                                         once (one pass over W on avx512_vnni; the same bits)
//   matmul<M>(y, x, w, bias, scratch);    y: (M, N), x: (M, K): quantize each row into scratch
//   *_with<Backend>(...)                  a chosen backend (tests check each against scalar)
//
// Backends (one struct each, compiled when the target has the instructions):
//
//   | backend       | header          | compiled when (macro)                                   | inner op        |
//   |---------------|-----------------|---------------------------------------------------------|-----------------|
//   | `scalar`      | q8/common.hpp   | always (the reference; the Cortex-M4 path)              | int32 MAC       |
//   | `avx512_vnni` | q8/avx512.hpp   | AVX-512F/BW + AVX512-VNNI (SF_Q8_HAVE_AVX512_VNNI)      | vpdpbusd zmm    |
//   | `avx512bw`    | q8/avx512.hpp   | AVX-512F/BW (SF_Q8_HAVE_AVX512BW)                       | vpmaddubsw zmm  |
//   | `avx_vnni`    | q8/avx2.hpp     | AVX2 + FMA + AVX-VNNI (SF_Q8_HAVE_AVX_VNNI)             | vpdpbusd ymm    |
//   | `avx2`        | q8/avx2.hpp     | AVX2 + FMA (SF_Q8_HAVE_AVX2)                            | vpmaddubsw ymm  |
//   | `neon_dot`    | q8/neon.hpp     | AArch64 + dot product (SF_Q8_HAVE_NEON_DOT)             | sdot            |
//   | `neon`        | q8/neon.hpp     | AArch64 (SF_Q8_HAVE_NEON)                               | smull/sadalp    |
//
// `native` is the first of avx512_vnni, avx_vnni, avx512bw, avx2, neon_dot, neon, scalar that
// exists (scalar under SF_SIMD_FORCE_SCALAR). neon_dot also exists, with g++, when the program
// defines SF_Q8_ENABLE_DOTPROD before the first include (the kernels alone are then compiled for
// armv8.2-a+dotprod; for CPUs known to have it). On an Armv7E-M target (Cortex-M4/M7), the scalar
// backend's integer sums use SMLAD. The storage layout (q8/common.hpp) is the same for
// all of them: [column block of 16][group][step of 4 inputs][16 columns][4 inputs].
//
// A backend's passes keep all accumulators of a few column blocks in registers (AVX-512: 4
// blocks = 64 columns; AVX2, NEON dot: 2; plain NEON: 1) and take the sizes at run time, so one
// function per backend serves every shape. The products of one program may run concurrently:
// the kernels keep no state.
//
// Speed (sf_bench_kernels, q8/* and float/gemv/*; 2-core AMD EPYC (Zen 4) VM, g++ 12, one core,
// the other one busy): avx512_vnni takes 19 ns at (K, N) = (64, 64), 57 ns at (256, 64), 68 ns at
// (64, 256) — 2.8, 6.6 and 5.4 times faster than the float gemv; the 64 KiB matrices (128, 512)
// and (512, 128) run from L2, about 3 times faster than float.
#pragma once
#include <cstddef>
#include <cstdint>

#include "staticformer/kernels/q8/avx2.hpp"
#include "staticformer/kernels/q8/avx512.hpp"
#include "staticformer/kernels/q8/common.hpp"
#include "staticformer/kernels/q8/neon.hpp"
#include "staticformer/kernels/weights_in.hpp"

namespace sf::kernels::q8 {

namespace detail {
#if defined(SF_SIMD_FORCE_SCALAR)
using native_backend = scalar;
#elif defined(SF_Q8_HAVE_AVX512_VNNI)
using native_backend = avx512_vnni;
#elif defined(SF_Q8_HAVE_AVX_VNNI)
using native_backend = avx_vnni;
#elif defined(SF_Q8_HAVE_AVX512BW)
using native_backend = avx512bw;
#elif defined(SF_Q8_HAVE_AVX2)
using native_backend = avx2;
#elif defined(SF_Q8_HAVE_NEON_DOT)
using native_backend = neon_dot;
#elif defined(SF_Q8_HAVE_NEON)
using native_backend = neon;
#else
using native_backend = scalar;
#endif
}  // namespace detail

// The fastest backend this translation unit was compiled for.
using native = detail::native_backend;

// Where a caller's weights are between two uses of a matrix (matvec's `where`; kernels/weights_in.hpp).
using sf::kernels::weights_in;

// v = Q8_0(x) with a chosen backend (all give the same bits).
//   v: written   x: (K)
template <class Backend, std::size_t K>
void quantize_with(vector<K>& v, const float* x) {
  Backend::quantize(v.q, v.u, v.d, x, K);
}
// v = Q8_0(x)                             v: written   x: (K)
template <std::size_t K>
void quantize(vector<K>& v, const float* x) {
  quantize_with<native>(v, x);
}

// y = x·W (+ bias) with a chosen backend (all give the same bits; see the header comment).
//   y: (N) written   x: a quantized activation   w: the quantized weights   bias: (N) or nullptr
// Naive reference: detail::matvec_scalar (the scalar backend).
// where = weights_in::memory (weights past the caches between two uses, e.g. a decoder step of a
// model of many MiB): a backend with matvec_stream (the x86 ones) reads the matrix in fewer streams
// (one column block per pass), which the prefetchers follow; the same bits.
template <class Backend, std::size_t K, std::size_t N>
void matvec_with(float* y, const vector<K>& x, const matrix<K, N>& w, const float* bias = nullptr,
                 weights_in where = weights_in::cache) {
  if constexpr (requires { &Backend::matvec_stream; }) {
    if (where == weights_in::memory) return Backend::matvec_stream(y, detail::ref(x), detail::ref(w), bias);
  }
  Backend::matvec(y, detail::ref(x), detail::ref(w), bias);
}
// y = x·W (+ bias)                        y: (N) written   x, w: quantized   bias: (N) or nullptr
template <std::size_t K, std::size_t N>
void matvec(float* y, const vector<K>& x, const matrix<K, N>& w, const float* bias = nullptr,
            weights_in where = weights_in::cache) {
  matvec_with<native>(y, x, w, bias, where);
}

// y_r = x_r·W (+ bias) for `rows` quantized activations x_0 .. x_{rows-1} at once (rows ≤
// rows_per_pass<Backend>): one pass over the weights for all of them where the backend has one
// (avx512_vnni), else matvec row by row. The same bits as matvec of each row, either way.
//   y: (rows, N) written, row stride ldy   x: rows quantized activations   bias: (N) or nullptr
template <class Backend>
inline constexpr std::size_t rows_per_pass = [] {
  if constexpr (requires { Backend::max_rows; }) return Backend::max_rows;
  else return std::size_t{1};
}();
template <class Backend, std::size_t K, std::size_t N>
void matvec_rows_with(float* y, std::size_t ldy, const vector<K>* x, std::size_t rows, const matrix<K, N>& w,
                      const float* bias = nullptr, weights_in where = weights_in::cache) {
  if (rows == 1) return matvec_with<Backend>(y, x[0], w, bias, where);
  if constexpr (rows_per_pass<Backend> > 1) {
    detail::vec_ref xr[rows_per_pass<Backend>];
    for (std::size_t r = 0; r < rows; ++r) xr[r] = detail::ref(x[r]);
    Backend::matvec_rows(y, ldy, xr, rows, detail::ref(w), bias);
  } else {
    for (std::size_t r = 0; r < rows; ++r) matvec_with<Backend>(y + r * ldy, x[r], w, bias);
  }
}
template <std::size_t K, std::size_t N>
void matvec_rows(float* y, std::size_t ldy, const vector<K>* x, std::size_t rows, const matrix<K, N>& w,
                 const float* bias = nullptr, weights_in where = weights_in::cache) {
  matvec_rows_with<native>(y, ldy, x, rows, w, bias, where);
}

// Y = X·W (+ bias) row by row: each row of X quantized into `scratch`, then matvec.
//   y: (M, N) written, row stride N   x: (M, K) row stride K   bias: (N) or nullptr
//   scratch: caller's storage for one quantized row (its contents are overwritten)
template <class Backend, std::size_t M, std::size_t K, std::size_t N>
void matmul_with(float* y, const float* x, const matrix<K, N>& w, const float* bias, vector<K>& scratch) {
  for (std::size_t m = 0; m < M; ++m) {
    quantize_with<Backend>(scratch, x + m * K);
    matvec_with<Backend>(y + m * N, scratch, w, bias);
  }
}
template <std::size_t M, std::size_t K, std::size_t N>
void matmul(float* y, const float* x, const matrix<K, N>& w, const float* bias, vector<K>& scratch) {
  matmul_with<native, M>(y, x, w, bias, scratch);
}

}  // namespace sf::kernels::q8
