// staticformer/io/llama2c.hpp: llama2.c's model files (versions 0, 1, 2), every size checked
// before use, and written back as llama2.c's export.py writes them.
#include "staticformer/io/llama2c.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <sys/stat.h>

#include "staticformer/io/config_codec.hpp"
#include "staticformer/io/quantized.hpp"

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

namespace sf::io {
namespace {

using detail::num;

// ----------------------------------------------------------------------------- checked sizes

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

// ----------------------------------------------------------------------------- the header

struct header {
  std::int64_t dim = 0, hidden_dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, vocab_size = 0, seq_len = 0;
  bool shared = true;
  std::int64_t group_size = 0;  // version 2
};

sf::arch arch_of_header(const header& h) {
  sf::arch a;
  a.V = static_cast<std::size_t>(h.vocab_size);
  a.T = static_cast<std::size_t>(h.seq_len);
  a.D = static_cast<std::size_t>(h.dim);
  a.H = static_cast<std::size_t>(h.n_heads);
  a.kv_heads = h.n_kv_heads == h.n_heads ? 0 : static_cast<std::size_t>(h.n_kv_heads);
  a.L = static_cast<std::size_t>(h.n_layers);
  a.F = static_cast<std::size_t>(h.hidden_dim);
  a.ffn = sf::ffn_kind::gated;
  a.norm = sf::norm_kind::rmsnorm;
  a.position = sf::position_kind::rope;
  a.activation = sf::activation_kind::silu;
  a.tied = h.shared;
  a.bias = false;
  a.norm_eps = 1e-5;
  a.rope_base = 1e4;
  return a;
}

// The sizes' rules, shared by the reader (on the header's fields) and the writer (on an sf::arch).
std::string check_sizes(std::int64_t dim, std::int64_t hidden, std::int64_t layers, std::int64_t heads,
                        std::int64_t kv, std::int64_t vocab, std::int64_t seq) {
  const std::pair<const char*, std::int64_t> fields[] = {{"dim", dim},           {"hidden_dim", hidden},
                                                          {"n_layers", layers},  {"n_heads", heads},
                                                          {"n_kv_heads", kv},    {"vocab_size", vocab},
                                                          {"seq_len", seq}};
  for (const auto& [name, v] : fields)
    if (v <= 0 || v > std::numeric_limits<std::int32_t>::max())
      return detail::cat({name, " is ", num(v), ": expected a positive int32"});
  if (dim % heads != 0) return detail::cat({"n_heads ", num(heads), " does not divide dim ", num(dim)});
  if (heads % kv != 0) return detail::cat({"n_kv_heads ", num(kv), " does not divide n_heads ", num(heads)});
  if ((dim / heads) % 2 != 0)
    return detail::cat({"the head size dim / n_heads = ", num(dim / heads), " is odd (RoPE rotates pairs)"});
  if (static_cast<std::uint64_t>(seq) > llama2c_max_seq_len)
    return detail::cat({"seq_len ", num(seq), " is above ", num(llama2c_max_seq_len), " (llama2c_max_seq_len)"});
  return {};
}

// ----------------------------------------------------------------------------- the layout

// A run of `count` tensors of one kind (one per layer, or one), stored [rows, cols] (llama2.c's
// [out, in]); ours is the transpose when `transpose`.
enum class kind { f32, q8, rope_cos, rope_sin };
struct run {
  const char* pattern;  // staticformer's name; "{l}" is the layer
  const char* theirs;   // llama2.c's (model.py) name, for messages
  std::uint64_t count, rows, cols;
  kind k;
  bool transpose;
};

std::string name_of(const char* pattern, std::uint64_t l) {
  std::string s(pattern);
  const std::size_t at = s.find("{l}");
  if (at != std::string::npos) s.replace(at, 3, std::to_string(l));
  return s;
}

std::vector<run> layout(const header& h, int version) {
  const std::uint64_t D = static_cast<std::uint64_t>(h.dim), F = static_cast<std::uint64_t>(h.hidden_dim),
                      L = static_cast<std::uint64_t>(h.n_layers), V = static_cast<std::uint64_t>(h.vocab_size),
                      T = static_cast<std::uint64_t>(h.seq_len);
  const std::uint64_t dk = D / static_cast<std::uint64_t>(h.n_heads);
  const std::uint64_t KV = dk * static_cast<std::uint64_t>(h.n_kv_heads);
  const kind m = version == 2 ? kind::q8 : kind::f32;
  const run tok{"tok_emb.weight", "tok_embeddings", 1, V, D, m, false};
  const run n1{"blocks.{l}.norm1.weight", "layers[{l}].attention_norm", L, 1, D, kind::f32, false};
  const run n2{"blocks.{l}.norm2.weight", "layers[{l}].ffn_norm", L, 1, D, kind::f32, false};
  const run nf{"norm_f.weight", "norm", 1, 1, D, kind::f32, false};
  const run mats[] = {{"blocks.{l}.attn.wq", "layers[{l}].attention.wq", L, D, D, m, true},
                      {"blocks.{l}.attn.wk", "layers[{l}].attention.wk", L, KV, D, m, true},
                      {"blocks.{l}.attn.wv", "layers[{l}].attention.wv", L, KV, D, m, true},
                      {"blocks.{l}.attn.wo", "layers[{l}].attention.wo", L, D, D, m, true}};
  const run ffn[] = {{"blocks.{l}.ffn.w1", "layers[{l}].feed_forward.w1", L, F, D, m, true},
                     {"blocks.{l}.ffn.w2", "layers[{l}].feed_forward.w2", L, D, F, m, true},
                     {"blocks.{l}.ffn.w3", "layers[{l}].feed_forward.w3", L, F, D, m, true}};
  const run cls{"lm_head.weight", "output", 1, V, D, m, true};
  std::vector<run> r;
  if (version == 0) {
    r = {tok, n1, mats[0], mats[1], mats[2], mats[3], n2, ffn[0], ffn[1], ffn[2], nf};
    r.push_back({"rope_cos", "freqs_cos", 1, T, dk / 2, kind::rope_cos, false});
    r.push_back({"rope_sin", "freqs_sin", 1, T, dk / 2, kind::rope_sin, false});
  } else {
    r = {n1, n2, nf, tok, mats[0], mats[1], mats[2], mats[3], ffn[0], ffn[1], ffn[2]};
  }
  if (!h.shared) r.push_back(cls);
  return r;
}

// Bytes of one tensor of a run (nullopt: beyond 64 bits).
std::optional<std::uint64_t> tensor_bytes(const run& r, std::uint64_t group_size) {
  const auto n = mul(r.rows, r.cols);
  if (!n) return std::nullopt;
  if (r.k != kind::q8) return mul(*n, 4);
  const auto s = mul(*n / group_size, 4);
  return s ? add(*n, *s) : std::nullopt;
}

// Empty when the runs from `start` fill exactly `size` bytes; else which tensor does not fit.
std::string check_file_size(const std::vector<run>& runs, std::uint64_t group_size, std::uint64_t start,
                            std::uint64_t size) {
  std::uint64_t off = start;
  for (const run& r : runs) {
    const auto b = tensor_bytes(r, group_size);
    const auto total = b ? mul(*b, r.count) : std::nullopt;
    const auto end = total ? add(off, *total) : std::nullopt;
    if (!end || *end > size) {
      // The first tensor of the run that ends beyond the file (b > 0: every size is positive).
      const std::uint64_t k = b ? (size - off) / *b : 0;
      const std::uint64_t begin = off + (b ? k * *b : 0);
      const std::string range = b ? detail::cat({"[", num(begin), ", ", num(begin + *b), ")"})
                                  : detail::cat({"from ", num(begin), " on (more than 2^64)"});
      return detail::cat({"truncated: tensor ", name_of(r.pattern, k), " (llama2.c ", name_of(r.theirs, k),
                          ") needs bytes ", range, ", the file has ", num(size)});
    }
    off = *end;
  }
  if (off < size) {
    const run& last = runs.back();
    return detail::cat({"oversized: ", num(size - off), " bytes after the last tensor ",
                        name_of(last.pattern, last.count - 1), " (the header implies ", num(off), " bytes)"});
  }
  return {};
}

// ----------------------------------------------------------------------------- reading

std::int32_t get_i32(std::span<const std::byte> b, std::size_t at) {
  std::uint32_t v = 0;
  for (int k = 0; k < 4; ++k) v |= static_cast<std::uint32_t>(b[at + k]) << (8 * k);
  std::int32_t s;
  std::memcpy(&s, &v, 4);
  return s;
}
float get_f32(const std::byte* p) {
  std::uint32_t v = 0;
  for (int k = 0; k < 4; ++k) v |= static_cast<std::uint32_t>(p[k]) << (8 * k);
  float f;
  std::memcpy(&f, &v, 4);
  return f;
}

std::string index_text(const shape_t& shape, std::size_t i) { return detail::index_string(shape, i); }

// Parses the header; empty on success.
std::string parse_header(std::span<const std::byte> b, header& h, int& version) {
  if (b.size() >= 4 && static_cast<std::uint32_t>(get_i32(b, 0)) == llama2c_magic) {
    if (b.size() < 8) return detail::cat({"truncated header: ", num(b.size()), " bytes"});
    version = get_i32(b, 4);
    if (version != 1 && version != 2) {
      const std::int32_t v = version;
      version = -1;
      return detail::cat({"version ", num(v), " is not one of llama2.c's (1 or 2 after the magic)"});
    }
    if (b.size() < llama2c_header_bytes)
      return detail::cat({"truncated header: ", num(b.size()), " bytes of version ", num(version), "'s 256"});
    h.dim = get_i32(b, 8), h.hidden_dim = get_i32(b, 12), h.n_layers = get_i32(b, 16);
    h.n_heads = get_i32(b, 20), h.n_kv_heads = get_i32(b, 24), h.vocab_size = get_i32(b, 28), h.seq_len = get_i32(b, 32);
    const auto flag = static_cast<unsigned>(b[36]);
    if (flag > 1) return detail::cat({"shared_classifier flag is ", num(flag), ": expected 0 or 1"});
    h.shared = flag == 1;
    std::size_t pad = 37;
    if (version == 2) {
      h.group_size = get_i32(b, 37);
      pad = 41;
      if (h.group_size <= 0) return detail::cat({"group_size is ", num(h.group_size), ": expected a positive int32"});
    }
    for (std::size_t i = pad; i < llama2c_header_bytes; ++i)
      if (b[i] != std::byte{0})
        return detail::cat({"header byte ", num(i), " is ", num(static_cast<unsigned>(b[i])),
                            ": the padding after the fields must be zero"});
  } else {
    version = 0;
    if (b.size() < llama2c_legacy_header_bytes)
      return detail::cat({"truncated header: ", num(b.size()), " bytes of version 0's 28 (7 int32)"});
    h.dim = get_i32(b, 0), h.hidden_dim = get_i32(b, 4), h.n_layers = get_i32(b, 8);
    h.n_heads = get_i32(b, 12), h.n_kv_heads = get_i32(b, 16), h.vocab_size = get_i32(b, 20), h.seq_len = get_i32(b, 24);
    h.shared = h.vocab_size > 0;  // run.c: a negative vocab_size is a classifier of its own
    if (h.vocab_size < 0) h.vocab_size = -h.vocab_size;  // (int64: INT32_MIN too)
  }
  if (std::string e = check_sizes(h.dim, h.hidden_dim, h.n_layers, h.n_heads, h.n_kv_heads, h.vocab_size, h.seq_len);
      !e.empty())
    return version == 0 ? e + " (no magic 0x616b3432: read as version 0)" : e;
  if (version == 2 && (h.dim % h.group_size != 0 || h.hidden_dim % h.group_size != 0))
    return detail::cat({"group_size ", num(h.group_size), " does not divide dim ", num(h.dim), " and hidden_dim ",
                        num(h.hidden_dim), " (runq.c's groups)"});
  return {};
}

template <class... P>
sf::status fail(const std::string& origin, int version, const P&... parts) {
  std::string v = version < 0 ? std::string("llama2.c") : "llama2.c v" + std::to_string(version);
  return detail::fail({"'", origin, "': ", v, ": ", parts...});
}

}  // namespace

const llama2c_tensor* llama2c_model::find(std::string_view name) const { return find_named(tensors, name); }
const llama2c_q8* llama2c_model::find_q8(std::string_view name) const { return find_named(quantized, name); }

sf::status llama2c_check_arch(const sf::arch& a) {
  auto bad = [](std::string_view what, std::string_view found) {
    return detail::fail({"llama2.c holds only ", what, " models (this one: ", found, ")"});
  };
  if (a.ffn != sf::ffn_kind::gated) return bad("gated feed-forward (SwiGLU)", sf::to_string(a.ffn));
  if (a.activation != sf::activation_kind::silu) return bad("silu", sf::to_string(a.activation));
  if (a.norm != sf::norm_kind::rmsnorm) return bad("rmsnorm", sf::to_string(a.norm));
  if (a.position != sf::position_kind::rope) return bad("rope", sf::to_string(a.position));
  if (a.bias) return bad("bias-free", "bias = true");
  if (a.norm_eps != 1e-5) return bad("norm_eps 1e-5", detail::format_double(a.norm_eps));
  if (a.rope_base != 1e4) return bad("rope_base 10000", detail::format_double(a.rope_base));
  if (a.rope_pairs != sf::rope_pairs_kind::adjacent) return bad("rope_pairs adjacent", sf::to_string(a.rope_pairs));
  auto i = [](std::size_t v) {
    return v > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()) ? std::int64_t{-1}
                                                                                   : static_cast<std::int64_t>(v);
  };
  if (a.H == 0) return detail::fail({"llama2.c: n_heads is 0: expected a positive int32"});
  if (std::string e = check_sizes(i(a.D), i(a.F), i(a.L), i(a.H), i(a.kv()), i(a.V), i(a.T)); !e.empty())
    return detail::fail({"llama2.c: ", e});
  return sf::status::ok();
}

