// staticformer/io/gguf.hpp: GGUF files of architecture llama, every count, length, offset and
// extent checked against the file before use; and written (F32, Q8_0).
#include "staticformer/io/gguf.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <sys/stat.h>

#include "staticformer/io/any_tokenizer.hpp"
#include "staticformer/io/config_codec.hpp"
#include "staticformer/io/quantized.hpp"

namespace sf::io {

using detail::num;

namespace {

std::optional<std::uint64_t> mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<std::uint64_t> add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

template <class... A>
sf::status fail(const std::string& origin, const A&... parts) {
  const std::string_view p[] = {std::string_view(parts)...};
  std::string s = "'" + origin + "': GGUF: ";
  for (std::string_view x : p) s += x;
  return detail::error(s);
}

// ggml's type names (for messages), the value types' names.
std::string ggml_type_name(std::uint32_t t) {
  static const char* const names[] = {"F32",  "F16",  "Q4_0", "Q4_1", "Q4_2", "Q4_3", "Q5_0", "Q5_1",
                                      "Q8_0", "Q8_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K",
                                      "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S",
                                      "IQ4_XS", "I8", "I16", "I32", "I64", "F64", "IQ1_M", "BF16"};
  if (t < std::size(names)) return names[t];
  return "type " + std::to_string(t);
}

enum vt : std::uint32_t { U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64, N_VT };
const char* value_type_name(std::uint32_t t) {
  static const char* const names[] = {"uint8", "int8",   "uint16", "int16",  "uint32", "int32", "float32",
                                      "bool",  "string", "array",  "uint64", "int64",  "float64"};
  return t < N_VT ? names[t] : "unknown";
}
std::uint64_t fixed_size(std::uint32_t t) {  // 0: string or array
  switch (t) {
    case U8: case I8: case BOOL: return 1;
    case U16: case I16: return 2;
    case U32: case I32: case F32: return 4;
    case U64: case I64: case F64: return 8;
    default: return 0;
  }
}

// A cursor over the file; every read checks the bytes left and says what was being read.
struct cursor {
  std::span<const std::byte> b;
  std::uint64_t pos = 0;
  std::string err;

