// staticformer/tokenizer.hpp — the tokenizer interface, and a character (byte) level tokenizer
// built from a corpus, which is one implementation of it.
//
// The interface, sf::tokenizer (a concept): what the tools, the decoder's callers and firmware use,
// so that a tokenizer of another kind (a BPE one, with pieces of several bytes) serves them as is.
//   t.size()                 the vocabulary size: ids 0 .. size() - 1
//   t.encode(text, ids, n)   sf::status; the ids of `text` into caller storage `ids` (a span), their
//                            count into n; no allocation (sf::max_tokens(t, text) ids always suffice)
//   t.piece(id)              std::string_view: the bytes of token id, any number of them (empty for
//                            an id outside the vocabulary); text is the concatenation of the pieces
//   t.bos(), t.eos()         the ids of the beginning and end of a sequence, -1 when it has none
//   t.max_piece_bytes()      the longest piece: what a buffer of k tokens' text needs is k times it
// Optional members, used when present (found with a requires-expression; char_tokenizer has none):
//   t.piece_after(prev, id)  std::string_view: the text of id when it follows token prev (-1: none).
//                            A sentencepiece tokenizer (bpe.hpp) drops the leading ' ' of the
//                            first piece after <s>, as llama2.c's run.c does. sf::piece_after(t,
//                            prev, id) calls it, or t.piece(id) without it; sf::decode uses it.
//   t.max_tokens(text)       std::size_t: ids enough for encode(text); sf::max_tokens(t, text)
//                            returns it, or text.size() + 2 without it
//
// The character tokenizer:
//
//   auto tok = sf::char_tokenizer::from_corpus(text);   // vocabulary: the sorted distinct bytes
//   std::vector<std::int32_t> ids;
//   if (auto s = tok.encode(text, ids); !s) puts(s.message());
//   std::string back = tok.decode(ids);
//   std::string meta = tok.to_metadata();               // "[10,32,33,...]" → checkpoint metadata
//   sf::char_tokenizer t2;  sf::char_tokenizer::from_metadata(meta, t2);
//
// Token id i is the i-th smallest byte value that occurs in the corpus, so the
// vocabulary is fully described by its list of byte values. That list, written as a
// JSON array of integers, is stored in a checkpoint's metadata under
// `sf::tokenizer_metadata_key` ("tokenizer.vocab"): a checkpoint decodes on its own.
// Bytes, not Unicode code points: a UTF-8 corpus is tokenized byte by byte and every
// byte string round-trips exactly.
#pragma once
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "staticformer/status.hpp"

namespace sf {

inline constexpr const char* tokenizer_metadata_key = "tokenizer.vocab";

template <class T>
concept tokenizer = requires(const T& t, std::string_view text, std::span<std::int32_t> ids, std::size_t& n,
                             std::int32_t id) {
  { t.size() } -> std::convertible_to<std::size_t>;
  { t.encode(text, ids, n) } -> std::same_as<status>;
  { t.piece(id) } -> std::convertible_to<std::string_view>;
  { t.bos() } -> std::convertible_to<std::int32_t>;
  { t.eos() } -> std::convertible_to<std::int32_t>;
  { t.max_piece_bytes() } -> std::convertible_to<std::size_t>;
};

// Ids enough for any text: t.max_tokens(text) when T has it, else a token per byte and the two
// special ids.
template <tokenizer T>
constexpr std::size_t max_tokens(const T& t, std::string_view text) {
  if constexpr (requires { { t.max_tokens(text) } -> std::convertible_to<std::size_t>; })
    return t.max_tokens(text);
  else
    return text.size() + 2;
}

// Whether T has the optional piece_after(prev, id).
template <class T>
concept tokenizer_with_context = tokenizer<T> && requires(const T& t, std::int32_t id) {
  { t.piece_after(id, id) } -> std::convertible_to<std::string_view>;
};

// The text of token id after token prev (-1: none): t.piece_after(prev, id) when T has it, else t.piece(id).
template <tokenizer T>
constexpr std::string_view piece_after(const T& t, std::int32_t prev, std::int32_t id) {
  if constexpr (tokenizer_with_context<T>) return t.piece_after(prev, id);
  else return t.piece(id);
}

// The text of `ids`: the concatenation of their pieces, '?' for an id without one. With
// piece_after, each id's piece follows the id before it (the first follows none), and '?' marks an
// id outside [0, size()) (an empty piece, such as " " after <s>, is nothing).
template <tokenizer T>
std::string decode(const T& t, std::span<const std::int32_t> ids) {
  std::string s;
  std::int32_t prev = -1;
  for (const std::int32_t id : ids) {
    if constexpr (tokenizer_with_context<T>) {
      if (id < 0 || static_cast<std::size_t>(id) >= t.size()) s += '?';
      else s.append(t.piece_after(prev, id));
    } else {
      const std::string_view p = t.piece(id);
      if (p.empty()) s += '?';
      else s.append(p);
    }
    prev = id;
  }
  return s;
}

class char_tokenizer {  // an sf::tokenizer
 public:
  static constexpr std::size_t max_vocab = 256;

