// int8 (Q8_0) checkpoints (io/quantized.hpp): round trip (every byte of the packed weights),
// the documented names, dtypes and shapes, and every refusal with its message.
#include "helpers.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "staticformer/init.hpp"
#include "staticformer/quantize.hpp"

using namespace sf_test;

namespace {

template <sf::config C>
void random_quantized(sf::params<C, sf::int8>& q, std::uint64_t seed) {
  static sf::params<C> p;
  sf::init_params(p, seed, 0.2);
  sf::visit([&](const sf::param_name&, auto& t) {  // biases and norms away from 0 / 1 too
    for (std::size_t i = 0; i < t.size; ++i) t[i] += 0.01f * static_cast<float>(i % 7);
  }, p);
  sf::quantize(q, p);
}

// Rewrites the tensors of `from` into `path`, each passed through `edit(name, dtype, shape, bytes)`
// (which may change them; returning false drops the tensor), with `metadata`.
void rewrite(const sf::io::file& from, const std::string& path, const sf::io::metadata_map& metadata,
             const std::function<bool(const std::string&, sf::io::dtype&, sf::io::shape_t&, std::vector<std::byte>&)>&
                 edit) {
  sf::io::writer w;
  w.set_metadata(metadata);
  for (const auto& t : from.tensors()) {
    auto bytes = std::vector<std::byte>(from.data(t).begin(), from.data(t).end());
    sf::io::dtype type = t.type;
    sf::io::shape_t shape = t.shape;
    if (!edit(t.name, type, shape, bytes)) continue;
    w.add(t.name, type, shape, bytes.data());
  }
  ASSERT_TRUE(w.write(path));
}

}  // namespace

TEST(QuantizedCheckpoint, RoundTripNamesAndDecoder) {
  static constexpr sf::config C = sf::configs::ref_llama;  // untied: tok_emb and lm_head both int8
  static sf::params<C, sf::int8> q, back;
  random_quantized<C>(q, 5);
  const std::string path = tmp("q8.safetensors");
  ASSERT_TRUE(sf::io::save_quantized<C>(path, q, {{"tokenizer", "abc"}}));
  auto f = sf::io::file::open(path);
  ASSERT_TRUE(f) << f.message();
  EXPECT_TRUE(sf::io::is_quantized(*f));
  EXPECT_EQ(*f->metadata("quantization"), "q8_0");
  EXPECT_EQ(*f->metadata("tokenizer"), "abc");
  // the documented layout: [out, in] for weights, the table's own shape for embeddings
  const auto* w1 = f->find("blocks.0.ffn.w1.q8");
  ASSERT_NE(w1, nullptr);
  EXPECT_EQ(w1->type, sf::io::dtype::I8);
  EXPECT_EQ(w1->shape, (sf::io::shape_t{C.F, C.D}));
  const auto* w1s = f->find("blocks.0.ffn.w1.scale");
  ASSERT_NE(w1s, nullptr);
  EXPECT_EQ(w1s->type, sf::io::dtype::F32);
  EXPECT_EQ(w1s->shape, (sf::io::shape_t{C.F, (C.D + 31) / 32}));
  EXPECT_EQ(f->find("tok_emb.weight.q8")->shape, (sf::io::shape_t{C.V, C.D}));
  EXPECT_EQ(f->find("lm_head.weight.q8")->shape, (sf::io::shape_t{C.V, C.D}));
  EXPECT_EQ(f->find("blocks.2.ffn.w2.scale")->shape, (sf::io::shape_t{C.D, (C.F + 31) / 32}));
  EXPECT_EQ(f->find("norm_f.weight")->type, sf::io::dtype::F32);
  EXPECT_EQ(f->find("blocks.0.attn.wq"), nullptr);
  // the value of element (k, n) of a weight is q[n, k] · scale[n, k/32]
  {
    std::vector<float> W(C.D * C.F);
    sf::kernels::q8::dequantize(W.data(), q.blocks[0].ffn.w1.m);
    const auto qb = f->data(*w1);
    const auto sb = f->data(*w1s);
    for (std::size_t n : {0ul, 7ul, C.F - 1})
      for (std::size_t k : {0ul, 33ul, C.D - 1}) {
        float s;
        std::memcpy(&s, sb.data() + (n * ((C.D + 31) / 32) + k / 32) * 4, 4);
        EXPECT_EQ(W[k * C.F + n], static_cast<float>(static_cast<std::int8_t>(qb[n * C.D + k])) * s);
      }
  }
  ASSERT_TRUE(sf::io::load_quantized<C>(*f, back));
  sf::visit_alike([](const sf::param_name& n, const auto& a, const auto& b) {
    EXPECT_EQ(0, std::memcmp(&a, &b, sizeof(a))) << n.c_str();
  }, q, back);
}

