// staticformer/data.hpp — batches of random windows from a token stream.
//
//   std::vector<std::int32_t> ids = ...;                 // the encoded corpus
//   sf::dataset<C> data(ids, 0.1, seed);                 // last 10% = validation
//   static sf::tokens_t<C> x;  static sf::targets_t<C> y;
//   data.next_batch(x, y);                               // B random training windows
//   for (std::size_t k = 0; k < data.val_batches(); ++k) data.val_batch(k, x, y);
//
// Split: the first ⌈(1 − f)·n⌉ tokens are for training, the last ⌊f·n⌋ for
// validation (f = val_fraction), as nanoGPT does for tiny-shakespeare.
//
// A training window starts at s, drawn uniformly from [0, n_train − T − 1], and gives
//   tokens[b, t] = ids[s + t],   targets[b, t] = ids[s + t + 1]      (t = 0 … T−1)
// — the targets are the tokens shifted by one. Validation windows are fixed: window j
// starts at j·T in the validation split, they do not overlap, and batch k holds windows
// kB … kB+B−1; rows past the last window have all targets −1 (ignored by the loss).
//
// The generator is xoshiro256** seeded by splitmix64 — defined here, so the same seed
// draws the same windows with every compiler and standard library (the distributions
// of <random> are not specified bit for bit). Its four words plus the count of batches
// drawn are the whole data position: save_state()/restore_state() resume bit for bit.
// next_batch allocates nothing; the dataset only views the caller's tokens.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "staticformer/config.hpp"
#include "staticformer/params.hpp"
#include "staticformer/status.hpp"

namespace sf {

// xoshiro256** 1.0 (Blackman & Vigna), seeded by splitmix64. constexpr, portable.
class xoshiro256 {
 public:
  using state_type = std::array<std::uint64_t, 4>;

  constexpr explicit xoshiro256(std::uint64_t seed = 0) { this->seed(seed); }

  constexpr void seed(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& w : s_) {  // splitmix64: four well-mixed words, never all zero
      std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      w = z ^ (z >> 31);
    }
  }

  constexpr std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  constexpr std::uint64_t operator()() { return next(); }

  // Uniform integer in [0, n), n > 0, without modulo bias (rejection of the short tail).
  constexpr std::uint64_t below(std::uint64_t n) {
    const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    while (true) {
      const std::uint64_t r = next();
      if (r >= threshold) return r % n;
    }
  }
  // Uniform double in [0, 1) with 53 random bits.
  constexpr double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  constexpr const state_type& state() const { return s_; }
  constexpr void set_state(const state_type& s) { s_ = s; }
  friend constexpr bool operator==(const xoshiro256&, const xoshiro256&) = default;

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  state_type s_{};
};

// Everything that determines the next training batch.
struct data_state {
  xoshiro256::state_type rng{};
  std::uint64_t batches = 0;  // training batches drawn so far
  friend constexpr bool operator==(const data_state&, const data_state&) = default;
};

template <config C>
class dataset {
 public:
  static constexpr std::size_t B = C.B, T = C.T;

  // `ids` must outlive the dataset. Check ok() (or status()) before drawing batches.
  constexpr dataset(std::span<const std::int32_t> ids, double val_fraction, std::uint64_t seed)
      : ids_(ids), rng_(seed) {
    if (!(val_fraction >= 0.0 && val_fraction < 1.0)) {
      status_ = status::error("dataset: val_fraction must be in [0, 1)");
      return;
    }
    const auto n_val = static_cast<std::size_t>(static_cast<double>(ids.size()) * val_fraction);
    n_train_ = ids.size() - n_val;
    if (n_train_ < T + 1)
      status_ = status::error("dataset: the training split has ", n_train_, " tokens; a window needs T + 1 = ", T + 1);
    else if (val_fraction > 0.0 && n_val < T + 1)
      status_ = status::error("dataset: the validation split has ", n_val, " tokens; a window needs T + 1 = ", T + 1);
  }

  constexpr bool ok() const { return status_.is_ok(); }
  constexpr const sf::status& status() const { return status_; }
  constexpr std::span<const std::int32_t> train_ids() const { return ids_.first(n_train_); }
  constexpr std::span<const std::int32_t> val_ids() const { return ids_.subspan(n_train_); }
  constexpr std::size_t train_size() const { return n_train_; }
  constexpr std::size_t val_size() const { return ids_.size() - n_train_; }

  // B windows at random positions of the training split; targets = tokens shifted by one.
  constexpr void next_batch(tokens_t<C>& tokens, targets_t<C>& targets) {
    const std::uint64_t starts = n_train_ - T;  // s ∈ [0, n_train − T − 1]
    for (std::size_t b = 0; b < B; ++b) {
      const std::size_t s = static_cast<std::size_t>(rng_.below(starts));
      const std::int32_t* src = ids_.data() + s;
      std::int32_t* tk = tokens.row(b);
      std::int32_t* tg = targets.row(b);
      for (std::size_t t = 0; t < T; ++t) {
        tk[t] = src[t];
        tg[t] = src[t + 1];
      }
    }
    ++batches_;
  }

  // Validation: non-overlapping windows of the validation split, in order.
  constexpr std::size_t val_windows() const { return val_size() < T + 1 ? 0 : (val_size() - 1) / T; }
  constexpr std::size_t val_batches() const { return (val_windows() + B - 1) / B; }
  // Rows of batch k that hold a window (B except possibly in the last batch).
  constexpr std::size_t val_rows(std::size_t k) const {
    const std::size_t first = k * B, w = val_windows();
    return first >= w ? 0 : (w - first < B ? w - first : B);
  }
  constexpr void val_batch(std::size_t k, tokens_t<C>& tokens, targets_t<C>& targets) const {
    const std::size_t rows = val_rows(k);
    for (std::size_t b = 0; b < B; ++b) {
      if (b < rows) {
        val_window(k * B + b, b, tokens, targets);
      } else {
        for (std::size_t t = 0; t < T; ++t) {
          tokens(b, t) = 0;
          targets(b, t) = -1;
        }
      }
    }
  }

  // Validation window j (0 <= j < val_windows()) into row `row` of a batch.
  constexpr void val_window(std::size_t j, std::size_t row, tokens_t<C>& tokens, targets_t<C>& targets) const {
    const std::int32_t* src = ids_.data() + n_train_ + j * T;
    std::int32_t* tk = tokens.row(row);
    std::int32_t* tg = targets.row(row);
    for (std::size_t t = 0; t < T; ++t) {
      tk[t] = src[t];
      tg[t] = src[t + 1];
    }
  }

  // The data position, for checkpoints.
  constexpr data_state save_state() const { return {rng_.state(), batches_}; }
  constexpr void restore_state(const data_state& s) {
    rng_.set_state(s.rng);
    batches_ = s.batches;
  }
  constexpr std::uint64_t batches_drawn() const { return batches_; }

 private:
  std::span<const std::int32_t> ids_;
  std::size_t n_train_ = 0;
  xoshiro256 rng_;
  std::uint64_t batches_ = 0;
  sf::status status_{};
};

}  // namespace sf
