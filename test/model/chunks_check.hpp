// model/chunks_check.hpp — the test_model program's check that a batch run in chunks of sequences
// (sf::forward_backward, sf::batch_activations) gives the results of sf::forward + sf::backward on
// the whole batch and allocates nothing. Used by test/model/chunks*.cpp (so that none takes long
// to compile).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "no_heap.hpp"
#include "staticformer/init.hpp"
#include "staticformer/reflect.hpp"

namespace sf_test {

template <sf::config C, std::size_t B>
inline constexpr sf::config with_batch = [] {
  sf::config c = C;
  c.B = B;
  return c;
}();

// Whole batch vs Rows sequences at a time, on a batch with padding and ignored targets.
// Every gradient must have the same bits, except (tied models) tok_emb's, which sums the head's and
// the embedding's contributions in another order: within 2 float32 ulps of its largest element.
template <sf::config C, std::size_t Rows>
void chunks_equal_whole_batch() {
  static sf::params<C> p, g_whole, g_chunks;
  static sf::activations<C> a;
  static sf::batch_activations<C, float, Rows> ba;
  static sf::tokens_t<C> tok;
  static sf::targets_t<C> tgt;
  static sf::padding_t<C> pad;
  sf::init_params(p, 5);
  sf::splitmix64 r{17};
  for (std::size_t i = 0; i < tok.size; ++i) {
    tok[i] = static_cast<std::int32_t>(r.next() % C.V);
    tgt[i] = r.next() % 7 == 0 ? -1 : static_cast<std::int32_t>(r.next() % C.V);
  }
  for (std::size_t b = 0; b < C.B; b += 2) pad(b, 0) = 1;  // left padding in every other row

  const float whole = sf::forward(p, a, tok, tgt, &pad);
  sf::zero(g_whole);
  sf::backward(p, g_whole, a, tok, tgt, &pad);

  sf::zero(g_chunks);
  const long before = g_allocations.load();
  const float chunked = sf::forward_backward(p, g_chunks, ba, tok, tgt, &pad);
  const float loss_only = sf::forward(p, ba, tok, tgt, &pad);
  EXPECT_EQ(g_allocations.load() - before, 0) << "forward_backward allocated on the heap";

  EXPECT_EQ(std::memcmp(&whole, &chunked, sizeof(float)), 0) << whole << " vs " << chunked;
  EXPECT_EQ(std::memcmp(&whole, &loss_only, sizeof(float)), 0) << whole << " vs " << loss_only;
  // The last chunk's logits are the batch's last Rows rows
  const std::size_t off = (C.B - Rows) * C.T * C.V;
  EXPECT_EQ(std::memcmp(a.logits.data() + off, ba.a.logits.data(), ba.a.logits.size * sizeof(float)), 0);
  std::size_t differing = 0;
  sf::visit(
      [&](const sf::param_name& name, const auto& x, const auto& y) {
        const bool tied_emb = C.tied && name == "tok_emb.weight" && Rows < C.B;
        float largest = 0;
        for (std::size_t i = 0; i < x.size; ++i) largest = std::fmax(largest, std::fabs(x[i]));
        for (std::size_t i = 0; i < x.size; ++i) {
          if (tied_emb) {
            ASSERT_NEAR(x[i], y[i], 2 * 1.2e-7f * largest) << name.c_str() << "[" << i << "]";
            differing += x[i] != y[i];
          } else {
            ASSERT_EQ(std::memcmp(&x[i], &y[i], sizeof(float)), 0)
                << name.c_str() << "[" << i << "]: " << x[i] << " vs " << y[i];
          }
        }
      },
      g_whole, g_chunks);
  if (C.tied && Rows < C.B) std::printf("tok_emb.weight: %zu elements differ in the last bits\n", differing);
}

}  // namespace sf_test
