// staticformer/io/config_codec.hpp — an sf::arch as a checkpoint's __metadata__, and back.
//
// Part of staticformer/io/safetensors.hpp (include that). Declarations: the code is compiled
// into staticformer::io (src/io/config_codec.cpp).
//
//   sf::io::config_metadata(a)    {"format": "staticformer", "vocab": "65", ..., "norm_eps": "1e-05"}
//   sf::io::read_config(file)     the architecture a file describes, or why it does not
//   sf::io::config_from_metadata(m)   the same from a metadata map
//   sf::io::check_config(file, a) ok, or every difference: metadata 'n_heads': expected "4", found "2"
//   sf::io::describe(a)           "V=65 T=16 D=32 H=4 L=2 F=128 layernorm learned gelu_tanh tied bias"
//
// Nothing here lists the configuration's fields: each function visits them
// (sf::for_each_field, staticformer/config_fields.hpp) and handles a field by its type
// (detail::field_codec in src/io/config_codec.cpp: sizes, enumerations, booleans, doubles). docs/model.md's metadata key is the
// field's name except where detail::field_spellings says otherwise (the sizes: V is "vocab",
// ...). Only the architecture is stored: a checkpoint fixes neither the batch size nor how its
// products were rounded in training (sf::run_settings). The fields added after the first
// checkpoints (n_kv_heads, ffn, rope_theta) are optional keys: written only when not the
// default, the default when absent.
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

// docs/model.md's __metadata__ of an architecture: every value a string.
metadata_map config_metadata(const sf::arch& a);

// "V=65 T=16 D=32 H=4 L=2 F=128 layernorm learned gelu_tanh tied bias" (optional fields only when not the default).
std::string describe(const sf::arch& a);

// The architecture a metadata map describes: docs/model.md's keys, every value a string. `staticformer train --config FILE.json` reads its
// file through this too (the JSON's numbers and booleans written as these strings).
result<sf::arch> config_from_metadata(const metadata_map& m);

// The architecture a file's metadata describes.
result<sf::arch> read_config(const file& f);

// Ok when the file's metadata describes `expected`; else every difference,
// e.g. `metadata 'n_heads': expected "4", found "2"`.
sf::status check_config(const file& f, const sf::arch& expected);

}  // namespace sf::io
