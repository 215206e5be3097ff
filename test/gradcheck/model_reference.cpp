// Finite-difference checks of the whole model's backward for docs/model.md's reference configurations.
// Part of the test_gradcheck program (see test/test_gradcheck.cpp).
#include "model_check.hpp"

namespace {
TEST(GradCheck, ModelReferenceConfigs) {
  model_check<sf::configs::ref_gpt2>(true, 8);
  model_check<sf::configs::ref_llama>(true, 8);
  model_check<sf::configs::ref_vaswani>(false, 8);
}
}  // namespace
