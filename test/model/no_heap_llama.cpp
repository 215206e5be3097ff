// The model, continued (part of the test_model program, see test/test_model.cpp): infer == forward
// and no heap allocation for ref-llama (the check: no_heap.hpp).
#include <gtest/gtest.h>

#include "no_heap.hpp"

namespace {
TEST(Model, InferEqualsForwardNoHeapLlama) { infer_equals_forward_and_no_heap<sf::configs::ref_llama>(); }
}  // namespace