std::vector<std::pair<std::string, shape_t>> llama2c_tensor_shapes(const sf::arch& a) {
  const std::size_t D = a.D, F = a.F, KV = a.dk() * a.kv();
  std::vector<std::pair<std::string, shape_t>> out;
  out.push_back({"tok_emb.weight", {a.V, D}});
  for (std::size_t l = 0; l < a.L; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".";
    out.push_back({b + "norm1.weight", {D}});
    out.push_back({b + "attn.wq", {D, D}});
    out.push_back({b + "attn.wk", {D, KV}});
    out.push_back({b + "attn.wv", {D, KV}});
    out.push_back({b + "attn.wo", {D, D}});
    out.push_back({b + "norm2.weight", {D}});
    out.push_back({b + "ffn.w1", {D, F}});
    out.push_back({b + "ffn.w2", {F, D}});
    out.push_back({b + "ffn.w3", {D, F}});
  }
  out.push_back({"norm_f.weight", {D}});
  if (!a.tied) out.push_back({"lm_head.weight", {D, a.V}});
  return out;
}

result<llama2c_model> parse_llama2c(std::span<const std::byte> b, const std::string& origin,
                                    const llama2c_read_options& options) {
  header h;
  int version = -1;
  if (std::string e = parse_header(b, h, version); !e.empty()) return fail(origin, version, e);
  const std::vector<run> runs = layout(h, version);
  const std::uint64_t gs = static_cast<std::uint64_t>(h.group_size);
  const std::size_t start = version == 0 ? llama2c_legacy_header_bytes : llama2c_header_bytes;
  if (std::string e = check_file_size(runs, gs, start, b.size()); !e.empty()) return fail(origin, version, e);

  try {
    llama2c_model m;
    m.arch = arch_of_header(h);
    m.version = version;
    m.group_size = version == 2 ? static_cast<std::size_t>(gs) : 0;
    // Our tensors, in docs/model.md's order, sized now (the file holds them all: checked above).
    // (A version-2 file's matrices are sized only when dequantized: every tensor of more than one
    // axis is Q8_0 there.)
    const bool values_of_matrices = version != 2 || options.dequantize;
    std::map<std::string, std::size_t> index;
    for (auto& [name, shape] : llama2c_tensor_shapes(m.arch)) {
      index[name] = m.tensors.size();
      std::size_t n = 1;
      for (std::size_t d : shape) n *= d;
      m.tensors.push_back({name, shape, {}});
      if (shape.size() == 1 || values_of_matrices)
        detail::resize_huge(m.tensors.back().values, n);  // (huge pages: a page fault per 2 MiB, not per 4 KiB)
    }
    std::size_t off = start;
    for (const run& r : runs) {
      const std::size_t rows = r.rows, cols = r.cols, n = rows * cols;
      for (std::uint64_t l = 0; l < r.count; ++l) {
        const std::string name = name_of(r.pattern, l);
        const std::byte* p = b.data() + off;
        if (r.k == kind::rope_cos || r.k == kind::rope_sin) {
          std::vector<float>& t = r.k == kind::rope_cos ? m.rope_cos : m.rope_sin;
          t.resize(n);
          for (std::size_t i = 0; i < n; ++i) t[i] = get_f32(p + 4 * i);
          off += 4 * n;
          continue;
        }
        llama2c_tensor& t = m.tensors[index.at(name)];
        // t[c, r] = file[r, c] when transposed (ours [in, out]), else the same order
        auto fill = [&](auto value) -> std::string {
          std::string e = detail::fill_rows(t.values.data(), rows, cols, r.transpose, t.shape, value);
          return e.empty() ? e : "tensor " + name + ": " + e;
        };
        if (r.k == kind::f32) {
          if (std::string e = fill([p](std::size_t i) { return get_f32(p + 4 * i); }); !e.empty())
            return fail(origin, version, e);
          off += 4 * n;
        } else {
          llama2c_q8 q{name, rows, cols, std::vector<std::int8_t>(n), std::vector<float>(n / gs)};
          std::memcpy(q.q.data(), p, n);
          for (std::size_t g = 0; g < q.scales.size(); ++g) {
            const float s = get_f32(p + n + 4 * g);
            if (!std::isfinite(s) || s < 0 || !std::isfinite(127.0f * s))
              return fail(origin, version, "tensor ", name, ": the scale of group ", num(g), " is ",
                          std::isnan(s) ? "nan" : detail::format_double(s), " (expected finite, >= 0)");
            q.scales[g] = s;
          }
          for (std::size_t i = 0; i < n; ++i)
            if (q.q[i] == -128)
              return fail(origin, version, "tensor ", name, ": int8 value -128 at ", num(i),
                          " (Q8_0's range is [-127, 127])");
          const std::int8_t* const qv = q.q.data();
          const float* const sv = q.scales.data();
          if (std::string e = values_of_matrices
                                  ? fill([qv, sv, gs](std::size_t i) { return static_cast<float>(qv[i]) * sv[i / gs]; })
                                  : std::string();
              !e.empty())
            return fail(origin, version, e);
          off += n + 4 * (n / gs);
          m.quantized.push_back(std::move(q));
        }
      }
    }
    return m;
  } catch (const std::bad_alloc&) {
    return fail(origin, version, "out of memory for ", num(b.size()), " bytes of tensors");
  }
}

