// staticformer/serve.hpp — continuous batching: a queue of requests over a decoder's B streams.
//
//   static sf::decoder<C> dec;                     // C.B streams (slots)
//   dec.use(p);
//   const sf::request req[] = {{prompt0, n0, 100}, {prompt1, n1, 50}, ...};
//   sf::serve(dec, req, std::size(req),
//             [&](std::size_t i, const float* logits) { return argmax(logits); },   // request i's next token
//             [&](std::size_t i, std::int32_t token) { return token != eos; });      // false: request i ends
//
// Each request takes a free stream (slot): the stream is emptied, its prompt prefilled, and then it
// steps with every other busy stream, one token each per step (decoder::step(tokens, active): the
// weights are read once per step for all of them, whatever their positions). A request ends after
// max_tokens tokens, when emit returns false, or when its stream's context (T) is full; its slot
// then takes the next request of the queue at once, while the others go on. Requests start in
// queue order; emit sees each request's tokens in order (those of different requests interleave).
//
// Exactness: a stream's logits do not depend on the other streams (decode.hpp), so every request
// gets the tokens it would get alone in a decoder of one stream, for the same sample function.
// No heap, no exceptions: the state is a few arrays of B entries.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "staticformer/status.hpp"

namespace sf {

// One request: a prompt of prompt_tokens tokens (1 … T) and how many tokens to generate at most.
struct request {
  const std::int32_t* prompt = nullptr;
  std::size_t prompt_tokens = 0;
  std::size_t max_tokens = 0;
};

// Runs requests[0 … n-1] through dec's streams (see above). sample(i, logits) → std::int32_t: the
// next token of request i from its logits (V); emit(i, token) → bool: the token is request i's,
// false ends the request. An error of the decoder (a token outside the vocabulary, a prompt longer
// than T) ends serve with that error; the requests started before it have been emitted as far as
// they went.
template <class Decoder, class Sample, class Emit>
constexpr status serve(Decoder& dec, const request* requests, std::size_t n, Sample&& sample, Emit&& emit) {
  constexpr std::size_t B = Decoder::B, T = Decoder::S;
  std::array<std::size_t, B> owner{};   // the request of each busy stream
  std::array<std::size_t, B> made{};    // the tokens it has generated
  std::array<std::int32_t, B> next{};   // its last token: the input of the next step
  std::array<bool, B> busy{};
  std::size_t queued = 0;  // requests[queued …] have not started

  // Stream b's request takes the token sampled from its logits; the stream stays busy if the
  // request goes on.
  auto take = [&](std::size_t b) {
    const std::size_t i = owner[b];
    const std::int32_t t = sample(i, dec.logits(b));
    ++made[b];
    const bool more = emit(i, t);
    busy[b] = more && made[b] < requests[i].max_tokens && dec.position(b) < T;
    next[b] = t;
  };
  // A free stream b takes requests from the queue until one of them stays busy (or none is left).
  auto fill = [&](std::size_t b) -> status {
    while (!busy[b] && queued < n) {
      const std::size_t i = queued++;
      const request& r = requests[i];
      if (r.max_tokens == 0) continue;
      dec.reset(b);
      if (status s = dec.prefill(b, r.prompt, r.prompt_tokens); !s) return s;
      owner[b] = i;
      made[b] = 0;
      take(b);
    }
    return status::ok();
  };

  for (std::size_t b = 0; b < B; ++b)
    if (status s = fill(b); !s) return s;
  for (;;) {
    bool any = false;
    for (std::size_t b = 0; b < B; ++b) any = any || busy[b];
    if (!any) return status::ok();
    if (status s = dec.step(next.data(), busy.data()); !s) return s;
    for (std::size_t b = 0; b < B; ++b) {
      if (!busy[b]) continue;
      take(b);
      if (status s = fill(b); !s) return s;
    }
  }
}

}  // namespace sf
