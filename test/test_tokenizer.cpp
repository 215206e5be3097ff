// The character (byte) tokenizer: vocabulary from a corpus, encode/decode round trip,
// metadata round trip and refusal of malformed metadata; the tokenizer interface (sf::tokenizer)
// with the character tokenizer and with a tokenizer of multi-byte pieces.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "staticformer/tokenizer.hpp"

// Built and queried at compile time.
constexpr sf::char_tokenizer abc = sf::char_tokenizer::from_corpus("cabbage");
static_assert(abc.size() == 5);  // a b c e g
static_assert(abc.id('a') == 0 && abc.id('b') == 1 && abc.id('c') == 2 && abc.id('e') == 3 && abc.id('g') == 4);
static_assert(abc.id('z') == -1 && !abc.contains('z') && abc.byte(4) == 'g');

TEST(Tokenizer, SortedDistinctBytes) {
  const auto tok = sf::char_tokenizer::from_corpus("hello world\n");
  // '\n' ' ' d e h l o r w
  ASSERT_EQ(tok.size(), 9u);
  const std::string order = "\n dehlorw";
  for (std::size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(tok.id(static_cast<unsigned char>(order[i])), static_cast<std::int32_t>(i));
    EXPECT_EQ(tok.byte(static_cast<std::int32_t>(i)), static_cast<unsigned char>(order[i]));
  }
}

TEST(Tokenizer, EncodeDecodeRoundTrip) {
  const std::string text = "First Citizen:\nBefore we proceed any further, hear me speak.\n";
  const auto tok = sf::char_tokenizer::from_corpus(text);
  std::vector<std::int32_t> ids;
  ASSERT_TRUE(tok.encode(text, ids));
  ASSERT_EQ(ids.size(), text.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    EXPECT_GE(ids[i], 0);
    EXPECT_LT(static_cast<std::size_t>(ids[i]), tok.size());
  }
  EXPECT_EQ(tok.decode(ids), text);
  EXPECT_EQ(tok.decode(ids[0]), "F");
}

TEST(Tokenizer, AllBytesIncludingNulAndHighBytes) {
  std::string all;
  for (int b = 255; b >= 0; --b) all += static_cast<char>(b);
  const auto tok = sf::char_tokenizer::from_corpus(all);
  ASSERT_EQ(tok.size(), 256u);
  std::vector<std::int32_t> ids;
  ASSERT_TRUE(tok.encode(all, ids));
  EXPECT_EQ(ids.front(), 255);
  EXPECT_EQ(ids.back(), 0);
  EXPECT_EQ(tok.decode(ids), all);
}

TEST(Tokenizer, UnknownByteIsAnErrorNamingTheOffset) {
  const auto tok = sf::char_tokenizer::from_corpus("abc");
  std::vector<std::int32_t> ids;
  const sf::status s = tok.encode("abz", ids);
  ASSERT_FALSE(s);
  EXPECT_NE(std::string(s.message()).find("byte 122 at offset 2"), std::string::npos) << s.message();
}

TEST(Tokenizer, OutOfRangeIdsDecodeToQuestionMark) {
  const auto tok = sf::char_tokenizer::from_corpus("ab");
  const std::vector<std::int32_t> ids{0, 7, 1, -1};
  EXPECT_EQ(tok.decode(ids), "a?b?");
}

TEST(Tokenizer, MetadataRoundTrip) {
  const auto tok = sf::char_tokenizer::from_corpus("hello world\n");
  const std::string meta = tok.to_metadata();
  EXPECT_EQ(meta, "[10,32,100,101,104,108,111,114,119]");
  sf::char_tokenizer back;
  ASSERT_TRUE(sf::char_tokenizer::from_metadata(meta, back));
  EXPECT_TRUE(back == tok);
  // whitespace is accepted
  ASSERT_TRUE(sf::char_tokenizer::from_metadata(" [ 10 , 32 ,100,101,104,108,111,114,119 ] ", back));
  EXPECT_TRUE(back == tok);
}

TEST(Tokenizer, MalformedMetadataIsRefused) {
  sf::char_tokenizer t;
  for (const char* bad : {"", "[]", "10,32", "[10,32", "[10,,32]", "[10,256]", "[32,10]", "[10,10]", "[10] x",
                          "[-1]", "[1.5]"}) {
    const sf::status s = sf::char_tokenizer::from_metadata(bad, t);
    EXPECT_FALSE(s) << "accepted: '" << bad << "'";
  }
  EXPECT_EQ(t.size(), 0u);  // a failed parse leaves the output alone
}