namespace {
// A llama2.c file open, its header read and checked, and its size checked against the one the
// header implies (open_checked): what read_llama2c does before it reads the rest, and all that
// read_llama2c_header does.
struct opened {
  std::FILE* f = nullptr;
  std::vector<std::byte> bytes;  // the header's
  header h;
  int version = -1;
  std::uint64_t size = 0;  // the file's
  opened() = default;
  opened(const opened&) = delete;
  opened& operator=(const opened&) = delete;
  ~opened() {
    if (f) std::fclose(f);
  }
};

sf::status open_checked(const std::string& path, opened& o) {
  o.f = std::fopen(path.c_str(), "rb");
  if (!o.f) return detail::fail({"cannot open '", path, "': ", std::strerror(errno)});
  struct stat st {};
  if (::fstat(::fileno(o.f), &st) != 0 || !S_ISREG(st.st_mode))
    return detail::fail({"'", path, "': llama2.c: not a regular file"});
  o.size = static_cast<std::uint64_t>(st.st_size);
  if (o.size > llama2c_max_file_bytes)
    return detail::fail({"'", path, "': llama2.c: the file has ", num(o.size), " bytes, more than ",
                         num(llama2c_max_file_bytes), " (llama2c_max_file_bytes)"});
  // The header first: the size it implies is checked against the file's before the rest is read.
  o.bytes.resize(std::min<std::uint64_t>(o.size, llama2c_header_bytes));
  if (std::fread(o.bytes.data(), 1, o.bytes.size(), o.f) != o.bytes.size())
    return detail::fail({"cannot read '", path, "': ", std::strerror(errno)});
  if (std::string e = parse_header(o.bytes, o.h, o.version); !e.empty()) return fail(path, o.version, e);
  const std::size_t start = o.version == 0 ? llama2c_legacy_header_bytes : llama2c_header_bytes;
  if (std::string e = check_file_size(layout(o.h, o.version), static_cast<std::uint64_t>(o.h.group_size), start, o.size);
      !e.empty())
    return fail(path, o.version, e);
  return sf::status::ok();
}
}  // namespace

