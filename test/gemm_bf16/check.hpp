// gemm_bf16/check.hpp — test_gemm_bf16's check of a bf16 backend against the naive reference on
// every shape, shared by its translation units (test_gemm_bf16.cpp, test/gemm_bf16/avx512.cpp: one
// backend each, so that neither takes long to compile).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "staticformer/kernels/gemm_bf16.hpp"

namespace sf_test::bf16 {
namespace k = sf::kernels;

// ---------------------------------------------------------------- run-time: backends vs reference
enum class op { nn, nt, tn };
inline const char* name(op o) { return o == op::nn ? "nn" : o == op::nt ? "nt" : "tn"; }

struct shape {
  std::size_t M, N, K, pad_a, pad_b, pad_c;
  bool acc, bias;
};

inline std::uint32_t rng_state = 12345;
inline float rnd() {  // uniform in (-1, 1), with a spread of magnitudes
  rng_state = rng_state * 1664525u + 1013904223u;
  const float u = static_cast<float>(rng_state >> 8) / 16777216.0f * 2 - 1;
  return (rng_state & 0x30u) == 0 ? u * 37.0f : u;
}

// C (M,N) via backend Impl and via the reference, from the same operands; returns the number of
// elements that differ (bits) and checks that the padding of C is untouched.
template <class Impl>
std::size_t differ(op o, const shape& s) {
  const bool at = o == op::tn, bc = o == op::nt;
  const std::size_t arows = at ? s.K : s.M, acols = at ? s.M : s.K, lda = acols + s.pad_a;
  const std::size_t brows = bc ? s.N : s.K, bcols = bc ? s.K : s.N, ldb = bcols + s.pad_b;
  const std::size_t ldc = s.N + s.pad_c;
  std::vector<float> A(arows * lda + 1), B(brows * ldb + 1), bias(s.N), C0(s.M * ldc + 1);
  for (float& x : A) x = rnd();
  for (float& x : B) x = rnd();
  for (float& x : bias) x = rnd();
  for (float& x : C0) x = rnd();
  std::vector<float> C1 = C0, C2 = C0;
  const float* bp = s.bias && o == op::nn ? bias.data() : nullptr;
  k::bf16_detail::gemm_any<Impl>(at, bc, C1.data(), ldc, A.data(), lda, B.data(), ldb, s.M, s.N, s.K, s.acc, bp);
  k::ref::detail::product_bf16(C2.data(), A.data(), B.data(), bp, s.M, s.N, s.K, ldc, at ? 1 : lda, at ? lda : 1,
                               bc ? 1 : ldb, bc ? ldb : 1, s.acc);
  std::size_t bad = 0;
  for (std::size_t m = 0; m < s.M; ++m)
    for (std::size_t n = 0; n < ldc; ++n) {
      const std::size_t i = m * ldc + n;
      if (std::memcmp(&C1[i], &C2[i], sizeof(float)) != 0) {
        if (bad == 0)
          ADD_FAILURE() << name(o) << " M=" << s.M << " N=" << s.N << " K=" << s.K << " acc=" << s.acc
                        << " bias=" << (bp != nullptr) << ": first difference at (" << m << "," << n << "): " << C1[i]
                        << " vs reference " << C2[i] << (n >= s.N ? " (padding of C overwritten)" : "");
        ++bad;
      }
    }
  if (std::memcmp(&C1[s.M * ldc], &C0[s.M * ldc], sizeof(float)) != 0) ADD_FAILURE() << "wrote past C";
  return bad;
}

inline std::vector<shape> shapes() {
  std::vector<shape> v;
  const std::size_t sizes[] = {1, 2, 3, 5, 7, 15, 16, 17, 31, 33, 63, 64, 65, 97};
  std::size_t i = 0;
  for (std::size_t M : sizes)
    for (std::size_t N : {sizes[i % 14], sizes[(i + 5) % 14], sizes[(i + 9) % 14]}) {
      const std::size_t K = sizes[(i * 7 + 3) % 14];
      v.push_back({M, N, K, i % 3, (i + 1) % 4, i % 2, i % 2 == 1, i % 3 != 0});
      ++i;
    }
  // past the blocks: rows > MC (192), columns > NC (512), k > KC (256), odd k across a block
  v.push_back({200, 37, 300, 1, 0, 0, false, true});
  v.push_back({13, 530, 19, 0, 3, 2, true, true});
  v.push_back({7, 29, 513, 2, 1, 0, true, false});
  v.push_back({385, 70, 257, 0, 0, 1, false, true});
  // model shapes: (B·T, D)·(D, 3D), (B·T, F)·(F, D), a head slice stride
  v.push_back({512, 384, 128, 0, 0, 0, false, true});
  v.push_back({128, 64, 256, 0, 0, 0, true, true});
  v.push_back({64, 32, 32, 96, 96, 0, false, false});
  return v;
}

template <class Impl>
void check_backend(const char* backend) {
  std::size_t n = 0, bad = 0;
  for (op o : {op::nn, op::nt, op::tn})
    for (const shape& s : shapes()) {
      bad += differ<Impl>(o, s);
      ++n;
    }
  std::printf("[ %s ] %zu products, %zu elements differ from the reference\n", backend, n, bad);
  EXPECT_EQ(bad, 0u);
}

}  // namespace sf_test::bf16
