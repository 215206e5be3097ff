// The model, continued (part of the test_model program, see test/test_model.cpp): chunks of a batch
// give the whole batch's results (chunks_check.hpp) on ref-vaswani, one sequence at a time.
#include <gtest/gtest.h>

#include "chunks_check.hpp"

using sf_test::chunks_equal_whole_batch;
using sf_test::with_batch;

TEST(Model, ChunksEqualWholeBatchUntiedVaswani) { chunks_equal_whole_batch<with_batch<sf::configs::ref_vaswani, 5>, 1>(); }
