// `staticformer run` and `export`: reading and writing the weights of configuration C
// (safetensors, through staticformer::io), declared here and defined in
// tools/generate/weights_impl.hpp, which one translation unit of a program includes
// (tools/staticformer/engine_run.cpp).
#ifndef SF_TOOLS_GENERATE_WEIGHTS_HPP
#define SF_TOOLS_GENERATE_WEIGHTS_HPP

#include <cstddef>
#include <string>

#include "staticformer/config.hpp"
#include "staticformer/io/any_tokenizer.hpp"
#include "staticformer/params.hpp"
#include "staticformer/quantize.hpp"
#include "staticformer/status.hpp"
#include "staticformer/tokenizer.hpp"

namespace sf_gen {

// Whether f is an int8 checkpoint (sf::io::is_quantized).
bool is_int8(const sf::io::file& f);

// The tokenizer stored in checkpoint f of `path` (metadata "tokenizer.vocab": at most V symbols, or
// "tokenizer.bpe": V pieces; sf::io::read_tokenizer). "" on success, else the message of the error
// (naming `path`).
std::string read_tokenizer(const sf::io::file& f, const std::string& path, std::size_t V, sf::io::any_tokenizer& tok);

template <sf::config C>
struct weights {
  // sf::io::load_params: a float checkpoint of C (p untouched on error).
  static sf::status load_float(const sf::io::file& f, sf::params<C>& p);
  // sf::io::load_quantized: an int8 checkpoint of C (q untouched on error).
  static sf::status load_int8(const sf::io::file& f, sf::params<C, sf::int8>& q);
  // sf::io::save_quantized, with the tokenizer (an sf::char_tokenizer or an sf::io::tokenizer_bin,
  // stored as sf::io::tokenizer_metadata says).
  template <class Tok>
  static sf::status save_int8(const std::string& path, const sf::params<C, sf::int8>& q, const Tok& tok);
};

}  // namespace sf_gen

#endif  // SF_TOOLS_GENERATE_WEIGHTS_HPP
