// src/io/quantized.cpp — int8 (Q8_0) checkpoints (staticformer/io/quantized.hpp): the metadata
// and every check of load_quantized, over type-erased slots.
#include "staticformer/io/quantized.hpp"

#include <cmath>
#include <set>

namespace sf::io {

bool is_quantized(const file& f) {
  const std::string* q = f.metadata(quantization_key);
  return q && *q == quantization_q8_0;
}

namespace detail {
sf::status set_quantized_metadata(writer& w, const sf::arch& c, const metadata_map& extra) {
  w.set_metadata(config_metadata(c));
  w.set_metadata(quantization_key, quantization_q8_0);
  w.set_metadata("group_size", "32");
  for (const auto& [k, v] : extra) {
    if (is_config_key(k) || k == quantization_key || k == "group_size")
      return fail({"extra metadata '", k, "' would redefine the configuration or the quantization"});
    w.set_metadata(k, v);
  }
  return sf::status::ok();
}

sf::status check_quantized(const file& f, const sf::arch& c, const std::vector<q8_slot>& slots) {
  if (!is_quantized(f))
    return fail({f.origin(), ": not an int8 checkpoint (no metadata \"", quantization_key, "\": \"",
                 quantization_q8_0, "\"); a float checkpoint is quantized at load by sf::quantize"});
  if (const std::string* g = f.metadata("group_size"); !g || *g != "32")
    return fail({f.origin(), ": metadata 'group_size' must be \"32\""});
  if (sf::status s = check_config(f, c); !s) return s;
  problems found;
  std::set<std::string> expected;
  auto expect = [&](const std::string& name, dtype type, const shape_t& shape) -> const tensor_info* {
    expected.insert(name);
    const tensor_info* t = f.find(name);
    if (!t) found.add(cat({"missing tensor '", name, "'"}));
    else if (t->type != type)
      found.add(cat({"tensor '", name, "': expected dtype ", to_string(type), ", found ", to_string(t->type)}));
    else if (t->shape != shape)
      found.add(cat({"tensor '", name, "': expected shape ", to_string(shape), ", found ", to_string(t->shape)}));
    else return t;
    return nullptr;
  };
  // Names, dtypes, shapes and values, without touching the parameters.
  for (const q8_slot& sl : slots) {
    const std::string& name = sl.name;
    if (sl.matrix) {
      const tensor_info* tq = expect(name + ".q8", dtype::I8, {sl.N, sl.K});
      const tensor_info* ts = expect(name + ".scale", dtype::F32, {sl.N, sl.groups});
      if (tq) {
        const auto bytes = f.data(*tq);
        for (std::size_t i = 0; i < bytes.size(); ++i)
          if (static_cast<std::int8_t>(bytes[i]) == -128) {
            found.add(cat({"tensor '", name, ".q8': the value -128 is outside the symmetric range [-127, 127]"}));
            break;
          }
      }
      if (ts) {
        const auto bytes = f.data(*ts);
        for (std::size_t i = 0; i < sl.N * sl.groups; ++i) {
          float s;
          std::memcpy(&s, bytes.data() + i * sizeof(float), sizeof(float));
          // finite, and 127 × scale too: every weight it stands for is a finite float
          if (!(s >= 0.0f) || !std::isfinite(s * 127.0f)) {
            found.add(cat({"tensor '", name, ".scale': a scale is negative or not finite, or 127 times it is not"}));
            break;
          }
        }
      }
    } else {  // float vectors (norms, biases, positions): finite, as in a float checkpoint
      if (const tensor_info* t = expect(name, dtype::F32, sl.shape))
        if (std::string bad = find_not_finite(f, *t); !bad.empty())
          found.add(cat({"tensor '", name, "': ", bad, " (weights must be finite)"}));
    }
  }
  for (const tensor_info& t : f.tensors())
    if (!expected.count(t.name)) found.add(cat({"unexpected tensor '", t.name, "'"}));
  return found.status();
}
}  // namespace detail

}  // namespace sf::io