  std::uint64_t left() const { return b.size() - pos; }
  bool need(std::uint64_t n, std::string_view what) {
    if (n <= left()) return true;
    if (err.empty())
      err = detail::cat({"truncated: ", what, " needs ", num(n), " bytes at offset ", num(pos), ", the file has ",
                         num(left()), " left"});
    return false;
  }
  std::uint64_t uint(int bytes) {  // little-endian, need() checked by the caller
    std::uint64_t v = 0;
    for (int k = 0; k < bytes; ++k) v |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(b[pos + k])) << (8 * k);
    pos += static_cast<std::uint64_t>(bytes);
    return v;
  }
  bool u32(std::uint32_t& v, std::string_view what) {
    if (!need(4, what)) return false;
    v = static_cast<std::uint32_t>(uint(4));
    return true;
  }
  bool u64(std::uint64_t& v, std::string_view what) {
    if (!need(8, what)) return false;
    v = uint(8);
    return true;
  }
  bool str(std::string& s, std::string_view what, std::uint64_t max_len) {
    std::uint64_t n;
    if (!u64(n, what)) return false;
    if (n > max_len) {
      err = detail::cat({what, ": a string of ", num(n), " bytes, more than ", num(max_len)});
      return false;
    }
    if (!need(n, what)) return false;
    s.assign(reinterpret_cast<const char*>(b.data() + pos), static_cast<std::size_t>(n));
    pos += n;
    return true;
  }
};

// One key's value: scalars held, arrays as their element type, count and first byte.
struct kv {
  std::uint32_t type = 0;
  std::uint64_t u = 0;  // unsigned integers, bool
  std::int64_t i = 0;   // signed integers
  double f = 0;         // floats
  std::string s;
  std::uint32_t elem = 0;
  std::uint64_t count = 0, at = 0;
  bool integer() const { return type <= I32 || type == U64 || type == I64; }
  // The value of a non-negative integer of any integer type.
  std::optional<std::uint64_t> size() const {
    if (!integer()) return std::nullopt;
    if (type == U8 || type == U16 || type == U32 || type == U64) return u;
    if (i < 0) return std::nullopt;
    return static_cast<std::uint64_t>(i);
  }
  std::string text() const {  // for messages
    if (type == U8 || type == U16 || type == U32 || type == U64) return std::to_string(u);
    if (integer()) return std::to_string(i);
    return std::string("a ") + value_type_name(type);
  }
};

constexpr std::uint64_t max_key = 65535, max_string = 1u << 30, max_depth = 3;

// The double of a float32 value's shortest decimal form: a float32 1e-6 is read as 1e-06, not
// 9.99999997e-07 (a checkpoint's metadata then shows what the file's writer meant).
double float_key_value(float x) {
  if (!std::isfinite(x)) return x;
  char buf[32];
  const auto w = std::to_chars(buf, buf + sizeof buf, x);
  double d;
  if (w.ec != std::errc() || std::from_chars(buf, w.ptr, d).ec != std::errc()) return x;
  return d;
}

bool read_scalar(cursor& c, std::uint32_t t, kv& v, const std::string& what) {
  const std::uint64_t n = fixed_size(t);
  if (!c.need(n, what)) return false;
  const std::uint64_t raw = c.uint(static_cast<int>(n));
  switch (t) {
    case U8: case U16: case U32: case U64: v.u = raw, v.i = static_cast<std::int64_t>(raw); break;
    case I8: v.i = static_cast<std::int8_t>(raw); break;
    case I16: v.i = static_cast<std::int16_t>(raw); break;
    case I32: v.i = static_cast<std::int32_t>(raw); break;
    case I64: v.i = static_cast<std::int64_t>(raw); break;
    case BOOL:
      if (raw > 1) {
        c.err = detail::cat({what, ": a bool of value ", num(raw), " (0 or 1)"});
        return false;
      }
      v.u = raw;
      break;
    case F32: {
      const std::uint32_t r = static_cast<std::uint32_t>(raw);
      float x;
      std::memcpy(&x, &r, 4);
      v.f = float_key_value(x);
      break;
    }
    case F64: std::memcpy(&v.f, &raw, 8); break;
    default: break;
  }
  return true;
}

// Reads (and skips) a value of type t; `depth` bounds arrays of arrays.
bool read_value(cursor& c, std::uint32_t t, kv& v, const std::string& what, std::uint64_t depth) {
  v.type = t;
  if (t >= N_VT) {
    c.err = detail::cat({what, ": unknown value type ", num(t)});
    return false;
  }
  if (t == STRING) return c.str(v.s, what, max_string);
  if (t != ARRAY) return read_scalar(c, t, v, what);
  if (depth >= max_depth) {
    c.err = detail::cat({what, ": arrays nested more than ", num(max_depth), " deep"});
    return false;
  }
  if (!c.u32(v.elem, what + " (array type)") || !c.u64(v.count, what + " (array count)")) return false;
  if (v.elem >= N_VT) {
    c.err = detail::cat({what, ": an array of unknown value type ", num(v.elem)});
    return false;
  }
  const std::uint64_t least = fixed_size(v.elem) ? fixed_size(v.elem) : (v.elem == STRING ? 8 : 12);
  if (v.count > c.left() / least) {
    c.err = detail::cat({what, ": an array of ", num(v.count), " ", value_type_name(v.elem), " needs at least ",
                         v.count > std::numeric_limits<std::uint64_t>::max() / least ? std::string_view("2^64")
                                                                                    : std::string_view(num(v.count * least)),
                         " bytes, the file has ", num(c.left()), " left"});
    return false;
  }
  v.at = c.pos;
  if (fixed_size(v.elem)) {
    c.pos += v.count * least;
    if (v.elem == BOOL)
      for (std::uint64_t k = 0; k < v.count; ++k)
        if (std::to_integer<std::uint8_t>(c.b[v.at + k]) > 1) {
          c.err = detail::cat({what, "[", num(k), "]: a bool of value ",
                               num(std::to_integer<std::uint8_t>(c.b[v.at + k])), " (0 or 1)"});
          return false;
        }
    return true;
  }
  kv e;
  for (std::uint64_t k = 0; k < v.count; ++k) {
    if (v.elem == STRING) {  // skipped: its length checked
      std::uint64_t n;
      if (!c.u64(n, what)) return false;
      if (n > max_string || !c.need(n, what)) {
        if (c.err.empty()) c.err = detail::cat({what, "[", num(k), "]: a string of ", num(n), " bytes"});
        return false;
      }
      c.pos += n;
    } else if (!read_value(c, v.elem, e, detail::cat({what, "[", num(k), "]"}), depth + 1)) {
      return false;
    }
  }
  return true;
}

struct tinfo {
  std::string name;
  std::vector<std::uint64_t> ne;
  std::uint32_t type = 0;
  std::uint64_t offset = 0, bytes = 0, elements = 0;
};

// ----------------------------------------------------------------------------- the llama layout

// One GGUF tensor: its ggml name, staticformer's name and shape, and whether it is a matrix
// to transpose (ggml [in, out] = PyTorch [out, in] row-major; ours [in, out]).
struct gslot {
  std::string theirs, ours;
  shape_t shape;       // ours
  std::vector<std::uint64_t> ne;  // ggml's extents
  bool transpose;
};

std::vector<gslot> llama_slots(const sf::arch& a) {
  const std::size_t D = a.D, F = a.F, V = a.V, KV = a.dk() * a.kv();
  std::vector<gslot> s;
  s.push_back({"token_embd.weight", "tok_emb.weight", {V, D}, {D, V}, false});
  for (std::size_t l = 0; l < a.L; ++l) {
    const std::string g = "blk." + std::to_string(l) + ".", b = "blocks." + std::to_string(l) + ".";
    s.push_back({g + "attn_norm.weight", b + "norm1.weight", {D}, {D}, false});
    s.push_back({g + "attn_q.weight", b + "attn.wq", {D, D}, {D, D}, true});
    s.push_back({g + "attn_k.weight", b + "attn.wk", {D, KV}, {D, KV}, true});
    s.push_back({g + "attn_v.weight", b + "attn.wv", {D, KV}, {D, KV}, true});
    s.push_back({g + "attn_output.weight", b + "attn.wo", {D, D}, {D, D}, true});
    s.push_back({g + "ffn_norm.weight", b + "norm2.weight", {D}, {D}, false});
    s.push_back({g + "ffn_gate.weight", b + "ffn.w1", {D, F}, {D, F}, true});
    s.push_back({g + "ffn_down.weight", b + "ffn.w2", {F, D}, {F, D}, true});
    s.push_back({g + "ffn_up.weight", b + "ffn.w3", {D, F}, {D, F}, true});
  }
  s.push_back({"output_norm.weight", "norm_f.weight", {D}, {D}, false});
  if (!a.tied) s.push_back({"output.weight", "lm_head.weight", {D, V}, {D, V}, true});
  return s;
}

std::string ne_text(const std::vector<std::uint64_t>& ne) {
  std::string s = "[";
  for (std::size_t k = 0; k < ne.size(); ++k) s += (k ? ", " : "") + std::to_string(ne[k]);
  return s + "]";
}

}  // namespace

const gguf_tensor* gguf_model::find(std::string_view n) const { return find_named(tensors, n); }
const gguf_q8* gguf_model::find_q8(std::string_view n) const { return find_named(quantized, n); }


