// staticformer/decode.hpp — incremental decoding with a KV cache: prefill, step, B streams.
//
//   static sf::decoder<C> dec;                 // all storage inside; sizeof is a compile-time constant
//   dec.use(p);                                // p: sf::params<C> (trained with any batch size)
//   dec.prefill(b, prompt, n);                 // stream b: the prompt's n tokens (matrix–matrix products)
//   const float* row = dec.logits(b);          // (V): the next-token logits of stream b
//   dec.step(next);                            // one token per stream (next: B ids): matrix–vector products
//   dec.step(next, active);                    // one token for each stream with active[b] (the others wait)
//
// The rows of several streams go through each weight matrix together: one read of the weights per
// step for all of them (matrix products of R rows; a tied head's copy, and weights from memory
// copied, panel by panel). A masked
// step pads its rows to the next of 1, 4, 16, …, B with copies of its last active stream's row (the
// same inputs: the same key, value and logits), so only those row counts are compiled.
// Continuous batching over the streams: serve.hpp.
//
// With int8 weights (quantize.hpp): sf::decoder<C, sf::int8> dec; dec.use(q) with q an
// sf::params<C, sf::int8>. Every weight product then quantizes its input row (groups of 32) and
// runs the Q8_0 kernels (kernels/q8.hpp); attention, the cache, norms and logits stay float.
// The exactness below is the float decoder's; the int8 one is exact against itself (prefill,
// steps and B streams give the same bits: its products are row by row).
//
// Exactness. At every position the logits are bit-for-bit those of sf::infer over the same
// prefix (docs/model.md's model, no padding): every product sums in k order from 0 (+ bias) with one
// FMA at a time, as the GEMM tiles do (kernels/gemv.hpp), the norms, activations, softmax,
// RoPE and embeddings call the layers' own row functions, and keys past a query's position
// enter P·V only with probability exactly 0.
//
// No arithmetic of its own: every block runs the layers' forward for rows at positions —
// layers::attention::forward_chunk (a prefill chunk) or forward_step (one token of R streams),
// with the layer's share of the KV cache, and layers::ffn::rows, the function training's forward
// runs too — and the norms and embeddings their row functions. This file holds the loop, the
// storage and the product the layers run with (float matrix kernels, or int8 weights).
//
// Storage of a decoder<C> (C.B streams, context C.T; nothing on the heap, nothing big on the stack):
//   the KV cache, per layer a layers::attention<C>::cache<B>:
//     keys   kt: (B, H, T/KB, d_k, KB) — transposed by blocks of KB positions (attention::key_block:
//            64 when it divides T and is less than it), so that one query's scores q_h·K_hᵀ are
//            vector–matrix products over contiguous positions (and the chunk products of prefill
//            plain matmuls (P, d_k)·(d_k, KB)), and a stream's first positions are one contiguous
//            run per head
//     values v:  (B, T, D)      — a head's (T, d_k) slice is the right operand of P·V
//   the tokens of every stream (B, T) (for slide), positions (B), logits (B, V), a transposed copy
//   of the tied embedding (D, V) (tied models: the head is then a vector–matrix product too, over the
//   copy stored panel by panel so that it streams: kernels::gemv_panels), and for float weights
//   past 512 KiB a copy of the blocks by panels (and of an untied head: .panel_copy below),
//   the buffers of a step (B rows) and of a prefill chunk (P rows, and Q = P/4 when P ≥ 32), and,
//   when B > 1, the logits of a step's rows (B, V) before they go to their streams' (a step of
//   R < B active streams runs its R rows, padded, through each product: step(tokens, active)).
// The cache of stream b is zeroed by reset(b), so positions past a stream's own are always
// finite (0 or values this stream wrote), which keeps "probability 0 times a value" exactly 0.
//
// Prefill runs the prompt in chunks of P = min(16, T) positions through the matrix–matrix
// kernels; a chunk that would run past T starts earlier and recomputes positions already in the
// cache (same inputs, same bits). Prompts of fewer than P/4 new tokens go through single steps, and
// so do the last tokens of a longer prompt when fewer than P/4 remain after its full chunks. From
// P = 32 on there is a second chunk of Q = P/4 positions: the last 2Q positions or fewer go in
// chunks of Q, down to q_min (below), not in one chunk of P mostly of padding. A
// prompt's single steps compute the head (and its final norm) only at its last position, and a
// chunk's last layer only the keys and values of its positions (and the rest of the layer for the
// prompt's last position, in its last chunk, as a step).
//
// Options (the third template argument, sf::decoder_options; both choices give the same bits):
//   .prefill_chunk   P above (≥ 1). 1: prefill runs single steps and the decoder holds no chunk
//                    buffers (7·P·D + P·F + P·T floats fewer: 48 KiB at nano; from P = 32 on, a
//                    quarter more for the chunk of Q).
//   .tied_head_copy  a float tied model keeps tok_embᵀ (D, V) for a vector–matrix head (true), or
//                    reads tok_emb in place, one dot product per token (false: D·V floats fewer,
//                    the weights can stay in flash untouched).
//   .panel_copy      float weights past 512 KiB (panel_copies, below): the blocks copied with every
//                    matrix stored by panels — past 8 MiB (weights_from_memory) as wide as the matrix
//                    tiles (kernels::tile_panel_width), below as wide as the one-row kernel's panel
//                    (kernels::native_panel_width) — and an untied head's matrix too, so that a
//                    step's rows read each panel as one stream (true), or the matrices read where
//                    they are (false: the blocks' size fewer; 24 MB at a stories15M shape, 0.9 MB
//                    at stories260K).
// sf::small_ram is {.prefill_chunk = 1, .tied_head_copy = false, .panel_copy = false}: the state of
// a microcontroller build is then the KV cache plus a few rows (docs/firmware.md).
//
// Position T. A stream holds at most T tokens. prefill or step that would pass T changes
// nothing and returns an error ("context full"); the caller then either stops or calls
// slide(b, keep), which keeps the stream's last `keep` tokens (1 ≤ keep < T), re-prefills them
// at positions 0 … keep-1 and leaves their logits — exactly those of sf::infer on that window.
//
// Errors are values (sf::status): no weights bound, a token outside [0, V), a stream index
// ≥ B, an empty prompt, a full context. No exceptions, threads, heap or double on this path.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "staticformer/config.hpp"
#include "staticformer/kernels/fetch.hpp"
#include "staticformer/kernels/gemv.hpp"
#include "staticformer/kernels/vmath.hpp"
#include "staticformer/layers/attention.hpp"
#include "staticformer/layers/embedding.hpp"
#include "staticformer/layers/ffn.hpp"
#include "staticformer/layers/norm.hpp"
#include "staticformer/layers/position.hpp"
#include "staticformer/matmul.hpp"
#include "staticformer/params.hpp"
#include "staticformer/quantize.hpp"
#include "staticformer/status.hpp"

