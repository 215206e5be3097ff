// tokenizers' tokenizer.json (LlamaTokenizerFast's, written by transformers: test/data/hf/README.md)
// as llama2.c's tokenizer: the same pieces and scores as the tokenizer.model it was converted from,
// the ids transformers' own tokenizer gives (test/data/hf/tokenizer_json_ids.txt) and its decoding;
// the directory without tokenizer.model; every kind of tokenizer.json that cannot be exact refused.
// Part of test_hf_llama (test/CMakeLists.txt).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../file_bytes.hpp"
#include "../refusals.hpp"
#include "staticformer/io/hf_llama.hpp"

namespace {

namespace io = sf::io;
namespace fs = std::filesystem;
const std::string hf_dir = std::string(SF_TEST_DATA_DIR) + "/hf/";
const std::string fast_dir = hf_dir + "llama_tied_bf16_fast";

struct scratch {
  fs::path dir = fs::temp_directory_path() / ("sf_hf_tokjson_" + std::to_string(::getpid()));
  scratch() { fs::create_directories(dir); }
  ~scratch() { fs::remove_all(dir); }
};

std::string unhex(const std::string& h) {
  std::string out;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2) out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
  return out;
}

TEST(HfTokenizerJson, SamePiecesAndScoresAsTokenizerModel) {
  auto j = io::read_hf_tokenizer_json(fast_dir + "/tokenizer.json");
  ASSERT_TRUE(j.is_ok()) << j.message();
  auto m = io::read_sentencepiece_model(std::string(SF_TEST_DATA_DIR) + "/bpe/tok512.model");
  ASSERT_TRUE(m.is_ok()) << m.message();
  EXPECT_EQ(j->size(), 512u);
  // the merges' groups as scores are sentencepiece's own: the same tokenizer.bin, byte for byte
  EXPECT_TRUE(j->serialize() == m->serialize());
  EXPECT_TRUE(j->serialize() == sf_test::read_bytes(std::string(SF_TEST_DATA_DIR) + "/bpe/tok512.bin"));
}

TEST(HfTokenizerJson, EncodesAndDecodesAsTransformers) {
  auto t = io::read_hf_tokenizer_json(fast_dir + "/tokenizer.json");
  ASSERT_TRUE(t.is_ok()) << t.message();
  std::ifstream f(hf_dir + "tokenizer_json_ids.txt");
  std::string line;
  std::size_t texts = 0;
  while (std::getline(f, line)) {
    const std::size_t tab1 = line.find('\t'), tab2 = line.find('\t', tab1 + 1);
    ASSERT_NE(tab2, std::string::npos) << line;
    const std::string text = unhex(line.substr(0, tab1)), decoded = unhex(line.substr(tab2 + 1));
    std::vector<std::int32_t> want;
    std::istringstream ids(line.substr(tab1 + 1, tab2 - tab1 - 1));
    for (std::int32_t id; ids >> id;) want.push_back(id);
    SCOPED_TRACE("text '" + text + "'");
    std::vector<std::int32_t> got(t->max_tokens(text));
    std::size_t n = 0;
    ASSERT_TRUE(t->encode(text, true, false, got, n).is_ok());
    got.resize(n);
    EXPECT_EQ(got, want);
    std::vector<std::int32_t> fast;  // the heap encoder: the same ids
    ASSERT_TRUE(t->encode(text, true, false, fast).is_ok());
    EXPECT_EQ(fast, want);
    std::string back;  // llama2.c's decoding, piece after piece
    for (std::size_t i = 1; i < got.size(); ++i) back += t->piece_after(got[i - 1], got[i]);
    EXPECT_EQ(back, decoded);
    EXPECT_EQ(back, text);
    ++texts;
  }
  EXPECT_EQ(texts, 20u);
}

