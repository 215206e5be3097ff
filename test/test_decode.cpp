// Incremental decoding (decode.hpp): prefill + steps against a full sf::infer of the same prefix,
// at every position, for docs/model.md's reference configurations (every position kind, both norms, every
// activation, tied and untied, with and without bias), prompts that end at odd positions and at
// the chunk boundaries, B streams at different positions, the context limit and slide, errors.
//
// The requirement is 1e-5 relative per logit; the decoder is built to give the same bits as
// sf::infer, and the test checks that too (it is the stronger statement, and the design's).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "decode_check.hpp"
#include "staticformer/data.hpp"
#include "staticformer/decode.hpp"
#include "staticformer/init.hpp"
#include "staticformer/model.hpp"
#include "staticformer/reflect.hpp"

namespace {

using sf_test::random_tokens;
using sf_test::randomize;

template <sf::config C>
constexpr sf::config one_stream() {
  sf::config c = C;
  c.B = 1;
  return c;
}

// The reference: logits of every position of one sequence of T tokens, by sf::infer (B = 1).
template <sf::config C>
std::vector<float> full_logits(const sf::params<C>& p, const std::vector<std::int32_t>& tokens) {
  static constexpr sf::config C1 = one_stream<C>();
  static sf::inference_state<C1> s;
  static sf::tokens_t<C1> tok;
  for (std::size_t t = 0; t < C.T; ++t) tok[t] = t < tokens.size() ? tokens[t] : 0;
  sf::infer(p, s, tok);
  return std::vector<float>(s.logits.data(), s.logits.data() + C.T * C.V);
}

struct diff {
  double max_rel = 0;
  bool same_bits = true;
};
// row (V) against ref (V): the worst |a - b| / |b| and whether the bits agree
template <std::size_t V>
void compare(diff& d, const float* row, const float* ref) {
  for (std::size_t v = 0; v < V; ++v) {
    const double den = std::fabs(ref[v]) > 0 ? std::fabs(ref[v]) : 1e-30;
    const double rel = std::fabs(static_cast<double>(row[v]) - ref[v]) / den;
    if (!(rel <= d.max_rel)) d.max_rel = rel;  // NaN propagates
    if (std::memcmp(&row[v], &ref[v], sizeof(float)) != 0) d.same_bits = false;
  }
}


// One stream of a decoder for C (B = C.B): prefill n0 tokens into stream b, then step to T,
// comparing every position's logits with the full inference.
template <sf::config C, sf::decoder_options O = sf::decoder_options{}>
void check_prefill_then_steps(std::size_t n0, std::uint64_t seed) {
  static sf::params<C> p;
  randomize(p, seed);
  const auto tokens = random_tokens(C.T, C.V, seed + 1);
  const auto ref = full_logits<C>(p, tokens);
  static sf::decoder<C, float, O> dec;
  dec.use(p);
  const std::size_t b = C.B - 1;
  diff d;
  ASSERT_TRUE(dec.prefill(b, tokens.data(), n0)) << "n0 = " << n0;
  ASSERT_EQ(dec.position(b), n0);
  compare<C.V>(d, dec.logits(b), &ref[(n0 - 1) * C.V]);
  for (std::size_t t = n0; t < C.T; ++t) {
    ASSERT_TRUE(dec.step(b, tokens[t]));
    compare<C.V>(d, dec.logits(b), &ref[t * C.V]);
  }
  EXPECT_LE(d.max_rel, 1e-5) << "prefill " << n0 << " then steps to T = " << C.T;
  EXPECT_TRUE(d.same_bits) << "prefill " << n0 << ": not bit-identical to sf::infer (max rel " << d.max_rel << ")";
  // the context is full: nothing more fits, and nothing changes
  const float before = dec.logits(b)[0];
  const sf::status s = dec.step(b, 0);
  EXPECT_FALSE(s);
  EXPECT_NE(std::string(s.message()).find("context full"), std::string::npos) << s.message();
  EXPECT_EQ(dec.position(b), C.T);
  EXPECT_EQ(dec.logits(b)[0], before);
}

// prompt lengths: 1, 2, 3 (single steps), odd ones, both sides of the chunk size P, T-1, T
template <sf::config C>
void check_config_all_boundaries() {
  constexpr std::size_t P = sf::decoder<C>::P;
  std::vector<std::size_t> ns = {1, 2, 3, 5, 7, P - 1, P, P + 1, C.T / 2 + 1, C.T - 1, C.T};
  for (std::size_t n : ns)
    if (n >= 1 && n <= C.T) check_prefill_then_steps<C>(n, 100 + n);
}

// Prefill in several pieces (odd lengths), then steps.
template <sf::config C>
void check_prefill_pieces(std::uint64_t seed) {
  static sf::params<C> p;
  randomize(p, seed);
  const auto tokens = random_tokens(C.T, C.V, seed + 7);
  const auto ref = full_logits<C>(p, tokens);
  static sf::decoder<C> dec;
  dec.use(p);
  diff d;
  std::size_t t = 0;
  for (std::size_t piece : {3u, 1u, 5u, 9u}) {
    if (t + piece > C.T) break;
    ASSERT_TRUE(dec.prefill(0, tokens.data() + t, piece));
    t += piece;
    compare<C.V>(d, dec.logits(0), &ref[(t - 1) * C.V]);
  }
  for (; t < C.T; ++t) {
    ASSERT_TRUE(dec.step(0, tokens[t]));
    compare<C.V>(d, dec.logits(0), &ref[t * C.V]);
  }
  EXPECT_LE(d.max_rel, 1e-5);
  EXPECT_TRUE(d.same_bits);
}

}  // namespace

