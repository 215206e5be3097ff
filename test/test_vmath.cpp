// On every backend of this binary: the backend's own operations on exact cases; vexp, vtanh
// and verf against the C library over the ranges the model uses (dense scans, up to 2 million
// points each) and on special values; the row helpers (softmax, GELU) against double
// references. Also the scalar backend's versions in a constant expression.
// Bounds: see vmath_check.hpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>

#include "staticformer/kernels/vmath.hpp"
#include "vmath_check.hpp"

using sf_test::fn;

// The scalar backend is constexpr: the same algorithms at compile time.
// (brackets of ±1.5e-7 around e, tanh(0.5) = 0.4621171573, erf(1) = 0.8427007929)
static_assert(sf::simd::vexp<sf::simd::scalar<float>>(1.0f) > 2.7182816 &&
              sf::simd::vexp<sf::simd::scalar<float>>(1.0f) < 2.7182821);
static_assert(sf::simd::vtanh<sf::simd::scalar<float>>(0.5f) > 0.4621170 &&
              sf::simd::vtanh<sf::simd::scalar<float>>(0.5f) < 0.4621173);
static_assert(sf::simd::verf<sf::simd::scalar<float>>(1.0f) > 0.8427006 &&
              sf::simd::verf<sf::simd::scalar<float>>(1.0f) < 0.8427009);

namespace {
template <class V>
void check_scan(fn f, const char* name, double lo, double hi, std::size_t n, std::int64_t max_ulp, double max_abs) {
  const sf_test::scan_result r = sf_test::scan<V>(f, lo, hi, n);
  std::printf("[ %-6s %-4s ] [%g, %g] %zu points: max %lld ulp (x = %g), max abs %.3g (x = %g)\n", V::name, name, lo,
              hi, r.points, static_cast<long long>(r.max_ulp), r.x_ulp, r.max_abs, r.x_abs);
  EXPECT_LE(r.max_ulp, max_ulp) << V::name << " " << name << " at x = " << r.x_ulp;
  if (max_abs > 0) {
    EXPECT_LE(r.max_abs, max_abs) << V::name << " " << name << " at x = " << r.x_abs;
  }
}

template <class V>
void check_backend() {
  check_scan<V>(fn::exp, "exp", -87.3, 88.7, 2000001, 1, 0);
  check_scan<V>(fn::exp, "exp", -103.9, -87.3, 200001, 1, 0);  // subnormal results
  check_scan<V>(fn::exp, "exp", -1, 1, 200001, 1, 0);
  check_scan<V>(fn::tanh, "tanh", -20, 20, 2000001, 1, 1e-7);
  check_scan<V>(fn::tanh, "tanh", -0.01, 0.01, 200001, 1, 1e-7);
  check_scan<V>(fn::erf, "erf", -6, 6, 2000001, 2, sf_test::erf_abs_bound<V>);
  check_scan<V>(fn::erf, "erf", -0.01, 0.01, 200001, 2, sf_test::erf_abs_bound<V>);
  EXPECT_EQ(sf_test::special_values<V>(), 0) << V::name << ": inf / NaN / ±0 handling";
  EXPECT_EQ(sf_test::backend_ops<V>(), 0) << V::name << ": the backend's operations (sqrt, round, select, "
                                                        "partial loads/stores, transpose, ...)";
  double worst = 0;
  for (double w : {sf_test::rows_worst<V, 1>(1), sf_test::rows_worst<V, 5>(2), sf_test::rows_worst<V, 16>(3),
                   sf_test::rows_worst<V, 17>(4), sf_test::rows_worst<V, 64>(5), sf_test::rows_worst<V, 65>(6),
                   sf_test::rows_worst<V, 100>(7), sf_test::rows_worst<V, 256>(8)})
    worst = w > worst ? w : worst;
  std::printf("[ %-6s rows ] softmax/gelu/gelu_tanh/silu: worst error %.3f of the tolerance\n", V::name, worst);
  EXPECT_LE(worst, 1.0) << V::name << ": softmax_row / gelu_row / gelu_tanh_row / silu_row";
}
}  // namespace

TEST(vmath, scalar) { check_backend<sf::simd::scalar<float>>(); }
#if defined(SF_SIMD_HAVE_AVX2)
TEST(vmath, avx2) { check_backend<sf::simd::avx2>(); }
#endif
#if defined(SF_SIMD_HAVE_AVX512)
TEST(vmath, avx512) { check_backend<sf::simd::avx512>(); }
#endif
#if defined(SF_SIMD_HAVE_NEON)
TEST(vmath, neon) { check_backend<sf::simd::neon>(); }
#endif

