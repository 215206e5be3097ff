// sf_core_latency — one-way core-to-core latency: two threads pinned to cores A and B (default 0
// and 1) bounce one cache line N times. On a VM it tells where the host put the vCPUs: tens of ns
// when they share a cache, a few hundred across dies (docs/benchmarks.md, "Threads").
//
//   build/benchmark/sf_core_latency [A B]
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {
bool pin(int core) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(core, &s);
  return pthread_setaffinity_np(pthread_self(), sizeof s, &s) == 0;
}
alignas(64) std::atomic<int> line{0};
}  // namespace

int main(int argc, char** argv) {
  const int a = argc > 2 ? std::atoi(argv[1]) : 0, b = argc > 2 ? std::atoi(argv[2]) : 1;
  constexpr int n = 200000;
  bool pinned_b = false;
  std::thread other([&] {
    pinned_b = pin(b);
    for (int i = 0; i < n; ++i) {
      while (line.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      line.store(2 * i + 2, std::memory_order_release);
    }
  });
  const bool pinned_a = pin(a);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    line.store(2 * i + 1, std::memory_order_release);
    while (line.load(std::memory_order_acquire) != 2 * i + 2) {
    }
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / (2.0 * n);
  other.join();
  if (!pinned_a || !pinned_b) return std::fprintf(stderr, "sf_core_latency: cannot pin to cores %d and %d\n", a, b), 1;
  std::printf("cores %d <-> %d: %.0f ns one way\n", a, b, ns);
  return 0;
}
