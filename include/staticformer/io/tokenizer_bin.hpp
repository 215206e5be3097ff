// staticformer/io/tokenizer_bin.hpp — llama2.c's tokenizer.bin (docs/formats.md): read, checked,
// into the tables of sf::bpe_tokenizer (staticformer/bpe.hpp), and written back byte for byte.
// Compiled into staticformer::io (src/io/tokenizer_bin.cpp).
//
//   sf::io::result<sf::io::tokenizer_bin> t = sf::io::tokenizer_bin::open("tokenizer.bin", 512);
//   if (!t) puts(t.message());                  // names the file, the piece and what does not fit
//   std::vector<std::int32_t> ids(t->max_tokens(text));  std::size_t n;
//   t->encode(text, true, false, ids, n);         // run.c's encode; t is an sf::tokenizer itself
//   std::vector<std::int32_t> all;  t->encode(corpus, all);   // the same ids, fast for long texts
//   const sf::bpe_tokenizer& core = t->core();  // the freestanding view of its tables
//
// The file holds no vocabulary size (run.c takes it from the model file): open(path, V) reads
// exactly V pieces and refuses a file with fewer or more; open(path, tokenizer_bin::until_end)
// reads pieces until the file ends (at a piece boundary) and so learns V. Every length is checked
// before it is used: a negative or oversized piece length, a truncated file, a piece longer than
// the header's max_token_length (run.c's merge buffer), fewer than 3 pieces, a file above
// max_file_bytes — each refused with a message naming the file and the piece.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "staticformer/bpe.hpp"
#include "staticformer/io/safetensors_format.hpp"
#include "staticformer/status.hpp"

namespace sf::io {

class tokenizer_bin {  // an sf::tokenizer (forwards to core())
 public:
  tokenizer_bin() = default;  // no pieces (size 0) until one from open, parse or from_pieces is assigned
  static constexpr std::size_t until_end = 0;              // open/parse: read pieces until the end
  static constexpr std::size_t max_file_bytes = 256u << 20;  // 256 MiB (LLaMA 2's is 434 KB)

  // Reads and checks a tokenizer.bin of `vocab_size` pieces (until_end: as many as it holds).
  static result<tokenizer_bin> open(const std::string& path, std::size_t vocab_size);
  // The same from bytes in memory; `origin` names them in messages.
  static result<tokenizer_bin> parse(std::span<const std::byte> bytes, std::size_t vocab_size,
                                     const std::string& origin = "<memory>");
  // From pieces and scores (equal counts; max_token_length 0: the longest piece's length).
  static result<tokenizer_bin> from_pieces(const std::vector<std::string>& pieces, const std::vector<float>& scores,
                                           std::uint32_t max_token_length = 0);

  // From sentencepiece's pieces and scores in id order (a tokenizer.model's, a GGUF file's
  // tokenizer.ggml.tokens), as tools/tokenizer_bin.py and llama2.c's tokenizer.py write them: U+2581
  // becomes ' ', ids 1 and 2 (BOS, EOS: run.c's) become "\n<s>\n" and "\n</s>\n", byte pieces stay
  // "<0xXX>"; the longest piece's length is max_token_length.
  static result<tokenizer_bin> from_sentencepiece(std::vector<std::string> pieces, const std::vector<float>& scores);

  // The other way (a tokenizer.model's or GGUF's vocabulary): ' ' becomes U+2581, "\n<s>\n" and
  // "\n</s>\n" at ids 1 and 2 become "<s>" and "</s>" (type 3, control), "<0xXX>" has type 6 (byte),
  // "<unk>" at id 0 type 2 (unknown), every other piece type 1 (normal): sentencepiece's types.
  struct sentencepiece_vocab {
    std::vector<std::string> pieces;
    std::vector<float> scores;
    std::vector<std::int32_t> types;
  };
  sentencepiece_vocab to_sentencepiece() const;

  // The file's bytes: max_token_length, then per piece its score, length and bytes (little-endian).
  std::vector<std::byte> serialize() const;
  sf::status save(const std::string& path) const;

  tokenizer_bin(const tokenizer_bin& o);
  tokenizer_bin(tokenizer_bin&& o) noexcept;
  tokenizer_bin& operator=(const tokenizer_bin& o);
  tokenizer_bin& operator=(tokenizer_bin&& o) noexcept;
  ~tokenizer_bin() = default;

  const sf::bpe_tokenizer& core() const { return core_; }
  std::uint32_t max_token_length() const { return max_token_length_; }  // the header's value

  // sf::tokenizer, and bpe_tokenizer's other members, forwarded.
  std::size_t size() const { return core_.size(); }
  sf::status encode(std::string_view text, std::span<std::int32_t> ids, std::size_t& n) const {
    return core_.encode(text, ids, n);
  }
  sf::status encode(std::string_view text, bool bos, bool eos, std::span<std::int32_t> ids, std::size_t& n) const {
    return core_.encode(text, bos, eos, ids, n);
  }
  // The same ids as encode above, into a vector, with the merges in O(n log n) (a heap of the
  // candidate pairs, by score then position): for long texts such as a training corpus, where
  // run.c's O(n^2) scan takes hours. The second form is the interface's: <s>, no </s>.
  sf::status encode(std::string_view text, bool bos, bool eos, std::vector<std::int32_t>& ids) const;
  sf::status encode(std::string_view text, std::vector<std::int32_t>& ids) const { return encode(text, true, false, ids); }
  std::string_view piece(std::int32_t id) const { return core_.piece(id); }
  std::string_view piece_after(std::int32_t prev, std::int32_t id) const { return core_.piece_after(prev, id); }
  std::string_view raw_piece(std::int32_t id) const { return core_.raw_piece(id); }
  float score(std::int32_t id) const { return core_.score(id); }
  static constexpr std::int32_t bos() { return sf::bpe_tokenizer::bos(); }
  static constexpr std::int32_t eos() { return sf::bpe_tokenizer::eos(); }
  std::size_t max_piece_bytes() const { return core_.max_piece_bytes(); }
  static constexpr std::size_t max_tokens(std::string_view text) { return sf::bpe_tokenizer::max_tokens(text); }

 private:
  sf::status finish(const std::string& origin);  // sorts, makes core_ view the vectors

  std::uint32_t max_token_length_ = 0;
  std::vector<char> bytes_;
  std::vector<std::uint32_t> offsets_;
  std::vector<float> scores_;
  std::vector<std::int32_t> sorted_;
  sf::bpe_tokenizer core_;
};

}  // namespace sf::io
