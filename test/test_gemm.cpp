// gemm_nn / gemm_nt / gemm_tn: every kernel × every backend this binary has (scalar
// always; AVX2 and AVX-512 when compiled for them) against a long-double reference on
// 157 shapes (a Latin square over sizes 1..128 plus model shapes with head-slice
// strides), Acc on and off, with and without bias. The tolerance and the guard checks are
// explained in gemm_check.hpp. Also: the public entry points in a constant expression,
// double on the scalar backend, and the public (native) dispatch at run time.
// One program: the backends' checks are in test/gemm/{scalar,avx2,avx512,neon}.cpp (one translation
// unit each, so that none takes long to compile), the rest here.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

#include "gemm_check.hpp"
#include "staticformer/kernels/gemm.hpp"
#include "staticformer/simd.hpp"

namespace {

// ---------------------------------------------------------------- constant evaluation
// A (2,3) = [[1,2,3],[4,5,6]], B (3,2) = [[1,0],[2,1],[0,3]]
constexpr bool gemm_nn_constexpr() {
  const float A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {1, 0, 2, 1, 0, 3}, bias[2] = {0.5f, -1};
  float C[4] = {};
  sf::kernels::gemm_nn<2, 2, 3>(C, A, B, bias);  // A·B + bias = [[5.5, 10], [14.5, 22]]
  return C[0] == 5.5f && C[1] == 10 && C[2] == 14.5f && C[3] == 22;
}
constexpr bool gemm_nt_constexpr() {
  const float A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {1, 0, 2, 1, 0, 3};  // B read as (2,3)
  float C[4] = {};
  sf::kernels::gemm_nt<2, 2, 3>(C, A, B);  // A·Bᵀ = [[7, 10], [16, 22]]
  return C[0] == 7 && C[1] == 10 && C[2] == 16 && C[3] == 22;
}
constexpr bool gemm_tn_constexpr() {
  const double A[6] = {1, 0, 2, 1, 0, 3};  // (3,2)
  double C[4] = {1, 1, 1, 1};
  sf::kernels::gemm_tn<2, 2, 3, 2, 2, 2, true>(C, A, A);  // C += Aᵀ·A = 1 + [[5, 2], [2, 10]]
  return C[0] == 6 && C[1] == 3 && C[2] == 3 && C[3] == 11;
}
static_assert(gemm_nn_constexpr(), "gemm_nn must run in a constant expression");
static_assert(gemm_nt_constexpr(), "gemm_nt must run in a constant expression");
static_assert(gemm_tn_constexpr(), "gemm_tn must run in a constant expression");

}  // namespace

TEST(gemm_constexpr, static_asserts_compiled) { SUCCEED(); }

