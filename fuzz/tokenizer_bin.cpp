// fuzz/tokenizer_bin.cpp — libFuzzer harness: llama2.c's tokenizer.bin (sf::io::tokenizer_bin) and
// the BPE tokenizer's encode and decode (sf::bpe_tokenizer).
//
// The input is split (fuzz_common.hpp: a 4-byte little-endian length, then that many bytes) into a
// tokenizer.bin and a text. The file is parsed until its end; when accepted it must serialize to
// the same bytes, parse again with its vocabulary size given, and be refused with one piece more.
// The text (its first 512 bytes: encode's merges take quadratic time) is then encoded with that
// tokenizer, or with a small built-in one when the file was refused, with and without <s> and </s>:
// every id must lie in the vocabulary, within max_tokens, </s> last when asked; a
// too-small output must be refused; every id is decoded after the one before it and printed as
// run.c's safe_printf would; the vector encode (merges by a heap) must give the same ids.
// A first file that begins with '{' is also read as a Hugging Face tokenizer.json
// (sf::io::parse_hf_tokenizer_json) and as a sharded model's model.safetensors.index.json
// (parse_hf_weight_index): refused with a message naming it, or accepted; an accepted tokenizer.json
// is a tokenizer.bin that round-trips, and the text is encoded with it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.hpp"
#include "staticformer/bpe.hpp"
#include "staticformer/io/hf_llama.hpp"
#include "staticformer/io/tokenizer_bin.hpp"
#include "staticformer/tokenizer.hpp"

namespace {

namespace io = sf::io;

const io::tokenizer_bin& builtin() {
  static const io::tokenizer_bin t = [] {
    std::vector<std::string> pieces = {"<unk>", "\n<s>\n", "\n</s>\n"};
    const char hex[] = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) pieces.push_back(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">");
    for (const char* p : {" ", "e", "t", "h", " t", "th", "he", "the", " the", "\xc3\xa9", "\xe4\xb8\xad"})
      pieces.emplace_back(p);
    std::vector<float> scores(pieces.size());
    for (std::size_t i = 0; i < scores.size(); ++i) scores[i] = i < 259 ? 0.0f : -static_cast<float>(i % 7);
    auto r = io::tokenizer_bin::from_pieces(pieces, scores);
    SF_FUZZ_CHECK(r.is_ok(), r.message());
    return std::move(r).value();
  }();
  return t;
}

void check_encode(const io::tokenizer_bin& t, std::string_view text, bool bos, bool eos) {
  std::vector<std::int32_t> ids(sf::max_tokens(t, text));
  std::size_t n = 99;
  const sf::status s = t.encode(text, bos, eos, ids, n);
  SF_FUZZ_CHECK(s.is_ok(), s.message());
  SF_FUZZ_CHECK(n <= ids.size(), "more ids than max_tokens");
  // (At least one id when anything was asked; <s> itself takes part in the merges, as in run.c, so a
  // crafted vocabulary - empty pieces, or one of "\n<s>\n " - can merge it away.)
  SF_FUZZ_CHECK(n >= (bos || eos || !text.empty() ? 1u : 0u), "no ids");
  for (std::size_t i = 0; i < n; ++i) SF_FUZZ_CHECK(ids[i] >= 0 && static_cast<std::size_t>(ids[i]) < t.size(), "id outside");
  if (eos) SF_FUZZ_CHECK(ids[n - 1] == t.eos(), "no </s> last");
  std::int32_t prev = -1;
  std::size_t printed = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view p = t.piece_after(prev, ids[i]);
    SF_FUZZ_CHECK(p.size() <= t.max_piece_bytes(), "a piece longer than max_piece_bytes");
    printed += sf::bpe_printable(p).size();
    prev = ids[i];
  }
  SF_FUZZ_CHECK(printed <= n * t.max_piece_bytes(), "printed more than the pieces");
  std::vector<std::int32_t> fast;  // the vector encode (merges with a heap): the same ids
  SF_FUZZ_CHECK(t.encode(text, bos, eos, fast).is_ok(), "the vector encode failed");
  SF_FUZZ_CHECK(fast.size() == n && std::equal(fast.begin(), fast.end(), ids.begin()), "the vector encode differs");
  // Too small an output is refused (the last id does not fit, or one before the merges).
  if (n > 0) {
    std::vector<std::int32_t> small(n - 1);
    std::size_t m = 0;
    SF_FUZZ_CHECK(!t.encode(text, bos, eos, small, m).is_ok(), "a too-small output was accepted");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const sf_fuzz::two_files in = sf_fuzz::split(data, size);
  const std::span<const std::byte> file(reinterpret_cast<const std::byte*>(in.first.data()), in.first.size());
  auto parsed = io::tokenizer_bin::parse(file, io::tokenizer_bin::until_end, "fuzz.bin");
  if (parsed) {
    const std::vector<std::byte> again = parsed->serialize();
    SF_FUZZ_CHECK(again.size() == file.size() && std::equal(again.begin(), again.end(), file.begin()),
                  "the file does not round-trip");
    auto sized = io::tokenizer_bin::parse(file, parsed->size(), "fuzz.bin");
    SF_FUZZ_CHECK(sized.is_ok(), sized.message());
    SF_FUZZ_CHECK(!io::tokenizer_bin::parse(file, parsed->size() + 1, "fuzz.bin").is_ok(), "one piece more accepted");
  } else {
    SF_FUZZ_CHECK(std::string(parsed.message()).rfind("'fuzz.bin': tokenizer.bin: ", 0) == 0, parsed.message());
  }
  std::optional<io::tokenizer_bin> from_json;
  if (!in.first.empty() && in.first[0] == '{') {
    const std::string_view json(reinterpret_cast<const char*>(in.first.data()), in.first.size());
    auto index = io::parse_hf_weight_index(json, "fuzz.json");
    if (index) {
      SF_FUZZ_CHECK(!index->weight_map.empty() && !index->shards.empty(), "an index without tensors or shards");
      for (const std::string& shard : index->shards)
        SF_FUZZ_CHECK(!shard.empty() && shard != ".." && shard.find('/') == std::string::npos, "a shard outside the directory");
    } else {
      SF_FUZZ_CHECK(std::string(index.message()).rfind("'fuzz.json': ", 0) == 0, index.message());
    }
    auto tj = io::parse_hf_tokenizer_json(json, "fuzz.json");
    if (tj) {
      SF_FUZZ_CHECK(tj->size() >= 259, "a tokenizer.json of fewer than 259 pieces");
      const std::vector<std::byte> b = tj->serialize();
      auto again = io::tokenizer_bin::parse(b, tj->size(), "again");
      SF_FUZZ_CHECK(again.is_ok(), again.message());
      from_json = std::move(*tj);
    } else {
      SF_FUZZ_CHECK(std::string(tj.message()).rfind("'fuzz.json': ", 0) == 0, tj.message());
    }
  }
  const io::tokenizer_bin& t = from_json ? *from_json : parsed ? *parsed : builtin();
  std::string_view text(reinterpret_cast<const char*>(in.second.data()), in.second.size());
  if (text.size() > 512) text = text.substr(0, 512);
  check_encode(t, text, true, false);
  check_encode(t, text, false, true);
  return 0;
}
