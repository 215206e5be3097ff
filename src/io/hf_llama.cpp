// staticformer/io/hf_llama.hpp: Hugging Face Llama directories and sentencepiece's tokenizer.model,
// every field, size and length checked before use.
#include "staticformer/io/hf_llama.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cctype>
#include <cstring>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "json_checked.hpp"
#include "staticformer/io/config_codec.hpp"

namespace sf::io {
namespace {

using detail::num;

// The pieces a Llama tokenizer has at ids 0, 1, 2 (sentencepiece's unk, bos, eos; llama2.c's too).
constexpr const char* llama_special[3] = {"<unk>", "<s>", "</s>"};

// The whole of a regular file of at most `limit` bytes; "" or the message.
std::string read_small_file(const std::string& path, std::uint64_t limit, std::vector<std::byte>& out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return detail::cat({"cannot open '", path, "': ", std::strerror(errno)});
  struct closer {
    std::FILE* f;
    ~closer() { std::fclose(f); }
  } c{f};
  struct stat st {};
  if (::fstat(::fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) return detail::cat({"'", path, "': not a regular file"});
  const std::uint64_t size = static_cast<std::uint64_t>(st.st_size);
  if (size > limit)
    return detail::cat({"'", path, "': ", num(size), " bytes, more than the limit of ", num(limit)});
  try {
    out.resize(size);
  } catch (const std::bad_alloc&) {
    return detail::cat({"'", path, "': out of memory for ", num(size), " bytes"});
  }
  if (std::fread(out.data(), 1, out.size(), f) != out.size())
    return detail::cat({"cannot read '", path, "': ", std::strerror(errno)});
  return {};
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A JSON text checked (detail::parse_checked_json: nesting, no key twice in one object) as an object;
// "" or the message (after "'origin': ").
std::string json_object(std::string_view text, nlohmann::json& out) {
  detail::checked_json p = detail::parse_checked_json(text, hf_max_json_depth);
  if (!p.invalid.empty()) return "not valid JSON: " + p.invalid;
  if (p.too_deep) return "the JSON nests deeper than " + std::to_string(hf_max_json_depth) + " levels";
  if (p.duplicate) return "'" + p.duplicate_key + "' is named twice in one object";
  if (!p.value.is_object()) return "not a JSON object";
  out = std::move(p.value);
  return {};
}

// A JSON value in a message: its text, cut when long.
std::string shown(const nlohmann::json& j) {
  std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > 80) s.resize(76), s += "...";
  return s;
}

std::string text_of(const std::vector<std::byte>& b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }

// ------------------------------------------------------------------ config.json

// A positive integer field (required unless `fallback` > 0, the value when absent or null).
std::string positive(const nlohmann::json& j, const char* key, std::size_t& out, std::size_t fallback = 0) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (fallback == 0) return detail::cat({"no field '", key, "'"});
    out = fallback;
    return {};
  }
  if (!it->is_number_integer() || it->get<std::int64_t>() <= 0 ||
      it->get<std::int64_t>() > std::numeric_limits<std::int32_t>::max())
    return detail::cat({"'", key, "' is ", it->dump(), ": expected a positive integer (an int32)"});
  out = static_cast<std::size_t>(it->get<std::int64_t>());
  return {};
}
// A positive finite number field, `fallback` when absent or null.
std::string positive_number(const nlohmann::json& j, const char* key, double& out, double fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    out = fallback;
    return {};
  }
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() <= 0)
    return detail::cat({"'", key, "' is ", it->dump(), ": expected a positive number"});
  out = it->get<double>();
  return {};
}

// Hugging Face's name of a LLaMA-family tensor (staticformer's name: llama2c_tensor_shapes), and
// whether theirs is the transpose ([out, in]).
std::string hf_name(const std::string& ours, bool& transpose) {
  transpose = false;
  if (ours == "tok_emb.weight") return "model.embed_tokens.weight";
  if (ours == "norm_f.weight") return "model.norm.weight";
  if (ours == "lm_head.weight") return transpose = true, "lm_head.weight";
  const std::size_t dot = ours.find('.', 7);  // "blocks.N."
  const std::string layer = "model.layers." + ours.substr(7, dot - 7) + ".", rest = ours.substr(dot + 1);
  if (rest == "norm1.weight") return layer + "input_layernorm.weight";
  if (rest == "norm2.weight") return layer + "post_attention_layernorm.weight";
  transpose = true;
  if (rest == "attn.wq") return layer + "self_attn.q_proj.weight";
  if (rest == "attn.wk") return layer + "self_attn.k_proj.weight";
  if (rest == "attn.wv") return layer + "self_attn.v_proj.weight";
  if (rest == "attn.wo") return layer + "self_attn.o_proj.weight";
  if (rest == "ffn.w1") return layer + "mlp.gate_proj.weight";
  if (rest == "ffn.w3") return layer + "mlp.up_proj.weight";
  return layer + "mlp.down_proj.weight";  // ffn.w2
}

// Where one of our tensor names comes in transformers' state_dict of LlamaForCausalLM (its modules'
// order): the embedding; per layer q, k, v, o, gate, up, down, input_layernorm,
// post_attention_layernorm; the final norm; the head.
std::size_t hf_state_rank(const std::string& ours) {
  if (ours == "tok_emb.weight") return 0;
  if (ours == "norm_f.weight") return std::size_t(-2);
  if (ours == "lm_head.weight") return std::size_t(-1);
  const std::size_t dot = ours.find('.', 7);  // "blocks.N."
  std::size_t layer = 0;  // (our names, from llama2c_tensor_shapes: "blocks." digits ".")
  for (std::size_t i = 7; i < dot; ++i) layer = layer * 10 + static_cast<std::size_t>(ours[i] - '0');
  static constexpr const char* order[] = {"attn.wq", "attn.wk", "attn.wv", "attn.wo", "ffn.w1",
                                          "ffn.w3",  "ffn.w2",  "norm1.weight", "norm2.weight"};
  const std::string rest = ours.substr(dot + 1);
  std::size_t r = 0;
  while (r < std::size(order) && rest != order[r]) ++r;
  return 1 + layer * std::size(order) + r;
}

// transformers' name of shard k (1-based) of n: model-00001-of-00003.safetensors
std::string hf_shard_name(std::size_t k, std::size_t n) {
  char b[64];
  std::snprintf(b, sizeof b, "model-%05zu-of-%05zu.safetensors", k, n);
  return b;
}
}  // namespace

bool is_hf_shard_name(std::string_view name) {  // model-DDDDD-of-DDDDD.safetensors
  constexpr std::string_view form = "model-#####-of-#####.safetensors";
  if (name.size() != form.size()) return false;
  for (std::size_t i = 0; i < form.size(); ++i)
    if (form[i] == '#' ? !(name[i] >= '0' && name[i] <= '9') : name[i] != form[i]) return false;
  return true;
}

