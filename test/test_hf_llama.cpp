// Hugging Face Llama directories (staticformer/io/hf_llama.hpp) against directories written by
// transformers' own save_pretrained (test/data/hf/README.md): the architecture of each config.json,
// every weight in staticformer's layout equal to the file's value (F32, BF16, F16 converted
// exactly), sentencepiece's tokenizer.model read as the project's tokenizer.bin, and every kind
// of bad config, directory and tokenizer.model refused with its message. The text generated from
// them is tools/hf_test.cmake's (tool_staticformer_hf).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "file_bytes.hpp"
#include "refusals.hpp"
#include "staticformer/io/hf_llama.hpp"
#include "staticformer/io/safetensors.hpp"

namespace {

namespace io = sf::io;
namespace fs = std::filesystem;
const std::string hf_dir = std::string(SF_TEST_DATA_DIR) + "/hf/";

using sf_test::read_bytes;
using sf_test::read_text;

// A scratch directory, removed at the end.
struct scratch {
  fs::path dir = fs::temp_directory_path() / ("sf_hf_" + std::to_string(::getpid()));
  scratch() { fs::create_directories(dir); }
  ~scratch() { fs::remove_all(dir); }
};

// The reference value of element i of the file's tensor t, as the file stores it.
float file_value(const io::file& f, const io::tensor_info& t, std::size_t i) {
  const std::byte* p = f.data(t).data();
  if (t.type == io::dtype::F32) {
    float v;
    std::memcpy(&v, p + 4 * i, 4);
    return v;
  }
  std::uint16_t h;
  std::memcpy(&h, p + 2 * i, 2);
  if (t.type == io::dtype::BF16) {
    const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
  // F16 by its definition: (-1)^s 2^(e-15) (1 + m/1024), or 2^-14 m/1024 when e = 0
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double mag = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return static_cast<float>((h & 0x8000) ? -mag : mag);
}

TEST(HfLlama, ReadsTransformersDirectories) {
  struct expected {
    const char* name;
    const char* dtype;
    std::size_t kv;
    bool tied;
    double eps, theta;
  };
  for (const expected& x : {expected{"llama_gqa_f32", "F32", 2, false, 1e-5, 5000},
                            expected{"llama_tied_bf16", "BF16", 0, true, 1e-5, 10000},
                            expected{"llama_mqa_f16", "F16", 1, false, 1e-6, 10000}}) {
    SCOPED_TRACE(x.name);
    auto m = io::read_hf_llama(hf_dir + x.name);
    ASSERT_TRUE(m.is_ok()) << m.message();
    const sf::arch& a = m->arch;
    EXPECT_EQ(a.V, 512u);
    EXPECT_EQ(a.T, 64u);
    EXPECT_EQ(a.D, 32u);
    EXPECT_EQ(a.H, 4u);
    EXPECT_EQ(a.kv_heads, x.kv);
    EXPECT_EQ(a.L, 2u);
    EXPECT_EQ(a.F, 96u);
    EXPECT_EQ(a.tied, x.tied);
    EXPECT_EQ(a.norm_eps, x.eps);
    EXPECT_EQ(a.rope_base, x.theta);
    EXPECT_EQ(a.ffn, sf::ffn_kind::gated);
    EXPECT_EQ(a.activation, sf::activation_kind::silu);
    EXPECT_EQ(a.norm, sf::norm_kind::rmsnorm);
    EXPECT_EQ(a.position, sf::position_kind::rope);
    EXPECT_EQ(a.rope_pairs, sf::rope_pairs_kind::halves);
    EXPECT_FALSE(a.bias);
    EXPECT_EQ(m->dtype, x.dtype);
    ASSERT_TRUE(m->tokenizer.has_value());
    EXPECT_EQ(m->tokenizer->size(), 512u);
    // Every weight: ours [in, out] is the file's [out, in] transposed (the embedding and the
    // norms as they are), value for value.
    auto f = io::file::open(hf_dir + x.name + "/model.safetensors");
    ASSERT_TRUE(f.is_ok()) << f.message();
    const auto shapes = io::llama2c_tensor_shapes(a);
    ASSERT_EQ(m->tensors.size(), shapes.size());
    std::size_t checked = 0;
    for (const io::llama2c_tensor& t : m->tensors) {
      std::string theirs = t.name;
      bool transpose = t.shape.size() == 2 && t.name != "tok_emb.weight";
      auto sub = [&](const char* from, const char* to) {
        if (const std::size_t at = theirs.find(from); at != std::string::npos) theirs.replace(at, std::strlen(from), to);
      };
      sub("blocks.", "model.layers.");
      sub("attn.wq", "self_attn.q_proj.weight");
      sub("attn.wk", "self_attn.k_proj.weight");
      sub("attn.wv", "self_attn.v_proj.weight");
      sub("attn.wo", "self_attn.o_proj.weight");
      sub("ffn.w1", "mlp.gate_proj.weight");
      sub("ffn.w2", "mlp.down_proj.weight");
      sub("ffn.w3", "mlp.up_proj.weight");
      sub("norm1", "input_layernorm");
      sub("norm2", "post_attention_layernorm");
      sub("norm_f", "model.norm");
      sub("tok_emb", "model.embed_tokens");
      const io::tensor_info* i = f->find(theirs);
      ASSERT_NE(i, nullptr) << theirs;
      EXPECT_EQ(io::to_string(i->type), x.dtype);
      const std::size_t rows = t.shape[0], cols = t.shape.size() == 2 ? t.shape[1] : 1;
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) {
          const float want = file_value(*f, *i, transpose ? c * rows + r : r * cols + c);
          ASSERT_EQ(t.values[r * cols + c], want) << t.name << " [" << r << ", " << c << "]";
          ++checked;
        }
    }
    std::size_t total = 0;
    for (const io::llama2c_tensor& t : m->tensors) total += t.values.size();
    EXPECT_EQ(checked, total);
  }
}

TEST(HfLlama, HalfAndBfloat16ConvertExactly) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float got = io::detail::f16_to_float(bits);
    const int e = (h >> 10) & 0x1f;
    if (e == 0x1f) {
      EXPECT_TRUE((h & 0x3ff) ? std::isnan(got) : std::isinf(got)) << h;
      continue;
    }
    const int m = h & 0x3ff;
    const double mag = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
    ASSERT_EQ(got, static_cast<float>((h & 0x8000) ? -mag : mag)) << h;
    ASSERT_EQ(std::signbit(got), (h & 0x8000) != 0) << h;
  }
  EXPECT_EQ(io::detail::bf16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(io::detail::bf16_to_float(0xc2f7), -123.5f);
  EXPECT_EQ(io::detail::bf16_to_float(0x0001), std::ldexp(1.0f, -133));
}

