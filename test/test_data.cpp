// The data loader: the xoshiro256** generator against its reference outputs, the
// train/validation split, targets shifted by one, determinism for a seed, and
// bit-exact resumption from a saved data position.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <set>
#include <vector>

#include "staticformer/data.hpp"

namespace {
constexpr sf::config cfg{{.V = 1000, .T = 8, .D = 4, .H = 1, .L = 1, .F = 4}, {.B = 4}};
using tokens = sf::tokens_t<cfg>;
using targets = sf::targets_t<cfg>;

std::vector<std::int32_t> iota(std::size_t n) {
  std::vector<std::int32_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}
}  // namespace

// splitmix64(0), the standard first output: the seeding is the reference algorithm.
static_assert(sf::xoshiro256(0).state()[0] == 0xe220a8397b1dcdafULL);

TEST(Rng, Xoshiro256StarStarReferenceOutputs) {
  // The reference C implementation (prng.di.unimi.it) from state {1, 2, 3, 4}.
  sf::xoshiro256 r;
  r.set_state({1, 2, 3, 4});
  const std::uint64_t expect[] = {11520ULL, 0ULL, 1509978240ULL, 1215971899390074240ULL, 1216172134540287360ULL};
  for (const auto e : expect) EXPECT_EQ(r.next(), e);
}