namespace {

// ------------------------------------------------------------------ sentencepiece's protobuf

// A reader of protobuf's wire format over bytes: every length checked against the end.
struct wire {
  const std::byte* p;
  const std::byte* end;
  bool varint(std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p == end) return false;
      const auto b = static_cast<std::uint8_t>(*p++);
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;  // more than 10 bytes
  }
  // The next field: its number, wire type, and (LEN) its bytes, (VARINT) its value, (I32) its bits.
  bool field(std::uint64_t& number, int& type, std::span<const std::byte>& bytes, std::uint64_t& value) {
    std::uint64_t key;
    if (!varint(key)) return false;
    number = key >> 3;
    type = static_cast<int>(key & 7);
    switch (type) {
      case 0: return varint(value);
      case 1:
        if (end - p < 8) return false;
        p += 8;
        return true;
      case 2: {
        std::uint64_t n;
        if (!varint(n) || n > static_cast<std::uint64_t>(end - p)) return false;
        bytes = {p, static_cast<std::size_t>(n)};
        p += n;
        return true;
      }
      case 5:
        if (end - p < 4) return false;
        value = 0;
        std::memcpy(&value, p, 4);  // (little-endian host: the float's bits)
        p += 4;
        return true;
      default: return false;  // groups (3, 4) and unknown types
    }
  }
};

}  // namespace

const llama2c_tensor* hf_llama_model::find(std::string_view name) const { return find_named(tensors, name); }

bool is_hf_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && is_file(path + "/config.json");
}

result<sf::arch> hf_llama_config(std::string_view text, const std::string& origin) {
  const nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const std::string& e) { return detail::fail({"'", origin, "': ", e}); };
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  if (auto it = j.find("model_type"); it != j.end() && *it != "llama")
    return bad("model_type is " + it->dump() + ": only Hugging Face's Llama (\"llama\") is read");
  if (auto it = j.find("hidden_act"); it != j.end() && *it != "silu")
    return bad("hidden_act is " + it->dump() + ": Llama's SwiGLU takes \"silu\"");
  for (const char* key : {"attention_bias", "mlp_bias"})
    if (auto it = j.find(key); it != j.end() && *it != false && !it->is_null())
      return bad(std::string(key) + " is " + it->dump() + ": biases are not read (Llama has none)");
  if (auto it = j.find("rope_scaling"); it != j.end() && !it->is_null())
    return bad("rope_scaling is " + it->dump() + ": scaled RoPE is refused (only plain RoPE is read)");
  sf::arch a;
  a.ffn = sf::ffn_kind::gated;
  a.norm = sf::norm_kind::rmsnorm;
  a.position = sf::position_kind::rope;
  a.activation = sf::activation_kind::silu;
  a.bias = false;
  a.rope_pairs = sf::rope_pairs_kind::halves;  // transformers' rotate_half
  std::size_t kv = 0;
  if (std::string e = positive(j, "hidden_size", a.D); !e.empty()) return bad(e);
  if (std::string e = positive(j, "intermediate_size", a.F); !e.empty()) return bad(e);
  if (std::string e = positive(j, "num_attention_heads", a.H); !e.empty()) return bad(e);
  if (std::string e = positive(j, "num_hidden_layers", a.L); !e.empty()) return bad(e);
  if (std::string e = positive(j, "vocab_size", a.V); !e.empty()) return bad(e);
  if (std::string e = positive(j, "max_position_embeddings", a.T); !e.empty()) return bad(e);
  if (std::string e = positive(j, "num_key_value_heads", kv, a.H); !e.empty()) return bad(e);
  if (std::string e = positive_number(j, "rms_norm_eps", a.norm_eps, 1e-6); !e.empty()) return bad(e);
  if (std::string e = positive_number(j, "rope_theta", a.rope_base, 1e4); !e.empty()) return bad(e);
  a.tied = false;  // LlamaConfig's default
  if (auto it = j.find("tie_word_embeddings"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return bad("tie_word_embeddings is " + it->dump() + ": expected true or false");
    a.tied = it->get<bool>();
  }
  if (a.D % a.H != 0) return bad("num_attention_heads " + std::to_string(a.H) + " does not divide hidden_size " + std::to_string(a.D));
  if (a.H % kv != 0)
    return bad("num_key_value_heads " + std::to_string(kv) + " does not divide num_attention_heads " + std::to_string(a.H));
  if (a.dk() % 2 != 0) return bad("the head size " + std::to_string(a.dk()) + " is odd (RoPE rotates pairs)");
  if (auto it = j.find("head_dim"); it != j.end() && !it->is_null() &&
                                    (!it->is_number_integer() || it->get<std::int64_t>() != static_cast<std::int64_t>(a.dk())))
    return bad("head_dim is " + it->dump() + ": only hidden_size / num_attention_heads = " + std::to_string(a.dk()) + " is read");
  a.kv_heads = kv == a.H ? 0 : kv;
  return a;
}

result<sf::arch> read_hf_llama_config(const std::string& dir) {
  std::vector<std::byte> bytes;
  const std::string config_path = dir + "/config.json";
  if (std::string e = read_small_file(config_path, hf_max_config_bytes, bytes); !e.empty()) return detail::fail({e});
  return hf_llama_config(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), config_path);
}

result<hf_weight_index> parse_hf_weight_index(std::string_view text, const std::string& origin) {
  auto bad = [&](const std::string& e) { return detail::fail({"'", origin, "': ", e}); };
  nlohmann::json j;
  try {
    if (std::string e = json_object(text, j); !e.empty()) return bad(e);
    hf_weight_index index;
    if (auto md = j.find("metadata"); md != j.end() && !md->is_null()) {
      if (!md->is_object()) return bad("metadata is " + shown(*md) + ": expected an object");
      if (auto t = md->find("total_size"); t != md->end() && !t->is_null()) {
        if (!t->is_number_unsigned()) return bad("metadata.total_size is " + shown(*t) + ": expected a non-negative integer");
        index.total_size = t->get<std::uint64_t>();
      }
    }
    const auto wm = j.find("weight_map");
    if (wm == j.end() || !wm->is_object() || wm->empty())
      return bad("no weight_map (an object: tensor name → shard file)");
    std::set<std::string> shards;
    for (auto it = wm->begin(); it != wm->end(); ++it) {
      if (!it->is_string()) return bad("weight_map: tensor '" + it.key() + "' is mapped to " + shown(*it) + ": expected a file name");
      const std::string& f = it->get_ref<const std::string&>();
      if (f.empty() || f == "." || f == ".." || f.find_first_of(std::string_view("/\\\0", 3)) != std::string::npos)
        return bad("weight_map: tensor '" + it.key() + "' is mapped to " + shown(*it) +
                   ": a shard must be a file name in the model's directory (no '/', '\\', \"..\")");
      index.weight_map.emplace_back(it.key(), f);
      shards.insert(f);
    }
    index.shards.assign(shards.begin(), shards.end());
    return index;
  } catch (const std::bad_alloc&) {
    return bad("out of memory");
  }
}

