// Masked steps (decoder::step(tokens, active)) and continuous batching (sf::serve): a tied SwiGLU /
// grouped-query model of 6 streams, so that a step's rows are padded to 1, 4 or 6 and the tied
// head of several rows is the matrix product (decode.hpp's lm_head).
// (test_decode.cpp's program: see there for what is checked; the checks are decode/checks.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "checks.hpp"
#include "staticformer/serve.hpp"

using namespace sf_test;

namespace {

constexpr sf::config tied_llama2_b6() {
  sf::config c = sf::configs::ref_llama2;
  c.tied = true;
  c.V = 400;  // more than one panel of the tied head's copy (384 columns with AVX-512, 64 with AVX2)
  c.B = 6;
  return c;
}
constexpr sf::config C6 = tied_llama2_b6();
constexpr sf::config C1 = one_stream<C6>();

std::int32_t argmax(const float* row, std::size_t V) {
  std::size_t best = 0;
  for (std::size_t v = 1; v < V; ++v)
    if (row[v] > row[best]) best = v;
  return static_cast<std::int32_t>(best);
}

}  // namespace

// Streams at different positions step in random subsets (1 … 6 of them, so every padding: to 1, 4
// and 6 rows, rows that are not consecutive streams): every logit is sf::infer's bit for bit, and
// a stream left out keeps its position and logits.
template <sf::config C>
void check_masked_steps(std::uint64_t seed) {
  static sf::params<C> p;
  randomize(p, seed);
  static sf::decoder<C> dec;
  dec.use(p);
  constexpr std::size_t B = C.B;
  std::vector<std::int32_t> tok[B];
  std::vector<float> ref[B];
  diff d;
  for (std::size_t b = 0; b < B; ++b) {
    tok[b] = random_tokens(C.T, C.V, seed + 9 + b);
    ref[b] = full_logits<C>(p, tok[b]);
    const std::size_t n0 = 1 + b % (C.T - 1);  // different positions
    ASSERT_TRUE(dec.prefill(b, tok[b].data(), n0));
    compare<C.V>(d, dec.logits(b), &ref[b][(n0 - 1) * C.V]);
  }
  sf::xoshiro256 rng(seed);
  std::size_t rows_seen[B + 1] = {};
  for (std::size_t steps = 0; steps < 200; ++steps) {
    bool active[B];
    std::int32_t next[B];
    std::size_t n = 0;
    std::vector<float> before[B];
    std::size_t pos_before[B];
    for (std::size_t b = 0; b < B; ++b) {
      active[b] = rng.below(2) == 1 && dec.position(b) < C.T;
      next[b] = active[b] ? tok[b][dec.position(b)] : -5;  // (an inactive stream's token is not read)
      n += active[b];
      before[b].assign(dec.logits(b), dec.logits(b) + C.V);
      pos_before[b] = dec.position(b);
    }
    if (n == 0) continue;
    ++rows_seen[n];
    ASSERT_TRUE(dec.step(next, active));
    for (std::size_t b = 0; b < B; ++b) {
      if (active[b]) {
        ASSERT_EQ(dec.position(b), pos_before[b] + 1);
        compare<C.V>(d, dec.logits(b), &ref[b][pos_before[b] * C.V]);
      } else {
        ASSERT_EQ(dec.position(b), pos_before[b]);
        compare<C.V>(d, dec.logits(b), before[b].data());
      }
    }
  }
  for (std::size_t n : {1u, 2u, 3u, 4u, 5u}) EXPECT_GT(rows_seen[n], 0u) << n << " active streams never drawn";
  EXPECT_LE(d.max_rel, 1e-5);
  EXPECT_TRUE(d.same_bits);
  // a full stream among the active ones: refused, nothing moves
  bool all[B];
  std::int32_t zeros[B] = {};
  for (std::size_t b = 0; b < B; ++b) all[b] = true;
  std::size_t full = B;
  for (std::size_t b = 0; b < B; ++b)
    if (dec.position(b) == C.T) full = b;
  if (full < B) {
    const std::size_t pos0 = dec.position(0);
    const sf::status s = dec.step(zeros, all);
    EXPECT_FALSE(s);
    EXPECT_NE(std::string(s.message()).find("context full"), std::string::npos) << s.message();
    EXPECT_EQ(dec.position(0), pos0);
  }
  // no active stream: nothing happens
  bool none[B] = {};
  EXPECT_TRUE(dec.step(zeros, none));
}

