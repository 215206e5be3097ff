// staticformer/io/quantized.hpp — int8 (Q8_0) checkpoints: save_quantized, load_quantized.
//
// Part of staticformer/io/safetensors.hpp (include that; needs nlohmann::json).
//
//   static sf::params<C, sf::int8> q;                      // quantize.hpp
//   sf::io::save_quantized<C>("model-int8.safetensors", q, extra_metadata);
//   if (sf::status s = sf::io::load_quantized<C>("model-int8.safetensors", q); !s) std::puts(s.message());
//
// The file, for each tensor X of the float checkpoint (docs/model.md's names):
//   a matrix (every sf::q8_weight: attn.wq/wk/wv/wo, ffn.w1/w2, lm_head, tok_emb, pos_emb)
//     "X.q8"     I8   (N, K)   the int8 values, one row per output, K inputs along the row:
//                              [out, in] for a weight of y = x·W (so (D, F) "ffn.w1" is stored
//                              (F, D)); a table (tok_emb (V, D), pos_emb (T, D)) keeps its shape
//     "X.scale"  F32  (N, ⌈K/32⌉)  one scale per group of 32 consecutive inputs (the last group of
//                              a K that is not a multiple of 32 is shorter); w ≈ q · scale
//   a vector (norm weights and biases)
//     "X"        F32  as in the float checkpoint
// and __metadata__: the configuration (as float checkpoints), "quantization": "q8_0",
// "group_size": "32", plus the caller's extra keys (e.g. the tokenizer's vocabulary).
// Loading refuses a configuration mismatch, a float checkpoint, a missing or unexpected tensor,
// a wrong dtype or shape, an int8 value of -128 or a scale that is negative or not finite.
#pragma once
#include <cmath>
#include <cstring>
#include <set>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "staticformer/io/config_codec.hpp"
#include "staticformer/io/safetensors_format.hpp"
#include "staticformer/quantize.hpp"

