// staticformer/simd.hpp — one small SIMD abstraction.
//
// A backend is a struct of static functions over one register type:
//
//   using V = sf::simd::native<float>;         // best backend this translation unit was compiled for
//   V::reg acc = V::zero();
//   acc = V::fmadd(V::load(a), V::set1(s), acc);   // acc += a * s, V::width lanes at once
//
// Backends, one header each under staticformer/simd/: scalar<T> (scalar.hpp; always
// compiles, the constant-evaluation path, any T), avx512 (avx512.hpp, 16 floats), avx2
// (avx2.hpp, 8 floats, needs FMA) and neon (neon.hpp, 4 floats, AArch64). Each vector
// backend exists only when the target has its instructions, and then defines
// SF_SIMD_HAVE_AVX512, SF_SIMD_HAVE_AVX2 or SF_SIMD_HAVE_NEON. This header includes them all.
// Kernels are templates over the backend, so one binary can test every backend the
// CPU has against the naive reference.
//
// Every backend provides the same operations (lane-wise unless said otherwise):
//
//   memory      zero set1 load store load_partial(p, n) store_partial(p, v, n)   (first n lanes; 0 < n <= width)
//   arithmetic  add sub mul div fmadd(a,b,c)=a*b+c fnmadd(a,b,c)=c-a*b min max abs neg sqrt
//               (`fused`: fmadd/fnmadd round once; true except scalar<T> on targets without FMA)
//               min(a, b) / max(a, b) return b when either is NaN (x86 semantics), so put the
//               value that should propagate NaN second.
//   rounding    round(x): to nearest, ties to even.   scale2(x, n): x * 2^n for integral n, |n| <= 252
//               (two exact factors 2^(n/2); AVX-512 uses scalef and takes any n)
//   bits        copysign(mag, sgn)
//   masks       mask lt(a, b) (a < b)   select(m, a, b) (m ? a : b)
//   reductions  hsum hmax
//   shuffles    transpose(reg (&r)[width]): r is a width x width block (r[i] = row i); becomes its transpose
//               swap_pairs(a): lanes 2i and 2i+1 exchanged (the vector backends only: width >= 2)
//
// The fast vectorised exp/tanh/erf built on these are in staticformer/kernels/vmath.hpp.
#pragma once
#include "staticformer/simd/common.hpp"
#include "staticformer/simd/scalar.hpp"
#include "staticformer/simd/avx512.hpp"
#include "staticformer/simd/avx2.hpp"
#include "staticformer/simd/neon.hpp"
#include "staticformer/simd/emulated.hpp"

namespace sf::simd {

// ---------------------------------------------------------------- selection
namespace detail {
template <class T> struct native_impl { using type = scalar<T>; };
#if defined(SF_SIMD_HAVE_AVX512) && !defined(SF_SIMD_FORCE_SCALAR)
template <> struct native_impl<float> { using type = avx512; };
#elif defined(SF_SIMD_HAVE_AVX2) && !defined(SF_SIMD_FORCE_SCALAR)
template <> struct native_impl<float> { using type = avx2; };
#elif defined(SF_SIMD_HAVE_NEON) && !defined(SF_SIMD_FORCE_SCALAR)
template <> struct native_impl<float> { using type = neon; };
#endif
}  // namespace detail

// The widest backend available for T (scalar for double and on plain targets).
template <class T> using native = typename detail::native_impl<T>::type;

}  // namespace sf::simd
