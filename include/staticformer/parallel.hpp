// staticformer/parallel.hpp — where the kernels may split work over threads. None by default.
//
// The core has no threads (it builds for bare metal). A host program installs a runner — the
// thread pool of staticformer/threads.hpp does — and the GEMM driver then splits a large
// product into `tasks` pieces over disjoint row ranges of C. Every element of C is still
// computed by one task, as one chain of fused multiply-adds in k order (kernels/gemm.hpp), so
// the result is bit-identical for any number of tasks, and to the single-threaded run: the
// work is split over independent outputs, never over a reduction.
//
//   runner::tasks    how many pieces a split makes (the pool's threads, caller included)
//   runner::run      runs task(ctx, i) for every i < tasks, possibly at once, and returns when
//                    all are done
//   runner::buffer   scratch of task_buffer_bytes bytes for task i ≥ 1, aligned to 64 (task 0,
//                    the caller, uses the kernels' static buffers)
// sf::parallel::current is read at run time only (never during constant evaluation).
#pragma once
#include <cstddef>

namespace sf::parallel {

inline constexpr std::size_t task_buffer_bytes = 64 * 1024;

struct runner {
  std::size_t tasks = 1;
  void (*run)(const runner& self, void (*task)(void* ctx, std::size_t i), void* ctx) = nullptr;
  void* (*buffer)(const runner& self, std::size_t i) = nullptr;
  void* state = nullptr;  // the runner's own data (e.g. its pool)
};

// The installed runner, or nullptr: everything runs on the calling thread.
inline const runner* current = nullptr;

// Runs f(i) for i < n tasks with the installed runner when there is one and n > 1, else in order.
// f is called with i < r.tasks; n must equal current->tasks when a runner is used.
template <class F>
void for_tasks(const runner* r, F&& f) {
  if (r == nullptr || r->tasks <= 1) {
    f(std::size_t{0});
    return;
  }
  r->run(*r, [](void* ctx, std::size_t i) { (*static_cast<F*>(ctx))(i); }, static_cast<void*>(&f));
}

}  // namespace sf::parallel
