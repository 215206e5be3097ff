// The tokenizer a checkpoint carries (staticformer/io/any_tokenizer.hpp, docs/formats.md): a
// character tokenizer exactly as before (the same bytes as the metadata written by hand), or
// llama2.c's BPE tokenizer as its tokenizer.bin in base64 — the round trip through save_model and
// load_model byte for byte, base64 against RFC 4648's vectors, and every refusal with its message,
// the parameters and the tokenizer untouched.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "staticformer/init.hpp"
#include "staticformer/io/any_tokenizer.hpp"
#include "staticformer/io/checkpoint.hpp"
#include "staticformer/io/tokenizer_bin.hpp"
#include "staticformer/tokenizer.hpp"

namespace {

namespace io = sf::io;

// A tiny LLaMA-kind model with tok512.bin's vocabulary (loading and saving need no forward pass).
constexpr sf::config cfg{{.V = 512, .T = 8, .D = 8, .H = 2, .kv_heads = 1, .L = 1, .F = 16,
                          .ffn = sf::ffn_kind::gated, .norm = sf::norm_kind::rmsnorm,
                          .position = sf::position_kind::rope, .activation = sf::activation_kind::silu,
                          .tied = false, .bias = false},
                         {.B = 1}};
using params_t = sf::params<cfg>;

const std::string tok512_path = std::string(SF_TEST_DATA_DIR) + "/bpe/tok512.bin";

std::vector<std::byte> file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  const std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::byte> b(s.size());
  if (!s.empty()) std::memcpy(b.data(), s.data(), s.size());
  return b;
}

std::string b64(std::string_view s) {
  return io::base64_encode(std::span<const std::byte>(reinterpret_cast<const std::byte*>(s.data()), s.size()));
}

io::tokenizer_bin tok512() {
  auto t = io::tokenizer_bin::open(tok512_path, 512);
  EXPECT_TRUE(t) << t.message();
  return std::move(t).value();
}

// A valid tokenizer.bin of 262 pieces (<unk>, <s>, </s>, the 256 bytes, three more).
io::tokenizer_bin small_bpe() {
  std::vector<std::string> pieces = {"<unk>", "\n<s>\n", "\n</s>\n"};
  const char hex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) pieces.push_back(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">");
  for (const char* p : {" ", "e", " e"}) pieces.emplace_back(p);
  auto r = io::tokenizer_bin::from_pieces(pieces, std::vector<float>(pieces.size(), 0.0f));
  EXPECT_TRUE(r) << r.message();
  return std::move(r).value();
}

struct temp_dir {
  std::filesystem::path path;
  temp_dir() : path(std::filesystem::temp_directory_path() / ("sf_ckpt_tok_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const char* name) const { return (path / name).string(); }
};

std::unique_ptr<params_t> random_params(std::uint64_t seed) {
  auto p = std::make_unique<params_t>();
  sf::init_params(*p, seed);
  return p;
}

bool bit_equal(const params_t& a, const params_t& b) {
  bool same = true;
  sf::visit([&](const sf::param_name&, const auto& x, const auto& y) {
    same = same && std::memcmp(x.data(), y.data(), sizeof(x.data()[0]) * x.size) == 0;
  }, a, b);
  return same;
}

TEST(Base64, Rfc4648Vectors) {
  const char* vectors[][2] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},       {"foo", "Zm9v"},
                              {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, coded] : vectors) {
    EXPECT_EQ(b64(plain), coded);
    auto back = io::base64_decode(coded);
    ASSERT_TRUE(back) << back.message();
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(back->data()), back->size()), plain);
  }
  std::vector<std::byte> all(256);  // every byte value, every length modulo 3
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::byte>(i);
  for (std::size_t n = 250; n <= 256; ++n) {
    const std::span<const std::byte> part(all.data(), n);
    auto back = io::base64_decode(io::base64_encode(part));
    ASSERT_TRUE(back) << back.message();
    EXPECT_TRUE(std::equal(back->begin(), back->end(), part.begin(), part.end()));
  }
}

TEST(Base64, RefusesWhatIsNotCanonical) {
  const char* bad[][2] = {
      {"Zg=", "not base64: 3 characters, not a multiple of 4"},
      {"Zm9v\n", "not base64: 5 characters, not a multiple of 4"},
      {"Zm 9", "not base64: a character outside its alphabet (byte 32) at offset 2"},
      {"Zg==Zg==", "not base64: misplaced padding '=' (byte 61) at offset 2"},
      {"Zg=a", "not base64: misplaced padding '=' (byte 61) at offset 2"},
      {"====", "not base64: misplaced padding '=' (byte 61) at offset 0"},
      {"Zh==", "not base64: the bits before the padding at offset 2 are not zero"},
      {"Zm9=", "not base64: the bits before the padding at offset 3 are not zero"},
      {"Zm-v", "not base64: a character outside its alphabet (byte 45) at offset 2"},
  };
  for (const auto& [text, message] : bad) {
    auto r = io::base64_decode(text);
    ASSERT_FALSE(r) << text;
    EXPECT_STREQ(r.message(), message) << text;
  }
}

