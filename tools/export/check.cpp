// The check of an exported header (tools/export_test.cmake builds this program with
// -DSF_EXPORTED_HEADER="path" and runs it): the header's weights are bit-identical to the
// checkpoint's (int8: to its int8 weights, or to sf::quantize of a float checkpoint), and greedy
// decoding from the header's constant weights prints the text the host's decoder prints.
//   export_check CHECKPOINT PROMPT N      → N greedy characters after PROMPT on stdout
// With -DSF_EXPORT_WRONG_CONFIG it asks for the weights of another configuration and must not compile.
#include <cstdio>
#include <cstring>
#include <string>

#include SF_EXPORTED_HEADER
#include "staticformer/decode.hpp"
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
  const long count = std::stol(argv[3]);
  for (long i = 0; i < count; ++i) {
    const std::int32_t next = sf::sampler<m::config.V>::argmax(dec.logits(0));
    std::fputc(next < static_cast<std::int32_t>(m::vocab_size) ? m::vocab[next] : '?', stdout);
    if (i + 1 < count && !dec.step(0, next)) return std::fprintf(stderr, "export_check: context full\n"), 1;
  }
  return 0;
}
