// staticformer/io/tokenizer_bin.hpp: llama2.c's tokenizer.bin, read with every length checked
// before use, and written back byte for byte.
#include "staticformer/io/tokenizer_bin.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <queue>
#include <utility>

namespace sf::io {
namespace {

template <class... Parts>
sf::status fail(const std::string& origin, const Parts&... parts) {
  return sf::status::error("'", origin.c_str(), "': tokenizer.bin: ", parts...);
}

std::uint32_t get_u32(std::span<const std::byte> b, std::size_t at) {
  return static_cast<std::uint32_t>(b[at]) | static_cast<std::uint32_t>(b[at + 1]) << 8 |
         static_cast<std::uint32_t>(b[at + 2]) << 16 | static_cast<std::uint32_t>(b[at + 3]) << 24;
}
void put_u32(std::vector<std::byte>& out, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::byte>((v >> (8 * k)) & 0xff));
}

}  // namespace

tokenizer_bin::tokenizer_bin(const tokenizer_bin& o)
    : max_token_length_(o.max_token_length_), bytes_(o.bytes_), offsets_(o.offsets_), scores_(o.scores_),
      sorted_(o.sorted_) {
  (void)sf::bpe_tokenizer::make({bytes_, offsets_, scores_, sorted_}, core_);  // checked when o was made
}
tokenizer_bin::tokenizer_bin(tokenizer_bin&& o) noexcept
    : max_token_length_(o.max_token_length_), bytes_(std::move(o.bytes_)), offsets_(std::move(o.offsets_)),
      scores_(std::move(o.scores_)), sorted_(std::move(o.sorted_)), core_(o.core_) {  // the buffers moved with it
  o.core_ = sf::bpe_tokenizer();
}
tokenizer_bin& tokenizer_bin::operator=(const tokenizer_bin& o) {
  if (this != &o) *this = tokenizer_bin(o);
  return *this;
}
tokenizer_bin& tokenizer_bin::operator=(tokenizer_bin&& o) noexcept {
  if (this != &o) {
    max_token_length_ = o.max_token_length_;
    bytes_ = std::move(o.bytes_);
    offsets_ = std::move(o.offsets_);
    scores_ = std::move(o.scores_);
    sorted_ = std::move(o.sorted_);
    core_ = o.core_;
    o.core_ = sf::bpe_tokenizer();
  }
  return *this;
}

sf::status tokenizer_bin::finish(const std::string& origin) {
  sorted_.resize(scores_.size());
  if (bytes_.empty()) bytes_.reserve(1);  // (a data pointer even for pieces all empty)
  sf::bpe_sort_index(bytes_, offsets_, sorted_);
  sf::status s = sf::bpe_tokenizer::make({bytes_, offsets_, scores_, sorted_}, core_);
  if (!s) return fail(origin, s.message());
  return s;
}

result<tokenizer_bin> tokenizer_bin::parse(std::span<const std::byte> b, std::size_t vocab_size,
                                           const std::string& origin) {
  if (b.size() > max_file_bytes)
    return fail(origin, "the file has more than ", max_file_bytes, " bytes (max_file_bytes)");
  if (b.size() < 4) return fail(origin, "the file has ", b.size(), " bytes, fewer than the 4 of max_token_length");
  // Each piece takes at least 8 bytes (score, length): an expected count that cannot fit is refused
  // before anything is allocated for it.
  const std::size_t most = (b.size() - 4) / 8;
  if (vocab_size != until_end && vocab_size > most)
    return fail(origin, "the file has ", b.size(), " bytes, too few for ", vocab_size,
                " pieces (at most ", most, " fit: 4 bytes, then per piece 8 bytes and its text)");
  tokenizer_bin t;
  try {
    t.max_token_length_ = get_u32(b, 0);
    const auto header_max = static_cast<std::int32_t>(t.max_token_length_);
    if (header_max < 0) return fail(origin, "max_token_length is negative (", header_max, ")");
    const std::size_t reserve = vocab_size != until_end ? vocab_size : most;
    t.scores_.reserve(reserve);
    t.offsets_.reserve(reserve + 1);
    t.offsets_.push_back(0);
    const std::string of = vocab_size == until_end ? "the file" : std::to_string(vocab_size);
    std::size_t at = 4;
    while (vocab_size == until_end ? at < b.size() : t.scores_.size() < vocab_size) {
      const std::size_t i = t.scores_.size();
      if (b.size() - at < 8)
        return fail(origin, "piece ", i, " of ", of.c_str(), " is cut off: its score and length need 8 bytes at offset ", at, ", the file has ",
                    b.size() - at, " more");
      const std::uint32_t score_bits = get_u32(b, at);
      float score;
      std::memcpy(&score, &score_bits, 4);
      const auto len = static_cast<std::int32_t>(get_u32(b, at + 4));
      at += 8;
      if (len < 0) return fail(origin, "piece ", i, " has a negative length (", len, ") at offset ", at - 4);
      if (static_cast<std::size_t>(len) > b.size() - at)
        return fail(origin, "piece ", i, " has length ", len, " at offset ", at - 4, ", but the file has only ",
                    b.size() - at, " bytes after it");
      if (static_cast<std::uint32_t>(len) > t.max_token_length_)
        return fail(origin, "piece ", i, " has ", len, " bytes, more than the header's max_token_length (",
                    t.max_token_length_, ")");
      const auto* p = reinterpret_cast<const char*>(b.data() + at);
      t.bytes_.insert(t.bytes_.end(), p, p + len);
      at += static_cast<std::size_t>(len);
      t.scores_.push_back(score);
      t.offsets_.push_back(static_cast<std::uint32_t>(t.bytes_.size()));
    }
    if (at != b.size())
      return fail(origin, b.size() - at, " bytes follow the ", vocab_size,
                  " pieces expected: the file holds more pieces than the vocabulary size (or is not a tokenizer.bin)");
    if (sf::status s = t.finish(origin); !s) return s;
  } catch (const std::bad_alloc&) {
    return fail(origin, "not enough memory for the pieces");
  }
  return t;
}

