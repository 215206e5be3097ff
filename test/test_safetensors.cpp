// Tests of staticformer/io/safetensors.hpp: round trips, the golden files written by
// tools/make_golden.py, bytes written by the reference safetensors implementation, and
// every refusal with its message (on broken files built in a temporary directory).
// One GoogleTest program in three translation units, to keep each quick to compile: this file
// (round trips), test/safetensors/golden.cpp (golden files, interoperability) and
// test/safetensors/refusals.cpp (refusals); the helpers are in test/safetensors/helpers.hpp.
#include "safetensors/helpers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace sf_test;

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

// add_view: the same file as add, from the caller's memory (read when serialized, not copied).
TEST(SafetensorsWriter, ViewsWriteWhatCopiesWrite) {
  std::vector<float> f32{1.5f, -2.25f, 3.0f, 0.0f, -0.0f, 1e-30f};
  const std::vector<std::uint8_t> u8{0, 1, 255};
  sf::io::writer copies, views;
  copies.set_metadata("k", "v").add("f32", f32, {2, 3}).add("u8", dtype::U8, {3}, u8.data());
  views.set_metadata("k", "v").add_view("f32", f32, {2, 3}).add_view("u8", dtype::U8, {3}, u8.data());
  const auto a = copies.serialize(), b = views.serialize();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
  f32[0] = 7.0f;  // a view reads the memory when serialized; a copy was taken when added
  const auto c = copies.serialize(), d = views.serialize();
  ASSERT_TRUE(c && d);
  EXPECT_EQ(*c, *a);
  EXPECT_NE(*d, *a);
  auto g = sf::io::file::parse(*d);
  ASSERT_TRUE(g) << g.message();
  const auto x = sf::io::read_f64(*g, "f32");
  ASSERT_TRUE(x);
  EXPECT_EQ((*x)[0], 7.0);
  sf::io::writer bad;
  bad.add_view("b", f32, {5});
  EXPECT_MESSAGE(bad.check(), "tensor 'b': shape [5] holds 5 elements, but 6 were given");
}

// writer::view: the file that parse(serialize()) gives — its metadata, tensors (names, dtypes,
// shapes, offsets) and every tensor's bytes — read where add_view's memory is.
TEST(SafetensorsWriter, ViewIsTheParsedFileReadInPlace) {
  std::vector<float> f32{1.5f, -2.25f, 3.0f, 0.0f, -0.0f, 1e-30f};
  const std::vector<double> f64{1.0 / 3.0, -2.0};
  const std::vector<std::uint8_t> u8{0, 1, 255};
  const std::vector<std::int32_t> i32{-7, 8, 9, 10};
  const std::vector<float> none;
  sf::io::writer w;
  w.set_metadata("k", "v").add_view("u8", dtype::U8, {3}, u8.data()).add_view("f32", f32, {2, 3});
  w.add_view("empty", none, {0, 4}).add_view("i32", i32, {4}).add_view("f64", f64, {2});
  const auto bytes = w.serialize();
  ASSERT_TRUE(bytes) << bytes.message();
  const auto parsed = sf::io::file::parse(*bytes, "origin");
  const auto view = w.view("origin");
  ASSERT_TRUE(parsed) << parsed.message();
  ASSERT_TRUE(view) << view.message();
  EXPECT_EQ(view->origin(), "origin");
  EXPECT_EQ(view->metadata(), parsed->metadata());
  EXPECT_TRUE(view->has_metadata());
  ASSERT_EQ(view->tensors().size(), parsed->tensors().size());
  for (std::size_t i = 0; i < parsed->tensors().size(); ++i) {
    const sf::io::tensor_info &a = parsed->tensors()[i], &b = view->tensors()[i];
    SCOPED_TRACE(a.name);
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.type, a.type);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.begin, a.begin);
    EXPECT_EQ(b.end, a.end);
    const auto x = parsed->data(a), y = view->data(*view->find(a.name));
    EXPECT_TRUE(std::equal(x.begin(), x.end(), y.begin(), y.end()));
  }
  EXPECT_EQ(view->data(*view->find("f32")).data(), reinterpret_cast<const std::byte*>(f32.data()));  // not a copy
  f32[1] = 7.0f;  // read where it is
  const auto r = sf::io::read_f64(*view, "f32");
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)[1], 7.0);
  EXPECT_TRUE(view->data(sf::io::tensor_info{"other", dtype::F32, {1}, 3, 7}).empty());  // not one of its tensors
  sf::io::writer copied;
  copied.add_view("a", f32, {6}).add("b", f32, {6});
  EXPECT_MESSAGE(copied.view(), "tensor 'b' was copied (add): a view reads add_view's tensors only");
  copied.add_view("a", f32, {6});
  EXPECT_MESSAGE(copied.view(), "tensor 'a' added twice");
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
  EXPECT_EQ(*c, sf::arch_of(gpt2));

  // Loading into double widens the F32 values exactly.
  auto d = std::make_unique<sf::params<gpt2, double>>();
  ASSERT_TRUE(sf::io::load_params<gpt2>(*f, *d));
  EXPECT_EQ(d->blocks[1].ffn.w2(7, 3), static_cast<double>(p->blocks[1].ffn.w2(7, 3)));

  EXPECT_MESSAGE(sf::io::save_params<gpt2>(tmp("x.safetensors"), *p, {{"vocab", "1"}}),
               "extra metadata 'vocab' would redefine the configuration");
}

