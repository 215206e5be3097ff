// llama2.c's BPE tokenizer (staticformer/bpe.hpp) and its tokenizer.bin (staticformer/io/tokenizer_bin.hpp):
// token for token and byte for byte against run.c's own output (test/data/bpe/README.md), the file
// round trip, the refusals, and the core's behaviour on hostile tables and inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "file_bytes.hpp"
#include "staticformer/bpe.hpp"
#include "staticformer/io/tokenizer_bin.hpp"

namespace {

const std::string data_dir = std::string(SF_TEST_DATA_DIR) + "/bpe/";

using sf_test::read_bytes;

std::string unhex(const std::string& h) {
  std::string s;
  if (h == "-") return s;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2) s += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
  return s;
}

std::string c_string(std::string_view p) { return std::string(p.substr(0, p.find('\0'))); }

sf::io::tokenizer_bin load512() {
  auto t = sf::io::tokenizer_bin::open(data_dir + "tok512.bin", 512);
  EXPECT_TRUE(t) << t.message();
  return std::move(t).value();
}

std::vector<std::int32_t> encode(const sf::io::tokenizer_bin& t, std::string_view text, bool bos, bool eos) {
  std::vector<std::int32_t> ids(t.max_tokens(text));
  std::size_t n = 0;
  const sf::status s = t.encode(text, bos, eos, ids, n);
  EXPECT_TRUE(s) << s.message();
  ids.resize(n);
  std::vector<std::int32_t> fast;  // the heap's merges: the same ids
  EXPECT_TRUE(t.encode(text, bos, eos, fast));
  EXPECT_EQ(fast, ids);
  return ids;
}

std::vector<std::int32_t> ids_of(std::istringstream& line) {
  std::vector<std::int32_t> v;
  for (std::int32_t id; line >> id;) v.push_back(id);
  return v;
}

// test/data/bpe/runc_reference.txt: every piece's decode after <s> and after <unk>, and per text
// run.c's encode with <s>, with </s>, and what its generate() prints of the prompt.
TEST(Bpe, SameAsRunC) {
  const auto t = load512();
  std::ifstream f(data_dir + "runc_reference.txt");
  ASSERT_TRUE(f);
  std::string line, text;
  std::size_t pieces = 0, cases = 0;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "piece") {
      std::int32_t id;
      std::string a, b, pa, pb;
      in >> id >> a >> b >> pa >> pb;
      EXPECT_EQ(c_string(t.piece_after(1, id)), unhex(a)) << "piece " << id << " after <s>";
      EXPECT_EQ(c_string(t.piece_after(0, id)), unhex(b)) << "piece " << id;
      EXPECT_EQ(std::string(sf::bpe_printable(t.piece_after(1, id))), unhex(pa)) << "printed piece " << id;
      EXPECT_EQ(std::string(sf::bpe_printable(t.piece_after(0, id))), unhex(pb)) << "printed piece " << id;
      ++pieces;
    } else if (kind == "case") {
      std::string h;
      in >> h;
      text = unhex(h);
      ++cases;
    } else if (kind == "bos") {
      const std::vector<std::int32_t> ids = encode(t, text, true, false);
      EXPECT_EQ(ids, ids_of(in)) << "text " << cases;
      std::size_t n = 0;  // too small an output (the tokens before the merges need room): refused
      std::vector<std::int32_t> small(ids.size() - 1);
      EXPECT_FALSE(t.encode(text, true, false, small, n));
    } else if (kind == "eos") {
      EXPECT_EQ(encode(t, text, false, true), ids_of(in)) << "text " << cases;
    } else if (kind == "print") {
      std::string h;
      in >> h;
      const std::vector<std::int32_t> ids = encode(t, text, true, false);
      std::string printed;
      for (std::size_t k = 1; k < ids.size(); ++k) printed += sf::bpe_printable(t.piece_after(ids[k - 1], ids[k]));
      EXPECT_EQ(printed, unhex(h)) << "text " << cases;
    }
  }
  EXPECT_EQ(pieces, 512u);
  EXPECT_GE(cases, 50u);
}

