// `staticformer run` and `export`: the definitions of weights.hpp's functions and templates (the
// checkpoint code of one configuration): include it in one translation unit of a program
// (tools/staticformer/engine_run.cpp).
#ifndef SF_TOOLS_GENERATE_WEIGHTS_IMPL_HPP
#define SF_TOOLS_GENERATE_WEIGHTS_IMPL_HPP

#include <string>
#include <utility>

#include "staticformer/io/any_tokenizer.hpp"
#include "staticformer/io/config_codec.hpp"
#include "staticformer/io/params.hpp"
#include "staticformer/io/quantized.hpp"
#include "staticformer/tokenizer.hpp"
#include "generate.hpp"
#include "weights.hpp"

namespace sf_gen {

bool is_int8(const sf::io::file& f) { return sf::io::is_quantized(f); }

std::string read_tokenizer(const sf::io::file& f, const std::string& path, std::size_t V, sf::io::any_tokenizer& tok) {
  if (!sf::io::has_tokenizer(f.metadata())) return no_tokenizer_message(path);
  sf::io::result<sf::io::any_tokenizer> t = sf::io::read_tokenizer(f.metadata(), V);
  if (!t) return path + ": " + t.message();
  tok = std::move(*t);
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
template <class Tok>
sf::status weights<C>::save_int8(const std::string& path, const sf::params<C, sf::int8>& q, const Tok& tok) {
  const sf::io::result<sf::io::metadata_map> m = sf::io::tokenizer_metadata(tok, C.V);
  if (!m) return m.status();
  return sf::io::save_quantized<C>(path, q, *m);
}

}  // namespace sf_gen

#endif  // SF_TOOLS_GENERATE_WEIGHTS_IMPL_HPP