// file::open_header: the checks of open (the header, the tensors' extents against the file's size,
// with the same messages), the metadata, and no tensors, so that no loader takes it.
TEST(SafetensorsFile, HeaderAloneIsReadAsOpenReadsItWithoutTheValues) {
  auto p = random_params<gpt2>(2);
  const std::string path = tmp("header_alone.safetensors");
  ASSERT_TRUE(sf::io::save_params<gpt2>(path, *p, {{"tokenizer.vocab", "abc"}}));
  const auto whole = sf::io::file::open(path);
  const auto h = sf::io::file::open_header(path);
  ASSERT_TRUE(whole) << whole.message();
  ASSERT_TRUE(h) << h.message();
  EXPECT_FALSE(whole->header_only());
  EXPECT_TRUE(h->header_only());
  EXPECT_EQ(h->metadata(), whole->metadata());
  EXPECT_TRUE(h->has_metadata());
  EXPECT_EQ(h->origin(), path);
  const auto c = sf::io::read_config(*h);
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(*c, sf::arch_of(gpt2));
  EXPECT_TRUE(h->tensors().empty());
  EXPECT_EQ(h->size_bytes(), 0u);
  auto q = std::make_unique<sf::params<gpt2>>();
  EXPECT_NE(std::string(sf::io::load_params<gpt2>(*h, *q).message()).find("missing tensor"), std::string::npos);

  const std::string bytes = read_all(path);
  const std::string bad = tmp("header_alone_bad.safetensors");
  for (const std::string& b : {bytes.substr(0, bytes.size() - 1), bytes + '\0', bytes.substr(0, 12)}) {
    write_all(bad, b);  // truncated, one byte too many, cut in the header: the same refusal
    const auto hb = sf::io::file::open_header(bad);
    ASSERT_FALSE(hb);
    EXPECT_EQ(std::string(hb.message()), std::string(sf::io::file::open(bad).message()));
  }
  std::string nan = bytes;  // a value that is not finite: the header is fine; a loader refuses the file
  const float v = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(nan.data() + nan.size() - 4, &v, 4);
  write_all(bad, nan);
  EXPECT_TRUE(sf::io::file::open_header(bad));
  EXPECT_NE(std::string(sf::io::load_params<gpt2>(bad, *q).message()).find("is nan"), std::string::npos);
  EXPECT_NE(std::string(sf::io::file::open_header(tmp("none.safetensors")).message()).find("cannot open"),
            std::string::npos);
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
    EXPECT_EQ(*back, sf::arch_of(c));
    EXPECT_TRUE(sf::io::check_config(*f, c));
  }
}