TEST(Decode, RefGpt2EveryBoundary) { check_config_all_boundaries<sf::configs::ref_gpt2>(); }
TEST(Decode, RefLlamaEveryBoundary) { check_config_all_boundaries<sf::configs::ref_llama>(); }
TEST(Decode, RefVaswaniEveryBoundary) { check_config_all_boundaries<sf::configs::ref_vaswani>(); }
TEST(Decode, NanoEveryBoundary) { check_config_all_boundaries<sf::configs::nano>(); }
TEST(Decode, RefLlama2EveryBoundary) { check_config_all_boundaries<sf::configs::ref_llama2>(); }  // gated (SwiGLU)
// sf::small_ram (no prefill chunk buffers, a tied head read in place) and an odd chunk size: the
// same bits, less memory.
TEST(Decode, SmallRamOptions) {
  for (std::size_t n : {1u, 2u, 5u, 11u}) {
    check_prefill_then_steps<sf::configs::ref_gpt2, sf::small_ram>(n, 300 + n);  // tied, learned
    check_prefill_then_steps<sf::configs::ref_llama, sf::small_ram>(n, 310 + n);  // untied, RoPE
    check_prefill_then_steps<sf::configs::ref_vaswani, sf::small_ram>(n, 320 + n);
    check_prefill_then_steps<sf::configs::ref_llama2, sf::small_ram>(n, 350 + n);  // gated: a second F buffer
    check_prefill_then_steps<sf::configs::ref_gpt2, sf::decoder_options{.prefill_chunk = 5}>(n, 330 + n);
    check_prefill_then_steps<sf::configs::ref_gpt2, sf::decoder_options{.tied_head_copy = false}>(n, 340 + n);
  }
  check_prefill_then_steps<sf::configs::nano, sf::small_ram>(9, 350);
  using C = sf::config;
  constexpr C nano1 = one_stream<sf::configs::nano>();
  constexpr std::size_t full = sizeof(sf::decoder<nano1>), small = sizeof(sf::decoder<nano1, float, sf::small_ram>);
  constexpr std::size_t D = nano1.D, T = nano1.T, F = nano1.F, V = nano1.V, P = sf::decoder<nano1>::P;
  // what small_ram leaves out: the chunk buffers 7·P·D + P·F + P·T and the head copy D·V (floats)
  // (give or take alignment and the empty placeholders of the absent members)
  constexpr std::size_t left_out = (7 * P * D + P * F + P * T + D * V) * sizeof(float);
  EXPECT_GE(full - small + 256, left_out);
  EXPECT_LE(full - small, left_out + 256);
  // and holds the KV cache 2·L·B·T·D floats plus a few rows
  EXPECT_GE(small, 2 * nano1.L * nano1.T * nano1.D * sizeof(float));
  EXPECT_LE(small, 2 * nano1.L * nano1.T * nano1.D * sizeof(float) + 8 * 1024);
  std::printf("nano decoder (B = 1): %zu bytes, sf::small_ram %zu bytes\n", full, small);
}

