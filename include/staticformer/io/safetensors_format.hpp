// staticformer/io/safetensors_format.hpp — the safetensors format: reading, validating and writing files.
//
// Part of staticformer/io/safetensors.hpp (include that). Needs nlohmann::json and
// exceptions enabled, internally only: every function reports failure as an sf::status or
// an sf::io::result<T> carrying a readable message, never by throwing.
//
//   auto f = sf::io::file::open("x.safetensors");          // parsed and validated, or an error
//   if (!f) std::puts(f.message());
//   sf::io::writer w;                                       // any tensors + metadata
//   w.add("logits", logits).add("loss", sf::io::dtype::F32, {1}, &loss).add_all(grads, "grad.");
//   sf::status s = w.write("out.safetensors");              // path.tmp, then rename
//
// The format (https://huggingface.co/docs/safetensors): an 8-byte little-endian header
// length N, N bytes of JSON, then the data. The reader follows the reference
// implementation's rules: every tensor's byte range matches dtype x shape, the ranges
// are contiguous from byte 0 without overlap or gap and end exactly at the end of the
// file, `__metadata__` maps strings to strings, names are unique. Beyond them: no key twice
// in any object of the header (nor in `__metadata__`), JSON nested at most 64 deep. A
// hostile or damaged file gives an error message, never a crash: file::open reads the
// 8-byte length and the header (at most 100 MB) first, checks the data the header declares
// against the file's size, and only then reads exactly that data (docs/hostile-input.md).
#pragma once
#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/stat.h>  // fstat
#include <unistd.h>    // fsync
#endif

#include <nlohmann/json.hpp>

#include "staticformer/reflect.hpp"
#include "staticformer/status.hpp"
#include "staticformer/tensor.hpp"

namespace sf::io {

static_assert(std::endian::native == std::endian::little,
              "staticformer/io/safetensors.hpp: safetensors data is little-endian; this header supports "
              "little-endian hosts only");

// ----------------------------------------------------------------------------- dtypes

// Every dtype of the safetensors format; staticformer reads and writes F32, F64, I32 and U8.
enum class dtype { BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64 };

constexpr std::size_t size_of(dtype t) {
  switch (t) {
    case dtype::BOOL: case dtype::U8: case dtype::I8: case dtype::F8_E5M2: case dtype::F8_E4M3: return 1;
    case dtype::I16: case dtype::U16: case dtype::F16: case dtype::BF16: return 2;
    case dtype::I32: case dtype::U32: case dtype::F32: return 4;
    case dtype::F64: case dtype::I64: case dtype::U64: return 8;
  }
  return 0;
}

constexpr const char* to_string(dtype t) {
  switch (t) {
    case dtype::BOOL: return "BOOL";
    case dtype::U8: return "U8";
    case dtype::I8: return "I8";
    case dtype::F8_E5M2: return "F8_E5M2";
    case dtype::F8_E4M3: return "F8_E4M3";
    case dtype::I16: return "I16";
    case dtype::U16: return "U16";
    case dtype::F16: return "F16";
    case dtype::BF16: return "BF16";
    case dtype::I32: return "I32";
    case dtype::U32: return "U32";
    case dtype::F32: return "F32";
    case dtype::F64: return "F64";
    case dtype::I64: return "I64";
    case dtype::U64: return "U64";
  }
  return "?";
}

inline std::optional<dtype> parse_dtype(std::string_view s) {
  for (int i = 0; i <= static_cast<int>(dtype::U64); ++i)
    if (s == to_string(static_cast<dtype>(i))) return static_cast<dtype>(i);
  return std::nullopt;
}

template <class T> struct dtype_of_t;
template <> struct dtype_of_t<float> { static constexpr dtype value = dtype::F32; };
template <> struct dtype_of_t<double> { static constexpr dtype value = dtype::F64; };
template <> struct dtype_of_t<std::int32_t> { static constexpr dtype value = dtype::I32; };
template <> struct dtype_of_t<std::uint8_t> { static constexpr dtype value = dtype::U8; };
// The safetensors dtype of a C++ element type (float, double, int32_t, uint8_t).
template <class T> inline constexpr dtype dtype_of = dtype_of_t<std::remove_cv_t<T>>::value;

using metadata_map = std::map<std::string, std::string>;
using shape_t = std::vector<std::size_t>;

// "[32, 48]"
inline std::string to_string(std::span<const std::size_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

namespace detail {
inline sf::status error(const std::string& message) { return sf::status::error(message.c_str()); }

// Messages are built with one out-of-line call, cat({...}), and numbers are formatted
// without the heap, num(n): short code at each of the many message sites keeps every
// translation unit that includes this header quick to compile.
struct num {
  char buf[24];
  std::size_t len = 0;
  template <class I>
    requires std::is_integral_v<I>
  num(I v) {  // NOLINT: implicit on purpose
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    len = static_cast<std::size_t>(r.ptr - buf);
  }
  operator std::string_view() const { return {buf, len}; }  // NOLINT
};
inline std::string cat(std::initializer_list<std::string_view> parts) {
  std::size_t n = 0;
  for (std::string_view p : parts) n += p.size();
  std::string s;
  s.reserve(n);
  for (std::string_view p : parts) s.append(p);
  return s;
}
inline sf::status fail(std::initializer_list<std::string_view> parts) { return sf::status::error(cat(parts).c_str()); }
inline std::string quoted(std::string_view s) {
  std::string q;  // (appending, not "'" + std::string: g++ 12 warns falsely on that, -Wrestrict)
  q.reserve(s.size() + 2);
  q.append(1, '\'').append(s).append(1, '\'');
  return q;
}

// Every __metadata__ value is a string: numbers are written and read back with these.
inline std::string format_double(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form: 1e-05
  return std::string(buf, r.ptr);
}
inline bool parse_size(const std::string& s, std::size_t& out) {
  if (s.empty() || s.size() > 19) return false;
  std::size_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  out = v;
  return true;
}
inline bool parse_double(const std::string& s, double& out) {  // finite numbers only
  if (s.empty()) return false;
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc{} || r.ptr != s.data() + s.size() || !std::isfinite(v)) return false;
  out = v;
  return true;
}
// "\"text\"", cut when long (hostile values are quoted in messages).
inline std::string shown(std::string_view s) {
  std::string q = "\"";
  q.append(s.substr(0, 40)).append(s.size() > 40 ? "...\"" : "\"");
  return q;
}
}  // namespace detail

// ----------------------------------------------------------------------------- result<T>

// A value or an error status.
template <class T>
class result {
 public:
  result(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose
  result(const sf::status& error) : status_(error) {  // NOLINT
    if (status_.is_ok()) status_ = sf::status::error("sf::io::result: an error result needs a failed status");
  }

  explicit operator bool() const { return value_.has_value(); }
  bool is_ok() const { return value_.has_value(); }
  const sf::status& status() const { return status_; }  // ok when a value is held
  const char* message() const { return status_.message(); }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  sf::status status_;
};

// ----------------------------------------------------------------------------- reading

// One tensor of a file: byte range [begin, end) within the data section (after the header).
struct tensor_info {
  std::string name;
  io::dtype type = dtype::F32;
  shape_t shape;
  std::size_t begin = 0;
  std::size_t end = 0;

