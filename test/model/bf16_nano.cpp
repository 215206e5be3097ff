// The model, continued (part of the test_model program, see test/test_model.cpp): the bf16
// precision policy on nano (the check and its tolerances: bf16_check.hpp).
#include <gtest/gtest.h>

#include "bf16_check.hpp"

TEST(ModelBf16, CloseToFloat32Nano) { sf_test::bf16_close_to_f32<sf::configs::nano>("nano"); }
