// The model, continued (part of the test_model program, see test/test_model.cpp): the bf16
// precision policy on ref-llama (the check and its tolerances: bf16_check.hpp).
#include <gtest/gtest.h>

#include "bf16_check.hpp"

TEST(ModelBf16, CloseToFloat32RefLlama) { sf_test::bf16_close_to_f32<sf::configs::ref_llama>("ref-llama"); }