// sentencepiece's tok512.model reads to the bytes tools/tokenizer_bin.py wrote from it (tok512.bin).
TEST(HfLlama, SentencepieceModelIsTokenizerBin) {
  auto t = io::read_sentencepiece_model(std::string(SF_TEST_DATA_DIR) + "/bpe/tok512.model");
  ASSERT_TRUE(t.is_ok()) << t.message();
  EXPECT_TRUE(t->serialize() == read_bytes(std::string(SF_TEST_DATA_DIR) + "/bpe/tok512.bin"));
}

TEST(HfLlama, RefusesBadSentencepieceModels) {
  const std::vector<std::byte> good = read_bytes(std::string(SF_TEST_DATA_DIR) + "/bpe/tok512.model");
  // Every prefix: read or refused, never out of bounds (the sanitizer build checks the reads).
  std::size_t refused = 0;
  for (std::size_t n = 0; n < good.size(); n += 7) {
    auto t = io::parse_sentencepiece_model(std::span(good.data(), n), "cut");
    if (!t) {
      ++refused;
      EXPECT_NE(std::string(t.message()).find("'cut': sentencepiece model: "), std::string::npos) << t.message();
    }
  }
  EXPECT_GT(refused, good.size() / 14);
  auto none = io::parse_sentencepiece_model({}, "empty");
  ASSERT_FALSE(none.is_ok());
  EXPECT_STREQ(none.message(), "'empty': sentencepiece model: fewer than 3 pieces (0)");
  // A length running past the end; a group (wire type 3); bos_id 0 (field 41 of the trainer spec).
  const std::vector<std::byte> past{std::byte{0x0a}, std::byte{0x7f}, std::byte{0x01}};
  EXPECT_NE(std::string(io::parse_sentencepiece_model(past, "x").message()).find("cut off or malformed at byte 0"),
            std::string::npos);
  const std::vector<std::byte> group{std::byte{0x0b}};
  EXPECT_FALSE(io::parse_sentencepiece_model(group, "x").is_ok());
  std::vector<std::byte> bos0 = good;
  const std::byte spec[] = {std::byte{0x12}, std::byte{0x03}, std::byte{0xc8}, std::byte{0x02}, std::byte{0x00}};
  bos0.insert(bos0.end(), std::begin(spec), std::end(spec));  // trainer_spec { bos_id: 0 } appended (merged)
  auto t = io::parse_sentencepiece_model(bos0, "bos0");
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(std::string(t.message()).find("BOS is id 0 and EOS 2; llama2.c's tokenizer (run.c) takes 1 and 2"),
            std::string::npos)
      << t.message();
}

