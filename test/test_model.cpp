// The model: inference in a constant expression, inference == training forward, a batch in chunks,
// no heap allocation in forward, backward, inference or the optimizer step, compile-time memory sizes.
// One GoogleTest program in several translation units, one configuration each to keep each quick
// to compile: this file and test/model/*.cpp; the checks are in test/model/*.hpp.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <new>

#include "model/no_heap.hpp"
#include "staticformer/layers/position.hpp"
#include "staticformer/model.hpp"
#include "staticformer/simd.hpp"

// ---------------------------------------------------------------- allocation counter
std::atomic<long> sf_test::g_allocations{0};
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
inline constexpr sf::config tiny{{.V = 7, .T = 4, .D = 8, .H = 2, .L = 1, .F = 8, .norm = sf::norm_kind::layernorm, .position = sf::position_kind::learned,
                                 .activation = sf::activation_kind::gelu_tanh, .tied = true, .bias = true}, {.B = 1}};
inline constexpr sf::config tiny_rope{{.V = 7, .T = 4, .D = 8, .H = 2, .L = 1, .F = 8, .norm = sf::norm_kind::rmsnorm, .position = sf::position_kind::rope,
                                      .activation = sf::activation_kind::gelu, .tied = false, .bias = false}, {.B = 1}};

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

// RoPE's base (arch::rope_base, 10000 by default) sets ω_i = base^(-2i/d_k): the tables follow it.
TEST(Model, RopeBase) {
  constexpr sf::config wide_base = [] {
    sf::config c = tiny_rope;
    c.rope_base = 5e5;
    return c;
  }();
  using base_1e4 = sf::layers::rope<tiny_rope>;
  using base_5e5 = sf::layers::rope<wide_base>;
  constexpr std::size_t dk = tiny_rope.dk();  // 4: pairs i = 0, 1
  for (std::size_t t = 0; t < tiny_rope.T; ++t) {
    for (std::size_t i = 0; i < dk / 2; ++i) {
      const double w4 = std::pow(1e4, -2.0 * static_cast<double>(i) / dk), w5 = std::pow(5e5, -2.0 * static_cast<double>(i) / dk);
      EXPECT_NEAR(base_1e4::table.cos(t, i), std::cos(static_cast<double>(t) * w4), 1e-6) << t << ' ' << i;
      EXPECT_NEAR(base_5e5::table.cos(t, i), std::cos(static_cast<double>(t) * w5), 1e-6) << t << ' ' << i;
      EXPECT_NEAR(base_5e5::table.sin(t, i), std::sin(static_cast<double>(t) * w5), 1e-6) << t << ' ' << i;
    }
  }
  EXPECT_NE(base_1e4::table.sin(1, 1), base_5e5::table.sin(1, 1));
}

// RoPE's vector rotation (rope::rotate_row_simd, what rotate_row runs at run time where a backend
// fits) gives the reference loop's bits, for both pair conventions, forward and inverse, a query
// row (H heads) and a key row (kv heads), at every position, with each backend that fits: the
// native one, AVX2's in an AVX-512 build, and the emulated twin of each.
template <std::size_t D, std::size_t H, std::size_t KV, sf::rope_pairs_kind Pairs>
constexpr sf::config rope_shape{{.V = 5, .T = 7, .D = D, .H = H, .kv_heads = KV, .L = 1, .F = 8, .norm = sf::norm_kind::rmsnorm,
                                 .position = sf::position_kind::rope, .activation = sf::activation_kind::gelu, .tied = false,
                                 .bias = false, .rope_base = 5e5, .rope_pairs = Pairs}, {.B = 1}};