// The public entry points at run time use the native backend and agree with the reference
// (bit for bit is not required: the same γ bound as above, here checked on a (T, D) head slice).
TEST(gemm_public, native_dispatch_head_slices) {
  constexpr std::size_t T = 24, D = 48, dk = 8, H = D / dk;
  static float Q[T * D], Kx[T * D], S[T * T], S_ref[T * T];
  for (std::size_t i = 0; i < T * D; ++i) Q[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  for (std::size_t i = 0; i < T * D; ++i) Kx[i] = static_cast<float>((i * 53) % 97) / 48.0f - 1.0f;
  for (std::size_t h = 0; h < H; ++h) {  // S = Q_h · K_hᵀ / per head
    sf::kernels::gemm_nt<T, T, dk, D, D, T>(S, Q + h * dk, Kx + h * dk);
    sf::kernels::ref::gemm_nt<T, T, dk, D, D, T, false>(S_ref, Q + h * dk, Kx + h * dk);
    // both sides in float: |S - S_ref| <= 2 γ(dk) Σ|q||k| <= 2 γ(dk) dk, since |q|, |k| <= 1
    constexpr double u = 0.5 * 1.1920928955078125e-7, gamma = dk * u / (1 - dk * u);
    for (std::size_t i = 0; i < T * T; ++i) ASSERT_NEAR(S[i], S_ref[i], 2 * gamma * dk) << "head " << h << ", element " << i;
  }
  std::printf("native backend: %s\n", sf::simd::native<float>::name);
}

// ---------------------------------------------------------------- the reference rounds like the tiles
// The naive reference (the constant-evaluation path) sums each element in k order, one FMA at a
// time, from C (accumulate) plus the bias: exactly the register tiles' arithmetic. So the native
// kernels and the reference agree bit for bit, on odd sizes, head-slice strides, K blocks (K >
// 64) and the copied-panel paths (M >= 96, row strides of 256 bytes) alike.
namespace {
float bits_a[256 * 256], bits_b[256 * 256], bits_c1[256 * 256], bits_c2[256 * 256], bits_bias[256];
void fill_bits(float* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = static_cast<float>(seed >> 8) / 8388608.0f - 1.0f;  // [-1, 1)
  }
}
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb, std::size_t ldc, bool Acc>
void expect_bit_identical(std::uint32_t seed) {
  namespace k = sf::kernels;
  fill_bits(bits_a, 256 * 256, seed);
  fill_bits(bits_b, 256 * 256, seed + 1);
  fill_bits(bits_bias, 256, seed + 2);
  auto run = [&](const char* name, auto native, auto ref) {
    fill_bits(bits_c1, 256 * 256, seed + 3);
    fill_bits(bits_c2, 256 * 256, seed + 3);
    native();
    ref();
    EXPECT_EQ(std::memcmp(bits_c1, bits_c2, sizeof bits_c1), 0)
        << name << " M=" << M << " N=" << N << " K=" << K << " lda=" << lda << " ldb=" << ldb << " ldc=" << ldc
        << " acc=" << Acc << ": the native kernel and the reference differ";
  };
  run("gemm_nn", [] { k::gemm_nn<M, N, K, lda, ldb, ldc, Acc>(bits_c1, bits_a, bits_b, bits_bias); },
      [] { k::ref::gemm_nn<M, N, K, lda, ldb, ldc, Acc>(bits_c2, bits_a, bits_b, bits_bias); });
  if constexpr (ldb >= K) {
    run("gemm_nt", [] { k::gemm_nt<M, N, K, lda, ldb, ldc, Acc>(bits_c1, bits_a, bits_b); },
        [] { k::ref::gemm_nt<M, N, K, lda, ldb, ldc, Acc>(bits_c2, bits_a, bits_b); });
  }
  if constexpr (lda >= M) {
    run("gemm_tn", [] { k::gemm_tn<M, N, K, lda, ldb, ldc, Acc>(bits_c1, bits_a, bits_b); },
        [] { k::ref::gemm_tn<M, N, K, lda, ldb, ldc, Acc>(bits_c2, bits_a, bits_b); });
  }
}
}  // namespace

TEST(gemm_public, reference_is_bit_identical_to_native) {
  expect_bit_identical<1, 1, 1, 1, 1, 1, false>(1);
  expect_bit_identical<5, 17, 3, 17, 17, 17, true>(2);
  expect_bit_identical<13, 33, 70, 70, 70, 33, false>(3);       // two K blocks
  expect_bit_identical<37, 65, 129, 129, 129, 65, true>(4);     // three K blocks, partial vectors
  expect_bit_identical<16, 16, 8, 48, 48, 64, false>(5);        // head slices: d_k = 8 of D = 48
  expect_bit_identical<96, 80, 64, 128, 128, 80, false>(6);     // copied B panel (256-byte row stride)
  expect_bit_identical<100, 50, 128, 128, 128, 50, true>(7);    // copied A blocks (tn), accumulate
  std::printf("native backend %s: the reference equals the kernels bit for bit\n", sf::simd::native<float>::name);
}
