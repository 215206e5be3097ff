// `staticformer run`: what the command line (tools/staticformer/engine_run.cpp) hands to the
// generation code of one architecture (tools/generate/run.hpp).
#ifndef SF_TOOLS_GENERATE_GENERATE_HPP
#define SF_TOOLS_GENERATE_GENERATE_HPP

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "staticformer/config.hpp"
#include "staticformer/io/any_tokenizer.hpp"
#include "staticformer/sampling.hpp"
#include "staticformer/tokenizer.hpp"

namespace sf_gen {

// The message for checkpoint `path` without a tokenizer (the `staticformer` command says it before
// compiling anything for the checkpoint's architecture; weights_impl.hpp's read_tokenizer too).
inline std::string no_tokenizer_message(const std::string& path) {
  return path + ": no tokenizer vocabulary (metadata '" + sf::tokenizer_metadata_key + "', or '" +
         sf::io::bpe_tokenizer_metadata_key +
         "' for a BPE one); the checkpoints written by examples/train and `staticformer train` have one";
}

// One generation, as the command line asked for it (already checked: the prompt is in the
// tokenizer's vocabulary, which fits the model's V). Any sf::tokenizer: run.hpp prints pieces.
template <sf::tokenizer Tok = sf::char_tokenizer>
struct job {
  std::string path;                    // the checkpoint (for messages)
  Tok tokenizer;                       // from the checkpoint
  std::vector<std::int32_t> prompt;    // token ids, at least one
  std::size_t tokens = 200;            // how many to generate
  sf::sampling_options sampling{.temperature = 0.8f, .top_k = 0, .top_p = 1.0f};
  std::uint64_t seed = 1;
  bool int8 = false;                   // quantize a float checkpoint at load
  std::string save_int8;               // write the int8 checkpoint here ("": no)
  bool echo = true;                    // print the prompt before the generated text
  bool quiet = false;                  // no statistics line
  double load_seconds = 0;             // reading the file (for the statistics line)
  const char* program = "staticformer run";  // the name that starts the program's messages
  bool runc_stats = false;             // also "achieved tok/s: X" on stderr, as llama2.c's run.c prints it
  std::string eval_path;               // --eval FILE: score its text instead of generating ("": generate)
  std::vector<std::int32_t> eval;      // its tokens (at least 2 when eval_path is given)
  std::vector<std::size_t> bench_streams;  // `bench --decode`: time decoding with these stream counts ({}: generate)
  std::size_t bench_repeat = 3;        // … the median of this many runs of each
  // Called once the weights are loaded (and quantized), before the decoder is set up: the caller
  // frees what the file was read from, so that the process never holds the file's values, the
  // weights and the decoder's copies at once. run() does not read its file after it.
  std::function<void()> loaded;
};

// Loads the weights of configuration C from `f` (float, or int8 when sf::io::is_quantized),
// quantizes or saves as asked, and streams the generated text to stdout (or, with j.eval, prints
// the mean loss of those tokens through the decoder; with j.bench_streams, times decoding with a
// decoder of Streams streams). Returns the exit status; an error is one line on stderr.
template <sf::config C, std::size_t Streams = 1, class Tok>
int run(const sf::io::file& f, const job<Tok>& j, const char* config_name);

}  // namespace sf_gen

#endif  // SF_TOOLS_GENERATE_GENERATE_HPP
