// staticformer/kernels/attributes.hpp — the compiler attributes the kernels use.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define SF_KERNEL_INLINE inline __attribute__((always_inline))
#define SF_KERNEL_NOINLINE __attribute__((noinline))
#define SF_LAMBDA_INLINE __attribute__((always_inline))  // after a lambda's parameter list
#define SF_RESTRICT __restrict__
#else
#define SF_KERNEL_INLINE inline
#define SF_KERNEL_NOINLINE
#define SF_LAMBDA_INLINE
#define SF_RESTRICT
#endif