TEST(Decode, MaskedStepsSameBits) { check_masked_steps<C6>(61); }

// c with these sizes (the rest of c kept)
constexpr sf::config sized(sf::config c, std::size_t V, std::size_t D, std::size_t H, std::size_t L, std::size_t F,
                           std::size_t T) {
  c.V = V, c.D = D, c.H = H, c.L = L, c.F = F, c.T = T;
  return c;
}
// The same past 8 MiB of weights (a tied head of 8000 × 288: the decoder's weights_from_memory
// paths, and a head copy of many panels, one matrix product per panel for several rows): still
// sf::infer's bits.
constexpr sf::config past_8_mib(sf::config c) {  // c at a shape whose weights pass 8 MiB (tied)
  return sized(c, 8000, 288, 4, 1, 100, 24);
}
constexpr sf::config weights_from_memory() {
  sf::config c = past_8_mib(C6);
  c.kv_heads = 2;
  return c;
}
TEST(Decode, MaskedStepsWeightsFromMemory) {
  static_assert(sf::decoder<weights_from_memory()>::weights_from_memory);
  static_assert(sf::decoder<weights_from_memory()>::panel_copies);  // the layers' matrices by panels
  static_assert(sf::decoder<weights_from_memory()>::fetch_caches);  // the products fetch the next attention's lines
  check_masked_steps<weights_from_memory()>(63);
}

// Past 8 MiB with prefill chunks of 32 and of 8 (sf::decoder::small_chunks): with weights from
// memory a chunk of 8 takes from 2 positions on (q_min = Q/4), so prompts of 2 to 16 positions
// end in chunks of 8; every kind of prompt still gives sf::infer's bits.
TEST(Decode, SmallChunksWeightsFromMemory) {
  constexpr sf::config c = [] {
    sf::config x = weights_from_memory();
    x.T = 40;
    return x;
  }();
  constexpr sf::decoder_options O{.prefill_chunk = 32};
  using dec = sf::decoder<c, float, O>;
  static_assert(dec::weights_from_memory && dec::small_chunks && dec::Q == 8 && dec::q_min == 2);
  for (std::size_t n : {1u, 2u, 3u, 5u, 8u, 9u, 16u, 17u, 20u, 33u, 39u, 40u}) check_prefill_then_steps<c, O>(n, 700 + n);
}

// Past 8 MiB, untied (lm_head's copy by panels, the rows of several streams through it panel by
// panel) and with biases, layer norm and learned positions (the panel products start from the
// bias): still sf::infer's bits.
constexpr sf::config untied_from_memory() {
  sf::config c = weights_from_memory();
  c.tied = false;
  c.V = 4000;
  return c;
}
constexpr sf::config biased_from_memory() {
  sf::config c = past_8_mib(sf::configs::ref_gpt2);
  c.B = 6;
  return c;
}
TEST(Decode, MaskedStepsWeightsFromMemoryUntiedBiased) {
  static_assert(sf::decoder<untied_from_memory()>::panel_copies && sf::decoder<untied_from_memory()>::head_copy);
  static_assert(sf::decoder<biased_from_memory()>::panel_copies && sf::configs::ref_gpt2.bias);
  check_masked_steps<untied_from_memory()>(64);
  check_masked_steps<biased_from_memory()>(65);
}

// Past 512 KiB of weights but not 8 MiB (a stories260K-like layer: d_k 8, kv-heads 4, F = 172):
// the layers' matrices (and an untied head) copied by panels of the one-row kernel's width
// (native_panel_width: three panels of 64 columns for F with AVX2), read by one row (gemv_panels)
// and by the rows of several streams (gemm_nn_panels, the tiles reading each panel a few columns at a
// time), weights in cache otherwise; tied and untied: still sf::infer's bits.
constexpr sf::config past_512_kib(bool tied) {
  sf::config c = sized(C6, 1024, 64, 8, 2, 172, 24);
  c.kv_heads = 4;
  c.tied = tied;
  return c;
}
TEST(Decode, MaskedStepsPanelCopiesInCache) {
  using tied = sf::decoder<past_512_kib(true)>;
  using untied = sf::decoder<past_512_kib(false)>;
  static_assert(!tied::weights_from_memory && tied::panel_copies && !untied::weights_from_memory &&
                untied::panel_copies && untied::head_copy);
  static_assert(!sf::decoder<past_512_kib(true), float, sf::small_ram>::panel_copies);
  check_masked_steps<past_512_kib(true)>(67);
  check_masked_steps<past_512_kib(false)>(68);
}

