// staticformer-generate: what the command line (tools/staticformer-generate.cpp) hands to the
// generation code of one configuration (tools/generate/run.hpp), and the configurations compiled
// in. Translation units, each quick to compile: the command line; tools/generate/<name>.cpp, the
// decoding of one configuration each; tools/generate/weights.cpp, the checkpoint code of all.
#ifndef SF_TOOLS_GENERATE_GENERATE_HPP
#define SF_TOOLS_GENERATE_GENERATE_HPP

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "staticformer/config.hpp"
#include "staticformer/sampling.hpp"
#include "staticformer/tokenizer.hpp"

namespace sf::io {
class file;
}

namespace sf_gen {

// A configuration with one stream (B = 1): the decoder's batch; the weights do not depend on B.
constexpr sf::config one_stream(sf::config c) {
  c.B = 1;
  return c;
}

// The configurations compiled in: the demo's model (examples/train trains sf::configs::nano)
// and docs/model.md's three reference configurations. Adding one: a line here, a translation unit
// tools/generate/<name>.cpp with SF_GEN_INSTANTIATE (run.hpp) listed in tools/CMakeLists.txt,
// and a line at the end of tools/generate/weights.cpp.
struct compiled {
  const char* name;
  sf::config config;
};
inline constexpr sf::config nano = one_stream(sf::configs::nano);
inline constexpr sf::config ref_gpt2 = one_stream(sf::configs::ref_gpt2);
inline constexpr sf::config ref_llama = one_stream(sf::configs::ref_llama);
inline constexpr sf::config ref_vaswani = one_stream(sf::configs::ref_vaswani);
inline constexpr compiled configurations[] = {
    {"nano", nano},
    {"ref-gpt2", ref_gpt2},
    {"ref-llama", ref_llama},
    {"ref-vaswani", ref_vaswani},
};
inline constexpr std::size_t configuration_count = std::size(configurations);

// One generation, as the command line asked for it (already checked: the prompt is in the
// tokenizer's vocabulary, which fits the model's V).
struct job {
  std::string path;                    // the checkpoint (for messages)
  sf::char_tokenizer tokenizer;        // from the checkpoint's metadata
  std::vector<std::int32_t> prompt;    // token ids, at least one
  std::size_t tokens = 200;            // how many to generate
  sf::sampling_options sampling{.temperature = 0.8f, .top_k = 0, .top_p = 1.0f};
  std::uint64_t seed = 1;
  bool int8 = false;                   // quantize a float checkpoint at load
  std::string save_int8;               // write the int8 checkpoint here ("": no)
  bool echo = true;                    // print the prompt before the generated text
  bool quiet = false;                  // no statistics line
  double load_seconds = 0;             // reading the file (for the statistics line)
};

// Loads the weights of configuration C from `f` (float, or int8 when sf::io::is_quantized),
// quantizes or saves as asked, and streams the generated text to stdout. Returns the exit
// status; an error is one line on stderr.
template <sf::config C>
int run(const sf::io::file& f, const job& j, const char* config_name);

}  // namespace sf_gen

#endif  // SF_TOOLS_GENERATE_GENERATE_HPP