TEST(HfTokenizerJson, DirectoryWithoutTokenizerModel) {
  auto m = io::read_hf_llama(fast_dir);
  ASSERT_TRUE(m.is_ok()) << m.message();
  EXPECT_FALSE(fs::exists(fast_dir + "/tokenizer.model"));
  EXPECT_EQ(m->tokenizer_file, "tokenizer.json");
  ASSERT_TRUE(m->tokenizer.has_value());
  EXPECT_TRUE(m->tokenizer->serialize() == sf_test::read_bytes(std::string(SF_TEST_DATA_DIR) + "/bpe/tok512.bin"));
  // both files: tokenizer.model is read (here a tokenizer.json that would be refused beside it)
  scratch s;
  const fs::path d = s.dir / "both";
  fs::create_directories(d);
  for (const auto& e : fs::directory_iterator(hf_dir + "llama_tied_bf16")) fs::copy_file(e.path(), d / e.path().filename());
  std::ofstream(d / "tokenizer.json") << "{\"model\": {\"type\": \"Unigram\"}}";
  auto both = io::read_hf_llama(d.string());
  ASSERT_TRUE(both.is_ok()) << both.message();
  EXPECT_EQ(both->tokenizer_file, "tokenizer.model");
  fs::remove(d / "tokenizer.model");
  auto json_only = io::read_hf_llama(d.string());
  ASSERT_FALSE(json_only.is_ok());
  EXPECT_NE(std::string(json_only.message()).find("tokenizer.json': model type \"Unigram\": only BPE with byte_fallback"),
            std::string::npos)
      << json_only.message();
  // a vocabulary larger than config.json's vocab_size
  std::string text = sf_test::read_text(fast_dir + "/tokenizer.json");
  text.replace(text.find("\"$\": 511"), 8, "\"$\": 511, \"$$\": 512");
  text.replace(text.find("\"merges\": ["), 11, "\"merges\": [\"$ $\", ");
  std::ofstream(d / "tokenizer.json", std::ios::trunc) << text;
  auto larger = io::read_hf_llama(d.string());
  ASSERT_FALSE(larger.is_ok());
  EXPECT_NE(std::string(larger.message()).find("tokenizer.json': 513 pieces; vocab_size in "), std::string::npos)
      << larger.message();
}

TEST(HfTokenizerJson, MetaspaceForm) {
  // transformers' newer form (legacy=False): no normalizer, pre_tokenizer Metaspace with split false.
  // The same pieces; a text that begins with a space is where it differs from the Prepend form
  // (Metaspace adds no "▁" before it; llama2.c's encoder does): docs/formats.md.
  const std::string good = sf_test::read_text(fast_dir + "/tokenizer.json");
  const std::size_t a = good.find("\"normalizer\": {"), b = good.find("\"post_processor\"");
  ASSERT_TRUE(a != std::string::npos && b != std::string::npos);
  auto with = [&](const std::string& metaspace) {
    return good.substr(0, a) + "\"normalizer\": null, \"pre_tokenizer\": " + metaspace + ", " + good.substr(b);
  };
  auto t = io::parse_hf_tokenizer_json(
      with("{\"type\": \"Metaspace\", \"replacement\": \"\xe2\x96\x81\", \"prepend_scheme\": \"first\", \"split\": false}"));
  ASSERT_TRUE(t.is_ok()) << t.message();
  EXPECT_TRUE(t->serialize() == io::read_hf_tokenizer_json(fast_dir + "/tokenizer.json")->serialize());
  for (const std::string& bad : std::vector<std::string>{"{\"type\": \"Metaspace\", \"replacement\": \"\xe2\x96\x81\", \"prepend_scheme\": \"first\"}",
                                "{\"type\": \"Metaspace\", \"replacement\": \"\xe2\x96\x81\", \"prepend_scheme\": \"never\", \"split\": false}",
                                "{\"type\": \"ByteLevel\"}", "null"}) {
    auto r = io::parse_hf_tokenizer_json(with(bad), "t.json");
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_NE(std::string(r.message()).find("only Llama's are read"), std::string::npos) << r.message();
  }
}

