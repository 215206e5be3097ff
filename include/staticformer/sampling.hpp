// staticformer/sampling.hpp — the next token from a row of logits: greedy, temperature,
// top-k, top-p (nucleus) and their combination, by one of two recipes: the library's own, or
// llama2.c's run.c's (its random numbers and its arithmetic, so its text for the same logits).
//
//   static sf::sampler<C.V> s{/*seed=*/42};
//   if (auto st = s.configure({.temperature = 0.8f, .top_k = 40, .top_p = 0.95f}); !st) puts(st.message());
//   std::int32_t next = s.sample(logits_row);       // logits_row: (V)
//   s.configure({.temperature = 0.8f, .top_p = 0.9f, .recipe = sf::sampling_recipe::llama2c});  // run.c's
//
// sampling_recipe::staticformer (the default), in this order:
//   temperature = 0: greedy, the most likely token (the lowest id among equal logits).
//   otherwise p = softmax(logits / temperature);
//   top_k > 0: keep the k most likely tokens; top_p < 1: of those, keep the smallest set of most
//   likely tokens whose probability reaches top_p (of the kept mass); then draw one token in
//   proportion to the kept probabilities, with u uniform in [0, 1) from xoshiro256** (24 bits).
//   Ties in probability are ordered by token id, so the same seed gives the same text on every
//   platform (float arithmetic only: no double, no heap, no exceptions; usable on a microcontroller).
// sampling_recipe::llama2c, run.c's sample() step for step (no top_k: it must be 0):
//   temperature = 0: greedy as above (run.c's argmax), and no random number is drawn.
//   otherwise one coin per token from run.c's generator (xorshift64star below: the seed is its
//   state), x = logits / temperature (a division per logit), p = softmax(x): e^(x - max), summed
//   in id order, each divided by the sum; then
//   top_p = 1: the first token, in id order, whose running sum of p exceeds coin (else the last);
//   top_p < 1: nucleus — the tokens with p >= (1 - top_p) / (V - 1), ordered by p descending,
//   taken until their running sum exceeds top_p (else all of them), and the first whose running
//   sum exceeds coin · that sum (else the last taken). Tokens of equal p are ordered by id, as
//   glibc's qsort (a stable merge sort) leaves run.c's list, which it fills in id order; the C
//   standard does not fix qsort's order of equal elements, so a run.c on another C library may
//   order them otherwise. e^x is the library's float exp (simd::vexp, ≤ 1 ulp from the C
//   library's expf, which run.c calls): the recipe stays free of libm and double, and gives the
//   same bits at compile time and on every platform. A temperature so small that logits /
//   temperature overflows (where run.c's arithmetic gives NaN) is greedy.
// Bad options (temperature < 0 or not finite, top_k > V, top_k > 0 with llama2c, top_p outside
// (0, 1]) are an error value from configure(), and the sampler keeps its previous options.
// seed(s) seeds both generators (run.c's state is s itself: s = 0 gives coin 0 for ever; run.c
// replaces a seed of 0 by the time).
#pragma once
#include <cstddef>
#include <cstdint>

#include "staticformer/data.hpp"
#include "staticformer/kernels/vmath.hpp"
#include "staticformer/status.hpp"

namespace sf {

// Which recipe draws the token (the header comment above defines both).
enum class sampling_recipe : std::uint8_t {
  staticformer,  // the library's own: xoshiro256**, top-k then top-p
  llama2c,       // llama2.c's run.c: its xorshift64* coin, its softmax, its nucleus
};

struct sampling_options {
  float temperature = 1.0f;  // 0 = greedy
  std::size_t top_k = 0;     // 0 = no top-k filter
  float top_p = 1.0f;        // 1 = no nucleus filter
  sampling_recipe recipe = sampling_recipe::staticformer;
};

// llama2.c's run.c generator (random_u32, random_f32): xorshift64* on one 64-bit word, the seed
// being the word itself, the high 32 bits of the product as the number. constexpr, portable.
class xorshift64star {
 public:
  constexpr explicit xorshift64star(std::uint64_t seed = 0) : s_(seed) {}
  constexpr void seed(std::uint64_t seed) { s_ = seed; }
  constexpr std::uint32_t next_u32() {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return static_cast<std::uint32_t>((s_ * 0x2545F4914F6CDD1DULL) >> 32);
  }
  // uniform in [0, 1): the high 24 bits of next_u32() / 2^24
  constexpr float next_f32() { return static_cast<float>(next_u32() >> 8) / 16777216.0f; }
  constexpr std::uint64_t state() const { return s_; }