namespace sf {

// How a decoder trades RAM for speed (decode.hpp's header comment). Both choices give the same bits.
struct decoder_options {
  std::size_t prefill_chunk = 16;  // positions per prefill matrix product (≥ 1; 1: steps, no chunk buffers)
  bool tied_head_copy = true;      // float tied models: a transposed copy of tok_emb for the head
  bool panel_copy = true;          // float weights past 512 KiB: the layers' matrices (and an untied head) copied by panels
};
// The least RAM: the KV cache, the step rows, the logits and the token history.
inline constexpr decoder_options small_ram{.prefill_chunk = 1, .tied_head_copy = false, .panel_copy = false};

template <config C, class Wt = float, decoder_options O = decoder_options{}>
class decoder {
  static_assert(check_config<C>());
  static_assert(O.prefill_chunk >= 1, "sf::decoder: decoder_options::prefill_chunk must be at least 1");
  static_assert(std::is_same_v<Wt, float> || std::is_same_v<Wt, int8>,
                "sf::decoder<C, Wt>: the weights are float (sf::params<C>) or int8 (sf::params<C, sf::int8>)");
  using T = float;  // activations, cache and logits

 public:
  static constexpr bool int8_weights = std::is_same_v<Wt, int8>;
  static constexpr std::size_t B = C.B, S = C.T, D = C.D, H = C.H, dk = C.D / C.H, F = C.F, V = C.V, L = C.L;
  static constexpr std::size_t P = S < O.prefill_chunk ? S : O.prefill_chunk;  // prefill chunk (positions per matrix product)
  static constexpr bool chunks = P > 1;                                    // prefill through matrix products
  using weights_t = params<C, Wt>;
  // Weights past 8 MiB do not stay in L2 between tokens (nor, shared with other cores, surely in
  // L3): a step's products then read each matrix in as few streams as they can, with the kernels
  // for weights from memory (kernels::weights_in::memory: float Q, K and V one after the other, not
  // interleaved, on 256-bit vectors; int8 one column block per pass; kernels/weights_in.hpp).
  static constexpr bool weights_from_memory = sizeof(weights_t) > (std::size_t{8} << 20);
  static constexpr auto where = weights_from_memory ? kernels::weights_in::memory : kernels::weights_in::cache;
  // A second, smaller prefill chunk of Q = P/4 positions when P ≥ 32, for what is left of a prompt
  // after its chunks of P (the whole prompt, if shorter): up to 2Q positions go in chunks of Q, not
  // in a chunk of P whose other rows are padding. Fewer than q_min go in single steps: Q/4 with
  // weights from memory, where each step reads every weight (a stories15M-shaped model's 13-token
  // prompt: 2.5 times faster than its steps); P/4, as without chunks of Q, with weights in cache,
  // where a step is cheap and a chunk's code is slow on its first run (stories260K's 4-token prompt
  // took 1.6 times its steps' time as a chunk of 16; docs/benchmarks.md, "Zen 3: the first prefill
  // of a process").
  static constexpr std::size_t Q = P >= 32 ? P / 4 : 0;
  static constexpr bool small_chunks = Q > 1;
  static constexpr std::size_t q_min = weights_from_memory ? Q / 4 : P / 4;
  // Float weights past 512 KiB (decoder_options::panel_copy), more than the L2 of a small core
  // holds (a Zen 3's: its matrices then come from L3 at every token): a copy of the blocks with
  // every matrix stored by panels (blocks_p_, panels of HN columns), so that a step's products read
  // each panel as one stream (one row: kernels::gemv_panels, its sums in registers; R rows:
  // kernels::gemm_nn_panels), and an untied head's copy by panels as well. In place, a matrix
  // wider than one panel (stories260K's (64, 172) with AVX2: three panels of 64 columns) is read
  // a row stride apart. On the Zen 3 it was measured on (docs/benchmarks.md, "Zen 3: the
  // stories260K decoder's matrices by panels"), stories260K decoded 4-8% faster with the copy. (With
  // AVX-512, whose one panel holds 384 columns, such matrices are one stream already: the copy
  // reads the same.)
  static constexpr bool panel_copies =
      sizeof(weights_t) > (std::size_t{512} << 10) && !int8_weights && O.panel_copy;
  // head_t_: tok_embᵀ (tied), or lm_head's matrix (untied, with panel_copies), by panels
  static constexpr bool head_copy = !int8_weights && (C.tied ? O.tied_head_copy : panel_copies);
  // Batched steps of float weights from memory (by panels): the tiles of a step's products fetch
  // into L2 the keys and values the next attention reads (kernels/fetch.hpp) — block l's W_o and
  // feed-forward, then block l+1's Q, K and V, block l+1's; the head's, block 0's of the next step.
  // The weights pass through L3 at every step and evict the caches, which each stream's attention
  // then read from memory one short row after another (its keys are transposed: a row per
  // dimension) while the products, bound by the FMA units, leave the memory idle. A 16-stream
  // stories15M step at 100 tokens, with the row tiles of 5 (kernels/gemm.hpp): 7.22 → 6.75 ms on
  // a Zen 4, the tiles alone 6.99 (docs/benchmarks.md, "Batched decoding: 16 rows as 6 + 5 + 5;
  // the products fetch the next attention's keys and values"). The same bits.
  static constexpr bool fetch_caches = B > 1 && weights_from_memory && panel_copies;