TEST(HfLlama, RefusesBadConfigs) {
  const std::string good = read_text(hf_dir + "llama_gqa_f32/config.json");
  ASSERT_TRUE(io::hf_llama_config(good).is_ok());
  auto refused = [&](const std::string& from, const std::string& to, const std::string& message) {
    sf_test::expect_refused(io::hf_llama_config(sf_test::edited(good, from, to), "c.json"), message);
  };
  refused("\"model_type\": \"llama\"", "\"model_type\": \"gpt2\"", "'c.json': model_type is \"gpt2\": only Hugging Face's Llama");
  refused("\"hidden_act\": \"silu\"", "\"hidden_act\": \"gelu\"", "hidden_act is \"gelu\"");
  refused("\"hidden_size\": 32", "\"hidden_size\": 30", "num_attention_heads 4 does not divide hidden_size 30");
  refused("\"hidden_size\": 32", "\"hidden_size\": -32", "'hidden_size' is -32: expected a positive integer");
  refused("\"hidden_size\": 32", "\"hidden_size\": 3.5", "'hidden_size' is 3.5: expected a positive integer");
  refused("\"hidden_size\": 32", "\"width\": 32", "no field 'hidden_size'");
  refused("\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3", "num_key_value_heads 3 does not divide num_attention_heads 4");
  refused("\"rope_scaling\": null", "\"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}", "scaled RoPE is refused (only plain RoPE is read)");
  refused("\"attention_bias\": false", "\"attention_bias\": true", "biases are not read");
  refused("\"rms_norm_eps\": 1e-05", "\"rms_norm_eps\": \"small\"", "'rms_norm_eps' is \"small\": expected a positive number");
  refused("\"tie_word_embeddings\": false", "\"tie_word_embeddings\": 1", "tie_word_embeddings is 1: expected true or false");
  refused("\"num_attention_heads\": 4", "\"num_attention_heads\": 4, \"head_dim\": 16", "head_dim is 16");
  refused("\"hidden_size\": 32", "\"hidden_size\": 36, \"num_attention_heads_\": 4", "head size 9 is odd");
  EXPECT_STREQ(io::hf_llama_config("[1, 2]", "c.json").message(), "'c.json': not a JSON object");
  EXPECT_STREQ(io::hf_llama_config("{\"a\": ", "c.json").message(), "'c.json': not a JSON object");
}

