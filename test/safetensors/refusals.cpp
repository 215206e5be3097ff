// Tests of staticformer/io/safetensors.hpp, continued: every refusal with its message (on
// broken files built in a temporary directory). Part of the test_safetensors program (see
// test/test_safetensors.cpp).
#include "helpers.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace sf_test;

// ----------------------------------------------------------------------------- refusals: parameters

TEST(SafetensorsRefusals, ShapeMismatchNamesTensorExpectedAndFound) {
  auto p = random_params<gpt2>(2);
  auto w = params_writer<gpt2>(*p, "blocks.0.attn.wq");
  const std::vector<float> wide(32 * 48, 0.5f);
  w.add("blocks.0.attn.wq", wide, {32, 48});
  ASSERT_TRUE(w.write(tmp("shape.safetensors")));
  auto q = std::make_unique<sf::params<gpt2>>();
  EXPECT_MESSAGE(sf::io::load_params<gpt2>(tmp("shape.safetensors"), *q),
               "tensor 'blocks.0.attn.wq': expected shape [32, 32], found [32, 48]");
  // Nothing was loaded.
  for (double v : flatten(*q)) ASSERT_EQ(v, 0.0);
}

TEST(SafetensorsRefusals, MissingUnexpectedAndWrongDtype) {
  auto p = random_params<gpt2>(3);
  auto q = std::make_unique<sf::params<gpt2>>();

  ASSERT_TRUE(params_writer<gpt2>(*p, "pos_emb.weight").write(tmp("missing.safetensors")));
  EXPECT_MESSAGE(sf::io::load_params<gpt2>(tmp("missing.safetensors"), *q), "missing tensor 'pos_emb.weight'");

  auto w = params_writer<gpt2>(*p);
  const std::vector<float> head(32 * 65, 0.25f);
  w.add("lm_head.weight", head, {32, 65});
  ASSERT_TRUE(w.write(tmp("unexpected.safetensors")));
  EXPECT_MESSAGE(sf::io::load_params<gpt2>(tmp("unexpected.safetensors"), *q),
               "unexpected tensor 'lm_head.weight'");

  auto d = params_writer<gpt2>(*p, "tok_emb.weight");
  const std::vector<double> emb(65 * 32, 0.0);
  d.add("tok_emb.weight", emb, {65, 32});
  ASSERT_TRUE(d.write(tmp("dtype.safetensors")));
  EXPECT_MESSAGE(sf::io::load_params<gpt2>(tmp("dtype.safetensors"), *q),
               "tensor 'tok_emb.weight': expected dtype F32, found F64");

  // Several problems: the first is named, the others counted.
  auto m = params_writer<gpt2>(*p, "norm_f.bias");
  m.add("extra", head, {32, 65});
  ASSERT_TRUE(m.write(tmp("several.safetensors")));
  EXPECT_MESSAGE(sf::io::load_params<gpt2>(tmp("several.safetensors"), *q),
               "missing tensor 'norm_f.bias' (and 1 more)");
}

TEST(SafetensorsRefusals, MetadataMismatches) {
  auto p = random_params<gpt2>(4);
  auto q = std::make_unique<sf::params<gpt2>>();
  auto w = params_writer<gpt2>(*p);
  w.set_metadata("n_heads", "2");
  ASSERT_TRUE(w.write(tmp("heads.safetensors")));
  EXPECT_MESSAGE(sf::io::load_params<gpt2>(tmp("heads.safetensors"), *q),
               "metadata 'n_heads': expected \"4\", found \"2\"");

  auto n = params_writer<gpt2>(*p);
  n.set_metadata("norm_eps", "1e-5");  // the same number written differently is fine
  ASSERT_TRUE(n.write(tmp("eps.safetensors")));
  EXPECT_TRUE(sf::io::load_params<gpt2>(tmp("eps.safetensors"), *q));

  auto e = params_writer<gpt2>(*p);
  e.set_metadata("norm_eps", "1e-6").set_metadata("tied", "false");
  ASSERT_TRUE(e.write(tmp("eps2.safetensors")));
  EXPECT_MESSAGE(sf::io::load_params<gpt2>(tmp("eps2.safetensors"), *q),
               "metadata 'tied': expected \"true\", found \"false\"; "
               "metadata 'norm_eps': expected \"1e-05\", found \"1e-6\"");

  sf::io::writer bare;
  bare.add_all(*p);
  ASSERT_TRUE(bare.write(tmp("bare.safetensors")));
  EXPECT_MESSAGE(sf::io::load_params<gpt2>(tmp("bare.safetensors"), *q),
               "no __metadata__: expected the staticformer configuration "
               "(V=65 T=16 D=32 H=4 L=2 F=128 layernorm learned gelu_tanh tied bias)");

  auto fmt = params_writer<gpt2>(*p);
  fmt.set_metadata("format", "pt");
  ASSERT_TRUE(fmt.write(tmp("format.safetensors")));
  EXPECT_MESSAGE(sf::io::load_params<gpt2>(tmp("format.safetensors"), *q),
               "metadata 'format': expected \"staticformer\", found \"pt\"");
  auto f = sf::io::file::open(tmp("format.safetensors"));
  EXPECT_MESSAGE(sf::io::read_config(*f), "metadata 'format': expected \"staticformer\", found \"pt\"");
}

