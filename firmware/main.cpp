// main.cpp — the firmware example: a model exported by `staticformer export` lies in flash, and a
// Cortex-M4 generates text from it greedily with the KV-cache decoder and prints it.
//
// Compile-time settings (firmware/CMakeLists.txt passes them):
//   SF_MODEL_HEADER  the header written by `staticformer export` (a quoted path)
//   SF_PROMPT        the prompt, e.g. "ROMEO:" (1 to T characters of the model's vocabulary)
//   SF_TOKENS        how many tokens to generate (when the context is full the stream keeps its
//                    last 3T/4 tokens and goes on, as `staticformer run` does)
//   SF_RAM_BUDGET    bytes of RAM the decoder's state may take; a static_assert checks it
//   SF_TEMPERATURE, SF_TOP_K, SF_TOP_P, SF_SEED   sampling (default 0, 0, 1, 1: greedy); the
//                    library's sampler gives the text `staticformer run` gives with the same
//                    options and seed
//
// Memory: the weights are the header's constant data (.rodata: flash), read in place; the
// decoder (sf::small_ram: the KV cache, one row of each activation, the logits) is one static
// object in .bss whose size is known to the compiler. Nothing is allocated: malloc, free, new
// and delete are not in the program (the CTest checks the ELF's symbols).
//
// Output (semihosting): a header line, the text between <<< and >>>, and the instruction
// counts measured with the board's timer (exact in instructions under -icount shift=0).
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include SF_MODEL_HEADER
#include "board.hpp"
#include "staticformer/decode.hpp"
#include "staticformer/sampling.hpp"

namespace {
namespace m = sf_model;
constexpr sf::config C = m::config;
constexpr bool int8 = std::is_same_v<m::weights_type, sf::params<C, sf::int8>>;
using decoder_t = sf::decoder<C, std::conditional_t<int8, sf::int8, float>, sf::small_ram>;

// RAM known at compile time: the decoder's state against the budget (the error names both sizes).
template <std::size_t DecoderBytes, std::size_t BudgetBytes>
struct ram_budget_check {
  static_assert(DecoderBytes <= BudgetBytes,
                "firmware: the decoder's state (KV cache 2*L*T*D floats, one row of each activation, the "
                "logits: the first template argument, in bytes) exceeds the RAM budget SF_RAM_BUDGET (the "
                "second); raise the budget or export a model with a smaller T, D or L");
  static constexpr bool ok = true;
};
static_assert(ram_budget_check<sizeof(decoder_t), SF_RAM_BUDGET>::ok);

// The prompt as token ids, at compile time.
constexpr char prompt_text[] = SF_PROMPT;
constexpr std::size_t prompt_length = sizeof prompt_text - 1;
static_assert(prompt_length >= 1 && prompt_length <= C.T, "firmware: SF_PROMPT must have 1 to T characters");
constexpr std::int32_t id_of(char c) {
  for (std::size_t v = 0; v < m::vocab_size; ++v)
    if (m::vocab[v] == static_cast<unsigned char>(c)) return static_cast<std::int32_t>(v);
  return -1;
}
constexpr std::array<std::int32_t, prompt_length> prompt = [] {
  std::array<std::int32_t, prompt_length> ids{};
  for (std::size_t i = 0; i < prompt_length; ++i) ids[i] = id_of(prompt_text[i]);
  return ids;
}();
constexpr bool prompt_in_vocabulary = [] {
  for (const std::int32_t id : prompt)
    if (id < 0) return false;
  return true;
}();
static_assert(prompt_in_vocabulary, "firmware: a character of SF_PROMPT is not in the model's vocabulary");

constexpr std::size_t tokens = SF_TOKENS;
constexpr sf::sampling_options sampling{.temperature = static_cast<float>(SF_TEMPERATURE),
                                        .top_k = static_cast<std::size_t>(SF_TOP_K),
                                        .top_p = static_cast<float>(SF_TOP_P)};
static_assert(sf::check(sampling, C.V).is_ok(), "firmware: bad SF_TEMPERATURE, SF_TOP_K or SF_TOP_P "
              "(temperature >= 0, top_k <= V, 0 < top_p <= 1)");
constexpr std::size_t keep = C.T - (C.T >= 4 ? C.T / 4 : 1);  // tokens kept when the context is full

decoder_t dec;              // .bss (RAM)
sf::sampler<C.V> sampler{SF_SEED};
char text[tokens * m::max_piece_bytes + 1];  // the generated text: each token's piece, any length
std::size_t text_length = 0;
std::int32_t ids[tokens];   // and its token ids

// Appends the piece of token id to the text ('?' for an id without one).
void append_piece(std::int32_t id) {
  if (id < 0 || static_cast<std::size_t>(id) >= m::vocab_size) {
    text[text_length++] = '?';
    return;
  }
  for (unsigned i = m::piece_offsets[id]; i < m::piece_offsets[id + 1]; ++i)
    text[text_length++] = static_cast<char>(m::piece_bytes[i]);
}
}  // namespace