  constexpr char_tokenizer() { to_id_.fill(-1); }

  // The vocabulary of `corpus`: its distinct bytes in increasing order.
  static constexpr char_tokenizer from_corpus(std::string_view corpus) {
    std::array<bool, 256> seen{};
    for (const char c : corpus) seen[static_cast<unsigned char>(c)] = true;
    char_tokenizer t;
    for (std::size_t b = 0; b < 256; ++b)
      if (seen[b]) t.add(static_cast<unsigned char>(b));
    return t;
  }

  // Vocabulary from an explicit, strictly increasing list of byte values.
  static constexpr status from_bytes(std::span<const std::uint8_t> bytes, char_tokenizer& out) {
    char_tokenizer t;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      if (i > 0 && bytes[i] <= bytes[i - 1])
        return status::error("tokenizer: byte values must be strictly increasing; entry ", i, " is ",
                             static_cast<int>(bytes[i]), " after ", static_cast<int>(bytes[i - 1]));
      t.add(bytes[i]);
    }
    if (t.size_ == 0) return status::error("tokenizer: empty vocabulary");
    out = t;
    return status::ok();
  }

  constexpr std::size_t size() const { return size_; }
  constexpr bool contains(unsigned char byte) const { return to_id_[byte] >= 0; }
  // Token id of a byte, or -1 when the byte is not in the vocabulary.
  constexpr std::int32_t id(unsigned char byte) const { return to_id_[byte]; }
  // Byte of a token id (0 <= id < size()).
  constexpr unsigned char byte(std::int32_t id) const {
    return static_cast<unsigned char>(chars_[static_cast<std::size_t>(id)]);
  }

