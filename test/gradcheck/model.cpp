// Finite-difference checks of the whole model's backward, for small models of each style.
// Part of the test_gradcheck program (see test/test_gradcheck.cpp); the reference
// configurations are in model_reference.cpp, the LLaMA-2 and Vaswani styles in model_more.cpp.
#include "model_check.hpp"

namespace {
TEST(GradCheck, ModelGpt2Style) { model_check<small(N::layernorm, P::learned, A::gelu_tanh, true, true)>(true); }
TEST(GradCheck, ModelLlamaStyle) { model_check<small(N::rmsnorm, P::rope, A::relu, false, false)>(true); }
}  // namespace