result<hf_llama_model> read_hf_llama(const std::string& dir) {
  const std::string config_path = dir + "/config.json";
  result<sf::arch> a = read_hf_llama_config(dir);
  if (!a) return a.status();
  hf_llama_model m;
  m.arch = *a;
  // The weights: model.safetensors, else the shards of model.safetensors.index.json (transformers'
  // from_pretrained takes model.safetensors first too).
  struct shard {
    std::string path;
    file f;
  };
  std::vector<shard> shards;
  struct located {
    const file* f;
    const tensor_info* t;
    const std::string* path;
  };
  std::map<std::string, located> where;  // every tensor of the files, by name
  const std::string single = dir + "/model.safetensors", index_path = dir + "/model.safetensors.index.json";
  try {
    if (is_file(single)) {
      result<file> f = file::open(single);
      if (!f) return f.status();
      shards.push_back({single, std::move(*f)});
      m.weights_file = "model.safetensors";
      for (const tensor_info& t : shards[0].f.tensors()) where.emplace(t.name, located{&shards[0].f, &t, &shards[0].path});
    } else if (is_file(index_path)) {
      std::vector<std::byte> bytes;
      if (std::string e = read_small_file(index_path, hf_max_index_bytes, bytes); !e.empty()) return detail::fail({e});
      result<hf_weight_index> index = parse_hf_weight_index(text_of(bytes), index_path);
      if (!index) return index.status();
      m.weights_file = "model.safetensors.index.json";
      shards.reserve(index->shards.size());  // (the pointers in `where` stay valid)
      for (const std::string& name : index->shards) {
        const std::string path = dir + "/" + name;
        if (!is_file(path))
          return detail::fail({"'", index_path, "': shard '", name, "' is not a file in '", dir, "'"});
        result<file> f = file::open(path);
        if (!f) return detail::fail({"'", index_path, "': shard '", name, "': ", f.message()});
        shards.push_back({path, std::move(*f)});
      }
      std::map<std::string, std::string> map(index->weight_map.begin(), index->weight_map.end());
      std::uint64_t total = 0;
      for (std::size_t i = 0; i < shards.size(); ++i) {
        const shard& s = shards[i];
        for (const tensor_info& t : s.f.tensors()) {
          if (const auto w = where.find(t.name); w != where.end())
            return detail::fail({"'", index_path, "': tensor '", t.name, "' is in two shards, '", *w->second.path, "' and '",
                                 s.path, "'"});
          const auto it = map.find(t.name);
          if (it == map.end())
            return detail::fail({"'", s.path, "': tensor '", t.name, "' is not in the weight_map of '", index_path, "'"});
          if (it->second != index->shards[i])
            return detail::fail({"'", s.path, "': tensor '", t.name, "' is in this shard, but '", index_path,
                                 "' maps it to '", it->second, "'"});
          where.emplace(t.name, located{&s.f, &t, &s.path});
          total += t.bytes();
        }
      }
      for (const auto& [name, file_name] : index->weight_map)
        if (!where.count(name))
          return detail::fail({"'", index_path, "': tensor '", name, "' is mapped to '", file_name, "', which does not hold it"});
      if (index->total_size && *index->total_size != total)
        return detail::fail({"'", index_path, "': metadata.total_size is ", num(*index->total_size),
                             "; the shards' tensors hold ", num(total), " bytes"});
    } else {
      return detail::fail({"'", dir, "': no model.safetensors nor model.safetensors.index.json "
                                     "(save_pretrained(safe_serialization=True) writes them)"});
    }

    std::set<std::string> used;
    for (const auto& [name, shape] : llama2c_tensor_shapes(m.arch)) {
      bool transpose = false;
      const std::string hf = hf_name(name, transpose);
      const auto w = where.find(hf);
      if (w == where.end())
        return detail::fail({"'", dir, "/", m.weights_file, "': missing tensor '", hf, "' (", describe(m.arch), ")"});
      const tensor_info* t = w->second.t;
      const std::string& weights = *w->second.path;
      used.insert(hf);
      const shape_t want = transpose ? shape_t{shape[1], shape[0]} : shape;
      if (t->type != dtype::F32 && t->type != dtype::F16 && t->type != dtype::BF16)
        return detail::fail({"'", weights, "': tensor '", hf, "': dtype ", to_string(t->type),
                             " (F32, F16 and BF16 are read)"});
      if (t->shape != want)
        return detail::fail({"'", weights, "': tensor '", hf, "': expected shape ", to_string(want), " (from ",
                             config_path, "), found ", to_string(t->shape)});
      if (m.dtype.empty()) m.dtype = to_string(t->type);
      std::vector<float> v(t->elements());
      detail::convert(t->type, w->second.f->data(*t), v.data(), v.size());
      for (std::size_t i = 0; i < v.size(); ++i)
        if (!std::isfinite(v[i]))
          return detail::fail({"'", weights, "': tensor '", hf, "': element ", detail::index_string(want, i), " is ",
                               std::isnan(v[i]) ? "nan" : detail::format_double(v[i])});
      llama2c_tensor x{name, shape, {}};
      if (transpose) {  // theirs [rows = out, cols = in] → ours [in, out]
        x.values.resize(v.size());
        const std::size_t rows = want[0], cols = want[1];
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t c = 0; c < cols; ++c) x.values[c * rows + r] = v[r * cols + c];
      } else {
        x.values = std::move(v);
      }
      m.tensors.push_back(std::move(x));
    }
    for (const auto& [tensor_name, loc] : where) {
      const tensor_info& t = *loc.t;
      const std::string& weights = *loc.path;
      if (used.count(t.name)) continue;
      if (t.name.find("rotary_emb.inv_freq") != std::string::npos) continue;  // (older transformers' buffer)
      if (t.name == "lm_head.weight" && m.arch.tied) {  // a tied head saved anyway: it must be the embedding
        const llama2c_tensor* e = m.find("tok_emb.weight");
        std::vector<float> v(t.elements());
        if (t.shape != e->shape || (t.type != dtype::F32 && t.type != dtype::F16 && t.type != dtype::BF16) ||
            (detail::convert(t.type, loc.f->data(t), v.data(), v.size()), v != e->values))
          return detail::fail({"'", weights, "': tie_word_embeddings is true, but lm_head.weight is not "
                                             "model.embed_tokens.weight"});
        continue;
      }
      return detail::fail({"'", weights, "': unexpected tensor '", t.name, "' for ", describe(m.arch)});
    }
  } catch (const std::bad_alloc&) {
    return detail::fail({"'", dir, "': out of memory"});
  }
  // The tokenizer: tokenizer.model (sentencepiece's), else tokenizer.json (tokenizers').
  if (is_file(dir + "/tokenizer.model")) {
    result<tokenizer_bin> t = read_sentencepiece_model(dir + "/tokenizer.model");
    if (!t) return t.status();
    m.tokenizer = std::move(*t);
    m.tokenizer_file = "tokenizer.model";
  } else if (is_file(dir + "/tokenizer.json")) {
    result<tokenizer_bin> t = read_hf_tokenizer_json(dir + "/tokenizer.json");
    if (!t) return t.status();
    if (t->size() != m.arch.V)
      return detail::fail({"'", dir, "/tokenizer.json': ", num(t->size()), " pieces; vocab_size in ", config_path, " is ",
                           num(m.arch.V), ": they must be equal"});
    m.tokenizer = std::move(*t);
    m.tokenizer_file = "tokenizer.json";
  }
  return m;
}

// ------------------------------------------------------------------ tokenizer.json