result<llama2c_model> read_llama2c_header(const std::string& path) {
  opened o;
  if (sf::status s = open_checked(path, o); !s) return s;
  llama2c_model m;
  m.arch = arch_of_header(o.h);
  m.version = o.version;
  m.group_size = o.version == 2 ? static_cast<std::size_t>(o.h.group_size) : 0;
  return m;
}

result<llama2c_model> read_llama2c(const std::string& path, const llama2c_read_options& options) {
  opened o;
  if (sf::status s = open_checked(path, o); !s) return s;
  try {
    detail::resize_huge(o.bytes, o.size);  // (huge pages: a page fault per 2 MiB, not per 4 KiB)
  } catch (const std::bad_alloc&) {
    return fail(path, o.version, "out of memory for the file's ", num(o.size), " bytes");
  }
  const std::size_t have = std::min<std::uint64_t>(o.size, llama2c_header_bytes);
  if (std::fread(o.bytes.data() + have, 1, o.size - have, o.f) != o.size - have)
    return fail(path, o.version, "the file was shorter than its size when read (", std::strerror(errno), ")");
  return parse_llama2c(o.bytes, path, options);
}

// ----------------------------------------------------------------------------- writing

namespace {

void put_i32(std::vector<std::byte>& out, std::int32_t v) {
  std::uint32_t u;
  std::memcpy(&u, &v, 4);
  for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::byte>((u >> (8 * k)) & 0xff));
}
void put_f32(std::vector<std::byte>& out, float f) {
  std::int32_t v;
  std::memcpy(&v, &f, 4);
  put_i32(out, v);
}