 private:
  std::uint64_t s_;
};

// ok, or what is wrong with `o` for a vocabulary of V tokens.
constexpr status check(const sampling_options& o, std::size_t V) {
  if (!(o.temperature >= 0.0f) || o.temperature > 3.0e38f)
    return status::error("sampling: temperature must be a finite number >= 0 (0 = greedy)");
  if (o.top_k > V) return status::error("sampling: top_k must be between 0 (off) and V = ", V, ", got ", o.top_k);
  if (o.top_k && o.recipe == sampling_recipe::llama2c)
    return status::error("sampling: llama2.c's recipe has no top_k (it must be 0), got ", o.top_k);
  if (!(o.top_p > 0.0f && o.top_p <= 1.0f)) return status::error("sampling: top_p must be in (0, 1] (1 = off)");
  return status::ok();
}

template <std::size_t V>
class sampler {
 public:
  constexpr explicit sampler(std::uint64_t seed = 0) : rng_(seed), runc_rng_(seed) {}

  // Validates and sets the options; on error the previous options stay.
  constexpr status configure(const sampling_options& o) {
    const status s = check(o, V);
    if (s) opt_ = o;
    return s;
  }
  constexpr const sampling_options& options() const { return opt_; }
  constexpr void seed(std::uint64_t s) {
    rng_.seed(s);
    runc_rng_.seed(s);
  }

  // The next token for one row of logits (V). Reads the logits, writes only the sampler's scratch.
  constexpr std::int32_t sample(const float* logits) {
    if (opt_.recipe == sampling_recipe::llama2c) return sample_llama2c(logits);
    const float inv_t = opt_.temperature == 0.0f ? 0.0f : 1.0f / opt_.temperature;
    if (opt_.temperature == 0.0f || inv_t > 3.0e38f) return argmax(logits);  // greedy (or 1/T overflows)
    // (logits - max) / T: the largest is 0, the others ≤ 0, so a tiny T cannot overflow
    const float m = logits[argmax(logits)];
    for (std::size_t i = 0; i < V; ++i) p_[i] = logits[i] - m;
    simd::softmax_scaled(p_, V, inv_t);
    for (std::size_t i = 0; i < V; ++i) id_[i] = static_cast<std::int32_t>(i);
    // Selection, most likely first, until top_k tokens or top_p of the (top-k) mass are taken.
    const std::size_t k = opt_.top_k ? opt_.top_k : V;
    float kept_mass = 1.0f;
    if (opt_.top_k) {  // the mass of the k most likely tokens, for top_p relative to it
      select(k);
      kept_mass = 0.0f;
      for (std::size_t i = 0; i < k; ++i) kept_mass += p_[i];
    }
    std::size_t n = 0;
    float mass = 0.0f;
    const float target = opt_.top_p * kept_mass;
    const bool sorted = !opt_.top_k && opt_.top_p >= 1.0f;  // every token is kept: sort them all at once
    if (sorted) sort_all();
    while (n < k) {
      if (!opt_.top_k && !sorted) select_one(n);
      mass += p_[n];
      ++n;
      if (opt_.top_p < 1.0f && mass >= target) break;
    }
    // Draw u · mass over the kept tokens.
    const float u = static_cast<float>(rng_.next() >> 40) * 0x1p-24f * mass;
    float acc = 0.0f;
    for (std::size_t i = 0; i < n; ++i) {
      acc += p_[i];
      if (u < acc) return id_[i];
    }
    return id_[n - 1];  // rounding: u fell past the last partial sum
  }

  // The first id of the largest logit (NaN skipped): run.c's argmax loop, vectorized (simd::argmax).
  static constexpr std::int32_t argmax(const float* logits) {
    return static_cast<std::int32_t>(simd::argmax(logits, V));
  }

