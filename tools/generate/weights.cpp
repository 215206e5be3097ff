// staticformer-generate: the checkpoint code of every compiled configuration (see weights.hpp).
// One translation unit for all of them: the file code's fixed cost (the io headers) is paid once.
// A configuration added to generate.hpp needs a line at the end (else: a link error).
#include "weights.hpp"

#include "generate.hpp"
#include "staticformer/io/config_codec.hpp"
#include "staticformer/io/params.hpp"
#include "staticformer/io/quantized.hpp"
#include "staticformer/tokenizer.hpp"

namespace sf_gen {

bool is_int8(const sf::io::file& f) { return sf::io::is_quantized(f); }

std::string identify(const sf::io::file& f, const std::string& path, std::size_t& which, sf::char_tokenizer& tok) {
  const sf::io::result<sf::config> found = sf::io::read_config(f);
  if (!found) return path + ": not a staticformer checkpoint: " + found.message();
  which = configuration_count;
  for (std::size_t i = 0; i < configuration_count; ++i)
    if (sf::weights_config(configurations[i].config) == sf::weights_config(*found)) which = i;
  if (which == configuration_count) {
    std::string names;
    for (const compiled& c : configurations) names.append(names.empty() ? "" : ", ").append(c.name);
    return path + ": no compiled configuration matches the checkpoint's (" + sf::io::describe(*found) +
           "); this program has " + names;
  }
  const std::string* vocab = f.metadata(sf::tokenizer_metadata_key);
  if (!vocab)
    return path + ": no tokenizer vocabulary (metadata '" + sf::tokenizer_metadata_key +
           "'); the checkpoints written by examples/train have one";
  if (sf::status s = sf::char_tokenizer::from_metadata(*vocab, tok); !s) return path + ": " + s.message();
  if (tok.size() > configurations[which].config.V)
    return path + ": the tokenizer has " + std::to_string(tok.size()) +
           " symbols, more than the model's vocabulary V = " + std::to_string(configurations[which].config.V);
  return "";
}

template <sf::config C>
sf::status weights<C>::load_float(const sf::io::file& f, sf::params<C>& p) {
  return sf::io::load_params<C>(f, p);
}

template <sf::config C>
sf::status weights<C>::load_int8(const sf::io::file& f, sf::params<C, sf::int8>& q) {
  return sf::io::load_quantized<C>(f, q);
}

template <sf::config C>
sf::status weights<C>::save_int8(const std::string& path, const sf::params<C, sf::int8>& q, const std::string& vocab) {
  return sf::io::save_quantized<C>(path, q, {{sf::tokenizer_metadata_key, vocab}});
}

template struct weights<nano>;
template struct weights<ref_gpt2>;
template struct weights<ref_llama>;
template struct weights<ref_vaswani>;

}  // namespace sf_gen
