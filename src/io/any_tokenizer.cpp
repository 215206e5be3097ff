// src/io/any_tokenizer.cpp — the tokenizer a checkpoint carries, in its metadata
// (staticformer/io/any_tokenizer.hpp): a character tokenizer's byte values, or a BPE tokenizer's
// tokenizer.bin in base64.
#include "staticformer/io/any_tokenizer.hpp"

#include <new>

namespace sf::io {

namespace {
constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

std::string vocabulary_mismatch(std::size_t pieces, std::size_t V) {
  return detail::cat({"the BPE tokenizer has ", detail::num(pieces), " pieces; the model's vocabulary V = ",
                      detail::num(V), ": they must be equal"});
}
}  // namespace

std::string base64_encode(std::span<const std::byte> bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const auto v = static_cast<unsigned>(bytes[i]) << 16 | static_cast<unsigned>(bytes[i + 1]) << 8 |
                   static_cast<unsigned>(bytes[i + 2]);
    for (int k = 3; k >= 0; --k) out += alphabet[(v >> (6 * k)) & 63];
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    const unsigned v = static_cast<unsigned>(bytes[i]) << 16 | (rest == 2 ? static_cast<unsigned>(bytes[i + 1]) << 8 : 0u);
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += rest == 2 ? alphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

result<std::vector<std::byte>> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0)
    return detail::fail({"not base64: ", detail::num(text.size()), " characters, not a multiple of 4"});
  std::vector<std::byte> out;
  try {
    out.reserve(text.size() / 4 * 3);
  } catch (const std::bad_alloc&) {
    return detail::fail({"not enough memory for ", detail::num(text.size() / 4 * 3), " bytes"});
  }
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    // '=' only in the last group: "xx==" (one byte) or "xxx=" (two).
    const std::size_t pad = last && text[i + 3] == '=' ? (text[i + 2] == '=' ? 2 : 1) : 0;
    unsigned v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const int d = k >= 4 - pad ? 0 : base64_value(text[i + k]);
      if (d < 0) {
        const auto c = static_cast<unsigned char>(text[i + k]);
        return detail::fail({"not base64: ", c == '=' ? "misplaced padding '='" : "a character outside its alphabet",
                             " (byte ", detail::num(static_cast<unsigned>(c)), ") at offset ", detail::num(i + k)});
      }
      v = v << 6 | static_cast<unsigned>(d);
    }
    // The bits the padding leaves over must be zero (one encoding per byte string).
    if ((pad == 1 && (v & 0xff) != 0) || (pad == 2 && (v & 0xffff) != 0))
      return detail::fail({"not base64: the bits before the padding at offset ", detail::num(i + 4 - pad),
                           " are not zero"});
    out.push_back(static_cast<std::byte>(v >> 16));
    if (pad < 2) out.push_back(static_cast<std::byte>((v >> 8) & 0xff));
    if (pad < 1) out.push_back(static_cast<std::byte>(v & 0xff));
  }
  return out;
}

bool has_tokenizer(const metadata_map& m) {
  return m.count(sf::tokenizer_metadata_key) != 0 || m.count(bpe_tokenizer_metadata_key) != 0;
}

result<metadata_map> tokenizer_metadata(const sf::char_tokenizer& t, std::size_t V) {
  if (t.size() > V)
    return detail::fail({"the tokenizer has ", detail::num(t.size()), " symbols, more than the model's vocabulary V = ",
                         detail::num(V)});
  return metadata_map{{sf::tokenizer_metadata_key, t.to_metadata()}};
}

result<metadata_map> tokenizer_metadata(const tokenizer_bin& t, std::size_t V) {
  if (t.size() != V) return detail::error(vocabulary_mismatch(t.size(), V));
  try {
    return metadata_map{{bpe_tokenizer_metadata_key, base64_encode(t.serialize())}};
  } catch (const std::bad_alloc&) {
    return detail::fail({"not enough memory for the tokenizer's metadata"});
  }
}

result<metadata_map> tokenizer_metadata(const any_tokenizer& t, std::size_t V) {
  return t.visit([&](const auto& tok) { return tokenizer_metadata(tok, V); });
}

result<any_tokenizer> read_tokenizer(const metadata_map& m, std::size_t V) {
  const auto chars = m.find(sf::tokenizer_metadata_key), bpe = m.find(bpe_tokenizer_metadata_key);
  if (chars != m.end() && bpe != m.end())
    return detail::fail({"two tokenizers (metadata '", sf::tokenizer_metadata_key, "' and '",
                         bpe_tokenizer_metadata_key, "'): a checkpoint carries one"});
  if (chars != m.end()) {
    sf::char_tokenizer t;
    if (sf::status s = sf::char_tokenizer::from_metadata(chars->second, t); !s) return s;
    result<metadata_map> fits = tokenizer_metadata(t, V);  // (the size check, once)
    if (!fits) return fits.status();
    return any_tokenizer(t);
  }
  if (bpe != m.end()) {
    const std::string key = detail::cat({"metadata '", bpe_tokenizer_metadata_key, "'"});
    result<std::vector<std::byte>> bytes = base64_decode(bpe->second);
    if (!bytes) return detail::fail({key, ": ", bytes.message()});
    result<tokenizer_bin> t = tokenizer_bin::parse(*bytes, tokenizer_bin::until_end, bpe_tokenizer_metadata_key);
    if (!t) {  // "'tokenizer.bpe': tokenizer.bin: ..." -> "metadata 'tokenizer.bpe': tokenizer.bin: ..."
      std::string_view m = t.message();
      const std::string origin = detail::cat({"'", bpe_tokenizer_metadata_key, "': "});
      if (m.substr(0, origin.size()) == origin) m.remove_prefix(origin.size());
      return detail::fail({key, ": ", m});
    }
    if (t->size() != V) return detail::fail({key, ": ", vocabulary_mismatch(t->size(), V)});
    return any_tokenizer(std::move(*t));
  }
  return detail::fail({"no tokenizer (metadata '", sf::tokenizer_metadata_key, "' or '", bpe_tokenizer_metadata_key,
                       "')"});
}

}  // namespace sf::io
