// Tests of staticformer/io/safetensors.hpp, continued: the golden files written by
// tools/make_golden.py and bytes written by the reference safetensors implementation.
// Part of the test_safetensors program (see test/test_safetensors.cpp).
#include "helpers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

using namespace sf_test;

// ----------------------------------------------------------------------------- golden files

namespace {
using names_t = std::vector<std::pair<std::string, sf::io::shape_t>>;

// The expected file of one variant: logits, loss, losses, grad.<P> (and after.<P>) with P's shape.
void check_expected(const std::string& stem, const sf::config& c, const names_t& params,
                    const std::vector<std::int32_t>& targets, const std::vector<std::uint8_t>& padding) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    kept += targets[i] != -1;
    EXPECT_TRUE(!padding[i] || targets[i] == -1) << "a padding token has a target at " << i;
  }
  EXPECT_GT(kept, 0u);

  auto e = sf::io::file::open(stem + ".expected.safetensors");
  ASSERT_TRUE(e) << e.message();
  auto expect_tensor = [&](const std::string& n, dtype type, const sf::io::shape_t& shape) {
    const sf::io::tensor_info* t = e->find(n);
    ASSERT_NE(t, nullptr) << n;
    EXPECT_EQ(t->type, type) << n;
    EXPECT_EQ(t->shape, shape) << n;
  };
  expect_tensor("logits", dtype::F64, {c.B, c.T, c.V});
  expect_tensor("loss", dtype::F64, {1});
  expect_tensor("losses", dtype::F64, {3});
  ASSERT_NE(e->metadata("after"), nullptr);
  const bool has_after = *e->metadata("after") == "true";
  for (const auto& [name, shape] : params) {
    expect_tensor("grad." + name, dtype::F32, shape);
    if (has_after) expect_tensor("after." + name, dtype::F32, shape);
  }
  EXPECT_EQ(e->tensors().size(), 3 + params.size() * (has_after ? 2 : 1));
  auto loss = sf::io::read_f64(*e, "loss");
  auto losses = sf::io::read_f64(*e, "losses");
  ASSERT_TRUE(loss && losses);
  EXPECT_EQ((*loss)[0], (*losses)[0]);
  EXPECT_GT((*losses)[0], (*losses)[2]);  // three AdamW steps on one batch lower its loss
  auto logits = sf::io::read_f64(*e, "logits");
  ASSERT_TRUE(logits);
  for (double v : *logits) ASSERT_TRUE(std::isfinite(v));
}

template <sf::config C>
void check_golden(const std::string& name, int expected_variants) {
  SCOPED_TRACE(name);
  auto p = std::make_unique<sf::params<C>>();
  sf::status s = sf::io::load_params<C>(golden_dir + name + ".model.safetensors", *p);
  ASSERT_TRUE(s) << s.message();
  const names_t params = names_and_shapes(*p);
  EXPECT_EQ(params.size(), sf::tensor_count<sf::params<C>>);
  // Every value is random: none is exactly 0 (the file really held them).
  const std::vector<double> values = flatten(*p);
  EXPECT_EQ(std::count(values.begin(), values.end(), 0.0), 0);
  int variants = 0;
  for (std::string pad : {"none", "left", "right"}) {
    const std::string stem = golden_dir + name + "-" + pad;
    if (!fs::exists(stem + ".expected.safetensors")) continue;
    ++variants;
    SCOPED_TRACE(pad);
    sf::tokens_t<C> tokens;
    sf::targets_t<C> targets;
    sf::padding_t<C> padding;
    bool has_padding = true;
    s = sf::io::load_batch<C>(stem + ".batch.safetensors", tokens, targets, &padding, has_padding);
    ASSERT_TRUE(s) << s.message();
    EXPECT_EQ(has_padding, pad != "none");
    check_expected(stem, C, params, std::vector<std::int32_t>(targets.begin(), targets.end()),
                   std::vector<std::uint8_t>(padding.begin(), padding.end()));
  }
  EXPECT_EQ(variants, expected_variants);
}
}  // namespace

