// Tests of staticformer/io/safetensors.hpp, continued: every refusal with its message (on
// broken files built in a temporary directory). Part of the test_safetensors program (see
// test/test_safetensors.cpp).
#include "helpers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>  // mkfifo

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
  EXPECT_EQ(parse_error(raw_file(deep, "")), "'x.safetensors': the header nests JSON deeper than 64 levels");
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

// ----------------------------------------------------------------------------- hostile input (issue #12)

// Only the 8-byte length and the header are read before the header is checked, and then only
// the data it declares: a 3 GB file (sparse) or /dev/zero costs a few bytes, not the file.
TEST(SafetensorsRefusals, OpenReadsOnlyWhatTheHeaderDeclares) {
  const std::string zeros = tmp("zeros-3G.safetensors");
  { std::ofstream(zeros, std::ios::binary); }
  fs::resize_file(zeros, std::uintmax_t{3} << 30);  // sparse: no disk
  EXPECT_MESSAGE(sf::io::file::open(zeros), ("'" + zeros + "': the header is not a JSON object").c_str());

  const std::string huge = tmp("huge-header-3G.safetensors");
  write_all(huge, std::string("\0\0\0\x80\0\0\0\0", 8));  // a header length of 2^31
  fs::resize_file(huge, std::uintmax_t{3} << 30);
  EXPECT_MESSAGE(sf::io::file::open(huge),
                 ("'" + huge + "': the header length 2147483648 exceeds the limit of 100000000 bytes").c_str());
  // A small header that declares 2 GB of data in a small file: refused before any data is read.
  const std::string big = tmp("declares-2G.safetensors");
  write_all(big, raw_file(R"({"a":{"dtype":"U8","shape":[2147483648],"data_offsets":[0,2147483648]}})", "1234"));
  EXPECT_MESSAGE(sf::io::file::open(big),
                 ("truncated file: '" + big + "': tensor 'a' ends at byte 2147483648 of the data, which has 4 bytes").c_str());
  fs::remove(zeros);
  fs::remove(huge);

  if (fs::exists("/dev/zero"))
    EXPECT_MESSAGE(sf::io::file::open("/dev/zero"), "'/dev/zero': the header is not a JSON object");
}

// A stream (a pipe: no size known in advance) is read up to the data its header declares.
TEST(SafetensorsRefusals, StreamsAreReadAsFarAsDeclared) {
  sf::io::writer w;
  const std::vector<float> v{1, 2, 3};
  w.set_metadata("k", "v").add("a", v, {3});
  const auto bytes = w.serialize();
  ASSERT_TRUE(bytes);
  const std::string whole(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  auto through_pipe = [](const std::string& contents) {
    const std::string fifo = tmp("pipe");
    fs::remove(fifo);
    if (::mkfifo(fifo.c_str(), 0600) != 0) return std::string("(mkfifo failed)");
    std::thread writer([&] {
      std::FILE* f = std::fopen(fifo.c_str(), "wb");
      if (!f) return;
      std::fwrite(contents.data(), 1, contents.size(), f);
      std::fclose(f);
    });
    auto r = sf::io::file::open(fifo);
    std::string out = r ? "(parsed " + std::to_string(r->tensors().size()) + ")" : std::string(r.message());
    if (r) {
      auto values = sf::io::read_f64(*r, "a");
      if (!values || *values != std::vector<double>{1, 2, 3}) out = "(wrong values)";
    }
    writer.join();
    fs::remove(fifo);
    return out;
  };
  const std::string fifo = tmp("pipe");
  EXPECT_EQ(through_pipe(whole), "(parsed 1)");
  EXPECT_EQ(through_pipe(whole + "xyz"),
            "'" + fifo + "': more bytes after the last tensor's data (the data must end with the last tensor)");
  EXPECT_EQ(through_pipe(whole.substr(0, whole.size() - 2)),
            "truncated file: '" + fifo + "': tensor 'a' ends at byte 12 of the data, which has 10 bytes");
  EXPECT_EQ(through_pipe(whole.substr(0, 20)).rfind("truncated file: '" + fifo + "': the header length is ", 0), 0u);
}

// A key twice in any object of the header is refused, as a tensor name twice always was.
TEST(SafetensorsRefusals, DuplicateKeysInsideObjects) {
  EXPECT_EQ(parse_error(raw_file(R"({"__metadata__":{"format":"staticformer","k":"1","k":"2"}})", "")),
            "'x.safetensors': __metadata__ names 'k' twice");
  EXPECT_EQ(parse_error(raw_file(R"({"a":{"dtype":"U8","dtype":"F32","shape":[4],"data_offsets":[0,4]}})", "abcd")),
            "tensor 'a': its header entry names 'dtype' twice");
  EXPECT_EQ(parse_error(raw_file(R"({"__metadata__":{"k":"1"},"b":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                                 R"("__metadata__":{"k":"2"}})",
                                 "abcd")),
            "'x.safetensors': the header names '__metadata__' twice");
  // The same key in different objects is fine.
  EXPECT_EQ(parse_error(raw_file(R"({"__metadata__":{"dtype":"x"},"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})",
                                 "abcd")),
            "(parsed)");
}