TEST(HfLlama, RefusesBadDirectories) {
  scratch s;
  const std::string src = hf_dir + "llama_gqa_f32";
  auto f = io::file::open(src + "/model.safetensors");
  ASSERT_TRUE(f.is_ok()) << f.message();
  // A copy of the directory whose model.safetensors is rewritten by `edit` (tensor name, dtype,
  // shape, values).
  auto dir_with = [&](const std::string& name, auto edit) {
    const fs::path d = s.dir / name;
    fs::create_directories(d);
    fs::copy_file(src + "/config.json", d / "config.json");
    io::writer w;
    for (const io::tensor_info& t : f->tensors()) {
      std::string n = t.name;
      io::shape_t shape = t.shape;
      std::vector<float> v(t.elements());
      io::detail::convert(t.type, f->data(t), v.data(), v.size());
      if (!edit(n, shape, v)) continue;
      w.add(n, v, shape);
    }
    EXPECT_TRUE(w.write((d / "model.safetensors").string()).is_ok());
    return d.string();
  };
  auto refused = [&](const std::string& dir, const std::string& message) {
    sf_test::expect_refused(io::read_hf_llama(dir), message);
  };
  const std::string q = "model.layers.1.self_attn.q_proj.weight";
  refused(dir_with("missing", [&](std::string& n, io::shape_t&, std::vector<float>&) { return n != q; }),
          "missing tensor '" + q + "'");
  refused(dir_with("extra", [&](std::string& n, io::shape_t&, std::vector<float>&) {
            if (n == q) n = "model.layers.1.self_attn.q_bias";
            return true;
          }),
          "missing tensor '" + q + "'");
  refused(dir_with("shape", [&](std::string& n, io::shape_t& shape, std::vector<float>&) {
            if (n == q) shape = {64, 16};  // (the same count)
            return true;
          }),
          "tensor '" + q + "': expected shape [32, 32] (from ");
  refused(dir_with("nan", [&](std::string& n, io::shape_t&, std::vector<float>& v) {
            if (n == q) v[5] = std::nanf("");
            return true;
          }),
          "tensor '" + q + "': element [0, 5] is nan");
  const std::string extra_dir = dir_with("unexpected", [&](std::string& n, io::shape_t&, std::vector<float>&) {
    (void)n;
    return true;
  });
  {  // one tensor more than the architecture's
    io::writer w;
    for (const io::tensor_info& t : f->tensors()) {
      std::vector<float> v(t.elements());
      io::detail::convert(t.type, f->data(t), v.data(), v.size());
      w.add(t.name, v, t.shape);
    }
    w.add("model.layers.2.input_layernorm.weight", std::vector<float>(32, 1.0f), {32});
    ASSERT_TRUE(w.write(extra_dir + "/model.safetensors").is_ok());
  }
  refused(extra_dir, "unexpected tensor 'model.layers.2.input_layernorm.weight'");
  const fs::path none = s.dir / "none";
  fs::create_directories(none);
  fs::copy_file(src + "/config.json", none / "config.json");
  refused(none.string(), "no model.safetensors nor model.safetensors.index.json");
  std::ofstream(none / "model.safetensors.index.json") << "{}";
  refused(none.string(), "model.safetensors.index.json': no weight_map");
  refused((s.dir / "absent").string(), "cannot open '");
  EXPECT_TRUE(io::is_hf_directory(src));
  EXPECT_FALSE(io::is_hf_directory(src + "/config.json"));
  EXPECT_FALSE(io::is_hf_directory((s.dir / "absent").string()));
}

}  // namespace

// ------------------------------------------------------------------ writing

