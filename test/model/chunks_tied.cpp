// The model, continued (part of the test_model program, see test/test_model.cpp): chunks of a batch
// give the whole batch's results (chunks_check.hpp) on a tied model.
#include <gtest/gtest.h>

#include "chunks_check.hpp"

using sf_test::chunks_equal_whole_batch;
using sf_test::with_batch;

TEST(Model, ChunksEqualWholeBatchTied) {  // LayerNorm, learned positions, tied, bias
  chunks_equal_whole_batch<with_batch<sf::configs::ref_gpt2, 4>, 2>();
  chunks_equal_whole_batch<sf::configs::ref_gpt2, 2>();  // Rows = B: one chunk, the same bits throughout
}
