// staticformer/kernels/attributes.hpp — the compiler attributes the kernels use.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define SF_KERNEL_INLINE inline __attribute__((always_inline))
#define SF_KERNEL_NOINLINE __attribute__((noinline))
#define SF_LAMBDA_INLINE __attribute__((always_inline))  // after a lambda's parameter list
#define SF_RESTRICT __restrict__
#define SF_PREFETCH(p) __builtin_prefetch(p)
#define SF_PREFETCH_L2(p) __builtin_prefetch((p), 0, 2)  // into L2 (x86: prefetcht1)
#else
#define SF_KERNEL_INLINE inline
#define SF_KERNEL_NOINLINE
#define SF_LAMBDA_INLINE
#define SF_RESTRICT
#define SF_PREFETCH(p) ((void)(p))
#define SF_PREFETCH_L2(p) ((void)(p))
#endif

// No automatic vectorisation of this function (g++ only). g++ 12 at -O3 turns the rotation
// (a·c − b·s, a·s + b·c) of RoPE into vfmaddsub — fused multiply-adds despite
// -ffp-contract=off — in some inlining contexts and not in others, so the same position
// would round differently in prefill and in a step (found by test_decode_int8).
#if defined(__GNUC__) && !defined(__clang__)
#define SF_NO_AUTO_VECTORIZE __attribute__((noinline, optimize("no-tree-loop-vectorize", "no-tree-slp-vectorize")))
#else
#define SF_NO_AUTO_VECTORIZE
#endif