TEST(HfTokenizerJson, RefusesWhatCannotBeExact) {
  const std::string good = sf_test::read_text(fast_dir + "/tokenizer.json");
  ASSERT_TRUE(io::parse_hf_tokenizer_json(good).is_ok());
  auto refused = [&](const std::string& from, const std::string& to, const std::string& message) {
    sf_test::expect_refused(io::parse_hf_tokenizer_json(sf_test::edited(good, from, to), "t.json"), message);
  };
  refused("\"type\": \"BPE\"", "\"type\": \"WordPiece\"", "'t.json': model type \"WordPiece\": only BPE with byte_fallback");
  refused("\"byte_fallback\": true", "\"byte_fallback\": false", "model.byte_fallback is false: only BPE with byte_fallback");
  refused("\"dropout\": null", "\"dropout\": 0.1", "model.dropout is 0.1");
  refused("\"<unk>\": 0,", "\"<unk>\": 0, \"<unk>\": 5,", "'<unk>' is named twice in one object");
  refused("\"\xe2\x96\x81t\": 259", "\"\xe2\x96\x81t\": 600", "piece '\xe2\x96\x81t' has id 600: expected 0 .. 511");
  refused("\"\xe2\x96\x81t\": 259", "\"\xe2\x96\x81t\": 260", "id 260 is both");
  refused("\"<0x41>\": 68", "\"<0x41>\": 68, \"<0x41x\": 68", "id 68 is both");
  refused("\"<s>\": 1", "\"<S>\": 1", "id 1 is '<S>': llama2.c's tokenizer takes <unk>, <s>, </s> at 0, 1, 2");
  refused("\"<0x41>\": 68", "\"<0xq1>\": 68", "model.vocab: id 68 is '<0xq1>', not <0x41> (llama2.c's byte fallback");
  refused("\"id\": 2,", "\"id\": 7,", "added token {");
  refused("\"prepend\": \"\xe2\x96\x81\"", "\"prepend\": \" \"", "only Llama's are read");
  refused("\"pre_tokenizer\": null", "\"pre_tokenizer\": {\"type\": \"Whitespace\"}", "only Llama's are read");
  // merges: the one of "▁the" that splits "▁t" + "he" removed (llama2.c would merge them), not
  // "left right", with a part outside the vocabulary, one of "▁t" apart from the other, with <s>
  refused("\"\xe2\x96\x81t he\",", "", "'\xe2\x96\x81the' is '\xe2\x96\x81t' + 'he', which is not a merge");
  refused("\"\xe2\x96\x81t he\",", "\"nd\",", "merge 10 is \"nd\": expected \"left right\" (one space)");
  refused("\"\xe2\x96\x81t he\",", "\"\xe2\x96\x81t qz\",", "'qz' is not in the vocabulary");
  refused("\"\xe2\x96\x81th e\",", "\"\xe2\x96\x81 t\", \"\xe2\x96\x81th e\",", "makes '\xe2\x96\x81t', which earlier merges make too");
  refused("\"merges\": [", "\"merges\": [\"<s> <s>\", ", "involves <unk>, <s> or </s>");
  refused("\"merges\": [", "\"merges\": [[1, 2], ", "expected \"left right\" or [left, right]");
  // not JSON, cut off, nested too deep
  EXPECT_NE(std::string(io::parse_hf_tokenizer_json(good.substr(0, good.size() / 2), "t.json").message()).find("'t.json': not valid JSON"),
            std::string::npos);
  EXPECT_NE(std::string(io::parse_hf_tokenizer_json(std::string(1000, '['), "t.json").message()).find("deeper than 64"),
            std::string::npos);
  EXPECT_STREQ(io::parse_hf_tokenizer_json("{}", "t.json").message(), "'t.json': no model (an object)");
  // every prefix: refused or read, never a crash (the sanitizer build checks the reads)
  for (std::size_t n = 0; n < good.size(); n += 97) EXPECT_FALSE(io::parse_hf_tokenizer_json(good.substr(0, n)).is_ok());
}

}  // namespace