result<tokenizer_bin> parse_hf_tokenizer_json(std::string_view text, const std::string& origin) {
  auto bad = [&](const std::string& e) { return detail::fail({"'", origin, "': ", e}); };
  using json = nlohmann::json;
  static constexpr std::string_view mark = "\xe2\x96\x81";  // U+2581, the space of Llama's pieces
  static constexpr std::size_t max_piece = 256;              // bytes of one piece
  json j;
  try {
    if (std::string e = json_object(text, j); !e.empty()) return bad(e);
    auto field = [](const json& o, const char* key) -> const json* {
      const auto it = o.find(key);
      return it == o.end() || it->is_null() ? nullptr : &*it;
    };
    auto is = [](const json* v, std::string_view s) { return v && v->is_string() && v->get_ref<const std::string&>() == s; };
    const json* model = field(j, "model");
    if (!model || !model->is_object()) return bad("no model (an object)");
    const json* type = field(*model, "type");
    if (!is(type, "BPE"))
      return bad("model type " + (type ? shown(*type) : std::string("none")) +
                 ": only BPE with byte_fallback (Llama's tokenizer) is read");
    if (const json* b = field(*model, "byte_fallback"); !b || *b != true)
      return bad("model.byte_fallback is " + (b ? shown(*b) : std::string("absent")) +
                 ": only BPE with byte_fallback (Llama's tokenizer) is read");
    for (const char* key : {"dropout", "continuing_subword_prefix", "end_of_word_suffix"})
      if (const json* v = field(*model, key); v && !is(v, ""))
        return bad(std::string("model.") + key + " is " + shown(*v) + ": Llama's BPE has none");
    if (const json* v = field(*model, "ignore_merges"); v && *v != false)
      return bad("model.ignore_merges is " + shown(*v) + ": Llama's BPE merges every word");

    // The vocabulary, in id order
    const json* vocab = field(*model, "vocab");
    if (!vocab || !vocab->is_object()) return bad("no model.vocab (an object: piece → id)");
    const std::size_t n = vocab->size();
    if (n < 259) return bad("model.vocab has " + std::to_string(n) + " pieces, fewer than <unk>, <s>, </s> and the 256 bytes");
    std::vector<std::string> pieces(n);
    std::vector<bool> seen(n);
    for (auto it = vocab->begin(); it != vocab->end(); ++it) {
      if (!it->is_number_unsigned() || it->get<std::uint64_t>() >= n)
        return bad("model.vocab: piece '" + it.key() + "' has id " + shown(*it) + ": expected 0 .. " + std::to_string(n - 1));
      const auto id = static_cast<std::size_t>(it->get<std::uint64_t>());
      if (seen[id]) return bad("model.vocab: id " + std::to_string(id) + " is both '" + pieces[id] + "' and '" + it.key() + "'");
      if (it.key().empty() || it.key().size() > max_piece)
        return bad("model.vocab: piece " + std::to_string(id) + " has " + std::to_string(it.key().size()) + " bytes (1 to " + std::to_string(max_piece) + " are read)");
      seen[id] = true;
      pieces[id] = it.key();
    }
    const auto& special = llama_special;
    for (std::size_t i = 0; i < 3; ++i)
      if (pieces[i] != special[i])
        return bad("model.vocab: id " + std::to_string(i) + " is '" + pieces[i] + "': llama2.c's tokenizer takes <unk>, <s>, </s> at 0, 1, 2");
    for (unsigned b = 0; b < 256; ++b) {
      char want[8];
      std::snprintf(want, sizeof want, "<0x%02X>", b);
      if (pieces[b + 3] != want)
        return bad("model.vocab: id " + std::to_string(b + 3) + " is '" + pieces[b + 3] + "', not " + want +
                   " (llama2.c's byte fallback: byte b is id b + 3)");
    }
    if (const json* added = field(j, "added_tokens")) {
      if (!added->is_array()) return bad("added_tokens is " + shown(*added) + ": expected an array");
      for (const json& t : *added) {
        const json* id = t.is_object() ? field(t, "id") : nullptr;
        const json* content = t.is_object() ? field(t, "content") : nullptr;
        if (!id || !content || !id->is_number_unsigned() || !content->is_string() || id->get<std::uint64_t>() > 2 ||
            content->get_ref<const std::string&>() != special[id->get<std::uint64_t>()])
          return bad("added token " + shown(t) + ": only <unk>, <s>, </s> at ids 0, 1, 2 are read "
                     "(transformers takes the others out of the text before BPE; llama2.c's encoder does not)");
      }
    }

    // The text normalized as Llama's: "▁" first and for every space. Either the normalizer
    // Sequence [Prepend "▁", Replace " " → "▁"] or Metaspace "▁" (split false, prepend first/always).
    const json* norm = field(j, "normalizer");
    const json* pre = field(j, "pre_tokenizer");
    auto prepend = [&](const json& x) { return x.is_object() && is(field(x, "type"), "Prepend") && is(field(x, "prepend"), mark); };
    auto replace = [&](const json& x) {
      const json* pattern = x.is_object() ? field(x, "pattern") : nullptr;
      return x.is_object() && is(field(x, "type"), "Replace") && is(field(x, "content"), mark) && pattern &&
             pattern->is_object() && pattern->size() == 1 && is(field(*pattern, "String"), " ");
    };
    const json* seq = norm && norm->is_object() && is(field(*norm, "type"), "Sequence") ? field(*norm, "normalizers") : nullptr;
    const bool legacy = seq && seq->is_array() && seq->size() == 2 && prepend((*seq)[0]) && replace((*seq)[1]) && !pre;
    bool metaspace = false;
    if (!norm && pre && pre->is_object() && is(field(*pre, "type"), "Metaspace") && is(field(*pre, "replacement"), mark)) {
      const json* scheme = field(*pre, "prepend_scheme");
      const json* add = field(*pre, "add_prefix_space");
      const json* split = field(*pre, "split");
      metaspace = split && *split == false &&
                  (is(scheme, "first") || is(scheme, "always") || (!scheme && add && *add == true));
    }
    if (!legacy && !metaspace)
      return bad("normalizer " + (norm ? shown(*norm) : std::string("null")) + " and pre_tokenizer " +
                 (pre ? shown(*pre) : std::string("null")) +
                 ": only Llama's are read (normalizer Prepend \"\xe2\x96\x81\" then Replace \" \" by it, no pre_tokenizer; "
                 "or no normalizer and pre_tokenizer Metaspace with split false, prepend_scheme first or always)");

    // The merges, by rank: group g = the g-th run of adjacent merges that make the same piece.
    const json* merges = field(*model, "merges");
    if (!merges || !merges->is_array()) return bad("no model.merges (an array)");
    std::unordered_map<std::string_view, std::int32_t> id_of;
    id_of.reserve(n);
    for (std::size_t i = 0; i < n; ++i) id_of.emplace(pieces[i], static_cast<std::int32_t>(i));
    std::vector<std::int64_t> group(n, -1);
    std::unordered_set<std::uint64_t> pairs;  // (left id << 32 | right id) of every merge
    std::int64_t groups = 0;
    std::int32_t last = -1;
    for (std::size_t r = 0; r < merges->size(); ++r) {
      const json& e = (*merges)[r];
      std::string left, right;
      if (e.is_string()) {
        const std::string& s = e.get_ref<const std::string&>();
        const std::size_t sp = s.find(' ');
        if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
          return bad("merge " + std::to_string(r) + " is " + shown(e) + ": expected \"left right\" (one space)");
        left = s.substr(0, sp), right = s.substr(sp + 1);
      } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
        left = e[0].get<std::string>(), right = e[1].get<std::string>();
      } else {
        return bad("merge " + std::to_string(r) + " is " + shown(e) + ": expected \"left right\" or [left, right]");
      }
      const auto a = id_of.find(left), b = id_of.find(right);
      if (a == id_of.end() || b == id_of.end())
        return bad("merge " + std::to_string(r) + " " + shown(e) + ": '" + (a == id_of.end() ? left : right) + "' is not in the vocabulary");
      if (a->second < 3 || b->second < 3) return bad("merge " + std::to_string(r) + " " + shown(e) + " involves <unk>, <s> or </s>");
      const auto c = id_of.find(left + right);
      if (c == id_of.end())
        return bad("merge " + std::to_string(r) + " " + shown(e) + ": '" + left + right + "' is not in the vocabulary");
      const std::int32_t made = c->second;
      if (made != last) {
        if (group[static_cast<std::size_t>(made)] >= 0)
          return bad("merge " + std::to_string(r) + " " + shown(e) + " makes '" + left + right +
                     "', which earlier merges make too, with other merges between: llama2.c's one score per piece "
                     "cannot keep that order");
        group[static_cast<std::size_t>(made)] = groups++;
        last = made;
      }
      pairs.insert(static_cast<std::uint64_t>(a->second) << 32 | static_cast<std::uint32_t>(b->second));
    }
    // The scores: minus the group of a piece merges make; the other pieces after them in id order;
    // <unk>, <s>, </s> and the bytes 0 (sentencepiece's scores, for a tokenizer converted from one).
    // (Exact in float: fewer than 2^24 pieces fit in hf_max_tokenizer_json_bytes.)
    std::vector<float> scores(n, 0.0f);
    std::int64_t next = groups;
    for (std::size_t i = 259; i < n; ++i) scores[i] = -static_cast<float>(group[i] >= 0 ? group[i] : next++);
    result<tokenizer_bin> t = tokenizer_bin::from_sentencepiece(pieces, scores);
    if (!t) return bad(t.message());
    // llama2.c's encoder merges any two adjacent pieces that make a piece; transformers' only the
    // pairs of the merges: every such pair must be a merge, and no two pieces may be equal.
    std::unordered_map<std::string_view, std::int32_t> raw;
    raw.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto id = static_cast<std::int32_t>(i);
      if (const auto [it, fresh] = raw.emplace(t->raw_piece(id), id); !fresh)
        return bad("pieces " + std::to_string(static_cast<std::size_t>(it->second)) + " and " + std::to_string(i) + " are both '" +
                   std::string(t->raw_piece(id)) + "' in llama2.c's tokenizer (\xe2\x96\x81 as a space)");
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::string_view p = t->raw_piece(static_cast<std::int32_t>(i));
      for (std::size_t k = 1; k < p.size(); ++k) {
        const auto a = raw.find(p.substr(0, k)), b = raw.find(p.substr(k));
        if (a == raw.end() || b == raw.end()) continue;
        if (!pairs.count(static_cast<std::uint64_t>(a->second) << 32 | static_cast<std::uint32_t>(b->second)))
          return bad("piece " + std::to_string(i) + " '" + pieces[i] + "' is '" + pieces[static_cast<std::size_t>(a->second)] + "' + '" +
                     pieces[static_cast<std::size_t>(b->second)] +
                     "', which is not a merge: llama2.c's encoder would merge them, transformers' does not");
      }
    }
    return t;
  } catch (const std::bad_alloc&) {
    return bad("out of memory");
  }
}