  // Binds the weights (kept by pointer: they must outlive the decoder's use, and use() must be
  // called again after they change) and empties every stream.
  constexpr void use(const weights_t& p) {
    w_ = &p;
    if constexpr (head_copy && C.tied)  // head_t = tok_embᵀ: (D, V) by panels of HN columns (int8: tok_emb is the head matrix)
      for (std::size_t v = 0; v < V; ++v)
        for (std::size_t v0 = v / HN * HN, w = V - v0 < HN ? V - v0 : HN, i = 0; i < D; ++i)
          head_t_[v0 * D + i * w + (v - v0)] = p.tok_emb.weight(v, i);
    else if constexpr (head_copy)  // head_t = lm_head (D, V) by panels
      kernels::pack_panels(head_t_.data(), p.lm_head.weight.data(), V, V, D, HN);
    if constexpr (panel_copies)  // every matrix of the blocks by panels, at its own offset; vectors as they are
      for (std::size_t l = 0; l < L; ++l)
        visit(
            [](const auto&, auto& to, const auto& from) {
              using U = std::remove_cvref_t<decltype(from)>;
              if constexpr (U::rank == 2) kernels::pack_panels(to.data(), from.data(), U::cols, U::cols, U::rows, HN);
              else to = from;
            },
            blocks_p_[l], p.blocks[l]);
    reset();
  }

  // Empties stream b (position 0, its cache zeroed), or every stream.
  constexpr void reset(std::size_t b) {
    if (b >= B) return;
    pos_[b] = 0;
    for (std::size_t l = 0; l < L; ++l) cache_[l].reset(b);
  }
  constexpr void reset() {
    for (std::size_t b = 0; b < B; ++b) reset(b);
  }

  constexpr std::size_t position(std::size_t b) const { return b < B ? pos_[b] : 0; }  // tokens held by stream b
  constexpr const T* logits(std::size_t b) const { return logits_.data() + b * V; }   // (V), after prefill/step
  constexpr const std::int32_t* tokens(std::size_t b) const { return hist_.data() + b * S; }  // (position(b))

  // Appends the n tokens of `prompt` to stream b (positions position(b) … position(b)+n-1) and
  // leaves the logits of the last one in logits(b).     prompt: (n)
  constexpr status prefill(std::size_t b, const std::int32_t* prompt, std::size_t n) {
    if (status s = check_stream(b); !s) return s;
    if (n == 0) return status::error("sf::decoder::prefill: the prompt is empty");
    if (pos_[b] + n > S) return full("prefill", b, pos_[b], n);
    for (std::size_t i = 0; i < n; ++i)
      if (status s = check_token(prompt[i], "prefill"); !s) return s;
    const std::size_t a = pos_[b], end = a + n;
    for (std::size_t i = 0; i < n; ++i) hist_(b, a + i) = prompt[i];
    run(b, a, end);
    return status::ok();
  }

  // One token per stream (tokens: (B)), each at its own position; logits(b) for every stream.
  constexpr status step(const std::int32_t* tokens) {
    if (!w_) return unbound();
    for (std::size_t b = 0; b < B; ++b) {
      if (pos_[b] + 1 > S) return full("step", b, pos_[b], 1);
      if (status s = check_token(tokens[b], "step"); !s) return s;
    }
    for (std::size_t b = 0; b < B; ++b) hist_(b, pos_[b]) = tokens[b];
    step_rows<B>(all_streams.data());
    return status::ok();
  }
  // One token for each stream b with active[b] (tokens[b]; the other streams' tokens are not read,
  // and they keep their positions and logits). The active streams' rows go through every weight
  // matrix together: one read of the weights for all of them, as step(tokens) (continuous batching,
  // sf::generate_batched). The rows are padded to the next count of step_row_counts (1, 4, 16, …, B)
  // with copies of the last active stream's row (the same inputs: the same key, value and logits).
  // active, tokens: (B)
  constexpr status step(const std::int32_t* tokens, const bool* active) {
    if (!w_) return unbound();
    std::array<std::size_t, B> rows{};
    std::size_t n = 0;
    for (std::size_t b = 0; b < B; ++b) {
      if (!active[b]) continue;
      if (pos_[b] + 1 > S) return full("step", b, pos_[b], 1);
      if (status s = check_token(tokens[b], "step"); !s) return s;
      rows[n++] = b;
    }
    if (n == 0) return status::ok();
    for (std::size_t i = 0; i < n; ++i) hist_(rows[i], pos_[rows[i]]) = tokens[rows[i]];
    step_padded<1>(rows, n);
    return status::ok();
  }
  // One token for stream b alone (the others keep their positions and logits).
  constexpr status step(std::size_t b, std::int32_t token) {
    if (status s = check_stream(b); !s) return s;
    if (pos_[b] + 1 > S) return full("step", b, pos_[b], 1);
    if (status s = check_token(token, "step"); !s) return s;
    hist_(b, pos_[b]) = token;
    step_rows<1>(&b);
    return status::ok();
  }

