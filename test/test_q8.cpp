// Q8_0 matrix-vector kernels (kernels/q8.hpp): every q8 backend this binary has (scalar always;
// AVX2, AVX-VNNI, AVX-512BW, AVX-512 VNNI when compiled for them; the Cortex-M4 DSP kernel with
// its two instructions modelled in C) against the scalar reference,
// bit for bit, on 77 shapes × 3 data sets, with and without bias; the scalar reference against
// formulas written in the test (q8_check.hpp explains each check); the public (native) entry
// points and the M-row convenience.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "q8_check.hpp"
#include "staticformer/kernels/q8.hpp"

namespace {
namespace q8 = sf::kernels::q8;
namespace c = sf_test::q8c;

// The public templates with backend B on a few shapes, with weights_in::cache and ::memory: the
// same bits as with the scalar backend (the kernels behind them, matvec_stream included, are
// checked on all 77 shapes by all_backend).
template <class B, std::size_t K, std::size_t N>
int public_templates(std::uint64_t seed) {
  static float W[K * N], x[K], bias[N], y[N], y_ref[N], y_mem[N], y_rows[N];
  static q8::matrix<K, N> w;
  static q8::vector<K> v, v_ref;
  c::fill_weights(W, K, N, 1, seed);
  c::fill_x(x, K, 1, seed + 1);
  c::fill_bias(bias, N, seed + 2);
  q8::quantize(w, W);
  q8::quantize_with<B>(v, x);
  q8::quantize_with<q8::scalar>(v_ref, x);
  q8::matvec_with<B>(y, v, w, bias);
  q8::matvec_with<q8::scalar>(y_ref, v_ref, w, bias);
  q8::matvec_with<B>(y_mem, v, w, bias, q8::weights_in::memory);  // (matvec_stream where B has one)
  q8::matvec_rows_with<B>(y_rows, N, &v, 1, w, bias, q8::weights_in::memory);
  return (std::memcmp(v.q, v_ref.q, sizeof v.q) != 0) + (std::memcmp(v.d, v_ref.d, sizeof v.d) != 0) +
         (std::memcmp(y, y_ref, sizeof y) != 0) + (std::memcmp(y_mem, y_ref, sizeof y) != 0) +
         (std::memcmp(y_rows, y_ref, sizeof y) != 0);
}

template <class B>
void expect_backend() {
  const c::result r = c::all_backend<B>();
  EXPECT_EQ(r.bad, 0) << B::name << ": " << r.bad << " of " << r.checks << " checks failed; first: " << r.first;
  std::printf(
      "[ q8 %-12s ] %d checks against scalar (%zu shapes x %d data sets, bias on/off, special values): %d failed\n",
      B::name, r.checks, c::n_shapes, c::n_kinds, r.bad);
  EXPECT_EQ((public_templates<B, 33, 17>(1) + public_templates<B, 100, 65>(2) + public_templates<B, 256, 100>(3)), 0)
      << B::name << ": quantize_with<B> / matvec_with<B> differ from scalar";
}

// The layout is what the header comment says (one element each way).
static_assert(q8::q_index(3, 0, 0) == 0 && q8::q_index(3, 1, 0) == 4 && q8::q_index(3, 0, 1) == 1 &&
              q8::q_index(3, 0, 4) == 64 && q8::q_index(3, 0, 32) == 512 && q8::q_index(3, 16, 0) == 3 * 512);
static_assert(q8::d_index(3, 17, 2) == (1 * 3 + 2) * 16 + 1);
static_assert(sizeof(q8::matrix<65, 33>) == 3 * 3 * 512 + 3 * 3 * 16 * 4 + 3 * 3 * 16 * 2 + 32);  // + alignment padding
static_assert(sizeof(q8::vector<40>) == 64 + 64 + 64);
}  // namespace

TEST(q8_reference, scalar_against_formulas) {
  const c::result r = c::all_reference();
  EXPECT_EQ(r.bad, 0) << r.bad << " of " << r.checks << " checks failed; first: " << r.first;
  std::printf("[ q8 reference ] %d checks; worst quantize->dequantize error %.9f d\n", r.checks, r.worst_quant);
}

TEST(q8_backend, scalar) { expect_backend<q8::scalar>(); }
TEST(q8_backend, simd32_model) {
  expect_backend<c::simd32_model>();
}  // the Cortex-M4 kernel, instructions modelled in C
#if defined(SF_Q8_HAVE_AVX2)
TEST(q8_backend, avx2) { expect_backend<q8::avx2>(); }
#endif
#if defined(SF_Q8_HAVE_AVX_VNNI)
TEST(q8_backend, avx_vnni) { expect_backend<q8::avx_vnni>(); }
#endif
#if defined(SF_Q8_HAVE_AVX512BW)
TEST(q8_backend, avx512bw) { expect_backend<q8::avx512bw>(); }
#endif
#if defined(SF_Q8_HAVE_AVX512_VNNI)
TEST(q8_backend, avx512_vnni) { expect_backend<q8::avx512_vnni>(); }
#endif
#if defined(SF_Q8_HAVE_NEON)
TEST(q8_backend, neon) { expect_backend<q8::neon>(); }
#endif
#if defined(SF_Q8_HAVE_NEON_DOT)
TEST(q8_backend, neon_dot) { expect_backend<q8::neon_dot>(); }
#endif

