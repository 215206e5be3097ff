// Threads (threads.hpp, parallel.hpp): the GEMM split over tasks gives the same bits as one
// task — with a sequential stand-in runner that runs its tasks in reverse order (1 to 5 tasks,
// so the split itself is what is tested) and with real pools of 2, 3 and 4 threads — for
// gemm_nn (with bias, Acc), gemm_nt and gemm_tn (with its A copy) at sizes that are split and
// at odd ones, by row ranges and by column panels; and whole training steps (forward, backward,
// AdamW; the products, attention's per-head work and the element-wise and row-wise passes split,
// however small) of nano and ref-llama give bit-identical parameters with 1, 2 and 3 threads and
// with the stand-in runner (test/threads/training.cpp, a unit of its own so that neither takes long
// to compile).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "staticformer/kernels/gemm.hpp"
#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/threads.hpp"
#include "threads/reverse_runner.hpp"

namespace {
using sf_test::reverse_runner;


std::vector<float> random(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / 8388608.0f - 1.0f;
  }
  return v;
}

// The three products of one shape, into c (nn with bias, nt, tn accumulating), with whatever
// runner is installed.
template <std::size_t M, std::size_t N, std::size_t K>
std::vector<float> products() {
  static const auto A = random(M * K, 1), At = random(K * M, 2), B = random(K * N, 3), Bt = random(N * K, 4),
                    bias = random(N, 5), C0 = random(M * N, 6);
  std::vector<float> out;
  std::vector<float> C(M * N);
  sf::kernels::gemm_nn<M, N, K>(C.data(), A.data(), B.data(), bias.data());
  out.insert(out.end(), C.begin(), C.end());
  sf::kernels::gemm_nt<M, N, K>(C.data(), A.data(), Bt.data());
  out.insert(out.end(), C.begin(), C.end());
  C = C0;
  sf::kernels::gemm_tn<M, N, K, M, N, N, true>(C.data(), At.data(), B.data());
  out.insert(out.end(), C.begin(), C.end());
  return out;
}

template <std::size_t M, std::size_t N, std::size_t K>
void check_shape() {
  ASSERT_EQ(sf::parallel::current, nullptr);
  const auto serial = products<M, N, K>();
  for (std::size_t tasks = 1; tasks <= 5; ++tasks) {
    reverse_runner rr(tasks);
    sf::parallel::current = &rr.r;
    const auto split = products<M, N, K>();
    sf::parallel::current = nullptr;
    EXPECT_EQ(0, std::memcmp(serial.data(), split.data(), serial.size() * sizeof(float)))
        << "M=" << M << " N=" << N << " K=" << K << " in " << tasks << " tasks";
  }
  for (std::size_t threads : {2u, 3u, 4u}) {
    sf::thread_pool pool(threads);
    sf::use_threads use(pool);
    const auto split = products<M, N, K>();
    EXPECT_EQ(0, std::memcmp(serial.data(), split.data(), serial.size() * sizeof(float)))
        << "M=" << M << " N=" << N << " K=" << K << " on " << threads << " threads";
  }
}

}  // namespace

TEST(Threads, GemmSplitSameBits) {
  check_shape<256, 64, 64>();    // nano's products (split)
  check_shape<512, 256, 128>();  // gemm_tn copies A (M ≥ 96, K > 32, lda·4 % 256 == 0)
  check_shape<97, 33, 71>();     // odd, split
  check_shape<130, 257, 5>();    // odd, split (5 tasks: by column panels, the last one partial)
  check_shape<64, 200, 40>();    // 2 and 4 tasks: by column panels (3 full, 1 partial)
  check_shape<30, 20, 10>();     // too small to split: the serial path under a runner
}