namespace {
// parse_gguf of a file of `file_size` bytes; `bytes` its first bytes, all of them when `values`
// (the tensors' values read), else at least the header's (read_gguf_header: everything but the
// values, the tensors' extents checked against file_size).
result<gguf_model> parse(std::span<const std::byte> bytes, std::uint64_t file_size, const std::string& origin,
                         bool values, const gguf_read_options& options = {}) {
  try {
    cursor c{bytes, 0, {}};
    auto bad = [&] { return fail(origin, c.err); };
    std::uint32_t magic = 0, version = 0;
    if (!c.u32(magic, "the magic")) return bad();
    if (magic != gguf_magic) return fail(origin, "not a GGUF file (its first 4 bytes are not \"GGUF\")");
    if (!c.u32(version, "the version")) return bad();
    if (version == 1)
      return fail(origin, "version 1 (32-bit counts, before August 2023) is not read: versions 2 and 3 are");
    if (version != 2 && version != 3) return fail(origin, "version ", num(version), " is not 2 or 3");
    std::uint64_t n_tensors = 0, n_kv = 0;
    if (!c.u64(n_tensors, "the tensor count") || !c.u64(n_kv, "the key-value count")) return bad();
    // The least bytes of a key-value pair: key length, type, one byte; of a tensor info: name
    // length, n_dims, one extent, type, offset.
    if (n_kv > c.left() / 13)
      return fail(origin, "the key-value count ", num(n_kv), " is more than the file's ", num(c.left()),
                  " bytes left can hold");
    if (n_tensors > c.left() / 32)
      return fail(origin, "the tensor count ", num(n_tensors), " is more than the file's ", num(c.left()),
                  " bytes left can hold");

    std::map<std::string, kv, std::less<>> keys;
    for (std::uint64_t k = 0; k < n_kv; ++k) {
      std::string key;
      const std::string what = detail::cat({"key ", num(k)});
      if (!c.str(key, what, max_key)) return bad();
      std::uint32_t t;
      if (!c.u32(t, detail::cat({"the type of key '", key, "'"}))) return bad();
      kv v;
      if (!read_value(c, t, v, detail::cat({"key '", key, "'"}), 0)) return bad();
      if (!keys.emplace(key, std::move(v)).second) return fail(origin, "key '", key, "' given twice");
    }

    std::vector<tinfo> infos;
    infos.reserve(static_cast<std::size_t>(n_tensors));
    std::map<std::string, std::size_t, std::less<>> by_name;
    for (std::uint64_t k = 0; k < n_tensors; ++k) {
      tinfo t;
      if (!c.str(t.name, detail::cat({"the name of tensor ", num(k)}), 64)) return bad();
      const std::string what = detail::cat({"tensor '", t.name, "'"});
      std::uint32_t n_dims;
      if (!c.u32(n_dims, what)) return bad();
      if (n_dims == 0 || n_dims > 4) return fail(origin, what, ": n_dims ", num(n_dims), " (1 to 4)");
      t.ne.resize(n_dims);
      t.elements = 1;
      for (std::uint32_t d = 0; d < n_dims; ++d) {
        if (!c.u64(t.ne[d], what)) return bad();
        const auto e = mul(t.elements, t.ne[d]);
        if (t.ne[d] == 0 || !e || *e > (std::uint64_t{1} << 48))
          return fail(origin, what, ": extent ", num(d), " is ", num(t.ne[d]),
                      t.ne[d] == 0 ? "" : " (the element count passes 2^48)");
        t.elements = *e;
      }
      if (!c.u32(t.type, what) || !c.u64(t.offset, what)) return bad();
      if (t.type == 0) {
        t.bytes = t.elements * 4;
      } else if (t.type == 1) {
        t.bytes = t.elements * 2;
      } else if (t.type == 8) {
        if (t.ne[0] % 32 != 0)
          return fail(origin, what, ": Q8_0 with a first extent of ", num(t.ne[0]), ", not a multiple of 32");
        t.bytes = t.elements / 32 * 34;
      } else {
        return fail(origin, what, ": tensor type ", ggml_type_name(t.type),
                    " is not read (F32, F16 and Q8_0 are)");
      }
      if (!by_name.emplace(t.name, infos.size()).second) return fail(origin, what, " given twice");
      infos.push_back(std::move(t));
    }

    // The alignment, the data.
    std::uint64_t alignment = gguf_default_alignment;
    if (auto it = keys.find("general.alignment"); it != keys.end()) {
      const kv& v = it->second;
      const auto al = v.size();
      if (!al || *al < 8 || *al > 65536 || !std::has_single_bit(*al))
        return fail(origin, "general.alignment: expected a power of two from 8 to 65536, found ",
                    v.integer() ? v.text() : std::string("a ") + value_type_name(v.type));
      alignment = *al;
    }
    const std::uint64_t data = (c.pos + alignment - 1) / alignment * alignment;  // c.pos <= size < 2^63
    if (data > file_size)
      return fail(origin, "truncated: the data starts at byte ", num(data), ", the file has ", num(file_size));
    const std::uint64_t data_bytes = file_size - data;
    std::vector<std::size_t> order(infos.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    for (const tinfo& t : infos) {
      if (t.offset % alignment != 0)
        return fail(origin, "tensor '", t.name, "': offset ", num(t.offset), " is not a multiple of the alignment ",
                    num(alignment));
      const auto end = add(t.offset, t.bytes);
      if (!end || *end > data_bytes)
        return fail(origin, "truncated: tensor '", t.name, "' (", ggml_type_name(t.type), " ", ne_text(t.ne),
                    ", ", num(t.bytes), " bytes at offset ", num(t.offset), ") ends past the data's ", num(data_bytes),
                    " bytes");
    }
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return infos[x].offset < infos[y].offset; });
    for (std::size_t k = 1; k < order.size(); ++k) {
      const tinfo &p = infos[order[k - 1]], &q = infos[order[k]];
      if (p.offset + p.bytes > q.offset)
        return fail(origin, "tensors '", p.name, "' and '", q.name, "' overlap (bytes ", num(p.offset), " + ",
                    num(p.bytes), " and ", num(q.offset), ")");
    }

    // The model.
    auto key_text = [&](std::string_view k) -> const kv* {
      auto it = keys.find(k);
      return it == keys.end() ? nullptr : &it->second;
    };
    const kv* archk = key_text("general.architecture");
    if (!archk) return fail(origin, "no general.architecture");
    if (archk->type != STRING) return fail(origin, "general.architecture is a ", value_type_name(archk->type), ", not a string");
    if (archk->s != "llama")
      return fail(origin, "architecture ", detail::shown(archk->s), " is not read (llama is)");
    std::string e;
    auto size_key = [&](std::string_view k, std::uint64_t dflt, std::uint64_t max) -> std::uint64_t {
      const kv* v = key_text(k);
      if (!v) {
        if (dflt == 0 && e.empty()) e = detail::cat({"no ", k});
        return dflt;
      }
      if (!v->integer()) {
        if (e.empty()) e = detail::cat({k, " is a ", value_type_name(v->type), ", not an integer"});
        return 0;
      }
      const auto x = v->size();
      if (!x || *x == 0 || *x > max) {
        if (e.empty()) e = detail::cat({k, " is ", v->text(), ": expected 1 to ", num(max)});
        return 0;
      }
      return *x;
    };
    auto float_key = [&](std::string_view k, double dflt, bool required) -> double {
      const kv* v = key_text(k);
      if (!v) {
        if (required && e.empty()) e = detail::cat({"no ", k});
        return dflt;
      }
      if (v->type != F32 && v->type != F64) {
        if (e.empty()) e = detail::cat({k, " is a ", value_type_name(v->type), ", not a float"});
        return dflt;
      }
      if (!std::isfinite(v->f) || v->f <= 0) {
        if (e.empty()) e = detail::cat({k, " is ", detail::format_double(v->f), ": expected a positive number"});
        return dflt;
      }
      return v->f;
    };
    constexpr std::uint64_t i31 = std::numeric_limits<std::int32_t>::max();
    const std::uint64_t D = size_key("llama.embedding_length", 0, i31), F = size_key("llama.feed_forward_length", 0, i31),
                        L = size_key("llama.block_count", 0, 1u << 16), H = size_key("llama.attention.head_count", 0, i31),
                        T = size_key("llama.context_length", 0, gguf_max_context);
    const std::uint64_t KVH = size_key("llama.attention.head_count_kv", H ? H : 1, i31);
    const double eps = float_key("llama.attention.layer_norm_rms_epsilon", 1e-5, true);
    const double base = float_key("llama.rope.freq_base", 1e4, false);
    if (!e.empty()) return fail(origin, e);
    if (D % H != 0) return fail(origin, "llama.attention.head_count ", num(H), " does not divide llama.embedding_length ", num(D));
    if (H % KVH != 0)
      return fail(origin, "llama.attention.head_count_kv ", num(KVH), " does not divide llama.attention.head_count ", num(H));
    if ((D / H) % 2 != 0) return fail(origin, "the head size ", num(D / H), " is odd (RoPE rotates pairs)");
    if (const kv* r = key_text("llama.rope.dimension_count")) {
      if (r->size() != std::optional<std::uint64_t>(D / H))
        return fail(origin, "llama.rope.dimension_count is not the head size ", num(D / H),
                    " (RoPE on part of a head is not staticformer's)");
    }
    if (const kv* r = key_text("llama.rope.scaling.type"); r && !(r->type == STRING && r->s == "none"))
      return fail(origin, "llama.rope.scaling.type ", r->type == STRING ? detail::shown(r->s) : std::string("(not a string)"),
                  ": scaled RoPE is not staticformer's");
    if (const kv* r = key_text("llama.expert_count"); r && r->size() != std::optional<std::uint64_t>(0))
      return fail(origin, "llama.expert_count: a mixture of experts is not staticformer's");

    gguf_model m;
    m.version = version;
    m.alignment = alignment;
    if (const kv* n = key_text("general.name"); n && n->type == STRING) m.name = n->s;

    // The tokenizer.
    if (const kv* tm = key_text("tokenizer.ggml.model")) {
      if (tm->type != STRING) return fail(origin, "tokenizer.ggml.model is not a string");
      m.tokenizer_model = tm->s;
    }
    if (const kv* tk = key_text("tokenizer.ggml.tokens")) {
      if (tk->type != ARRAY || tk->elem != STRING) return fail(origin, "tokenizer.ggml.tokens is not an array of strings");
      if (tk->count == 0 || tk->count > i31) return fail(origin, "tokenizer.ggml.tokens holds ", num(tk->count), " tokens");
      cursor r{bytes, tk->at, {}};
      m.tokens.resize(static_cast<std::size_t>(tk->count));
      for (std::string& s : m.tokens)
        if (!r.str(s, "a token", max_string)) return fail(origin, "tokenizer.ggml.tokens: ", r.err);  // (read once already)
    }
    auto f32_array = [&](std::string_view k, std::uint32_t want, std::uint64_t& count) -> const kv* {
      const kv* v = key_text(k);
      if (!v) return nullptr;
      if (v->type != ARRAY || v->elem != want) {
        e = detail::cat({k, " is not an array of ", value_type_name(want)});
        return nullptr;
      }
      if (v->count != m.tokens.size()) {
        e = detail::cat({k, " holds ", num(v->count), " values for ", num(m.tokens.size()), " tokens"});
        return nullptr;
      }
      count = v->count;
      return v;
    };
    std::uint64_t n = 0;
    if (const kv* sc = f32_array("tokenizer.ggml.scores", F32, n)) {
      cursor r{bytes, sc->at, {}};
      m.scores.resize(static_cast<std::size_t>(n));
      for (std::size_t k = 0; k < n; ++k) {
        const std::uint32_t raw = static_cast<std::uint32_t>(r.uint(4));
        std::memcpy(&m.scores[k], &raw, 4);
        if (!std::isfinite(m.scores[k]))
          return fail(origin, "tokenizer.ggml.scores[", num(k), "] is not finite");
      }
    }
    if (!e.empty()) return fail(origin, e);
    if (const kv* ty = f32_array("tokenizer.ggml.token_type", I32, n)) {
      cursor r{bytes, ty->at, {}};
      m.token_types.resize(static_cast<std::size_t>(n));
      for (std::size_t k = 0; k < n; ++k) m.token_types[k] = static_cast<std::int32_t>(r.uint(4));
    }
    if (!e.empty()) return fail(origin, e);
    for (auto [k, id] : {std::pair<std::string_view, std::int64_t*>{"tokenizer.ggml.bos_token_id", &m.bos_id},
                         {"tokenizer.ggml.eos_token_id", &m.eos_id}}) {
      const kv* v = key_text(k);
      if (!v) continue;
      const auto x = v->size();
      if (!x || *x > std::numeric_limits<std::int32_t>::max() || (!m.tokens.empty() && *x >= m.tokens.size()))
        return fail(origin, k, " is ", v->text(), ": not a token id (0 to ", num(m.tokens.size()), ")");
      *id = static_cast<std::int64_t>(*x);
    }

    // The architecture: V from the tokens or the embedding's extent.
    auto emb = by_name.find("token_embd.weight");
    if (emb == by_name.end()) return fail(origin, "missing tensor 'token_embd.weight'");
    const tinfo& et = infos[emb->second];
    if (et.ne.size() != 2) return fail(origin, "tensor 'token_embd.weight' has ", num(et.ne.size()), " dimensions, not 2");
    const std::uint64_t V = m.tokens.empty() ? et.ne[1] : m.tokens.size();
    if (V > i31) return fail(origin, "a vocabulary of ", num(V), " tokens");
    if (const kv* v = key_text("llama.vocab_size"); v && v->size() != std::optional<std::uint64_t>(V))
      return fail(origin, "llama.vocab_size is not the vocabulary's ", num(V), " tokens");
    sf::arch& a = m.arch;
    a.V = V, a.T = T, a.D = D, a.H = H, a.L = L, a.F = F;
    a.kv_heads = KVH == H ? 0 : KVH;
    a.ffn = sf::ffn_kind::gated;
    a.norm = sf::norm_kind::rmsnorm;
    a.position = sf::position_kind::rope;
    a.activation = sf::activation_kind::silu;
    a.tied = by_name.find("output.weight") == by_name.end();
    a.bias = false;
    a.norm_eps = eps;
    a.rope_base = base;
    a.rope_pairs = sf::rope_pairs_kind::adjacent;

    // The tensors: exactly the architecture's, each of its extents. The names first, in time linear
    // in the file's tensors (not in block_count, which the file's tensors do not bound yet).
    static constexpr std::string_view per_block[] = {"attn_norm.weight", "attn_q.weight",   "attn_k.weight",
                                                     "attn_v.weight",    "attn_output.weight", "ffn_norm.weight",
                                                     "ffn_gate.weight",  "ffn_down.weight", "ffn_up.weight"};
    for (const tinfo& t : infos) {
      std::string_view n = t.name;
      bool known = n == "token_embd.weight" || n == "output_norm.weight" || n == "output.weight";
      if (!known && n.starts_with("blk.")) {
        n.remove_prefix(4);
        std::uint64_t l = 0;
        const auto r = std::from_chars(n.data(), n.data() + n.size(), l);
        const std::string_view rest(r.ptr, static_cast<std::size_t>(n.data() + n.size() - r.ptr));
        known = r.ec == std::errc() && r.ptr != n.data() && (n[0] != '0' || r.ptr == n.data() + 1) && l < L &&
                rest.starts_with('.') && std::find(std::begin(per_block), std::end(per_block), rest.substr(1)) != std::end(per_block);
      }
      if (!known) return fail(origin, "unexpected tensor '", t.name, "' for a llama model of ", num(L), " blocks");
    }
    // Every name known and given once: as many as the architecture's, or one is missing (found
    // within the first infos.size() + 1 names looked up).
    if (infos.size() != 2 + 9 * L + (a.tied ? 0 : 1)) {
      if (by_name.find("output_norm.weight") == by_name.end()) return fail(origin, "missing tensor 'output_norm.weight'");
      for (std::uint64_t l = 0; l < L; ++l)
        for (std::string_view p : per_block) {
          const std::string n = detail::cat({"blk.", num(l), ".", p});
          if (by_name.find(n) == by_name.end()) return fail(origin, "missing tensor '", n, "'");
        }
    }
    const std::vector<gslot> slots = llama_slots(a);
    for (const gslot& s : slots) {
      auto it = by_name.find(s.theirs);
      if (it == by_name.end()) return fail(origin, "missing tensor '", s.theirs, "'");
      const tinfo& t = infos[it->second];
      if (t.ne != s.ne)
        return fail(origin, "tensor '", t.name, "': expected extents ", ne_text(s.ne), ", found ", ne_text(t.ne));
    }
    if (!values) return m;  // (the header alone)
    for (const gslot& s : slots) {
      const tinfo& t = infos[by_name.find(s.theirs)->second];
      const std::byte* p = bytes.data() + data + t.offset;
      const std::size_t n = static_cast<std::size_t>(t.elements);
      const std::size_t cols = static_cast<std::size_t>(t.ne[0]), rows = n / cols;  // ggml [rows = ne1, cols = ne0]
      gguf_tensor x{s.ours, s.shape, {}};
      gguf_q8 q;
      bool finite_scales = true;
      if (t.type == 8) {  // the blocks' values and scales (34 bytes a block: an F16 scale, 32 int8)
        q = {s.ours, rows, cols, std::vector<std::int8_t>(n), std::vector<float>(n / 32)};
        for (std::size_t b = 0; b < n / 32; ++b) {
          const std::byte* blk = p + b * 34;
          q.scales[b] = detail::f16_to_float(static_cast<std::uint16_t>(std::to_integer<std::uint8_t>(blk[0]) |
                                                                        std::to_integer<std::uint8_t>(blk[1]) << 8));
          finite_scales = finite_scales && std::isfinite(q.scales[b]);
          std::memcpy(q.q.data() + b * 32, blk + 2, 32);
        }
      }
      // A Q8_0 tensor's values are not finite exactly where its scale is not (|q| <= 128, and a
      // float16 scale times 128 is finite): without them (options.dequantize false), a tensor whose
      // scales are all finite needs none; the others are dequantized for fill's message.
      const bool values_wanted = t.type != 8 || options.dequantize || !finite_scales;
      if (values_wanted) detail::resize_huge(x.values, n);  // (huge pages: a page fault per 2 MiB, not per 4 KiB)
      // x[c, r] = file[r, c] when transposed (ours), else the same order
      auto fill = [&](auto value) {
        return detail::fill_rows(x.values.data(), rows, cols, s.transpose, s.shape, value);
      };
      auto f32 = [p](std::size_t i) {
        std::uint32_t r = 0;
        for (int k = 0; k < 4; ++k) r |= static_cast<std::uint32_t>(std::to_integer<std::uint8_t>(p[4 * i + k])) << (8 * k);
        float v;
        std::memcpy(&v, &r, 4);
        return v;
      };
      auto f16 = [p](std::size_t i) {
        return detail::f16_to_float(static_cast<std::uint16_t>(std::to_integer<std::uint8_t>(p[2 * i]) |
                                                               std::to_integer<std::uint8_t>(p[2 * i + 1]) << 8));
      };
      const std::int8_t* const qv = q.q.data();
      const float* const sv = q.scales.data();
      auto q8 = [qv, sv](std::size_t i) { return static_cast<float>(qv[i]) * sv[i / 32]; };
      if (const std::string e = !values_wanted ? std::string() : t.type == 0 ? fill(f32) : t.type == 1 ? fill(f16) : fill(q8);
          !e.empty())
        return fail(origin, "tensor '", t.name, "': ", e);
      m.tensors.push_back(std::move(x));
      if (t.type == 8) m.quantized.push_back(std::move(q));
      if (t.type == 1) m.half.push_back(s.ours);
    }
    return m;
  } catch (const std::bad_alloc&) {
    return fail(origin, "out of memory for a file of ", num(file_size), " bytes");
  }
}
}  // namespace