  // Keeps the last `keep` tokens of stream b (1 ≤ keep < T), re-prefilled at positions 0 … keep-1.
  constexpr status slide(std::size_t b, std::size_t keep) {
    if (status s = check_stream(b); !s) return s;
    if (keep == 0 || keep >= S || keep > pos_[b])
      return status::error("sf::decoder::slide: keep must be in [1, min(position, T-1)]; keep = ", keep,
                           ", position = ", pos_[b], ", T = ", S);
    const std::size_t from = pos_[b] - keep;
    for (std::size_t i = 0; i < keep; ++i) hist_(b, i) = hist_(b, from + i);
    reset(b);
    run(b, 0, keep);
    return status::ok();
  }

 private:
  using rows_d = tensor<T, Batch<B>, Model<D>>;    // (B, D): one row per stream
  using rows_f = tensor<T, Batch<B>, Ffn<C.F>>;    // (B, F)
  using norm = layers::norm<C, T>;
  using attn = layers::attention<C, T>;
  using ffn = layers::ffn<C, T>;
  static constexpr bool gated_buffers = ffn::decode_buffers == 2;  // the feed-forward's rows need two (R, F) buffers
  using emb = layers::embedding<C, T>;

  // The product the layers run with (sf::linear's interface, matmul.hpp): the float matrix
  // kernels, or the int8 ones for int8 weights (linear below); one row's Q, K and V in one pass.
  struct product {
    decoder* d;
    template <class Y, class X, class W, class Bias>
    constexpr void operator()(Y&& y, const X& x, const W& w, const Bias& b) const {
      d->linear(y, input(x), w, b);
    }
    // (k and v may be narrower than q: grouped-query attention)
    template <class Yq, class Ykv, class X, class Wq, class Wkv, class Bq, class Bkv>
    constexpr void qkv(Yq&& q, Ykv&& k, Ykv&& v, const X& x, const Wq& wq, const Bq& bq, const Wkv& wk,
                       const Bkv& bk, const Wkv& wv, const Bkv& bv) const {
      constexpr bool one_row = detail::mt<X>::rows == 1;
      constexpr std::size_t DK = detail::mt<Ykv>::cols;
      if constexpr (one_row && int8_weights) {  // one row: quantized once for Q, K and V
        kernels::q8::quantize(d->xq_d_[0], x.data());
        kernels::q8::matvec(q.data(), d->xq_d_[0], wq.m, bias_of(bq), where);
        kernels::q8::matvec(k.data(), d->xq_d_[0], wk.m, bias_of(bk), where);
        kernels::q8::matvec(v.data(), d->xq_d_[0], wv.m, bias_of(bv), where);
      } else if constexpr (one_row && !weights_from_memory) {  // Q, K and V in one loop (three times the chains in flight)
        const kernels::gemv_job<T> jobs[3] = {{q.data(), x.data(), wq.data(), bias_of(bq)},
                                              {k.data(), x.data(), wk.data(), bias_of(bk)},
                                              {v.data(), x.data(), wv.data(), bias_of(bv)}};
        if constexpr (DK == D) {
          kernels::gemv_batch(jobs, 3, D, D, D);  // = the three products (the same sums)
        } else {                                  // grouped-query attention: K and V narrower
          kernels::gemv_batch(jobs, 1, D, D, D);
          kernels::gemv_batch(jobs + 1, 2, DK, DK, D);
        }
      } else {  // several rows, or weights from memory: one matrix after the other (linear: one stream each)
        (*this)(q, x, wq, bq);
        (*this)(k, x, wk, bk);
        (*this)(v, x, wv, bv);
      }
    }
  };

  constexpr status check_stream(std::size_t b) const {
    if (!w_) return unbound();
    if (b >= B) return status::error("sf::decoder: stream ", b, " does not exist (B = ", B, ")");
    return status::ok();
  }
  static constexpr status unbound() { return status::error("sf::decoder: no weights; call use(params) first"); }
  static constexpr status check_token(std::int32_t t, const char* what) {
    if (t < 0 || static_cast<std::size_t>(t) >= V)
      return status::error("sf::decoder::", what, ": token ", t, " is outside the vocabulary [0, ", V, ")");
    return status::ok();
  }
  static constexpr status full(const char* what, std::size_t b, std::size_t pos, std::size_t n) {
    return status::error("sf::decoder::", what, ": context full - stream ", b, " holds ", pos, " of T = ", S,
                         " tokens, ", n, " more do not fit; call slide(b, keep) or reset(b)");
  }

