// Tests of staticformer/io/safetensors.hpp: round trips, the golden files written by
// tools/make_golden.py, bytes written by the reference safetensors implementation, and
// every refusal with its message (on broken files built in a temporary directory).
#include "staticformer/io/safetensors.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using sf::io::dtype;

namespace {

const std::string golden_dir = std::string(SF_TEST_DATA_DIR) + "/golden/";

// A fresh temporary directory per test program, removed at exit.
const fs::path& tmp_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("sf_test_safetensors_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  static const struct cleanup {
    ~cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } c;
  (void)c;
  return dir;
}
std::string tmp(const std::string& name) { return (tmp_dir() / name).string(); }

std::vector<std::byte> bytes_of(std::string_view s) {
  std::vector<std::byte> b(s.size());
  if (!s.empty()) std::memcpy(b.data(), s.data(), s.size());
  return b;
}
std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write_all(const std::string& path, std::string_view s) {
  std::ofstream out(path, std::ios::binary);
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
}
// A file from a header text and a data section.
std::string raw_file(std::string_view header, std::string_view data) {
  std::string s(8, '\0');
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s.append(header).append(data);
}
std::string parse_error(std::string_view contents) {
  auto f = sf::io::file::parse(bytes_of(contents), "x.safetensors");
  return f ? std::string("(parsed)") : std::string(f.message());
}

template <sf::config C>
std::unique_ptr<sf::params<C>> random_params(unsigned seed) {
  auto p = std::make_unique<sf::params<C>>();
  std::uint32_t s = seed * 2654435761u + 1;
  sf::visit(
      [&](const sf::param_name&, auto& t) {
        for (auto& v : t) {
          s = s * 1664525u + 1013904223u;
          v = static_cast<float>(static_cast<std::int32_t>(s >> 8) - (1 << 23)) / float(1 << 24);
        }
      },
      *p);
  return p;
}

// Every value of a parameter struct, in visiting order (through sf::io::tensor_slots: gtest
// macros stay out of generic lambdas, which keeps this file quick to compile).
template <class S>
std::vector<double> flatten(const S& s) {
  std::vector<double> out;
  for (const sf::io::slot& sl : sf::io::tensor_slots(s)) {
    const float* f = static_cast<const float*>(sl.data);
    out.insert(out.end(), f, f + sl.size);
  }
  return out;
}
// (name, shape) of every tensor of a parameter struct.
template <class S>
std::vector<std::pair<std::string, sf::io::shape_t>> names_and_shapes(const S& s) {
  std::vector<std::pair<std::string, sf::io::shape_t>> out;
  for (const sf::io::slot& sl : sf::io::tensor_slots(s)) out.emplace_back(sl.name, sl.shape);
  return out;
}

// A writer holding the parameters of C with one tensor changed, dropped or added.
template <sf::config C>
sf::io::writer params_writer(const sf::params<C>& p, const std::string& skip = "") {
  sf::io::writer w;
  w.set_metadata(sf::io::config_metadata(C));
  for (const sf::io::slot& sl : sf::io::tensor_slots(p))
    if (sl.name != skip) w.add(sl.name, sl.type, sl.shape, sl.data);
  return w;
}

constexpr sf::config gpt2 = sf::configs::ref_gpt2;

// One out-of-line comparison instead of a gtest macro per message keeps this file quick to compile.
void expect_message(const char* got, const char* want, int line) {
  EXPECT_STREQ(got, want) << "(test line " << line << ")";
}
#define EXPECT_MESSAGE(x, want) expect_message((x).message(), want, __LINE__)

}  // namespace

// ----------------------------------------------------------------------------- round trips

TEST(SafetensorsWriter, RoundTripEveryDtypeAndMetadata) {
  const std::vector<float> f32{1.5f, -2.25f, 3.0f, 0.0f, -0.0f, 1e-30f};
  const std::vector<double> f64{3.141592653589793, -1e300, 2.5e-310};
  const std::vector<std::int32_t> i32{-1, 0, 2147483647, -2147483647 - 1};
  const std::vector<std::uint8_t> u8{0, 1, 255};
  sf::io::writer w;
  w.set_metadata("format", "test").set_metadata({{"note", "äöü \"quoted\"\n"}});
  w.add("u8", u8, {3}).add("f32", f32, {2, 3}).add("i32", i32, {2, 2}).add("f64", f64, {3});
  w.add("empty", dtype::F32, {0, 4}, nullptr);
  ASSERT_TRUE(w.check()) << w.check().message();
  const std::string path = tmp("roundtrip.safetensors");
  ASSERT_TRUE(w.write(path)) << w.write(path).message();
  EXPECT_FALSE(fs::exists(path + ".tmp"));

  auto f = sf::io::file::open(path);
  ASSERT_TRUE(f) << f.message();
  EXPECT_EQ(f->metadata().size(), 2u);
  EXPECT_EQ(*f->metadata("note"), "äöü \"quoted\"\n");
  ASSERT_EQ(f->tensors().size(), 5u);
  for (const auto& t : f->tensors()) EXPECT_EQ(t.begin % sf::io::size_of(t.type), 0u) << t.name;  // aligned
  auto check = [&](const char* name, dtype type, sf::io::shape_t shape, const void* data, std::size_t bytes) {
    const sf::io::tensor_info* t = f->find(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->type, type) << name;
    EXPECT_EQ(t->shape, shape) << name;
    ASSERT_EQ(t->bytes(), bytes) << name;
    if (bytes) {
      EXPECT_EQ(std::memcmp(f->data(*t).data(), data, bytes), 0) << name;
    }
  };
  check("f32", dtype::F32, {2, 3}, f32.data(), 24);
  check("f64", dtype::F64, {3}, f64.data(), 24);
  check("i32", dtype::I32, {2, 2}, i32.data(), 16);
  check("u8", dtype::U8, {3}, u8.data(), 3);
  check("empty", dtype::F32, {0, 4}, nullptr, 0);
  auto as_f64 = sf::io::read_f64(*f, "i32");
  ASSERT_TRUE(as_f64);
  EXPECT_EQ(*as_f64, (std::vector<double>{-1, 0, 2147483647, -2147483648.0}));

  // Atomic replace: writing again over an existing file.
  sf::io::writer w2;
  w2.add("x", u8, {3});
  ASSERT_TRUE(w2.write(path));
  auto g = sf::io::file::open(path);
  ASSERT_TRUE(g) << g.message();
  EXPECT_EQ(g->tensors().size(), 1u);
  EXPECT_FALSE(g->has_metadata());
}