// Writing: hf_tokenizer_json of tok512.model is transformers' own tokenizer.json for it (written by
// LlamaTokenizerFast's conversion, test/data/hf/README.md), byte for byte; it reads back as the
// same tokenizer; merges ordered by score; what is not a Llama tokenizer is refused.
TEST(HfTokenizerJson, WrittenAsTransformersWritesIt) {
  auto m = io::read_sentencepiece_model(std::string(SF_TEST_DATA_DIR) + "/bpe/tok512.model");
  ASSERT_TRUE(m.is_ok()) << m.message();
  auto j = io::hf_tokenizer_json(*m);
  ASSERT_TRUE(j.is_ok()) << j.message();
  EXPECT_TRUE(*j == sf_test::read_text(fast_dir + "/tokenizer.json"));
  auto back = io::parse_hf_tokenizer_json(*j);
  ASSERT_TRUE(back.is_ok()) << back.message();
  EXPECT_TRUE(back->serialize() == m->serialize());
  // llama2.c's tokenizer.bin of the same model gives the same file
  auto bin = io::tokenizer_bin::open(std::string(SF_TEST_DATA_DIR) + "/bpe/tok512.bin", 512);
  ASSERT_TRUE(bin.is_ok()) << bin.message();
  auto j2 = io::hf_tokenizer_json(*bin);
  ASSERT_TRUE(j2.is_ok()) << j2.message();
  EXPECT_TRUE(*j2 == *j);
}

TEST(HfTokenizerJson, WritingRefusesWhatIsNotLlamas) {
  std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
  for (unsigned b = 0; b < 256; ++b) {
    char p[8];
    std::snprintf(p, sizeof p, "<0x%02X>", b);
    pieces.push_back(p);
  }
  auto make = [&](std::vector<std::string> extra, std::size_t swap_first = 0) {
    std::vector<std::string> all = pieces;
    all.insert(all.end(), extra.begin(), extra.end());
    if (swap_first) std::swap(all[0], all[swap_first]);
    std::vector<float> scores(all.size());
    for (std::size_t i = 0; i < all.size(); ++i) scores[i] = -static_cast<float>(i);
    return io::tokenizer_bin::from_sentencepiece(all, scores);
  };
  auto ok = make({"\xe2\x96\x81", "a", "b", "ab", "\xe2\x96\x81" "ab"});
  ASSERT_TRUE(ok.is_ok()) << ok.message();
  auto j = io::hf_tokenizer_json(*ok);
  ASSERT_TRUE(j.is_ok()) << j.message();
  EXPECT_NE(j->find("\"a b\",\n      \"\xe2\x96\x81 ab\""), std::string::npos) << *j;  // by score: "ab" first
  // two pieces that are one in tokenizers' vocabulary (a space is U+2581 there)
  auto twice = make({"a", " a", "\xe2\x96\x81" "a"});
  ASSERT_TRUE(twice.is_ok()) << twice.message();
  sf_test::expect_refused(io::hf_tokenizer_json(*twice), "are both '\xe2\x96\x81" "a'");
  // a piece longer than the reader takes (256 bytes): written, it would not read back
  auto longer = make({std::string(300, 'a')});
  ASSERT_TRUE(longer.is_ok()) << longer.message();
  sf_test::expect_refused(io::hf_tokenizer_json(*longer), "tokenizer.json: it would not read back: ");
  auto unk = make({"x"}, 259);  // "x" at id 0
  ASSERT_TRUE(unk.is_ok()) << unk.message();
  sf_test::expect_refused(io::hf_tokenizer_json(*unk), "tokenizer.json: id 0 is 'x': a Llama tokenizer has <unk> there");
}
