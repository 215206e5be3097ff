// Incremental decoding (decode.hpp): prefill + steps against a full sf::infer of the same prefix,
// at every position, for docs/model.md's reference configurations (every position kind, both norms, every
// activation, tied and untied, with and without bias), prompts that end at odd positions and at
// the chunk boundaries, B streams at different positions, the context limit and slide, errors.
//
// The requirement is 1e-5 relative per logit; the decoder is built to give the same bits as
// sf::infer, and the test checks that too (it is the stronger statement, and the design's).
//
// One program in several translation units, so that none takes long to compile: the checks are
// in decode/checks.hpp; the reference configurations are tested in test/decode/*.cpp (one each,
// ref-gpt2's decoder options apart), nano and the kernels here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "decode/checks.hpp"
#include "decode/for_each_backend.hpp"
#include "staticformer/data.hpp"
#include "staticformer/decode.hpp"
#include "staticformer/init.hpp"
#include "staticformer/model.hpp"
#include "staticformer/reflect.hpp"

using namespace sf_test;

TEST(Decode, NanoEveryBoundary) { check_config_all_boundaries<sf::configs::nano>(); }

// sf::small_ram (no prefill chunk buffers, a tied head read in place): the same bits, less memory
// (the reference configurations with the options: test/decode/*.cpp).
TEST(Decode, SmallRamOptions) {
  check_prefill_then_steps<sf::configs::nano, sf::small_ram>(9, 350);
  using C = sf::config;
  constexpr C nano1 = one_stream<sf::configs::nano>();
  constexpr std::size_t full = sizeof(sf::decoder<nano1>), small = sizeof(sf::decoder<nano1, float, sf::small_ram>);
  constexpr std::size_t D = nano1.D, T = nano1.T, F = nano1.F, V = nano1.V, P = sf::decoder<nano1>::P;
  // what small_ram leaves out: the chunk buffers 7·P·D + P·F + P·T and the head copy D·V (floats)
  // (give or take alignment and the empty placeholders of the absent members)
  constexpr std::size_t left_out = (7 * P * D + P * F + P * T + D * V) * sizeof(float);
  EXPECT_GE(full - small + 256, left_out);
  EXPECT_LE(full - small, left_out + 256);
  // and holds the KV cache 2·L·B·T·D floats plus a few rows
  EXPECT_GE(small, 2 * nano1.L * nano1.T * nano1.D * sizeof(float));
  EXPECT_LE(small, 2 * nano1.L * nano1.T * nano1.D * sizeof(float) + 8 * 1024);
  std::printf("nano decoder (B = 1): %zu bytes, sf::small_ram %zu bytes\n", full, small);
}

// gemv_rows (a matrix stored transposed) against gemv over the transpose: the same bits.
TEST(Decode, GemvRowsMatchesGemv) {
  sf::xoshiro256 rng(9);
  auto rnd = [&] { return static_cast<float>(rng.next() >> 40) * 0x1p-24f * 2.0f - 1.0f; };
  for (std::size_t N : {1u, 3u, 4u, 6u, 17u, 65u})
    for (std::size_t K : {1u, 7u, 64u, 65u}) {
      const std::size_t lda = K + 2;
      std::vector<float> x(K), A(N * lda), At(K * N), y0(N), y1(N);
      for (auto& v : x) v = rnd();
      for (auto& v : A) v = rnd();
      for (std::size_t n = 0; n < N; ++n)
        for (std::size_t k = 0; k < K; ++k) At[k * N + n] = A[n * lda + k];
      sf::kernels::ref::gemv(y0.data(), x.data(), At.data(), N, N, K, static_cast<const float*>(nullptr));
      sf::kernels::gemv_rows(y1.data(), x.data(), A.data(), lda, N, K);
      EXPECT_EQ(0, std::memcmp(y0.data(), y1.data(), N * sizeof(float))) << "N=" << N << " K=" << K;
    }
}

// The gemv kernel (every backend compiled in) against its reference on odd sizes: the same bits.
TEST(Decode, GemvMatchesReference) {
  sf::xoshiro256 rng(5);
  auto rnd = [&] { return static_cast<float>(rng.next() >> 40) * 0x1p-24f * 2.0f - 1.0f; };
  for (std::size_t N : {1u, 3u, 15u, 16u, 17u, 33u, 65u, 255u, 256u, 257u, 300u})
    for (std::size_t K : {1u, 2u, 7u, 16u, 63u, 64u, 65u, 129u}) {
      const std::size_t ldb = N + 3;
      std::vector<float> x(K), Bm(K * ldb), bias(N), y0(N), y1(N);
      for (auto& v : x) v = rnd();
      for (auto& v : Bm) v = rnd();
      for (auto& v : bias) v = rnd();
      for (int with_bias = 0; with_bias < 2; ++with_bias) {
        const float* bp = with_bias ? bias.data() : nullptr;
        sf::kernels::ref::gemv(y0.data(), x.data(), Bm.data(), ldb, N, K, bp);
        auto check = [&]<class V>(const char* name) {
          std::fill(y1.begin(), y1.end(), 7.0f);
          sf::kernels::gemv_with<V>(y1.data(), x.data(), Bm.data(), ldb, N, K, bp);
          EXPECT_EQ(0, std::memcmp(y0.data(), y1.data(), N * sizeof(float)))
              << name << " N=" << N << " K=" << K << " bias=" << with_bias;
        };
        for_each_backend(check);
      }
    }
}

// gemv_batch (1 to 5 products at once, every backend compiled in) against ref::gemv_batch on odd
// sizes: the same bits.
TEST(Decode, GemvBatchMatchesReference) {
  sf::xoshiro256 rng(6);
  auto rnd = [&] { return static_cast<float>(rng.next() >> 40) * 0x1p-24f * 2.0f - 1.0f; };
  for (std::size_t jobs_n = 1; jobs_n <= 5; ++jobs_n)
    for (std::size_t N : {1u, 7u, 16u, 33u, 65u, 130u})
      for (std::size_t K : {1u, 5u, 16u, 48u, 65u}) {
        const std::size_t ldb = N + 5;
        std::vector<float> x(jobs_n * K), Bm(jobs_n * K * ldb), bias(jobs_n * N), y0(jobs_n * N), y1(jobs_n * N);
        for (auto& v : x) v = rnd();
        for (auto& v : Bm) v = rnd();
        for (auto& v : bias) v = rnd();
        std::vector<sf::kernels::gemv_job<float>> j0(jobs_n), j1(jobs_n);
        for (std::size_t g = 0; g < jobs_n; ++g) {
          const float* bp = g % 2 ? bias.data() + g * N : nullptr;  // with and without bias
          j0[g] = {y0.data() + g * N, x.data() + g * K, Bm.data() + g * K * ldb, bp};
          j1[g] = {y1.data() + g * N, x.data() + g * K, Bm.data() + g * K * ldb, bp};
        }
        sf::kernels::ref::gemv_batch(j0.data(), jobs_n, ldb, N, K);
        auto check = [&]<class V>(const char* name) {
          std::fill(y1.begin(), y1.end(), 7.0f);
          sf::kernels::gemv_batch_with<V>(j1.data(), jobs_n, ldb, N, K);
          EXPECT_EQ(0, std::memcmp(y0.data(), y1.data(), y0.size() * sizeof(float)))
              << name << " jobs=" << jobs_n << " N=" << N << " K=" << K;
        };
        for_each_backend(check);
      }
}

