// On every backend of this binary: the backend's own operations on exact cases; vexp, vtanh
// and verf against the C library over the ranges the model uses (dense scans, up to 2 million
// points each) and on special values; the row helpers (softmax, GELU) against double
// references. Also the scalar backend's versions in a constant expression.
// Bounds: see vmath_check.hpp.
#include <gtest/gtest.h>

#include <cstdio>

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
  std::printf("[ %-6s rows ] softmax/gelu/gelu_tanh: worst error %.3f of the tolerance\n", V::name, worst);
  EXPECT_LE(worst, 1.0) << V::name << ": softmax_row / gelu_row / gelu_tanh_row";
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