// Every directory of test/data/hf, read, written (float32) and read again: the same architecture,
// every weight bit, the same tokenizer; the config.json has transformers' fields.
TEST(HfLlama, WritesWhatItReads) {
  scratch s;
  for (const char* name : {"llama_gqa_f32", "llama_tied_bf16", "llama_mqa_f16"}) {
    auto m = io::read_hf_llama(hf_dir + name);
    ASSERT_TRUE(m.is_ok()) << m.message();
    ASSERT_TRUE(m->tokenizer.has_value());
    const std::string out = (s.dir / name).string();
    const sf::status w = io::write_hf_llama(out, m->arch, m->tensors, &*m->tokenizer);
    ASSERT_TRUE(w.is_ok()) << w.message();
    auto back = io::read_hf_llama(out);
    ASSERT_TRUE(back.is_ok()) << back.message();
    EXPECT_EQ(back->arch, m->arch) << name;
    EXPECT_EQ(back->dtype, "F32");
    ASSERT_EQ(back->tensors.size(), m->tensors.size());
    for (std::size_t i = 0; i < m->tensors.size(); ++i) {
      EXPECT_EQ(back->tensors[i].name, m->tensors[i].name);
      EXPECT_EQ(back->tensors[i].shape, m->tensors[i].shape);
      EXPECT_EQ(std::memcmp(back->tensors[i].values.data(), m->tensors[i].values.data(), 4 * m->tensors[i].values.size()), 0)
          << name << ": " << m->tensors[i].name;
    }
    ASSERT_TRUE(back->tokenizer.has_value());
    EXPECT_TRUE(back->tokenizer->serialize() == m->tokenizer->serialize()) << name;
    const std::string config = read_text(out + "/config.json");
    for (const char* field : {"\"architectures\": [\n    \"LlamaForCausalLM\"\n  ]", "\"model_type\": \"llama\"",
                              "\"torch_dtype\": \"float32\"", "\"num_key_value_heads\": ", "\"tie_word_embeddings\": "})
      EXPECT_NE(config.find(field), std::string::npos) << name << ": " << field << "\n" << config;
    EXPECT_EQ(fs::exists(out + "/model.safetensors.tmp"), false);
  }
}

// --dtype float16 / bfloat16: transformers' own float16, bfloat16 (and float32) directories written
// again in their dtype give its model.safetensors byte for byte; a float32 model's weights rounded to the
// nearest (ties to even) of either type, read back as exactly those values; a weight that would be
// ±inf refused with its tensor and element.
TEST(HfLlama, WritesFloat16AndBfloat16) {
  scratch s;
  for (const auto& [name, type, torch] : {std::tuple{"llama_tied_bf16", io::dtype::BF16, "bfloat16"},
                                          std::tuple{"llama_mqa_f16", io::dtype::F16, "float16"},
                                          std::tuple{"llama_gqa_f32", io::dtype::F32, "float32"}}) {
    auto m = io::read_hf_llama(hf_dir + name);
    ASSERT_TRUE(m.is_ok()) << m.message();
    const std::string out = (s.dir / (std::string(name) + ".again")).string();
    ASSERT_TRUE(io::write_hf_llama(out, m->arch, m->tensors, &*m->tokenizer, type).is_ok());
    EXPECT_TRUE(read_bytes(out + "/model.safetensors") == read_bytes(hf_dir + name + "/model.safetensors"))
        << name << ": model.safetensors is not transformers' own";
    EXPECT_NE(read_text(out + "/config.json").find(std::string("\"torch_dtype\": \"") + torch + "\""), std::string::npos);
    auto back = io::read_hf_llama(out);
    ASSERT_TRUE(back.is_ok()) << back.message();
    EXPECT_EQ(back->dtype, io::to_string(type));
  }
  auto f = io::read_hf_llama(hf_dir + "llama_gqa_f32");
  ASSERT_TRUE(f.is_ok()) << f.message();
  for (const io::dtype type : {io::dtype::F16, io::dtype::BF16}) {
    const std::string out = (s.dir / (std::string("gqa.") + io::to_string(type))).string();
    ASSERT_TRUE(io::write_hf_llama(out, f->arch, f->tensors, nullptr, type).is_ok());
    auto back = io::read_hf_llama(out);
    ASSERT_TRUE(back.is_ok()) << back.message();
    std::size_t rounded = 0;
    for (std::size_t k = 0; k < f->tensors.size(); ++k)
      for (std::size_t i = 0; i < f->tensors[k].values.size(); ++i) {
        const float x = f->tensors[k].values[i];
        const float want = type == io::dtype::F16 ? io::detail::f16_to_float(io::detail::float_to_f16(x))
                                                  : io::detail::bf16_to_float(io::detail::float_to_bf16(x));
        ASSERT_EQ(back->tensors[k].values[i], want) << io::to_string(type) << " " << f->tensors[k].name << " " << i;
        rounded += want != x;
      }
    EXPECT_GT(rounded, 0u);
  }
  auto big = f->tensors;
  big[3].values[5] = 70000.0f;  // float16's largest is 65504
  const auto refused = io::hf_llama_directory(f->arch, big, nullptr, io::dtype::F16);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(std::string(refused.message()).find("tensor '" + big[3].name + "': element "), std::string::npos) << refused.message();
  EXPECT_NE(std::string(refused.message()).find("is beyond F16's range"), std::string::npos) << refused.message();
  EXPECT_TRUE(io::hf_llama_directory(f->arch, big, nullptr, io::dtype::BF16).is_ok());
  EXPECT_FALSE(io::hf_llama_directory(f->arch, big, nullptr, io::dtype::I32).is_ok());
}

