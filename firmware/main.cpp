// main.cpp — the firmware example: a model exported by `staticformer export` lies in flash, and a
// Cortex-M generates text from it with the KV-cache decoder and prints it.
//
// Compile-time settings (firmware/CMakeLists.txt passes them):
//   SF_MODEL_HEADER  the header written by `staticformer export` (a quoted path)
//   SF_PROMPT        the prompt, e.g. "ROMEO:". A character tokenizer: 1 to T characters of the
//                    model's vocabulary, one token each. llama2.c's BPE tokenizer (the header
//                    defines SF_MODEL_BPE): any text, encoded as run.c encodes it (<s>, the dummy
//                    prefix " ", the merges) into at most T tokens — at compile time, and again on
//                    the device from the tables in flash, which must give the same ids
//   SF_TOKENS        how many tokens to generate (when the context is full the stream keeps its
//                    last 3T/4 tokens and goes on, as `staticformer run` does; with a BPE tokenizer
//                    a generated <s> ends the text, as in run.c)
//   SF_RAM_BUDGET    bytes of RAM the decoder's state may take; a static_assert checks it
//   SF_TEMPERATURE, SF_TOP_K, SF_TOP_P, SF_SEED, SF_SAMPLER   sampling (default 0, 0, 1, 1,
//                    staticformer: greedy); the library's sampler gives the text `staticformer run`
//                    gives with the same options, seed and recipe (SF_SAMPLER: staticformer, the
//                    library's own, or llama2c, run.c's, `staticformer run`'s default)
//   SF_CPU_NAME      the processor and board, for the first line ("Cortex-M4 (mps2-an386)")
//
// Memory: the weights (and a BPE tokenizer's tables) are the header's constant data (.rodata:
// flash), read in place; the decoder (sf::small_ram: the KV cache, one row of each activation, the
// logits) is one static object in .bss whose size is known to the compiler. Nothing is allocated:
// malloc, free, new and delete are not in the program (the CTest checks the ELF's symbols).
//
// Output (semihosting): a header line, the prompt's ids, the text between <<< and >>>, its ids, the
// instruction counts measured with the board's timer (exact in instructions under -icount shift=0),
// a hash of the last logits' bits and the stack's high-water mark. With -DSF_HOST_BOARD the same
// program builds for a PC (firmware/host/board.hpp; with -DSF_SIMD_FORCE_SCALAR, the device's
// kernels): the firmware test requires the same lines from both, but the timer's and the stack's.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include SF_MODEL_HEADER
#ifdef SF_HOST_BOARD  // (the same program on a PC: firmware/host/board.hpp)
#include "host/board.hpp"
#else
#include "board.hpp"
#endif
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
                "firmware: the decoder's state (KV cache 2*L*T*kv_heads*d_k floats, one row of each activation, the "
                "logits: the first template argument, in bytes) exceeds the RAM budget SF_RAM_BUDGET (the "
                "second); raise the budget or export a model with a smaller T, D or L");
  static constexpr bool ok = true;
};
static_assert(ram_budget_check<sizeof(decoder_t), SF_RAM_BUDGET>::ok);

// The prompt as token ids, at compile time.
constexpr char prompt_text[] = SF_PROMPT;
constexpr std::string_view prompt_view(prompt_text, sizeof prompt_text - 1);
#ifdef SF_MODEL_BPE
// llama2.c's BPE tokenizer: run.c's encode of the prompt (<s>, the dummy prefix, the merges).
constexpr bool bpe = true;
constexpr std::int32_t bos = sf::bpe_tokenizer::bos_id;  // <s>: generated, it ends the text (run.c)
struct encoded {
  std::array<std::int32_t, m::tokenizer.max_tokens(prompt_view)> ids{};
  std::size_t n = 0;
  bool ok = false;
};
constexpr encoded prompt_encoded = [] {
  encoded e;
  e.ok = m::tokenizer.encode(prompt_view, e.ids, e.n).is_ok();
  return e;
}();
static_assert(prompt_encoded.ok, "firmware: the tokenizer cannot encode SF_PROMPT");
constexpr std::size_t prompt_length = prompt_encoded.n;
static_assert(prompt_length <= C.T, "firmware: SF_PROMPT takes more than T tokens");
constexpr const std::int32_t* prompt = prompt_encoded.ids.data();
constexpr std::size_t max_piece_bytes = m::tokenizer.max_piece_bytes();
constexpr std::size_t tokenizer_bytes = sizeof m::bpe_bytes + sizeof m::bpe_offsets + sizeof m::bpe_scores +
                                        sizeof m::bpe_sorted + sizeof m::tokenizer;