TEST(SafetensorsRefusals, ReadConfigValidates) {
  auto config_error = [](sf::io::metadata_map m) {
    sf::io::writer w;
    w.set_metadata(m);
    auto f = sf::io::file::parse(*w.serialize());
    return std::string(sf::io::read_config(*f).message());
  };
  auto m = sf::io::config_metadata(gpt2);
  m["n_heads"] = "5";
  EXPECT_EQ(config_error(m), "metadata: n_heads 5 does not divide d_model 32");
  m = sf::io::config_metadata(gpt2);
  m["vocab"] = "-3";
  EXPECT_EQ(config_error(m), "metadata 'vocab': expected a positive integer, found \"-3\"");
  m = sf::io::config_metadata(gpt2);
  m["position"] = "alibi";
  EXPECT_EQ(config_error(m), "metadata 'position': expected \"learned\", \"sinusoidal\" or \"rope\", found \"alibi\"");
  m = sf::io::config_metadata(gpt2);
  m.erase("d_ff");
  EXPECT_EQ(config_error(m), "missing metadata 'd_ff'");
}

// ----------------------------------------------------------------------------- refusals: file structure

TEST(SafetensorsRefusals, TruncatedFiles) {
  auto p = random_params<gpt2>(5);
  ASSERT_TRUE(sf::io::save_params<gpt2>(tmp("whole.safetensors"), *p));
  const std::string whole = read_all(tmp("whole.safetensors"));

  write_all(tmp("cut.safetensors"), whole.substr(0, whole.size() - 100));
  auto q = std::make_unique<sf::params<gpt2>>();
  const std::string msg = sf::io::load_params<gpt2>(tmp("cut.safetensors"), *q).message();
  EXPECT_EQ(msg.rfind("truncated file: '" + tmp("cut.safetensors") + "': tensor 'norm_f.bias' ends at byte", 0), 0u)
      << msg;

  EXPECT_EQ(parse_error(whole.substr(0, 5)),
            "truncated file: 'x.safetensors' has 5 bytes, fewer than the 8 bytes of the header length");
  EXPECT_EQ(parse_error(whole.substr(0, 200)),
            "truncated file: 'x.safetensors': the header length is " +
                std::to_string(static_cast<unsigned char>(whole[0]) + 256 * static_cast<unsigned char>(whole[1])) +
                " bytes, but only 192 bytes follow it");
  std::string huge = whole;
  huge[7] = '\x7f';  // header length near 2^63
  EXPECT_EQ(parse_error(huge).rfind("truncated file: 'x.safetensors': the header length is 9151314", 0), 0u)
      << parse_error(huge);
  // Every prefix of a valid file is refused, never a crash.
  for (std::size_t n = 0; n < whole.size(); n += (n < 1000 ? 1 : 997))
    ASSERT_FALSE(sf::io::file::parse(bytes_of(whole.substr(0, n)))) << n;

  EXPECT_MESSAGE(sf::io::file::open(tmp("does-not-exist.safetensors")),
               ("cannot open '" + tmp("does-not-exist.safetensors") + "': No such file or directory").c_str());
}