// gemv_rows (a matrix stored transposed) against gemv over the transpose: the same bits.
TEST(Decode, GemvRowsMatchesGemv) {
  sf::xoshiro256 rng(9);
  auto rnd = [&] { return static_cast<float>(rng.next() >> 40) * 0x1p-24f * 2.0f - 1.0f; };
  for (std::size_t N : {1u, 3u, 4u, 6u, 17u, 65u})
    for (std::size_t K : {1u, 7u, 64u, 65u}) {
      const std::size_t lda = K + 2;
      std::vector<float> x(K), A(N * lda), At(K * N), y0(N), y1(N);
      for (auto& v : x) v = rnd();
      for (auto& v : A) v = rnd();
      for (std::size_t n = 0; n < N; ++n)
        for (std::size_t k = 0; k < K; ++k) At[k * N + n] = A[n * lda + k];
      sf::kernels::ref::gemv(y0.data(), x.data(), At.data(), N, N, K, static_cast<const float*>(nullptr));
      sf::kernels::gemv_rows(y1.data(), x.data(), A.data(), lda, N, K);
      EXPECT_EQ(0, std::memcmp(y0.data(), y1.data(), N * sizeof(float))) << "N=" << N << " K=" << K;
    }
}

TEST(Decode, PrefillInPieces) {
  check_prefill_pieces<sf::configs::ref_gpt2>(5);
  check_prefill_pieces<sf::configs::ref_llama>(6);
  check_prefill_pieces<sf::configs::ref_vaswani>(7);
}

// B streams stepping together, each at its own position (different prompt lengths), against
// a B = 1 full inference of each stream's sequence. ref_llama has B = 3.
TEST(Decode, StreamsAtDifferentPositions) {
  constexpr sf::config C = sf::configs::ref_llama;
  static_assert(C.B == 3);
  static sf::params<C> p;
  randomize(p, 11);
  std::vector<std::int32_t> tok[C.B];
  std::vector<float> ref[C.B];
  const std::size_t n0[C.B] = {1, 6, 17};
  static sf::decoder<C> dec;
  dec.use(p);
  diff d;
  for (std::size_t b = 0; b < C.B; ++b) {
    tok[b] = random_tokens(C.T, C.V, 40 + b);
    ref[b] = full_logits<C>(p, tok[b]);
    ASSERT_TRUE(dec.prefill(b, tok[b].data(), n0[b]));
    compare<C.V>(d, dec.logits(b), &ref[b][(n0[b] - 1) * C.V]);
  }
  // all streams step together until the longest is full
  for (std::size_t s = 0; n0[C.B - 1] + s < C.T; ++s) {
    std::int32_t next[C.B];
    for (std::size_t b = 0; b < C.B; ++b) next[b] = tok[b][n0[b] + s];
    ASSERT_TRUE(dec.step(next));
    for (std::size_t b = 0; b < C.B; ++b) compare<C.V>(d, dec.logits(b), &ref[b][(n0[b] + s) * C.V]);
  }
  EXPECT_LE(d.max_rel, 1e-5);
  EXPECT_TRUE(d.same_bits);
  // the full stream blocks a step of all streams, and nothing moves
  std::int32_t zeros[C.B] = {};
  const std::size_t pos0 = dec.position(0);
  EXPECT_FALSE(dec.step(zeros));
  EXPECT_EQ(dec.position(0), pos0);
  // but the others go on alone
  EXPECT_TRUE(dec.step(0, tok[0][pos0]));
  compare<C.V>(d, dec.logits(0), &ref[0][pos0 * C.V]);
  EXPECT_TRUE(d.same_bits);
}