// Nesting is refused past 64 levels wherever it is (a shape nested 100000 deep once
// overflowed the stack when its message printed it).
TEST(SafetensorsRefusals, DeepNestingAnywhere) {
  auto nested = [](std::size_t n) { return std::string(n, '[') + std::string(n, ']'); };
  EXPECT_EQ(parse_error(raw_file(R"({"a":{"dtype":"F32","shape":)" + nested(100000) + R"(,"data_offsets":[0,0]}})", "")),
            "'x.safetensors': the header nests JSON deeper than 64 levels");
  EXPECT_EQ(parse_error(raw_file(R"({"__metadata__":{"k":)" + nested(100000) + "}}", "")),
            "'x.safetensors': the header nests JSON deeper than 64 levels");
  // 63 arrays inside the header object: within the limit; 64: not.
  EXPECT_EQ(parse_error(raw_file("{\"a\":" + nested(63) + "}", "")), "tensor 'a': its header entry is not an object");
  EXPECT_EQ(parse_error(raw_file("{\"a\":" + nested(64) + "}", "")),
            "'x.safetensors': the header nests JSON deeper than 64 levels");
  // A long (not deep) value is cut in the message.
  const std::string msg = parse_error(
      raw_file(R"({"a":{"dtype":"F32","shape":[")" + std::string(10000, 'x') + R"("],"data_offsets":[0,0]}})", ""));
  EXPECT_EQ(msg, "tensor 'a': shape [\"" + std::string(58, 'x') + "... is not a list of non-negative integers");
}

// A checkpoint with NaN or infinite weights is refused by default, naming the tensor and the
// first bad element; nothing is loaded.
TEST(SafetensorsRefusals, NonFiniteWeights) {
  auto p = random_params<gpt2>(6);
  auto q = std::make_unique<sf::params<gpt2>>();
  p->blocks[0].attn.wq(3, 1) = std::numeric_limits<float>::quiet_NaN();
  p->blocks[0].attn.wq(5, 0) = std::numeric_limits<float>::infinity();
  ASSERT_TRUE(sf::io::save_params<gpt2>(tmp("nan.safetensors"), *p));
  EXPECT_MESSAGE(sf::io::load_params<gpt2>(tmp("nan.safetensors"), *q),
                 "tensor 'blocks.0.attn.wq': element [3, 1] is nan (weights must be finite)");
  for (double v : flatten(*q)) ASSERT_EQ(v, 0.0);

  auto r = random_params<gpt2>(7);
  r->tok_emb.weight(64, 31) = -std::numeric_limits<float>::infinity();
  ASSERT_TRUE(sf::io::save_params<gpt2>(tmp("inf.safetensors"), *r));
  EXPECT_MESSAGE(sf::io::load_params<gpt2>(tmp("inf.safetensors"), *q),
                 "tensor 'tok_emb.weight': element [64, 31] is -inf (weights must be finite)");
  // Into double parameters too.
  auto d = std::make_unique<sf::params<gpt2, double>>();
  EXPECT_MESSAGE(sf::io::load_params<gpt2>(tmp("inf.safetensors"), *d),
                 "tensor 'tok_emb.weight': element [64, 31] is -inf (weights must be finite)");
}