result<tokenizer_bin> tokenizer_bin::open(const std::string& path, std::size_t vocab_size) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return sf::status::error("cannot open '", path.c_str(), "': ", std::strerror(errno));
  std::vector<std::byte> bytes;
  bool too_big = false, read_error = false;
  try {
    // Read in chunks up to one byte past the limit: a file of any size, or /dev/zero, costs at most that.
    std::size_t got = 0;
    while (true) {
      const std::size_t chunk = std::size_t{1} << 20;
      bytes.resize(got + chunk);
      const std::size_t r = std::fread(bytes.data() + got, 1, chunk, f);
      got += r;
      if (got > max_file_bytes) {
        too_big = true;
        break;
      }
      if (r < chunk) {
        read_error = std::ferror(f) != 0;
        break;
      }
    }
    bytes.resize(got);
  } catch (const std::bad_alloc&) {
    std::fclose(f);
    return fail(path, "not enough memory to read the file");
  }
  std::fclose(f);
  if (read_error) return fail(path, "cannot read the file");
  if (too_big) return fail(path, "the file has more than ", max_file_bytes, " bytes (max_file_bytes)");
  return parse(bytes, vocab_size, path);
}

result<tokenizer_bin> tokenizer_bin::from_pieces(const std::vector<std::string>& pieces,
                                                 const std::vector<float>& scores, std::uint32_t max_token_length) {
  const std::string origin = "<pieces>";
  if (pieces.size() != scores.size())
    return fail(origin, pieces.size(), " pieces but ", scores.size(), " scores");
  tokenizer_bin t;
  std::size_t longest = 0;
  t.offsets_.push_back(0);
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].size() > 0x7fffffff || t.bytes_.size() + pieces[i].size() > max_file_bytes)
      return fail(origin, "piece ", i, " does not fit in ", max_file_bytes, " bytes");
    t.bytes_.insert(t.bytes_.end(), pieces[i].begin(), pieces[i].end());
    t.offsets_.push_back(static_cast<std::uint32_t>(t.bytes_.size()));
    if (pieces[i].size() > longest) longest = pieces[i].size();
  }
  t.scores_ = scores;
  t.max_token_length_ = max_token_length ? max_token_length : static_cast<std::uint32_t>(longest);
  if (longest > t.max_token_length_)
    return fail(origin, "a piece has ", longest, " bytes, more than max_token_length (", t.max_token_length_, ")");
  if (sf::status s = t.finish(origin); !s) return s;
  return t;
}

result<tokenizer_bin> tokenizer_bin::from_sentencepiece(std::vector<std::string> pieces, const std::vector<float>& scores) {
  static constexpr std::string_view mark = "\xe2\x96\x81";  // U+2581, sentencepiece's space
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    std::string& p = pieces[i];
    if (static_cast<std::int64_t>(i) == sf::bpe_tokenizer::bos()) {
      p = "\n<s>\n";
    } else if (static_cast<std::int64_t>(i) == sf::bpe_tokenizer::eos()) {
      p = "\n</s>\n";
    } else {
      std::string out;
      for (std::size_t k = 0; k < p.size();) {
        if (p.compare(k, mark.size(), mark) == 0) {
          out += ' ';
          k += mark.size();
        } else {
          out += p[k++];
        }
      }
      p = std::move(out);
    }
  }
  return from_pieces(pieces, scores);
}