  std::size_t elements() const {
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    return n;
  }
  std::size_t bytes() const { return end - begin; }
};

// A parsed, validated safetensors file, held in memory.
class file {
 public:
  // Header limit of the reference implementation.
  static constexpr std::uint64_t max_header_bytes = 100'000'000;
  // JSON nesting limit of the header (a valid header nests 3 deep: header, tensor, shape).
  static constexpr int max_json_depth = 64;

  // Reads and validates a file. The 8-byte length and the header are read and checked
  // first (the header at most max_header_bytes, the data it declares no more than the file
  // holds); then exactly the declared data is read. So a file of any size, or a stream
  // without end such as /dev/zero, costs at most the header limit plus the declared data,
  // and running out of memory is an error message too.
  static result<file> open(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return detail::fail({"cannot open '", path, "': ", std::strerror(errno)});
    file out;
    out.origin_ = path;
    std::string err;
    try {
      err = out.read(f);
    } catch (const std::bad_alloc&) {
      err = detail::cat({"'", path, "': not enough memory to read its ", detail::num(out.wanted_), " bytes"});
    } catch (const std::exception& e) {
      err = detail::cat({"'", path, "': cannot read the header: ", e.what()});
    }
    std::fclose(f);
    if (!err.empty()) return detail::error(err);
    return out;
  }

  // Validates a file's bytes; `origin` names it in messages.
  static result<file> parse(std::vector<std::byte> bytes, const std::string& origin = "<memory>") {
    file out;
    out.origin_ = origin;
    out.bytes_ = std::move(bytes);
    std::string err;
    try {
      err = out.validate();
    } catch (const std::exception& e) {  // e.g. out of memory while building the header
      err = detail::cat({"'", origin, "': cannot read the header: ", e.what()});
    }
    if (!err.empty()) return detail::error(err);
    return out;
  }