TEST(SafetensorsRefusals, NonFiniteWeightsOptOut) {
  auto p = random_params<gpt2>(6);
  p->blocks[0].attn.wq(3, 1) = std::numeric_limits<float>::quiet_NaN();
  p->norm_f.bias(0) = std::numeric_limits<float>::infinity();
  ASSERT_TRUE(sf::io::save_params<gpt2>(tmp("nan-opt-out.safetensors"), *p));
  auto q = std::make_unique<sf::params<gpt2>>();
  const sf::status s = sf::io::load_params<gpt2>(tmp("nan-opt-out.safetensors"), *q, {.allow_non_finite = true});
  ASSERT_TRUE(s) << s.message();
  EXPECT_TRUE(std::isnan(q->blocks[0].attn.wq(3, 1)));
  EXPECT_EQ(q->norm_f.bias(0), std::numeric_limits<float>::infinity());
  EXPECT_EQ(q->tok_emb.weight(1, 2), p->tok_emb.weight(1, 2));
}

// Numbers in metadata are finite: norm_eps "inf" is no positive number.
TEST(SafetensorsRefusals, ReadConfigRefusesNonFiniteNumbers) {
  for (const char* bad : {"inf", "nan", "infinity", "-inf"}) {
    auto m = sf::io::config_metadata(gpt2);
    m["norm_eps"] = bad;
    sf::io::writer w;
    w.set_metadata(m);
    auto f = sf::io::file::parse(*w.serialize());
    ASSERT_TRUE(f);
    EXPECT_EQ(std::string(sf::io::read_config(*f).message()),
              std::string("metadata 'norm_eps': expected a positive number, found \"") + bad + "\"");
  }
}

// The strict parsers shared by metadata and command lines.
TEST(SafetensorsRefusals, StrictNumbers) {
  const sf::io::number_range positive{.min = 0, .min_open = true};
  auto number = [](const char* text, const sf::io::number_range& r) {
    double v = -7;
    const sf::status s = sf::io::parse_number(text, v, r);
    return s ? "ok " + sf::io::detail::format_double(v) : std::string(s.message()) + (v == -7 ? "" : " (changed)");
  };
  EXPECT_EQ(number("4e-3", positive), "ok 0.004");
  EXPECT_EQ(number("1e300", positive), "ok 1e+300");
  for (const char* bad : {"nan", "inf", "-inf", "1e999", "", " 1", "1 ", "+1", "0x10", "1,5", "fast", "0", "-1"})
    EXPECT_EQ(number(bad, positive), std::string("expected a number > 0, found \"") + bad + "\"") << bad;
  EXPECT_EQ(number("1", {.min = 0, .max = 1, .max_open = true}), "expected a number >= 0 and < 1, found \"1\"");
  EXPECT_EQ(number("1", {.min = 0, .max = 1}), "ok 1");
  EXPECT_EQ(number("2", {.min = 0, .max = 1}), "expected a number from 0 to 1, found \"2\"");
  EXPECT_EQ(number("-0.5", {.min = 0}), "expected a number >= 0, found \"-0.5\"");
  EXPECT_EQ(number("3e9", {.min = 0, .max = 1e9, .min_open = true}),
            "expected a number > 0 and <= 1000000000, found \"3e9\"");
  EXPECT_EQ(number(std::string(100, '9').c_str(), {.max = 0}),  // the value is cut at 40 characters
            "expected a number <= 0, found \"" + std::string(40, '9') + "...\"");

  auto integer = [](const char* text, std::int64_t min, std::int64_t max) {
    std::int64_t v = -7;
    const sf::status s = sf::io::parse_integer(std::string_view(text), v, min, max);
    return s ? "ok " + std::to_string(v) : std::string(s.message()) + (v == -7 ? "" : " (changed)");
  };
  EXPECT_EQ(integer("12", 1, 100), "ok 12");
  for (const char* bad : {"0", "-5", "101", "1e2", "12.0", "nan", "", " 12", "+12", "99999999999999999999999"})
    EXPECT_EQ(integer(bad, 1, 100), std::string("expected an integer from 1 to 100, found \"") + bad + "\"") << bad;
  std::uint64_t seed = 0;
  EXPECT_TRUE(sf::io::parse_integer(std::string_view("18446744073709551615"), seed, std::uint64_t{0}, UINT64_MAX));
  EXPECT_EQ(seed, UINT64_MAX);
  EXPECT_STREQ(sf::io::parse_integer(std::string_view("-1"), seed, std::uint64_t{0}, UINT64_MAX).message(),
               "expected an integer from 0 to 18446744073709551615, found \"-1\"");
}

// ----------------------------------------------------------------------------- refusals: batches

TEST(SafetensorsBatch, LoadsAndRefuses) {
  constexpr sf::config C{{.V = 65, .T = 8, .D = 8, .H = 2, .L = 1, .F = 8}, {.B = 2}};
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
