// The model, continued (part of the test_model program, see test/test_model.cpp): the bf16
// precision policy (config.precision = bf16), on ref-gpt2 (the other configurations: bf16_*.cpp;
// the check and its tolerances: bf16_check.hpp).
#include <gtest/gtest.h>

#include <type_traits>

#include "bf16_check.hpp"

namespace {

static_assert(std::is_same_v<sf::params<sf::configs::nano>, sf::params<sf::configs::nano.with(sf::precision_kind::bf16)>>,
              "the weights of a bf16 config are the float32 weights");

TEST(ModelBf16, CloseToFloat32) {
  sf_test::bf16_close_to_f32<sf::configs::ref_gpt2>("ref-gpt2");
}

}  // namespace