result<tokenizer_bin> read_hf_tokenizer_json(const std::string& path) {
  std::vector<std::byte> bytes;
  if (std::string e = read_small_file(path, hf_max_tokenizer_json_bytes, bytes); !e.empty()) return detail::fail({e});
  return parse_hf_tokenizer_json(text_of(bytes), path);
}

result<tokenizer_bin> parse_sentencepiece_model(std::span<const std::byte> b, const std::string& origin) {
  auto bad = [&](const std::string& e) { return detail::fail({"'", origin, "': sentencepiece model: ", e}); };
  std::vector<std::string> pieces;
  std::vector<float> scores;
  std::int64_t bos = 1, eos = 2;
  wire w{b.data(), b.data() + b.size()};
  try {
    while (w.p != w.end) {
      std::uint64_t number = 0, value = 0;
      int type = 0;
      std::span<const std::byte> bytes;
      const std::byte* at = w.p;
      if (!w.field(number, type, bytes, value))
        return bad("a field is cut off or malformed at byte " + std::to_string(static_cast<std::size_t>(at - b.data())));
      if (number == 1 && type == 2) {  // SentencePiece { piece = 1; score = 2; type = 3 }
        wire p{bytes.data(), bytes.data() + bytes.size()};
        std::string piece;
        float score = 0;
        while (p.p != p.end) {
          std::uint64_t n = 0, v = 0;
          int t = 0;
          std::span<const std::byte> s;
          if (!p.field(n, t, s, v)) return bad("piece " + std::to_string(pieces.size()) + " is malformed");
          if (n == 1 && t == 2) piece.assign(reinterpret_cast<const char*>(s.data()), s.size());
          if (n == 2 && t == 5) {
            const auto bits = static_cast<std::uint32_t>(v);
            std::memcpy(&score, &bits, 4);
            if (!std::isfinite(score)) return bad("piece " + std::to_string(pieces.size()) + "'s score is not finite");
          }
        }
        pieces.push_back(std::move(piece));
        scores.push_back(score);
      } else if (number == 2 && type == 2) {  // TrainerSpec: unk_id 40, bos_id 41, eos_id 42
        wire p{bytes.data(), bytes.data() + bytes.size()};
        while (p.p != p.end) {
          std::uint64_t n = 0, v = 0;
          int t = 0;
          std::span<const std::byte> s;
          if (!p.field(n, t, s, v)) return bad("the trainer spec is malformed");
          if ((n == 41 || n == 42) && t == 0) (n == 41 ? bos : eos) = static_cast<std::int32_t>(v);
        }
      }
    }
  } catch (const std::bad_alloc&) {
    return bad("out of memory");
  }
  if (pieces.size() < 3) return bad("fewer than 3 pieces (" + std::to_string(pieces.size()) + ")");
  if (bos != 1 || eos != 2)
    return bad("BOS is id " + std::to_string(bos) + " and EOS " + std::to_string(eos) +
               "; llama2.c's tokenizer (run.c) takes 1 and 2");
  result<tokenizer_bin> t = tokenizer_bin::from_sentencepiece(std::move(pieces), scores);
  if (!t) return bad(t.message());
  return t;
}

result<tokenizer_bin> read_sentencepiece_model(const std::string& path) {
  std::vector<std::byte> bytes;
  if (std::string e = read_small_file(path, sentencepiece_max_bytes, bytes); !e.empty()) return detail::fail({e});
  return parse_sentencepiece_model(bytes, path);
}

// ------------------------------------------------------------------ writing

namespace {

// protobuf's wire format, written
struct proto {
  std::string out;
  void varint(std::uint64_t v) {
    for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7f) | 0x80);
    out += static_cast<char>(v);
  }
  void key(int field, int type) { varint(static_cast<std::uint64_t>(field) << 3 | static_cast<unsigned>(type)); }
  void integer(int field, std::int64_t v) { key(field, 0), varint(static_cast<std::uint64_t>(v)); }  // (int32: 10 bytes if < 0)
  void bytes(int field, std::string_view b) { key(field, 2), varint(b.size()), out += b; }
  void f32(int field, float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    key(field, 5);
    for (int i = 0; i < 4; ++i) out += static_cast<char>(bits >> (8 * i) & 0xff);
  }
};

}  // namespace