  // Stream b: positions [a, end) from hist_ (a < end ≤ T); logits of position end-1. Chunks of P
  // while more than 2Q positions are left (and at least P/4), then chunks of Q while at least q_min
  // are (small_chunks), then single steps. Single steps before the last position skip the head:
  // their logits are not needed (a stories15M-shaped model's head is 61% of the bytes a step
  // reads).
  constexpr void run(std::size_t b, std::size_t a, std::size_t end) {
    std::size_t c = a;  // the next position to run
    if constexpr (chunks) {
      while (c < end) {
        const std::size_t left = end - c;
        if (left > 2 * Q && left * 4 >= P) c = chunk_at<P>(b, c, end);
        else if (small_chunks && left >= q_min) c = chunk_at<(small_chunks ? Q : P)>(b, c, end);
        else break;
      }
      if (c == end) return;  // (the last chunk left the logits and the position)
    }
    pos_[b] = c;
    for (std::size_t t = c; t < end; ++t) step_rows<1>(&b, t + 1 == end);  // a few tokens: single steps
  }
  // One chunk of R positions from c (R = P or Q), the next position to run returned. A chunk that
  // would end past T starts earlier (it recomputes cached positions: the same inputs, the same
  // bits). The chunk holding position end-1 runs its last layer for that row as well and leaves
  // its logits; pos_[b] is then end.
  template <std::size_t R>
  constexpr std::size_t chunk_at(std::size_t b, std::size_t c, std::size_t end) {
    const std::size_t s0 = c + R <= S ? c : S - R;
    const bool last = s0 + R >= end;
    chunk<R>(b, s0, end, last ? end - 1 - s0 : R);  // (the last chunk: its last position's output)
    if (!last) return s0 + R;
    head_row(logits_.data() + b * V, chunk_buffers_of<R>().x.data() + (end - 1 - s0) * D);
    pos_[b] = end;
    return end;
  }

  // logits_row (V) = norm_f(x_row) · W_head        x_row: (D)
  constexpr void head_row(T* logits_row, const T* x_row) {
    using one_d = view<T, shape<Batch<1>>, Model<D>, D>;
    using one_v = view<T, shape<Batch<1>>, Vocab<V>, V>;
    norm::row(row_.data(), x_row, w_->norm_f);
    lm_head(one_v{logits_row}, one_d{row_.data()}.as_const());
  }
  // logits (R, V) = a (R, D) · W_head; a float tied head read in place: one dot product per token,
  // each summed as the vector–matrix product sums it (kernels::gemv_rows); its copy tok_embᵀ by
  // panels (kernels::gemv_panels: the same sums as the matrix product, read as one stream)
  template <class Y, class X>
  constexpr void lm_head(Y&& y, const X& a) {
    if constexpr (head_copy && detail::mt<Y>::rows > 1) {
      // rows of several streams: panel by panel, one matrix product (R, D)·(D, HN) each, so each
      // panel is read once for all rows (the same sums as gemv_panels: k order, one FMA at a time)
      using my = detail::mt<Y>;
      using mx = detail::mt<X>;
      kernels::gemm_nn_panels<my::rows, V, D, HN, mx::ld, my::ld>(y.data(), a.data(), head_t_.data(),
                                                                  static_cast<const T*>(nullptr),
                                                                  fetching());
    } else if constexpr (head_copy) {
      using my = detail::mt<Y>;
      for (std::size_t r = 0; r < my::rows; ++r)
        kernels::gemv_panels<where, HN>(y.data() + r * my::ld, a.data() + r * detail::mt<X>::ld, head_t_.data(), V, D);
    } else if constexpr (C.tied && !int8_weights && !head_copy) {
      using my = detail::mt<Y>;
      for (std::size_t r = 0; r < my::rows; ++r)
        kernels::gemv_rows(y.data() + r * my::ld, a.data() + r * detail::mt<X>::ld, w_->tok_emb.weight.data(), D, V, D);
    } else {
      linear(y, a, head_weight(), none{});
    }
  }
  template <class Bias>
  static constexpr const T* bias_of(const Bias& b) {
    if constexpr (std::is_same_v<std::remove_cvref_t<Bias>, none>) return nullptr;
    else return b.data();
  }
  constexpr const auto& head_weight() const {
    if constexpr (C.tied && int8_weights) return w_->tok_emb.weight;  // (V, D) table = the (D → V) matrix
    else return w_->lm_head.weight;
  }

  // xr = tok_emb[token] + pos(t)     xr: (D)
  constexpr void embed_row(T* xr, std::int32_t token, std::size_t t) {
    if constexpr (!int8_weights) {
      emb::row(xr, token, t, *w_);
    } else {  // the int8 tables' rows, dequantized
      w_->tok_emb.weight.column(xr, static_cast<std::size_t>(token));
      if constexpr (C.position == position_kind::learned) {
        w_->pos_emb.weight.column(row_.data(), t);
        for (std::size_t i = 0; i < D; ++i) xr[i] += row_[i];
      } else if constexpr (C.position == position_kind::sinusoidal) {
        layers::sinusoidal<C, T>::add(xr, t);
      }
    }
  }