// Nine requests of different prompt lengths and budgets through 6 streams (so slots are reused,
// and the last steps run fewer streams), greedy: every request gets the tokens a decoder of one
// stream gives it alone; one request ends at an end token, one at the context's end.
TEST(Decode, ServeIsEachRequestAlone) {
  static sf::params<C6> p;
  randomize(p, 62);
  static sf::params<C1> p1;  // the same weights for one stream (the architecture is the same)
  randomize(p1, 62);
  constexpr std::size_t N = 9;
  std::vector<std::int32_t> prompts[N];
  sf::request req[N];
  for (std::size_t i = 0; i < N; ++i) {
    prompts[i] = random_tokens(1 + (i * 5) % 13, C6.V, 90 + i);
    req[i] = {prompts[i].data(), prompts[i].size(), 3 + (i * 7) % 11};
  }
  req[4].max_tokens = C6.T;  // runs to the end of its context
  const std::int32_t stop = 7;  // request 2 ends at this token (an end token)

  // alone: one stream each
  std::vector<std::int32_t> alone[N];
  static sf::decoder<C1> one;
  one.use(p1);
  for (std::size_t i = 0; i < N; ++i) {
    one.reset(0);
    ASSERT_TRUE(one.prefill(0, req[i].prompt, req[i].prompt_tokens));
    for (;;) {
      const std::int32_t t = argmax(one.logits(0), C6.V);
      alone[i].push_back(t);
      if (alone[i].size() == req[i].max_tokens || (i == 2 && t == stop) || one.position(0) == C6.T) break;
      ASSERT_TRUE(one.step(0, t));
    }
  }
  // a request's stop token must occur for the test to mean something: make request 2 stop at its
  // third token
  const std::int32_t stop2 = alone[2].size() >= 3 ? alone[2][2] : stop;
  alone[2].clear();
  one.reset(0);
  ASSERT_TRUE(one.prefill(0, req[2].prompt, req[2].prompt_tokens));
  for (;;) {
    const std::int32_t t = argmax(one.logits(0), C6.V);
    alone[2].push_back(t);
    if (alone[2].size() == req[2].max_tokens || t == stop2 || one.position(0) == C6.T) break;
    ASSERT_TRUE(one.step(0, t));
  }

  // together
  static sf::decoder<C6> dec;
  dec.use(p);
  std::vector<std::int32_t> got[N];
  std::vector<std::size_t> order;  // the request of every emitted token
  const sf::status s = sf::serve(
      dec, req, N, [&](std::size_t, const float* logits) { return argmax(logits, C6.V); },
      [&](std::size_t i, std::int32_t t) {
        got[i].push_back(t);
        order.push_back(i);
        return !(i == 2 && t == stop2);
      });
  ASSERT_TRUE(s) << s.message();
  for (std::size_t i = 0; i < N; ++i) EXPECT_EQ(got[i], alone[i]) << "request " << i;
  EXPECT_EQ(alone[4].size(), C6.T - req[4].prompt_tokens + 1) << "request 4 ends with its context";
  EXPECT_LT(alone[2].size(), req[2].max_tokens) << "request 2 ends at its stop token";
  // the requests overlap: some token of a later request comes before the last one of an earlier
  bool interleaved = false;
  for (std::size_t k = 1; k < order.size(); ++k) interleaved = interleaved || order[k] < order[k - 1];
  EXPECT_TRUE(interleaved);
  // a bad prompt is the decoder's error
  const std::int32_t bad[1] = {static_cast<std::int32_t>(C6.V)};
  const sf::request r{bad, 1, 5};
  const sf::status e = sf::serve(
      dec, &r, 1, [&](std::size_t, const float* l) { return argmax(l, C6.V); }, [](std::size_t, std::int32_t) { return true; });
  EXPECT_FALSE(e);
  EXPECT_NE(std::string(e.message()).find("outside the vocabulary"), std::string::npos) << e.message();
}