int main() {
  board::line() << "staticformer on a Cortex-M4: V=" << C.V << " T=" << C.T << " D=" << C.D << " H=" << C.H
                << " L=" << C.L << " F=" << C.F << ", " << (int8 ? "int8" : "float") << " weights, "
                << sizeof(m::weights_type) << " bytes in flash; decoder state " << sizeof(decoder_t)
                << " bytes of RAM (budget " << static_cast<std::size_t>(SF_RAM_BUDGET) << ")\n";
#ifdef SF_FIRMWARE_HEAP_PROBE  // (the CTest's proof that the no-heap rule bites: this must not link)
  void* volatile probe = __builtin_malloc(prompt_length);
  (void)probe;
#endif
  dec.use(m::weights_for<C>());  // in place: the decoder keeps a pointer to the constant weights
  if (sf::status s = sampler.configure(sampling); !s) {
    board::line() << "firmware: " << s.message() << "\n";
    return 1;
  }

  board::timer::start();
  const std::uint32_t t0 = board::timer::now();
  sf::status s = dec.prefill(0, prompt.data(), prompt_length);
  const std::uint32_t t1 = board::timer::now();
  std::size_t generated = 0, slides = 0;
  std::uint32_t decode_ticks = 0, slide_ticks = 0;  // argmax + step per token; context slides apart
  while (s && generated < tokens) {
    std::uint32_t a = board::timer::now();
    const std::int32_t next = sampler.sample(dec.logits(0));  // (temperature 0: the argmax)
    ids[generated] = next;
    append_piece(next);
    if (++generated == tokens) {
      decode_ticks += board::timer::now() - a;
      break;
    }
    if (dec.position(0) == C.T) {  // full: keep the last 3T/4 tokens (re-prefilled)
      const std::uint32_t b = board::timer::now();
      s = dec.slide(0, keep);
      const std::uint32_t d = board::timer::now() - b;
      slide_ticks += d;
      a += d;  // (not counted as decoding)
      ++slides;
    }
    if (s) s = dec.step(0, next);
    decode_ticks += board::timer::now() - a;
  }
  text[text_length] = '\0';
  if (!s) {
    board::line() << "firmware: " << s.message() << "\n";
    return 1;
  }
  board::line() << "prompt: " << prompt_text << "\n";
  board::write("text: <<<");
  board::write(text);
  board::write(">>>\n");
  {
    board::line l;
    l << "ids:";
    for (std::size_t i = 0; i < generated; ++i) l << ' ' << ids[i];
    l << "\n";
  }
  constexpr std::uint64_t per_tick = board::timer::instructions_per_tick;
  const std::uint64_t prefill = std::uint64_t{t1 - t0} * per_tick, decode = std::uint64_t{decode_ticks} * per_tick;
  board::line() << "instructions (-icount shift=0): prefill " << prefill << " (" << prompt_length
                << " tokens); decoding " << decode << " (" << generated << " tokens: " << decode / generated
                << " per token); " << slides << " slides " << std::uint64_t{slide_ticks} * per_tick << "\n";
  return 0;
}
