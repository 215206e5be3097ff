// The decoder's vector–matrix kernels beside test_decode.cpp's (the same program; a unit of its own
// for the compile time): gemv_panels (a matrix stored panel by panel, the float tied head's copy)
// gemm_nn_panels (the same matrix, the rows of several streams), and gemv_batch<Share> (jobs
// sharing a matrix: the query heads of one key/value head), each
// against the reference on every float backend compiled in: the same bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "for_each_backend.hpp"
#include "staticformer/data.hpp"
#include "staticformer/kernels/fetch.hpp"
#include "staticformer/kernels/gemm.hpp"
#include "staticformer/kernels/gemv.hpp"
#include "staticformer/simd.hpp"

// gemv_panels (the matrix stored panel by panel: the float tied head's copy, a decoder's layer
// matrices from memory; written by pack_panels from a matrix of row stride ldb > N) against ref::gemv
// over the plain matrix, without and with a bias, every backend compiled in, with that backend's
// panel width and narrower ones (read a few panels side by side): the same bits.
TEST(Decode, GemvPanelsMatchesGemv) {
  sf::xoshiro256 rng(8);
  auto rnd = [&] { return static_cast<float>(rng.next() >> 40) * 0x1p-24f * 2.0f - 1.0f; };
  for (std::size_t N : {1u, 7u, 8u, 9u, 64u, 65u, 255u, 256u, 257u, 600u})
    for (std::size_t K : {1u, 7u, 64u, 65u})
      for (const bool with_bias : {false, true}) {
        const std::size_t ldb = N + 3;
        std::vector<float> x(K), Bm(K * ldb), bias(N), y0(N), y1(N), y2(N);
        for (auto& v : x) v = rnd();
        for (auto& v : Bm) v = rnd();
        for (auto& v : bias) v = rnd();
        const float* b = with_bias ? bias.data() : nullptr;
        sf::kernels::ref::gemv(y0.data(), x.data(), Bm.data(), ldb, N, K, b);
        // the layout of panels of NR columns, read by gemv_panels_with<V, NR>
        auto check_width = [&]<class V, std::size_t NR>(const char* name) {
          std::vector<float> Bp(K * N, 9.0f);  // panel by panel, the last one narrower
          for (std::size_t n = 0; n < N; ++n) {
            const std::size_t n0 = n / NR * NR, w = N - n0 < NR ? N - n0 : NR;
            for (std::size_t k = 0; k < K; ++k) Bp[n0 * K + k * w + (n - n0)] = Bm[k * ldb + n];
          }
          std::vector<float> packed(K * N, 7.0f);
          sf::kernels::pack_panels(packed.data(), Bm.data(), ldb, N, K, NR);
          EXPECT_EQ(Bp, packed) << name << " pack_panels N=" << N << " K=" << K << " NR=" << NR;
          std::fill(y1.begin(), y1.end(), 7.0f);
          sf::kernels::gemv_panels_with<V, NR>(y1.data(), x.data(), Bp.data(), N, K, b);
          EXPECT_EQ(0, std::memcmp(y0.data(), y1.data(), N * sizeof(float)))
              << name << " N=" << N << " K=" << K << " NR=" << NR << " bias " << with_bias;
          sf::kernels::ref::gemv_panels(y2.data(), x.data(), Bp.data(), N, K, NR, b);
          EXPECT_EQ(0, std::memcmp(y0.data(), y2.data(), N * sizeof(float)))
              << name << " ref N=" << N << " K=" << K << " NR=" << NR << " bias " << with_bias;
        };
        // the backend's own panel width; narrower ones it reads several side by side (2 vectors:
        // tile_panel_width with AVX2; 1 vector; half the width), and one it does not divide (3 vectors)
        auto check = [&]<class V>(const char* name) {
          constexpr std::size_t PW = sf::kernels::panel_width<V>, W = V::width;
          check_width.template operator()<V, PW>(name);
          check_width.template operator()<V, 2 * W>(name);
          check_width.template operator()<V, W>(name);
          check_width.template operator()<V, PW / 2>(name);
          check_width.template operator()<V, 3 * W>(name);
        };
        for_each_backend(check);
      }
}