// model.py's precompute_freqs_cis: the frequencies and angles in float32 as PyTorch computes them
// (bit for bit), their cosines and sines correctly rounded (PyTorch's vectorized float32 cos and
// sin are within 1 ulp of those: about one value in twenty differs by 1 ulp).
void rope_tables(std::size_t T, std::size_t dk, std::vector<float>& cos_t, std::vector<float>& sin_t) {
  const std::size_t half = dk / 2;
  cos_t.resize(T * half);
  sin_t.resize(T * half);
  for (std::size_t i = 0; i < half; ++i) {
    const float e = static_cast<float>(2 * i) / static_cast<float>(dk);
    const float freq = 1.0f / std::pow(10000.0f, e);
    for (std::size_t t = 0; t < T; ++t) {
      const float a = static_cast<float>(t) * freq;
      cos_t[t * half + i] = static_cast<float>(std::cos(static_cast<double>(a)));
      sin_t[t * half + i] = static_cast<float>(std::sin(static_cast<double>(a)));
    }
  }
}

// export.py's quantize_q80 of one [rows, cols] matrix (flat), groups of gs.
void quantize(const std::vector<float>& w, std::size_t gs, std::vector<std::int8_t>& q, std::vector<float>& s) {
  q.resize(w.size());
  s.resize(w.size() / gs);
  for (std::size_t g = 0; g < s.size(); ++g) {
    float wmax = 0.0f;
    for (std::size_t i = g * gs; i < (g + 1) * gs; ++i) wmax = std::max(wmax, std::fabs(w[i]));
    const float scale = wmax / 127.0f;
    s[g] = scale;
    for (std::size_t i = g * gs; i < (g + 1) * gs; ++i)
      q[i] = scale == 0.0f ? std::int8_t{0} : static_cast<std::int8_t>(std::nearbyint(w[i] / scale));
  }
}

}  // namespace