  // y = x·w + b over the rows of y and x (tensors or views; b a bias tensor or sf::none).
  // Float weights: the typed product. Int8: each row quantized (groups of 32), then the int8 product.
  template <class Y, class X, class W, class Bias>
  constexpr void linear(Y&& y, const X& x, const W& w, const Bias& b) {
    if constexpr (detail::is_q8_weight<W>::value) {
      using my = detail::mt<Y>;
      using mx = detail::mt<X>;
      static_assert(mx::cols == W::K && my::cols == W::N && my::rows == mx::rows,
                    "sf::decoder: int8 product shapes (internal)");
      auto& xq = q8_scratch<W::K>();  // Rq quantized rows, one product over W for all of them
      for (std::size_t r0 = 0; r0 < my::rows; r0 += Rq) {
        const std::size_t n = my::rows - r0 < Rq ? my::rows - r0 : Rq;
        for (std::size_t r = 0; r < n; ++r) kernels::q8::quantize(xq[r], x.data() + (r0 + r) * mx::ld);
        kernels::q8::matvec_rows(y.data() + r0 * my::ld, my::ld, xq.data(), n, w.m, bias_of(b), where);
      }
    } else {
      using my = detail::mt<Y>;
      using mx = detail::mt<X>;
      using mw = detail::mt<W>;
      static_assert(mx::cols == mw::rows && my::cols == mw::cols && my::rows == mx::rows,
                    "sf::decoder: product shapes (internal)");
      if constexpr (panel_copies && is_tensor_v<W> && my::rows <= B) {
        // the rows of a step (R ≤ B streams; not a prefill chunk's), a whole matrix of the blocks:
        // its copy by panels (HN columns), each panel one stream — one row: gemv_panels (its sums
        // in registers), R rows: gemm_nn_panels. matmul's sums, the same bits. (Constant
        // evaluation: the plain product.)
        if (!std::is_constant_evaluated())
          if (const T* wp = panel_copy_of(w.data())) {
            if constexpr (my::rows == 1)
              kernels::gemv_panels<where, HN>(y.data(), x.data(), wp, mw::cols, mw::rows, bias_of(b));
            else
              kernels::gemm_nn_panels<my::rows, mw::cols, mw::rows, HN, mx::ld, my::ld>(y.data(), x.data(), wp, bias_of(b),
                                                                                     fetching());
            return;
          }
      }
      if constexpr (weights_from_memory && my::rows == 1)  // one row, weights from memory: the backend for them
        kernels::gemv<where>(y.data(), x.data(), w.data(), mw::ld, mw::cols, mw::rows, bias_of(b));
      else
        matmul(y, x, w, b);
    }
  }
  // The copy by panels of the blocks' matrix whose data begins at m (the same offset in blocks_p_
  // as in the weights' blocks), or nullptr for a matrix outside the blocks.
  const T* panel_copy_of(const T* m) const {
    const auto at = reinterpret_cast<std::uintptr_t>(m), first = reinterpret_cast<std::uintptr_t>(&w_->blocks);
    if (at < first || at - first >= sizeof(typename weights_t::blocks_t)) return nullptr;
    return reinterpret_cast<const T*>(reinterpret_cast<const unsigned char*>(&blocks_p_) + (at - first));
  }
  template <std::size_t K>
  constexpr auto& q8_scratch() {
    if constexpr (K == D) return xq_d_;
    else return xq_f_;
  }

  // ------------------------------------------------------------ prefill: one chunk of R positions
  // Stream b, positions [s0, s0+R) (R = P or Q): x = embed(tokens), then every block (the layers'
  // own forward for rows at positions: keys and values of all R positions written to the cache).
  // Positions ≥ end (padding of the last chunk) use token 0; their cache entries lie past the
  // stream's position and are overwritten before being read. Only row `out` (< R; R: none) of the
  // last block's output is read afterwards (the prompt's last position, for its logits): the last
  // block writes the keys and values of all R positions (attention::keys_values_chunk) and runs the
  // rest for that row alone, as a step does (the same bits: both are sf::infer's), its output in
  // row `out` of the chunk's x.
  template <std::size_t R>
  constexpr void chunk(std::size_t b, std::size_t s0, std::size_t end, std::size_t out) {
    const weights_t& p = *w_;
    const product lin{this};
    auto& [cx, ca, cy, ch, ch2, cw] = chunk_buffers_of<R>();
    for (std::size_t i = 0; i < R; ++i) {
      const std::size_t t = s0 + i;
      embed_row(cx.data() + i * D, t < end ? hist_(b, t) : 0, t);
    }
    for (std::size_t l = 0; l < L; ++l) {
      const auto& bp = p.blocks[l];
      // x += attn(norm1(x))
      for (std::size_t i = 0; i < R; ++i) norm::row(ca.data() + i * D, cx.data() + i * D, bp.norm1);
      if (l + 1 == L) {  // the last block: the cache's keys and values; the output of row `out` alone
        attn::keys_values_chunk(lin, ca, bp.attn, cache_[l], b, s0, cw);
        if (out < R) {
          using rd = view<T, shape<Batch<1>>, Model<D>, D>;
          using rf = view<T, shape<Batch<1>>, Ffn<C.F>, C.F>;
          const std::size_t keep = pos_[b];
          for (std::size_t i = 0; i < D; ++i) x_[i] = cx[out * D + i];
          pos_[b] = s0 + out;  // (the step's position: its key and value, already cached, are written again)
          layer_rows<1>(l, &b, rd{x_.data()}, rd{a_.data()}, rd{y_.data()}, rf{f_.data()});
          pos_[b] = keep;
          for (std::size_t i = 0; i < D; ++i) cx[out * D + i] = x_[i];
        }
        return;
      }
      attn::forward_chunk(lin, cy, ca, bp.attn, cache_[l], b, s0, cw);
      for (std::size_t i = 0; i < R * D; ++i) cx[i] += cy[i];
      // x += ffn(norm2(x))
      for (std::size_t i = 0; i < R; ++i) norm::row(ca.data() + i * D, cx.data() + i * D, bp.norm2);
      ffn::decode_rows(lin, cy, ca, bp.ffn, ch, ch2);
      for (std::size_t i = 0; i < R * D; ++i) cx[i] += cy[i];
    }
  }