// argmax: on every backend, the plain loop's index (first of the largest, NaN skipped) on rows of
// every length up to 70 and a vocabulary's 32000 and 32003, with ties (many equal values, -0 and
// +0), NaN (also first), ±inf, all equal and all -inf; the emulated twin at compile time too.
namespace {
std::size_t plain_argmax(const float* x, std::size_t n) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}
template <class V>
void check_argmax() {
  static float x[32003];
  std::uint32_t s = 99;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::size_t rows = 0, failures = 0;
  for (int kind = 0; kind < 9; ++kind) {
    for (std::size_t n : {1u, 2u, 3u, 5u, 7u, 8u, 9u, 15u, 16u, 17u, 31u, 32u, 33u, 47u, 48u, 63u, 64u, 65u, 70u,
                          32000u, 32003u}) {
      for (std::size_t i = 0; i < n; ++i) {
        s = s * 1664525u + 1013904223u;
        const float r = static_cast<float>(s >> 8) / 16777216.0f;  // [0, 1)
        switch (kind) {
          case 0: x[i] = r * 20.0f - 10.0f; break;                                   // distinct
          case 1: x[i] = static_cast<float>(static_cast<int>(r * 4.0f)); break;        // many ties
          case 2: x[i] = (s >> 3) % 2 ? 0.0f : -0.0f; break;                          // ±0 only
          case 3: x[i] = (s >> 5) % 5 == 0 ? nan : r - 0.5f; break;                   // NaN among them
          case 4: x[i] = i == 0 ? nan : r; break;                                     // NaN first
          case 5: x[i] = (s >> 5) % 7 == 0 ? inf : -r; break;                         // +inf, repeated
          case 6: x[i] = -inf; break;                                                 // all -inf
          case 7: x[i] = 1.5f; break;                                                 // all equal
          default: x[i] = (s >> 4) % 3 == 0 ? -0.0f : ((s >> 4) % 3 == 1 ? 0.0f : -r); break;  // ±0 the largest
        }
      }
      const std::size_t want = plain_argmax(x, n), got = sf::simd::argmax<V>(x, n);
      ++rows;
      if (got != want) {
        ++failures;
        ADD_FAILURE() << V::name << " argmax, kind " << kind << ", n " << n << ": " << got << ", the loop gives " << want;
      }
    }
  }
  std::printf("[ %-6s argmax ] %zu rows: %zu differ from the plain loop\n", V::name, rows, failures);
}
constexpr std::size_t argmax_at_compile_time() {
  float x[37] = {};
  for (std::size_t i = 0; i < 37; ++i) x[i] = static_cast<float>((i * 7) % 11);  // 10 first at i = 3
  x[30] = 10.0f;                                                                 // a later tie
  return sf::simd::argmax(x, 37);
}
static_assert(argmax_at_compile_time() == 3);
}  // namespace

TEST(vmath, argmax_is_the_plain_loop) {
  check_argmax<sf::simd::scalar<float>>();
#if defined(SF_SIMD_HAVE_AVX2)
  check_argmax<sf::simd::avx2>();
#endif
#if defined(SF_SIMD_HAVE_AVX512)
  check_argmax<sf::simd::avx512>();
#endif
#if defined(SF_SIMD_HAVE_NEON)
  check_argmax<sf::simd::neon>();
#endif
}

// The emulated twin (simd/emulated.hpp) that runs during constant evaluation gives the native
// backend's bits: every row helper and the softmax kernel, here run at run time with both
// backends on the same inputs (a wide range, special values, masked entries, odd lengths).
namespace {
float twin_x[1031], twin_a[1031], twin_b[1031];
template <class F>
bool twin_same(F f) {
  using N = sf::simd::native<float>;
  using E = sf::simd::twin<N>;
  std::memcpy(twin_a, twin_x, sizeof twin_x);
  std::memcpy(twin_b, twin_x, sizeof twin_x);
  f.template operator()<N>(twin_a);
  f.template operator()<E>(twin_b);
  return std::memcmp(twin_a, twin_b, sizeof twin_a) == 0;
}
}  // namespace

