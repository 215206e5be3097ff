// The bf16 products' public entry points at run time, and their distance from the float product
// (test_gemm_bf16.cpp's program: see there; a unit of its own so that none takes long to compile).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "check.hpp"
#include "staticformer/kernels/gemm.hpp"

namespace k = sf::kernels;
using sf_test::bf16::rnd;

// The public entry points at run time are the native backend: same bits as the reference.
TEST(GemmBf16, EntryPoints) {
  constexpr std::size_t M = 37, N = 45, K = 70;
  static float A[M * K], B[K * N], Bt[N * K], bias[N], C1[M * N], C2[M * N];
  for (float& x : A) x = rnd();
  for (float& x : B) x = rnd();
  for (float& x : Bt) x = rnd();
  for (float& x : bias) x = rnd();
  k::gemm_nn_bf16<M, N, K>(C1, A, B, bias);
  k::ref::gemm_nn_bf16<M, N, K, K, N, N, false>(C2, A, B, bias);
  EXPECT_EQ(std::memcmp(C1, C2, sizeof C1), 0);
  k::gemm_nt_bf16<M, N, K, K, K, N, true>(C1, A, Bt);
  k::ref::gemm_nt_bf16<M, N, K, K, K, N, true>(C2, A, Bt);
  EXPECT_EQ(std::memcmp(C1, C2, sizeof C1), 0);
  static float At[K * M];
  for (float& x : At) x = rnd();
  k::gemm_tn_bf16<M, N, K>(C1, At, B);
  k::ref::gemm_tn_bf16<M, N, K, M, N, N, false>(C2, At, B);
  EXPECT_EQ(std::memcmp(C1, C2, sizeof C1), 0);
}

// What bf16 costs: against the float product of the same operands, every element is within
// 2·2^-8·Σ_k |a_k·b_k| + 64·2^-24·K·Σ|a_k b_k| (each operand's rounding moves a product by at most
// 2^-8 of itself, twice; then float summation) — and the bound is not loose by orders of
// magnitude (some element uses over a tenth of it).
TEST(GemmBf16, DistanceFromFloat) {
  constexpr std::size_t M = 64, N = 96, K = 160;
  static float A[M * K], B[K * N], C16[M * N], C32[M * N];
  for (float& x : A) x = rnd();
  for (float& x : B) x = rnd();
  k::gemm_nn_bf16<M, N, K>(C16, A, B);
  k::gemm_nn<M, N, K>(C32, A, B);
  double worst = 0;
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) {
      double mag = 0;
      for (std::size_t kk = 0; kk < K; ++kk) mag += std::fabs(double(A[m * K + kk]) * B[kk * N + n]);
      const double bound = 2 * std::ldexp(mag, -8) + 64 * std::ldexp(mag * K, -24);
      const double d = std::fabs(double(C16[m * N + n]) - C32[m * N + n]);
      EXPECT_LE(d, bound) << "(" << m << "," << n << ")";
      if (d / bound > worst) worst = d / bound;
    }
  std::printf("[ bf16 vs float ] worst distance %.3f of the bound\n", worst);
  EXPECT_GT(worst, 0.1);
}
