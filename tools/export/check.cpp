// The check of an exported header (tools/export_test.cmake and, for llama2.c's BPE tokenizer,
// tools/bpe_train_test.cmake build this program with -DSF_EXPORTED_HEADER="path" and run it): the
// header's weights are bit-identical to the checkpoint's (int8: to its int8 weights, or to
// sf::quantize of a float checkpoint), and greedy decoding from the header's constant weights prints
// the text the host's decoder prints.
//   export_check CHECKPOINT PROMPT N      → N greedy tokens after PROMPT on stdout
// A character tokenizer: one character per token, the prompt's characters looked up in vocab[].
// A BPE tokenizer (the header defines SF_MODEL_BPE): the header's tables are the checkpoint's
// tokenizer.bin's (pieces, scores, and the order of bpe_sorted), the prompt is encoded with the
// header's sf::bpe_tokenizer (run.c's encode), the text printed as run.c prints it (the piece after
// the previous token; a generated <s> ends it; a newline at the end; a full context keeps its last
// 3T/4 tokens), as `staticformer run` does.
// With -DSF_EXPORT_WRONG_CONFIG it asks for the weights of another configuration and must not compile.
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include SF_EXPORTED_HEADER
#include "staticformer/decode.hpp"
#include "staticformer/io/any_tokenizer.hpp"
#include "staticformer/io/safetensors.hpp"
#include "staticformer/quantize.hpp"
#include "staticformer/sampling.hpp"

namespace m = sf_model;
constexpr bool int8 = std::is_same_v<m::weights_type, sf::params<m::config, sf::int8>>;

#ifdef SF_EXPORT_WRONG_CONFIG
constexpr sf::config other = [] {
  sf::config c = m::config;
  c.L += 1;
  return c;
}();
const auto& wrong = m::weights_for<other>();
#endif

int main(int argc, char** argv) {
  if (argc != 4) return std::fprintf(stderr, "usage: export_check CHECKPOINT PROMPT N\n"), 2;
  // 1. the weights, bit for bit
  static sf::params<m::config> p;
  static sf::params<m::config, sf::int8> q;
  auto f = sf::io::file::open(argv[1]);
  if (!f) return std::fprintf(stderr, "%s\n", f.message()), 1;
  const void* expected = nullptr;
  if (sf::io::is_quantized(*f)) {
    if (sf::status s = sf::io::load_quantized<m::config>(*f, q); !s) return std::fprintf(stderr, "%s\n", s.message()), 1;
    expected = &q;
  } else {
    if (sf::status s = sf::io::load_params<m::config>(*f, p); !s) return std::fprintf(stderr, "%s\n", s.message()), 1;
    if (int8) sf::quantize(q, p);
    expected = int8 ? static_cast<const void*>(&q) : static_cast<const void*>(&p);
  }
  if (std::memcmp(expected, &m::weights, sizeof(m::weights_type)) != 0)
    return std::fprintf(stderr, "export_check: the header's weights differ from the checkpoint's\n"), 1;
  // 2. greedy decoding from the constant weights (read in place)
  static sf::decoder<m::config, std::conditional_t<int8, sf::int8, float>> dec;
  dec.use(m::weights_for<m::config>());
  const long count = std::stol(argv[3]);
#ifdef SF_MODEL_BPE
  // The tokenizer: the checkpoint's tokenizer.bin, table for table.
  sf::io::result<sf::io::any_tokenizer> t = sf::io::read_tokenizer(f->metadata(), m::config.V);
  if (!t || !t->bpe()) return std::fprintf(stderr, "export_check: the checkpoint has no BPE tokenizer\n"), 1;
  const sf::bpe_tables& a = t->bpe()->core().tables();
  const sf::bpe_tables& b = m::tokenizer.tables();
  const std::size_t nv = a.scores.size();
  if (nv != b.scores.size() || a.offsets[nv] != b.offsets[nv] || t->bpe()->max_token_length() != m::bpe_max_token_length ||
      std::memcmp(a.bytes.data(), b.bytes.data(), a.offsets[nv]) != 0 ||
      std::memcmp(a.offsets.data(), b.offsets.data(), (nv + 1) * 4) != 0 ||
      std::memcmp(a.scores.data(), b.scores.data(), nv * 4) != 0 || std::memcmp(a.sorted.data(), b.sorted.data(), nv * 4) != 0)
    return std::fprintf(stderr, "export_check: the header's tokenizer tables differ from the checkpoint's\n"), 1;
  const std::string_view text = argv[2];
  std::vector<std::int32_t> ids(m::tokenizer.max_tokens(text));
  std::size_t n = 0;
  if (sf::status s = m::tokenizer.encode(text, ids, n); !s) return std::fprintf(stderr, "%s\n", s.message()), 1;
  const std::size_t from = n > m::config.T ? n - m::config.T : 0;  // (as staticformer run: the last T tokens)
  if (!dec.prefill(0, ids.data() + from, n - from)) return 1;
  std::int32_t prev = ids[n - 1];
  constexpr std::size_t T = m::config.T, keep = T - (T >= 4 ? T / 4 : 1);  // (a full context slides, as staticformer run)
  for (long i = 0; i < count; ++i) {
    const std::int32_t next = sf::sampler<m::config.V>::argmax(dec.logits(0));
    if (next == sf::bpe_tokenizer::bos_id) break;  // as run.c
    const std::string_view p = sf::bpe_printable(m::tokenizer.piece_after(prev, next));
    std::fwrite(p.data(), 1, p.size(), stdout);
    prev = next;
    if (i + 1 == count) break;
    if (dec.position(0) == T && !dec.slide(0, keep)) return 1;
    if (!dec.step(0, next)) return std::fprintf(stderr, "export_check: step failed\n"), 1;
  }
  std::fputc('\n', stdout);
#else
  std::int32_t ids[m::config.T];
  std::size_t n = 0;
  for (const char* c = argv[2]; *c && n < m::config.T; ++c) {
    std::int32_t id = -1;
    for (std::size_t v = 0; v < m::vocab_size; ++v)
      if (m::vocab[v] == static_cast<unsigned char>(*c)) id = static_cast<std::int32_t>(v);
    if (id < 0) return std::fprintf(stderr, "export_check: '%c' is not in the vocabulary\n", *c), 1;
    ids[n++] = id;
  }
  if (!dec.prefill(0, ids, n)) return 1;
  for (long i = 0; i < count; ++i) {
    const std::int32_t next = sf::sampler<m::config.V>::argmax(dec.logits(0));
    std::fputc(next < static_cast<std::int32_t>(m::vocab_size) ? m::vocab[next] : '?', stdout);
    if (i + 1 < count && !dec.step(0, next)) return std::fprintf(stderr, "export_check: context full\n"), 1;
  }
#endif
  return 0;
}