result<gguf_model> parse_gguf(std::span<const std::byte> bytes, const std::string& origin,
                              const gguf_read_options& options) {
  return parse(bytes, bytes.size(), origin, true, options);
}

result<gguf_model> parse_gguf_header(std::span<const std::byte> bytes, std::uint64_t file_size, const std::string& origin) {
  if (file_size < bytes.size()) return fail(origin, "the file's first ", num(bytes.size()), " bytes are more than its ", num(file_size));
  return parse(bytes, file_size, origin, false);
}

namespace {
// The file at `path` as read_gguf reads it: its first `prefix` bytes (all when prefix >= its size),
// parsed (parse), with the values when `values` (then prefix is the largest file's size).
result<gguf_model> read(const std::string& path, std::uint64_t prefix, bool values, const gguf_read_options& options = {}) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return detail::fail({"cannot open '", path, "': ", std::strerror(errno)});
  struct closer {
    std::FILE* f;
    ~closer() { std::fclose(f); }
  } c{f};
  struct stat st {};
  if (::fstat(::fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) return fail(path, "not a regular file");
  const std::uint64_t size = static_cast<std::uint64_t>(st.st_size);
  if (size > gguf_max_file_bytes)
    return fail(path, "the file has ", num(size), " bytes, more than ", num(gguf_max_file_bytes), " (gguf_max_file_bytes)");
  const std::uint64_t n = std::min(size, prefix);
  std::vector<std::byte> bytes;
  try {
    detail::resize_huge(bytes, static_cast<std::size_t>(n));  // (huge pages: a page fault per 2 MiB, not per 4 KiB)
  } catch (const std::bad_alloc&) {
    return fail(path, "out of memory for the file's ", num(size), " bytes");
  }
  if (std::fread(bytes.data(), 1, bytes.size(), f) != bytes.size())
    return fail(path, "the file was shorter than its size when read (", std::strerror(errno), ")");
  return values ? parse_gguf(bytes, path, options) : parse_gguf_header(bytes, size, path);
}
}  // namespace