TEST(CheckpointTokenizer, BpeRoundTripsByteForByte) {
  temp_dir dir;
  const std::string path = dir.file("bpe.safetensors");
  auto p = random_params(7);
  const io::tokenizer_bin tok = tok512();
  ASSERT_TRUE(io::save_model<cfg>(path, *p, tok, {{"note", "x"}}));
  // The metadata: tokenizer.bin's bytes in base64, and no character tokenizer.
  auto f = io::file::open(path);
  ASSERT_TRUE(f) << f.message();
  ASSERT_NE(f->metadata(io::bpe_tokenizer_metadata_key), nullptr);
  EXPECT_EQ(*f->metadata(io::bpe_tokenizer_metadata_key), io::base64_encode(file_bytes(tok512_path)));
  EXPECT_EQ(f->metadata(sf::tokenizer_metadata_key), nullptr);
  EXPECT_EQ(*f->metadata("note"), "x");
  // Loaded back: the same weights, the same tokenizer.bin bytes, the same encoding.
  auto q = std::make_unique<params_t>();
  io::any_tokenizer back;
  io::metadata_map meta;
  const sf::status s = io::load_model<cfg>(path, *q, &back, &meta);
  ASSERT_TRUE(s) << s.message();
  EXPECT_TRUE(bit_equal(*p, *q));
  ASSERT_TRUE(back.is_bpe());
  EXPECT_STREQ(back.kind(), "BPE");
  EXPECT_EQ(back.size(), 512u);
  EXPECT_EQ(back.bpe()->serialize(), file_bytes(tok512_path));
  std::vector<std::int32_t> a, b;
  ASSERT_TRUE(tok.encode("ROMEO: But soft, what light", a));
  ASSERT_TRUE(back.bpe()->encode("ROMEO: But soft, what light", b));
  EXPECT_EQ(a, b);
  EXPECT_EQ(meta.count("note"), 1u);
  // Saved from the any_tokenizer it was loaded into: the same file, byte for byte.
  const std::string again = dir.file("again.safetensors");
  ASSERT_TRUE(io::save_model<cfg>(again, *q, back, {{"note", "x"}}));
  EXPECT_EQ(file_bytes(again), file_bytes(path));
  // The metadata functions directly.
  auto m = io::tokenizer_metadata(tok, 512);
  ASSERT_TRUE(m) << m.message();
  auto t = io::read_tokenizer(*m, 512);
  ASSERT_TRUE(t) << t.message();
  EXPECT_EQ(t->bpe()->serialize(), file_bytes(tok512_path));
  EXPECT_TRUE(io::has_tokenizer(*m));
  EXPECT_FALSE(io::has_tokenizer({{"note", "x"}}));
}

TEST(CheckpointTokenizer, CharacterTokenizerFileUnchanged) {
  // A character tokenizer is stored exactly as before: the file is the one written with the
  // metadata by hand, byte for byte; it loads into an sf::char_tokenizer and an any_tokenizer.
  temp_dir dir;
  auto p = random_params(3);
  const sf::char_tokenizer tok = sf::char_tokenizer::from_corpus("ROMEO: But soft!\n");
  const std::string path = dir.file("chars.safetensors"), by_hand = dir.file("by-hand.safetensors");
  ASSERT_TRUE(io::save_model<cfg>(path, *p, tok, {{"train.step", "3"}}));
  ASSERT_TRUE(io::save_params<cfg>(by_hand, *p, {{"train.step", "3"}, {sf::tokenizer_metadata_key, tok.to_metadata()}}));
  EXPECT_EQ(file_bytes(path), file_bytes(by_hand));
  const std::string via_any = dir.file("any.safetensors");
  ASSERT_TRUE(io::save_model<cfg>(via_any, *p, io::any_tokenizer(tok), {{"train.step", "3"}}));
  EXPECT_EQ(file_bytes(via_any), file_bytes(path));

  auto q = std::make_unique<params_t>();
  sf::char_tokenizer chars;
  ASSERT_TRUE(io::load_model<cfg>(path, *q, &chars));
  EXPECT_EQ(chars, tok);
  io::any_tokenizer any;
  ASSERT_TRUE(io::load_model<cfg>(path, *q, &any));
  ASSERT_NE(any.chars(), nullptr);
  EXPECT_EQ(*any.chars(), tok);
  EXPECT_STREQ(any.kind(), "characters");
  EXPECT_TRUE(bit_equal(*p, *q));
}

