// staticformer/io/hf_llama.hpp: Hugging Face Llama directories and sentencepiece's tokenizer.model,
// every field, size and length checked before use.
#include "staticformer/io/hf_llama.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <set>

#include "staticformer/io/config_codec.hpp"

namespace sf::io {
namespace {

using detail::num;

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

result<hf_llama_model> read_hf_llama(const std::string& dir) {
  const std::string config_path = dir + "/config.json";
  result<sf::arch> a = read_hf_llama_config(dir);
  if (!a) return a.status();
  const std::string weights = dir + "/model.safetensors";
  if (!is_file(weights)) {
    if (is_file(dir + "/model.safetensors.index.json"))
      return detail::fail({"'", dir, "': the weights are sharded (model.safetensors.index.json): not read yet; "
                                     "save_pretrained(max_shard_size=...) larger than the model gives one file"});
    return detail::fail({"'", dir, "': no model.safetensors (save_pretrained(safe_serialization=True) writes it)"});
  }
  result<file> f = file::open(weights);
  if (!f) return f.status();
  hf_llama_model m;
  m.arch = *a;
  std::set<std::string> used;
  try {
    for (const auto& [name, shape] : llama2c_tensor_shapes(m.arch)) {
      bool transpose = false;
      const std::string hf = hf_name(name, transpose);
      const tensor_info* t = f->find(hf);
      if (!t) return detail::fail({"'", weights, "': missing tensor '", hf, "' (", describe(m.arch), ")"});
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
      detail::convert(t->type, f->data(*t), v.data(), v.size());
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
    for (const tensor_info& t : f->tensors()) {
      if (used.count(t.name)) continue;
      if (t.name.find("rotary_emb.inv_freq") != std::string::npos) continue;  // (older transformers' buffer)
      if (t.name == "lm_head.weight" && m.arch.tied) {  // a tied head saved anyway: it must be the embedding
        const llama2c_tensor* e = m.find("tok_emb.weight");
        std::vector<float> v(t.elements());
        if (t.shape != e->shape || (t.type != dtype::F32 && t.type != dtype::F16 && t.type != dtype::BF16) ||
            (detail::convert(t.type, f->data(t), v.data(), v.size()), v != e->values))
          return detail::fail({"'", weights, "': tie_word_embeddings is true, but lm_head.weight is not "
                                             "model.embed_tokens.weight"});
        continue;
      }
      return detail::fail({"'", weights, "': unexpected tensor '", t.name, "' for ", describe(m.arch)});
    }
  } catch (const std::bad_alloc&) {
    return detail::fail({"'", weights, "': out of memory"});
  }
  if (is_file(dir + "/tokenizer.model")) {
    result<tokenizer_bin> t = read_sentencepiece_model(dir + "/tokenizer.model");
    if (!t) return t.status();
    m.tokenizer = std::move(*t);
  }
  return m;
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

result<hf_llama_files> hf_llama_directory(sf::arch a, std::vector<llama2c_tensor> tensors, const tokenizer_bin* tokenizer) {
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
    c["torch_dtype"] = "float32";
    c["use_cache"] = true;
    c["vocab_size"] = a.V;
    out.config_json = c.dump(2) + "\n";

    writer w;
    w.set_metadata("format", "pt");
    const std::vector<std::pair<std::string, shape_t>> want = llama2c_tensor_shapes(a);
    if (tensors.size() != want.size())
      return detail::fail({"expected the ", num(want.size()), " tensors of ", describe(a), ", found ", num(tensors.size())});
    for (const auto& [name, shape] : want) {
      const llama2c_tensor* it = find_named(tensors, name);
      if (!it) return detail::fail({"missing tensor '", name, "' (", describe(a), ")"});
      std::size_t n = 1;
      for (const std::size_t d : shape) n *= d;
      if (it->shape != shape || it->values.size() != n)
        return detail::fail({"tensor '", name, "': expected shape ", to_string(shape), ", found ", to_string(it->shape)});
      bool transpose = false;
      const std::string hf = hf_name(name, transpose);
      if (!transpose) {
        w.add(hf, it->values, shape);
        continue;
      }
      const std::size_t rows = shape[0], cols = shape[1];  // ours [in, out] → theirs [out, in]
      std::vector<float> t(it->values.size());
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t k = 0; k < cols; ++k) t[k * rows + r] = it->values[r * cols + k];
      w.add(hf, t, shape_t{cols, rows});
    }
    result<std::vector<std::byte>> bytes = w.serialize();
    if (!bytes) return bytes.status();
    out.model_safetensors = std::move(*bytes);

    if (tokenizer) {
      out.tokenizer_model = sentencepiece_model_bytes(*tokenizer);
      nlohmann::ordered_json special, added;  // what LlamaTokenizer's save_pretrained writes (transformers 4.35)
      const char* names[3] = {"<unk>", "<s>", "</s>"};
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

sf::status write_hf_llama(const std::string& dir, const sf::arch& a, std::vector<llama2c_tensor> tensors,
                          const tokenizer_bin* tokenizer) {
  result<hf_llama_files> files = hf_llama_directory(a, std::move(tensors), tokenizer);
  if (!files) return files.status();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return detail::fail({"cannot create the directory '", dir, "': ", ec.message()});
  auto text = [](const std::string& s) {
    return std::span<const std::byte>(reinterpret_cast<const std::byte*>(s.data()), s.size());
  };
  const std::string d = dir + "/";
  if (sf::status s = detail::write_file_atomically(d + "model.safetensors", files->model_safetensors); !s) return s;
  if (tokenizer) {
    if (sf::status s = detail::write_file_atomically(d + "tokenizer.model", files->tokenizer_model); !s) return s;
    if (sf::status s = detail::write_file_atomically(d + "tokenizer_config.json", text(files->tokenizer_config_json)); !s) return s;
    if (sf::status s = detail::write_file_atomically(d + "special_tokens_map.json", text(files->special_tokens_map_json)); !s)
      return s;
  }
  return detail::write_file_atomically(d + "config.json", text(files->config_json));  // (last: the directory is then whole)
}

}  // namespace sf::io
