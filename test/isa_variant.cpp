// Compiled into each per-instruction-set test variant (test/CMakeLists.txt, STATICFORMER_ISA_TESTS)
// with -DSF_TEST_ISA_AVX2 or -DSF_TEST_ISA_SCALAR: the variant really is built for its instruction
// set — the float backend and the int8 products' backend the library dispatches to are that
// path's — so a -march=native that came back after the variant's own -march fails the build here.
#include <type_traits>

#include "staticformer/kernels/q8.hpp"
#include "staticformer/simd.hpp"

#if defined(SF_TEST_ISA_AVX2)
#if defined(__AVX512F__) || !defined(__AVX2__) || !defined(__FMA__)
#error "the avx2 test variant is not compiled for AVX2 + FMA without AVX-512"
#endif
static_assert(std::is_same_v<sf::simd::native<float>, sf::simd::avx2>, "float products on AVX2");
static_assert(std::is_same_v<sf::kernels::q8::native, sf::kernels::q8::avx2>, "int8 products on AVX2");
#elif defined(SF_TEST_ISA_SCALAR)
#if defined(__AVX__)
#error "the scalar test variant is compiled for AVX"
#endif
static_assert(std::is_same_v<sf::simd::native<float>, sf::simd::scalar<float>>, "float products scalar");
static_assert(std::is_same_v<sf::kernels::q8::native, sf::kernels::q8::scalar>, "int8 products scalar");
#else
#error "compiled only into the instruction-set test variants, with SF_TEST_ISA_<isa>"
#endif