  const std::string& origin() const { return origin_; }
  bool has_metadata() const { return has_metadata_; }
  const metadata_map& metadata() const { return metadata_; }
  // The value of a metadata key, if present.
  const std::string* metadata(std::string_view key) const {
    auto it = metadata_.find(std::string(key));
    return it == metadata_.end() ? nullptr : &it->second;
  }
  // Tensors in the order of their data.
  const std::vector<tensor_info>& tensors() const { return tensors_; }
  const tensor_info* find(std::string_view name) const {
    for (const tensor_info& t : tensors_)
      if (t.name == name) return &t;
    return nullptr;
  }
  // The raw little-endian bytes of a tensor (not necessarily aligned: copy, don't cast).
  std::span<const std::byte> data(const tensor_info& t) const {
    return std::span<const std::byte>(bytes_).subspan(data_start_ + t.begin, t.bytes());
  }
  std::size_t size_bytes() const { return bytes_.size(); }

 private:
  std::string origin_;
  std::vector<std::byte> bytes_;
  std::size_t data_start_ = 0;
  std::size_t wanted_ = 0;  // bytes being read (for the out-of-memory message)
  bool has_metadata_ = false;
  metadata_map metadata_;
  std::vector<tensor_info> tensors_;

  static bool as_size(const nlohmann::json& j, std::size_t& out) {
    if (!j.is_number_unsigned()) return false;  // non-negative integers parse as unsigned
    std::uint64_t v = j.get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(SIZE_MAX)) return false;
    out = static_cast<std::size_t>(v);
    return true;
  }

  // Up to n bytes from f appended to bytes_ (in pieces: a short stream never costs n);
  // returns how many were read.
  std::size_t append(std::FILE* f, std::size_t n) {
    const std::size_t at = bytes_.size();
    wanted_ = at + n;
    std::size_t got = 0;
    while (got < n) {
      const std::size_t piece = std::min<std::size_t>(n - got, std::size_t{1} << 24);
      bytes_.resize(at + got + piece);
      const std::size_t r = std::fread(bytes_.data() + at + got, 1, piece, f);
      got += r;
      if (r < piece) break;
    }
    bytes_.resize(at + got);
    return got;
  }