TEST(vmath, emulated_twin_is_bit_identical) {
  std::uint32_t s = 12345;
  for (float& v : twin_x) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(s >> 8) / 16777216.0f * 220.0f - 110.0f;  // [-110, 110): exp under- and overflow
  }
  for (std::size_t i = 0; i < 1031; i += 97) twin_x[i] = static_cast<float>(i % 5) * 1e-3f;  // near 0
  twin_x[3] = 0.0f, twin_x[4] = -0.0f, twin_x[5] = 88.7f, twin_x[6] = -103.9f;
  EXPECT_TRUE(twin_same([]<class V>(float* y) { sf::simd::exp_row<1031, V>(y, y); })) << "exp_row";
  EXPECT_TRUE(twin_same([]<class V>(float* y) { sf::simd::tanh_row<1031, V>(y, y); })) << "tanh_row";
  EXPECT_TRUE(twin_same([]<class V>(float* y) { sf::simd::gelu_row<1031, V>(y, y); })) << "gelu_row";
  EXPECT_TRUE(twin_same([]<class V>(float* y) { sf::simd::gelu_tanh_row<1031, V>(y, y); })) << "gelu_tanh_row";
  EXPECT_TRUE(twin_same([]<class V>(float* y) { sf::simd::silu_row<1031, V>(y, y); })) << "silu_row";
  for (std::size_t n : {1u, 7u, 16u, 33u, 64u, 65u, 1031u}) {
    twin_x[n / 2] = -std::numeric_limits<float>::infinity();  // a masked entry
    EXPECT_TRUE(twin_same([n]<class V>(float* y) { sf::simd::softmax_scaled<V>(y, n, 0.125f); }))
        << "softmax_scaled, n = " << n;
  }
  for (std::size_t n : {1u, 7u, 16u, 33u, 64u, 65u}) {
    EXPECT_TRUE(twin_same([n]<class V>(float* y) { sf::simd::softmax_scaled_rows<V>(y, 6, 97, n, 0.25f); }))
        << "softmax_scaled_rows, n = " << n;
    EXPECT_TRUE(twin_same([n]<class V>(float* y) { sf::simd::softmax_scaled_rows<V>(y, 6, 97, n, 0.25f, 1, 80); }))
        << "softmax_scaled_rows (causal, cleared to 80), n = " << n;
    EXPECT_TRUE(twin_same([n]<class V>(float* y) { y[0] = sf::simd::row_sum<V>(y + 1, n); })) << "row_sum " << n;
    EXPECT_TRUE(twin_same([n]<class V>(float* y) { y[0] = sf::simd::row_sum_sq_dev<V>(y + 1, n, 0.3f); }))
        << "row_sum_sq_dev " << n;
  }
  std::printf("[ %-6s twin ] exp/tanh/gelu/gelu_tanh rows and softmax: bit-identical to the emulated twin\n",
              sf::simd::native<float>::name);
}

// softmax_scaled_rows (the heads of one query in the decoder: rows of one length; a prefill
// chunk's causal rows: growth 1, each row one entry longer) gives each row exactly
// softmax_scaled's bits and, with clear_to, 0 from the row's end to clear_to; it leaves what lies
// past that alone; rows that are entirely masked become 0.
TEST(vmath, softmax_rows_equal_softmax_of_each_row) {
  static float a[40 * 128], b[40 * 128];
  std::uint32_t s = 777;
  for (std::size_t clear_to : {0u, 64u, 106u, 112u})
    for (std::size_t growth : {0u, 1u})
      for (std::size_t rows : {1u, 3u, 4u, 6u, 17u, 40u})
        for (std::size_t n : {1u, 7u, 16u, 33u, 64u, 65u}) {
          const std::size_t stride = growth ? 128 : 70;
          for (float& v : a) {
            s = s * 1664525u + 1013904223u;
            v = static_cast<float>(s >> 8) / 16777216.0f * 40.0f - 20.0f;
          }
          for (std::size_t i = 0; i < n + 2 * growth; ++i)
            a[2 * stride + i] = -std::numeric_limits<float>::infinity();  // masked row
          a[stride + n / 2] = -std::numeric_limits<float>::infinity();
          std::memcpy(b, a, sizeof a);
          const std::size_t to = clear_to < stride ? clear_to : stride;
          sf::simd::softmax_scaled_rows(a, rows, stride, n, 0.3f, growth, to);
          for (std::size_t r = 0; r < rows; ++r) {
            sf::simd::softmax_scaled(b + r * stride, n + growth * r, 0.3f);
            for (std::size_t i = n + growth * r; i < to; ++i) b[r * stride + i] = 0.0f;
          }
          EXPECT_EQ(0, std::memcmp(a, b, sizeof a))
              << "clear_to " << to << ", growth " << growth << ", rows " << rows << ", n " << n;
        }
}