TEST(Rng, BelowIsInRangeAndCoversIt) {
  sf::xoshiro256 r(42);
  std::vector<int> hist(7, 0);
  for (int i = 0; i < 70000; ++i) {
    const auto x = r.below(7);
    ASSERT_LT(x, 7u);
    ++hist[x];
  }
  for (int h : hist) EXPECT_NEAR(h, 10000, 500);  // ~5 standard deviations
  for (int i = 0; i < 1000; ++i) {
    const double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(Data, SplitSizes) {
  const auto ids = iota(1000);
  sf::dataset<cfg> d(ids, 0.1, 1);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d.train_size(), 900u);
  EXPECT_EQ(d.val_size(), 100u);
  EXPECT_EQ(d.val_ids().front(), 900);
  // validation: (100 − 1) / 8 = 12 windows → 3 batches of 4
  EXPECT_EQ(d.val_windows(), 12u);
  EXPECT_EQ(d.val_batches(), 3u);
}

TEST(Data, TrainingWindowsAreShiftedByOneAndStayInTheTrainSplit) {
  const auto ids = iota(1000);
  sf::dataset<cfg> d(ids, 0.1, 7);
  static tokens x;
  static targets y;
  std::set<std::int32_t> starts;
  for (int it = 0; it < 2000; ++it) {
    d.next_batch(x, y);
    for (std::size_t b = 0; b < cfg.B; ++b) {
      starts.insert(x(b, 0));
      for (std::size_t t = 0; t < cfg.T; ++t) {
        EXPECT_EQ(x(b, t), x(b, 0) + static_cast<std::int32_t>(t));  // a contiguous window
        EXPECT_EQ(y(b, t), x(b, t) + 1);                             // targets: the next token
        EXPECT_LT(y(b, t), 900);                                     // never reads validation tokens
      }
    }
  }
  // every start in [0, 900 − 8 − 1] = [0, 891] is reachable; 8000 draws over 892 values
  EXPECT_EQ(*starts.begin(), 0);
  EXPECT_EQ(*starts.rbegin(), 891);
  EXPECT_GT(starts.size(), 880u);
  EXPECT_EQ(d.batches_drawn(), 2000u);
}

TEST(Data, SameSeedSameBatchesDifferentSeedDifferentBatches) {
  const auto ids = iota(5000);
  sf::dataset<cfg> a(ids, 0.1, 123), b(ids, 0.1, 123), c(ids, 0.1, 124);
  static tokens xa, xb, xc;
  static targets ya, yb, yc;
  bool any_diff = false;
  for (int i = 0; i < 50; ++i) {
    a.next_batch(xa, ya);
    b.next_batch(xb, yb);
    c.next_batch(xc, yc);
    EXPECT_TRUE(xa == xb && ya == yb);
    any_diff = any_diff || !(xa == xc);
  }
  EXPECT_TRUE(any_diff);
}

TEST(Data, ResumeFromSavedStateIsBitExact) {
  const auto ids = iota(5000);
  sf::dataset<cfg> a(ids, 0.1, 9);
  static tokens xa, xb;
  static targets ya, yb;
  for (int i = 0; i < 17; ++i) a.next_batch(xa, ya);
  const sf::data_state saved = a.save_state();
  sf::dataset<cfg> b(ids, 0.1, 555);  // a different seed: restore_state overrides it
  b.restore_state(saved);
  EXPECT_EQ(b.batches_drawn(), 17u);
  for (int i = 0; i < 30; ++i) {
    a.next_batch(xa, ya);
    b.next_batch(xb, yb);
    ASSERT_TRUE(xa == xb && ya == yb) << "batch " << i;
  }
  EXPECT_TRUE(a.save_state() == b.save_state());
}

TEST(Data, ValidationBatchesCoverTheSplitInOrderAndPadTheLast) {
  const auto ids = iota(1000);
  sf::dataset<cfg> d(ids, 0.1, 1);
  static tokens x;
  static targets y;
  std::size_t windows = 0;
  for (std::size_t k = 0; k < d.val_batches(); ++k) {
    d.val_batch(k, x, y);
    for (std::size_t b = 0; b < cfg.B; ++b) {
      if (b < d.val_rows(k)) {
        ++windows;
        const auto start = static_cast<std::int32_t>(900 + (k * cfg.B + b) * cfg.T);
        for (std::size_t t = 0; t < cfg.T; ++t) {
          EXPECT_EQ(x(b, t), start + static_cast<std::int32_t>(t));
          EXPECT_EQ(y(b, t), start + static_cast<std::int32_t>(t) + 1);
        }
      } else {
        for (std::size_t t = 0; t < cfg.T; ++t) EXPECT_EQ(y(b, t), -1);
      }
    }
  }
  EXPECT_EQ(windows, d.val_windows());
  // a split whose window count is not a multiple of B: 1000 tokens, 10% → 100 → 12 windows; use 15%
  sf::dataset<cfg> e(ids, 0.15, 1);  // 150 val tokens → 18 windows → batches 4,4,4,4,2
  EXPECT_EQ(e.val_windows(), 18u);
  EXPECT_EQ(e.val_batches(), 5u);
  EXPECT_EQ(e.val_rows(4), 2u);
  e.val_batch(4, x, y);
  EXPECT_EQ(y(1, cfg.T - 1), static_cast<std::int32_t>(850 + 18 * cfg.T));
  EXPECT_EQ(y(2, 0), -1);
  EXPECT_EQ(y(3, cfg.T - 1), -1);
}

TEST(Data, ValWindowMatchesValBatch) {
  const auto ids = iota(1000);
  sf::dataset<cfg> d(ids, 0.1, 1);
  static tokens x, x2;
  static targets y, y2;
  d.val_batch(1, x, y);
  for (std::size_t b = 0; b < cfg.B; ++b) d.val_window(cfg.B + b, b, x2, y2);
  EXPECT_TRUE(x == x2 && y == y2);
}

TEST(Data, TooShortIsAnError) {
  const auto ids = iota(20);
  sf::dataset<cfg> d(ids, 0.5, 1);  // 10 + 10 tokens: each split holds one window of T + 1 = 9
  EXPECT_TRUE(d.ok());
  sf::dataset<cfg> e(ids, 0.7, 1);  // 6 training tokens < 9
  EXPECT_FALSE(e.ok());
  sf::dataset<cfg> f(ids, 1.5, 1);
  EXPECT_FALSE(f.ok());
}