result<std::vector<std::byte>> serialize_llama2c(const llama2c_model& m, const llama2c_write_options& o) {
  const int version = o.version;
  if (version < 0 || version > 2)
    return detail::fail({"llama2.c: cannot write version ", num(version), " (0, 1 or 2)"});
  if (sf::status s = llama2c_check_arch(m.arch); !s) return s;
  const sf::arch& a = m.arch;
  header h;
  h.dim = static_cast<std::int64_t>(a.D), h.hidden_dim = static_cast<std::int64_t>(a.F);
  h.n_layers = static_cast<std::int64_t>(a.L), h.n_heads = static_cast<std::int64_t>(a.H);
  h.n_kv_heads = static_cast<std::int64_t>(a.kv()), h.vocab_size = static_cast<std::int64_t>(a.V);
  h.seq_len = static_cast<std::int64_t>(a.T), h.shared = a.tied;
  if (version == 2) {
    const std::size_t gs = o.group_size;
    if (gs == 0 || gs > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()) || a.D % gs != 0 ||
        a.F % gs != 0)
      return detail::fail({"llama2.c v2: group_size ", num(gs), " does not divide dim ", num(a.D), " and hidden_dim ",
                           num(a.F)});
    h.group_size = static_cast<std::int64_t>(gs);
  }
  // The tensors: exactly the architecture's, each of its shape, every value finite.
  const auto shapes = llama2c_tensor_shapes(a);
  std::map<std::string_view, const llama2c_tensor*> by_name;
  for (const llama2c_tensor& t : m.tensors) {
    if (!by_name.emplace(t.name, &t).second) return detail::fail({"llama2.c: tensor '", t.name, "' given twice"});
  }
  for (const auto& [name, shape] : shapes) {
    auto it = by_name.find(name);
    if (it == by_name.end()) return detail::fail({"llama2.c: missing tensor '", name, "'"});
    const llama2c_tensor& t = *it->second;
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    if (t.shape != shape || t.values.size() != n)
      return detail::fail({"llama2.c: tensor '", name, "': expected shape ", to_string(shape), ", found ",
                           to_string(t.shape), " with ", num(t.values.size()), " values"});
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isfinite(t.values[i]))
        return detail::fail({"llama2.c: tensor '", name, "': element ", index_text(shape, i), " is not finite"});
  }
  if (by_name.size() != shapes.size()) {
    for (const llama2c_tensor& t : m.tensors) {
      bool known = false;
      for (const auto& s : shapes) known = known || s.first == t.name;
      if (!known) return detail::fail({"llama2.c: unexpected tensor '", t.name, "' for ", describe(a)});
    }
  }
  // The groups given, when they are of this group size and all there.
  const bool raw = version == 2 && m.group_size == o.group_size && [&] {
    for (const run& r : layout(h, 2))
      for (std::uint64_t l = 0; l < r.count; ++l) {
        if (r.k != kind::q8) continue;
        const llama2c_q8* q = m.find_q8(name_of(r.pattern, l));
        if (!q || q->rows != r.rows || q->cols != r.cols || q->q.size() != r.rows * r.cols ||
            q->scales.size() != q->q.size() / o.group_size)
          return false;
      }
    return true;
  }();

  try {
    std::vector<std::byte> out;
    const std::vector<run> runs = layout(h, version);
    const std::size_t start = version == 0 ? llama2c_legacy_header_bytes : llama2c_header_bytes;
    std::optional<std::uint64_t> total = start;
    for (const run& r : runs) {
      const auto b = tensor_bytes(r, static_cast<std::uint64_t>(h.group_size));
      const auto t = b ? mul(*b, r.count) : std::nullopt;
      total = t && total ? add(*total, *t) : std::nullopt;
    }
    if (!total || *total > std::numeric_limits<std::size_t>::max() / 2)
      return detail::fail({"llama2.c: a file of ", describe(a), " is too large to hold in memory"});
    out.reserve(*total);
    if (version > 0) {
      put_i32(out, static_cast<std::int32_t>(llama2c_magic));
      put_i32(out, version);
    }
    const std::int64_t fields[] = {h.dim, h.hidden_dim, h.n_layers, h.n_heads, h.n_kv_heads,
                                   version == 0 && !h.shared ? -h.vocab_size : h.vocab_size, h.seq_len};
    for (std::int64_t v : fields) put_i32(out, static_cast<std::int32_t>(v));
    if (version > 0) {
      out.push_back(std::byte{h.shared ? std::uint8_t{1} : std::uint8_t{0}});
      if (version == 2) put_i32(out, static_cast<std::int32_t>(h.group_size));
      out.resize(llama2c_header_bytes, std::byte{0});
    }
    std::vector<float> cos_t, sin_t, flat;
    if (version == 0) {
      const std::size_t want = a.T * (a.dk() / 2);
      if (m.rope_cos.size() == want && m.rope_sin.size() == want)
        cos_t = m.rope_cos, sin_t = m.rope_sin;
      else
        rope_tables(a.T, a.dk(), cos_t, sin_t);
    }
    std::vector<std::int8_t> q;
    std::vector<float> s;
    for (const run& r : runs) {
      const std::size_t rows = r.rows, cols = r.cols, n = rows * cols;
      for (std::uint64_t l = 0; l < r.count; ++l) {
        if (r.k == kind::rope_cos || r.k == kind::rope_sin) {
          for (float v : r.k == kind::rope_cos ? cos_t : sin_t) put_f32(out, v);
          continue;
        }
        const std::string name = name_of(r.pattern, l);
        const llama2c_tensor& t = *by_name.at(name);
        flat.resize(n);  // llama2.c's layout: file[r, c] = ours[c, r] when transposed
        for (std::size_t i = 0; i < n; ++i) flat[i] = r.transpose ? t.values[(i % cols) * rows + i / cols] : t.values[i];
        if (r.k == kind::f32) {
          for (float v : flat) put_f32(out, v);
          continue;
        }
        const llama2c_q8* given = raw ? m.find_q8(name) : nullptr;
        if (given) {
          q = given->q, s = given->scales;
        } else {
          quantize(flat, o.group_size, q, s);
        }
        for (std::int8_t v : q) out.push_back(static_cast<std::byte>(static_cast<std::uint8_t>(v)));
        for (float v : s) put_f32(out, v);
      }
    }
    return out;
  } catch (const std::bad_alloc&) {
    return detail::fail({"llama2.c: out of memory writing ", describe(a)});
  }
}

sf::status write_llama2c(const std::string& path, const llama2c_model& m, const llama2c_write_options& o) {
  result<std::vector<std::byte>> bytes = serialize_llama2c(m, o);
  if (!bytes) return bytes.status();
  return detail::write_file_atomically(path, *bytes);
}

sf::status write_llama2c(const std::string& path, const sf::arch& a, const std::vector<llama2c_tensor>& tensors,
                         int version, std::size_t group_size) {
  llama2c_model m;
  m.arch = a;
  m.tensors = tensors;
  return write_llama2c(path, m, {.version = version, .group_size = group_size});
}

// ----------------------------------------------------------------------------- checkpoints