TEST(SafetensorsWriter, RefusesDuplicatesReservedNamesAndBadPaths) {
  const std::vector<float> v{1, 2};
  sf::io::writer w;
  w.add("a", v, {2}).add("a", v, {2});
  EXPECT_MESSAGE(w.write(tmp("dup.safetensors")), "tensor 'a' added twice");
  EXPECT_FALSE(fs::exists(tmp("dup.safetensors")));
  sf::io::writer r;
  r.add("__metadata__", v, {2});
  EXPECT_MESSAGE(r.check(), "the tensor name '__metadata__' is reserved");
  sf::io::writer s;
  s.add("b", v, {3});
  EXPECT_MESSAGE(s.check(), "tensor 'b': shape [3] holds 3 elements, but 2 were given");
  sf::io::writer ok;
  ok.add("a", v, {2});
  sf::status st = ok.write(tmp("no/such/dir/x.safetensors"));
  EXPECT_FALSE(st);
  EXPECT_NE(std::string(st.message()).find("cannot create"), std::string::npos) << st.message();
}

TEST(SafetensorsParams, SaveLoadRoundTripAndMetadata) {
  auto p = random_params<gpt2>(1);
  const std::string path = tmp("gpt2.safetensors");
  ASSERT_TRUE(sf::io::save_params<gpt2>(path, *p, {{"tokenizer.vocab", "abc"}}));
  auto q = std::make_unique<sf::params<gpt2>>();
  sf::status s = sf::io::load_params<gpt2>(path, *q);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(flatten(*p), flatten(*q));

  auto f = sf::io::file::open(path);
  ASSERT_TRUE(f);
  EXPECT_EQ(*f->metadata("tokenizer.vocab"), "abc");
  EXPECT_EQ(f->tensors().size(), sf::tensor_count<sf::params<gpt2>>);
  auto c = sf::io::read_config(*f);
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(*c, sf::weights_config(gpt2));

  // Loading into double widens the F32 values exactly.
  auto d = std::make_unique<sf::params<gpt2, double>>();
  ASSERT_TRUE(sf::io::load_params<gpt2>(*f, *d));
  EXPECT_EQ(d->blocks[1].ffn.w2(7, 3), static_cast<double>(p->blocks[1].ffn.w2(7, 3)));

  EXPECT_MESSAGE(sf::io::save_params<gpt2>(tmp("x.safetensors"), *p, {{"vocab", "1"}}),
               "extra metadata 'vocab' would redefine the configuration");
}

TEST(SafetensorsParams, ConfigMetadataIsSpecs) {
  const sf::io::metadata_map m = sf::io::config_metadata(sf::configs::ref_llama);
  const sf::io::metadata_map want{{"format", "staticformer"}, {"vocab", "96"},     {"context", "24"},
                                  {"d_model", "48"},          {"n_heads", "6"},    {"n_layers", "3"},
                                  {"d_ff", "96"},             {"norm", "rmsnorm"}, {"position", "rope"},
                                  {"activation", "relu"},     {"tied", "false"},   {"bias", "false"},
                                  {"norm_eps", "1e-05"}};
  EXPECT_EQ(m, want);
  EXPECT_EQ(sf::io::describe(sf::configs::ref_gpt2),
            "V=65 T=16 D=32 H=4 L=2 F=128 layernorm learned gelu_tanh tied bias");
  for (const sf::config& c : {sf::configs::ref_gpt2, sf::configs::ref_llama, sf::configs::ref_vaswani,
                              sf::configs::nano, sf::configs::micro, sf::configs::small}) {
    sf::io::writer w;
    w.set_metadata(sf::io::config_metadata(c));
    auto bytes = w.serialize();
    ASSERT_TRUE(bytes);
    auto f = sf::io::file::parse(*bytes);
    ASSERT_TRUE(f) << f.message();
    auto back = sf::io::read_config(*f);
    ASSERT_TRUE(back) << back.message();
    EXPECT_EQ(*back, sf::weights_config(c));
    EXPECT_TRUE(sf::io::check_config(*f, c));
  }
}

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