  // ------------------------------------------------------------ step: R rows, of streams streams[0 … R-1]
  // streams: non-decreasing (a stream repeated only with the same token: a padding row). Each stream's
  // token is hist_(b, pos_[b]); afterwards pos_[b] += 1 and logits(b) are its next-token logits.
  // The rows are packed into the step buffers' first R rows. logits = false (a prompt position
  // before the last, R = 1): no final norm and no head; the stream's logits are left as they were.
  template <std::size_t R>
  constexpr void step_rows(const std::size_t* streams, bool logits = true) {
    using rd = view<T, shape<Batch<R>>, Model<D>, D>;
    using rf = view<T, shape<Batch<R>>, Ffn<C.F>, C.F>;
    const rd x{x_.data()}, a{a_.data()}, y{y_.data()};
    const rf f{f_.data()};
    for (std::size_t r = 0; r < R; ++r) {
      const std::size_t b = streams[r];
      embed_row(x.row(r), hist_(b, pos_[b]), pos_[b]);
    }
    for (std::size_t l = 0; l < L; ++l) layer_rows<R>(l, streams, x, a, y, f);
    if constexpr (fetch_caches && R > 1) fetch_attention(0, streams, R, 1);  // the next step's block 0
    if (logits) head_rows<R>(streams, a, x);
    for (std::size_t r = 0; r < R; ++r)
      if (r == 0 || streams[r] != streams[r - 1]) ++pos_[streams[r]];
  }
  // Block l for R rows of streams streams[0 … R-1] at their positions (pos_): x += attn(norm1(x)),
  // then x += ffn(norm2(x)); the keys and values written to the cache.
  //   x: (R,D) the residual rows   a, y: (R,D) scratch   f: (R,F) scratch (views)
  template <std::size_t R, class RD, class RF>
  constexpr void layer_rows(std::size_t l, const std::size_t* streams, const RD& x, const RD& a, const RD& y,
                            const RF& f) {
    using rf = view<T, shape<Batch<R>>, Ffn<C.F>, C.F>;
    const auto& bp = w_->blocks[l];
    const product lin{this};
    // x += attn(norm1(x))
    for (std::size_t r = 0; r < R; ++r) norm::row(a.row(r), x.row(r), bp.norm1);
    if constexpr (fetch_caches && R > 1) fetch_.stop();  // (what is not fetched yet is read now)
    attn::template forward_step<R>(lin, y, a, bp.attn, cache_[l], streams, pos_.data(), sw_);
    if constexpr (fetch_caches && R > 1)  // block l+1's keys and values, while W_o, the feed-forward, Q, K, V run
      if (l + 1 < L) fetch_attention(l + 1, streams, R, 0);
    for (std::size_t i = 0; i < R * D; ++i) x.data()[i] += y.data()[i];
    // x += ffn(norm2(x))
    for (std::size_t r = 0; r < R; ++r) norm::row(a.row(r), x.row(r), bp.norm2);
    if constexpr (gated_buffers) ffn::decode_rows(lin, y, a, bp.ffn, f, rf{f2_.data()});
    else ffn::decode_rows(lin, y, a, bp.ffn, f, none{});
    for (std::size_t i = 0; i < R * D; ++i) x.data()[i] += y.data()[i];
  }
  // The lines of block l's cache that the attention of R rows of streams streams[0 … R-1] reads at
  // their positions + ahead: each stream's keys (KV·d_k rows, the first positions of each) and
  // values (one block), in the order the attention reads them; the products that follow fetch them
  // (fetch_caches). (Run time only: a prefetch has no meaning in constant evaluation.)
  constexpr void fetch_attention(std::size_t l, const std::size_t* streams, std::size_t R, std::size_t ahead) {
    if (std::is_constant_evaluated()) return;
    constexpr std::size_t KV = attn::KV, DK = attn::DK, KB = attn::key_block;
    std::size_t n = 0;
    for (std::size_t r = 0; r < R; ++r) {
      const std::size_t b = streams[r];
      if (r > 0 && b == streams[r - 1]) continue;  // a padding row: its stream's lines are in already
      const std::size_t keys = pos_[b] + ahead + 1 < S ? pos_[b] + ahead + 1 : S;
      for (std::size_t g = 0; g < KV; ++g)  // each key block's first positions: d_k rows of KB
        for (std::size_t j = 0; j * KB < keys; ++j)
          fetch_ranges_[n++] = {cache_[l].keys(b, g, j), KB, dk, kernels::count_lines<T>(attn::block_keys(keys, j))};
      fetch_ranges_[n++] = {cache_[l].v.data() + b * S * DK, 0, 1, kernels::count_lines<T>(keys * DK)};
    }
    fetch_ = {fetch_ranges_.data(), n};
  }
  constexpr kernels::fetch_list<T>* fetching() {
    if constexpr (fetch_caches) return &fetch_;
    else return nullptr;
  }
  // The logits of a step's rows: norm_f, then the head, into each stream's logits row.
  template <std::size_t R, class A, class X>
  constexpr void head_rows(const std::size_t* streams, const A& a, const X& x) {
    using rv = view<T, shape<Batch<R>>, Vocab<V>, V>;
    for (std::size_t r = 0; r < R; ++r) norm::row(a.row(r), x.row(r), w_->norm_f);
    if constexpr (R == 1 || B == 1) {
      lm_head(rv{logits_.data() + streams[0] * V}, a.as_const());
    } else {
      bool consecutive = true;  // streams b0, b0+1, …: their logits rows are one block
      for (std::size_t r = 1; r < R; ++r) consecutive = consecutive && streams[r] == streams[0] + r;
      if (consecutive) {
        lm_head(rv{logits_.data() + streams[0] * V}, a.as_const());
      } else {  // into the scratch rows, then each to its stream (a padding row: the same values again)
        lm_head(rv{logits_rows_.data()}, a.as_const());
        for (std::size_t r = 0; r < R; ++r)
          for (std::size_t v = 0; v < V; ++v) logits_(streams[r], v) = logits_rows_(r, v);
      }
    }
  }

