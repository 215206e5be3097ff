// gemm_nn / gemm_nt / gemm_tn on the NEON backend (when compiled for it) against the long-double reference
// on every shape (test_gemm.cpp's program; see there and gemm_check.hpp).
#include <gtest/gtest.h>

#include "check_all.hpp"
#include "staticformer/simd.hpp"

using sf_test::check_all;
using sf_test::op;

#if defined(SF_SIMD_HAVE_NEON)
TEST(gemm_neon, nn) { check_all<sf::simd::neon, op::nn>(); }
TEST(gemm_neon, nt) { check_all<sf::simd::neon, op::nt>(); }
TEST(gemm_neon, tn) { check_all<sf::simd::neon, op::tn>(); }
#endif