std::vector<std::byte> sentencepiece_model_bytes(const tokenizer_bin& t) {
  const tokenizer_bin::sentencepiece_vocab v = t.to_sentencepiece();
  proto m;
  for (std::size_t i = 0; i < v.pieces.size(); ++i) {  // ModelProto.pieces = 1: SentencePiece { piece 1, score 2, type 3 }
    proto p;
    p.bytes(1, v.pieces[i]);
    p.f32(2, v.scores[i]);
    p.integer(3, v.types[i]);
    m.bytes(1, p.out);
  }
  proto trainer;  // TrainerSpec = 2: model_type 3 (BPE = 2), vocab_size 4, byte_fallback 35, unk/bos/eos/pad ids 40–43
  trainer.integer(3, 2);
  trainer.integer(4, static_cast<std::int64_t>(v.pieces.size()));
  trainer.integer(35, 1);
  trainer.integer(40, 0);
  trainer.integer(41, tokenizer_bin::bos());
  trainer.integer(42, tokenizer_bin::eos());
  trainer.integer(43, -1);
  m.bytes(2, trainer.out);
  proto normalizer;  // NormalizerSpec = 3: name 1, add_dummy_prefix 3, remove_extra_whitespaces 4, escape_whitespaces 5
  normalizer.bytes(1, "identity");
  normalizer.integer(3, 1);
  normalizer.integer(4, 0);
  normalizer.integer(5, 1);
  m.bytes(3, normalizer.out);
  const auto* b = reinterpret_cast<const std::byte*>(m.out.data());
  return {b, b + m.out.size()};
}