// The entry points for weights from memory, gemv<weights_in::memory> and gemv_panels<memory, NR>,
// whichever vectors they run on here (with AVX-512: 256 or 512 bits, chosen at run time by the CPU,
// kernels/gemv.hpp's wide_loads_from_memory; each backend's kernels are checked above), against the
// reference on odd sizes: the same bits. Also at compile time (the reference path).
TEST(Decode, GemvFromMemoryMatchesReference) {
  using sf::kernels::weights_in;
  sf::xoshiro256 rng(9);
  auto rnd = [&] { return static_cast<float>(rng.next() >> 40) * 0x1p-24f * 2.0f - 1.0f; };
  constexpr std::size_t NR = sf::kernels::tile_panel_width<float>;  // the decoder's layout from memory
  for (std::size_t N : {1u, 9u, 65u, 257u, 600u})
    for (std::size_t K : {1u, 7u, 65u}) {
      const std::size_t ldb = N + 3;
      std::vector<float> x(K), Bm(K * ldb), bias(N), Bp(K * N), y0(N), y1(N, 7.0f), y2(N, 7.0f);
      for (auto& v : x) v = rnd();
      for (auto& v : Bm) v = rnd();
      for (auto& v : bias) v = rnd();
      sf::kernels::pack_panels(Bp.data(), Bm.data(), ldb, N, K, NR);
      sf::kernels::ref::gemv(y0.data(), x.data(), Bm.data(), ldb, N, K, bias.data());
      sf::kernels::gemv<weights_in::memory>(y1.data(), x.data(), Bm.data(), ldb, N, K, bias.data());
      sf::kernels::gemv_panels<weights_in::memory, NR>(y2.data(), x.data(), Bp.data(), N, K, bias.data());
      EXPECT_EQ(0, std::memcmp(y0.data(), y1.data(), N * sizeof(float))) << "gemv N=" << N << " K=" << K;
      EXPECT_EQ(0, std::memcmp(y0.data(), y2.data(), N * sizeof(float))) << "gemv_panels N=" << N << " K=" << K;
    }
  constexpr float at_compile_time = [] {
    float x[3] = {1, 2, 3}, B[6] = {1, 2, 3, 4, 5, 6}, y[2] = {};
    sf::kernels::gemv<weights_in::memory>(y, x, B, 2, 2, 3);  // (1 + 6 + 15, 2 + 8 + 18)
    return y[0] * 100 + y[1];
  }();
  static_assert(at_compile_time == 2228.0f);
}

// gemv_batch<Share> (consecutive jobs with the same matrix, as the query heads of one key/value
// head: 2, 4 or 8 of them, and a size it does not take, 3: then as Share = 1, in passes of up to 8
// jobs for N of at most 2 vectors, 6 for 3) against ref::gemv_batch, every backend
// compiled in: the same bits.
TEST(Decode, GemvBatchSharedMatchesReference) {
  sf::xoshiro256 rng(7);
  auto rnd = [&] { return static_cast<float>(rng.next() >> 40) * 0x1p-24f * 2.0f - 1.0f; };
  auto run = [&]<std::size_t Share>(std::size_t jobs_n, std::size_t N, std::size_t K) {
    const std::size_t ldb = N + 5;
    std::vector<float> x(jobs_n * K), Bm(jobs_n * K * ldb), y0(jobs_n * N), y1(jobs_n * N);
    for (auto& v : x) v = rnd();
    for (auto& v : Bm) v = rnd();
    std::vector<sf::kernels::gemv_job<float>> j0(jobs_n), j1(jobs_n);
    for (std::size_t g = 0; g < jobs_n; ++g) {
      const float* B = Bm.data() + g / Share * K * ldb;  // shared by jobs g - g % Share … 
      j0[g] = {y0.data() + g * N, x.data() + g * K, B, nullptr};
      j1[g] = {y1.data() + g * N, x.data() + g * K, B, nullptr};
    }
    sf::kernels::ref::gemv_batch(j0.data(), jobs_n, ldb, N, K);
    auto check = [&]<class V>(const char* name) {
      std::fill(y1.begin(), y1.end(), 7.0f);
      sf::kernels::gemv_batch_with<V, Share>(j1.data(), jobs_n, ldb, N, K);
      EXPECT_EQ(0, std::memcmp(y0.data(), y1.data(), y0.size() * sizeof(float)))
          << name << " share=" << Share << " jobs=" << jobs_n << " N=" << N << " K=" << K;
    };
    for_each_backend(check);
  };
  for (std::size_t N : {1u, 8u, 16u, 17u, 32u, 33u, 48u, 100u})
    for (std::size_t K : {1u, 8u, 48u, 65u}) {
      for (std::size_t n : {2u, 4u, 6u, 8u, 16u}) run.template operator()<2>(n, N, K);
      for (std::size_t n : {4u, 8u, 12u}) run.template operator()<4>(n, N, K);
      for (std::size_t n : {8u, 16u}) run.template operator()<8>(n, N, K);
      for (std::size_t n : {3u, 6u, 9u, 17u}) run.template operator()<3>(n, N, K);  // (no sharing assumed: passes of 8, 6, 4, …)
    }
}