  // The size of f when it is a regular file (else a stream: a pipe, a device).
  static std::optional<std::uint64_t> regular_size([[maybe_unused]] std::FILE* f) {
#if defined(__unix__) || defined(__APPLE__)
    struct stat st;
    if (::fstat(::fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0)
      return static_cast<std::uint64_t>(st.st_size);
#endif
    return std::nullopt;
  }

  std::uint64_t header_length() const {
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | std::to_integer<std::uint64_t>(bytes_[static_cast<std::size_t>(i)]);
    return n;
  }

  // Empty when the file is valid, else the message. Reads only what the header declares.
  std::string read(std::FILE* f) {
    using detail::cat, detail::num;
    const std::string_view o = origin_;
    const std::optional<std::uint64_t> size = regular_size(f);
    auto after = [&](std::uint64_t skip) {  // bytes of the file after the first `skip`, if known
      return size ? std::optional<std::uint64_t>(*size > skip ? *size - skip : 0) : std::nullopt;
    };
    auto read_error = [&] { return cat({"cannot read '", o, "': ", std::strerror(errno)}); };
    if (append(f, 8) < 8) {
      if (std::ferror(f)) return read_error();
      return cat({"truncated file: '", o, "' has ", num(bytes_.size()), " bytes, fewer than the 8 bytes of the header length"});
    }
    const std::uint64_t n = header_length();
    if (std::string e = check_header_length(n, after(8)); !e.empty()) return e;
    const std::size_t hn = static_cast<std::size_t>(n);
    if (const std::size_t got = append(f, hn); got < hn) {
      if (std::ferror(f)) return read_error();
      return cat({"truncated file: '", o, "': the header length is ", num(n), " bytes, but only ", num(got),
                  " bytes follow it"});
    }
    data_start_ = 8 + hn;
    if (std::string e = parse_header(); !e.empty()) return e;
    std::size_t declared = 0;
    if (std::string e = check_layout(after(data_start_), declared); !e.empty()) return e;
    wanted_ = data_start_ + declared;
    if (size) bytes_.reserve(wanted_);  // at once (the size is checked against the file's): no regrowth
    if (const std::size_t got = append(f, declared); got < declared) {
      if (std::ferror(f)) return read_error();
      return truncated_at(got);  // the file is shorter than it was (or a stream ended early)
    }
    std::byte extra[1];
    if (std::fread(extra, 1, 1, f) == 1)
      return cat({"'", o, "': more bytes after the last tensor's data (the data must end with the last tensor)"});
    if (std::ferror(f)) return read_error();
    return {};
  }

  // Empty when the file held in bytes_ is valid, else the message.
  std::string validate() {
    using detail::cat, detail::num;
    const std::string_view o = origin_;
    const std::size_t size = bytes_.size();
    if (size < 8)
      return cat({"truncated file: '", o, "' has ", num(size), " bytes, fewer than the 8 bytes of the header length"});
    const std::uint64_t n = header_length();
    if (std::string e = check_header_length(n, size - 8); !e.empty()) return e;
    data_start_ = 8 + static_cast<std::size_t>(n);
    if (std::string e = parse_header(); !e.empty()) return e;
    std::size_t declared = 0;
    return check_layout(size - data_start_, declared);
  }

  // The header length against what follows it (when known) and the limit.
  std::string check_header_length(std::uint64_t n, std::optional<std::uint64_t> available) const {
    using detail::cat, detail::num;
    if (available && n > *available)
      return cat({"truncated file: '", origin_, "': the header length is ", num(n), " bytes, but only ",
                  num(*available), " bytes follow it"});
    if (n > max_header_bytes)
      return cat({"'", origin_, "': the header length ", num(n), " exceeds the limit of ", num(max_header_bytes),
                  " bytes"});
    return {};
  }

  // "truncated file: ...": the first tensor (in data order) that ends beyond `have` bytes of data.
  std::string truncated_at(std::size_t have) const {
    for (const tensor_info& t : tensors_)
      if (t.end > have)
        return detail::cat({"truncated file: '", origin_, "': tensor '", t.name, "' ends at byte ", detail::num(t.end),
                            " of the data, which has ", detail::num(have), " bytes"});
    return detail::cat({"truncated file: '", origin_, "'"});
  }

  // A JSON value in a message: its text, cut when long.
  static std::string shown(const nlohmann::json& j) {
    std::string s = j.dump();  // (bounded recursion: the header nests at most max_json_depth deep)
    if (s.size() > 64) {
      s.resize(60);
      s += "...";
    }
    return s;
  }

  // Parses and checks the header, bytes_[8, data_start_): fills metadata_ and tensors_ (in
  // the header's order), checking each tensor's dtype, shape and data_offsets on their own.
  std::string parse_header() {
    using json = nlohmann::json;
    using detail::cat, detail::num;
    const std::string_view o = origin_;
    const char* h = reinterpret_cast<const char*>(bytes_.data()) + 8;
    const std::size_t hn = data_start_ - 8;

    std::size_t first = 0;
    while (first < hn && (h[first] == ' ' || h[first] == '\t' || h[first] == '\n' || h[first] == '\r')) ++first;
    if (first == hn || h[first] != '{') return cat({"'", o, "': the header is not a JSON object"});

    // A key twice in one object is an error (a JSON object would silently keep one), and so
    // is nesting deeper than max_json_depth (refused while parsing, before any deep value exists).
    struct too_deep {};
    std::string duplicate;
    std::vector<std::set<std::string>> keys;  // of the objects being parsed, outermost first
    std::vector<bool> is_object;              // of the containers being parsed
    std::string top_key;                      // the current key of the header object
    json::parser_callback_t cb = [&](int depth, json::parse_event_t event, json& parsed) {
      switch (event) {
        case json::parse_event_t::object_start:
        case json::parse_event_t::array_start:
          if (depth >= max_json_depth) throw too_deep{};
          is_object.push_back(event == json::parse_event_t::object_start);
          if (is_object.back()) keys.emplace_back();
          break;
        case json::parse_event_t::object_end:
        case json::parse_event_t::array_end:
          if (!is_object.empty()) {
            if (is_object.back()) keys.pop_back();
            is_object.pop_back();
          }
          break;
        case json::parse_event_t::key:
          if (parsed.is_string() && !keys.empty()) {
            const auto& k = parsed.get_ref<const std::string&>();
            if (depth == 1) top_key = k;
            if (!keys.back().insert(k).second && duplicate.empty()) {
              if (depth == 1) duplicate = cat({"'", o, "': the header names '", k, "' twice"});
              else if (depth == 2 && top_key == "__metadata__")
                duplicate = cat({"'", o, "': __metadata__ names '", k, "' twice"});
              else if (depth == 2) duplicate = cat({"tensor '", top_key, "': its header entry names '", k, "' twice"});
              else duplicate = cat({"'", o, "': the header names '", k, "' twice in one object"});
            }
          }
          break;
        case json::parse_event_t::value:
          break;
      }
      return true;
    };
    json header;
    try {
      header = json::parse(h, h + hn, cb);
    } catch (const json::exception& e) {
      return cat({"'", o, "': the header is not valid JSON: ", e.what()});
    } catch (const too_deep&) {
      return cat({"'", o, "': the header nests JSON deeper than ", num(max_json_depth), " levels"});
    }
    if (!header.is_object()) return cat({"'", o, "': the header is not a JSON object"});
    if (!duplicate.empty()) return duplicate;

    for (auto it = header.begin(); it != header.end(); ++it) {
      const std::string& name = it.key();
      const json& v = it.value();
      if (name == "__metadata__") {
        if (v.is_null()) continue;
        if (!v.is_object()) return cat({"'", o, "': __metadata__ must be an object mapping strings to strings"});
        has_metadata_ = true;
        for (auto m = v.begin(); m != v.end(); ++m) {
          if (!m.value().is_string())
            return cat({"'", o, "': __metadata__ value of '", m.key(), "' is ", m.value().type_name(),
                        ", not a string"});
          metadata_[m.key()] = m.value().get<std::string>();
        }
        continue;
      }
      auto bad = [&](std::initializer_list<std::string_view> parts) {
        return cat({"tensor '", name, "': ", cat(parts)});
      };
      if (!v.is_object()) return bad({"its header entry is not an object"});
      auto d = v.find("dtype");
      auto s = v.find("shape");
      auto off = v.find("data_offsets");
      if (d == v.end() || s == v.end() || off == v.end())
        return bad({"its header entry needs \"dtype\", \"shape\" and \"data_offsets\""});
      if (!d->is_string()) return bad({"dtype is not a string"});
      const std::string& dname = d->get_ref<const std::string&>();
      std::optional<io::dtype> type = parse_dtype(dname);
      if (!type) return bad({"unknown dtype \"", dname, "\""});
      tensor_info t;
      t.name = name;
      t.type = *type;
      if (!s->is_array()) return bad({"shape is not an array"});
      std::size_t elements = 1;
      bool overflow = false;
      for (const json& e : *s) {
        std::size_t dim = 0;
        if (!as_size(e, dim)) return bad({"shape ", shown(*s), " is not a list of non-negative integers"});
        t.shape.push_back(dim);
        if (dim != 0 && elements > SIZE_MAX / dim) overflow = true;
        else elements *= dim;
      }
      if (!overflow && elements > SIZE_MAX / size_of(t.type)) overflow = true;
      if (overflow) return bad({"shape ", to_string(t.shape), " is too large"});
      if (!off->is_array() || off->size() != 2 || !as_size((*off)[0], t.begin) || !as_size((*off)[1], t.end))
        return bad({"data_offsets ", shown(*off), " is not a pair of non-negative integers"});
      if (t.end < t.begin) return bad({"data_offsets [", num(t.begin), ", ", num(t.end), "] end before they begin"});
      const std::size_t need = elements * size_of(t.type);
      if (t.end - t.begin != need)
        return bad({"data_offsets [", num(t.begin), ", ", num(t.end), "] hold ", num(t.end - t.begin),
                    " bytes, but ", to_string(t.type), " ", to_string(t.shape), " needs ", num(need)});
      tensors_.push_back(std::move(t));
    }
    return {};
  }

  // Checks the tensors' byte ranges against each other and against the data size, when
  // known: every range within the data, contiguous from byte 0 without overlap or gap, the
  // last one ending at the end of the data. Sorts tensors_ into data order; `declared` is
  // the data size the header declares.
  std::string check_layout(std::optional<std::uint64_t> data_size, std::size_t& declared) {
    using detail::cat, detail::num;
    const std::string_view o = origin_;
    if (data_size)
      for (const tensor_info& t : tensors_)
        if (t.end > *data_size)
          return cat({"truncated file: '", o, "': tensor '", t.name, "' ends at byte ", num(t.end),
                      " of the data, which has ", num(*data_size), " bytes"});
    std::stable_sort(tensors_.begin(), tensors_.end(), [](const tensor_info& a, const tensor_info& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    std::size_t at = 0;
    const tensor_info* prev = nullptr;
    for (const tensor_info& t : tensors_) {
      if (t.begin < at)
        return cat({"'", o, "': tensor '", t.name, "' [", num(t.begin), ", ", num(t.end), ") overlaps tensor '",
                    prev->name, "' [", num(prev->begin), ", ", num(prev->end), ")"});
      if (t.begin > at)
        return cat({"'", o, "': tensor '", t.name, "' starts at byte ", num(t.begin),
                    " of the data, but the previous data ends at byte ", num(at), " (tensors must be contiguous)"});
      at = t.end;
      prev = &t;
    }
    if (data_size && at != *data_size)
      return cat({"'", o, "': ", num(*data_size - at),
                  " bytes after the last tensor's data (the data must end with the last tensor)"});
    declared = at;
    return {};
  }
};

namespace detail {
template <class Dst>
bool convert(dtype from, std::span<const std::byte> src, Dst* dst, std::size_t n) {
  auto each = [&](auto proto) {
    using S = decltype(proto);
    for (std::size_t i = 0; i < n; ++i) {
      S v;
      std::memcpy(&v, src.data() + i * sizeof(S), sizeof(S));
      dst[i] = static_cast<Dst>(v);
    }
    return true;
  };
  switch (from) {
    case dtype::F32: return each(float{});
    case dtype::F64: return each(double{});
    case dtype::I32: return each(std::int32_t{});
    case dtype::U8: return each(std::uint8_t{});
    case dtype::I64: return each(std::int64_t{});
    default: return false;
  }
}

// "[3, 1]": the index of element i of a row-major tensor of this shape.
inline std::string index_string(const shape_t& shape, std::size_t i) {
  std::vector<std::size_t> idx(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    if (shape[k] == 0) break;
    idx[k] = i % shape[k];
    i /= shape[k];
  }
  return to_string(idx);
}

// The first element of an F32 or F64 tensor for which bad(value) holds, as "element [3, 1] is
// nan" (its index and value), or "" when there is none (or the dtype is not F32 or F64).
template <class Bad>
std::string find_value(const file& f, const tensor_info& t, Bad bad) {
  const std::span<const std::byte> d = f.data(t);
  auto scan = [&](auto proto) -> std::string {
    using S = decltype(proto);
    const std::size_t n = d.size() / sizeof(S);
    for (std::size_t i = 0; i < n; ++i) {
      S v;
      std::memcpy(&v, d.data() + i * sizeof(S), sizeof(S));
      if (bad(static_cast<double>(v))) {
        const double x = static_cast<double>(v);
        return cat({"element ", index_string(t.shape, i), " is ", std::isnan(x) ? "nan" : format_double(x)});
      }
    }
    return {};
  };
  if (t.type == dtype::F32) return scan(float{});
  if (t.type == dtype::F64) return scan(double{});
  return {};
}
inline bool not_finite(double v) { return !std::isfinite(v); }

template <class T>
constexpr bool accepts(dtype found) {  // exact, or an exact widening F32 -> double
  return found == dtype_of<T> || (std::is_same_v<T, double> && found == dtype::F32);
}
}  // namespace detail

// Copies tensor `name` into `out`: its dtype must be T's (or F32 into double) and its shape `out`'s.
template <class T, class... A>
sf::status read_tensor(const file& f, std::string_view name, sf::tensor<T, A...>& out) {
  using Tensor = sf::tensor<T, A...>;
  const tensor_info* t = f.find(name);
  if (!t) return detail::fail({"missing tensor '", name, "'"});
  if (!detail::accepts<T>(t->type))
    return detail::fail({"tensor '", name, "': expected dtype ", to_string(dtype_of<T>), ", found ", to_string(t->type)});
  const shape_t want(std::begin(Tensor::extents), std::end(Tensor::extents));
  if (t->shape != want)
    return detail::fail({"tensor '", name, "': expected shape ", to_string(want), ", found ", to_string(t->shape)});
  detail::convert(t->type, f.data(*t), out.data(), Tensor::size);
  return sf::status::ok();
}

// Any numeric tensor of F32, F64, I32, U8 or I64 as doubles (for comparisons in tests and tools).
inline result<std::vector<double>> read_f64(const file& f, std::string_view name) {
  const tensor_info* t = f.find(name);
  if (!t) return detail::fail({"missing tensor '", name, "'"});
  std::vector<double> v(t->elements());
  if (!detail::convert(t->type, f.data(*t), v.data(), v.size()))
    return detail::fail({"tensor '", name, "': cannot read dtype ", to_string(t->type), " as numbers"});
  return v;
}

// One tensor of a parameter struct (parameters, gradients, moments), type-erased: its
// checkpoint name, element dtype (F32 for float, F64 for double), shape and storage.
struct slot {
  std::string name;
  io::dtype type;
  shape_t shape;
  const void* data;
  std::size_t size;  // elements
};

namespace detail {
inline void push_slot(std::vector<slot>& out, const sf::param_name& n, dtype type, const std::size_t* extents,
                      std::size_t rank, const void* data, std::size_t size) {
  out.push_back({std::string(n.c_str(), n.size()), type, shape_t(extents, extents + rank), data, size});
}
}  // namespace detail

// Every tensor of a reflected struct, in visiting order (the order of sf::visit).
template <class S>
std::vector<slot> tensor_slots(const S& s) {
  std::vector<slot> out;
  sf::visit(
      [&](const sf::param_name& n, const auto& t) {
        using Tensor = std::remove_cvref_t<decltype(t)>;
        detail::push_slot(out, n, dtype_of<typename Tensor::value_type>, Tensor::extents, Tensor::rank, t.data(),
                          Tensor::size);
      },
      s);
  return out;
}

// ----------------------------------------------------------------------------- writing

// Collects named tensors (copied when added) and metadata, then writes one file.
class writer {
 public:
  writer& set_metadata(const std::string& key, const std::string& value) {
    metadata_[key] = value;
    return *this;
  }
  writer& set_metadata(const metadata_map& m) {
    for (const auto& [k, v] : m) metadata_[k] = v;
    return *this;
  }

  // `data` points to elements of `type`, row-major, as many as the shape holds; copied now.
  writer& add(const std::string& name, dtype type, shape_t shape, const void* data) {
    std::size_t n = size_of(type);
    for (std::size_t d : shape) n *= d;
    if (name == "__metadata__") note("the tensor name '__metadata__' is reserved");
    for (const entry& e : entries_)
      if (e.name == name) note(detail::cat({"tensor '", name, "' added twice"}));
    entry e{name, type, std::move(shape), std::vector<std::byte>(n)};
    if (n) std::memcpy(e.data.data(), data, n);
    entries_.push_back(std::move(e));
    return *this;
  }
  template <class T>
  writer& add(const std::string& name, const std::vector<T>& values, shape_t shape) {
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    if (n != values.size()) {
      note(detail::cat({"tensor '", name, "': shape ", to_string(shape), " holds ", detail::num(n),
                        " elements, but ", detail::num(values.size()), " were given"}));
      return *this;
    }
    return add(name, dtype_of<T>, std::move(shape), values.data());
  }
  // An sf::tensor, with its own shape.
  template <class T, class... A>
  writer& add(const std::string& name, const sf::tensor<T, A...>& t) {
    using Tensor = sf::tensor<T, A...>;
    return add(name, dtype_of<T>, shape_t(std::begin(Tensor::extents), std::end(Tensor::extents)), t.data());
  }
  // Every tensor of a reflected struct (parameters, gradients, ...) under prefix + its checkpoint name.
  template <class S>
  writer& add_all(const S& s, const std::string& prefix = "") {
    return add_slots(tensor_slots(s), prefix);
  }
  writer& add_slots(const std::vector<slot>& slots, const std::string& prefix = "") {
    for (const slot& sl : slots) add(prefix + sl.name, sl.type, sl.shape, sl.data);
    return *this;
  }

  std::size_t tensor_count() const { return entries_.size(); }
  // The first problem found while adding, if any.
  sf::status check() const { return error_.empty() ? sf::status::ok() : detail::error(error_); }

  // The file's bytes: header padded with spaces to a multiple of 8, data ordered by
  // decreasing element size so that every tensor is aligned to its element size.
  result<std::vector<std::byte>> serialize() const {
    if (!error_.empty()) return detail::error(error_);
    std::vector<std::size_t> order(entries_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return size_of(entries_[a].type) > size_of(entries_[b].type);
    });
    std::vector<std::size_t> begin(entries_.size());
    std::size_t at = 0;
    for (std::size_t i : order) {
      begin[i] = at;
      at += entries_[i].data.size();
    }
    // The header, in the reference implementation's layout: compact, __metadata__ first,
    // then the tensors in the order they were added, each as {"dtype", "shape", "data_offsets"}.
    std::string text = "{";
    try {
      auto str = [](const std::string& v) { return nlohmann::json(v).dump(); };  // escaped; throws if not UTF-8
      if (!metadata_.empty()) {
        text += "\"__metadata__\":{";
        bool first = true;
        for (const auto& [k, v] : metadata_) {
          if (!first) text += ',';
          first = false;
          text.append(str(k)).append(1, ':').append(str(v));
        }
        text += "}";
        if (!entries_.empty()) text += ',';
      }
      for (std::size_t i = 0; i < entries_.size(); ++i) {
        const entry& e = entries_[i];
        if (i) text += ',';
        text.append(str(e.name)).append(":{\"dtype\":\"").append(to_string(e.type)).append("\",\"shape\":[");
        for (std::size_t k = 0; k < e.shape.size(); ++k) text.append(k ? "," : "").append(std::to_string(e.shape[k]));
        text.append("],\"data_offsets\":[").append(std::to_string(begin[i])).append(1, ',');
        text.append(std::to_string(begin[i] + e.data.size())).append("]}");
      }
    } catch (const nlohmann::json::exception& ex) {
      return detail::fail({"cannot write the header: ", ex.what()});
    }
    text += "}";
    text.append((8 - text.size() % 8) % 8, ' ');
    std::vector<std::byte> out;
    out.reserve(8 + text.size() + at);
    std::uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>((n >> (8 * i)) & 0xff));
    for (char c : text) out.push_back(static_cast<std::byte>(c));
    for (std::size_t i : order) out.insert(out.end(), entries_[i].data.begin(), entries_[i].data.end());
    return out;
  }

  // Writes `path + ".tmp"`, then renames it over `path`: readers never see a partial file.
  sf::status write(const std::string& path) const {
    result<std::vector<std::byte>> bytes = serialize();
    if (!bytes) return bytes.status();
    const std::string tmp = path + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) return detail::fail({"cannot create '", tmp, "': ", std::strerror(errno)});
    bool ok = std::fwrite(bytes->data(), 1, bytes->size(), f) == bytes->size();
    ok = std::fflush(f) == 0 && ok;
#if defined(__unix__) || defined(__APPLE__)
    ok = ::fsync(::fileno(f)) == 0 && ok;
#endif
    int saved = errno;
    ok = std::fclose(f) == 0 && ok;
    if (!ok) {
      std::remove(tmp.c_str());
      return detail::fail({"cannot write '", tmp, "': ", std::strerror(saved ? saved : errno)});
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      saved = errno;
      std::remove(tmp.c_str());
      return detail::fail({"cannot rename '", tmp, "' to '", path, "': ", std::strerror(saved)});
    }
    return sf::status::ok();
  }

