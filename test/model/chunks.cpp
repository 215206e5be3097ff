// The model, continued (part of the test_model program, see test/test_model.cpp): a batch run in
// chunks of sequences (sf::forward_backward, sf::batch_activations) gives the results of
// sf::forward + sf::backward on the whole batch, and allocates nothing (the check: chunks_check.hpp;
// ref-vaswani and the tied configuration: chunks_vaswani.cpp, chunks_tied.cpp).
#include <gtest/gtest.h>

#include "chunks_check.hpp"

namespace {
using sf_test::chunks_equal_whole_batch;
using sf_test::with_batch;

TEST(Model, ChunksEqualWholeBatchUntied) {  // RMSNorm, RoPE, untied, no bias
  chunks_equal_whole_batch<with_batch<sf::configs::ref_llama, 6>, 2>();
  chunks_equal_whole_batch<with_batch<sf::configs::ref_llama, 6>, 3>();
}
// The default chunk: the largest divisor of B with at most 512 tokens; B itself up to 512 tokens.
static_assert(sf::default_chunk_rows(sf::configs::nano) == 4);
static_assert(sf::default_chunk_rows(with_batch<sf::configs::nano, 32>) == 8);
static_assert(sf::default_chunk_rows(sf::configs::micro) == 4);
static_assert(sf::default_chunk_rows(sf::configs::small) == 2);
static_assert(sf::default_chunk_rows(with_batch<sf::configs::small, 3>) == 1);
static_assert(sf::default_chunk_rows(with_batch<sf::configs::nano, 12>) == 6);

}  // namespace
