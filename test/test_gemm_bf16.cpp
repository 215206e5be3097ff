// The bf16 products (kernels/gemm_bf16.hpp): every backend this binary has (portable always,
// AVX512-BF16 when compiled for it; skipped, saying so, otherwise) against the naive reference
// on odd sizes, sizes past every block (MC rows, NC columns, KC of k), row strides wider than a
// row, accumulate and overwrite, with and without bias — bit for bit (the kernels sum in the
// reference's order; random operands never reach the subnormal range where vdpbf16ps flushes).
// Also: the rounding itself, the public entry points in a constant expression and at run time,
// and the distance of a bf16 product from the float product (the precision the policy trades).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "staticformer/kernels/gemm.hpp"
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

// ---------------------------------------------------------------- run-time: backends vs reference
enum class op { nn, nt, tn };
const char* name(op o) { return o == op::nn ? "nn" : o == op::nt ? "nt" : "tn"; }

struct shape {
  std::size_t M, N, K, pad_a, pad_b, pad_c;
  bool acc, bias;
};

std::uint32_t rng_state = 12345;
float rnd() {  // uniform in (-1, 1), with a spread of magnitudes
  rng_state = rng_state * 1664525u + 1013904223u;
  const float u = static_cast<float>(rng_state >> 8) / 16777216.0f * 2 - 1;
  return (rng_state & 0x30u) == 0 ? u * 37.0f : u;
}

// C (M,N) via backend Impl and via the reference, from the same operands; returns the number of
// elements that differ (bits) and checks that the padding of C is untouched.
template <class Impl>
std::size_t differ(op o, const shape& s) {
  const bool at = o == op::tn, bc = o == op::nt;
  const std::size_t arows = at ? s.K : s.M, acols = at ? s.M : s.K, lda = acols + s.pad_a;
  const std::size_t brows = bc ? s.N : s.K, bcols = bc ? s.K : s.N, ldb = bcols + s.pad_b;
  const std::size_t ldc = s.N + s.pad_c;
  std::vector<float> A(arows * lda + 1), B(brows * ldb + 1), bias(s.N), C0(s.M * ldc + 1);
  for (float& x : A) x = rnd();
  for (float& x : B) x = rnd();
  for (float& x : bias) x = rnd();
  for (float& x : C0) x = rnd();
  std::vector<float> C1 = C0, C2 = C0;
  const float* bp = s.bias && o == op::nn ? bias.data() : nullptr;
  k::bf16_detail::gemm_any<Impl>(at, bc, C1.data(), ldc, A.data(), lda, B.data(), ldb, s.M, s.N, s.K, s.acc, bp);
  k::ref::detail::product_bf16(C2.data(), A.data(), B.data(), bp, s.M, s.N, s.K, ldc, at ? 1 : lda, at ? lda : 1,
                               bc ? 1 : ldb, bc ? ldb : 1, s.acc);
  std::size_t bad = 0;
  for (std::size_t m = 0; m < s.M; ++m)
    for (std::size_t n = 0; n < ldc; ++n) {
      const std::size_t i = m * ldc + n;
      if (std::memcmp(&C1[i], &C2[i], sizeof(float)) != 0) {
        if (bad == 0)
          ADD_FAILURE() << name(o) << " M=" << s.M << " N=" << s.N << " K=" << s.K << " acc=" << s.acc
                        << " bias=" << (bp != nullptr) << ": first difference at (" << m << "," << n << "): " << C1[i]
                        << " vs reference " << C2[i] << (n >= s.N ? " (padding of C overwritten)" : "");
        ++bad;
      }
    }
  if (std::memcmp(&C1[s.M * ldc], &C0[s.M * ldc], sizeof(float)) != 0) ADD_FAILURE() << "wrote past C";
  return bad;
}

std::vector<shape> shapes() {
  std::vector<shape> v;
  const std::size_t sizes[] = {1, 2, 3, 5, 7, 15, 16, 17, 31, 33, 63, 64, 65, 97};
  std::size_t i = 0;
  for (std::size_t M : sizes)
    for (std::size_t N : {sizes[i % 14], sizes[(i + 5) % 14], sizes[(i + 9) % 14]}) {
      const std::size_t K = sizes[(i * 7 + 3) % 14];
      v.push_back({M, N, K, i % 3, (i + 1) % 4, i % 2, i % 2 == 1, i % 3 != 0});
      ++i;
    }
  // past the blocks: rows > MC (192), columns > NC (512), k > KC (256), odd k across a block
  v.push_back({200, 37, 300, 1, 0, 0, false, true});
  v.push_back({13, 530, 19, 0, 3, 2, true, true});
  v.push_back({7, 29, 513, 2, 1, 0, true, false});
  v.push_back({385, 70, 257, 0, 0, 1, false, true});
  // model shapes: (B·T, D)·(D, 3D), (B·T, F)·(F, D), a head slice stride
  v.push_back({512, 384, 128, 0, 0, 0, false, true});
  v.push_back({128, 64, 256, 0, 0, 0, true, true});
  v.push_back({64, 32, 32, 96, 96, 0, false, false});
  return v;
}

template <class Impl>
void check_backend(const char* backend) {
  std::size_t n = 0, bad = 0;
  for (op o : {op::nn, op::nt, op::tn})
    for (const shape& s : shapes()) {
      bad += differ<Impl>(o, s);
      ++n;
    }
  std::printf("[ %s ] %zu products, %zu elements differ from the reference\n", backend, n, bad);
  EXPECT_EQ(bad, 0u);
}

TEST(GemmBf16, PortableMatchesReference) { check_backend<k::bf16_portable>("bf16 portable"); }

TEST(GemmBf16, Avx512MatchesReference) {
#if defined(SF_HAVE_AVX512_BF16)
  check_backend<k::bf16_avx512>("bf16 avx512");
#else
  GTEST_SKIP() << "this binary was not compiled for AVX512-BF16 (vdpbf16ps): build with -march=native on a CPU "
                  "with avx512_bf16, or -mavx512bf16 -mavx512bw";
#endif
}

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

}  // namespace