// Sharded as transformers' save_pretrained(max_shard_size=...): llama_tied_bf16 written bfloat16 with
// shards of at most 40 KB gives llama_tied_bf16_sharded's three shards and its index byte for byte
// (transformers' own, save_pretrained(max_shard_size="40KB")); read back, every weight bit. Writing
// the other form into the same directory removes the first one's weights; a shard size below every
// tensor puts each tensor in a shard of its own.
TEST(HfLlama, WritesShardsAsTransformers) {
  scratch s;
  auto m = io::read_hf_llama(hf_dir + "llama_tied_bf16");
  ASSERT_TRUE(m.is_ok()) << m.message();
  const std::string out = (s.dir / "sharded").string(), ref = hf_dir + "llama_tied_bf16_sharded/";
  ASSERT_EQ(io::hf_shard_size("40KB"), std::optional<std::uint64_t>(40000));
  ASSERT_TRUE(io::write_hf_llama(out, m->arch, m->tensors, &*m->tokenizer, io::dtype::BF16, 40000).is_ok());
  for (const char* f : {"model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                        "model-00003-of-00003.safetensors", "model.safetensors.index.json"})
    EXPECT_TRUE(read_bytes(out + "/" + f) == read_bytes(ref + f)) << f << " is not transformers' own";
  EXPECT_FALSE(fs::exists(out + "/model.safetensors"));
  auto back = io::read_hf_llama(out);
  ASSERT_TRUE(back.is_ok()) << back.message();
  EXPECT_EQ(back->weights_file, "model.safetensors.index.json");
  ASSERT_EQ(back->tensors.size(), m->tensors.size());
  for (std::size_t i = 0; i < m->tensors.size(); ++i) EXPECT_TRUE(back->tensors[i].values == m->tensors[i].values) << m->tensors[i].name;

  // the one-file form over it: the shards and the index go; then shards again over that
  ASSERT_TRUE(io::write_hf_llama(out, m->arch, m->tensors, &*m->tokenizer, io::dtype::BF16).is_ok());
  EXPECT_TRUE(read_bytes(out + "/model.safetensors") == read_bytes(hf_dir + "llama_tied_bf16/model.safetensors"));
  for (const char* f : {"model-00001-of-00003.safetensors", "model.safetensors.index.json"}) EXPECT_FALSE(fs::exists(out + "/" + f)) << f;
  ASSERT_TRUE(io::write_hf_llama(out, m->arch, m->tensors, nullptr, io::dtype::F32, 1).is_ok());
  EXPECT_FALSE(fs::exists(out + "/model.safetensors"));
  const std::size_t n = m->tensors.size();  // 20 (tied: no lm_head)
  std::size_t shards = 0;
  for (const auto& e : fs::directory_iterator(out)) shards += io::is_hf_shard_name(e.path().filename().string());
  EXPECT_EQ(shards, n);
  auto index = io::parse_hf_weight_index(read_text(out + "/model.safetensors.index.json"));
  ASSERT_TRUE(index.is_ok()) << index.message();
  EXPECT_EQ(index->shards.size(), n);
  std::uint64_t total = 0;
  for (const auto& t : m->tensors) total += 4 * t.values.size();
  EXPECT_EQ(index->total_size, std::optional<std::uint64_t>(total));
  back = io::read_hf_llama(out);
  ASSERT_TRUE(back.is_ok()) << back.message();
  for (std::size_t i = 0; i < n; ++i) EXPECT_TRUE(back->tensors[i].values == m->tensors[i].values) << m->tensors[i].name;
  // ... and a write in fewer shards removes the shards it does not overwrite
  ASSERT_TRUE(io::write_hf_llama(out, m->arch, m->tensors, nullptr, io::dtype::BF16, 40000).is_ok());
  shards = 0;
  for (const auto& e : fs::directory_iterator(out)) shards += io::is_hf_shard_name(e.path().filename().string());
  EXPECT_EQ(shards, 3u);
  EXPECT_TRUE(io::read_hf_llama(out).is_ok());
}

// transformers' max_shard_size texts (convert_file_size_to_int), and shard names.
TEST(HfLlama, ShardSizesAndNames) {
  using u = std::optional<std::uint64_t>;
  EXPECT_EQ(io::hf_shard_size("10GB"), u(10'000'000'000));
  EXPECT_EQ(io::hf_shard_size("5gB"), u(5'000'000'000));
  EXPECT_EQ(io::hf_shard_size("5gb"), u(625'000'000));  // a final lower-case b: bits
  EXPECT_EQ(io::hf_shard_size("5Gb"), u(625'000'000));
  EXPECT_EQ(io::hf_shard_size("8kb"), u(1000));
  EXPECT_EQ(io::hf_shard_size("1MiB"), u(1u << 20));
  EXPECT_EQ(io::hf_shard_size("2gib"), u(std::uint64_t{2} << 30));
  EXPECT_EQ(io::hf_shard_size("3KiB"), u(3072));
  EXPECT_EQ(io::hf_shard_size("40KB"), u(40000));
  EXPECT_EQ(io::hf_shard_size("123"), u(123));  // (bytes: transformers takes an integer so, not as text)
  // (Python's int() would take "-1GB" and " 5GB": a size here is digits and a unit only)
  for (const char* bad : {"", "GB", "KiB", "1.5GB", "-1GB", " 5GB", "5 GB", "5TB", "5B", "0x10", "99999999999999999999",
                          "18446744073709551615GB"})
    EXPECT_EQ(io::hf_shard_size(bad), std::nullopt) << bad;
  EXPECT_TRUE(io::is_hf_shard_name("model-00001-of-00003.safetensors"));
  for (const char* not_one : {"model.safetensors", "model-0001-of-00003.safetensors", "model-00001-of-00003.safetensor",
                              "model-0000a-of-00003.safetensors", "xmodel-00001-of-00003.safetensors"})
    EXPECT_FALSE(io::is_hf_shard_name(not_one)) << not_one;
}

// llama2.c's model (adjacent RoPE pairs) is written with Hugging Face's halves: read back, its
// q/k columns permuted back give the original weights bit for bit; everything else is unchanged.
TEST(HfLlama, WritesAdjacentPairsAsHalves) {
  scratch s;
  auto m = io::read_llama2c(std::string(SF_TEST_DATA_DIR) + "/llama2c/runc_gqa.v0.bin");
  ASSERT_TRUE(m.is_ok()) << m.message();
  ASSERT_EQ(m->arch.rope_pairs, sf::rope_pairs_kind::adjacent);
  const std::string out = (s.dir / "runc_gqa").string();
  ASSERT_TRUE(io::write_hf_llama(out, m->arch, m->tensors, nullptr).is_ok());
  EXPECT_FALSE(fs::exists(out + "/tokenizer.model"));  // (no tokenizer given)
  auto back = io::read_hf_llama(out);
  ASSERT_TRUE(back.is_ok()) << back.message();
  EXPECT_EQ(back->arch.rope_pairs, sf::rope_pairs_kind::halves);
  bool some_q_differs = false;
  for (std::size_t i = 0; i < m->tensors.size(); ++i)
    if (m->tensors[i].name.find("attn.wq") != std::string::npos)
      some_q_differs = some_q_differs || back->tensors[i].values != m->tensors[i].values;
  EXPECT_TRUE(some_q_differs) << "the halves layout is a permutation of W_q's columns";
  sf::arch a = back->arch;
  ASSERT_TRUE(io::convert_rope_pairs(a, back->tensors, sf::rope_pairs_kind::adjacent).is_ok());
  EXPECT_EQ(a, m->arch);
  for (std::size_t i = 0; i < m->tensors.size(); ++i)
    EXPECT_TRUE(back->tensors[i].values == m->tensors[i].values) << m->tensors[i].name;
}

// tokenizer.bin → tokenizer.model → tokenizer.bin: the same bytes (test/data/bpe/tok512.bin); the
// written model carries sentencepiece's types (control, byte, unknown, normal).
TEST(HfLlama, SentencepieceModelWrittenAndReadBack) {
  auto t = io::tokenizer_bin::open(std::string(SF_TEST_DATA_DIR) + "/bpe/tok512.bin", 512);
  ASSERT_TRUE(t.is_ok()) << t.message();
  const std::vector<std::byte> model = io::sentencepiece_model_bytes(*t);
  auto back = io::parse_sentencepiece_model(model, "written");
  ASSERT_TRUE(back.is_ok()) << back.message();
  EXPECT_TRUE(back->serialize() == t->serialize());
  const io::tokenizer_bin::sentencepiece_vocab v = t->to_sentencepiece();
  EXPECT_EQ(v.pieces[0], "<unk>");
  EXPECT_EQ(v.types[0], 2);
  EXPECT_EQ(v.pieces[1], "<s>");
  EXPECT_EQ(v.types[1], 3);
  EXPECT_EQ(v.pieces[2], "</s>");
  EXPECT_EQ(v.types[2], 3);
  EXPECT_EQ(v.pieces[3], "<0x00>");
  EXPECT_EQ(v.types[3], 6);
  std::size_t spaces = 0;
  for (std::size_t i = 0; i < v.pieces.size(); ++i) {
    EXPECT_EQ(v.pieces[i].find(' '), std::string::npos) << i;
    spaces += v.pieces[i].find("\xe2\x96\x81") != std::string::npos;
  }
  EXPECT_GT(spaces, 10u);
}

TEST(HfLlama, WriterRefuses) {
  scratch s;
  auto m = io::read_hf_llama(hf_dir + "llama_gqa_f32");
  ASSERT_TRUE(m.is_ok()) << m.message();
  auto t = io::tokenizer_bin::from_pieces({"<unk>", "\n<s>\n", "\n</s>\n", "a"}, {0, 0, 0, -1});
  ASSERT_TRUE(t.is_ok()) << t.message();
  auto r = io::hf_llama_directory(m->arch, m->tensors, &*t);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(std::string(r.message()).find("the tokenizer has 4 pieces; the vocabulary is 512"), std::string::npos) << r.message();
  sf::arch gpt = m->arch;
  gpt.ffn = sf::ffn_kind::mlp;
  r = io::hf_llama_directory(gpt, m->tensors, nullptr);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(std::string(r.message()).find("Hugging Face's Llama is gated silu, rmsnorm, rope, without bias"), std::string::npos)
      << r.message();
  auto fewer = m->tensors;
  fewer.pop_back();
  r = io::hf_llama_directory(m->arch, fewer, nullptr);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(std::string(r.message()).find("tensors of"), std::string::npos) << r.message();
  EXPECT_FALSE(fs::exists(s.dir / "x"));
}
