// `staticformer run`: the generation of one configuration — load (float or int8), quantize,
// save the int8 checkpoint, prefill the prompt, then sample and step token by token with the
// KV-cache decoder (decode.hpp), streaming the text. Included by tools/staticformer/engine_run.cpp;
// see tools/generate/generate.hpp. The file code is in weights_impl.hpp.
#ifndef SF_TOOLS_GENERATE_RUN_HPP
#define SF_TOOLS_GENERATE_RUN_HPP

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "generate.hpp"
#include "peak.hpp"
#include "staticformer/bpe.hpp"
#include "staticformer/decode.hpp"
#include "staticformer/io/safetensors_format.hpp"
#include "staticformer/quantize.hpp"
#include "staticformer/sampling.hpp"
#include "weights.hpp"

namespace sf_gen {
namespace detail {

using clock_type = std::chrono::steady_clock;
inline double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Writes one byte of every 4 KiB page of the static object at p (n bytes) with its own value: the
// kernel maps static storage at its first write, a page fault a page, and the decoder's buffers
// are otherwise first written during the prompt's prefill, whose time would then count them.
inline void touch_pages(void* p, std::size_t n) {
  volatile unsigned char* b = static_cast<unsigned char*>(p);
  for (std::size_t i = 0; i < n; i += 4096) b[i] = b[i];
  if (n) b[n - 1] = b[n - 1];
}

// An error: one line on stderr ("staticformer run: what: message"), exit status 1.
template <class Tok>
int fail(const job<Tok>& j, const std::string& what, const char* message) {
  std::fprintf(stderr, "%s: %s%s%s\n", j.program, what.c_str(), what.empty() ? "" : ": ", message);
  return 1;
}

// Prints the text of token `id` after token `prev` (-1: none); returns its last byte (or `last`).
// A tokenizer with pieces in context (a BPE tokenizer.bin: sf::tokenizer_with_context) prints as
// llama2.c's run.c does: the piece after prev (no space after BOS, <0xXX> as the byte), nothing for
// a lone byte that is neither printable nor white space (sf::bpe_printable). Others print the piece
// of id, '?' for an id without one (a model whose V exceeds the vocabulary).
template <sf::tokenizer Tok>
char print_piece(const Tok& tok, std::int32_t prev, std::int32_t id, char last) {
  if constexpr (sf::tokenizer_with_context<Tok>) {
    const std::string_view p = sf::bpe_printable(tok.piece_after(prev, id));
    if (p.empty()) return last;  // (nothing printed: fwrite takes no null pointer, even for 0 bytes)
    std::fwrite(p.data(), 1, p.size(), stdout);
    return p.back();
  } else {
    const std::string_view p = tok.piece(id);
    if (p.empty()) {
      std::fputc('?', stdout);
      return '?';
    }
    std::fwrite(p.data(), 1, p.size(), stdout);
    return p.back();
  }
}

// The decoder of `run` (and of bench_decode's streams, C's B): prefill chunks of 64 positions (the
// default is 16), so that a prompt's products read the weights once per 64 positions, which is what
// counts when they come from memory (a stories15M-shaped model's 24 MB of matrices). --eval steps
// the same type: a second decoder type would be a second copy of its code in the executable.
template <sf::config C, class W>
using run_decoder = sf::decoder<C, W, sf::decoder_options{.prefill_chunk = 64}>;

// Prefills the prompt (its last T tokens), then j.tokens times: sample, print (flushed), step.
// When the context is full the stream keeps its last 3T/4 tokens (decoder::slide).
template <sf::config C, class W, class Tok>
int decode(const sf::params<C, W>& weights, const job<Tok>& j, const char* config_name, double load_seconds) {
  static_assert(C.B == 1 && C.T >= 2, "staticformer run decodes one stream of at least 2 positions");
  static run_decoder<C, W> dec;  // (static: the cache and the buffers are not on the stack)
  static sf::sampler<C.V> sampler{0};
  constexpr std::size_t keep = C.T - (C.T >= 4 ? C.T / 4 : 1);  // tokens kept by a slide: 3T/4
  sampler.seed(j.seed);
  if (sf::status s = sampler.configure(j.sampling); !s) return fail(j, "", s.message());
  // Huge pages under the cache and a tied head's copy, before use() writes them: a token reads
  // every weight once, and 4 KiB pages cost a TLB miss every 4 KiB of weights past the caches.
  sf::io::detail::advise_huge_pages(&dec, sizeof dec);
  dec.use(weights);
  touch_pages(&dec, sizeof dec);  // (before the prompt's timing: mapping the buffers is loading's work)

  char last = '\n';
  std::int32_t prev = -1;  // the token before the next one printed
  const std::int32_t bos = j.tokenizer.bos();
  if (j.echo) {
    for (const std::int32_t id : j.prompt) {
      if (!(prev == -1 && id == bos && bos >= 0)) last = print_piece(j.tokenizer, prev, id, last);  // (BOS: not printed)
      prev = id;
    }
    std::fflush(stdout);
  } else if (!j.prompt.empty()) {
    prev = j.prompt.back();
  }
  const auto t0 = clock_type::now();
  const std::size_t n = std::min(j.prompt.size(), C.T);  // a longer prompt: its last T tokens
  sf::status s = dec.prefill(0, j.prompt.data() + (j.prompt.size() - n), n);
  const double prefill_seconds = seconds_since(t0);
  const auto t1 = clock_type::now();
  auto t_first = t1;  // when the first generated token was printed
  std::size_t generated = 0;
  while (s && generated < j.tokens) {
    const std::int32_t next = sampler.sample(dec.logits(0));
    if (next == bos && bos >= 0) break;  // as run.c: a BOS ends the text
    last = print_piece(j.tokenizer, prev, next, last);
    prev = next;
    std::fflush(stdout);
    if (++generated == 1) t_first = clock_type::now();
    if (generated == j.tokens) break;
    if (dec.position(0) == C.T) s = dec.slide(0, keep);
    if (s) s = dec.step(0, next);
  }
  const double seconds = seconds_since(t1);
  if constexpr (sf::tokenizer_with_context<Tok>) std::fputc('\n', stdout);  // as run.c
  else if (last != '\n' && ::isatty(::fileno(stdout))) std::fputc('\n', stdout);
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) return fail(j, "stdout", "cannot write the text");
  if (!s) return fail(j, j.path, s.message());  // (the decoder's checks: not expected to fail here)
  if (j.runc_stats && generated > 1)  // llama2.c's run.c: the rate from the end of the first step
    std::fprintf(stderr, "achieved tok/s: %f\n", static_cast<double>(generated - 1) / seconds_since(t_first));
  if (!j.quiet) {
    const std::size_t np = j.prompt.size();
    char cut[64] = "";  // a prompt longer than T: its last T tokens were prefilled
    if (n < np) std::snprintf(cut, sizeof cut, ", the last %zu", n);
    std::fprintf(stderr,
                 "%s: %zu tokens in %.3g s, %.0f tokens/s (prompt %zu token%s%s in %.3g s; "
                 "%s weights, %s; loaded in %.3g s)\n",
                 j.program, generated, seconds, seconds > 0 ? static_cast<double>(generated) / seconds : 0.0, np,
                 np == 1 ? "" : "s", cut, prefill_seconds, dec.int8_weights ? "int8" : "float", config_name,
                 load_seconds);
  }
  return 0;
}

// --eval: the mean cross-entropy (nats) of j.eval's tokens through the decoder, each predicted
// from those before it in windows of T tokens (window k: tokens k(T-1) .. k(T-1)+T-1, so every
// token but the first is predicted once, with up to T-1 before it), as examples/train measures
// its validation loss; printed with the perplexity, the count and the weights.
template <sf::config C, class W, class Tok>
int evaluate(const sf::params<C, W>& weights, const job<Tok>& j, const char* config_name) {
  static run_decoder<C, W> dec;
  dec.use(weights);
  const std::size_t n = j.eval.size();
  double sum = 0;
  std::size_t scored = 0;
  const auto t0 = clock_type::now();
  for (std::size_t start = 0; start + 1 < n; start += C.T - 1) {
    dec.reset(0);
    const std::size_t end = std::min(n, start + C.T);  // the window: tokens [start, end)
    for (std::size_t t = start; t + 1 < end; ++t) {
      if (sf::status s = dec.step(0, j.eval[t]); !s) return fail(j, j.path, s.message());
      const float* l = dec.logits(0);  // -log softmax(l)[next], in double
      double m = l[0], z = 0;
      for (std::size_t v = 1; v < C.V; ++v) m = std::max(m, static_cast<double>(l[v]));
      for (std::size_t v = 0; v < C.V; ++v) z += std::exp(static_cast<double>(l[v]) - m);
      sum += m + std::log(z) - static_cast<double>(l[j.eval[t + 1]]);
      ++scored;
    }
  }
  const double loss = sum / static_cast<double>(scored);
  std::printf("%s: loss %.6f (perplexity %.4f) over %zu tokens predicted in windows of %zu (%s weights, %s)\n",
              j.eval_path.c_str(), loss, std::exp(loss), scored, C.T, dec.int8_weights ? "int8" : "float",
              config_name);
  if (!j.quiet) std::fprintf(stderr, "%s: --eval in %.3g s\n", j.program, seconds_since(t0));
  return std::fflush(stdout) == 0 ? 0 : fail(j, "stdout", "cannot write");
}

// `bench --decode`: for each count R of j.bench_streams, R streams prefilled with the prompt (stream
// r's last token changed to make the streams differ), then j.tokens steps of all R together
// (decoder::step(tokens, active): one read of the weights per step), each stream sampling its own
// token (j.sampling, seed j.seed + r); the median of j.bench_repeat runs. Prints the time of a step
// (each stream's latency per token), the aggregate tokens/s and the rate of the weight products
// (2 × the weights each token multiplies: the blocks' matrices and the head; attention's own
// products are not counted) with its share of the FMA peak (peak.hpp). The peak is measured before
// the first count (print_cpu's line) and after every run of every count, the share is of the best
// of those measurements, and the lines are printed once all are in. (On a shared VM one
// measurement swings up to 2× within a minute — 45 to 82 GFLOP/s on the Zen 3 of
// docs/benchmarks.md — while the products' rate hardly moves: a share of the one measurement
// beside it was a share of that noise. The best is the ceiling, as the roofline scripts take the
// best bandwidth.) Times are the thread's CPU time, as the peak's: other processes on a shared core
// do not count.
template <sf::config C, std::size_t Streams, class W, class Tok>
int bench_decode(const sf::params<C, W>& weights, const job<Tok>& j, const char* config_name) {
  static constexpr sf::config CS{sf::arch_of(C), {.B = Streams, .precision = C.precision}};
  static run_decoder<CS, W> dec;
  static std::array<sf::sampler<C.V>, Streams> samplers;  // (default-initialized: sampler(seed = 0) is explicit)
  sf::io::detail::advise_huge_pages(&dec, sizeof dec);
  dec.use(weights);
  touch_pages(&dec, sizeof dec);
  const std::size_t n = std::min(j.prompt.size(), C.T - 1);  // (at least one step fits)
  const std::size_t steps = std::min<std::size_t>(std::max<std::size_t>(j.tokens, 1), C.T - n);
  constexpr std::size_t dk = C.D / C.H, kv = C.kv_heads ? C.kv_heads : C.H;
  constexpr double multiplied = static_cast<double>(
      C.L * (2 * C.D * C.D + 2 * C.D * kv * dk + (C.ffn == sf::ffn_kind::gated ? 3 : 2) * C.D * C.F) + C.D * C.V);
  std::printf("decode bench: %s, %s weights, prompt %zu tokens, %zu steps, median of %zu runs (CPU time)\n", config_name,
              dec.int8_weights ? "int8" : "float", n, steps, j.bench_repeat);
  // the products' instruction sets, this CPU's, the peak (the first of the run's measurements)
  const double first_peak = sf_bench::print_cpu(stdout, "  ", 0.05);
  struct result {
    std::size_t R;
    double step, prefill;
  };
  std::vector<result> results;
  std::vector<double> peaks{first_peak};  // the FMA peak: the line above, then after each run
  for (const std::size_t R : j.bench_streams) {
    std::vector<double> step_s, prefill_s;
    for (std::size_t k = 0; k < j.bench_repeat; ++k) {
      std::array<std::int32_t, Streams> next{};
      std::array<bool, Streams> active{};
      std::vector<std::int32_t> prompt(j.prompt.end() - static_cast<std::ptrdiff_t>(n), j.prompt.end());
      const double t0 = sf_bench::cpu_seconds();
      for (std::size_t r = 0; r < R; ++r) {
        prompt.back() = static_cast<std::int32_t>((static_cast<std::size_t>(j.prompt.back()) + r) % C.V);
        dec.reset(r);
        if (sf::status s = dec.prefill(r, prompt.data(), n); !s) return fail(j, j.path, s.message());
        samplers[r].seed(j.seed + r);
        if (sf::status s = samplers[r].configure(j.sampling); !s) return fail(j, "", s.message());
        next[r] = samplers[r].sample(dec.logits(r));
        active[r] = true;
      }
      const double t1 = sf_bench::cpu_seconds();
      for (std::size_t t = 0; t < steps; ++t) {
        if (sf::status s = dec.step(next.data(), active.data()); !s) return fail(j, j.path, s.message());
        for (std::size_t r = 0; r < R; ++r) next[r] = samplers[r].sample(dec.logits(r));
      }
      prefill_s.push_back(t1 - t0);
      step_s.push_back((sf_bench::cpu_seconds() - t1) / static_cast<double>(steps));
      if (!dec.int8_weights) peaks.push_back(sf_bench::peak_now(0.05));
    }
    std::sort(step_s.begin(), step_s.end());
    std::sort(prefill_s.begin(), prefill_s.end());
    results.push_back({R, step_s[step_s.size() / 2], prefill_s[prefill_s.size() / 2]});
  }
  const auto [low, best] = std::minmax_element(peaks.begin(), peaks.end());
  for (const result& r : results) {
    const double rate = static_cast<double>(r.R) / r.step, gflops = 2.0 * multiplied * rate * 1e-9;
    char products[192];  // float: GFLOP/s and the share of the float FMA peak; int8: its multiply-adds (×2)
    if (dec.int8_weights) {
      std::snprintf(products, sizeof products, "%.1f G int8 ops/s in the weight products", gflops);
    } else {
      std::snprintf(products, sizeof products,
                    "%.1f GFLOP/s in the weight products = %.0f%% of the FMA peak (%.1f GFLOP/s: the best of %zu "
                    "measurements in this run, %.1f-%.1f)",
                    gflops, 100.0 * gflops / *best, *best, peaks.size(), *low, *best);
    }
    std::printf("  streams %2zu: %.3f ms per step (each stream's latency per token), %.0f tokens/s aggregate, %s; "
                "prefill of the %zu prompts %.3f ms\n",
                r.R, r.step * 1e3, rate, products, r.R, r.prefill * 1e3);
  }
  return std::fflush(stdout) == 0 ? 0 : fail(j, "stdout", "cannot write");
}

}  // namespace detail