result<std::string> hf_tokenizer_json(const tokenizer_bin& t) {
  using json = nlohmann::ordered_json;
  auto bad = [](const std::string& e) { return detail::fail({"tokenizer.json: ", e}); };
  try {
    const tokenizer_bin::sentencepiece_vocab v = t.to_sentencepiece();
    const std::size_t n = v.pieces.size();
    const auto& special = llama_special;
    if (n < 3) return bad("a Llama tokenizer has <unk>, <s>, </s> at ids 0, 1, 2; this one has " + std::to_string(n) + " pieces");
    std::unordered_map<std::string_view, std::int32_t> id_of;  // piece → id (LlamaConverter's vocab)
    id_of.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (i < 3 && v.pieces[i] != special[i])
        return bad("id " + std::to_string(i) + " is '" + v.pieces[i] + "': a Llama tokenizer has " + special[i] + " there");
      if (!id_of.emplace(v.pieces[i], static_cast<std::int32_t>(i)).second)
        return bad("pieces " + std::to_string(id_of[v.pieces[i]]) + " and " + std::to_string(i) + " are both '" +
                   v.pieces[i] + "'");
    }
    // transformers' LlamaConverter (SentencePieceExtractor.extract with the pieces' scores, <unk>, <s>
    // and </s> scored 0): for each piece in id order, its splits into two pieces (at characters, not
    // bytes), ordered by (left id, right id); then all of them by the made piece's score, highest
    // first, a stable sort (equal scores keep that order).
    struct merge { std::int32_t left, right; float score; };
    std::vector<merge> merges;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string& p = v.pieces[i];
      const std::size_t first = merges.size();
      for (std::size_t k = 1; k < p.size(); ++k) {
        if ((static_cast<unsigned char>(p[k]) & 0xC0) == 0x80) continue;  // (inside a UTF-8 character)
        const auto a = id_of.find(std::string_view(p).substr(0, k)), b = id_of.find(std::string_view(p).substr(k));
        if (a != id_of.end() && b != id_of.end()) merges.push_back({a->second, b->second, i < 3 ? 0.0f : v.scores[i]});
      }
      std::sort(merges.begin() + static_cast<std::ptrdiff_t>(first), merges.end(),
                [](const merge& x, const merge& y) { return x.left != y.left ? x.left < y.left : x.right < y.right; });
    }
    std::stable_sort(merges.begin(), merges.end(), [](const merge& x, const merge& y) { return x.score > y.score; });

    // The file as tokenizers 0.15 writes LlamaTokenizerFast's (transformers 4.35: BOS added, no EOS)
    json j;
    j["version"] = "1.0";
    j["truncation"] = nullptr;
    j["padding"] = nullptr;
    j["added_tokens"] = json::array();
    for (int i = 0; i < 3; ++i)
      j["added_tokens"].push_back({{"id", i}, {"content", special[i]}, {"single_word", false}, {"lstrip", false},
                                   {"rstrip", false}, {"normalized", false}, {"special", true}});
    const std::string mark = "\xe2\x96\x81";  // U+2581
    j["normalizer"] = {{"type", "Sequence"},
                       {"normalizers", json::array({{{"type", "Prepend"}, {"prepend", mark}},
                                                    {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", mark}}})}};
    j["pre_tokenizer"] = nullptr;
    auto special_token = [](const char* id, int type) { return json{{"SpecialToken", {{"id", id}, {"type_id", type}}}}; };
    auto sequence = [](const char* id, int type) { return json{{"Sequence", {{"id", id}, {"type_id", type}}}}; };
    j["post_processor"] = {
        {"type", "TemplateProcessing"},
        {"single", json::array({special_token("<s>", 0), sequence("A", 0)})},
        {"pair", json::array({special_token("<s>", 0), sequence("A", 0), special_token("<s>", 1), sequence("B", 1)})},
        {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", json::array({1})}, {"tokens", json::array({"<s>"})}}}}}};
    j["decoder"] = {{"type", "Sequence"},
                    {"decoders", json::array({{{"type", "Replace"}, {"pattern", {{"String", mark}}}, {"content", " "}},
                                              {{"type", "ByteFallback"}},
                                              {{"type", "Fuse"}},
                                              {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}})}};
    json model;
    model["type"] = "BPE";
    model["dropout"] = nullptr;
    model["unk_token"] = "<unk>";
    model["continuing_subword_prefix"] = nullptr;
    model["end_of_word_suffix"] = nullptr;
    model["fuse_unk"] = true;
    model["byte_fallback"] = true;
    // The vocabulary and the merges are spliced in as text (an ordered_json object finds each key
    // by a linear search: 32000 pieces would take seconds), laid out as dump(2) lays out the rest.
    static constexpr std::string_view vocab_mark = "\"@vocab@\"", merges_mark = "\"@merges@\"";
    model["vocab"] = std::string(vocab_mark.substr(1, vocab_mark.size() - 2));
    model["merges"] = std::string(merges_mark.substr(1, merges_mark.size() - 2));
    j["model"] = std::move(model);
    std::string text = j.dump(2);
    auto quoted = [](const std::string& x) { return json(x).dump(); };  // (throws on a piece not UTF-8)
    std::string block = "{";
    for (std::size_t i = 0; i < n; ++i) block += (i ? ",\n      " : "\n      ") + quoted(v.pieces[i]) + ": " + std::to_string(i);
    block += "\n    }";
    text.replace(text.find(vocab_mark), vocab_mark.size(), block);
    block = merges.empty() ? "[]" : "[";
    for (std::size_t r = 0; r < merges.size(); ++r)
      block += (r ? ",\n      " : "\n      ") +
               quoted(v.pieces[static_cast<std::size_t>(merges[r].left)] + " " + v.pieces[static_cast<std::size_t>(merges[r].right)]);
    if (!merges.empty()) block += "\n    ]";
    text.replace(text.find(merges_mark), merges_mark.size(), block);
    // What it is written for: read back (by this library), the same tokenizer.
    result<tokenizer_bin> back = parse_hf_tokenizer_json(text, "tokenizer.json");
    if (!back) return bad(std::string("it would not read back: ") + back.message());
    for (std::size_t i = 0; i < n; ++i)
      if (back->raw_piece(static_cast<std::int32_t>(i)) != t.raw_piece(static_cast<std::int32_t>(i)))
        return bad("piece " + std::to_string(i) + " would not read back the same");
    return text;
  } catch (const std::bad_alloc&) {
    return bad("out of memory");
  } catch (const nlohmann::json::exception& e) {
    return bad(std::string("a piece is not UTF-8 (") + e.what() + ")");
  }
}

namespace {
constexpr std::pair<dtype, const char*> hf_dtypes[] = {{dtype::F32, "float32"}, {dtype::F16, "float16"}, {dtype::BF16, "bfloat16"}};
}  // namespace

const char* hf_dtype_name(dtype type) {
  for (const auto& [t, name] : hf_dtypes)
    if (t == type) return name;
  return nullptr;
}
std::optional<dtype> hf_dtype_named(std::string_view name) {
  for (const auto& [t, n] : hf_dtypes)
    if (n == name) return t;
  return std::nullopt;
}

result<hf_llama_files> hf_llama_directory(sf::arch a, std::vector<llama2c_tensor> tensors, const tokenizer_bin* tokenizer,
                                          dtype type, std::uint64_t max_shard_bytes) {
  if (!hf_dtype_name(type))
    return detail::fail({"a Hugging Face Llama directory is written float32, float16 or bfloat16, not ", to_string(type)});
  if (a.ffn != sf::ffn_kind::gated || a.norm != sf::norm_kind::rmsnorm || a.position != sf::position_kind::rope ||
      a.activation != sf::activation_kind::silu || a.bias)
    return detail::fail({"Hugging Face's Llama is gated silu, rmsnorm, rope, without bias; this is ", describe(a)});
  if (tokenizer && tokenizer->size() != a.V)
    return detail::fail({"the tokenizer has ", num(tokenizer->size()), " pieces; the vocabulary is ", num(a.V),
                         ": they must be equal"});
  if (sf::status s = convert_rope_pairs(a, tensors, sf::rope_pairs_kind::halves); !s) return s;
  hf_llama_files out;
  try {
    const std::size_t kv = a.kv_heads ? a.kv_heads : a.H;
    nlohmann::ordered_json c;  // LlamaConfig's fields, as transformers writes them (sorted keys)
    c["architectures"] = {"LlamaForCausalLM"};
    c["attention_bias"] = false;
    c["bos_token_id"] = tokenizer_bin::bos();
    c["eos_token_id"] = tokenizer_bin::eos();
    c["hidden_act"] = "silu";
    c["hidden_size"] = a.D;
    c["initializer_range"] = 0.02;
    c["intermediate_size"] = a.F;
    c["max_position_embeddings"] = a.T;
    c["model_type"] = "llama";
    c["num_attention_heads"] = a.H;
    c["num_hidden_layers"] = a.L;
    c["num_key_value_heads"] = kv;
    c["pretraining_tp"] = 1;
    c["rms_norm_eps"] = a.norm_eps;
    c["rope_scaling"] = nullptr;
    c["rope_theta"] = a.rope_base;
    c["tie_word_embeddings"] = a.tied;
    c["torch_dtype"] = hf_dtype_name(type);
    c["use_cache"] = true;
    c["vocab_size"] = a.V;
    out.config_json = c.dump(2) + "\n";

    std::vector<std::pair<std::string, shape_t>> want = llama2c_tensor_shapes(a);
    if (tensors.size() != want.size())
      return detail::fail({"expected the ", num(want.size()), " tensors of ", describe(a), ", found ", num(tensors.size())});
    // In transformers' state_dict order (LlamaForCausalLM's modules: the embedding; per layer q, k,
    // v, o, gate, up, down, the two norms; the final norm; the head), which its shard_checkpoint
    // follows.
    std::stable_sort(want.begin(), want.end(), [](const auto& x, const auto& y) {
      return hf_state_rank(x.first) < hf_state_rank(y.first);
    });
    struct hf_tensor {
      std::string name;            // Hugging Face's
      const llama2c_tensor* ours;  // its values ([in, out] for a linear layer: transposed when written)
      bool transpose;
      std::uint64_t bytes;         // in the file
    };
    std::vector<hf_tensor> all;
    all.reserve(want.size());
    for (const auto& [name, shape] : want) {
      const llama2c_tensor* it = find_named(tensors, name);
      if (!it) return detail::fail({"missing tensor '", name, "' (", describe(a), ")"});
      std::size_t n = 1;
      for (const std::size_t d : shape) n *= d;
      if (it->shape != shape || it->values.size() != n)
        return detail::fail({"tensor '", name, "': expected shape ", to_string(shape), ", found ", to_string(it->shape)});
      bool transpose = false;
      std::string hf = hf_name(name, transpose);
      all.push_back({std::move(hf), it, transpose, static_cast<std::uint64_t>(n) * size_of(type)});
    }
    // One tensor into a file's writer: [out, in] for a linear layer; float16 or bfloat16 values
    // rounded to the nearest (ties to even), as torch's .to(dtype). (Converted one at a time, so a
    // converted copy of one tensor at most is held besides the writer's.)
    std::vector<float> tv;
    std::vector<std::uint16_t> half;
    auto add = [&](writer& w, const hf_tensor& t) -> sf::status {
      const shape_t& shape = t.ours->shape;
      const std::vector<float>* v = &t.ours->values;
      shape_t theirs = shape;
      if (t.transpose) {
        const std::size_t rows = shape[0], cols = shape[1];  // ours [in, out] → theirs [out, in]
        tv.resize(v->size());
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t k = 0; k < cols; ++k) tv[k * rows + r] = (*v)[r * cols + k];
        v = &tv;
        theirs = shape_t{cols, rows};
      }
      if (type == dtype::F32) {
        w.add(t.name, *v, theirs);
        return sf::status::ok();
      }
      half.resize(v->size());
      const std::uint16_t inf = type == dtype::F16 ? 0x7c00 : 0x7f80;
      for (std::size_t i = 0; i < v->size(); ++i) {
        half[i] = type == dtype::F16 ? detail::float_to_f16((*v)[i]) : detail::float_to_bf16((*v)[i]);
        if ((half[i] & inf) == inf)  // ±inf (or NaN): beyond the type's range
          return detail::fail({"tensor '", t.ours->name, "': element ",
                               detail::index_string(shape, t.transpose ? (i % shape[0]) * shape[1] + i / shape[0] : i),
                               " = ", detail::format_double((*v)[i]), " is beyond ", to_string(type),
                               "'s range: write float32"});
      }
      w.add(t.name, type, theirs, half.data());
      return sf::status::ok();
    };
    // transformers' shard_checkpoint: in that order, a tensor that would take its shard past
    // max_shard_bytes starts the next shard (a shard holds at least one tensor).
    std::vector<std::vector<const hf_tensor*>> shards(1);
    std::uint64_t last = 0, total = 0;
    for (const hf_tensor& t : all) {
      if (last + t.bytes > max_shard_bytes && !shards.back().empty()) shards.emplace_back(), last = 0;
      shards.back().push_back(&t);
      last += t.bytes;
      total += t.bytes;
    }
    nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
    std::vector<std::pair<std::string, std::string>> mapped;
    for (std::size_t k = 0; k < shards.size(); ++k) {
      const std::string file = shards.size() == 1 ? std::string("model.safetensors") : hf_shard_name(k + 1, shards.size());
      // Each file's tensors in the order of their names, as the safetensors package orders tensors
      // of one dtype (the writer keeps the order within an element size): transformers' files byte
      // for byte.
      std::sort(shards[k].begin(), shards[k].end(), [](const hf_tensor* x, const hf_tensor* y) { return x->name < y->name; });
      writer w;
      w.set_metadata("format", "pt");
      for (const hf_tensor* t : shards[k]) {
        if (sf::status st = add(w, *t); !st) return st;
        mapped.emplace_back(t->name, file);
      }
      result<std::vector<std::byte>> bytes = w.serialize();
      if (!bytes) return bytes.status();
      out.weights.emplace_back(file, std::move(*bytes));
    }
    if (shards.size() > 1) {  // model.safetensors.index.json: json.dumps(index, indent=2, sort_keys=True) + "\n"
      std::sort(mapped.begin(), mapped.end());
      for (const auto& [name, file] : mapped) weight_map[name] = file;
      nlohmann::ordered_json index;
      index["metadata"] = {{"total_size", total}};
      index["weight_map"] = weight_map;
      out.weights_index_json = index.dump(2) + "\n";
    }

    if (tokenizer) {
      out.tokenizer_model = sentencepiece_model_bytes(*tokenizer);
      result<std::string> tj = hf_tokenizer_json(*tokenizer);
      if (!tj) return tj.status();
      out.tokenizer_json = std::move(*tj);
      nlohmann::ordered_json special, added;  // what LlamaTokenizer's save_pretrained writes (transformers 4.35)
      const auto& names = llama_special;
      for (int i = 0; i < 3; ++i) {
        special = {{"content", names[i]}, {"lstrip", false}, {"normalized", false}, {"rstrip", false},
                   {"single_word", false}, {"special", true}};
        added[std::to_string(i)] = special;
      }
      nlohmann::ordered_json tc;
      tc["add_bos_token"] = true;
      tc["add_eos_token"] = false;
      tc["added_tokens_decoder"] = added;
      tc["bos_token"] = "<s>";
      tc["clean_up_tokenization_spaces"] = false;
      tc["eos_token"] = "</s>";
      tc["legacy"] = true;
      tc["model_max_length"] = a.T;
      tc["pad_token"] = nullptr;
      tc["sp_model_kwargs"] = nlohmann::ordered_json::object();
      tc["spaces_between_special_tokens"] = false;
      tc["tokenizer_class"] = "LlamaTokenizer";
      tc["unk_token"] = "<unk>";
      tc["use_default_system_prompt"] = false;
      out.tokenizer_config_json = tc.dump(2) + "\n";
      nlohmann::ordered_json sm;
      for (const auto& [key, i] : {std::pair{"bos_token", 1}, std::pair{"eos_token", 2}, std::pair{"unk_token", 0}})
        sm[key] = {{"content", names[i]}, {"lstrip", false}, {"normalized", false}, {"rstrip", false}, {"single_word", false}};
      out.special_tokens_map_json = sm.dump(2) + "\n";
    }
  } catch (const std::bad_alloc&) {
    return detail::fail({"out of memory"});
  }
  return out;
}

std::optional<std::uint64_t> hf_shard_size(std::string_view text) {
  auto upper_ends = [&](std::string_view unit) {
    if (text.size() <= unit.size()) return false;
    for (std::size_t i = 0; i < unit.size(); ++i)
      if (std::toupper(static_cast<unsigned char>(text[text.size() - unit.size() + i])) != unit[i]) return false;
    return true;
  };
  static constexpr std::pair<std::string_view, std::uint64_t> units[] = {
      {"GIB", std::uint64_t{1} << 30}, {"MIB", std::uint64_t{1} << 20}, {"KIB", std::uint64_t{1} << 10},
      {"GB", 1'000'000'000}, {"MB", 1'000'000}, {"KB", 1'000}};
  std::uint64_t scale = 1;
  bool bits = false;
  std::string_view digits = text;
  for (const auto& [unit, factor] : units)  // (transformers' order: the binary units first)
    if (upper_ends(unit)) {
      scale = factor;
      bits = unit.size() == 2 && text.back() == 'b';
      digits = text.substr(0, text.size() - unit.size());
      break;
    }
  if (digits.empty()) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    if (v > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (v > std::numeric_limits<std::uint64_t>::max() / scale) return std::nullopt;
  return bits ? v * scale / 8 : v * scale;
}

sf::status write_hf_llama(const std::string& dir, const sf::arch& a, std::vector<llama2c_tensor> tensors,
                          const tokenizer_bin* tokenizer, dtype type, std::uint64_t max_shard_bytes) {
  result<hf_llama_files> files = hf_llama_directory(a, std::move(tensors), tokenizer, type, max_shard_bytes);
  if (!files) return files.status();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return detail::fail({"cannot create the directory '", dir, "': ", ec.message()});
  auto text = [](const std::string& s) {
    return std::span<const std::byte>(reinterpret_cast<const std::byte*>(s.data()), s.size());
  };
  const std::string d = dir + "/";
  // The weights of an earlier write in the other form go first (a reader takes model.safetensors
  // over an index), and shards of an earlier sharded write that this one does not overwrite
  // (transformers' save_pretrained removes those too).
  auto stale = [&](const std::string& name) {
    for (const auto& f : files->weights)
      if (f.first == name) return false;
    if (name == "model.safetensors.index.json") return files->weights_index_json.empty();
    return name == "model.safetensors" || is_hf_shard_name(name);
  };
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_regular_file(ec) && stale(e.path().filename().string()) && !std::filesystem::remove(e.path(), ec))
      return detail::fail({"cannot remove the earlier weights file '", e.path().string(), "': ", ec.message()});
  for (const auto& [name, bytes] : files->weights)
    if (sf::status s = detail::write_file_atomically(d + name, bytes); !s) return s;
  if (!files->weights_index_json.empty())
    if (sf::status s = detail::write_file_atomically(d + "model.safetensors.index.json", text(files->weights_index_json)); !s)
      return s;
  if (tokenizer) {
    if (sf::status s = detail::write_file_atomically(d + "tokenizer.model", files->tokenizer_model); !s) return s;
    if (sf::status s = detail::write_file_atomically(d + "tokenizer.json", text(files->tokenizer_json)); !s) return s;
    if (sf::status s = detail::write_file_atomically(d + "tokenizer_config.json", text(files->tokenizer_config_json)); !s) return s;
    if (sf::status s = detail::write_file_atomically(d + "special_tokens_map.json", text(files->special_tokens_map_json)); !s)
      return s;
  }
  return detail::write_file_atomically(d + "config.json", text(files->config_json));  // (last: the directory is then whole)
}

}  // namespace sf::io
