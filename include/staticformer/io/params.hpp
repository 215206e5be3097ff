// staticformer/io/params.hpp — parameters as docs/model.md checkpoints: save_params, load_params.
//
// Part of staticformer/io/safetensors.hpp (include that). The checks and copies are compiled
// into staticformer::io (src/io/params.cpp); the templates here list the tensors (sf::visit).
//
//   sf::params<C> p;                                       // C: a compiled sf::config
//   if (sf::status s = sf::io::load_params<C>("m.safetensors", p); !s) std::puts(s.message());
//   // "tensor 'blocks.0.attn.wq': expected shape [32, 32], found [32, 48]"
//
// A checkpoint holds every tensor of sf::params<C> (walked by sf::visit) as F32 under its
// checkpoint name, and the configuration as __metadata__ (staticformer/io/config_codec.hpp).
// A checkpoint whose weights are not all finite is refused unless the caller opts in:
//   sf::io::load_params<C>("m.safetensors", p, {.allow_non_finite = true});
#pragma once
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "staticformer/config.hpp"
#include "staticformer/io/config_codec.hpp"
#include "staticformer/io/safetensors_format.hpp"
#include "staticformer/params.hpp"
#include "staticformer/status.hpp"

namespace sf::io {

// How load_params (and load_model, staticformer/io/checkpoint.hpp) treat what they read.
struct load_options {
  // Accept weights that are NaN or infinite. By default such a checkpoint is refused, naming
  // the tensor and its first such element: tensor 'blocks.0.attn.wq': element [3, 1] is nan
  // (weights must be finite).
  bool allow_non_finite = false;
};

namespace detail {
// The checks and copies of load_params over type-erased slots (tensor_slots: name, dtype, shape,
// storage): the configuration, every tensor present with its dtype (F32 also into F64) and
// shape, none unexpected, the weights finite unless options.allow_non_finite; then the copies
// into the slots' storage (which must be writable). Nothing is written on error.
sf::status load_slots(const file& f, const sf::arch& c, const std::vector<slot>& slots,
                      const load_options& options);
// Writes docs/model.md's checkpoint of configuration c: the slots (under their names) and the
// configuration as metadata, plus `extra` (which may not redefine a configuration key).
sf::status save_slots(const std::string& path, const sf::arch& c, const std::vector<slot>& slots,
                      const metadata_map& extra);
}  // namespace detail

// Loads parameters of the compiled configuration C, refusing any mismatch: configuration
// metadata (all but B), a missing or unexpected tensor, a dtype, a shape, and (unless
// options.allow_non_finite) a weight that is NaN or infinite. F32 tensors load into float
// parameters, and (widened exactly) into double ones. `p` is untouched on error.
template <sf::config C, class T>
sf::status load_params(const file& f, sf::params<C, T>& p, const load_options& options = {}) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "sf::io::load_params: parameters are float (or double)");
  return detail::load_slots(f, C, tensor_slots(std::as_const(p)), options);
}

template <sf::config C, class T>
sf::status load_params(const std::string& path, sf::params<C, T>& p, const load_options& options = {}) {
  result<file> f = file::open(path);
  if (!f) return f.status();
  return load_params<C>(*f, p, options);
}

// Saves parameters as docs/model.md's checkpoint: F32 tensors under their checkpoint names and the
// configuration as __metadata__. `extra` adds metadata (e.g. a tokenizer's vocabulary);
// it may not redefine a configuration key.
template <sf::config C, class T>
sf::status save_params(const std::string& path, const sf::params<C, T>& p, const metadata_map& extra = {}) {
  static_assert(std::is_same_v<T, float>, "sf::io::save_params: checkpoints hold F32 parameters");
  return detail::save_slots(path, C, tensor_slots(p), extra);
}

}  // namespace sf::io