tokenizer_bin::sentencepiece_vocab tokenizer_bin::to_sentencepiece() const {
  sentencepiece_vocab v;
  for (std::size_t i = 0; i < size(); ++i) {
    const auto id = static_cast<std::int32_t>(i);
    const std::string_view p = raw_piece(id);
    std::string s;
    std::int32_t type = 1;
    if (id == bos() && p == "\n<s>\n") {
      s = "<s>", type = 3;
    } else if (id == eos() && p == "\n</s>\n") {
      s = "</s>", type = 3;
    } else {
      for (const char ch : p) s += ch == ' ' ? std::string_view("\xe2\x96\x81") : std::string_view(&ch, 1);
      if (i == 0 && s == "<unk>") type = 2;
      if (s.size() == 6 && s.starts_with("<0x") && s.ends_with(">")) type = 6;
    }
    v.pieces.push_back(std::move(s));
    v.scores.push_back(score(id));
    v.types.push_back(type);
  }
  return v;
}

// run.c's merges with a heap: each step merges the pair of the highest score, the leftmost of equal
// ones, exactly as its scan does; a pair's entry is stale once either token changed (version counts).
sf::status tokenizer_bin::encode(std::string_view text, bool bos, bool eos, std::vector<std::int32_t>& ids) const {
  ids.clear();
  try {
    ids.resize(text.size() + 2);
    std::size_t n = 0;
    if (sf::status s = core_.initial_tokens(text, bos, ids, n); !s) return s;
    ids.resize(n);
    struct pair {
      float score;
      std::size_t left, right;         // positions in the initial sequence
      std::uint32_t left_v, right_v;  // their versions when the pair was seen
      std::int32_t id;
    };
    auto lower = [](const pair& a, const pair& b) {  // the heap's top: highest score, then leftmost
      return a.score < b.score || (a.score == b.score && a.left > b.left);
    };
    std::priority_queue<pair, std::vector<pair>, decltype(lower)> heap(lower);
    constexpr std::size_t none = static_cast<std::size_t>(-1);
    std::vector<std::size_t> next(n), prev(n);
    std::vector<std::uint32_t> version(n, 0);
    std::vector<char> alive(n, 1);
    for (std::size_t i = 0; i < n; ++i) {
      next[i] = i + 1 < n ? i + 1 : none;
      prev[i] = i > 0 ? i - 1 : none;
    }
    auto consider = [&](std::size_t a, std::size_t b) {
      if (a == none || b == none) return;
      const std::int32_t id = core_.lookup(core_.raw_piece(ids[a]), core_.raw_piece(ids[b]));
      if (id < 0) return;
      const float score = core_.score(id);
      if (score > sf::bpe_tokenizer::merge_floor) heap.push({score, a, b, version[a], version[b], id});
    };
    for (std::size_t i = 0; i + 1 < n; ++i) consider(i, i + 1);
    while (!heap.empty()) {
      const pair p = heap.top();
      heap.pop();
      if (!alive[p.left] || !alive[p.right] || next[p.left] != p.right || version[p.left] != p.left_v ||
          version[p.right] != p.right_v)
        continue;
      ids[p.left] = p.id;
      ++version[p.left];
      alive[p.right] = 0;
      ++version[p.right];
      next[p.left] = next[p.right];
      if (next[p.right] != none) prev[next[p.right]] = p.left;
      consider(prev[p.left], p.left);
      consider(p.left, next[p.left]);
    }
    std::size_t k = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (alive[i]) ids[k++] = ids[i];
    ids.resize(k);
    if (eos) ids.push_back(sf::bpe_tokenizer::eos());
  } catch (const std::bad_alloc&) {
    ids.clear();
    return sf::status::error("bpe tokenizer: not enough memory to encode ", text.size(), " bytes");
  }
  return sf::status::ok();
}

std::vector<std::byte> tokenizer_bin::serialize() const {
  std::vector<std::byte> out;
  out.reserve(4 + 8 * scores_.size() + bytes_.size());
  put_u32(out, max_token_length_);
  for (std::size_t i = 0; i < scores_.size(); ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &scores_[i], 4);
    put_u32(out, bits);
    put_u32(out, offsets_[i + 1] - offsets_[i]);
    for (std::size_t k = offsets_[i]; k < offsets_[i + 1]; ++k) out.push_back(static_cast<std::byte>(bytes_[k]));
  }
  return out;
}

sf::status tokenizer_bin::save(const std::string& path) const {
  const std::vector<std::byte> bytes = serialize();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return sf::status::error("cannot write '", path.c_str(), "': ", std::strerror(errno));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) return sf::status::error("cannot write '", path.c_str(), "'");
  return sf::status::ok();
}

}  // namespace sf::io
