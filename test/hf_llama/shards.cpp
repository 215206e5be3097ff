// Sharded Hugging Face weights (model.safetensors.index.json and its shards, written by transformers'
// save_pretrained(max_shard_size="40KB"): test/data/hf/README.md) against the same model saved whole:
// every tensor bit for bit, and every kind of bad index refused with its message. Part of
// test_hf_llama (test/CMakeLists.txt).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../file_bytes.hpp"
#include "../refusals.hpp"
#include "staticformer/io/hf_llama.hpp"
#include "staticformer/io/safetensors.hpp"

namespace {

namespace io = sf::io;
namespace fs = std::filesystem;
const std::string hf_dir = std::string(SF_TEST_DATA_DIR) + "/hf/";
const std::string index_name = "model.safetensors.index.json";

struct scratch {
  fs::path dir = fs::temp_directory_path() / ("sf_hf_shards_" + std::to_string(::getpid()));
  scratch() { fs::create_directories(dir); }
  ~scratch() { fs::remove_all(dir); }
};

TEST(HfLlamaShards, EveryTensorAsTheWholeFile) {
  auto whole = io::read_hf_llama(hf_dir + "llama_tied_bf16");
  auto sharded = io::read_hf_llama(hf_dir + "llama_tied_bf16_sharded");
  ASSERT_TRUE(whole.is_ok()) << whole.message();
  ASSERT_TRUE(sharded.is_ok()) << sharded.message();
  EXPECT_EQ(whole->weights_file, "model.safetensors");
  EXPECT_EQ(sharded->weights_file, index_name);
  EXPECT_EQ(sharded->tokenizer_file, "tokenizer.model");
  // three shards, as transformers wrote them
  std::size_t shards = 0;
  for (const auto& e : fs::directory_iterator(hf_dir + "llama_tied_bf16_sharded"))
    shards += e.path().filename().string().starts_with("model-0000");
  EXPECT_EQ(shards, 3u);
  EXPECT_TRUE(sharded->arch == whole->arch);
  EXPECT_EQ(sharded->dtype, "BF16");
  ASSERT_EQ(sharded->tensors.size(), whole->tensors.size());
  for (std::size_t i = 0; i < whole->tensors.size(); ++i) {
    const io::llama2c_tensor &a = whole->tensors[i], &b = sharded->tensors[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.shape, b.shape);
    ASSERT_EQ(a.values.size(), b.values.size()) << a.name;
    EXPECT_EQ(std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)), 0) << a.name;
  }
  ASSERT_TRUE(sharded->tokenizer && whole->tokenizer);
  EXPECT_TRUE(sharded->tokenizer->serialize() == whole->tokenizer->serialize());
}