result<gguf_model> read_gguf(const std::string& path, const gguf_read_options& options) {
  return read(path, gguf_max_file_bytes, true, options);
}

result<gguf_model> read_gguf_header(const std::string& path, std::uint64_t prefix) {
  result<gguf_model> m = read(path, prefix, false);
  if (m) return m;
  return read(path, gguf_max_file_bytes, false);  // a longer header, or a bad one: the whole file's verdict
}

// ----------------------------------------------------------------------------- the tokenizer

result<tokenizer_bin> gguf_tokenizer(const gguf_model& m) {
  if (m.tokens.empty()) return detail::fail({"GGUF: the file holds no tokenizer (tokenizer.ggml.tokens)"});
  if (m.tokenizer_model != "llama")
    return detail::fail({"GGUF: tokenizer.ggml.model ", detail::shown(m.tokenizer_model),
                         " is not read (llama: sentencepiece's BPE, llama2.c's tokenizer.bin)"});
  if (m.scores.size() != m.tokens.size())
    return detail::fail({"GGUF: tokenizer.ggml.scores holds ", num(m.scores.size()), " scores for ",
                         num(m.tokens.size()), " tokens"});
  if ((m.bos_id != -1 && m.bos_id != sf::bpe_tokenizer::bos()) || (m.eos_id != -1 && m.eos_id != sf::bpe_tokenizer::eos()))
    return detail::fail({"GGUF: the bos/eos ids are ", num(m.bos_id), "/", num(m.eos_id), "; llama2.c's tokenizer's are ",
                         num(sf::bpe_tokenizer::bos()), "/", num(sf::bpe_tokenizer::eos())});
  try {
    return tokenizer_bin::from_sentencepiece(m.tokens, m.scores);
  } catch (const std::bad_alloc&) {
    return detail::fail({"GGUF: out of memory for the tokenizer"});
  }
}

