// staticformer/io/batch.hpp — docs/model.md's batch file: tokens, targets and optional padding.
//
// Part of staticformer/io/safetensors.hpp (include that). The checks and copies are compiled
// into staticformer::io (src/io/batch.cpp).
//
//   static sf::tokens_t<C> x;  static sf::targets_t<C> y;  static sf::padding_t<C> pad;
//   bool has_padding = false;
//   sf::status s = sf::io::load_batch<C>("batch.safetensors", x, y, &pad, has_padding);
//
// A batch file is a safetensors file with `tokens` I32 [B, T], `targets` I32 [B, T]
// (-1 = ignore) and optionally `padding` U8 [B, T] (1 = padding token), checked value by
// value against the compiled configuration.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "staticformer/config.hpp"
#include "staticformer/io/safetensors_format.hpp"
#include "staticformer/params.hpp"
#include "staticformer/status.hpp"

namespace sf::io {

namespace detail {
// load_batch over raw storage: B * T tokens and targets, and padding (nullptr: none given).
sf::status load_batch(const file& f, std::size_t B, std::size_t T, std::size_t vocab, std::int32_t* tokens,
                      std::int32_t* targets, std::uint8_t* padding, bool& has_padding);
}  // namespace detail

// Loads docs/model.md's batch: `tokens` I32 [B, T], `targets` I32 [B, T] (-1 = ignore) and optional
// `padding` U8 [B, T] (1 = padding). Every token id must be in [0, V), every target -1 or
// in [0, V), every padding value 0 or 1; no other tensor may be present. has_padding tells
// whether the file had padding; without it, *padding (if given) is zeroed. The outputs are
// untouched on error.
template <sf::config C>
sf::status load_batch(const file& f, sf::tokens_t<C>& tokens, sf::targets_t<C>& targets, sf::padding_t<C>* padding,
                      bool& has_padding) {
  return detail::load_batch(f, C.B, C.T, C.V, tokens.data(), targets.data(), padding ? padding->data() : nullptr,
                            has_padding);
}

template <sf::config C>
sf::status load_batch(const std::string& path, sf::tokens_t<C>& tokens, sf::targets_t<C>& targets,
                      sf::padding_t<C>* padding, bool& has_padding) {
  result<file> f = file::open(path);
  if (!f) return f.status();
  return load_batch<C>(*f, tokens, targets, padding, has_padding);
}

}  // namespace sf::io
