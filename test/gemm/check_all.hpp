// gemm/check_all.hpp — the run-time check of one gemm backend on every shape of gemm_check.hpp,
// shared by the backends' translation units (test/gemm/*.cpp: one backend each, so that none
// takes long to compile).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <utility>

#include "../gemm_check.hpp"

namespace sf_test {

// ---------------------------------------------------------------- run-time checks
struct summary {
  std::size_t shapes = 0;
  double worst_rel = 0, worst_sqrt = 0;
};

// Checks one (backend, op, shape); a plain function, so the per-shape template code is
// only the kernel call (call_kernel) and the test compiles quickly.
template <class T>
void check_one(const char* backend, op O, std::size_t index, kernel_fn<T> kernel, summary& s) {
  const shape S = any_shape(index);
  const result r = check<T>(S, O, kernel, static_cast<std::uint32_t>(7919 * index + static_cast<int>(O)));
  ++s.shapes;
  if (r.worst_rel > s.worst_rel) s.worst_rel = r.worst_rel;
  if (r.worst_sqrt > s.worst_sqrt) s.worst_sqrt = r.worst_sqrt;
  EXPECT_TRUE(r.ok()) << backend << " gemm_" << op_name(O) << " shape #" << index << " M=" << S.M
                      << " N=" << S.N << " K=" << S.K << " pads=(" << S.pad_a << "," << S.pad_b << "," << S.pad_c
                      << ") off=" << S.off << " acc=" << S.acc << " bias=" << S.bias << ": " << r.bad
                      << " elements over the bound, first (" << r.m << "," << r.n << ") got " << r.got << " want "
                      << r.want << " bound " << r.bound << "; " << r.guard_bad << " guard elements overwritten";
}

template <class V, op O, std::size_t Stride, std::size_t... I>
void check_shapes(std::index_sequence<I...>) {
  using T = typename V::value_type;
  static constexpr kernel_fn<T> kernels[] = {&call_kernel<V, O, I * Stride>...};
  summary s;
  for (std::size_t i = 0; i < sizeof...(I); ++i) check_one<T>(V::name, O, i * Stride, kernels[i], s);
  std::printf("[ %-6s gemm_%s ] %zu shapes, worst error %.3f of the bound, %.3f x sqrt(K+2)*u*sum|ab|\n", V::name,
              op_name(O), s.shapes, s.worst_rel, s.worst_sqrt);
}
// every shape, or every Stride-th one (the scalar backends: same code, less compile time)
template <class V, op O, std::size_t Stride = 1>
void check_all() {
  check_shapes<V, O, Stride>(std::make_index_sequence<(n_shapes + Stride - 1) / Stride>{});
}

}  // namespace sf_test