sf::status convert_rope_pairs(sf::arch& a, std::vector<llama2c_tensor>& tensors, sf::rope_pairs_kind to) {
  if (a.rope_pairs == to) return sf::status::ok();
  const std::size_t dk = a.dk();
  // halves column j ← adjacent column from(j); the inverse permutation the other way
  auto from = [dk](std::size_t j) {
    const std::size_t head = j / dk, i = j % dk;
    return head * dk + (i < dk / 2 ? 2 * i : 2 * (i - dk / 2) + 1);
  };
  for (llama2c_tensor& t : tensors) {
    const bool q = t.name.size() > 8 && t.name.compare(t.name.size() - 8, 8, ".attn.wq") == 0;
    const bool k = t.name.size() > 8 && t.name.compare(t.name.size() - 8, 8, ".attn.wk") == 0;
    if (!q && !k) continue;
    if (t.shape.size() != 2 || t.shape[1] % dk != 0 || t.values.size() != t.shape[0] * t.shape[1])
      return detail::fail({"tensor '", t.name, "': shape ", to_string(t.shape), " is not [D, heads * d_k]"});
    const std::size_t rows = t.shape[0], cols = t.shape[1];
    std::vector<float> v(t.values.size());
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t j = 0; j < cols; ++j) {
        if (to == sf::rope_pairs_kind::halves) v[r * cols + j] = t.values[r * cols + from(j)];
        else v[r * cols + from(j)] = t.values[r * cols + j];
      }
    t.values = std::move(v);
  }
  a.rope_pairs = to;
  return sf::status::ok();
}

namespace {
// The writer of model_checkpoint_bytes and model_checkpoint_file: the tensors as views.
sf::status model_checkpoint_writer(writer& w, const sf::arch& a, const std::vector<llama2c_tensor>& tensors,
                                   const metadata_map& extra) {
  w.set_metadata(config_metadata(a));
  for (const auto& [k, v] : extra) {
    if (detail::is_config_key(k))
      return detail::fail({"metadata '", k, "' is the configuration's: it cannot be given as extra"});
    w.set_metadata(k, v);
  }
  const auto shapes = llama2c_tensor_shapes(a);
  if (tensors.size() != shapes.size())
    return detail::fail({"expected ", num(shapes.size()), " tensors for ", describe(a), ", found ", num(tensors.size())});
  for (const auto& [name, shape] : shapes) {
    const llama2c_tensor* t = nullptr;
    for (const llama2c_tensor& x : tensors)
      if (x.name == name) t = &x;
    if (!t) return detail::fail({"missing tensor '", name, "'"});
    if (t->shape != shape)
      return detail::fail({"tensor '", name, "': expected shape ", to_string(shape), ", found ", to_string(t->shape)});
    w.add_view(name, t->values, shape);  // (not copied: `tensors` outlives serialize and the view)
  }
  return w.check();
}
}  // namespace

result<std::vector<std::byte>> model_checkpoint_bytes(const sf::arch& a, const std::vector<llama2c_tensor>& tensors,
                                                      const metadata_map& extra) {
  writer w;
  if (sf::status s = model_checkpoint_writer(w, a, tensors, extra); !s) return s;
  return w.serialize();
}

result<file> model_checkpoint_file(const sf::arch& a, const std::vector<llama2c_tensor>& tensors,
                                   const metadata_map& extra, const std::string& origin) {
  writer w;
  if (sf::status s = model_checkpoint_writer(w, a, tensors, extra); !s) return s;
  return w.view(origin);
}

result<std::vector<std::byte>> llama2c_checkpoint_bytes(const llama2c_model& m, const metadata_map& extra) {
  if (sf::status s = llama2c_check_arch(m.arch); !s) return s;
  return model_checkpoint_bytes(m.arch, m.tensors, extra);
}

result<std::vector<std::byte>> q8_checkpoint_bytes(const sf::arch& a, const std::vector<llama2c_tensor>& tensors,
                                                   const std::vector<llama2c_q8>& quantized, std::size_t group_size,
                                                   const metadata_map& extra) {
  constexpr std::size_t G = 32;  // staticformer's group (kernels/q8.hpp)
  if (group_size == 0 || group_size % G != 0)
    return detail::fail({"Q8_0 groups of ", num(group_size), " are not a multiple of ", num(G),
                         " (staticformer's int8 groups): quantize the float weights instead"});
  writer w;
  if (sf::status s = detail::set_quantized_metadata(w, a, extra); !s) return s;
  try {
    for (const auto& [name, shape] : llama2c_tensor_shapes(a)) {
      if (shape.size() == 1) {  // a norm's weights: float
        const llama2c_tensor* t = nullptr;
        for (const llama2c_tensor& x : tensors)
          if (x.name == name) t = &x;
        if (!t || t->shape != shape) return detail::fail({"missing tensor '", name, "' of shape ", to_string(shape)});
        w.add_view(name, t->values, shape);  // (not copied: `tensors` outlives serialize)
        continue;
      }
      // A matrix: q is [out, in] = staticformer's (N, K) (a table (V, D): N = V, K = D).
      const llama2c_q8* q = nullptr;
      for (const llama2c_q8& x : quantized)
        if (x.name == name) q = &x;
      if (!q) return detail::fail({"matrix '", name, "' was not Q8_0 in the file: quantize the float weights instead"});
      const std::size_t N = q->rows, K = q->cols;
      if (N * K != shape[0] * shape[1] || q->q.size() != N * K || K % group_size != 0 ||
          q->scales.size() != N * K / group_size)
        return detail::fail({"matrix '", name, "' has no Q8_0 groups of ", num(group_size), " for shape ", to_string(shape)});
      for (std::size_t i = 0; i < q->q.size(); ++i)
        if (q->q[i] == -128)
          return detail::fail({"matrix '", name, "': int8 value -128 at ", num(i), " (the int8 checkpoint's range is [-127, 127])"});
      for (std::size_t g = 0; g < q->scales.size(); ++g)
        if (!(q->scales[g] >= 0) || !std::isfinite(127.0f * q->scales[g]))
          return detail::fail({"matrix '", name, "': the scale of group ", num(g), " is ", detail::format_double(q->scales[g]),
                               " (the int8 checkpoint's are >= 0)"});
      const std::size_t groups = (K + G - 1) / G;  // (K is a multiple of group_size, so of 32)
      std::vector<float> scales(N * groups);
      for (std::size_t n = 0; n < N; ++n)
        for (std::size_t g = 0; g < groups; ++g) scales[n * groups + g] = q->scales[(n * K + g * G) / group_size];
      w.add_view(name + ".q8", dtype::I8, {N, K}, q->q.data());  // (`quantized` outlives serialize)
      w.add(name + ".scale", dtype::F32, {N, groups}, scales.data());
    }
  } catch (const std::bad_alloc&) {
    return detail::fail({"out of memory"});
  }
  return w.serialize();
}