TEST(Bpe, TheInterface) {
  const auto t = load512();
  static_assert(sf::tokenizer<sf::io::tokenizer_bin> && sf::tokenizer_with_context<sf::io::tokenizer_bin>);
  EXPECT_EQ(t.size(), 512u);
  EXPECT_EQ(t.bos(), 1);
  EXPECT_EQ(t.eos(), 2);
  EXPECT_EQ(t.max_piece_bytes(), t.max_token_length());  // llama2.c writes the longest piece's length
  EXPECT_EQ(sf::max_tokens(t, "abc"), 6u);
  std::vector<std::int32_t> ids(sf::max_tokens(t, "Hello world"));
  std::size_t n = 0;
  ASSERT_TRUE(t.encode("Hello world", ids, n));  // the interface's encode: with <s>, as run.c's prompt
  ids.resize(n);
  EXPECT_EQ(ids, encode(t, "Hello world", true, false));
  EXPECT_EQ(sf::decode(t, ids), "\n<s>\nHello world");  // the ' ' of the first piece after <s> is dropped
  EXPECT_EQ(sf::decode(t, std::span<const std::int32_t>(ids).subspan(1)), " Hello world");
  const std::int32_t odd[] = {1, 600, -1, 3 + 'A'};
  EXPECT_EQ(sf::decode(t, std::span<const std::int32_t>(odd)), "\n<s>\n??A");
  EXPECT_EQ(t.raw_piece(3 + 'A'), "<0x41>");
  EXPECT_EQ(t.piece(3 + 'A'), "A");
  EXPECT_EQ(t.piece(512), "");
  // Copies and moves keep their own view of the tables.
  sf::io::tokenizer_bin copy = t;
  sf::io::tokenizer_bin moved = std::move(copy);
  EXPECT_EQ(moved.piece(300), t.piece(300));
  EXPECT_EQ(encode(moved, "First Citizen", true, true), encode(t, "First Citizen", true, true));
}

TEST(Bpe, AnyBytesGiveTokensInRange) {
  const auto t = load512();
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  for (const std::string& text : {all, std::string("\0\0a\0", 4), std::string(3, '\x80') + "\xc3", all + all}) {
    const std::vector<std::int32_t> ids = encode(t, text, true, true);
    ASSERT_FALSE(ids.empty());
    for (const std::int32_t id : ids) EXPECT_TRUE(id >= 0 && id < 512);
  }
  EXPECT_EQ(encode(t, "", true, true), (std::vector<std::int32_t>{1, 2}));
  EXPECT_EQ(encode(t, "", false, false), std::vector<std::int32_t>{});
}

