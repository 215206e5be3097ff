// Finite-difference checks of the whole model's backward, continued (see model.cpp): the LLaMA-2
// style (gated feed-forward, multi-query attention) and the Vaswani style.
#include "model_check.hpp"

namespace {
TEST(GradCheck, ModelLlama2Style) { model_check<multi_query(gated(small(N::rmsnorm, P::rope, A::silu, false, false)))>(true); }
TEST(GradCheck, ModelVaswaniStyle) { model_check<small(N::layernorm, P::sinusoidal, A::gelu, true, false)>(false); }
}  // namespace