TEST(SafetensorsRefusals, HeaderProblems) {
  struct bad_header {
    const char* header;
    std::size_t data_bytes;
    const char* message;  // the whole message, or its beginning when it ends with "..."
  };
  static const bad_header cases[] = {
      {R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]})", 12,
       "'x.safetensors': the header is not valid JSON: [json.exception.parse_error.101]..."},
      {"{\"a\xff\":1}", 0, "'x.safetensors': the header is not valid JSON: ..."},  // not UTF-8
      {"[1, 2]", 0, "'x.safetensors': the header is not a JSON object"},
      {"", 0, "'x.safetensors': the header is not a JSON object"},
      {R"({"a":{"dtype":"F99","shape":[3],"data_offsets":[0,12]}})", 12, "tensor 'a': unknown dtype \"F99\""},
      {R"({"a":{"dtype":"F32","shape":[-3],"data_offsets":[0,12]}})", 12,
       "tensor 'a': shape [-3] is not a list of non-negative integers"},
      {R"({"a":{"dtype":"F32","shape":[3.0],"data_offsets":[0,12]}})", 12,
       "tensor 'a': shape [3.0] is not a list of non-negative integers"},
      {R"({"a":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,12]}})", 12,
       "tensor 'a': shape [4294967296, 4294967296, 16] is too large"},
      {R"({"a":{"dtype":"F32","shape":[3]}})", 12,
       "tensor 'a': its header entry needs \"dtype\", \"shape\" and \"data_offsets\""},
      {R"({"a":[]})", 0, "tensor 'a': its header entry is not an object"},
      {R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[12,0]}})", 12,
       "tensor 'a': data_offsets [12, 0] end before they begin"},
      {R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 12,
       "tensor 'a': data_offsets [0, 8] hold 8 bytes, but F32 [3] needs 12"},
      {R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[100,112]}})", 12,
       "truncated file: 'x.safetensors': tensor 'a' ends at byte 112 of the data, which has 12 bytes"},
      {R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,18446744073709551616]}})", 12,
       "tensor 'a': data_offsets [0,1.8446744073709552e+19] is not a pair of non-negative integers"},
      {R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[8],"data_offsets":[4,12]}})",
       12, "'x.safetensors': tensor 'b' [4, 12) overlaps tensor 'a' [0, 8)"},
      {R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[8,12]}})",
       12,
       "'x.safetensors': tensor 'b' starts at byte 8 of the data, but the previous data ends at byte 4 "
       "(tensors must be contiguous)"},
      {R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})", 12,
       "'x.safetensors': 8 bytes after the last tensor's data (the data must end with the last tensor)"},
      {R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"a":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})",
       8, "'x.safetensors': the header names 'a' twice"},
      {R"({"__metadata__":{"n":3}})", 0, "'x.safetensors': __metadata__ value of 'n' is number, not a string"},
      {R"({"__metadata__":[]})", 0, "'x.safetensors': __metadata__ must be an object mapping strings to strings"},
  };
  for (const bad_header& c : cases) {
    const std::string got = parse_error(raw_file(c.header, std::string(c.data_bytes, '\0')));
    std::string want = c.message;
    const bool prefix = want.size() > 3 && want.compare(want.size() - 3, 3, "...") == 0;
    if (prefix) want.resize(want.size() - 3);
    EXPECT_EQ(prefix ? got.substr(0, want.size()) : got, want) << c.header;
  }
  // Deep nesting is an error, not a stack overflow.
  const std::string deep = "{\"a\":" + std::string(200000, '[') + std::string(200000, ']') + "}";
  EXPECT_EQ(parse_error(raw_file(deep, "")), "tensor 'a': its header entry is not an object");
}

TEST(SafetensorsRefusals, ByteFlipsNeverCrash) {
  sf::io::writer w;
  const std::vector<float> v{1, 2, 3};
  const std::vector<std::int32_t> i{4, 5};
  w.set_metadata("k", "v").add("a", v, {3}).add("b", i, {2, 1});
  auto bytes = w.serialize();
  ASSERT_TRUE(bytes);
  std::size_t refused = 0, accepted = 0;
  for (std::size_t at = 0; at < bytes->size(); ++at)
    for (unsigned char c : {0x00, 0x01, 0x20, 0x22, 0x2c, 0x30, 0x39, 0x5b, 0x7b, 0x7d, 0x80, 0xff}) {
      std::vector<std::byte> b = *bytes;
      b[at] = static_cast<std::byte>(c);
      auto f = sf::io::file::parse(std::move(b));
      (f ? accepted : refused) += 1;
      if (f) {
        for (const auto& t : f->tensors()) ASSERT_LE(t.end, f->size_bytes());
      }
    }
  EXPECT_GT(refused, 0u);
  EXPECT_GT(accepted, 0u);
}