#else
// A character tokenizer: one token per character.
constexpr bool bpe = false;
constexpr std::int32_t bos = -1;  // (none)
constexpr std::size_t prompt_length = prompt_view.size();
static_assert(prompt_length >= 1 && prompt_length <= C.T, "firmware: SF_PROMPT must have 1 to T characters");
constexpr std::int32_t id_of(char c) {
  for (std::size_t v = 0; v < m::vocab_size; ++v)
    if (m::vocab[v] == static_cast<unsigned char>(c)) return static_cast<std::int32_t>(v);
  return -1;
}
constexpr std::array<std::int32_t, prompt_length> prompt_ids = [] {
  std::array<std::int32_t, prompt_length> ids{};
  for (std::size_t i = 0; i < prompt_length; ++i) ids[i] = id_of(prompt_text[i]);
  return ids;
}();
constexpr bool prompt_in_vocabulary = [] {
  for (const std::int32_t id : prompt_ids)
    if (id < 0) return false;
  return true;
}();
static_assert(prompt_in_vocabulary, "firmware: a character of SF_PROMPT is not in the model's vocabulary");
constexpr const std::int32_t* prompt = prompt_ids.data();
constexpr std::size_t max_piece_bytes = m::max_piece_bytes;
constexpr std::size_t tokenizer_bytes = sizeof m::piece_offsets + sizeof m::piece_bytes;  // (what is read at run time)
#endif

constexpr std::size_t tokens = SF_TOKENS;
constexpr sf::sampling_options sampling{.temperature = static_cast<float>(SF_TEMPERATURE),
                                        .top_k = static_cast<std::size_t>(SF_TOP_K),
                                        .top_p = static_cast<float>(SF_TOP_P),
                                        .recipe = sf::sampling_recipe::SF_SAMPLER};
static_assert(sf::check(sampling, C.V).is_ok(), "firmware: bad SF_TEMPERATURE, SF_TOP_K or SF_TOP_P "
              "(temperature >= 0, top_k <= V, 0 < top_p <= 1; SF_SAMPLER llama2c has no top-k)");
constexpr std::size_t keep = C.T - (C.T >= 4 ? C.T / 4 : 1);  // tokens kept when the context is full

decoder_t dec;              // .bss (RAM)
sf::sampler<C.V> sampler{SF_SEED};
char text[tokens * max_piece_bytes + 1];  // the generated text: each token's piece, any length
std::size_t text_length = 0;
std::int32_t ids[tokens];   // and its token ids

// Appends what token id prints after token prev to the text. A character tokenizer: its piece
// ('?' for an id without one). llama2.c's BPE tokenizer: as run.c prints it (the piece after prev,
// <0xXX> as its byte, nothing for a lone byte that is neither printable nor white space).
void append_piece([[maybe_unused]] std::int32_t prev, std::int32_t id) {
#ifdef SF_MODEL_BPE
  for (const char c : sf::bpe_printable(m::tokenizer.piece_after(prev, id))) text[text_length++] = c;
#else
  if (id < 0 || static_cast<std::size_t>(id) >= m::vocab_size) {
    text[text_length++] = '?';
    return;
  }
  for (unsigned i = m::piece_offsets[id]; i < m::piece_offsets[id + 1]; ++i)
    text[text_length++] = static_cast<char>(m::piece_bytes[i]);
#endif
}

#ifdef SF_MODEL_BPE
// The prompt encoded again, here on the device, from the tables in flash (bpe.hpp's run.c encode): it
// must give the compile-time ids. (The text is read through a volatile pointer: this runs here.)
bool device_encoding_matches() {
  const char* volatile text_in_flash = prompt_text;
  std::int32_t device_ids[m::tokenizer.max_tokens(prompt_view)];
  std::size_t n = 0;
  const sf::status s = m::tokenizer.encode(std::string_view(text_in_flash, prompt_view.size()), device_ids, n);
  board::line l;
  l << "prompt ids (encoded on the device):";
  for (std::size_t i = 0; i < n; ++i) l << ' ' << device_ids[i];
  l << "\n";
  if (!s || n != prompt_length) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (device_ids[i] != prompt[i]) return false;
  return true;
}
#endif

