// staticformer/threads.hpp — an opt-in thread pool for the host (optional header: <thread>).
//
//   sf::thread_pool pool(2);          // created once: 1 worker thread + the calling thread
//   sf::use_threads use(pool);        // for this scope the kernels split large products over it
//   ... sf::forward, sf::backward, opt.step ...   // the same bits as with one thread
//
// What runs in parallel (staticformer/parallel.hpp): the matrix products of at least
// kernels::detail::parallel_min_work multiply-adds, split over column panels or row ranges of C;
// attention's per-head work, split over (batch row, head) pairs; the element-wise and row-wise
// passes, over rows or columns. Every output is computed whole by one task, so results are
// bit-identical for any thread count. Nothing is allocated after construction (each task's
// buffers are made then). A job's tasks are claimed one by one by whichever of its threads is
// running, so that a worker the system is slow to schedule (a busy machine) delays nothing: the
// caller runs the tasks. Task i uses buffer i, whichever thread runs it. Idle workers spin
// briefly waiting for work, then sleep (std::atomic::wait); the caller spins briefly for the
// last task, then sleeps until it is done. A split started from inside a task runs serially (no
// nesting). The single-threaded path stays the default, and the only one on bare metal: without
// a pool, sf::parallel::current is null and nothing here is compiled in.
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
    for (std::size_t w = 1; w < n_; ++w) workers_.emplace_back([this] { work(); });
  }
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  ~thread_pool() {
    stop_.store(true, std::memory_order_relaxed);
    work_.fetch_add(std::uint64_t{1} << 32, std::memory_order_release);  // a new job id wakes the sleepers
    work_.notify_all();
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
  // The task this thread is running (0: none, or task 0) and, inside it, the buffer of that task
  // (task 0: nullptr, the kernels' static buffers), for the products the task computes itself.
  static std::size_t& running_task() {
    static thread_local std::size_t t = 0;
    return t;
  }
  static void* own_buffer(const parallel::runner& r) {
    const std::size_t t = running_task();
    return t == 0 ? nullptr : buffer(r, t);
  }

  // Runs task(ctx, i) for every i < n_. Tasks are claimed one at a time by whichever thread is
  // running — the caller and the workers — so that a worker the system has not scheduled yet
  // (a busy machine) delays nothing: the caller then runs its tasks. Task i always uses buffer i
  // whichever thread runs it, and computes the same outputs: the same bits.
  static void run(const parallel::runner& r, void (*task)(void*, std::size_t), void* ctx) {
    auto* self = static_cast<thread_pool*>(r.state);
    parallel::in_task = true;  // no nested splits (the workers see it through the release below)
    self->task_ = task;
    self->ctx_ = ctx;
    self->done_.store(0, std::memory_order_relaxed);
    const std::uint64_t job = (self->work_.load(std::memory_order_relaxed) >> 32) + 1;
    self->work_.store(job << 32, std::memory_order_release);  // job id, next task 0
    if (self->sleepers_.load(std::memory_order_acquire) > 0) self->work_.notify_all();
    self->claim_all(job);
    std::size_t d = 0;
    spin([&] { return (d = self->done_.load(std::memory_order_acquire)) == self->n_; });
    while (d != self->n_) {  // a worker is still in a task (it was descheduled): sleep until it is done
      self->done_.wait(d, std::memory_order_acquire);
      d = self->done_.load(std::memory_order_acquire);
    }
    parallel::in_task = false;
  }

  // Claims and runs the tasks of job `job` until none is left. A claim is a compare-and-swap of
  // (job id, next task) in one word, so that a late worker never takes a task of a newer job
  // for one of an older job; task_ and ctx_ stay those of `job` until all its tasks are done.
  void claim_all(std::uint64_t job) {
    std::uint64_t w = work_.load(std::memory_order_acquire);
    for (;;) {
      if ((w >> 32) != job || (w & 0xffffffffu) >= n_) return;
      if (!work_.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
      const std::size_t i = static_cast<std::size_t>(w & 0xffffffffu);
      running_task() = i;
      task_(ctx_, i);
      running_task() = 0;
      if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) done_.notify_all();
      w = work_.load(std::memory_order_acquire);
    }
  }

  void work() {
    std::uint64_t seen = work_.load(std::memory_order_acquire) >> 32;  // the last job looked at
    for (;;) {
      std::uint64_t w = 0;
      spin([&] { return ((w = work_.load(std::memory_order_acquire)) >> 32) != seen || stop_.load(std::memory_order_relaxed); });
      if ((w >> 32) == seen && !stop_.load(std::memory_order_relaxed)) {  // idle: sleep until the next job
        sleepers_.fetch_add(1, std::memory_order_acq_rel);
        work_.wait(w, std::memory_order_acquire);
        sleepers_.fetch_sub(1, std::memory_order_acq_rel);
        continue;
      }
      if (stop_.load(std::memory_order_relaxed)) return;
      seen = w >> 32;
      claim_all(seen);
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
  alignas(64) std::atomic<std::uint64_t> work_{0};  // (job id << 32) | next task to claim
  alignas(64) std::atomic<std::size_t> done_{0};     // tasks of the current job finished
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