void gguf_set_tokenizer(gguf_model& m, const tokenizer_bin& t) {
  m.tokenizer_model = "llama";
  tokenizer_bin::sentencepiece_vocab v = t.to_sentencepiece();
  m.tokens = std::move(v.pieces);
  m.scores = std::move(v.scores);
  m.token_types = std::move(v.types);
  m.bos_id = sf::bpe_tokenizer::bos();
  m.eos_id = sf::bpe_tokenizer::eos();
}

result<gguf_model> gguf_from_checkpoint(const file& f) {
  const std::string& origin = f.origin();
  result<sf::arch> a = read_config(f);
  if (!a) return detail::fail({"'", origin, "': ", a.message()});
  gguf_model m;
  m.arch = *a;
  if (a->ffn != sf::ffn_kind::gated || a->norm != sf::norm_kind::rmsnorm || a->position != sf::position_kind::rope ||
      a->activation != sf::activation_kind::silu || a->bias)
    return detail::fail({"'", origin, "': GGUF's llama is gated silu, rmsnorm, rope, without bias; this is ", describe(*a)});
  result<std::vector<gguf_tensor>> tensors = read_checkpoint_tensors(f, m.arch);
  if (!tensors) return tensors.status();
  m.tensors = std::move(*tensors);
  // GGUF's llama rotates adjacent pairs: a checkpoint of halves (from Hugging Face) is permuted
  if (sf::status s = convert_rope_pairs(m.arch, m.tensors, sf::rope_pairs_kind::adjacent); !s)
    return detail::fail({"'", origin, "': ", s.message()});
  try {
    if (has_tokenizer(f.metadata())) {
      result<any_tokenizer> tok = read_tokenizer(f.metadata(), m.arch.V);
      if (!tok) return detail::fail({"'", origin, "': ", tok.message()});
      if (const tokenizer_bin* b = tok->bpe()) gguf_set_tokenizer(m, *b);
    }
  } catch (const std::bad_alloc&) {
    return detail::fail({"'", origin, "': out of memory"});
  }
  return m;
}