result<std::vector<std::byte>> llama2c_int8_checkpoint_bytes(const llama2c_model& m, const metadata_map& extra) {
  if (sf::status s = llama2c_check_arch(m.arch); !s) return s;
  if (m.quantized.empty() || m.group_size == 0)
    return detail::fail({"llama2.c: a version ", num(static_cast<std::size_t>(m.version)),
                         " file holds float weights, not Q8_0 groups (version 2)"});
  result<std::vector<std::byte>> b = q8_checkpoint_bytes(m.arch, m.tensors, m.quantized, m.group_size, extra);
  if (!b) return detail::fail({"llama2.c: ", b.message()});
  return b;
}

sf::status save_llama2c_as_checkpoint(const llama2c_model& m, const std::string& path, const metadata_map& extra) {
  result<std::vector<std::byte>> bytes = llama2c_checkpoint_bytes(m, extra);
  if (!bytes) return bytes.status();
  return detail::write_file_atomically(path, *bytes);
}

result<std::vector<llama2c_tensor>> read_checkpoint_tensors(const file& f, const sf::arch& a) {
  const std::string& origin = f.origin();
  const auto shapes = llama2c_tensor_shapes(a);
  if (f.tensors().size() != shapes.size())
    for (const tensor_info& t : f.tensors()) {
      bool known = false;
      for (const auto& s : shapes) known = known || s.first == t.name;
      if (!known) return detail::fail({"'", origin, "': unexpected tensor '", t.name, "' for ", describe(a)});
    }
  std::vector<llama2c_tensor> out;
  try {
    for (const auto& [name, shape] : shapes) {
      const tensor_info* t = f.find(name);
      if (!t) return detail::fail({"'", origin, "': missing tensor '", name, "'"});
      if (t->type != dtype::F32)
        return detail::fail({"'", origin, "': tensor '", name, "': expected dtype F32, found ", to_string(t->type)});
      if (t->shape != shape)
        return detail::fail({"'", origin, "': tensor '", name, "': expected shape ", to_string(shape), ", found ",
                             to_string(t->shape)});
      if (std::string e = detail::find_not_finite(f, *t); !e.empty())
        return detail::fail({"'", origin, "': tensor '", name, "': ", e});
      llama2c_tensor x{name, shape, std::vector<float>(t->elements())};
      detail::convert(t->type, f.data(*t), x.values.data(), x.values.size());
      out.push_back(std::move(x));
    }
  } catch (const std::bad_alloc&) {
    return detail::fail({"'", origin, "': out of memory"});
  }
  return out;
}

result<llama2c_model> llama2c_from_checkpoint(const file& f) {
  const std::string& origin = f.origin();
  // n_kv_heads is read here (grouped-query attention: the core's reader refuses kv < H for now).
  metadata_map meta = f.metadata();
  std::size_t kv = 0;
  if (auto it = meta.find("n_kv_heads"); it != meta.end()) {
    if (sf::status s = parse_integer(it->second, kv, std::size_t{1}, std::size_t{1} << 31); !s)
      return detail::fail({"'", origin, "': metadata 'n_kv_heads': ", s.message()});
    meta.erase(it);
  }
  result<sf::arch> a = config_from_metadata(meta);
  if (!a) return detail::fail({"'", origin, "': ", a.message()});
  llama2c_model m;
  m.arch = *a;
  if (kv != 0) m.arch.kv_heads = kv == m.arch.H ? 0 : kv;
  const sf::rope_pairs_kind pairs = m.arch.rope_pairs;  // (halves: permuted to adjacent once read)
  m.arch.rope_pairs = sf::rope_pairs_kind::adjacent;
  if (sf::status s = llama2c_check_arch(m.arch); !s) return detail::fail({"'", origin, "': ", s.message()});
  m.arch.rope_pairs = pairs;
  result<std::vector<llama2c_tensor>> t = read_checkpoint_tensors(f, m.arch);
  if (!t) return t.status();
  m.tensors = std::move(*t);
  if (sf::status s = convert_rope_pairs(m.arch, m.tensors, sf::rope_pairs_kind::adjacent); !s)
    return detail::fail({"'", origin, "': ", s.message()});
  return m;
}

result<llama2c_model> llama2c_from_checkpoint(const std::string& path) {
  result<file> f = file::open(path);
  if (!f) return f.status();
  return llama2c_from_checkpoint(*f);
}

}  // namespace sf::io
