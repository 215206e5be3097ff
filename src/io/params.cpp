// src/io/params.cpp — parameters as docs/model.md checkpoints (staticformer/io/params.hpp):
// the checks and copies over type-erased slots.
#include "staticformer/io/params.hpp"

#include <set>

namespace sf::io {

namespace detail {
sf::status load_slots(const file& f, const sf::arch& c, const std::vector<slot>& slots,
                      const load_options& options) {
  if (sf::status s = check_config(f, c); !s) return s;
  problems found;
  std::set<std::string_view> expected;
  for (const slot& sl : slots) {
    expected.insert(sl.name);
    const tensor_info* info = f.find(sl.name);
    if (!info) {
      found.add(cat({"missing tensor '", sl.name, "'"}));
    } else if (!(info->type == sl.type || (sl.type == dtype::F64 && info->type == dtype::F32))) {
      found.add(cat({"tensor '", sl.name, "': expected dtype ", to_string(sl.type), ", found ", to_string(info->type)}));
    } else if (info->shape != sl.shape) {
      found.add(cat({"tensor '", sl.name, "': expected shape ", to_string(sl.shape), ", found ",
                     to_string(info->shape)}));
    }
  }
  for (const tensor_info& t : f.tensors())
    if (!expected.count(t.name)) found.add(cat({"unexpected tensor '", t.name, "'"}));
  if (sf::status s = found.status(); !s) return s;
  if (!options.allow_non_finite)
    for (const slot& sl : slots)
      if (std::string bad = find_not_finite(f, *f.find(sl.name)); !bad.empty())
        return fail({"tensor '", sl.name, "': ", bad, " (weights must be finite)"});
  for (const slot& sl : slots) {
    const tensor_info& info = *f.find(sl.name);
    // The slots point into the caller's non-const parameters (see load_params).
    if (sl.type == dtype::F32) convert(info.type, f.data(info), static_cast<float*>(const_cast<void*>(sl.data)), sl.size);
    else convert(info.type, f.data(info), static_cast<double*>(const_cast<void*>(sl.data)), sl.size);
  }
  return sf::status::ok();
}

sf::status save_slots(const std::string& path, const sf::arch& c, const std::vector<slot>& slots,
                      const metadata_map& extra) {
  writer w;
  w.set_metadata(config_metadata(c));
  for (const auto& [k, v] : extra) {
    if (is_config_key(k)) return fail({"extra metadata '", k, "' would redefine the configuration"});
    w.set_metadata(k, v);
  }
  w.add_slots(slots);
  return w.write(path);
}
}  // namespace detail

}  // namespace sf::io