// A decoder with B = 4 streams runs weights of the same model trained with B = 1 (only the
// weights' shapes must match: sf::params<C> does not depend on B).
TEST(Decode, OtherBatchSize) {
  constexpr sf::config C4 = [] {
    sf::config c = sf::configs::ref_vaswani;
    c.B = 4;
    return c;
  }();
  static sf::params<sf::configs::ref_vaswani> p;  // trained at B = 1
  randomize(p, 3);
  static sf::decoder<C4> dec;
  dec.use(p);  // same type
  const auto tok = random_tokens(C4.T, C4.V, 9);
  const auto ref = full_logits<sf::configs::ref_vaswani>(p, tok);
  ASSERT_TRUE(dec.prefill(2, tok.data(), 4));
  diff d;
  compare<C4.V>(d, dec.logits(2), &ref[3 * C4.V]);
  EXPECT_TRUE(d.same_bits);
}

// Position T: slide(b, keep) keeps the last `keep` tokens at positions 0 … keep-1.
TEST(Decode, SlideAtTheEndOfTheContext) {
  constexpr sf::config C = sf::configs::ref_gpt2;  // learned positions: the window really moves
  static sf::params<C> p;
  randomize(p, 21);
  const auto tok = random_tokens(2 * C.T, C.V, 22);
  static sf::decoder<C> dec;
  dec.use(p);
  ASSERT_TRUE(dec.prefill(0, tok.data(), C.T));
  EXPECT_FALSE(dec.prefill(0, tok.data(), 1));
  EXPECT_FALSE(dec.step(0, tok[C.T]));
  const std::size_t keep = 9;
  ASSERT_TRUE(dec.slide(0, keep));
  EXPECT_EQ(dec.position(0), keep);
  // the window is tok[T-keep, T): compare with sf::infer on it, then keep stepping
  std::vector<std::int32_t> window(tok.begin() + (C.T - keep), tok.begin() + (C.T - keep) + C.T);
  const auto ref = full_logits<C>(p, window);
  diff d;
  compare<C.V>(d, dec.logits(0), &ref[(keep - 1) * C.V]);
  for (std::size_t t = keep; t < C.T; ++t) {
    ASSERT_TRUE(dec.step(0, window[t]));
    compare<C.V>(d, dec.logits(0), &ref[t * C.V]);
  }
  EXPECT_TRUE(d.same_bits);
  EXPECT_LE(d.max_rel, 1e-5);
  EXPECT_FALSE(dec.slide(0, 0));
  EXPECT_FALSE(dec.slide(0, C.T));
}

TEST(Decode, ErrorsAreValues) {
  constexpr sf::config C = sf::configs::ref_gpt2;
  static sf::decoder<C> dec;
  const std::int32_t ok[2] = {1, 2};
  sf::status s = dec.prefill(0, ok, 1);
  EXPECT_FALSE(s);
  EXPECT_NE(std::string(s.message()).find("use(params)"), std::string::npos) << s.message();
  static sf::params<C> p;
  randomize(p, 1);
  dec.use(p);
  const std::int32_t bad[2] = {1, static_cast<std::int32_t>(C.V)};
  s = dec.prefill(0, bad, 2);
  EXPECT_FALSE(s);
  EXPECT_NE(std::string(s.message()).find("outside the vocabulary"), std::string::npos) << s.message();
  EXPECT_EQ(dec.position(0), 0u);
  EXPECT_FALSE(dec.step(0, -1));
  EXPECT_FALSE(dec.prefill(C.B, ok, 1));
  EXPECT_FALSE(dec.prefill(0, ok, 0));
  EXPECT_TRUE(dec.prefill(0, ok, 2));
  const std::int32_t steps[C.B] = {3, static_cast<std::int32_t>(C.V) + 5};
  EXPECT_FALSE(dec.step(steps));
  EXPECT_EQ(dec.position(0), 2u);
}