// The fields added after the first checkpoints (kv_heads, ffn, rope_base, rope_pairs) are optional keys:
// absent at their defaults (so a model's file is the same bytes as before them), read as the
// defaults when absent, written and read back when not the default.
TEST(SafetensorsParams, OptionalConfigKeys) {
  const sf::io::metadata_map m = sf::io::config_metadata(sf::configs::ref_llama);
  EXPECT_EQ(m.count("n_kv_heads") + m.count("ffn") + m.count("rope_theta") + m.count("rope_pairs"), 0u);
  EXPECT_EQ(sf::io::describe(sf::configs::ref_llama), "V=96 T=24 D=48 H=6 L=3 F=96 rmsnorm rope relu untied no-bias");

  sf::arch a = sf::configs::ref_llama;
  a.rope_base = 5e5;
  sf::io::metadata_map with = sf::io::config_metadata(a);
  EXPECT_EQ(with.at("rope_theta"), "5e+05");
  EXPECT_EQ(sf::io::describe(a), "V=96 T=24 D=48 H=6 L=3 F=96 rmsnorm rope relu untied no-bias rope_base=5e+05");
  auto back = sf::io::config_from_metadata(with);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, a);
  with.erase("rope_theta");  // absent: the default
  back = sf::io::config_from_metadata(with);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->rope_base, 1e4);

  sf::arch hf = sf::configs::ref_llama;
  hf.rope_pairs = sf::rope_pairs_kind::halves;
  sf::io::metadata_map halves = sf::io::config_metadata(hf);
  EXPECT_EQ(halves.at("rope_pairs"), "halves");
  EXPECT_EQ(sf::io::describe(hf), "V=96 T=24 D=48 H=6 L=3 F=96 rmsnorm rope relu untied no-bias rope_pairs=halves");
  back = sf::io::config_from_metadata(halves);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, hf);
  halves["rope_pairs"] = "sideways";
  back = sf::io::config_from_metadata(halves);
  ASSERT_FALSE(back);
  EXPECT_NE(std::string(back.message()).find("adjacent"), std::string::npos) << back.message();

  sf::io::metadata_map kv = sf::io::config_metadata(sf::configs::ref_llama);
  kv["n_kv_heads"] = "6";  // as many as n_heads: the same architecture as no key
  back = sf::io::config_from_metadata(kv);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, sf::arch_of(sf::configs::ref_llama));
  {  // and check_config agrees with read_config on it
    sf::io::writer w;
    w.set_metadata(kv);
    auto bytes = w.serialize();
    ASSERT_TRUE(bytes);
    auto f = sf::io::file::parse(*bytes);
    ASSERT_TRUE(f) << f.message();
    EXPECT_TRUE(sf::io::check_config(*f, sf::configs::ref_llama));
  }
  kv["n_kv_heads"] = "2";  // grouped-query attention: groups of 3 query heads
  back = sf::io::config_from_metadata(kv);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->kv_heads, 2u);
  EXPECT_EQ(sf::io::describe(*back), "V=96 T=24 D=48 H=6 kv_heads=2 L=3 F=96 rmsnorm rope relu untied no-bias");
  kv["n_kv_heads"] = "4";
  EXPECT_MESSAGE(sf::io::config_from_metadata(kv), "metadata: n_kv_heads 4 does not divide n_heads 6");
  kv["n_kv_heads"] = "0";
  EXPECT_MESSAGE(sf::io::config_from_metadata(kv), "metadata 'n_kv_heads': expected a positive integer, found \"0\"");
  kv.erase("n_kv_heads");
  kv["ffn"] = "swiglu";
  EXPECT_MESSAGE(sf::io::config_from_metadata(kv), "metadata 'ffn': expected \"mlp\" or \"gated\", found \"swiglu\"");
}