// A matrix wider than one panel and of at least stream_bytes is read row after row
// (detail::gemv_stream, y in L1): gemv_with takes that path for these sizes, and gemv_stream
// itself on odd small sizes; every backend compiled in, with and without a bias, against
// ref::gemv: the same bits.
TEST(Decode, GemvStreamMatchesGemv) {
  sf::xoshiro256 rng(9);
  auto rnd = [&] { return static_cast<float>(rng.next() >> 40) * 0x1p-24f * 2.0f - 1.0f; };
  struct size { std::size_t N, K, ldb; bool via_gemv_with; };
  const size sizes[] = {{700, 97, 700, true},  {385, 300, 391, true}, {1000, 97, 1000, true}, {4096, 17, 4096, true},
                        {1, 5, 1, false},      {7, 3, 9, false},      {17, 33, 17, false},    {33, 1, 40, false},
                        {64, 64, 64, false},   {65, 2, 65, false}};
  for (const auto& z : sizes) {
    if (z.via_gemv_with) {
      ASSERT_GE(z.K * z.N * sizeof(float), sf::kernels::detail::stream_bytes);
    }
    std::vector<float> x(z.K), Bm(z.K * z.ldb), bias(z.N), y0(z.N), y1(z.N);
    for (auto& v : x) v = rnd();
    for (auto& v : Bm) v = rnd();
    for (auto& v : bias) v = rnd();
    for (const float* b : {static_cast<const float*>(nullptr), static_cast<const float*>(bias.data())}) {
      sf::kernels::ref::gemv(y0.data(), x.data(), Bm.data(), z.ldb, z.N, z.K, b);
      auto check = [&]<class V>(const char* name) {
        std::fill(y1.begin(), y1.end(), 7.0f);
        if (z.via_gemv_with) sf::kernels::gemv_with<V>(y1.data(), x.data(), Bm.data(), z.ldb, z.N, z.K, b);
        else sf::kernels::detail::gemv_stream<V>(y1.data(), x.data(), Bm.data(), z.ldb, z.N, z.K, b);
        EXPECT_EQ(0, std::memcmp(y0.data(), y1.data(), z.N * sizeof(float)))
            << name << " N=" << z.N << " K=" << z.K << " bias=" << (b != nullptr);
      };
      for_each_backend(check);
    }
  }
}

