// Shared by the translation units of test_model (test/test_model.cpp and test/model/*.cpp): the
// heap-allocation counter and the infer == forward, no-heap check.
#ifndef SF_TEST_MODEL_NO_HEAP_HPP
#define SF_TEST_MODEL_NO_HEAP_HPP

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"

namespace sf_test {
// Heap allocations so far: counted by the replacement operator new of test/test_model.cpp.
extern std::atomic<long> g_allocations;
}  // namespace sf_test

namespace {
using sf_test::g_allocations;

// ---------------------------------------------------------------- infer == forward, no allocation
template <sf::config C>
void infer_equals_forward_and_no_heap() {
  static sf::params<C> p, g;
  static sf::activations<C> a;
  static sf::inference_state<C> s;
  static sf::tokens_t<C> tok;
  static sf::targets_t<C> tgt;
  static sf::padding_t<C> pad;
  static sf::adamw<sf::params<C>> opt;
  sf::init_params(p, 7);
  sf::splitmix64 r{11};
  for (std::size_t i = 0; i < tok.size; ++i) {
    tok[i] = static_cast<std::int32_t>(r.next() % C.V);
    tgt[i] = static_cast<std::int32_t>(r.next() % C.V);
  }
  pad(0, 0) = 1;
  tgt(0, 0) = -1;

  const long before = g_allocations.load();
  const float loss = sf::forward(p, a, tok, tgt, &pad);
  sf::zero(g);
  sf::backward(p, g, a, tok, tgt, &pad);
  sf::infer(p, s, tok, &pad);
  const long after = g_allocations.load();
  EXPECT_EQ(after - before, 0) << "forward/backward/infer allocated on the heap";
  static sf::params<C> p_copy;
  p_copy = p;
  const long before_step = g_allocations.load();
  opt.reset();
  opt.step(p_copy, g, 1e-3);
  (void)sf::clip_grad_norm(g, 1.0);
  EXPECT_EQ(g_allocations.load() - before_step, 0) << "the optimizer step allocated on the heap";

  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_NEAR(loss, std::log(static_cast<float>(C.V)), 0.5f);  // a fresh model predicts nearly uniformly
  for (std::size_t i = 0; i < a.logits.size; ++i) ASSERT_FLOAT_EQ(a.logits[i], s.logits[i]);
  float gnorm = 0;
  sf::visit([&](const sf::param_name&, const auto& t) { for (float v : t) gnorm += v * v; }, g);
  EXPECT_GT(gnorm, 0.0f);
  EXPECT_TRUE(std::isfinite(gnorm));
}
}  // namespace

#endif  // SF_TEST_MODEL_NO_HEAP_HPP