 private:
  // run.c's sample(): its coin, its softmax, its multinomial or nucleus (the header comment).
  constexpr std::int32_t sample_llama2c(const float* logits) {
    if (opt_.temperature == 0.0f) return argmax(logits);
    const float coin = runc_rng_.next_f32();
    for (std::size_t i = 0; i < V; ++i) p_[i] = logits[i] / opt_.temperature;
    float m = p_[0];
    for (std::size_t i = 1; i < V; ++i) m = p_[i] > m ? p_[i] : m;
    if (!(m <= 3.4028235e38f && m >= -3.4028235e38f)) return argmax(logits);  // overflow, NaN, all -inf: greedy
    for (std::size_t i = 0; i < V; ++i) p_[i] -= m;
    simd::exp_row<V>(p_, p_);
    float sum = 0.0f;
    for (std::size_t i = 0; i < V; ++i) sum += p_[i];
    for (std::size_t i = 0; i < V; ++i) p_[i] /= sum;
    if (opt_.top_p >= 1.0f) {  // run.c's sample_mult
      float cdf = 0.0f;
      for (std::size_t i = 0; i < V; ++i) {
        cdf += p_[i];
        if (coin < cdf) return static_cast<std::int32_t>(i);
      }
      return static_cast<std::int32_t>(V - 1);
    }
    // run.c's sample_topp: the candidates in id order, sorted (p descending, then id), truncated.
    const float cutoff = (1.0f - opt_.top_p) / static_cast<float>(V > 1 ? V - 1 : 1);
    std::size_t n = 0;
    for (std::size_t i = 0; i < V; ++i) {
      if (p_[i] >= cutoff) {
        p_[n] = p_[i];
        id_[n++] = static_cast<std::int32_t>(i);
      }
    }
    if (n == 0) return argmax(logits);  // (only if top_p < 1/V, p nearly uniform: run.c reads before its list)
    sort_first(n);
    float cumulative = 0.0f;
    std::size_t last = n - 1;
    for (std::size_t i = 0; i < n; ++i) {
      cumulative += p_[i];
      if (cumulative > opt_.top_p) {
        last = i;
        break;
      }
    }
    const float r = coin * cumulative;
    float cdf = 0.0f;
    for (std::size_t i = 0; i <= last; ++i) {
      cdf += p_[i];
      if (r < cdf) return id_[i];
    }
    return id_[last];
  }

  // a before b: more likely, or as likely with a lower id
  constexpr bool before(std::size_t a, std::size_t b) const {
    return p_[a] > p_[b] || (p_[a] == p_[b] && id_[a] < id_[b]);
  }
  // Brings the most likely of positions [i, V) to position i.
  constexpr void select_one(std::size_t i) {
    std::size_t best = i;
    for (std::size_t j = i + 1; j < V; ++j)
      if (before(j, best)) best = j;
    if (best != i) {
      const float tp = p_[i];
      p_[i] = p_[best];
      p_[best] = tp;
      const std::int32_t ti = id_[i];
      id_[i] = id_[best];
      id_[best] = ti;
    }
  }
  constexpr void select(std::size_t k) {
    for (std::size_t i = 0; i < k; ++i) select_one(i);
  }
  // Orders all V positions most likely first, as select(V) does (`before` is a total order, so
  // the result is the same), in O(V log V) instead of O(V²): a heap sort, the least likely at the root.
  constexpr void sort_all() { sort_first(V); }
  // The same for the first n positions.
  constexpr void sort_first(std::size_t n) {
    for (std::size_t i = n / 2; i-- > 0;) sift_down(i, n);
    for (std::size_t end = n; end-- > 1;) {
      swap_positions(0, end);
      sift_down(0, end);
    }
  }
  constexpr void sift_down(std::size_t i, std::size_t n) {
    for (;;) {
      std::size_t c = 2 * i + 1;
      if (c >= n) return;
      if (c + 1 < n && before(c, c + 1)) ++c;  // the less likely child
      if (!before(i, c)) return;
      swap_positions(i, c);
      i = c;
    }
  }
  constexpr void swap_positions(std::size_t a, std::size_t b) {
    const float tp = p_[a];
    p_[a] = p_[b];
    p_[b] = tp;
    const std::int32_t ti = id_[a];
    id_[a] = id_[b];
    id_[b] = ti;
  }

  sampling_options opt_{};
  xoshiro256 rng_;
  xorshift64star runc_rng_;
  float p_[V] = {};
  std::int32_t id_[V] = {};
};

}  // namespace sf
