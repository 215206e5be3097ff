// staticformer/bpe.hpp — llama2.c's sentencepiece BPE tokenizer (run.c's encode and decode), over
// caller-owned constant tables: freestanding, no heap, no exceptions, usable from flash.
//
//   sf::bpe_tables t{bytes, offsets, scores, sorted};    // e.g. constexpr arrays, or views of
//   sf::bpe_tokenizer tok;                                // sf::io::tokenizer_bin's vectors
//   if (sf::status s = sf::bpe_tokenizer::make(t, tok); !s) puts(s.message());
//   std::int32_t ids[64]; std::size_t n;
//   tok.encode("Hello", /*bos=*/true, /*eos=*/false, ids, n);   // run.c's encode(t, text, 1, 0, ...)
//   tok.piece_after(prev, id);                            // run.c's decode(t, prev, id)
//   sf::bpe_printable(tok.piece_after(prev, id));         // what run.c's safe_printf prints of it
//
// The tables (docs/formats.md, "tokenizer.bin", is the file they come from):
//   bytes    every piece's bytes, concatenated (piece i is bytes[offsets[i] .. offsets[i+1]))
//   offsets  size() + 1 non-decreasing offsets into bytes
//   scores   size() merge scores (a pair merges into the piece of the highest score)
//   sorted   the ids ordered by piece (bytes compared as unsigned char, like strcmp), equal pieces
//            by id: bpe_sort_index() makes it (firmware can keep it in flash, made by the host)
// make() checks all of them (and that the vocabulary has at least the 3 ids <unk>, <s>, </s>).
//
// The behaviour is run.c's, token for token:
//   encode(text, bos, eos): <s> (id 1) if bos; if text is not empty, the dummy prefix: the piece
//   " "; then per "codepoint" (a byte and the continuation bytes 10xxxxxx that follow it, at most 4
//   bytes in all; a stray continuation byte starts one of its own, as in run.c, so any byte string is
//   accepted) its piece, or else one token per byte, id = byte + 3 (the <0xXX> pieces); then, while
//   some adjacent pair concatenates to a piece, the pair whose piece has the highest score (above
//   -1e10; the first such pair on ties) merges; </s> (id 2) if eos. The <s> token takes part in
//   the merges, as in run.c.
//   piece_after(prev, id): the piece of id; after <s> (prev == 1) without its leading ' '; a piece
//   that glibc's sscanf(piece, "<0x%02hhX>") reads as a byte (such as "<0x0A>") is that one byte.
//   bpe_printable(p): p as run.c's safe_printf prints it: up to its first NUL byte, and nothing for
//   a single byte that is neither printable nor white space (isprint / isspace, "C" locale).
// Where run.c has undefined behaviour this class defines it (documented, not run.c's): a missing
// " " piece gives the dummy prefix by byte fallback (35); a byte fallback id outside the vocabulary
// (fewer than 259 pieces) is <unk> (0); equal pieces resolve to the lowest id (run.c: qsort's
// order); a text or a piece with a NUL byte is compared in full (run.c's C strings end there).
// The ids always fit max_tokens(text) = text.size() + 3; a smaller output is an error status (the
// ids so far stay written), never an overrun.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "staticformer/status.hpp"
#include "staticformer/tokenizer.hpp"

