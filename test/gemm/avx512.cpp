// gemm_nn / gemm_nt / gemm_tn on the AVX-512 backend (when compiled for it) against the long-double reference
// on every shape (test_gemm.cpp's program; see there and gemm_check.hpp).
#include <gtest/gtest.h>

#include "check_all.hpp"
#include "staticformer/simd.hpp"

using sf_test::check_all;
using sf_test::op;

#if defined(SF_SIMD_HAVE_AVX512)
TEST(gemm_avx512, nn) { check_all<sf::simd::avx512, op::nn>(); }
TEST(gemm_avx512, nt) { check_all<sf::simd::avx512, op::nt>(); }
TEST(gemm_avx512, tn) { check_all<sf::simd::avx512, op::tn>(); }
#endif