TEST(Tokenizer, TinyShakespeareHas65Symbols) {
  std::ifstream in(SF_SOURCE_DIR "/data/tinyshakespeare.txt", std::ios::binary);
  ASSERT_TRUE(in) << "data/tinyshakespeare.txt is missing";
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.size(), 1115394u);
  const auto tok = sf::char_tokenizer::from_corpus(text);
  EXPECT_EQ(tok.size(), 65u);  // the V of the `nano` configuration
  std::vector<std::int32_t> ids;
  ASSERT_TRUE(tok.encode(text, ids));
  EXPECT_EQ(tok.decode(ids), text);
}

// ---------------------------------------------------------------- the interface (sf::tokenizer)

// A tokenizer with pieces of several bytes and special ids, standing for the kinds to come: it
// satisfies the concept, and the generic functions treat its pieces whole.
struct words_tokenizer {
  static constexpr std::string_view pieces[] = {"<s>", "the ", "cat", "é", "!"};
  static constexpr std::size_t size() { return std::size(pieces); }
  sf::status encode(std::string_view text, std::span<std::int32_t> ids, std::size_t& n) const {
    n = 0;
    if (ids.empty()) return sf::status::error("no room");
    ids[n++] = bos();
    while (!text.empty()) {
      bool found = false;
      for (std::size_t i = 1; i < size() && !found; ++i)
        if (text.starts_with(pieces[i])) {
          if (n == ids.size()) return sf::status::error("no room");
          ids[n++] = static_cast<std::int32_t>(i);
          text.remove_prefix(pieces[i].size());
          found = true;
        }
      if (!found) return sf::status::error("not in the vocabulary");
    }
    return sf::status::ok();
  }
  static constexpr std::string_view piece(std::int32_t id) {
    return id >= 0 && static_cast<std::size_t>(id) < size() ? pieces[id] : std::string_view();
  }
  static constexpr std::int32_t bos() { return 0; }
  static constexpr std::int32_t eos() { return -1; }
  static constexpr std::size_t max_piece_bytes() { return 4; }
};
static_assert(sf::tokenizer<words_tokenizer>);
static_assert(sf::tokenizer<sf::char_tokenizer>);
static_assert(!sf::tokenizer<std::string>);

TEST(TokenizerInterface, CharTokenizerEncodesIntoCallerStorage) {
  const auto tok = sf::char_tokenizer::from_corpus("abc\n");
  std::int32_t buf[8];
  std::size_t n = 99;
  ASSERT_TRUE(tok.encode("cab", std::span<std::int32_t>(buf), n));
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(sf::decode(tok, std::span<const std::int32_t>(buf, n)), "cab");
  EXPECT_LE(n, sf::max_tokens(tok, "cab"));
  EXPECT_FALSE(tok.encode("cab", std::span<std::int32_t>(buf, 2), n));  // too little room: refused
  EXPECT_EQ(n, 0u);
  EXPECT_FALSE(tok.encode("cax", std::span<std::int32_t>(buf), n));  // 'x' is not in the vocabulary
  EXPECT_EQ(tok.piece(0), "\n");
  EXPECT_EQ(tok.piece(3), "c");
  EXPECT_EQ(tok.piece(4), "");  // outside the vocabulary
  EXPECT_EQ(tok.piece(-1), "");
  EXPECT_EQ(tok.bos(), -1);
  EXPECT_EQ(tok.eos(), -1);
  EXPECT_EQ(tok.max_piece_bytes(), 1u);
}

TEST(TokenizerInterface, PiecesOfAnyLength) {
  const words_tokenizer tok;
  std::int32_t buf[16];
  std::size_t n = 0;
  ASSERT_TRUE(tok.encode("the caté!", std::span<std::int32_t>(buf), n));
  ASSERT_EQ(n, 5u);  // <s>, "the ", "cat", "é", "!"
  EXPECT_EQ(sf::decode(tok, std::span<const std::int32_t>(buf + 1, n - 1)), "the caté!");
  const std::int32_t odd[] = {2, 7, 3};  // an id without a piece decodes to '?'
  EXPECT_EQ(sf::decode(tok, std::span<const std::int32_t>(odd)), "cat?é");
}