TEST(QuantizedCheckpoint, TiedEmbeddingIsTheHead) {
  static constexpr sf::config C = sf::configs::ref_gpt2;
  static sf::params<C, sf::int8> q, back;
  random_quantized<C>(q, 6);
  const std::string path = tmp("q8-tied.safetensors");
  ASSERT_TRUE(sf::io::save_quantized<C>(path, q));
  auto f = sf::io::file::open(path);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->find("lm_head.weight.q8"), nullptr);
  EXPECT_EQ(f->find("pos_emb.weight.q8")->shape, (sf::io::shape_t{C.T, C.D}));
  ASSERT_TRUE(sf::io::load_quantized<C>(path, back));
}

TEST(QuantizedCheckpoint, Refusals) {
  static constexpr sf::config C = sf::configs::ref_llama;
  static sf::params<C, sf::int8> q, target;
  static sf::params<C> p;
  random_quantized<C>(q, 7);
  const std::string good = tmp("q8-good.safetensors"), bad = tmp("q8-bad.safetensors");
  ASSERT_TRUE(sf::io::save_quantized<C>(good, q));
  auto f = sf::io::file::open(good);
  ASSERT_TRUE(f);
  auto expect_refused = [&](const std::string& what) {
    random_quantized<C>(target, 9);
    static sf::params<C, sf::int8> before;
    before = target;
    const sf::status s = sf::io::load_quantized<C>(bad, target);
    EXPECT_FALSE(s);
    EXPECT_NE(std::string(s.message()).find(what), std::string::npos) << s.message();
    EXPECT_EQ(0, std::memcmp(&before, &target, sizeof(target))) << "changed on error";
  };
  // a float checkpoint
  sf::init_params(p, 1);
  ASSERT_TRUE(sf::io::save_params<C>(bad, p));
  expect_refused("not an int8 checkpoint");
  // another configuration
  {
    auto m = f->metadata();
    m["n_layers"] = "2";
    rewrite(*f, bad, m, [](auto&, auto&, auto&, auto&) { return true; });
    expect_refused("n_layers");
  }
  // a missing tensor, an unexpected one
  rewrite(*f, bad, f->metadata(), [](const std::string& n, auto&, auto&, auto&) { return n != "blocks.1.attn.wk.scale"; });
  expect_refused("missing tensor 'blocks.1.attn.wk.scale'");
  rewrite(*f, bad, f->metadata(), [](const std::string& n, auto&, auto& shape, auto&) {
    if (n == "norm_f.weight") shape = {C.D / 2, 2};
    return true;
  });
  expect_refused("tensor 'norm_f.weight': expected shape [48], found [24, 2]");
  // an int8 value of -128, a negative scale, a float dtype for int8 values
  rewrite(*f, bad, f->metadata(), [](const std::string& n, auto&, auto&, auto& bytes) {
    if (n == "blocks.0.attn.wq.q8") bytes[17] = std::byte{0x80};
    return true;
  });
  expect_refused("-128");
  rewrite(*f, bad, f->metadata(), [](const std::string& n, auto&, auto&, auto& bytes) {
    if (n == "blocks.0.ffn.w2.scale") {
      const float neg = -1.0f;
      std::memcpy(bytes.data() + 4, &neg, 4);
    }
    return true;
  });
  expect_refused("negative or not finite");
  rewrite(*f, bad, f->metadata(), [](const std::string& n, auto&, auto&, auto& bytes) {
    if (n == "blocks.0.ffn.w1.scale") {  // finite, but 127 × it overflows (found by fuzz_safetensors_params)
      const float huge = 1.8e37f;
      std::memcpy(bytes.data() + 8, &huge, 4);
    }
    return true;
  });
  expect_refused("tensor 'blocks.0.ffn.w1.scale': a scale is negative or not finite, or 127 times it is not");
  // a float vector (a norm's gain) that is not finite
  rewrite(*f, bad, f->metadata(), [](const std::string& n, auto&, auto&, auto& bytes) {
    if (n == "blocks.1.norm2.weight") {
      const float inf = std::numeric_limits<float>::infinity();
      std::memcpy(bytes.data() + 3 * 4, &inf, 4);
    }
    return true;
  });
  expect_refused("tensor 'blocks.1.norm2.weight': element [3] is inf (weights must be finite)");
  rewrite(*f, bad, f->metadata(), [](const std::string& n, auto& type, auto& shape, auto& bytes) {
    if (n == "lm_head.weight.q8") {
      type = sf::io::dtype::F32;
      bytes.resize(bytes.size() * 4);
      (void)shape;
    }
    return true;
  });
  expect_refused("tensor 'lm_head.weight.q8': expected dtype I8, found F32");
  // the float loader says what it expected
  const sf::status s = sf::io::load_params<C>(good, p);
  EXPECT_FALSE(s);
}