namespace {
// f.template operator()<V>(name) for every float backend compiled into this test.
template <class F>
void for_each_backend(F&& f) {
  f.template operator()<sf::simd::scalar<float>>("scalar");
#ifdef SF_SIMD_HAVE_AVX2
  f.template operator()<sf::simd::avx2>("avx2");
#endif
#ifdef SF_SIMD_HAVE_AVX512
  f.template operator()<sf::simd::avx512>("avx512");
#endif
#ifdef SF_SIMD_HAVE_NEON
  f.template operator()<sf::simd::neon>("neon");
#endif
}

}  // namespace

// The gemv kernel (every backend compiled in) against its reference on odd sizes: the same bits.
TEST(Decode, GemvMatchesReference) {
  sf::xoshiro256 rng(5);
  auto rnd = [&] { return static_cast<float>(rng.next() >> 40) * 0x1p-24f * 2.0f - 1.0f; };
  for (std::size_t N : {1u, 3u, 15u, 16u, 17u, 33u, 65u, 255u, 256u, 257u, 300u})
    for (std::size_t K : {1u, 2u, 7u, 16u, 63u, 64u, 65u, 129u}) {
      const std::size_t ldb = N + 3;
      std::vector<float> x(K), Bm(K * ldb), bias(N), y0(N), y1(N);
      for (auto& v : x) v = rnd();
      for (auto& v : Bm) v = rnd();
      for (auto& v : bias) v = rnd();
      for (int with_bias = 0; with_bias < 2; ++with_bias) {
        const float* bp = with_bias ? bias.data() : nullptr;
        sf::kernels::ref::gemv(y0.data(), x.data(), Bm.data(), ldb, N, K, bp);
        auto check = [&]<class V>(const char* name) {
          std::fill(y1.begin(), y1.end(), 7.0f);
          sf::kernels::gemv_with<V>(y1.data(), x.data(), Bm.data(), ldb, N, K, bp);
          EXPECT_EQ(0, std::memcmp(y0.data(), y1.data(), N * sizeof(float)))
              << name << " N=" << N << " K=" << K << " bias=" << with_bias;
        };
        for_each_backend(check);
      }
    }
}

// gemv_batch (1 to 5 products at once, every backend compiled in) against ref::gemv_batch on odd
// sizes: the same bits.
TEST(Decode, GemvBatchMatchesReference) {
  sf::xoshiro256 rng(6);
  auto rnd = [&] { return static_cast<float>(rng.next() >> 40) * 0x1p-24f * 2.0f - 1.0f; };
  for (std::size_t jobs_n = 1; jobs_n <= 5; ++jobs_n)
    for (std::size_t N : {1u, 7u, 16u, 33u, 65u, 130u})
      for (std::size_t K : {1u, 5u, 16u, 48u, 65u}) {
        const std::size_t ldb = N + 5;
        std::vector<float> x(jobs_n * K), Bm(jobs_n * K * ldb), bias(jobs_n * N), y0(jobs_n * N), y1(jobs_n * N);
        for (auto& v : x) v = rnd();
        for (auto& v : Bm) v = rnd();
        for (auto& v : bias) v = rnd();
        std::vector<sf::kernels::gemv_job<float>> j0(jobs_n), j1(jobs_n);
        for (std::size_t g = 0; g < jobs_n; ++g) {
          const float* bp = g % 2 ? bias.data() + g * N : nullptr;  // with and without bias
          j0[g] = {y0.data() + g * N, x.data() + g * K, Bm.data() + g * K * ldb, bp};
          j1[g] = {y1.data() + g * N, x.data() + g * K, Bm.data() + g * K * ldb, bp};
        }
        sf::kernels::ref::gemv_batch(j0.data(), jobs_n, ldb, N, K);
        auto check = [&]<class V>(const char* name) {
          std::fill(y1.begin(), y1.end(), 7.0f);
          sf::kernels::gemv_batch_with<V>(j1.data(), jobs_n, ldb, N, K);
          EXPECT_EQ(0, std::memcmp(y0.data(), y1.data(), y0.size() * sizeof(float)))
              << name << " jobs=" << jobs_n << " N=" << N << " K=" << K;
        };
        for_each_backend(check);
      }
}
