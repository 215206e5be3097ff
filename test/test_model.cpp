// The model: inference in a constant expression, inference == training forward,
// no heap allocation in forward, backward, inference or the optimizer step, compile-time memory sizes.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "staticformer/memory.hpp"
#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"

// ---------------------------------------------------------------- allocation counter
namespace {
std::atomic<long> g_allocations{0};
}
void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  std::abort();
}
void* operator new[](std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  std::abort();
}
// noinline: inlined into a caller, g++ 12 sees free() on a pointer from operator new and
// reports -Wmismatched-new-delete, not knowing that this operator new calls malloc.
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

// ---------------------------------------------------------------- a whole model inside the compiler
inline constexpr sf::config tiny{.V = 7, .T = 4, .D = 8, .H = 2, .L = 1, .F = 8, .B = 1,
                                 .norm = sf::norm_kind::layernorm, .position = sf::position_kind::learned,
                                 .activation = sf::activation_kind::gelu_tanh, .tied = true, .bias = true};
inline constexpr sf::config tiny_rope{.V = 7, .T = 4, .D = 8, .H = 2, .L = 1, .F = 8, .B = 1,
                                      .norm = sf::norm_kind::rmsnorm, .position = sf::position_kind::rope,
                                      .activation = sf::activation_kind::gelu, .tied = false, .bias = false};

template <sf::config C>
struct tiny_result {
  float logits[C.T * C.V];
};

// Initialise a model, run inference, return the logits — all in one constant expression.
template <sf::config C>
constexpr tiny_result<C> tiny_inference() {
  sf::params<C> p{};
  sf::init_params(p, 42, 0.5);
  sf::inference_state<C> s{};
  sf::tokens_t<C> tok{};
  for (std::size_t t = 0; t < C.T; ++t) tok[t] = static_cast<std::int32_t>((3 * t + 1) % C.V);
  sf::infer(p, s, tok);
  tiny_result<C> r{};
  for (std::size_t i = 0; i < C.T * C.V; ++i) r.logits[i] = s.logits[i];
  return r;
}

constexpr auto compile_time = tiny_inference<tiny>();
constexpr auto compile_time_rope = tiny_inference<tiny_rope>();

template <std::size_t n>
constexpr bool finite_and_varied(const float (&x)[n]) {
  float lo = x[0], hi = x[0];
  for (float v : x) {
    if (!(v == v) || v > 1e6f || v < -1e6f) return false;
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  return hi - lo > 0.01f;  // a model that ignored its input or weights would give flat logits
}
static_assert(finite_and_varied(compile_time.logits), "compile-time inference produced non-finite or flat logits");
static_assert(finite_and_varied(compile_time_rope.logits), "compile-time inference produced non-finite or flat logits");

template <sf::config C>
void compare_with_runtime(const tiny_result<C>& ct) {
  static sf::params<C> p;
  static sf::inference_state<C> s;
  static sf::tokens_t<C> tok;
  sf::init_params(p, 42, 0.5);
  for (std::size_t t = 0; t < C.T; ++t) tok[t] = static_cast<std::int32_t>((3 * t + 1) % C.V);
  sf::infer(p, s, tok);
  for (std::size_t i = 0; i < C.T * C.V; ++i) EXPECT_NEAR(ct.logits[i], s.logits[i], 1e-5f * (1 + std::fabs(s.logits[i])));
}
TEST(Model, CompileTimeInferenceMatchesRunTime) {
  compare_with_runtime<tiny>(compile_time);
  compare_with_runtime<tiny_rope>(compile_time_rope);
}

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
TEST(Model, InferEqualsForwardNoHeapGpt2) { infer_equals_forward_and_no_heap<sf::configs::ref_gpt2>(); }
TEST(Model, InferEqualsForwardNoHeapLlama) { infer_equals_forward_and_no_heap<sf::configs::ref_llama>(); }
TEST(Model, InferEqualsForwardNoHeapVaswani) { infer_equals_forward_and_no_heap<sf::configs::ref_vaswani>(); }
TEST(Model, InferEqualsForwardNoHeapNano) { infer_equals_forward_and_no_heap<sf::configs::nano>(); }

// ---------------------------------------------------------------- sizes are compile-time constants
static_assert(sf::memory_footprint<sf::configs::nano>::parameter_count ==
              65 * 64 + 64 * 64 + 2 * (2 * 64 + 4 * 64 * 64 + 4 * 64 + 2 * 64 + 64 * 256 + 256 + 256 * 64 + 64) + 2 * 64);
static_assert(sf::parameter_count<sf::params<sf::configs::ref_llama>> ==
              96 * 48 + 3 * (48 + 4 * 48 * 48 + 48 + 48 * 96 + 96 * 48) + 48 + 48 * 96);
static_assert(sizeof(sf::params<sf::configs::nano>) >= sf::memory_footprint<sf::configs::nano>::parameter_count * 4);

TEST(Model, ParamsDoNotDependOnBatch) {
  constexpr sf::config b32 = [] { sf::config c = sf::configs::nano; c.B = 32; return c; }();
  static_assert(std::is_same_v<sf::params<b32>, sf::params<sf::configs::nano>>);
  static_assert(!std::is_same_v<sf::activations<b32>, sf::activations<sf::configs::nano>>);
}

}  // namespace
