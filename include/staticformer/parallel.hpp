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
// Besides the products, attention's per-head work is split over (batch row, head) pairs
// (for_ranges below), each pair computed whole by one task, and the element-wise and row-wise
// passes (activations, norms, residual adds, bias and norm gradients) over rows or columns
// (split below): again the same bits.
// sf::parallel::current is read at run time only (never during constant evaluation).
#pragma once
#include <cstddef>
#include <type_traits>

namespace sf::parallel {

// A task's buffer: the GEMM's packing buffers in the first gemm_buffer_bytes, then
// scratch_bytes for a layer's own per-task scratch (attention's (T, T) gradient of P).
inline constexpr std::size_t gemm_buffer_bytes = 64 * 1024;
inline constexpr std::size_t scratch_bytes = 1024 * 1024;
inline constexpr std::size_t task_buffer_bytes = gemm_buffer_bytes + scratch_bytes;

struct runner {
  std::size_t tasks = 1;
  void (*run)(const runner& self, void (*task)(void* ctx, std::size_t i), void* ctx) = nullptr;
  void* (*buffer)(const runner& self, std::size_t i) = nullptr;
  // The buffer of the calling thread while it runs a task (nullptr on the thread that called
  // run, whose task uses the kernels' static buffers): the packing buffers of the products a
  // task computes itself.
  void* (*own_buffer)(const runner& self) = nullptr;
  void* state = nullptr;  // the runner's own data (e.g. its pool)
};

// The installed runner, or nullptr: everything runs on the calling thread.
inline const runner* current = nullptr;
// True while a runner's tasks run (set by the runner): no nested split, and each product a task
// computes uses that thread's own buffer.
inline bool in_task = false;

// The scratch area of task i (i ≥ 1) of r: scratch_bytes, 64-byte aligned.
inline void* task_scratch(const runner& r, std::size_t i) {
  return static_cast<unsigned char*>(r.buffer(r, i)) + gemm_buffer_bytes;
}

// f(begin, end, task) over a split of [0, n) into the installed runner's tasks (contiguous
// ranges, in task order), or f(0, n, 0) without one (or inside a task, or when n < 2).
// The ranges are a function of n and the task count only.
template <class F>
void for_ranges(std::size_t n, F&& f) {
  const runner* r = current;
  if (r == nullptr || r->tasks <= 1 || in_task || n < 2) {
    f(std::size_t{0}, n, std::size_t{0});
    return;
  }
  const std::size_t per = (n + r->tasks - 1) / r->tasks;
  auto task = [&](std::size_t i) {
    const std::size_t b = i * per < n ? i * per : n, e = (i + 1) * per < n ? (i + 1) * per : n;
    if (b < e) f(b, e, i);
  };
  r->run(*r, [](void* ctx, std::size_t i) { (*static_cast<decltype(task)*>(ctx))(i); }, static_cast<void*>(&task));
}

// f(begin, end) over [0, n) items of `elements` elements each: split over the installed runner's
// tasks (for_ranges) at run time when the work is at least split_min_elements elements, else
// f(0, n) — always during constant evaluation. For items that are independent outputs (rows of
// an element-wise or row-wise pass, columns of a sum over rows): the same bits for any split.
// (A variable, read at run time only: the tests lower it to split small shapes too.)
inline std::size_t split_min_elements = std::size_t{1} << 14;
template <class F>
constexpr void split(std::size_t n, std::size_t elements, F&& f) {
  if (std::is_constant_evaluated() || current == nullptr || n * elements < split_min_elements) {
    f(std::size_t{0}, n);
    return;
  }
  for_ranges(n, [&](std::size_t b, std::size_t e, std::size_t) { f(b, e); });
}

}  // namespace sf::parallel
