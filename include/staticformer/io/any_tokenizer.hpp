// staticformer/io/any_tokenizer.hpp — the tokenizer a checkpoint carries: a character tokenizer
// (sf::char_tokenizer) or llama2.c's sentencepiece BPE tokenizer (sf::io::tokenizer_bin), and how
// it is stored in the checkpoint's metadata. Compiled into staticformer::io (src/io/any_tokenizer.cpp).
//
//   sf::io::any_tokenizer tok = std::move(*sf::io::tokenizer_bin::open("tok512.bin", 512));
//   sf::io::save_model<C>("m.safetensors", p, tok);                  // staticformer/io/checkpoint.hpp
//   sf::io::result<sf::io::any_tokenizer> t = sf::io::read_tokenizer(f.metadata(), C.V);
//   if (const sf::io::tokenizer_bin* bpe = t->bpe()) ...            // or t->chars()
//
// The metadata (docs/formats.md, "The tokenizer in a checkpoint"): exactly one of
//   tokenizer.vocab  a character tokenizer: its byte values as a JSON array, "[10,32,33,...]"
//                    (sf::char_tokenizer::to_metadata); at most V of them
//   tokenizer.bpe    a BPE tokenizer: the bytes of its tokenizer.bin (llama2.c's file: max_token_length,
//                    then per piece its score, length and bytes) in base64 (RFC 4648, the standard
//                    alphabet, '=' padding); exactly V pieces
// Reading checks everything before use: a checkpoint with both keys or neither, base64 that is not
// canonical (a character outside the alphabet, a length not a multiple of 4, misplaced padding, pad
// bits that are not zero), a tokenizer.bin refused by tokenizer_bin::parse (cut off, oversized, a bad
// length, ...), and a vocabulary that does not fit V — each refused with a message naming the key.
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "staticformer/io/safetensors_format.hpp"
#include "staticformer/io/tokenizer_bin.hpp"
#include "staticformer/status.hpp"
#include "staticformer/tokenizer.hpp"

namespace sf::io {

// The metadata key of a BPE tokenizer (a character tokenizer's is sf::tokenizer_metadata_key,
// "tokenizer.vocab").
inline constexpr const char* bpe_tokenizer_metadata_key = "tokenizer.bpe";

// One of the two kinds of tokenizer a checkpoint can carry.
class any_tokenizer {
 public:
  any_tokenizer() = default;  // a character tokenizer without symbols
  any_tokenizer(sf::char_tokenizer t) : v_(std::move(t)) {}  // NOLINT: implicit on purpose
  any_tokenizer(tokenizer_bin t) : v_(std::move(t)) {}       // NOLINT

  bool is_bpe() const { return std::holds_alternative<tokenizer_bin>(v_); }
  const sf::char_tokenizer* chars() const { return std::get_if<sf::char_tokenizer>(&v_); }
  const tokenizer_bin* bpe() const { return std::get_if<tokenizer_bin>(&v_); }
  std::size_t size() const { return is_bpe() ? bpe()->size() : chars()->size(); }
  // "characters" or "BPE", for messages.
  const char* kind() const { return is_bpe() ? "BPE" : "characters"; }
  // f(the tokenizer), as its own type.
  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit(std::forward<F>(f), v_);
  }

 private:
  std::variant<sf::char_tokenizer, tokenizer_bin> v_;
};

// Whether the metadata holds a tokenizer (either key).
bool has_tokenizer(const metadata_map& m);

// The metadata entry that stores `t` in a checkpoint of vocabulary V: {"tokenizer.vocab": "[...]"} or
// {"tokenizer.bpe": base64}. Refused: a character tokenizer of more than V symbols, a BPE one of other
// than V pieces ("the BPE tokenizer has 500 pieces; the model's vocabulary V = 512: they must be equal").
result<metadata_map> tokenizer_metadata(const sf::char_tokenizer& t, std::size_t V);
result<metadata_map> tokenizer_metadata(const tokenizer_bin& t, std::size_t V);
result<metadata_map> tokenizer_metadata(const any_tokenizer& t, std::size_t V);

// The tokenizer stored in metadata m (of a checkpoint of vocabulary V), checked as above. The
// messages do not name the file (callers prefix it): "no tokenizer (metadata 'tokenizer.vocab' or
// 'tokenizer.bpe')", "metadata 'tokenizer.bpe': not base64: ...".
result<any_tokenizer> read_tokenizer(const metadata_map& m, std::size_t V);

// Base64 (RFC 4648: A-Z a-z 0-9 + /, '=' padding to a multiple of 4 characters).
std::string base64_encode(std::span<const std::byte> bytes);
// The bytes of canonical base64 (what base64_encode writes, and nothing else: no white space, no
// missing padding, no pad bits set); refused with the offset of what is wrong.
result<std::vector<std::byte>> base64_decode(std::string_view text);

}  // namespace sf::io
