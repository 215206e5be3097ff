// staticformer/simd/common.hpp — what the SIMD backends share.
//
// SF_SIMD_INLINE (always_inline where the compiler has it) and detail::repeat<N>(f), which
// calls f(integral_constant<0>) ... f(integral_constant<N-1>) unrolled. The backends
// (staticformer/simd/*.hpp) include this header; code that uses SIMD includes
// staticformer/simd.hpp, which documents the operations and picks sf::simd::native<T>.
#pragma once
#include <cstddef>
#include <type_traits>
#include <utility>

#if defined(__GNUC__) || defined(__clang__)
#define SF_SIMD_INLINE __attribute__((always_inline))
#else
#define SF_SIMD_INLINE
#endif

namespace sf::simd {

namespace detail {
// f(integral_constant<0>), ..., f(integral_constant<N-1>): unrolled at compile time, so that
// arrays of registers indexed by the constant stay in registers.
template <class F, std::size_t... I>
SF_SIMD_INLINE constexpr void repeat_seq(F& f, std::index_sequence<I...>) {
  (f(std::integral_constant<std::size_t, I>{}), ...);
}
template <std::size_t N, class F>
SF_SIMD_INLINE constexpr void repeat(F&& f) {
  repeat_seq(f, std::make_index_sequence<N>{});
}
}  // namespace detail

}  // namespace sf::simd