TEST(HfLlamaShards, RefusesBadIndexes) {
  scratch s;
  const std::string src = hf_dir + "llama_tied_bf16_sharded";
  const std::string good = sf_test::read_text(src + "/" + index_name);
  const std::string one = "model-00001-of-00003.safetensors", two = "model-00002-of-00003.safetensors",
                    three = "model-00003-of-00003.safetensors";
  int made = 0;
  // A copy of the directory whose index is `index` (and whose shard `drop`, if any, is absent).
  auto dir_with = [&](const std::string& index, const std::string& drop = "") {
    const fs::path d = s.dir / std::to_string(made++);
    fs::create_directories(d);
    for (const auto& e : fs::directory_iterator(src))
      if (e.path().filename() != drop && e.path().filename() != index_name) fs::copy_file(e.path(), d / e.path().filename());
    std::ofstream(d / index_name, std::ios::binary) << index;
    return d.string();
  };
  auto edited = [&](const std::string& from, const std::string& to) { return sf_test::edited(good, from, to); };
  auto refused = [&](const std::string& dir, const std::string& message) {
    sf_test::expect_refused(io::read_hf_llama(dir), message);
  };
  ASSERT_TRUE(io::read_hf_llama(dir_with(good)).is_ok());
  const std::string emb = "\"model.embed_tokens.weight\": \"" + one + "\"";
  // a shard missing
  refused(dir_with(good, three), "shard '" + three + "' is not a file in '");
  // a tensor in another shard than the index says
  refused(dir_with(edited(emb, "\"model.embed_tokens.weight\": \"" + two + "\"")),
          one + "': tensor 'model.embed_tokens.weight' is in this shard, but '");
  // a tensor the index does not name; a name the shards do not hold
  refused(dir_with(edited(emb + ",", "")), "tensor 'model.embed_tokens.weight' is not in the weight_map of '");
  refused(dir_with(edited(emb, emb + ", \"model.layers.2.input_layernorm.weight\": \"" + two + "\"")),
          "tensor 'model.layers.2.input_layernorm.weight' is mapped to '" + two + "', which does not hold it");
  // a tensor named twice in the map; a tensor in two shards
  refused(dir_with(edited(emb, emb + ", " + emb)), "'model.embed_tokens.weight' is named twice in one object");
  {
    const std::string d = dir_with(edited(emb, emb + ", \"z.weight\": \"z.safetensors\""));
    auto f = io::file::open(src + "/" + three);
    ASSERT_TRUE(f.is_ok()) << f.message();
    io::writer w;
    w.add("z.weight", std::vector<float>{1.0f}, {1});
    const io::tensor_info* norm = f->find("model.norm.weight");
    ASSERT_NE(norm, nullptr);
    std::vector<float> v(norm->elements());
    io::detail::convert(norm->type, f->data(*norm), v.data(), v.size());
    w.add("model.norm.weight", v, norm->shape);
    ASSERT_TRUE(w.write(d + "/z.safetensors").is_ok());
    refused(d, "tensor 'model.norm.weight' is in two shards, '");
  }
  // shard names outside the directory
  for (const std::string& bad : std::vector<std::string>{"../" + one, "..", "sub/" + one, "/tmp/" + one, ""})
    refused(dir_with(edited(emb, "\"model.embed_tokens.weight\": \"" + bad + "\"")),
            "a shard must be a file name in the model's directory");
  refused(dir_with(edited(emb, "\"model.embed_tokens.weight\": 1")), "is mapped to 1: expected a file name");
  // not JSON, cut off, too deep, no weight_map, a wrong total
  refused(dir_with(good.substr(0, good.size() / 2)), index_name + "': not valid JSON: ");
  refused(dir_with(""), index_name + "': not valid JSON: ");
  refused(dir_with("[1]"), index_name + "': not a JSON object");
  refused(dir_with("{\"weight_map\": " + std::string(100, '[') + std::string(100, ']') + "}"), "nests deeper than 64 levels");
  refused(dir_with("{\"metadata\": {}}"), "no weight_map (an object: tensor name");
  refused(dir_with(edited("\"total_size\": 86336", "\"total_size\": 86337")),
          "metadata.total_size is 86337; the shards' tensors hold 86336 bytes");
  refused(dir_with(edited("\"total_size\": 86336", "\"total_size\": -1")), "metadata.total_size is -1: expected a non-negative integer");
  // a shard that is not a safetensors file
  {
    const std::string d = dir_with(good);
    std::ofstream(d + "/" + two, std::ios::binary | std::ios::trunc) << "not safetensors";
    refused(d, "shard '" + two + "': ");
  }
  // model.safetensors beside the index: read, the index not (transformers' from_pretrained prefers it too)
  {
    const std::string d = dir_with("not even JSON");
    fs::copy_file(hf_dir + "llama_tied_bf16/model.safetensors", d + "/model.safetensors");
    auto m = io::read_hf_llama(d);
    ASSERT_TRUE(m.is_ok()) << m.message();
    EXPECT_EQ(m->weights_file, "model.safetensors");
  }
  // the index's parser alone: every prefix of the good index refused or read, never a crash
  for (std::size_t n = 0; n <= good.size(); n += 5) {
    auto i = io::parse_hf_weight_index(std::string_view(good).substr(0, n), "cut");
    if (i) {
      EXPECT_GE(n + 2, good.size()) << n;  // (only the whole text, its newline aside)
    }
  }
  auto i = io::parse_hf_weight_index(good);
  ASSERT_TRUE(i.is_ok()) << i.message();
  EXPECT_EQ(i->weight_map.size(), 20u);
  EXPECT_EQ(i->shards, (std::vector<std::string>{one, two, three}));
  EXPECT_EQ(i->total_size, 86336u);
}

}  // namespace
