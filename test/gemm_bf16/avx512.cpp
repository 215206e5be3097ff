// The AVX512-BF16 backend against the naive reference, bit for bit (test_gemm_bf16.cpp's program:
// see there; the check is gemm_bf16/check.hpp).
#include <gtest/gtest.h>

#include "check.hpp"

namespace k = sf::kernels;
using sf_test::bf16::check_backend;

TEST(GemmBf16, Avx512MatchesReference) {
#if defined(SF_HAVE_AVX512_BF16)
  check_backend<k::bf16_avx512>("bf16 avx512");
#else
  GTEST_SKIP() << "this binary was not compiled for AVX512-BF16 (vdpbf16ps): build with -march=native on a CPU "
                  "with avx512_bf16, or -mavx512bf16 -mavx512bw";
#endif
}
