// staticformer-generate: the checkpoint code of every compiled configuration (see weights.hpp).
// One translation unit for all of them: the file code's fixed cost (nlohmann json) is paid once.
// A configuration added to generate.hpp needs a line at the end (else: a link error).
#include "weights.hpp"

#include "generate.hpp"
#include "staticformer/io/params.hpp"
#include "staticformer/io/quantized.hpp"
#include "staticformer/tokenizer.hpp"

namespace sf_gen {

bool is_int8(const sf::io::file& f) { return sf::io::is_quantized(f); }

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