// The public entry points (native backend) and matmul: each row quantized into the scratch vector,
// then matvec; the same bits as doing that by hand with the scalar backend.
TEST(q8_public, native_matvec_and_matmul) {
  constexpr std::size_t M = 3, K = 72, N = 40;
  static float W[K * N], X[M * K], bias[N], Y[M * N], Y_ref[M * N];
  static q8::matrix<K, N> w;
  static q8::vector<K> scratch, v;
  c::fill_weights(W, K, N, 0, 11);
  c::fill_x(X, M * K, 1, 12);
  c::fill_bias(bias, N, 13);
  q8::quantize(w, W);
  q8::matmul<M>(Y, X, w, bias, scratch);
  for (std::size_t m = 0; m < M; ++m) {
    q8::quantize_with<q8::scalar>(v, X + m * K);
    q8::matvec_with<q8::scalar>(Y_ref + m * N, v, w, bias);
  }
  EXPECT_EQ(std::memcmp(Y, Y_ref, sizeof Y), 0) << "matmul (native " << q8::native::name << ") differs from scalar";
  q8::quantize(v, X);
  q8::matvec(Y, v, w);
  q8::matvec_with<q8::scalar>(Y_ref, v, w);
  EXPECT_EQ(std::memcmp(Y, Y_ref, N * sizeof(float)), 0) << "matvec (native " << q8::native::name << ") differs";
  std::printf("q8 native backend: %s\n", q8::native::name);
}

// matvec_rows (the prefill's int8 products: up to rows_per_pass rows per pass over the weights):
// every backend, 1 to rows_per_pass rows, odd shapes, bias on and off, an output row stride wider
// than N — the same bits as the scalar matvec of each row, and nothing written between rows.
template <class B, std::size_t K, std::size_t N>
int rows_against_matvec(std::uint64_t seed) {
  constexpr std::size_t R = q8::rows_per_pass<B>, ldy = N + 3;
  static float W[K * N], X[R * K], bias[N], Y[R * ldy], Y_ref[R * ldy];
  static q8::matrix<K, N> w;
  static q8::vector<K> v[R];
  c::fill_weights(W, K, N, 1, seed);
  c::fill_x(X, R * K, 1, seed + 1);
  c::fill_bias(bias, N, seed + 2);
  q8::quantize(w, W);
  for (std::size_t r = 0; r < R; ++r) q8::quantize_with<q8::scalar>(v[r], X + r * K);
  int bad = 0;
  for (std::size_t rows = 1; rows <= R; ++rows)
    for (const float* b : {static_cast<const float*>(nullptr), static_cast<const float*>(bias)}) {
      for (std::size_t i = 0; i < R * ldy; ++i) Y[i] = Y_ref[i] = -7.0f;
      q8::matvec_rows_with<B>(Y, ldy, v, rows, w, b);
      for (std::size_t r = 0; r < rows; ++r) q8::matvec_with<q8::scalar>(Y_ref + r * ldy, v[r], w, b);
      bad += std::memcmp(Y, Y_ref, sizeof Y) != 0;
    }
  return bad;
}
template <class B>
void expect_rows() {
  const int bad = rows_against_matvec<B, 33, 17>(1) + rows_against_matvec<B, 64, 64>(2) +
                  rows_against_matvec<B, 100, 65>(3) + rows_against_matvec<B, 256, 100>(4) +
                  rows_against_matvec<B, 128, 512>(5) + rows_against_matvec<B, 7, 3>(6);
  EXPECT_EQ(bad, 0) << B::name << ": matvec_rows differs from matvec row by row";
  std::printf("[ q8 %-12s ] matvec_rows, up to %zu rows per pass, 6 shapes, bias on/off: %d checks failed\n", B::name,
              q8::rows_per_pass<B>, bad);
}
TEST(q8_rows, scalar) { expect_rows<q8::scalar>(); }
#if defined(SF_Q8_HAVE_AVX512_VNNI)
TEST(q8_rows, avx512_vnni) { expect_rows<q8::avx512_vnni>(); }
#else
TEST(q8_rows, avx512_vnni) { GTEST_SKIP() << "not compiled for AVX512-VNNI"; }
#endif
TEST(q8_rows, native) { expect_rows<q8::native>(); }

// -128 in the canonical form is clamped to -127 by pack (the kernels rely on |q| <= 127).
TEST(q8_public, pack_clamps_minus_128) {
  constexpr std::size_t K = 5, N = 2;
  static q8::matrix<K, N> w;
  const std::int8_t q[N * K] = {-128, 1, 2, 3, 4, 5, 6, 7, 8, -128};
  const float d[N] = {0.5f, 0.25f};
  std::int8_t q2[N * K];
  float d2[N];
  q8::pack(w, q, d);
  q8::unpack(q2, d2, w);
  EXPECT_EQ(q2[0], -127);
  EXPECT_EQ(q2[9], -127);
  EXPECT_EQ(w.qsum[0], -127 + 1 + 2 + 3 + 4);
  EXPECT_EQ(d2[1], 0.25f);
}

// dequantize_column (the embedding lookup of the int8 decoder) gives column n of dequantize's
// matrix exactly, on odd sizes (K not a multiple of 32, N not of 16).
template <std::size_t K, std::size_t N>
void expect_columns() {
  static float W[K * N], full[K * N], col[K];
  static q8::matrix<K, N> w;
  for (std::size_t i = 0; i < K * N; ++i) W[i] = static_cast<float>((i * 37 + 11) % 101) / 50.0f - 1.0f;
  q8::quantize(w, W);
  q8::dequantize(full, w);
  for (std::size_t n = 0; n < N; ++n) {
    q8::dequantize_column(col, w, n);
    for (std::size_t k = 0; k < K; ++k) ASSERT_EQ(col[k], full[k * N + n]) << "K " << K << " N " << N << " n " << n;
  }
}
TEST(q8_public, dequantize_column_is_a_column_of_dequantize) {
  expect_columns<1, 1>();
  expect_columns<40, 17>();
  expect_columns<64, 65>();
  expect_columns<100, 33>();
}