// ----------------------------------------------------------------------------- checkpoints

result<std::vector<std::byte>> gguf_checkpoint_bytes(const gguf_model& m, const metadata_map& extra) {
  return model_checkpoint_bytes(m.arch, m.tensors, extra);
}

result<std::vector<std::byte>> gguf_int8_checkpoint_bytes(const gguf_model& m, const metadata_map& extra) {
  result<std::vector<std::byte>> b = q8_checkpoint_bytes(m.arch, m.tensors, m.quantized, 32, extra);
  if (!b) return detail::fail({"GGUF: ", b.message()});
  return b;
}

// ----------------------------------------------------------------------------- writing

namespace {

struct out_bytes {
  std::vector<std::byte> b;
  void uint(std::uint64_t v, int n) {
    for (int k = 0; k < n; ++k) b.push_back(static_cast<std::byte>((v >> (8 * k)) & 0xff));
  }
  void str(std::string_view s) {
    uint(s.size(), 8);
    for (char ch : s) b.push_back(static_cast<std::byte>(ch));
  }
  void f32(float f) {
    std::uint32_t r;
    std::memcpy(&r, &f, 4);
    uint(r, 4);
  }
  void key(std::string_view k, std::uint32_t type) {
    str(k);
    uint(type, 4);
  }
};

}  // namespace

