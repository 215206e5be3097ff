// The model, continued (part of the test_model program, see test/test_model.cpp; a translation
// unit of its own to keep each quick to compile): infer == forward and no heap allocation for
// ref-vaswani (ref-llama and nano: no_heap_llama.cpp, no_heap_nano.cpp); the sizes are
// compile-time constants.
#include <gtest/gtest.h>

#include <type_traits>

#include "staticformer/memory.hpp"
#include "no_heap.hpp"

namespace {

// ---------------------------------------------------------------- infer == forward, no allocation (continued)
TEST(Model, InferEqualsForwardNoHeapVaswani) { infer_equals_forward_and_no_heap<sf::configs::ref_vaswani>(); }

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
