// The bf16 products (kernels/gemm_bf16.hpp): every backend this binary has (portable always,
// AVX512-BF16 when compiled for it; skipped, saying so, otherwise) against the naive reference
// on odd sizes, sizes past every block (MC rows, NC columns, KC of k), row strides wider than a
// row, accumulate and overwrite, with and without bias — bit for bit (the kernels sum in the
// reference's order; random operands never reach the subnormal range where vdpbf16ps flushes).
// Also: the rounding itself, the public entry points in a constant expression and at run time,
// and the distance of a bf16 product from the float product (the precision the policy trades).
// One program: the AVX512-BF16 backend's check (test/gemm_bf16/avx512.cpp) and the entry points
// (test/gemm_bf16/entry_points.cpp) are units of their own, so that none takes long to compile.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "staticformer/kernels/gemm.hpp"
#include "gemm_bf16/check.hpp"
#include "staticformer/kernels/gemm_bf16.hpp"

namespace {
namespace k = sf::kernels;

// ---------------------------------------------------------------- rounding
TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(k::round_bf16(1.0f), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even → 1; 1 + 3·2^-8 → 1 + 2^-6
  EXPECT_EQ(k::round_bf16(1.0f + 0.00390625f), 1.0f);
  EXPECT_EQ(k::round_bf16(1.0f + 3 * 0.00390625f), 1.0f + 0.015625f);
  EXPECT_EQ(k::round_bf16(1.0f + 0.00390625f + 1e-6f), 1.0f + 0.0078125f);  // just above halfway: up
  EXPECT_EQ(k::round_bf16(-3.0f), -3.0f);
  EXPECT_TRUE(std::isnan(k::round_bf16(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(k::round_bf16(std::bit_cast<float>(0x7fffffffu))));  // a NaN that would carry into the sign
  EXPECT_TRUE(std::isnan(k::round_bf16(std::bit_cast<float>(0x7f800001u))));  // a signalling NaN
  EXPECT_EQ(k::round_bf16(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_EQ(k::round_bf16(std::numeric_limits<float>::max()), std::numeric_limits<float>::infinity());
  static_assert(k::round_bf16(0.1f) == 0.10009765625f, "bf16 rounding in a constant expression");
}

// ---------------------------------------------------------------- constant evaluation
constexpr bool nn_bf16_constexpr() {
  // A (2,3), B (3,2) of small integers: exact in bf16 and in the float sums
  const float A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {1, 0, 2, 1, 0, 3}, bias[2] = {0.5f, -1};
  float C[4] = {};
  k::gemm_nn_bf16<2, 2, 3>(C, A, B, bias);  // [[5.5, 10], [14.5, 22]]
  float D[4] = {1, 1, 1, 1};
  k::gemm_tn_bf16<2, 2, 3, 2, 2, 2, true>(D, B, B);  // 1 + BᵀB = 1 + [[5, 2], [2, 10]]
  float E[4] = {};
  k::gemm_nt_bf16<2, 2, 3>(E, A, A);  // A·Aᵀ = [[14, 32], [32, 77]]
  return C[0] == 5.5f && C[1] == 10 && C[2] == 14.5f && C[3] == 22 && D[0] == 6 && D[1] == 3 && D[3] == 11 &&
         E[0] == 14 && E[1] == 32 && E[3] == 77;
}
static_assert(nn_bf16_constexpr(), "the bf16 products must run in a constant expression");
// rounding happens: 1.001 is 1 in bf16, so 1.001·1.001 is 1
constexpr bool rounds_operands() {
  const float a[1] = {1.001f};
  float c[1] = {};
  k::gemm_nn_bf16<1, 1, 1>(c, a, a);
  return c[0] == 1.0f;
}
static_assert(rounds_operands(), "the bf16 products multiply bf16-rounded operands");

}  // namespace

using sf_test::bf16::check_backend;
using sf_test::bf16::name;
using sf_test::bf16::op;
using sf_test::bf16::rnd;

TEST(GemmBf16, PortableMatchesReference) { check_backend<k::bf16_portable>("bf16 portable"); }

// The same products with a runner installed — re-layout split over the tasks' rows and columns,
// column panels split over tasks — give the same bits as without (nn, nt, tn; two row blocks).
TEST(GemmBf16, SameBitsOnAnyTaskCount) {
  constexpr std::size_t M = 300, N = 300, K = 200;
  static float A[M * K], B[K * N], C1[M * N], C2[M * N];
  for (float& x : A) x = rnd();
  for (float& x : B) x = rnd();
  // a stand-in runner that runs its 3 tasks one after the other, in reverse
  static unsigned char buf[3][sf::parallel::task_buffer_bytes];
  sf::parallel::runner r;
  r.tasks = 3;
  r.run = [](const sf::parallel::runner& self, void (*task)(void*, std::size_t), void* ctx) {
    for (std::size_t i = self.tasks; i-- > 0;) task(ctx, i);
  };
  r.buffer = [](const sf::parallel::runner&, std::size_t i) -> void* { return buf[i]; };
  for (int o = 0; o < 3; ++o) {
    const bool at = o == 2, bc = o == 1;  // nn, nt (B read as (N,K)), tn (A read as (K,M))
    const std::size_t lda = at ? M : K, ldb = bc ? K : N;
    k::bf16_detail::gemm_any<k::bf16_native>(at, bc, C1, N, A, lda, B, ldb, M, N, K, false, nullptr);
    const sf::parallel::runner* saved = sf::parallel::current;
    sf::parallel::current = &r;
    k::bf16_detail::gemm_any<k::bf16_native>(at, bc, C2, N, A, lda, B, ldb, M, N, K, false, nullptr);
    sf::parallel::current = saved;
    EXPECT_EQ(std::memcmp(C1, C2, sizeof C1), 0) << name(static_cast<op>(o));
  }
}