template <sf::config C, class V, bool Inverse, std::size_t NH>
int rope_vector_mismatches() {
  using R = sf::layers::rope<C>;
  constexpr std::size_t n = NH * C.dk();
  int bad = 0;
  for (std::size_t t = 0; t < C.T; ++t) {
    float ref[n], vec[n], any[n];
    for (std::size_t i = 0; i < n; ++i)  // values of both signs and several magnitudes, a zero, a -0
      ref[i] = vec[i] = any[i] = i == 3 ? 0.0f : i == 5 ? -0.0f : std::ldexp(std::sin(1.7f * float(i + 13 * t) + 0.3f), int(i % 7) - 3);
    R::template rotate_row_ref<Inverse, NH>(ref, t);
    if constexpr (R::template fits<V>) R::template rotate_row_simd<V, Inverse, NH>(vec, t);
    else R::template rotate_row<Inverse, NH>(vec, t);
    R::template rotate_row<Inverse, NH>(any, t);
    for (std::size_t i = 0; i < n; ++i) {
      bad += std::memcmp(&ref[i], &vec[i], sizeof(float)) != 0;
      bad += std::memcmp(&ref[i], &any[i], sizeof(float)) != 0;
    }
  }
  return bad;
}
template <sf::config C, class V, bool Twin = false>
void rope_vector_check(const char* what, int& backends) {
  using R = sf::layers::rope<C>;
  if constexpr (R::template fits<V>) {
    ++backends;
    EXPECT_EQ((rope_vector_mismatches<C, V, false, C.H>()), 0) << what << ' ' << V::name << " forward, query row";
    EXPECT_EQ((rope_vector_mismatches<C, V, true, C.H>()), 0) << what << ' ' << V::name << " inverse, query row";
    EXPECT_EQ((rope_vector_mismatches<C, V, false, C.kv()>()), 0) << what << ' ' << V::name << " forward, key row";
    if constexpr (!Twin) rope_vector_check<C, sf::simd::twin<V>, true>(what, backends);
  }
}
template <sf::config C>
int rope_vector_all(const char* what) {
  int backends = 0;
  rope_vector_check<C, sf::simd::native<float>>(what, backends);
#if defined(SF_SIMD_HAVE_AVX2)
  if constexpr (!std::is_same_v<sf::simd::native<float>, sf::simd::avx2>) rope_vector_check<C, sf::simd::avx2>(what, backends);
#endif
  return backends;
}
TEST(Model, RopeVectorRotationIsTheReference) {
  using sf::rope_pairs_kind;
  int n = 0;
  n += rope_vector_all<rope_shape<64, 8, 4, rope_pairs_kind::adjacent>>("d_k 8 adjacent (stories260K)");
  n += rope_vector_all<rope_shape<64, 8, 4, rope_pairs_kind::halves>>("d_k 8 halves");
  n += rope_vector_all<rope_shape<288, 6, 6, rope_pairs_kind::adjacent>>("d_k 48 adjacent (stories15M)");
  n += rope_vector_all<rope_shape<288, 6, 2, rope_pairs_kind::halves>>("d_k 48 halves");
  n += rope_vector_all<rope_shape<64, 2, 1, rope_pairs_kind::adjacent>>("d_k 32 adjacent");
  n += rope_vector_all<rope_shape<64, 2, 1, rope_pairs_kind::halves>>("d_k 32 halves");
  n += rope_vector_all<rope_shape<24, 2, 2, rope_pairs_kind::adjacent>>("d_k 12 adjacent");
#if defined(SF_SIMD_HAVE_AVX2) || defined(SF_SIMD_HAVE_NEON)
  EXPECT_GE(n, 8);  // (each vector backend fits several of these shapes, and its twin with it)
#endif
  std::printf("[ rope ] the vector rotation checked with %d backend/shape pairs\n", n);
}

// ---------------------------------------------------------------- infer == forward, no allocation
// (the check: test/model/no_heap.hpp; the other configurations: test/model/no_heap*.cpp)
TEST(Model, InferEqualsForwardNoHeapGpt2) { infer_equals_forward_and_no_heap<sf::configs::ref_gpt2>(); }

}  // namespace
