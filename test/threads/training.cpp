// Whole training steps of nano and ref-llama give bit-identical parameters with 1, 2 and 3 threads
// and with the stand-in runner (test_threads.cpp's program: see there).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "reverse_runner.hpp"
#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/threads.hpp"

using sf_test::reverse_runner;

namespace {
template <sf::config C>
struct trainer {
  sf::params<C> p, g;
  sf::activations<C> a;
  sf::adamw<sf::params<C>> opt;
  sf::tokens_t<C> x;
  sf::targets_t<C> y;
  void run(int steps) {
    sf::init_params(p, 7);
    opt.reset();
    sf::splitmix64 r{11};
    for (int s = 0; s < steps; ++s) {
      for (std::size_t i = 0; i < x.size; ++i) {
        x[i] = static_cast<std::int32_t>(r.next() % C.V);
        y[i] = static_cast<std::int32_t>(r.next() % C.V);
      }
      sf::forward(p, a, x, y);
      sf::zero(g);
      sf::backward(p, g, a, x, y);
      opt.step(p, g, 1e-3);
    }
  }
};
}  // namespace

template <sf::config C>
void check_training() {
  static trainer<C> t;
  static sf::params<C> one;
  t.run(3);
  one = t.p;
  const std::size_t min_elements = sf::parallel::split_min_elements;
  sf::parallel::split_min_elements = 1;  // split every element-wise and row-wise pass, however small
  for (std::size_t tasks = 2; tasks <= 5; tasks += 3) {  // the split alone, tasks in reverse order
    reverse_runner rr(tasks);
    sf::parallel::current = &rr.r;
    t.run(3);
    sf::parallel::current = nullptr;
    EXPECT_EQ(0, std::memcmp(&one, &t.p, sizeof one)) << tasks << " tasks in reverse";
  }
  for (std::size_t threads : {2u, 3u}) {
    sf::thread_pool pool(threads);
    sf::use_threads use(pool);
    t.run(3);
    EXPECT_EQ(0, std::memcmp(&one, &t.p, sizeof one)) << threads << " threads";
  }
  EXPECT_EQ(sf::parallel::current, nullptr);  // use_threads restored it
  sf::parallel::split_min_elements = min_elements;
}

TEST(Threads, TrainingStepsSameBits) {
  check_training<sf::configs::nano>();      // GPT-2 style
  check_training<sf::configs::ref_llama>();  // RoPE, RMSNorm, untied, B = 3 (odd splits of B·H)
}
