// gemm_nn / gemm_nt / gemm_tn on the scalar backends against the long-double reference (float:
// every second shape, double: every third; test_gemm.cpp's program: see there and gemm_check.hpp).
#include <gtest/gtest.h>

#include "check_all.hpp"
#include "staticformer/simd.hpp"

using sf_test::check_all;
using sf_test::op;

TEST(gemm_scalar_float, nn) { check_all<sf::simd::scalar<float>, op::nn, 2>(); }
TEST(gemm_scalar_float, nt) { check_all<sf::simd::scalar<float>, op::nt, 2>(); }
TEST(gemm_scalar_float, tn) { check_all<sf::simd::scalar<float>, op::tn, 2>(); }
TEST(gemm_scalar_double, nn) { check_all<sf::simd::scalar<double>, op::nn, 3>(); }
TEST(gemm_scalar_double, nt) { check_all<sf::simd::scalar<double>, op::nt, 3>(); }
TEST(gemm_scalar_double, tn) { check_all<sf::simd::scalar<double>, op::tn, 3>(); }
