// staticformer/io/params.hpp — parameters as docs/model.md checkpoints: save_params, load_params.
//
// Part of staticformer/io/safetensors.hpp (include that; needs nlohmann::json).
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
#include <set>
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
inline sf::status load_slots(const file& f, const sf::config& c, const std::vector<slot>& slots,
                             const load_options& options) {
  if (sf::status s = check_config(f, c); !s) return s;
  std::string first;
  std::size_t problems = 0;
  auto problem = [&](std::string m) {
    if (!problems++) first = std::move(m);
  };
  std::set<std::string_view> expected;
  for (const slot& sl : slots) {
    expected.insert(sl.name);
    const tensor_info* info = f.find(sl.name);
    if (!info) {
      problem(cat({"missing tensor '", sl.name, "'"}));
    } else if (!(info->type == sl.type || (sl.type == dtype::F64 && info->type == dtype::F32))) {
      problem(cat({"tensor '", sl.name, "': expected dtype ", to_string(sl.type), ", found ", to_string(info->type)}));
    } else if (info->shape != sl.shape) {
      problem(cat({"tensor '", sl.name, "': expected shape ", to_string(sl.shape), ", found ",
                   to_string(info->shape)}));
    }
  }
  for (const tensor_info& t : f.tensors())
    if (!expected.count(t.name)) problem(cat({"unexpected tensor '", t.name, "'"}));
  if (problems > 1) return fail({first, " (and ", num(problems - 1), " more)"});
  if (problems) return error(first);
  if (!options.allow_non_finite)
    for (const slot& sl : slots)
      if (std::string bad = find_value(f, *f.find(sl.name), not_finite); !bad.empty())
        return fail({"tensor '", sl.name, "': ", bad, " (weights must be finite)"});
  for (const slot& sl : slots) {
    const tensor_info& info = *f.find(sl.name);
    // The slots point into the caller's non-const parameters (see load_params).
    if (sl.type == dtype::F32) convert(info.type, f.data(info), static_cast<float*>(const_cast<void*>(sl.data)), sl.size);
    else convert(info.type, f.data(info), static_cast<double*>(const_cast<void*>(sl.data)), sl.size);
  }
  return sf::status::ok();
}
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
  writer w;
  w.set_metadata(config_metadata(C));
  for (const auto& [k, v] : extra) {
    if (detail::is_config_key(k)) return detail::fail({"extra metadata '", k, "' would redefine the configuration"});
    w.set_metadata(k, v);
  }
  w.add_all(p);
  return w.write(path);
}

}  // namespace sf::io
