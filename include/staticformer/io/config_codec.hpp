// staticformer/io/config_codec.hpp — an sf::config as a checkpoint's __metadata__, and back.
//
// Part of staticformer/io/safetensors.hpp (include that). Declarations: the code is compiled
// into staticformer::io (src/io/config_codec.cpp).
//
//   sf::io::config_metadata(c)    {"format": "staticformer", "vocab": "65", ..., "norm_eps": "1e-05"}
//   sf::io::read_config(file)     the configuration a file describes (B = 1), or why it does not
//   sf::io::config_from_metadata(m)   the same from a metadata map
//   sf::io::check_config(file, c) ok, or every difference: metadata 'n_heads': expected "4", found "2"
//   sf::io::describe(c)           "V=65 T=16 D=32 H=4 L=2 F=128 layernorm learned gelu_tanh tied bias"
//
// Nothing here lists the configuration's fields: each function visits them
// (sf::for_each_field, staticformer/config_fields.hpp) and handles a field by its type
// (detail::field_codec in src/io/config_codec.cpp: sizes, enumerations, booleans, doubles). docs/model.md's metadata key is the
// field's name except where detail::field_spellings says otherwise (the sizes: V is "vocab",
// ...; B and precision are not stored, since a checkpoint fixes neither the batch size nor how
// its products were rounded in training).
#pragma once
#include <string>
#include <string_view>

#include "staticformer/config.hpp"
#include "staticformer/io/safetensors_format.hpp"
#include "staticformer/status.hpp"

namespace sf::io {

namespace detail {
// Whether k is a metadata key of a configuration (format, vocab, context, ..., norm_eps).
bool is_config_key(std::string_view k);
// "format, vocab, context, ..., norm_eps": the keys, in docs/model.md's order.
std::string config_key_list();
}  // namespace detail

// docs/model.md's __metadata__ of a configuration: every value a string.
metadata_map config_metadata(const sf::config& c);

// "V=65 T=16 D=32 H=4 L=2 F=128 layernorm learned gelu_tanh tied bias" (B is not part of a checkpoint).
std::string describe(const sf::config& c);

// The configuration a metadata map describes (B = 1: a checkpoint does not fix the batch size):
// docs/model.md's keys, every value a string. `staticformer train --config FILE.json` reads its
// file through this too (the JSON's numbers and booleans written as these strings).
result<sf::config> config_from_metadata(const metadata_map& m);

// The configuration a file's metadata describes (B = 1: a checkpoint does not fix the batch size).
result<sf::config> read_config(const file& f);

// Ok when the file's metadata describes `expected` (all but B); else every difference,
// e.g. `metadata 'n_heads': expected "4", found "2"`.
sf::status check_config(const file& f, const sf::config& expected);

}  // namespace sf::io
