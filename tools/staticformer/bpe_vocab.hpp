// The `staticformer` command: the BPE tokenizer of `train --tokenizer FILE`, read and checked against
// the architecture's vocabulary — by the command before it compiles anything, and by the training
// executable (engine_train.cpp), with the same message.
#ifndef SF_TOOLS_STATICFORMER_BPE_VOCAB_HPP
#define SF_TOOLS_STATICFORMER_BPE_VOCAB_HPP

#include <cstddef>
#include <string>

#include "staticformer/io/tokenizer_bin.hpp"

namespace sf_engine {

// llama2.c's tokenizer.bin at `path`, of exactly V pieces (the vocabulary of the architecture in
// `config`, the --config file), else why not:
//   --tokenizer tok512.bin has 512 pieces; the architecture's vocabulary is 500: they must be equal ("vocab": 512 in llama.json)
inline sf::io::result<sf::io::tokenizer_bin> open_training_tokenizer(const std::string& path, std::size_t V,
                                                                    const std::string& config) {
  sf::io::result<sf::io::tokenizer_bin> t = sf::io::tokenizer_bin::open(path, sf::io::tokenizer_bin::until_end);
  if (!t) return sf::status::error("--tokenizer: ", t.message());
  if (t->size() != V)
    return sf::status::error("--tokenizer ", path.c_str(), " has ", t->size(), " pieces; the architecture's vocabulary is ",
                             V, ": they must be equal (\"vocab\": ", t->size(), " in ", config.c_str(), ")");
  return t;
}

}  // namespace sf_engine

#endif  // SF_TOOLS_STATICFORMER_BPE_VOCAB_HPP
