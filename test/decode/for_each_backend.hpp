// for_each_backend(f): f.template operator()<V>(name) for every float SIMD backend compiled into the
// test (scalar, and AVX2, AVX-512, NEON when the build has them). Shared by test/test_decode.cpp and
// test/decode/gemv_kernels.cpp.
#pragma once
#include "staticformer/simd.hpp"

namespace {
template <class F>
void for_each_backend(F&& f) {
  f.template operator()<sf::simd::scalar<float>>("scalar");
#ifdef SF_SIMD_HAVE_AVX2
  f.template operator()<sf::simd::avx2>("avx2");
#endif
#ifdef SF_SIMD_HAVE_AVX512
  f.template operator()<sf::simd::avx512>("avx512");
#endif
#ifdef SF_SIMD_HAVE_NEON
  f.template operator()<sf::simd::neon>("neon");
#endif
}
}  // namespace