template <sf::config C, std::size_t Streams, class Tok>
int run(const sf::io::file& f, const job<Tok>& j, const char* config_name) {
  static sf::params<C> p;              // float weights
  static sf::params<C, sf::int8> q;    // int8 weights (quantized, or loaded)
  // The sampling options first (what sampler::configure checks): refused before anything is loaded.
  if (sf::status s = sf::check(j.sampling, C.V); !s) return detail::fail(j, "", s.message());
  const auto t0 = detail::clock_type::now();
  const bool stored_int8 = is_int8(f);
  const bool int8 = stored_int8 || j.int8;
  if (!stored_int8) sf::io::detail::advise_huge_pages(&p, sizeof p);  // before the weights are written
  if (int8 || !j.save_int8.empty()) sf::io::detail::advise_huge_pages(&q, sizeof q);
  if (stored_int8) {
    if (sf::status s = weights<C>::load_int8(f, q); !s) return detail::fail(j, j.path, s.message());
  } else {
    if (sf::status s = weights<C>::load_float(f, p); !s) return detail::fail(j, j.path, s.message());
    if (int8 || !j.save_int8.empty()) sf::quantize(q, p);
  }
  if (j.loaded) j.loaded();  // (the file's memory freed: f is not read below)
  const double load_seconds = j.load_seconds + detail::seconds_since(t0);
  if (!j.save_int8.empty()) {
    if (sf::status s = weights<C>::save_int8(j.save_int8, q, j.tokenizer); !s)
      return detail::fail(j, j.save_int8, s.message());
    if (!j.quiet) std::fprintf(stderr, "%s: saved %s (int8 weights)\n", j.program, j.save_int8.c_str());
    if (j.tokens == 0) return 0;
  }
  if (!j.eval.empty())
    return int8 ? detail::evaluate<C>(q, j, config_name) : detail::evaluate<C>(p, j, config_name);
  if constexpr (Streams > 1)
    if (!j.bench_streams.empty())
      return int8 ? detail::bench_decode<C, Streams>(q, j, config_name)
                  : detail::bench_decode<C, Streams>(p, j, config_name);
  return int8 ? detail::decode<C>(q, j, config_name, load_seconds) : detail::decode<C>(p, j, config_name, load_seconds);
}

}  // namespace sf_gen

#endif  // SF_TOOLS_GENERATE_RUN_HPP
