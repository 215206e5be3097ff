// src/io/batch.cpp — docs/model.md's batch file (staticformer/io/batch.hpp).
#include "staticformer/io/batch.hpp"

#include <algorithm>
#include <cstring>
#include <span>
#include <string_view>

namespace sf::io {

namespace detail {
sf::status load_batch(const file& f, std::size_t B, std::size_t T, std::size_t vocab, std::int32_t* tokens,
                      std::int32_t* targets, std::uint8_t* padding, bool& has_padding) {
  const shape_t want{B, T};
  auto check = [&](const char* name, dtype type, bool required) -> sf::status {
    const tensor_info* t = f.find(name);
    if (!t) return required ? fail({"missing tensor '", name, "'"}) : sf::status::ok();
    if (t->type != type)
      return fail({"tensor '", name, "': expected dtype ", to_string(type), ", found ", to_string(t->type)});
    if (t->shape != want)
      return fail({"tensor '", name, "': expected shape ", to_string(want), ", found ", to_string(t->shape)});
    return sf::status::ok();
  };
  if (sf::status s = check("tokens", dtype::I32, true); !s) return s;
  if (sf::status s = check("targets", dtype::I32, true); !s) return s;
  if (sf::status s = check("padding", dtype::U8, false); !s) return s;
  for (const tensor_info& t : f.tensors())
    if (t.name != "tokens" && t.name != "targets" && t.name != "padding")
      return fail({"unexpected tensor '", t.name, "' in a batch (expected tokens, targets and optionally padding)"});
  const tensor_info* pad = f.find("padding");
  if (pad && !padding) return error("the batch has a 'padding' tensor but no padding buffer was given");

  const std::int64_t V = static_cast<std::int64_t>(vocab);
  const std::span<const std::byte> tok = f.data(*f.find("tokens")), tgt = f.data(*f.find("targets"));
  auto at = [&](const char* name, std::size_t i, std::int64_t value, std::string_view what) {
    return fail({name, "[", num(i / T), ", ", num(i % T), "] = ", num(value), what});
  };
  auto i32 = [](std::span<const std::byte> d, std::size_t i) {
    std::int32_t v;
    std::memcpy(&v, d.data() + 4 * i, 4);
    return static_cast<std::int64_t>(v);
  };
  for (std::size_t i = 0; i < B * T; ++i) {
    const std::int64_t a = i32(tok, i);
    if (a < 0 || a >= V)
      return at("tokens", i, a, cat({" is out of range [0, ", num(V), ")"}));
    const std::int64_t b = i32(tgt, i);
    if (b != -1 && (b < 0 || b >= V))
      return at("targets", i, b, cat({" is out of range: expected -1 (ignore) or a token id in [0, ", num(V), ")"}));
    if (pad) {
      const auto v = std::to_integer<unsigned>(f.data(*pad)[i]);
      if (v > 1) return at("padding", i, v, ": expected 0 or 1");
    }
  }
  convert(dtype::I32, tok, tokens, B * T);
  convert(dtype::I32, tgt, targets, B * T);
  has_padding = pad != nullptr;
  if (padding) {
    if (pad) convert(dtype::U8, f.data(*pad), padding, B * T);
    else std::fill(padding, padding + B * T, std::uint8_t{0});
  }
  return sf::status::ok();
}
}  // namespace detail

}  // namespace sf::io
