// staticformer/io/quantized.hpp — int8 (Q8_0) checkpoints: save_quantized, load_quantized.
//
// Part of staticformer/io/safetensors.hpp (include that). The checks are compiled into
// staticformer::io (src/io/quantized.cpp); the templates here list the tensors and pack them.
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
#include <cstring>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "staticformer/io/config_codec.hpp"
#include "staticformer/io/safetensors_format.hpp"
#include "staticformer/quantize.hpp"

namespace sf::io {

inline constexpr const char* quantization_key = "quantization";
inline constexpr const char* quantization_q8_0 = "q8_0";

// Whether a file is an int8 (Q8_0) checkpoint.
bool is_quantized(const file& f);

namespace detail {
// The metadata of an int8 checkpoint of configuration c (the configuration, the quantization,
// the group size) plus `extra`, which may redefine none of them.
sf::status set_quantized_metadata(writer& w, const sf::arch& c, const metadata_map& extra);

// One leaf of sf::params<C, sf::int8>, type-erased: a matrix (an sf::q8_weight, stored as
// "<name>.q8" I8 (N, K) and "<name>.scale" F32 (N, groups)) or a float vector ("<name>", F32 of `shape`).
struct q8_slot {
  std::string name;
  bool matrix = false;
  std::size_t N = 0, K = 0, groups = 0;  // a matrix
  shape_t shape;                         // a vector
};
// Everything load_quantized checks before it copies anything: the file is an int8
// checkpoint of configuration c with exactly the slots' tensors, dtypes and shapes, no int8
// value of -128, every scale (and 127 times it) finite and not negative, the vectors finite.
sf::status check_quantized(const file& f, const sf::arch& c, const std::vector<q8_slot>& slots);
}  // namespace detail

template <sf::config C>
sf::status save_quantized(const std::string& path, const sf::params<C, sf::int8>& q,
                          const metadata_map& extra = {}) {
  writer w;
  if (sf::status s = detail::set_quantized_metadata(w, C, extra); !s) return s;
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
  std::vector<detail::q8_slot> slots;
  sf::visit(
      [&](const sf::param_name& n, const auto& leaf) {
        using L = std::remove_cvref_t<decltype(leaf)>;
        detail::q8_slot sl;
        sl.name.assign(n.c_str(), n.size());
        if constexpr (sf::detail::is_q8_weight<L>::value) {
          sl.matrix = true;
          sl.N = L::N;
          sl.K = L::K;
          sl.groups = L::groups;
        } else {
          sl.shape.assign(std::begin(L::extents), std::end(L::extents));
        }
        slots.push_back(std::move(sl));
      },
      q);
  if (sf::status s = detail::check_quantized(f, C, slots); !s) return s;
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
