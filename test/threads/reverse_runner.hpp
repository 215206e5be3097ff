// threads/reverse_runner.hpp — test_threads' stand-in runner (parallel.hpp), shared by its
// translation units (test_threads.cpp: the products; test/threads/training.cpp: training steps).
#pragma once
#include <cstdint>
#include <vector>

#include "staticformer/parallel.hpp"

namespace sf_test {

// A runner that runs its tasks one after the other on this thread, last task first.
struct reverse_runner {
  sf::parallel::runner r;
  std::vector<std::vector<unsigned char>> buffers;
  explicit reverse_runner(std::size_t tasks) : buffers(tasks, std::vector<unsigned char>(sf::parallel::task_buffer_bytes + 64)) {
    r.tasks = tasks;
    r.state = this;
    r.run = [](const sf::parallel::runner& self, void (*task)(void*, std::size_t), void* ctx) {
      sf::parallel::in_task = true;
      for (std::size_t i = self.tasks; i-- > 0;) task(ctx, i);
      sf::parallel::in_task = false;
    };
    r.own_buffer = [](const sf::parallel::runner&) -> void* { return nullptr; };  // one thread: the static ones
    r.buffer = [](const sf::parallel::runner& self, std::size_t i) -> void* {
      auto& b = static_cast<reverse_runner*>(self.state)->buffers[i];
      const auto p = reinterpret_cast<std::uintptr_t>(b.data());
      return b.data() + ((64 - p % 64) % 64);  // 64-byte aligned
    };
  }
};

}  // namespace sf_test