// ----------------------------------------------------------------------------- refusals: batches

TEST(SafetensorsBatch, LoadsAndRefuses) {
  constexpr sf::config C{.V = 65, .T = 8, .D = 8, .H = 2, .L = 1, .F = 8, .B = 2};
  std::vector<std::int32_t> tok(16), tgt(16);
  std::vector<std::uint8_t> pad(16, 0);
  for (int k = 0; k < 16; ++k) {
    tok[k] = (k * 7) % 65;
    tgt[k] = k % 5 == 0 ? -1 : (k * 11) % 65;
  }
  pad[0] = pad[8] = pad[9] = 1;
  sf::tokens_t<C> tokens;
  sf::targets_t<C> targets;
  sf::padding_t<C> padding;
  bool has_padding = false;
  auto load = [&](const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b,
                  const std::vector<std::uint8_t>* p) {
    sf::io::writer w;
    w.add("tokens", a, {2, 8}).add("targets", b, {2, 8});
    if (p) w.add("padding", *p, {2, 8});
    auto f = sf::io::file::parse(*w.serialize());
    return sf::io::load_batch<C>(*f, tokens, targets, &padding, has_padding);
  };
  ASSERT_TRUE(load(tok, tgt, &pad));
  EXPECT_TRUE(has_padding);
  EXPECT_EQ(tokens(1, 3), tok[11]);
  EXPECT_EQ(targets(0, 5), -1);
  EXPECT_EQ(padding(1, 1), 1);
  ASSERT_TRUE(load(tok, tgt, nullptr));
  EXPECT_FALSE(has_padding);
  EXPECT_EQ(padding(1, 1), 0);

  auto bad = tok;
  bad[13] = 70;
  EXPECT_MESSAGE(load(bad, tgt, nullptr), "tokens[1, 5] = 70 is out of range [0, 65)");
  bad = tok;
  bad[2] = -1;
  EXPECT_MESSAGE(load(bad, tgt, nullptr), "tokens[0, 2] = -1 is out of range [0, 65)");
  auto badt = tgt;
  badt[3] = -2;
  EXPECT_MESSAGE(load(tok, badt, nullptr),
               "targets[0, 3] = -2 is out of range: expected -1 (ignore) or a token id in [0, 65)");
  badt[3] = 65;
  EXPECT_MESSAGE(load(tok, badt, nullptr),
               "targets[0, 3] = 65 is out of range: expected -1 (ignore) or a token id in [0, 65)");
  auto badp = pad;
  badp[4] = 2;
  EXPECT_MESSAGE(load(tok, tgt, &badp), "padding[0, 4] = 2: expected 0 or 1");

  auto parse = [](sf::io::writer& w) { return sf::io::file::parse(*w.serialize()); };
  sf::io::writer w1;
  w1.add("tokens", std::vector<float>(16, 0.0f), {2, 8}).add("targets", tgt, {2, 8});
  EXPECT_MESSAGE(sf::io::load_batch<C>(*parse(w1), tokens, targets, &padding, has_padding),
               "tensor 'tokens': expected dtype I32, found F32");
  sf::io::writer w2;
  w2.add("tokens", tok, {16}).add("targets", tgt, {2, 8});
  EXPECT_MESSAGE(sf::io::load_batch<C>(*parse(w2), tokens, targets, &padding, has_padding),
               "tensor 'tokens': expected shape [2, 8], found [16]");
  sf::io::writer w3;
  w3.add("tokens", tok, {2, 8});
  EXPECT_MESSAGE(sf::io::load_batch<C>(*parse(w3), tokens, targets, &padding, has_padding),
               "missing tensor 'targets'");
  sf::io::writer w4;
  w4.add("tokens", tok, {2, 8}).add("targets", tgt, {2, 8}).add("mask", pad, {2, 8});
  EXPECT_MESSAGE(sf::io::load_batch<C>(*parse(w4), tokens, targets, &padding, has_padding),
               "unexpected tensor 'mask' in a batch (expected tokens, targets and optionally padding)");
  sf::io::writer w5;
  w5.add("tokens", tok, {2, 8}).add("targets", tgt, {2, 8}).add("padding", pad, {2, 8});
  EXPECT_MESSAGE(sf::io::load_batch<C>(*parse(w5), tokens, targets, nullptr, has_padding),
               "the batch has a 'padding' tensor but no padding buffer was given");
}