  // ids = encode(text); fails, naming the offset, on a byte outside the vocabulary.
  status encode(std::string_view text, std::vector<std::int32_t>& ids) const {
    ids.resize(text.size());
    return encode(text, std::span<std::int32_t>(ids));
  }
  // Into caller storage of exactly text.size() ids; no allocation.
  constexpr status encode(std::string_view text, std::span<std::int32_t> ids) const {
    if (ids.size() != text.size())
      return status::error("tokenizer: output holds ", ids.size(), " ids for ", text.size(), " bytes");
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto b = static_cast<unsigned char>(text[i]);
      if (to_id_[b] < 0)
        return status::error("tokenizer: byte ", static_cast<int>(b), " at offset ", i, " is not in the vocabulary");
      ids[i] = to_id_[b];
    }
    return status::ok();
  }

  // The interface (sf::tokenizer): ids into caller storage of at least text.size() ids.
  constexpr status encode(std::string_view text, std::span<std::int32_t> ids, std::size_t& n) const {
    n = 0;
    if (ids.size() < text.size())
      return status::error("tokenizer: output holds ", ids.size(), " ids for ", text.size(), " bytes");
    const status s = encode(text, ids.first(text.size()));
    if (s) n = text.size();
    return s;
  }
  // The one byte of token id; empty outside [0, size()).
  constexpr std::string_view piece(std::int32_t id) const {
    return id >= 0 && static_cast<std::size_t>(id) < size_ ? std::string_view(&chars_[static_cast<std::size_t>(id)], 1)
                                                            : std::string_view();
  }
  static constexpr std::int32_t bos() { return -1; }  // none
  static constexpr std::int32_t eos() { return -1; }  // none
  static constexpr std::size_t max_piece_bytes() { return 1; }

  // The bytes of `ids`. An id outside [0, size()) (possible when the model's V is
  // larger than the vocabulary) decodes to '?'.
  std::string decode(std::span<const std::int32_t> ids) const {
    std::string s(ids.size(), '?');
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (ids[i] >= 0 && static_cast<std::size_t>(ids[i]) < size_) s[i] = chars_[static_cast<std::size_t>(ids[i])];
    return s;
  }
  std::string decode(std::int32_t id) const { return decode(std::span<const std::int32_t>(&id, 1)); }

  // The vocabulary as a JSON array of byte values, e.g. "[10,32,33]".
  std::string to_metadata() const {
    std::string s = "[";
    for (std::size_t i = 0; i < size_; ++i) {
      if (i) s += ',';
      s += std::to_string(static_cast<int>(static_cast<unsigned char>(chars_[i])));
    }
    s += ']';
    return s;
  }

  // Parses what to_metadata wrote (whitespace allowed between tokens).
  static constexpr status from_metadata(std::string_view text, char_tokenizer& out) {
    std::array<std::uint8_t, 256> bytes{};
    std::size_t n = 0, i = 0;
    auto skip = [&] {
      while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r')) ++i;
    };
    skip();
    if (i >= text.size() || text[i] != '[')
      return status::error("tokenizer metadata: expected a JSON array of byte values such as [10,32,33]");
    ++i;
    skip();
    if (i < text.size() && text[i] == ']') return status::error("tokenizer metadata: empty vocabulary");
    while (true) {
      skip();
      if (i >= text.size() || text[i] < '0' || text[i] > '9')
        return status::error("tokenizer metadata: expected a byte value at offset ", i);
      int v = 0;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        v = v * 10 + (text[i] - '0');
        if (v > 255) return status::error("tokenizer metadata: byte value above 255 at offset ", i);
        ++i;
      }
      if (n == bytes.size()) return status::error("tokenizer metadata: more than 256 entries");
      bytes[n++] = static_cast<std::uint8_t>(v);
      skip();
      if (i < text.size() && text[i] == ',') {
        ++i;
        continue;
      }
      if (i < text.size() && text[i] == ']') {
        ++i;
        break;
      }
      return status::error("tokenizer metadata: expected ',' or ']' at offset ", i);
    }
    skip();
    if (i != text.size()) return status::error("tokenizer metadata: unexpected text after ']' at offset ", i);
    return from_bytes(std::span<const std::uint8_t>(bytes.data(), n), out);
  }

  friend constexpr bool operator==(const char_tokenizer& a, const char_tokenizer& b) {
    if (a.size_ != b.size_) return false;
    for (std::size_t i = 0; i < a.size_; ++i)
      if (a.chars_[i] != b.chars_[i]) return false;
    return true;
  }

 private:
  constexpr void add(unsigned char b) {
    to_id_[b] = static_cast<std::int32_t>(size_);
    chars_[size_++] = static_cast<char>(b);
  }

  std::array<std::int32_t, 256> to_id_{};
  std::array<char, 256> chars_{};  // the byte of each id, as char: piece() views it in place
  std::size_t size_ = 0;
};

static_assert(tokenizer<char_tokenizer>);

}  // namespace sf