// The vector encode's merges (a heap) against the core's scan (run.c's), on random texts over
// the alphabet of a small vocabulary whose scores tie often, and on the corpus's first 5 KB; the
// whole corpus (1.1 MB) in well under a second.
TEST(Bpe, FastEncodeIsTheSame) {
  const auto t = load512();
  std::vector<std::string> pieces = {"<unk>", "\n<s>\n", "\n</s>\n"};
  for (int b = 0; b < 256; ++b) {
    char h[8];
    std::snprintf(h, sizeof h, "<0x%02X>", b);
    pieces.emplace_back(h);
  }
  for (const char* p : {" ", "a", "b", "ab", "ba", "aa", "bb", " a", "aba", "bab", "abab", " ab", "\n<s>\n "})
    pieces.emplace_back(p);
  std::vector<float> scores(pieces.size());
  for (std::size_t i = 259; i < scores.size(); ++i) scores[i] = static_cast<float>(i % 3);
  auto tie = sf::io::tokenizer_bin::from_pieces(pieces, scores);
  ASSERT_TRUE(tie) << tie.message();
  std::uint64_t x = 1;
  for (int round = 0; round < 300; ++round) {
    std::string text;
    const std::size_t len = (x >> 7) % 40;
    for (std::size_t i = 0; i < len; ++i) {
      x = x * 6364136223846793005u + 1442695040888963407u;
      text += " ab\x80\xc3"[(x >> 33) % 5];
    }
    encode(*tie, text, round % 2 == 0, round % 3 == 0);  // (compares the two)
    encode(t, text, true, false);
  }
  std::ifstream f(std::string(SF_SOURCE_DIR) + "/data/tinyshakespeare.txt", std::ios::binary);
  std::string corpus((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_GT(corpus.size(), 1000000u);
  encode(t, std::string_view(corpus).substr(0, 5000), true, false);
  std::vector<std::int32_t> all;  // the whole corpus, 1.1 MB: fast
  ASSERT_TRUE(t.encode(corpus, all));
  EXPECT_GT(all.size(), 200000u);
  EXPECT_LT(all.size(), corpus.size() * 2 / 3);  // (512 pieces: about 1.8 bytes a token)
}

TEST(Bpe, FileRoundTrip) {
  const std::vector<std::byte> bytes = read_bytes(data_dir + "tok512.bin");
  const auto t = load512();
  EXPECT_EQ(t.serialize(), bytes);
  auto until_end = sf::io::tokenizer_bin::parse(bytes, sf::io::tokenizer_bin::until_end);
  ASSERT_TRUE(until_end) << until_end.message();
  EXPECT_EQ(until_end->size(), 512u);
  const std::string path = ::testing::TempDir() + "sf_test_bpe_roundtrip.bin";
  ASSERT_TRUE(t.save(path));
  EXPECT_EQ(read_bytes(path), bytes);
  std::remove(path.c_str());
  // from_pieces writes what llama2.c's tokenizer.py writes.
  std::vector<std::string> pieces;
  std::vector<float> scores;
  for (std::int32_t i = 0; i < 512; ++i) {
    pieces.emplace_back(t.raw_piece(i));
    scores.push_back(t.score(i));
  }
  auto again = sf::io::tokenizer_bin::from_pieces(pieces, scores);
  ASSERT_TRUE(again) << again.message();
  EXPECT_EQ(again->serialize(), bytes);
}

// A file: max_token_length, then (score, length, bytes) per piece.
struct bin {
  std::vector<std::byte> b;
  bin& u32(std::uint32_t v) {
    for (int k = 0; k < 4; ++k) b.push_back(static_cast<std::byte>(v >> (8 * k)));
    return *this;
  }
  bin& piece(std::string_view s, std::int32_t len = -2) {
    u32(0x3f800000);  // 1.0f
    u32(static_cast<std::uint32_t>(len == -2 ? static_cast<std::int32_t>(s.size()) : len));
    for (char c : s) b.push_back(static_cast<std::byte>(c));
    return *this;
  }
};

std::string refusal(const bin& f, std::size_t v) {
  auto t = sf::io::tokenizer_bin::parse(f.b, v, "t.bin");
  return t ? std::string("accepted") : std::string(t.message());
}

TEST(Bpe, Refusals) {
  EXPECT_EQ(refusal(bin{}.u32(5).piece("a").piece("b").piece("c"), 3), "accepted");
  EXPECT_EQ(refusal(bin{}.u32(5).piece("a").piece("b").piece("c"), 0), "accepted");
  EXPECT_EQ(refusal(bin{}, 3), "'t.bin': tokenizer.bin: the file has 0 bytes, fewer than the 4 of max_token_length");
  EXPECT_EQ(refusal(bin{}.u32(0x80000000u), 0), "'t.bin': tokenizer.bin: max_token_length is negative (-2147483648)");
  EXPECT_EQ(refusal(bin{}.u32(5).piece("a").piece("b").piece("c"), 4),
            "'t.bin': tokenizer.bin: the file has 31 bytes, too few for 4 pieces (at most 3 fit: 4 bytes, then per "
            "piece 8 bytes and its text)");
  EXPECT_EQ(refusal(bin{}.u32(5).piece("a").piece("b").piece("c"), 2),
            "'t.bin': tokenizer.bin: 9 bytes follow the 2 pieces expected: the file holds more pieces than the "
            "vocabulary size (or is not a tokenizer.bin)");
  EXPECT_EQ(refusal(bin{}.u32(5).piece("a").piece("b").piece("c", -1), 3),
            "'t.bin': tokenizer.bin: piece 2 has a negative length (-1) at offset 26");
  EXPECT_EQ(refusal(bin{}.u32(5).piece("a").piece("b").piece("c", 1000), 3),
            "'t.bin': tokenizer.bin: piece 2 has length 1000 at offset 26, but the file has only 1 bytes after it");
  EXPECT_EQ(refusal(bin{}.u32(2).piece("a").piece("bcd").piece("c"), 3),
            "'t.bin': tokenizer.bin: piece 1 has 3 bytes, more than the header's max_token_length (2)");
  EXPECT_EQ(refusal(bin{}.u32(5).piece("a").piece("b"), 0),
            "'t.bin': tokenizer.bin: bpe tokenizer: 2 pieces; at least 3 (<unk>, <s>, </s>) are needed");
  bin cut = bin{}.u32(5).piece("a").piece("b").piece("c");
  cut.b.erase(cut.b.end() - 3, cut.b.end());  // in the score and length of piece 2 (not resize: g++ 12's
                                              // -Wstringop-overflow misfires on it under the sanitizers)
  EXPECT_EQ(refusal(cut, 0), "'t.bin': tokenizer.bin: piece 2 of the file is cut off: its score and length need 8 "
                             "bytes at offset 22, the file has 6 more");
  // Every truncation of the real file is refused, never a crash.
  const std::vector<std::byte> bytes = read_bytes(data_dir + "tok512.bin");
  for (std::size_t n = 0; n < bytes.size(); n += (n < 64 ? 1 : 97)) {
    EXPECT_FALSE(sf::io::tokenizer_bin::parse(std::span(bytes).first(n), 512)) << n;
  }
  EXPECT_FALSE(sf::io::tokenizer_bin::parse(bytes, 511));
  EXPECT_FALSE(sf::io::tokenizer_bin::parse(bytes, 513));
  auto missing = sf::io::tokenizer_bin::open(data_dir + "no-such-file.bin", 512);
  ASSERT_FALSE(missing);
  EXPECT_NE(std::string(missing.message()).find("cannot open"), std::string::npos);
}

// run.c's decode reads a byte piece with sscanf(piece, "<0x%02hhX>", &b): bpe_byte_piece is the same.
TEST(Bpe, BytePiecesAsSscanf) {
  const char alphabet[] = {'0', '9', 'a', 'F', 'g', 'x', 'X', '+', '-', ' ', '\n', '>', '\0'};
  for (char c1 : alphabet)
    for (char c2 : alphabet)
      for (char c3 : alphabet) {
        char s[8] = {'<', '0', 'x', c1, c2, c3, '\0', '\0'};
        unsigned char want = 0, got = 0;
        const bool ok = std::sscanf(s, "<0x%02hhX>", &want) == 1;
        EXPECT_EQ(sf::bpe_byte_piece(std::string_view(s, 6), got), ok) << s;
        if (ok) {
          EXPECT_EQ(got, want) << s;
        }
      }
}

TEST(Bpe, PrintableAsSafePrintf) {
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    const bool shown = b != 0 && (std::isprint(b) || std::isspace(b));
    EXPECT_EQ(sf::bpe_printable(std::string_view(&c, 1)).size(), shown ? 1u : 0u) << b;
  }
  EXPECT_EQ(sf::bpe_printable(std::string_view("\x01\x02", 2)), "\x01\x02");  // longer pieces print whole
  EXPECT_EQ(sf::bpe_printable(std::string_view("ab\0cd", 5)), "ab");         // up to a NUL, as %s
}

// The core over constant tables, evaluated by the compiler: no heap.
struct tiny_tables {
  static constexpr char bytes[] = "<unk>\n<s>\n\n</s>\n abab ab";
  static constexpr std::uint32_t offsets[] = {0, 5, 10, 16, 17, 18, 19, 21, 24};  // 8 pieces
  static constexpr float scores[] = {0, 0, 0, -1, -2, -3, -4, -5};  // " ", "a", "b", "ab", " ab"
};
constexpr std::size_t tiny_encode(std::string_view text, std::int32_t* out) {
  std::int32_t sorted[8] = {};
  sf::bpe_sort_index(tiny_tables::bytes, tiny_tables::offsets, sorted);
  sf::bpe_tokenizer t;
  if (!sf::bpe_tokenizer::make({tiny_tables::bytes, tiny_tables::offsets, tiny_tables::scores, sorted}, t)) return 999;
  std::int32_t ids[16] = {};
  std::size_t n = 0;
  if (!t.encode(text, true, true, ids, n)) return 998;
  for (std::size_t i = 0; i < n; ++i) out[i] = ids[i];
  return n;
}
constexpr bool tiny_ok() {
  std::int32_t ids[16] = {};
  const std::size_t n = tiny_encode("abab", ids);  // " " "a" "b" "a" "b" -> " ab" "ab"; bytes fall back to <unk>
  return n == 4 && ids[0] == 1 && ids[1] == 7 && ids[2] == 6 && ids[3] == 2;
}
static_assert(tiny_ok());

TEST(Bpe, HostileTables) {
  std::int32_t sorted[8];
  sf::bpe_sort_index(tiny_tables::bytes, tiny_tables::offsets, sorted);
  sf::bpe_tokenizer t;
  ASSERT_TRUE(sf::bpe_tokenizer::make({tiny_tables::bytes, tiny_tables::offsets, tiny_tables::scores, sorted}, t));
  std::int32_t ids[8];
  std::size_t n = 0;
  ASSERT_TRUE(t.encode("xa", false, false, ids, n));  // a byte fallback id outside the vocabulary: <unk>
  EXPECT_EQ(std::vector<std::int32_t>(ids, ids + n), (std::vector<std::int32_t>{3, 0, 4}));
  EXPECT_FALSE(t.encode("abab", true, true, std::span(ids, 3), n));  // too small: refused, no overrun
  std::int32_t bad[8];
  std::copy(sorted, sorted + 8, bad);
  std::swap(bad[0], bad[1]);
  EXPECT_STREQ(sf::bpe_tokenizer::make({tiny_tables::bytes, tiny_tables::offsets, tiny_tables::scores, bad}, t).message(),
               "bpe tokenizer: the sorted ids are not in order of piece, then id, at entry 1");
  bad[1] = 8;
  EXPECT_STREQ(sf::bpe_tokenizer::make({tiny_tables::bytes, tiny_tables::offsets, tiny_tables::scores, bad}, t).message(),
               "bpe tokenizer: sorted id 1 is 8, outside [0, 8)");
  const std::uint32_t past[] = {0, 5, 10, 16, 17, 18, 19, 21, 99};
  EXPECT_STREQ(sf::bpe_tokenizer::make({tiny_tables::bytes, past, tiny_tables::scores, sorted}, t).message(),
               "bpe tokenizer: the pieces end at byte 99 of 25");
  sf::bpe_tokenizer empty;  // not made: refuses to encode
  EXPECT_FALSE(empty.encode("a", true, false, ids, n));
  EXPECT_EQ(empty.piece(0), "");
}

}  // namespace