TEST(SafetensorsGolden, RefGpt2) { check_golden<sf::configs::ref_gpt2>("ref-gpt2", 3); }
TEST(SafetensorsGolden, RefLlama) { check_golden<sf::configs::ref_llama>("ref-llama", 3); }
TEST(SafetensorsGolden, RefVaswani) { check_golden<sf::configs::ref_vaswani>("ref-vaswani", 3); }
TEST(SafetensorsGolden, Nano) { check_golden<sf::configs::nano>("nano", 3); }

TEST(SafetensorsGolden, FullyPaddedRowInRefLlamaLeft) {
  constexpr sf::config C = sf::configs::ref_llama;
  sf::tokens_t<C> tokens;
  sf::targets_t<C> targets;
  sf::padding_t<C> padding;
  bool has_padding = false;
  ASSERT_TRUE(sf::io::load_batch<C>(golden_dir + "ref-llama-left.batch.safetensors", tokens, targets, &padding,
                                    has_padding));
  ASSERT_TRUE(has_padding);
  for (std::size_t t = 0; t < C.T; ++t) EXPECT_EQ(padding(1, t), 1) << t;
  EXPECT_EQ(padding(0, 3), 1);
  EXPECT_EQ(padding(0, 4), 0);
}

TEST(SafetensorsGolden, ModelFileMismatchesAnotherConfig) {
  auto p = std::make_unique<sf::params<sf::configs::nano>>();
  sf::status s = sf::io::load_params<sf::configs::nano>(golden_dir + "ref-gpt2.model.safetensors", *p);
  EXPECT_MESSAGE(s,
               "metadata 'context': expected \"64\", found \"16\"; metadata 'd_model': expected \"64\", found \"32\"; "
               "metadata 'd_ff': expected \"256\", found \"128\"");
}

// ----------------------------------------------------------------------------- interoperability

// Bytes produced by the reference implementation (huggingface/safetensors, its serializer's
// unit tests and documentation): our reader accepts them and our writer reproduces them.
TEST(SafetensorsInterop, ReferenceImplementationBytes) {
  const std::string data6 = [] {
    std::string d;
    for (float v : {0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f}) d.append(reinterpret_cast<const char*>(&v), 4);
    return d;
  }();
  const std::vector<float> values{0, 1, 2, 3, 4, 5};
  struct ref {
    std::string bytes;
    const char* name;
    sf::io::shape_t shape;
  };
  const ref refs[] = {
      {raw_file(R"({"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}})", data6), "attn.0", {1, 2, 3}},
      {raw_file(R"({"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}}       )", data6), "attn0",
       {1, 1, 2, 3}},
  };
  ASSERT_EQ(refs[0].bytes.size(), 96u);   // as in the reference test: header length 64
  ASSERT_EQ(refs[1].bytes.size(), 104u);  // header length 72, 7 spaces of alignment
  for (const ref& r : refs) {
    auto f = sf::io::file::parse(bytes_of(r.bytes));
    ASSERT_TRUE(f) << f.message();
    const sf::io::tensor_info* t = f->find(r.name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->shape, r.shape);
    auto v = sf::io::read_f64(*f, r.name);
    EXPECT_EQ(*v, (std::vector<double>{0, 1, 2, 3, 4, 5}));
    sf::io::writer w;
    w.add(r.name, values, r.shape);
    auto mine = w.serialize();
    ASSERT_TRUE(mine);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(mine->data()), mine->size()), r.bytes);
  }
  // No tensors, with and without metadata.
  const std::string empty = raw_file("{}      ", "");
  const std::string meta = raw_file(R"({"__metadata__":{"framework":"pt"}}     )", "");
  ASSERT_TRUE(sf::io::file::parse(bytes_of(empty)));
  auto m = sf::io::file::parse(bytes_of(meta));
  ASSERT_TRUE(m) << m.message();
  EXPECT_EQ(*m->metadata("framework"), "pt");
  sf::io::writer we, wm;
  wm.set_metadata("framework", "pt");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(we.serialize()->data()), we.serialize()->size()), empty);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(wm.serialize()->data()), wm.serialize()->size()), meta);
  // The documentation's example: an I32 [2, 2] tensor of zeros.
  auto doc = sf::io::file::parse(
      bytes_of(raw_file(R"({"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}})", std::string(16, '\0'))));
  ASSERT_TRUE(doc) << doc.message();
  EXPECT_EQ(doc->find("test")->type, dtype::I32);
}