// gemm_nn_panels (rows of several streams times the matrix stored panel by panel: a batched step's
// float tied head) against ref::gemm_nn over the plain matrix, every backend compiled in: the same
// bits. Shapes: M of every row tile (6, 4, 2 and 1 rows), N a multiple of NP or not, NP a multiple
// of the backend's tile width or not, K of one, two and three K blocks (the next panel's rows are
// fetched in the last one). Again with a list of lines to fetch (a batched step's next attention,
// kernels/fetch.hpp): the same bits, and the register tiles go through the whole list (they are
// the full panels' products, with M > 1 on a vector backend; a few lines, so that any such product
// has the k steps to fetch them all).
template <std::size_t M, std::size_t N, std::size_t K, std::size_t NP>
void check_gemm_panels(std::uint64_t seed, bool with_bias = false) {
  sf::xoshiro256 rng(seed);
  auto rnd = [&] { return static_cast<float>(rng.next() >> 40) * 0x1p-24f * 2.0f - 1.0f; };
  std::vector<float> A(M * K), Bm(K * N), Bp(K * N), C0(M * N), C1(M * N), bias(N);
  for (auto& v : A) v = rnd();
  for (auto& v : Bm) v = rnd();
  for (auto& v : bias) v = rnd();
  const float* b = with_bias ? bias.data() : nullptr;
  for (std::size_t n = 0; n < N; ++n) {  // panel by panel, the last one narrower
    const std::size_t n0 = n / NP * NP, w = N - n0 < NP ? N - n0 : NP;
    for (std::size_t k = 0; k < K; ++k) Bp[n0 * K + k * w + (n - n0)] = Bm[k * N + n];
  }
  sf::kernels::ref::gemm_nn<M, N, K, K, N, N, false>(C0.data(), A.data(), Bm.data(), b);
  auto check = [&]<class V>(const char* name) {
    std::fill(C1.begin(), C1.end(), 7.0f);
    sf::kernels::gemm_nn_panels_with<V, M, N, K, NP, K, N>(C1.data(), A.data(), Bp.data(), b);
    EXPECT_EQ(0, std::memcmp(C0.data(), C1.data(), C0.size() * sizeof(float)))
        << name << " M=" << M << " N=" << N << " K=" << K << " NP=" << NP << " bias " << with_bias;
    std::vector<float> lines(200);
    const sf::kernels::fetch_range<float> ranges[2] = {{lines.data(), 48, 3, 1}, {lines.data() + 150, 0, 1, 2}};
    sf::kernels::fetch_list<float> list{ranges, 2};
    std::fill(C1.begin(), C1.end(), 7.0f);
    sf::kernels::gemm_nn_panels_with<V, M, N, K, NP, K, N>(C1.data(), A.data(), Bp.data(), b, &list);
    EXPECT_EQ(0, std::memcmp(C0.data(), C1.data(), C0.size() * sizeof(float)))
        << name << " M=" << M << " N=" << N << " K=" << K << " NP=" << NP << " bias " << with_bias << ", fetching";
    const bool tiles = V::width > 1 && M > 1 && N >= NP && sf::parallel::current == nullptr;
    EXPECT_EQ(!tiles, list.more()) << name << " M=" << M << " N=" << N << " K=" << K << " NP=" << NP
                                   << ": the list " << (tiles ? "not fetched" : "fetched where nothing fetches");
  };
  for_each_backend(check);
}
// fetch_list's walk: each range's rows, each row's lines, in order; then no more. At compile time
// too (step() is constexpr).
constexpr bool fetch_walk_matches() {
  float m[600]{};
  const sf::kernels::fetch_range<float> r[2] = {{m + 1, 100, 3, 2}, {m + 400, 0, 1, 3}};
  sf::kernels::fetch_list<float> list{r, 2};
  const float* want[] = {m + 1, m + 17, m + 101, m + 117, m + 201, m + 217, m + 400, m + 416, m + 432};
  for (const float* w : want)
    if (!list.more() || list.step() != w) return false;
  if (list.more()) return false;
  sf::kernels::fetch_list<float> again{r, 2};
  again.step();
  again.stop();
  return !again.more();
}
static_assert(fetch_walk_matches());
TEST(Decode, FetchListWalksEachRangeLineByLine) {
  EXPECT_TRUE(fetch_walk_matches());
  EXPECT_EQ(1u, sf::kernels::count_lines<float>(1));
  EXPECT_EQ(1u, sf::kernels::count_lines<float>(16));
  EXPECT_EQ(2u, sf::kernels::count_lines<float>(17));
  EXPECT_EQ(5u, sf::kernels::count_lines<float>(65));
}
TEST(Decode, GemmPanelsMatchesGemm) {
  check_gemm_panels<16, 200, 150, 64>(1);
  check_gemm_panels<13, 130, 70, 24>(2);
  check_gemm_panels<3, 128, 65, 64>(3);
  check_gemm_panels<1, 100, 33, 64>(4);
  check_gemm_panels<7, 257, 129, 32>(5);
  // the tiles' own width (each panel one stream), with a bias
  check_gemm_panels<16, 300, 140, sf::kernels::tile_panel_width<float>>(6, true);
  check_gemm_panels<4, 77, 65, sf::kernels::tile_panel_width<float>>(7, true);
}