result<std::vector<std::byte>> serialize_gguf(const gguf_model& m, const gguf_write_options& o) {
  if (o.type != gguf_type::F32 && o.type != gguf_type::F16 && o.type != gguf_type::Q8_0)
    return detail::fail({"GGUF: writes F32, F16 or Q8_0 tensors, not ", ggml_type_name(static_cast<std::uint32_t>(o.type))});
  const sf::arch& a = m.arch;
  if (a.ffn != sf::ffn_kind::gated || a.norm != sf::norm_kind::rmsnorm || a.position != sf::position_kind::rope ||
      a.activation != sf::activation_kind::silu || a.bias || a.rope_pairs != sf::rope_pairs_kind::adjacent)
    return detail::fail({"GGUF: a llama model is gated silu, rmsnorm, rope on adjacent pairs, without bias; this one is ",
                         describe(a)});
  if (a.V == 0 || a.D == 0 || a.H == 0 || a.F == 0 || a.L == 0 || a.T == 0 || a.D % a.H != 0 || a.H % a.kv() != 0)
    return detail::fail({"GGUF: sizes that do not fit: ", describe(a)});
  if (!m.tokens.empty() && m.tokens.size() != a.V)
    return detail::fail({"GGUF: ", num(m.tokens.size()), " tokens for a vocabulary of ", num(a.V)});
  const std::vector<gslot> slots = llama_slots(a);
  // A tensor's own Q8_0 blocks, when it has them (read from a Q8_0 file): written as they are.
  auto own_blocks = [&m](const gslot& s) -> const gguf_q8* {
    const gguf_q8* given = m.find_q8(s.ours);
    std::size_t n = 1;
    for (std::size_t d : s.shape) n *= d;
    const std::size_t cols = s.ne[0], rows = n / cols;
    return given && given->rows == rows && given->cols == cols && given->q.size() == n && given->scales.size() == n / 32
               ? given
               : nullptr;
  };
  // Which tensors are written as Q8_0 blocks (the matrices whose rows are whole blocks), and as F16
  // (the matrices: the norms stay F32, as llama.cpp's converter writes them).
  auto as_q8 = [&o](const gslot& s) { return o.type == gguf_type::Q8_0 && s.ne.size() == 2 && s.ne[0] % 32 == 0; };
  auto as_f16 = [&o](const gslot& s) { return o.type == gguf_type::F16 && s.ne.size() == 2; };
  for (const gslot& s : slots) {
    const gguf_tensor* t = m.find(s.ours);
    const bool new_blocks = as_q8(s) && !own_blocks(s);
    std::size_t n = 1;
    for (std::size_t d : s.shape) n *= d;
    if (!t || t->shape != s.shape || t->values.size() != n)
      return detail::fail({"GGUF: missing tensor '", s.ours, "' of shape ", to_string(s.shape)});
    for (std::size_t i = 0; i < n; ++i) {
      if (!std::isfinite(t->values[i]))
        return detail::fail({"GGUF: tensor '", s.ours, "': element ", detail::index_string(s.shape, i), " is not finite"});
      if (as_f16(s) && std::fabs(t->values[i]) >= 65520.0f)  // (rounds to inf)
        return detail::fail({"GGUF: tensor '", s.ours, "': element ", detail::index_string(s.shape, i), " = ",
                             detail::format_double(t->values[i]), " is beyond float16's range (65504): write F32"});
      // Q8_0's scale is the block's largest |value| / 127, a float16 (gguf-py's): one that rounds
      // to infinity would write a block no reader takes.
      if (new_blocks && std::fabs(t->values[i]) / 127.0f >= 65520.0f)
        return detail::fail({"GGUF: tensor '", s.ours, "': element ", detail::index_string(s.shape, i), " = ",
                             detail::format_double(t->values[i]),
                             " makes a Q8_0 scale (|value| / 127) beyond float16's range (65504): write F32"});
    }
  }
  try {
    out_bytes w;
    w.uint(gguf_magic, 4);
    w.uint(3, 4);
    w.uint(slots.size(), 8);
    const bool tok = !m.tokens.empty();
    const bool tok_scores = tok && m.scores.size() == m.tokens.size();
    const bool tok_types = tok && m.token_types.size() == m.tokens.size();
    const std::uint64_t n_kv = 11 + (m.name.empty() ? 0 : 1) +
                               (tok ? 2 + tok_scores + tok_types + (m.bos_id >= 0) + (m.eos_id >= 0) : 0);
    w.uint(n_kv, 8);
    w.key("general.architecture", STRING), w.str("llama");
    if (!m.name.empty()) w.key("general.name", STRING), w.str(m.name);
    w.key("general.alignment", U32), w.uint(gguf_default_alignment, 4);
    const std::pair<const char*, std::size_t> sizes[] = {
        {"llama.context_length", a.T},       {"llama.embedding_length", a.D}, {"llama.feed_forward_length", a.F},
        {"llama.block_count", a.L},          {"llama.attention.head_count", a.H},
        {"llama.attention.head_count_kv", a.kv()}, {"llama.rope.dimension_count", a.dk()}};
    for (const auto& [k, v] : sizes) w.key(k, U32), w.uint(v, 4);
    // float32 when the reader gives the same double back (its shortest decimal form), else float64.
    for (const auto& [k, x] : {std::pair<const char*, double>{"llama.attention.layer_norm_rms_epsilon", a.norm_eps},
                               {"llama.rope.freq_base", a.rope_base}}) {
      if (float_key_value(static_cast<float>(x)) == x) {
        w.key(k, F32), w.f32(static_cast<float>(x));
      } else {
        std::uint64_t r;
        std::memcpy(&r, &x, 8);
        w.key(k, F64), w.uint(r, 8);
      }
    }
    if (tok) {
      w.key("tokenizer.ggml.model", STRING), w.str(m.tokenizer_model.empty() ? "llama" : m.tokenizer_model);
      w.key("tokenizer.ggml.tokens", ARRAY), w.uint(STRING, 4), w.uint(m.tokens.size(), 8);
      for (const std::string& t : m.tokens) w.str(t);
      if (tok_scores) {
        w.key("tokenizer.ggml.scores", ARRAY), w.uint(F32, 4), w.uint(m.scores.size(), 8);
        for (float s : m.scores) w.f32(s);
      }
      if (tok_types) {
        w.key("tokenizer.ggml.token_type", ARRAY), w.uint(I32, 4), w.uint(m.token_types.size(), 8);
        for (std::int32_t t : m.token_types) w.uint(static_cast<std::uint32_t>(t), 4);
      }
      if (m.bos_id >= 0) w.key("tokenizer.ggml.bos_token_id", U32), w.uint(static_cast<std::uint64_t>(m.bos_id), 4);
      if (m.eos_id >= 0) w.key("tokenizer.ggml.eos_token_id", U32), w.uint(static_cast<std::uint64_t>(m.eos_id), 4);
    }
    // The tensor infos, then the data: each tensor's bytes, padded to the alignment.
    std::vector<std::vector<std::byte>> datas;
    std::uint64_t offset = 0;
    for (const gslot& s : slots) {
      const gguf_tensor& t = *m.find(s.ours);
      const std::size_t n = t.values.size(), cols = s.ne[0], rows = n / cols;
      const bool q8 = as_q8(s), f16 = as_f16(s);
      out_bytes d;
      std::vector<float> flat(n);  // ggml's order: file[r, c] = ours[c, r] when transposed
      for (std::size_t i = 0; i < n; ++i) flat[i] = s.transpose ? t.values[(i % cols) * rows + i / cols] : t.values[i];
      if (f16) {
        for (float v : flat) d.uint(detail::float_to_f16(v), 2);
      } else if (!q8) {
        for (float v : flat) d.f32(v);
      } else if (const gguf_q8* given = own_blocks(s)) {
        for (std::size_t g = 0; g < n / 32; ++g) {
          d.uint(detail::float_to_f16(given->scales[g]), 2);
          for (std::size_t k = 0; k < 32; ++k) d.uint(static_cast<std::uint8_t>(given->q[g * 32 + k]), 1);
        }
      } else {
        for (std::size_t g = 0; g < n / 32; ++g) {
          float amax = 0;
          for (std::size_t k = 0; k < 32; ++k) amax = std::max(amax, std::fabs(flat[g * 32 + k]));
          const float dd = amax / 127.0f, id = dd != 0.0f ? 1.0f / dd : 0.0f;
          d.uint(detail::float_to_f16(dd), 2);
          for (std::size_t k = 0; k < 32; ++k)
            d.uint(static_cast<std::uint8_t>(static_cast<std::int8_t>(std::round(flat[g * 32 + k] * id))), 1);
        }
      }
      w.str(s.theirs);
      w.uint(s.ne.size(), 4);
      for (std::uint64_t e : s.ne) w.uint(e, 8);
      w.uint(q8 ? 8 : f16 ? 1 : 0, 4);
      w.uint(offset, 8);
      offset += (d.b.size() + gguf_default_alignment - 1) / gguf_default_alignment * gguf_default_alignment;
      datas.push_back(std::move(d.b));
    }
    w.b.resize((w.b.size() + gguf_default_alignment - 1) / gguf_default_alignment * gguf_default_alignment, std::byte{0});
    for (const auto& d : datas) {
      w.b.insert(w.b.end(), d.begin(), d.end());
      w.b.resize((w.b.size() + gguf_default_alignment - 1) / gguf_default_alignment * gguf_default_alignment, std::byte{0});
    }
    return std::move(w.b);
  } catch (const std::bad_alloc&) {
    return detail::fail({"GGUF: out of memory writing ", describe(a)});
  }
}

sf::status write_gguf(const std::string& path, const gguf_model& m, const gguf_write_options& o) {
  result<std::vector<std::byte>> bytes = serialize_gguf(m, o);
  if (!bytes) return bytes.status();
  return detail::write_file_atomically(path, *bytes);
}

}  // namespace sf::io
