// `staticformer run` and `export`: the definitions of weights.hpp's functions and templates (the
// checkpoint code of one configuration): include it in one translation unit of a program
// (tools/staticformer/engine_run.cpp).
#ifndef SF_TOOLS_GENERATE_WEIGHTS_IMPL_HPP
#define SF_TOOLS_GENERATE_WEIGHTS_IMPL_HPP

#include <string>

#include "staticformer/io/config_codec.hpp"
#include "staticformer/io/params.hpp"
#include "staticformer/io/quantized.hpp"
#include "staticformer/tokenizer.hpp"
#include "generate.hpp"
#include "weights.hpp"

namespace sf_gen {

bool is_int8(const sf::io::file& f) { return sf::io::is_quantized(f); }

std::string read_tokenizer(const sf::io::file& f, const std::string& path, std::size_t V, sf::char_tokenizer& tok) {
  const std::string* vocab = f.metadata(sf::tokenizer_metadata_key);
  if (!vocab) return no_tokenizer_message(path);
  if (sf::status s = sf::char_tokenizer::from_metadata(*vocab, tok); !s) return path + ": " + s.message();
  if (tok.size() > V)
    return path + ": the tokenizer has " + std::to_string(tok.size()) +
           " symbols, more than the model's vocabulary V = " + std::to_string(V);
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

}  // namespace sf_gen

#endif  // SF_TOOLS_GENERATE_WEIGHTS_IMPL_HPP