  // The rows of a masked step: the n active streams rows[0 … n-1] (ascending), padded to the first
  // count of step_row_counts from R on that holds them.
  template <std::size_t R>
  constexpr void step_padded(std::array<std::size_t, B>& rows, std::size_t n) {
    if constexpr (R >= B) {
      for (std::size_t i = n; i < B; ++i) rows[i] = rows[n - 1];
      step_rows<B>(rows.data());
    } else {
      if (n <= R) {
        for (std::size_t i = n; i < R; ++i) rows[i] = rows[n - 1];
        step_rows<R>(rows.data());
      } else {
        step_padded<R * 4>(rows, n);
      }
    }
  }

  static constexpr std::array<std::size_t, B> all_streams = [] {
    std::array<std::size_t, B> a{};
    for (std::size_t b = 0; b < B; ++b) a[b] = b;
    return a;
  }();

  const weights_t* w_ = nullptr;
  std::array<typename attn::template cache<B>, L> cache_{};                // keys (transposed) and values
  tensor<std::int32_t, Batch<B>, Seq<S>> hist_{};                          // the tokens of every stream
  std::array<std::size_t, B> pos_{};
  tensor<T, Batch<B>, Vocab<V>> logits_{};
  // a masked step's logits rows before they go to their streams (B > 1)
  [[no_unique_address]] maybe<(B > 1), tensor<T, Batch<B>, Vocab<V>>> logits_rows_{};
  // tok_embᵀ (D, V) (tied) or lm_head's (D, V) (untied), stored by panels of HN columns: panel p,
  // columns p·HN …, is the contiguous (D, HN) block at p·HN·D, the last one (D, V - p·HN)
  // (kernels::gemv_panels, pack_panels)
  // Weights from memory: panels of the matrix tiles' width (kernels::tile_panel_width: the R rows of
  // a step read a panel as one stream, one row reads a few panels side by side); else the width
  // of the vector–matrix panels (kernels::native_panel_width).
  static constexpr std::size_t HN =
      weights_from_memory ? kernels::tile_panel_width<T> : kernels::native_panel_width<T, where>;
  [[no_unique_address]] maybe<head_copy, std::array<T, D * V>> head_t_{};
  // the blocks with every matrix by panels of HN columns (kernels::pack_panels; panel_copies)
  [[no_unique_address]] maybe<panel_copies, typename weights_t::blocks_t> blocks_p_{};
  // Quantized rows of width D and F: Rq of each, the rows an int8 product takes per pass over its
  // weights (4 with avx512_vnni, else 1: kernels::q8::matvec_rows).
  static constexpr std::size_t Rq = kernels::q8::rows_per_pass<kernels::q8::native>;
  [[no_unique_address]] maybe<int8_weights, std::array<kernels::q8::vector<D>, Rq>> xq_d_{};
  [[no_unique_address]] maybe<int8_weights, std::array<kernels::q8::vector<C.F>, Rq>> xq_f_{};
  // the lines the products fetch for the next attention (fetch_caches): per stream, a range per key
  // head and key block, and one of values
  [[no_unique_address]] maybe<fetch_caches, std::array<kernels::fetch_range<T>, (attn::KV * attn::key_blocks + 1) * B>> fetch_ranges_{};
  [[no_unique_address]] maybe<fetch_caches, kernels::fetch_list<T>> fetch_{};
  // step buffers (B rows): the residual stream, a norm's output, a sub-layer's output, the
  // feed-forward's hidden rows, attention's q, k, v, o rows and one query's scores per head
  rows_d x_{}, a_{}, y_{};
  rows_f f_{};
  [[no_unique_address]] maybe<gated_buffers, rows_f> f2_{};  // a second (B, F) when the feed-forward needs it
  typename attn::template rows_scratch<B, false> sw_{};
  tensor<T, Model<D>> row_{};  // one (D) scratch row: the final norm of a prefill's last position, an int8 position row
  // prefill chunk buffers of R rows: the residual stream, a norm's output, a sub-layer's output,
  // the feed-forward's hidden rows (two when it needs them), attention's scratch
  template <std::size_t R>
  struct chunk_buffers {
    tensor<T, Batch<1>, Seq<R>, Model<D>> x, a, y;
    tensor<T, Batch<1>, Seq<R>, Ffn<C.F>> h;
    [[no_unique_address]] maybe<gated_buffers, tensor<T, Batch<1>, Seq<R>, Ffn<C.F>>> h2;
    typename attn::template rows_scratch<R, true> w;
  };
  template <std::size_t R>
  constexpr auto& chunk_buffers_of() {
    if constexpr (R == P) return cp_;
    else return cq_;
  }
  [[no_unique_address]] maybe<chunks, chunk_buffers<P>> cp_{};          // P rows (none when P = 1)
  [[no_unique_address]] maybe<small_chunks, chunk_buffers<Q>> cq_{};    // Q rows (none when Q = 0)
};

}  // namespace sf