TEST(CheckpointTokenizer, SaveRefusesATokenizerThatDoesNotFit) {
  temp_dir dir;
  const std::string path = dir.file("refused.safetensors");
  auto p = random_params(1);
  const sf::status s = io::save_model<cfg>(path, *p, small_bpe());
  ASSERT_FALSE(s);
  EXPECT_STREQ(s.message(),
               "save_model: the BPE tokenizer has 262 pieces; the model's vocabulary V = 512: they must be equal");
  EXPECT_FALSE(std::filesystem::exists(path));
  auto m = io::tokenizer_metadata(tok512(), 511);
  ASSERT_FALSE(m);
  EXPECT_STREQ(m.message(), "the BPE tokenizer has 512 pieces; the model's vocabulary V = 511: they must be equal");
  auto c = io::tokenizer_metadata(sf::char_tokenizer::from_corpus("abc"), 2);
  ASSERT_FALSE(c);
  EXPECT_STREQ(c.message(), "the tokenizer has 3 symbols, more than the model's vocabulary V = 2");
}

TEST(CheckpointTokenizer, LoadRefusesABadTokenizer) {
  temp_dir dir;
  auto p = random_params(5);
  const std::vector<std::byte> good = file_bytes(tok512_path);
  const std::string good64 = io::base64_encode(good);
  const std::vector<std::byte> cut(good.begin(), good.end() - 3);
  const std::vector<std::byte> small = small_bpe().serialize();
  const std::string chars = sf::char_tokenizer::from_corpus("abc").to_metadata();
  const struct {
    const char* name;
    io::metadata_map meta;
    const char* message;  // after "'<path>': "
  } cases[] = {
      {"none", {}, "no tokenizer (metadata 'tokenizer.vocab' or 'tokenizer.bpe')"},
      {"both",
       {{"tokenizer.bpe", good64}, {"tokenizer.vocab", chars}},
       "two tokenizers (metadata 'tokenizer.vocab' and 'tokenizer.bpe'): a checkpoint carries one"},
      {"not-base64", {{"tokenizer.bpe", "tok512.bin"}}, "metadata 'tokenizer.bpe': not base64: 10 characters, not a multiple of 4"},
      {"bad-char", {{"tokenizer.bpe", "AAAA*AAA"}},
       "metadata 'tokenizer.bpe': not base64: a character outside its alphabet (byte 42) at offset 4"},
      {"empty", {{"tokenizer.bpe", ""}},
       "metadata 'tokenizer.bpe': tokenizer.bin: the file has 0 bytes, fewer than the 4 of max_token_length"},
      {"cut", {{"tokenizer.bpe", io::base64_encode(cut)}},
       "metadata 'tokenizer.bpe': tokenizer.bin: piece 511 of the file is cut off: its score and length need 8 bytes "
       "at offset 6208, the file has 6 more"},
      {"vocab", {{"tokenizer.bpe", io::base64_encode(small)}},
       "metadata 'tokenizer.bpe': the BPE tokenizer has 262 pieces; the model's vocabulary V = 512: they must be equal"},
  };
  for (const auto& c : cases) {
    const std::string path = dir.file(c.name);
    ASSERT_TRUE(io::save_params<cfg>(path, *p, c.meta)) << c.name;
    auto q = random_params(9);
    const auto sentinel = random_params(9);
    io::any_tokenizer tok = sf::char_tokenizer::from_corpus("?");
    const sf::status s = io::load_model<cfg>(path, *q, &tok);
    ASSERT_FALSE(s) << c.name;
    EXPECT_EQ(std::string(s.message()), "'" + path + "': " + c.message) << c.name;
    EXPECT_TRUE(bit_equal(*q, *sentinel)) << c.name;  // untouched
    ASSERT_NE(tok.chars(), nullptr);
    EXPECT_EQ(tok.chars()->size(), 1u);
    EXPECT_TRUE(io::load_model<cfg>(path, *q)) << c.name;  // (without the tokenizer: the weights are fine)
  }
  // A character tokenizer is asked for, the checkpoint carries a BPE one.
  const std::string path = dir.file("bpe");
  ASSERT_TRUE(io::save_model<cfg>(path, *p, tok512()));
  auto q = random_params(9);
  const auto sentinel = random_params(9);
  sf::char_tokenizer chars_tok = sf::char_tokenizer::from_corpus("?");
  const sf::status s = io::load_model<cfg>(path, *q, &chars_tok);
  ASSERT_FALSE(s);
  EXPECT_EQ(std::string(s.message()), "'" + path +
                                          "': its tokenizer is a BPE one (metadata 'tokenizer.bpe'); load it into an "
                                          "sf::io::any_tokenizer (a character tokenizer was asked for)");
  EXPECT_TRUE(bit_equal(*q, *sentinel));
  EXPECT_EQ(chars_tok, sf::char_tokenizer::from_corpus("?"));
}

}  // namespace