// Prints the prompt, the text, the ids, the instruction counts, the last logits' hash and the stack.
[[gnu::noinline]] void report(std::uint32_t prefill_ticks, std::uint32_t decode_ticks, std::uint32_t slide_ticks,
                              std::size_t generated, std::size_t slides) {
  board::line() << "prompt: " << prompt_text << "\n";
  {
    board::line l;
    l << "prompt ids:";
    for (std::size_t i = 0; i < prompt_length; ++i) l << ' ' << prompt[i];
    l << "\n";
  }
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
  const std::uint64_t prefill = std::uint64_t{prefill_ticks} * per_tick, decode = std::uint64_t{decode_ticks} * per_tick;
  board::line() << "instructions (-icount shift=0): prefill " << prefill << " (" << prompt_length
                << " tokens); decoding " << decode << " (" << generated << " tokens: "
                << (generated ? decode / generated : 0) << " per token); " << slides << " slides "
                << std::uint64_t{slide_ticks} * per_tick << "\n";
  {  // the last logits, by their bits (FNV-1a): the same bits as the host build of this program
    std::uint32_t hash = 2166136261u;
    for (std::size_t v = 0; v < C.V; ++v) {
      const std::uint32_t bits = __builtin_bit_cast(std::uint32_t, dec.logits(0)[v]);
      for (int k = 0; k < 32; k += 8) hash = (hash ^ ((bits >> k) & 0xffu)) * 16777619u;
    }
    board::line() << "logits (the last, FNV-1a of their bits): " << hash << "\n";
  }
  board::line() << "stack: " << board::stack_used() << " bytes used of " << board::stack_size() << "\n";
}
}  // namespace

int main() {
  {
    board::line l;
    l << "staticformer on a " << SF_CPU_NAME << ": V=" << C.V << " T=" << C.T << " D=" << C.D << " H=" << C.H;
    if (C.kv() != C.H) l << " kv_heads=" << C.kv();
    l << " L=" << C.L << " F=" << C.F << ", " << (int8 ? "int8" : "float") << " weights, " << sizeof(m::weights_type)
      << " bytes in flash; " << (bpe ? "BPE" : "character") << " tokenizer, " << tokenizer_bytes
      << " bytes; decoder state " << sizeof(decoder_t) << " bytes of RAM (budget "
      << static_cast<std::size_t>(SF_RAM_BUDGET) << ")\n";
  }
#ifdef SF_FIRMWARE_HEAP_PROBE  // (the CTest's proof that the no-heap rule bites: this must not link)
  void* volatile probe = __builtin_malloc(prompt_length);
  (void)probe;
#endif
#ifdef SF_MODEL_BPE
  if (!device_encoding_matches()) {
    board::line() << "firmware: the prompt's ids encoded on the device differ from the compile-time ones\n";
    return 1;
  }
#endif
  dec.use(m::weights_for<C>());  // in place: the decoder keeps a pointer to the constant weights
  if (sf::status s = sampler.configure(sampling); !s) {
    board::line() << "firmware: " << s.message() << "\n";
    return 1;
  }

  board::timer::start();
  const std::uint32_t t0 = board::timer::now();
  sf::status s = dec.prefill(0, prompt, prompt_length);
  const std::uint32_t t1 = board::timer::now();
  std::size_t generated = 0, slides = 0;
  std::uint32_t decode_ticks = 0, slide_ticks = 0;  // sampling + step per token; context slides apart
  std::int32_t prev = prompt[prompt_length - 1];
  while (s && generated < tokens) {
    std::uint32_t a = board::timer::now();
    const std::int32_t next = sampler.sample(dec.logits(0));  // (temperature 0: the argmax)
    if (next == bos) {  // as run.c: a generated <s> ends the text
      decode_ticks += board::timer::now() - a;
      break;
    }
    ids[generated] = next;
    append_piece(prev, next);
    prev = next;
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
  report(t1 - t0, decode_ticks, slide_ticks, generated, slides);
  return 0;
}