namespace sf::io {

inline constexpr const char* quantization_key = "quantization";
inline constexpr const char* quantization_q8_0 = "q8_0";

// Whether a file is an int8 (Q8_0) checkpoint.
inline bool is_quantized(const file& f) {
  const std::string* q = f.metadata(quantization_key);
  return q && *q == quantization_q8_0;
}

template <sf::config C>
sf::status save_quantized(const std::string& path, const sf::params<C, sf::int8>& q,
                          const metadata_map& extra = {}) {
  writer w;
  w.set_metadata(config_metadata(C));
  w.set_metadata(quantization_key, quantization_q8_0);
  w.set_metadata("group_size", "32");
  for (const auto& [k, v] : extra) {
    if (detail::is_config_key(k) || k == quantization_key || k == "group_size")
      return detail::fail({"extra metadata '", k, "' would redefine the configuration or the quantization"});
    w.set_metadata(k, v);
  }
  sf::visit(
      [&](const sf::param_name& n, const auto& leaf) {
        using L = std::remove_cvref_t<decltype(leaf)>;
        const std::string name(n.c_str(), n.size());
        if constexpr (sf::detail::is_q8_weight<L>::value) {
          std::vector<std::int8_t> values(L::N * L::K);
          std::vector<float> scales(L::N * L::groups);
          kernels::q8::unpack(values.data(), scales.data(), leaf.m);
          w.add(name + ".q8", dtype::I8, {L::N, L::K}, values.data());
          w.add(name + ".scale", dtype::F32, {L::N, L::groups}, scales.data());
        } else {
          w.add(name, leaf);
        }
      },
      q);
  return w.write(path);
}

// Loads an int8 checkpoint of the compiled configuration C; `q` is untouched on error.
template <sf::config C>
sf::status load_quantized(const file& f, sf::params<C, sf::int8>& q) {
  if (!is_quantized(f))
    return detail::fail({f.origin(), ": not an int8 checkpoint (no metadata \"", quantization_key, "\": \"",
                         quantization_q8_0, "\"); a float checkpoint is quantized at load by sf::quantize"});
  if (const std::string* g = f.metadata("group_size"); !g || *g != "32")
    return detail::fail({f.origin(), ": metadata 'group_size' must be \"32\""});
  if (sf::status s = check_config(f, C); !s) return s;
  std::string first;
  std::size_t problems = 0;
  auto problem = [&](std::string m) {
    if (!problems++) first = std::move(m);
  };
  std::set<std::string> expected;
  auto expect = [&](const std::string& name, dtype type, const shape_t& shape) -> const tensor_info* {
    expected.insert(name);
    const tensor_info* t = f.find(name);
    if (!t) problem(detail::cat({"missing tensor '", name, "'"}));
    else if (t->type != type)
      problem(detail::cat({"tensor '", name, "': expected dtype ", to_string(type), ", found ", to_string(t->type)}));
    else if (t->shape != shape)
      problem(detail::cat({"tensor '", name, "': expected shape ", to_string(shape), ", found ", to_string(t->shape)}));
    else return t;
    return nullptr;
  };
  // First pass: names, dtypes, shapes and values, without touching q.
  sf::visit(
      [&](const sf::param_name& n, const auto& leaf) {
        using L = std::remove_cvref_t<decltype(leaf)>;
        const std::string name(n.c_str(), n.size());
        if constexpr (sf::detail::is_q8_weight<L>::value) {
          const tensor_info* tq = expect(name + ".q8", dtype::I8, {L::N, L::K});
          const tensor_info* ts = expect(name + ".scale", dtype::F32, {L::N, L::groups});
          if (tq) {
            const auto bytes = f.data(*tq);
            for (std::size_t i = 0; i < bytes.size(); ++i)
              if (static_cast<std::int8_t>(bytes[i]) == -128) {
                problem(detail::cat({"tensor '", name, ".q8': the value -128 is outside the symmetric range [-127, 127]"}));
                break;
              }
          }
          if (ts) {
            const auto bytes = f.data(*ts);
            for (std::size_t i = 0; i < L::N * L::groups; ++i) {
              float s;
              std::memcpy(&s, bytes.data() + i * sizeof(float), sizeof(float));
              // finite, and 127 × scale too: every weight it stands for is a finite float
              if (!(s >= 0.0f) || !std::isfinite(s * 127.0f)) {
                problem(detail::cat({"tensor '", name, ".scale': a scale is negative or not finite, or 127 times it "
                                                          "is not"}));
                break;
              }
            }
          }
        } else {  // float vectors (norms, biases, positions): finite, as in a float checkpoint
          if (const tensor_info* t = expect(name, dtype::F32, shape_t(std::begin(L::extents), std::end(L::extents))))
            if (std::string bad = detail::find_value(f, *t, detail::not_finite); !bad.empty())
              problem(detail::cat({"tensor '", name, "': ", bad, " (weights must be finite)"}));
        }
      },
      q);
  for (const tensor_info& t : f.tensors())
    if (!expected.count(t.name)) problem(detail::cat({"unexpected tensor '", t.name, "'"}));
  if (problems > 1) return detail::fail({first, " (and ", detail::num(problems - 1), " more)"});
  if (problems) return detail::error(first);
  // Second pass: copy.
  sf::visit(
      [&](const sf::param_name& n, auto& leaf) {
        using L = std::remove_cvref_t<decltype(leaf)>;
        const std::string name(n.c_str(), n.size());
        if constexpr (sf::detail::is_q8_weight<L>::value) {
          std::vector<std::int8_t> values(L::N * L::K);
          std::vector<float> scales(L::N * L::groups);
          std::memcpy(values.data(), f.data(*f.find(name + ".q8")).data(), values.size());
          std::memcpy(scales.data(), f.data(*f.find(name + ".scale")).data(), scales.size() * sizeof(float));
          kernels::q8::pack(leaf.m, values.data(), scales.data());
        } else {
          std::memcpy(leaf.data(), f.data(*f.find(name)).data(), L::size * sizeof(float));
        }
      },
      q);
  return sf::status::ok();
}

template <sf::config C>
sf::status load_quantized(const std::string& path, sf::params<C, sf::int8>& q) {
  result<file> f = file::open(path);
  if (!f) return f.status();
  return load_quantized<C>(*f, q);
}

}  // namespace sf::io