 private:
  struct entry {
    std::string name;
    dtype type;
    shape_t shape;
    std::vector<std::byte> data;
  };
  std::vector<entry> entries_;
  metadata_map metadata_;
  std::string error_;
  void note(const std::string& e) {
    if (error_.empty()) error_ = e;
  }
};

// ----------------------------------------------------------------------------- metadata values


// Strict values from text, for metadata and command lines alike: the whole text is one
// decimal number (no spaces, no '+', no hex), a real number is finite, and the value lies
// in the given range. On failure the status says what was expected and what was found,
//   expected a number > 0, found "nan"
//   expected an integer from 1 to 1000000000000, found "-5"
// and `out` is unchanged; callers prefix the name of what they parse.
struct number_range {
  double min = -std::numeric_limits<double>::max(), max = std::numeric_limits<double>::max();
  bool min_open = false, max_open = false;  // exclude the bound itself
};

// "a number > 0", "a number from 0 to 1", "a number >= 0 and < 1", "a number"
inline std::string describe(const number_range& r) {
  auto format_double = [](double v) {  // whole numbers in full: 1000000000, not 1e+09
    if (std::abs(v) < 1e15 && v == std::trunc(v)) return std::to_string(static_cast<long long>(v));
    return detail::format_double(v);
  };
  const bool has_min = r.min > -std::numeric_limits<double>::max(), has_max = r.max < std::numeric_limits<double>::max();
  const std::string lo = (r.min_open ? " > " : " >= ") + format_double(r.min);
  const std::string hi = (r.max_open ? " < " : " <= ") + format_double(r.max);
  if (has_min && has_max && !r.min_open && !r.max_open)
    return "a number from " + format_double(r.min) + " to " + format_double(r.max);
  if (has_min && has_max) return "a number" + lo + " and" + hi;
  if (has_min) return "a number" + lo;
  if (has_max) return "a number" + hi;
  return "a number";
}

inline sf::status parse_number(std::string_view text, double& out, const number_range& r = {}) {
  double v = 0;
  const bool ok = detail::parse_double(std::string(text), v) && (r.min_open ? v > r.min : v >= r.min) &&
                  (r.max_open ? v < r.max : v <= r.max);
  if (!ok) return detail::fail({"expected ", describe(r), ", found ", detail::shown(text)});
  out = v;
  return sf::status::ok();
}

template <class I>
  requires std::is_integral_v<I>
sf::status parse_integer(std::string_view text, I& out, I min, I max) {
  I v{};
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  const bool ok = !text.empty() && r.ec == std::errc{} && r.ptr == text.data() + text.size() && v >= min && v <= max;
  if (!ok)
    return detail::fail({"expected an integer from ", detail::num(min), " to ", detail::num(max), ", found ",
                         detail::shown(text)});
  out = v;
  return sf::status::ok();
}

}  // namespace sf::io
