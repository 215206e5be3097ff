// staticformer/threads.hpp — an opt-in thread pool for the host (optional header: <thread>).
//
//   sf::thread_pool pool(2);          // created once: 1 worker thread + the calling thread
//   sf::use_threads use(pool);        // for this scope the kernels split large products over it
//   ... sf::forward, sf::backward, opt.step ...   // the same bits as with one thread
//
// What runs in parallel: the matrix products of at least kernels::detail::parallel_min_work
// multiply-adds, split over disjoint row ranges of C, and attention's per-head work, split over
// (batch row, head) pairs (staticformer/parallel.hpp): every output is computed whole by one
// task, so results are bit-identical for any thread count. The rest runs on the calling thread.
// Nothing is allocated after construction (each worker's GEMM buffers are made then). Workers
// spin briefly waiting for work, then sleep (std::atomic::wait); a job is published with one
// atomic increment and finished when every task has been counted (the caller spins briefly,
// then sleeps until the last worker wakes it). A split started from inside a
// task runs serially (no nesting). The single-threaded path stays the default, and the only one
// on bare metal: without a pool, sf::parallel::current is null and nothing here is compiled in.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "staticformer/parallel.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace sf {

class thread_pool {
 public:
  // threads ≥ 1: the calling thread plus threads - 1 workers.
  explicit thread_pool(std::size_t threads) : n_(threads < 1 ? 1 : threads) {
    runner_.tasks = n_;
    runner_.run = &thread_pool::run;
    runner_.buffer = &thread_pool::buffer;
    runner_.own_buffer = &thread_pool::own_buffer;
    runner_.state = this;
    buffers_.reset(static_cast<unsigned char*>(
        ::operator new[](n_ * parallel::task_buffer_bytes, std::align_val_t{64})));
    for (std::size_t w = 1; w < n_; ++w) workers_.emplace_back([this, w] { work(w); });
  }
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  ~thread_pool() {
    stop_.store(true, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    for (auto& t : workers_) t.join();
  }

  std::size_t size() const { return n_; }
  const parallel::runner& runner() const { return runner_; }

 private:
  struct aligned_delete {
    void operator()(unsigned char* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };

  static void* buffer(const parallel::runner& r, std::size_t i) {
    return static_cast<thread_pool*>(r.state)->buffers_.get() + i * parallel::task_buffer_bytes;
  }
  // The worker index of this thread (0: not one of this pool's workers) and its buffer.
  static std::size_t& worker_index() {
    static thread_local std::size_t w = 0;
    return w;
  }
  static void* own_buffer(const parallel::runner& r) {
    const std::size_t w = worker_index();
    return w == 0 ? nullptr : buffer(r, w);
  }

  // Runs task(ctx, i) for every i < n_: i = 0 on the calling thread, i = w on worker w.
  static void run(const parallel::runner& r, void (*task)(void*, std::size_t), void* ctx) {
    auto* self = static_cast<thread_pool*>(r.state);
    parallel::in_task = true;  // no nested splits (the workers see it through the release below)
    self->task_ = task;
    self->ctx_ = ctx;
    self->done_.store(0, std::memory_order_relaxed);
    self->generation_.fetch_add(1, std::memory_order_release);
    if (self->sleepers_.load(std::memory_order_acquire) > 0) self->generation_.notify_all();
    task(ctx, 0);
    const std::size_t all = self->n_ - 1;
    std::size_t d = 0;
    spin([&] { return (d = self->done_.load(std::memory_order_acquire)) == all; });
    while (d != all) {  // a worker is late (e.g. more threads than free cores): sleep until it is done
      self->done_.wait(d, std::memory_order_acquire);
      d = self->done_.load(std::memory_order_acquire);
    }
    parallel::in_task = false;
  }

  void work(std::size_t w) {
    worker_index() = w;
    std::uint64_t seen = 0;
    for (;;) {
      std::uint64_t g = seen;
      spin([&] { return (g = generation_.load(std::memory_order_acquire)) != seen; });
      if (g == seen) {  // idle: sleep until the next job
        sleepers_.fetch_add(1, std::memory_order_acq_rel);
        generation_.wait(seen, std::memory_order_acquire);
        sleepers_.fetch_sub(1, std::memory_order_acq_rel);
        continue;
      }
      seen = g;
      if (stop_.load(std::memory_order_relaxed)) return;
      task_(ctx_, w);
      if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_ - 1) done_.notify_all();
    }
  }

  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  // Spins (pause instructions) until ready() or spin_time has passed; returns ready(). The caller
  // waiting for the last task and an idle worker waiting for the next job spin this long before
  // they sleep: long enough to bridge the serial work between two products of a step.
  static constexpr std::chrono::microseconds spin_time{2000};
  template <class Ready>
  static bool spin(Ready&& ready) {
    const auto t0 = std::chrono::steady_clock::now();
    for (unsigned i = 1;; ++i) {
      if (ready()) return true;
      pause();
      if (i % 256 == 0 && std::chrono::steady_clock::now() - t0 > spin_time) return ready();
    }
  }

  std::size_t n_;
  parallel::runner runner_{};
  std::unique_ptr<unsigned char[], aligned_delete> buffers_;
  std::vector<std::thread> workers_;
  void (*task_)(void*, std::size_t) = nullptr;
  void* ctx_ = nullptr;
  alignas(64) std::atomic<std::uint64_t> generation_{0};
  alignas(64) std::atomic<std::size_t> done_{0};
  alignas(64) std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
};

// For its lifetime, the kernels split work over `pool` (sf::parallel::current); then back to
// what was installed before.
class use_threads {
 public:
  explicit use_threads(const thread_pool& pool) : previous_(parallel::current) {
    parallel::current = pool.size() > 1 ? &pool.runner() : nullptr;
  }
  use_threads(const use_threads&) = delete;
  use_threads& operator=(const use_threads&) = delete;
  ~use_threads() { parallel::current = previous_; }

 private:
  const parallel::runner* previous_;
};

}  // namespace sf