namespace sf {

struct bpe_tables {
  std::span<const char> bytes;
  std::span<const std::uint32_t> offsets;  // size() + 1
  std::span<const float> scores;           // size()
  std::span<const std::int32_t> sorted;    // size()
};

namespace bpe_detail {
// byte_values[b] == b: the one-byte pieces of the <0xXX> tokens, viewed in place.
inline constexpr char byte_values[256] = {
#define SF_BPE_B16(h) static_cast<char>(h), static_cast<char>(h + 1), static_cast<char>(h + 2), static_cast<char>(h + 3), \
  static_cast<char>(h + 4), static_cast<char>(h + 5), static_cast<char>(h + 6), static_cast<char>(h + 7),                \
  static_cast<char>(h + 8), static_cast<char>(h + 9), static_cast<char>(h + 10), static_cast<char>(h + 11),              \
  static_cast<char>(h + 12), static_cast<char>(h + 13), static_cast<char>(h + 14), static_cast<char>(h + 15)
    SF_BPE_B16(0),   SF_BPE_B16(16),  SF_BPE_B16(32),  SF_BPE_B16(48),  SF_BPE_B16(64),  SF_BPE_B16(80),
    SF_BPE_B16(96),  SF_BPE_B16(112), SF_BPE_B16(128), SF_BPE_B16(144), SF_BPE_B16(160), SF_BPE_B16(176),
    SF_BPE_B16(192), SF_BPE_B16(208), SF_BPE_B16(224), SF_BPE_B16(240)
#undef SF_BPE_B16
};

constexpr int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
constexpr bool c_isspace(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
constexpr bool c_isprint(unsigned char c) { return c >= 0x20 && c <= 0x7e; }

// (a + b) <=> c, bytes compared as unsigned char: -1, 0, 1.
constexpr int compare_concat(std::string_view a, std::string_view b, std::string_view c) {
  const std::size_t n = a.size() + b.size();
  for (std::size_t i = 0; i < n && i < c.size(); ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : b[i - a.size()]);
    const auto y = static_cast<unsigned char>(c[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  return n < c.size() ? -1 : n > c.size() ? 1 : 0;
}
}  // namespace bpe_detail

// The byte of a piece that glibc's sscanf(piece, "<0x%02hhX>", &b) == 1 reads (run.c's decode):
// "<0x", any white space, then a sign and one hex digit, or one or two hex digits (what follows
// is not looked at; the piece ends at a NUL byte, as a C string). False when it reads none.
constexpr bool bpe_byte_piece(std::string_view p, unsigned char& byte) {
  if (p.size() < 3 || p[0] != '<' || p[1] != '0' || p[2] != 'x') return false;
  std::size_t i = 3;
  while (i < p.size() && bpe_detail::c_isspace(static_cast<unsigned char>(p[i]))) ++i;
  auto at = [&](std::size_t k) { return k < p.size() ? p[k] : '\0'; };
  int v = 0;
  if (at(i) == '+' || at(i) == '-') {
    const int d = bpe_detail::hex_digit(at(i + 1));
    if (d < 0) return false;
    v = at(i) == '-' ? -d : d;
  } else {
    const int d0 = bpe_detail::hex_digit(at(i));
    if (d0 < 0) return false;
    const int d1 = bpe_detail::hex_digit(at(i + 1));
    v = d1 < 0 ? d0 : d0 * 16 + d1;
  }
  byte = static_cast<unsigned char>(v & 0xff);
  return true;
}

// What run.c's safe_printf(piece) prints: the piece up to its first NUL byte; nothing when that is
// one byte that is neither printable nor white space (a control code).
constexpr std::string_view bpe_printable(std::string_view piece) {
  for (std::size_t i = 0; i < piece.size(); ++i)
    if (piece[i] == '\0') {
      piece = piece.substr(0, i);
      break;
    }
  if (piece.size() == 1) {
    const auto b = static_cast<unsigned char>(piece[0]);
    if (!(bpe_detail::c_isprint(b) || bpe_detail::c_isspace(b))) return {};
  }
  return piece;
}

// Writes into `sorted` (size() ids) the ids ordered by piece, equal pieces by id: the `sorted`
// table of bpe_tables. `bytes` and `offsets` must be valid (bpe_tokenizer::make's checks); heapsort,
// no allocation, O(V log V) comparisons.
constexpr void bpe_sort_index(std::span<const char> bytes, std::span<const std::uint32_t> offsets,
                              std::span<std::int32_t> sorted) {
  const std::size_t n = sorted.size();
  auto piece = [&](std::int32_t id) {
    const auto i = static_cast<std::size_t>(id);
    return std::string_view(bytes.data() + offsets[i], offsets[i + 1] - offsets[i]);
  };
  auto less = [&](std::int32_t a, std::int32_t b) {
    const int c = bpe_detail::compare_concat(piece(a), {}, piece(b));
    return c < 0 || (c == 0 && a < b);
  };
  for (std::size_t i = 0; i < n; ++i) sorted[i] = static_cast<std::int32_t>(i);
  auto sift = [&](std::size_t root, std::size_t end) {
    while (2 * root + 1 < end) {
      std::size_t child = 2 * root + 1;
      if (child + 1 < end && less(sorted[child], sorted[child + 1])) ++child;
      if (!less(sorted[root], sorted[child])) return;
      const std::int32_t t = sorted[root];
      sorted[root] = sorted[child];
      sorted[child] = t;
      root = child;
    }
  };
  for (std::size_t i = n / 2; i-- > 0;) sift(i, n);
  for (std::size_t end = n; end > 1; --end) {
    const std::int32_t t = sorted[0];
    sorted[0] = sorted[end - 1];
    sorted[end - 1] = t;
    sift(0, end - 1);
  }
}

class bpe_tokenizer {  // an sf::tokenizer, with piece_after
 public:
  static constexpr std::int32_t unk_id = 0, bos_id = 1, eos_id = 2;
  static constexpr std::int32_t byte_fallback_offset = 3;  // <0x00> .. <0xFF> are ids 3 .. 258

  constexpr bpe_tokenizer() = default;

  // Checks the tables (sizes, offsets within bytes, `sorted` strictly ordered, hence a permutation)
  // and makes `out` view them; `out` is untouched on error. The tables must outlive `out`.
  static constexpr status make(const bpe_tables& t, bpe_tokenizer& out) {
    const std::size_t v = t.scores.size();
    if (v < 3) return status::error("bpe tokenizer: ", v, " pieces; at least 3 (<unk>, <s>, </s>) are needed");
    if (v > 0x7fffffff) return status::error("bpe tokenizer: more than 2^31 - 1 pieces");
    if (t.offsets.size() != v + 1)
      return status::error("bpe tokenizer: ", t.offsets.size(), " offsets for ", v, " pieces (", v + 1, " expected)");
    if (t.sorted.size() != v)
      return status::error("bpe tokenizer: ", t.sorted.size(), " sorted ids for ", v, " pieces");
    for (std::size_t i = 0; i < v; ++i)
      if (t.offsets[i + 1] < t.offsets[i])
        return status::error("bpe tokenizer: offset ", i + 1, " (", t.offsets[i + 1], ") is before offset ", i, " (",
                             t.offsets[i], ")");
    if (t.offsets[v] > t.bytes.size())
      return status::error("bpe tokenizer: the pieces end at byte ", t.offsets[v], " of ", t.bytes.size());
    bpe_tokenizer k;
    k.t_ = t;
    for (std::size_t i = 0; i < v; ++i) {
      if (t.sorted[i] < 0 || static_cast<std::size_t>(t.sorted[i]) >= v)
        return status::error("bpe tokenizer: sorted id ", i, " is ", t.sorted[i], ", outside [0, ", v, ")");
      if (i > 0) {
        const int c = bpe_detail::compare_concat(k.raw_piece(t.sorted[i - 1]), {}, k.raw_piece(t.sorted[i]));
        if (c > 0 || (c == 0 && t.sorted[i - 1] >= t.sorted[i]))
          return status::error("bpe tokenizer: the sorted ids are not in order of piece, then id, at entry ", i);
      }
      const std::size_t len = t.offsets[i + 1] - t.offsets[i];
      if (len > k.max_piece_) k.max_piece_ = len;
    }
    k.space_ = k.lookup(" ", {});
    out = k;
    return status::ok();
  }

  constexpr std::size_t size() const { return t_.scores.size(); }
  static constexpr std::int32_t bos() { return bos_id; }
  static constexpr std::int32_t eos() { return eos_id; }
  constexpr std::size_t max_piece_bytes() const { return max_piece_; }
  // Ids enough for encode(text, bos, eos) of any text, whatever bos and eos.
  static constexpr std::size_t max_tokens(std::string_view text) { return text.size() + 3; }
  constexpr const bpe_tables& tables() const { return t_; }

  // The vocabulary's bytes of id ("<0x0A>", " the", "\n<s>\n"); empty outside [0, size()).
  constexpr std::string_view raw_piece(std::int32_t id) const {
    if (id < 0 || static_cast<std::size_t>(id) >= size()) return {};
    const auto i = static_cast<std::size_t>(id);
    return std::string_view(t_.bytes.data() + t_.offsets[i], t_.offsets[i + 1] - t_.offsets[i]);
  }
  constexpr float score(std::int32_t id) const {
    return id >= 0 && static_cast<std::size_t>(id) < size() ? t_.scores[static_cast<std::size_t>(id)] : 0.0f;
  }
  // The id of the piece a + b (the lowest of equal ones), -1 when there is none.
  constexpr std::int32_t lookup(std::string_view a, std::string_view b) const {
    std::size_t lo = 0, hi = t_.sorted.size();  // first entry not less than a + b
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (bpe_detail::compare_concat(a, b, raw_piece(t_.sorted[mid])) > 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo < t_.sorted.size() && bpe_detail::compare_concat(a, b, raw_piece(t_.sorted[lo])) == 0) return t_.sorted[lo];
    return -1;
  }

  // run.c's decode(t, prev, id): see the header comment. Empty outside [0, size()).
  constexpr std::string_view piece_after(std::int32_t prev, std::int32_t id) const {
    std::string_view p = raw_piece(id);
    if (prev == bos_id && !p.empty() && p[0] == ' ') p.remove_prefix(1);
    unsigned char b = 0;
    if (bpe_byte_piece(p, b)) return std::string_view(&bpe_detail::byte_values[b], 1);
    return p;
  }
  // The text of id on its own (not after <s>).
  constexpr std::string_view piece(std::int32_t id) const { return piece_after(-1, id); }

  // run.c's encode(t, text, bos, eos, ids, &n): see the header comment. O(n^2) pair look-ups for
  // n tokens, as run.c (sf::io::tokenizer_bin::encode into a vector gives the same ids in O(n log n)).
  constexpr status encode(std::string_view text, bool bos, bool eos, std::span<std::int32_t> ids,
                          std::size_t& n) const {
    status s = initial_tokens(text, bos, ids, n);
    if (!s) return s;
    n = merge(ids.first(n));
    if (eos) {
      if (n == ids.size())
        return status::error("bpe tokenizer: the output holds ", ids.size(), " ids, too few for a text of ",
                             text.size(), " bytes and </s> (max_tokens: ", max_tokens(text), ")");
      ids[n++] = eos_id;
    }
    return status::ok();
  }

  // The first steps of encode: <s> if bos, the dummy prefix, the codepoints' pieces or bytes; before
  // any merge (at most text.size() + 2 ids).
  constexpr status initial_tokens(std::string_view text, bool bos, std::span<std::int32_t> ids, std::size_t& n) const {
    n = 0;
    if (size() == 0) return status::error("bpe tokenizer: no vocabulary (make() was not called)");
    auto push = [&](std::int32_t id) {
      if (n == ids.size()) return false;
      ids[n++] = id;
      return true;
    };
    bool fits = true;
    if (bos) fits = push(bos_id);
    if (fits && !text.empty()) fits = push(space_ >= 0 ? space_ : fallback(' '));
    for (std::size_t i = 0; fits && i < text.size();) {
      std::size_t len = 1;
      while (len < 4 && i + len < text.size() && (static_cast<unsigned char>(text[i + len]) & 0xc0) == 0x80) ++len;
      const std::string_view cp = text.substr(i, len);
      if (const std::int32_t id = lookup(cp, {}); id >= 0) fits = push(id);
      else
        for (std::size_t k = 0; fits && k < len; ++k) fits = push(fallback(static_cast<unsigned char>(cp[k])));
      i += len;
    }
    if (!fits)
      return status::error("bpe tokenizer: the output holds ", ids.size(), " ids, too few for a text of ", text.size(),
                           " bytes (max_tokens: ", max_tokens(text), ")");
    return status::ok();
  }

  // The merges of encode, in place (ids must be in the vocabulary); returns the new count.
  constexpr std::size_t merge(std::span<std::int32_t> ids) const {
    std::size_t n = ids.size();
    while (n >= 2) {
      float best_score = merge_floor;
      std::int32_t best_id = -1;
      std::size_t best_at = 0;
      for (std::size_t i = 0; i + 1 < n; ++i) {
        const std::int32_t id = lookup(raw_piece(ids[i]), raw_piece(ids[i + 1]));
        if (id >= 0 && t_.scores[static_cast<std::size_t>(id)] > best_score) {
          best_score = t_.scores[static_cast<std::size_t>(id)];
          best_id = id;
          best_at = i;
        }
      }
      if (best_id < 0) break;
      ids[best_at] = best_id;
      for (std::size_t i = best_at + 1; i + 1 < n; ++i) ids[i] = ids[i + 1];
      --n;
    }
    return n;
  }
  // run.c's starting best score: a pair merges only into a piece of a higher score (NaN never).
  static constexpr float merge_floor = -1e10f;

  // The interface (sf::tokenizer): run.c's prompt encoding, with <s> and without </s>.
  constexpr status encode(std::string_view text, std::span<std::int32_t> ids, std::size_t& n) const {
    return encode(text, true, false, ids, n);
  }

 private:
  // A byte's token: <0xXX>, id byte + 3, or <unk> when the vocabulary is too small for it.
  constexpr std::int32_t fallback(unsigned char byte) const {
    const std::int32_t id = byte + byte_fallback_offset;
    return static_cast<std::size_t>(id) < size() ? id : unk_id;
  }

  bpe_tables t_{};
  std::size_t max_piece_ = 0;
  std::int32_t space_ = -1;  // the id of " "
};

static_assert(tokenizer<bpe_tokenizer> && tokenizer_with_context<bpe_tokenizer>);

}  // namespace sf
