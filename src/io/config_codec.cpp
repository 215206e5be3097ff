// src/io/config_codec.cpp — an sf::arch as a checkpoint's __metadata__, and back
// (staticformer/io/config_codec.hpp).
#include "staticformer/io/config_codec.hpp"

#include <cstddef>
#include <optional>
#include <span>
#include <type_traits>

#include "staticformer/config_fields.hpp"

namespace sf::io {

namespace detail {

// How docs/model.md's metadata and describe() spell a field where its C++ name does not serve.
// An optional field is written (and described) only when it is not the default, and a file
// without its key has the default: the fields added after the first checkpoints were written
// (kv_heads, ffn, rope_base, rope_pairs), so that those files read as they always did and new files of
// the same models are byte for byte the old ones.
struct field_spelling {
  const char* name;                // the member of sf::arch ("V")
  const char* key;                 // its metadata key ("vocab")
  const char* if_false = nullptr;  // describe()'s word for a false bool (true shows the name)
  bool optional = false;
  bool named = false;              // describe() shows an enumeration's value as name=value
};
constexpr field_spelling field_spellings[] = {
    {"V", "vocab"},        {"T", "context"},
    {"D", "d_model"},      {"H", "n_heads"},
    {"L", "n_layers"},     {"F", "d_ff"},
    {"tied", "tied", "untied"}, {"bias", "bias", "no-bias"},
    {"kv_heads", "n_kv_heads", nullptr, true}, {"ffn", "ffn", nullptr, true},
    {"rope_base", "rope_theta", nullptr, true},  // (Meta's params.json names: n_kv_heads, rope_theta)
    {"rope_pairs", "rope_pairs", nullptr, true, true}};

field_spelling spelling_of(const char* name) {
  for (const field_spelling& s : field_spellings)
    if (std::string_view(s.name) == name) return s;
  return {name, name};
}

// A field the file need not hold: optional and at its default.
template <class X>
bool omitted(const field_spelling& s, const X& v, const X& default_value) {
  return s.optional && v == default_value;
}

// The first metadata entry, which is not a field: format = staticformer.
constexpr const char* format_key = "format";
constexpr const char* format_value = "staticformer";

// f(spelling, field of a, the same field of a default sf::arch) for every field, in
// declaration order, which is docs/model.md's order of the metadata keys.
template <class Arch, class F>
void for_each_stored_field(Arch& a, F&& f) {
  static constexpr sf::arch defaults{};
  sf::for_each_field([&](const char* name, auto& field, const auto& default_value) { f(spelling_of(name), field, default_value); },
                     a, defaults);
}

// f(key, optional) for every metadata key of an architecture, in docs/model.md's order (format first).
template <class F>
void for_each_config_key(F&& f) {
  static constexpr sf::arch any{};
  f(format_key, false);
  for_each_stored_field(any, [&](const field_spelling& s, const auto&, const auto&) { f(s.key, s.optional); });
}

bool is_config_key(std::string_view k) {
  bool found = false;
  for_each_config_key([&](const char* key, bool) { found = found || k == key; });
  return found;
}

// "\"a\", \"b\" or \"c\""
std::string one_of(std::span<const char* const> names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i)
    s.append(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ").append(1, '"').append(names[i]).append(1, '"');
  return s;
}

// Per field type: its metadata string (encode), reading one back (decode: false when the
// string is not a valid value), what a valid one looks like (expected, for messages),
// whether two different strings mean the same value (numbers compare as numbers: "1e-5"
// is "1e-05"), and the field's word in describe() ("" for none).
template <class X> struct field_codec;

template <>
struct field_codec<std::size_t> {
  static std::string encode(std::size_t v) { return std::to_string(v); }
  static bool decode(const std::string& s, std::size_t& v) { return parse_size(s, v) && v > 0; }
  static std::string expected() { return "a positive integer"; }
  static bool same(const std::string& a, const std::string& b) {
    std::size_t x = 0, y = 0;
    return parse_size(a, x) && parse_size(b, y) && x == y;
  }
  static std::string word(const field_spelling& s, std::size_t v, std::size_t) { return cat({s.name, "=", num(v)}); }
};

template <>
struct field_codec<double> {
  static std::string encode(double v) { return format_double(v); }
  static bool decode(const std::string& s, double& v) { return parse_double(s, v) && v > 0.0; }
  static std::string expected() { return "a positive number"; }
  static bool same(const std::string& a, const std::string& b) {
    double x = 0, y = 0;
    return parse_double(a, x) && parse_double(b, y) && x == y;
  }
  static std::string word(const field_spelling& s, double v, double default_value) {  // only when not the default
    return v == default_value ? std::string() : cat({s.name, "=", format_double(v)});
  }
};

template <>
struct field_codec<bool> {
  static constexpr const char* names[] = {"true", "false"};
  static std::string encode(bool v) { return v ? "true" : "false"; }
  static bool decode(const std::string& s, bool& v) {
    if (s != "true" && s != "false") return false;
    v = s == "true";
    return true;
  }
  static std::string expected() { return one_of(names); }
  static bool same(const std::string&, const std::string&) { return false; }
  static std::string word(const field_spelling& s, bool v, bool) {
    return v ? s.name : s.if_false ? s.if_false : cat({"no-", s.name});
  }
};

template <class E>
  requires std::is_enum_v<E>
struct field_codec<E> {
  static std::string encode(E v) { return sf::to_string(v); }
  static bool decode(const std::string& s, E& v) {
    const std::optional<E> e = sf::parse<E>(s);
    if (e) v = *e;
    return e.has_value();
  }
  static std::string expected() { return one_of(sf::enum_names<E>::value); }
  static bool same(const std::string&, const std::string&) { return false; }
  static std::string word(const field_spelling& s, E v, E) {
    return s.named ? cat({s.name, "=", sf::to_string(v)}) : std::string(sf::to_string(v));
  }
};

template <class Field> using codec_of = field_codec<std::remove_cvref_t<Field>>;

// "format, vocab, context, ..., norm_eps" and then the optional keys: "; optional: n_kv_heads, ..."
std::string config_key_list() {
  std::string s, optional;
  for_each_config_key([&](const char* k, bool opt) { (opt ? optional : s).append((opt ? optional : s).empty() ? "" : ", ").append(k); });
  return optional.empty() ? s : cat({s, " (optional: ", optional, ")"});
}
}  // namespace detail

// docs/model.md's __metadata__ of an architecture: every value a string.
metadata_map config_metadata(const sf::arch& c) {
  metadata_map m{{detail::format_key, detail::format_value}};
  detail::for_each_stored_field(c, [&](const detail::field_spelling& s, const auto& v, const auto& default_value) {
    if (!detail::omitted(s, v, default_value)) m[s.key] = detail::codec_of<decltype(v)>::encode(v);
  });
  return m;
}

// "V=65 T=16 D=32 H=4 L=2 F=128 layernorm learned gelu_tanh tied bias" (optional fields only when not the default).
std::string describe(const sf::arch& c) {
  std::string out;
  detail::for_each_stored_field(c, [&](const detail::field_spelling& s, const auto& v, const auto& default_value) {
    if (detail::omitted(s, v, default_value)) return;
    const std::string w = detail::codec_of<decltype(v)>::word(s, v, default_value);
    if (!w.empty()) out.append(out.empty() ? "" : " ").append(w);
  });
  return out;
}

// The architecture a file's metadata describes.
result<sf::arch> config_from_metadata(const metadata_map& m) {
  auto get = [&](const char* k) -> const std::string* {
    const auto it = m.find(k);
    return it == m.end() ? nullptr : &it->second;
  };
  const char* missing = nullptr;
  detail::for_each_config_key([&](const char* k, bool optional) {
    if (!missing && !optional && !get(k)) missing = k;
  });
  if (missing) return detail::fail({"missing metadata '", missing, "'"});
  auto bad = [&](const char* k, std::string_view expected) {
    return detail::fail({"metadata '", k, "': expected ", expected, ", found \"", *get(k), "\""});
  };
  if (*get(detail::format_key) != detail::format_value)
    return bad(detail::format_key, detail::cat({"\"", detail::format_value, "\""}));
  sf::arch c;
  sf::status error = sf::status::ok();
  detail::for_each_stored_field(c, [&](const detail::field_spelling& s, auto& v, const auto&) {
    using codec = detail::codec_of<decltype(v)>;
    if (error && get(s.key) && !codec::decode(*get(s.key), v)) error = bad(s.key, codec::expected());
  });
  if (!error) return error;
  if (c.kv_heads == c.H) c.kv_heads = 0;  // (0 is "as many as n_heads": one architecture, one value)
  if (c.H % c.kv() != 0)
    return detail::fail({"metadata: n_kv_heads ", detail::num(c.kv_heads), " does not divide n_heads ", detail::num(c.H)});
  if (c.D % c.H != 0)
    return detail::fail({"metadata: n_heads ", detail::num(c.H), " does not divide d_model ", detail::num(c.D)});
  if (c.position == sf::position_kind::rope && (c.D / c.H) % 2 != 0)
    return detail::fail({"metadata: rope needs an even head width d_model / n_heads, found ", detail::num(c.D / c.H)});
  if (c.position == sf::position_kind::sinusoidal && c.D % 2 != 0)
    return detail::fail({"metadata: sinusoidal positions need an even d_model, found ", detail::num(c.D)});
  return c;
}

result<sf::arch> read_config(const file& f) {
  if (!f.has_metadata())
    return detail::fail({"no __metadata__: expected the staticformer configuration (", detail::config_key_list(), ")"});
  return config_from_metadata(f.metadata());
}

// Ok when the file's metadata describes `expected`; else every difference,
// e.g. `metadata 'n_heads': expected "4", found "2"`.
sf::status check_config(const file& f, const sf::arch& expected) {
  if (!f.has_metadata())
    return detail::fail({"no __metadata__: expected the staticformer configuration (", describe(expected), ")"});
  // What read_config reads is what is compared, so the two agree (an optional key may spell
  // its default: n_kv_heads equal to n_heads); the key by key comparison names the differences.
  if (const result<sf::arch> found = read_config(f); found && *found == expected) return sf::status::ok();
  std::string diffs;
  int count = 0;
  auto compare = [&](const char* k, const std::string& w, bool (*same)(const std::string&, const std::string&)) {
    const std::string* got = f.metadata(k);
    if (got && (*got == w || same(*got, w))) return;
    diffs += detail::cat({count++ ? "; " : "", "metadata '", k, "': expected \"", w, "\", found ", got ? "\"" : "",
                          got ? std::string_view(*got) : "nothing (missing)", got ? "\"" : ""});
  };
  compare(detail::format_key, detail::format_value, [](const std::string&, const std::string&) { return false; });
  detail::for_each_stored_field(expected, [&](const detail::field_spelling& s, const auto& v, const auto& default_value) {
    using codec = detail::codec_of<decltype(v)>;
    if (detail::omitted(s, v, default_value) && !f.metadata(s.key)) return;  // (absent: the default)
    compare(s.key, codec::encode(v), codec::same);
  });
  return diffs.empty() ? sf::status::ok() : detail::error(diffs);
}

}  // namespace sf::io
