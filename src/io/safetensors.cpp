// src/io/safetensors.cpp — the safetensors format (staticformer/io/safetensors_format.hpp):
// the reader, its header parser and the writer, compiled once into staticformer::io. With
// hf_llama.cpp, the only translation units that include nlohmann::json; detail::parse_checked_json
// (json_checked.hpp, defined here) is their one parse of untrusted JSON.
#include "staticformer/io/safetensors_format.hpp"

#include <algorithm>
#include <cerrno>
#include <exception>
#include <new>
#include <map>
#include <set>
#include <string_view>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/stat.h>  // fstat
#include <unistd.h>    // fsync
#endif
#if defined(__linux__)
#include <sys/mman.h>  // madvise
#endif

#include <nlohmann/json.hpp>

#include "json_checked.hpp"

namespace sf::io {

std::optional<dtype> parse_dtype(std::string_view s) {
  for (int i = 0; i <= static_cast<int>(dtype::U64); ++i)
    if (s == to_string(static_cast<dtype>(i))) return static_cast<dtype>(i);
  return std::nullopt;
}

// "[32, 48]"
std::string to_string(std::span<const std::size_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

namespace detail {
sf::status error(const std::string& message) { return sf::status::error(message.c_str()); }
std::string cat(std::initializer_list<std::string_view> parts) {
  std::size_t n = 0;
  for (std::string_view p : parts) n += p.size();
  std::string s;
  s.reserve(n);
  for (std::string_view p : parts) s.append(p);
  return s;
}
sf::status fail(std::initializer_list<std::string_view> parts) { return sf::status::error(cat(parts).c_str()); }
sf::status problems::status() const {
  if (count_ > 1) return fail({first_, " (and ", num(count_ - 1), " more)"});
  if (count_) return error(first_);
  return sf::status::ok();
}
std::string quoted(std::string_view s) {
  std::string q;  // (appending, not "'" + std::string: g++ 12 warns falsely on that, -Wrestrict)
  q.reserve(s.size() + 2);
  q.append(1, '\'').append(s).append(1, '\'');
  return q;
}
std::string format_double(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form: 1e-05
  return std::string(buf, r.ptr);
}
bool parse_size(const std::string& s, std::size_t& out) {
  if (s.empty() || s.size() > 19) return false;
  std::size_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  out = v;
  return true;
}
bool parse_double(const std::string& s, double& out) {  // finite numbers only
  if (s.empty()) return false;
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc{} || r.ptr != s.data() + s.size() || !std::isfinite(v)) return false;
  out = v;
  return true;
}
std::string shown(std::string_view s) {
  std::string q = "\"";
  q.append(s.substr(0, 40)).append(s.size() > 40 ? "...\"" : "\"");
  return q;
}

// "[3, 1]": the index of element i of a row-major tensor of this shape.
std::string index_string(const shape_t& shape, std::size_t i) {
  std::vector<std::size_t> idx(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    if (shape[k] == 0) break;
    idx[k] = i % shape[k];
    i /= shape[k];
  }
  return to_string(idx);
}
void advise_huge_pages([[maybe_unused]] const void* p, [[maybe_unused]] std::size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t page = 4096;
  if (n < (std::uintptr_t{2} << 20)) return;
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p) / page * page;
  const std::uintptr_t e = (reinterpret_cast<std::uintptr_t>(p) + n + page - 1) / page * page;
  (void)::madvise(reinterpret_cast<void*>(a), e - a, MADV_HUGEPAGE);
#endif
}
bool all_finite_f32(std::span<const std::byte> d) {
  const std::size_t n = d.size() / 4;
  std::uint32_t any = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t b;
    std::memcpy(&b, d.data() + 4 * i, 4);
    any |= static_cast<std::uint32_t>((b & 0x7f800000u) == 0x7f800000u);
  }
  return any == 0;
}
std::string find_not_finite(const file& f, const tensor_info& t) {
  if (t.type == dtype::F32 && all_finite_f32(f.data(t))) return {};
  return find_value(f, t, [](double v) { return !std::isfinite(v); });
}
void push_slot(std::vector<slot>& out, const sf::param_name& n, dtype type, const std::size_t* extents,
               std::size_t rank, const void* data, std::size_t size) {
  out.push_back({std::string(n.c_str(), n.size()), type, shape_t(extents, extents + rank), data, size});
}
}  // namespace detail

namespace detail {
checked_json parse_checked_json(std::string_view text, int max_depth) {
  using json = nlohmann::json;
  struct too_deep {};
  checked_json out;
  std::vector<std::set<std::string>> keys;  // of the objects being parsed, outermost first
  std::vector<bool> is_object;              // of the containers being parsed
  std::string top_key;                      // the current key of the top-level object
  json::parser_callback_t cb = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth >= max_depth) throw too_deep{};
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
          if (!keys.back().insert(k).second && !out.duplicate) {
            out.duplicate = true;
            out.duplicate_key = k, out.duplicate_top_key = top_key, out.duplicate_depth = depth;
          }
        }
        break;
      case json::parse_event_t::value:
        break;
    }
    return true;
  };
  try {
    out.value = json::parse(text.begin(), text.end(), cb);
  } catch (const json::exception& e) {
    out.invalid = e.what();
  } catch (const too_deep&) {
    out.too_deep = true;
  } catch (const std::bad_alloc&) {
    out.invalid = "out of memory";
  }
  return out;
}
}  // namespace detail

// ----------------------------------------------------------------------------- reading

namespace {
bool as_size(const nlohmann::json& j, std::size_t& out) {
  if (!j.is_number_unsigned()) return false;  // non-negative integers parse as unsigned
  std::uint64_t v = j.get<std::uint64_t>();
  if (v > static_cast<std::uint64_t>(SIZE_MAX)) return false;
  out = static_cast<std::size_t>(v);
  return true;
}

// The size of f when it is a regular file (else a stream: a pipe, a device).
std::optional<std::uint64_t> regular_size([[maybe_unused]] std::FILE* f) {
#if defined(__unix__) || defined(__APPLE__)
  struct stat st;
  if (::fstat(::fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0)
    return static_cast<std::uint64_t>(st.st_size);
#endif
  return std::nullopt;
}

// A JSON value in a message: its text, cut when long.
std::string shown(const nlohmann::json& j) {
  std::string s = j.dump();  // (bounded recursion: the header nests at most max_json_depth deep)
  if (s.size() > 64) {
    s.resize(60);
    s += "...";
  }
  return s;
}
}  // namespace

result<file> file::open_file(const std::string& path, bool values) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return detail::fail({"cannot open '", path, "': ", std::strerror(errno)});
  file out;
  out.origin_ = path;
  std::string err;
  try {
    err = out.read(f, values);
  } catch (const std::bad_alloc&) {
    err = detail::cat({"'", path, "': not enough memory to read its ", detail::num(out.wanted_), " bytes"});
  } catch (const std::exception& e) {
    err = detail::cat({"'", path, "': cannot read the header: ", e.what()});
  }
  std::fclose(f);
  if (!err.empty()) return detail::error(err);
  return out;
}

result<file> file::open(const std::string& path) { return open_file(path, true); }
result<file> file::open_header(const std::string& path) { return open_file(path, false); }

result<file> file::parse(std::vector<std::byte> bytes, const std::string& origin) {
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

std::size_t file::append(std::FILE* f, std::size_t n) {
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

std::uint64_t file::header_length() const {
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | std::to_integer<std::uint64_t>(bytes_[static_cast<std::size_t>(i)]);
  return n;
}

std::string file::read(std::FILE* f, bool values) {
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
  if (!values && size) {  // (check_layout has checked the extents against the file's size)
    tensors_.clear();
    bytes_ = {};
    return {};
  }
  wanted_ = data_start_ + declared;
  if (size) {  // at once (the size is checked against the file's): no regrowth; huge pages asked for
    bytes_.reserve(wanted_);
    detail::advise_huge_pages(bytes_.data() + bytes_.size(), wanted_ - bytes_.size());
  }
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

std::string file::validate(std::optional<std::size_t> data_elsewhere) {
  using detail::cat, detail::num;
  const std::string_view o = origin_;
  const std::size_t size = bytes_.size();
  if (size < 8)
    return cat({"truncated file: '", o, "' has ", num(size), " bytes, fewer than the 8 bytes of the header length"});
  const std::uint64_t n = header_length();
  if (std::string e = check_header_length(n, size - 8); !e.empty()) return e;
  data_start_ = 8 + static_cast<std::size_t>(n);
  if (data_elsewhere && data_start_ != size)
    return cat({"'", o, "': the header length ", num(n), " is not the header's"});
  if (std::string e = parse_header(); !e.empty()) return e;
  std::size_t declared = 0;
  return check_layout(data_elsewhere ? *data_elsewhere : size - data_start_, declared);
}

std::span<const std::byte> file::viewed(const tensor_info& t) const {
  // tensors_ is in data order (check_layout): the tensor with t's byte range
  const auto it = std::lower_bound(tensors_.begin(), tensors_.end(), t, [](const tensor_info& a, const tensor_info& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  if (it == tensors_.end() || it->begin != t.begin || it->end != t.end) return {};
  return {views_[static_cast<std::size_t>(it - tensors_.begin())], t.bytes()};
}

std::string file::check_header_length(std::uint64_t n, std::optional<std::uint64_t> available) const {
  using detail::cat, detail::num;
  if (available && n > *available)
    return cat({"truncated file: '", origin_, "': the header length is ", num(n), " bytes, but only ",
                num(*available), " bytes follow it"});
  if (n > max_header_bytes)
    return cat({"'", origin_, "': the header length ", num(n), " exceeds the limit of ", num(max_header_bytes),
                " bytes"});
  return {};
}

std::string file::truncated_at(std::size_t have) const {
  for (const tensor_info& t : tensors_)
    if (t.end > have)
      return detail::cat({"truncated file: '", origin_, "': tensor '", t.name, "' ends at byte ", detail::num(t.end),
                          " of the data, which has ", detail::num(have), " bytes"});
  return detail::cat({"truncated file: '", origin_, "'"});
}

std::string file::parse_header() {
  using json = nlohmann::json;
  using detail::cat, detail::num;
  const std::string_view o = origin_;
  const char* h = reinterpret_cast<const char*>(bytes_.data()) + 8;
  const std::size_t hn = data_start_ - 8;

  std::size_t first = 0;
  while (first < hn && (h[first] == ' ' || h[first] == '\t' || h[first] == '\n' || h[first] == '\r')) ++first;
  if (first == hn || h[first] != '{') return cat({"'", o, "': the header is not a JSON object"});

  // A key twice in one object is an error (a JSON object would silently keep one), and so
  // is nesting deeper than max_json_depth (detail::parse_checked_json).
  detail::checked_json parsed = detail::parse_checked_json(std::string_view(h, hn), max_json_depth);
  if (!parsed.invalid.empty()) return cat({"'", o, "': the header is not valid JSON: ", parsed.invalid});
  if (parsed.too_deep) return cat({"'", o, "': the header nests JSON deeper than ", num(max_json_depth), " levels"});
  json header = std::move(parsed.value);
  std::string duplicate;
  if (parsed.duplicate) {
    const std::string& k = parsed.duplicate_key;
    if (parsed.duplicate_depth == 1) duplicate = cat({"'", o, "': the header names '", k, "' twice"});
    else if (parsed.duplicate_depth == 2 && parsed.duplicate_top_key == "__metadata__")
      duplicate = cat({"'", o, "': __metadata__ names '", k, "' twice"});
    else if (parsed.duplicate_depth == 2)
      duplicate = cat({"tensor '", parsed.duplicate_top_key, "': its header entry names '", k, "' twice"});
    else duplicate = cat({"'", o, "': the header names '", k, "' twice in one object"});
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

std::string file::check_layout(std::optional<std::uint64_t> data_size, std::size_t& declared) {
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

// Any numeric tensor of F32, F64, F16, BF16, I32, U8 or I64 as doubles (for comparisons in tests and tools).
result<std::vector<double>> read_f64(const file& f, std::string_view name) {
  const tensor_info* t = f.find(name);
  if (!t) return detail::fail({"missing tensor '", name, "'"});
  std::vector<double> v(t->elements());
  if (!detail::convert(t->type, f.data(*t), v.data(), v.size()))
    return detail::fail({"tensor '", name, "': cannot read dtype ", to_string(t->type), " as numbers"});
  return v;
}

// ----------------------------------------------------------------------------- writing

writer& writer::set_metadata(const std::string& key, const std::string& value) {
  metadata_[key] = value;
  return *this;
}

writer& writer::set_metadata(const metadata_map& m) {
  for (const auto& [k, v] : m) metadata_[k] = v;
  return *this;
}

writer& writer::add(const std::string& name, dtype type, shape_t shape, const void* data) {
  return add_entry(name, type, std::move(shape), data, true);
}

writer& writer::add_view(const std::string& name, dtype type, shape_t shape, const void* data) {
  return add_entry(name, type, std::move(shape), data, false);
}

writer& writer::add_entry(const std::string& name, dtype type, shape_t shape, const void* data, bool copy) {
  std::size_t n = size_of(type);
  for (std::size_t d : shape) n *= d;
  if (name == "__metadata__") note("the tensor name '__metadata__' is reserved");
  for (const entry& e : entries_)
    if (e.name == name) note(detail::cat({"tensor '", name, "' added twice"}));
  entry e{name, type, std::move(shape), {}, copy ? nullptr : static_cast<const std::byte*>(data), n};
  if (copy) {
    detail::resize_huge(e.data, n);
    if (n) std::memcpy(e.data.data(), data, n);
  }
  entries_.push_back(std::move(e));
  return *this;
}

writer& writer::add_slots(const std::vector<slot>& slots, const std::string& prefix) {
  for (const slot& sl : slots) add(prefix + sl.name, sl.type, sl.shape, sl.data);
  return *this;
}

sf::status writer::check() const { return error_.empty() ? sf::status::ok() : detail::error(error_); }

std::vector<std::size_t> writer::data_order(std::vector<std::size_t>& begin, std::size_t& total) const {
  std::vector<std::size_t> order(entries_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return size_of(entries_[a].type) > size_of(entries_[b].type);
  });
  begin.assign(entries_.size(), 0);
  total = 0;
  for (std::size_t i : order) {
    begin[i] = total;
    total += entries_[i].bytes;
  }
  return order;
}

result<std::vector<std::byte>> writer::serialize() const {
  if (!error_.empty()) return detail::error(error_);
  std::vector<std::size_t> begin;
  std::size_t at = 0;
  const std::vector<std::size_t> order = data_order(begin, at);
  result<std::vector<std::byte>> out = header_bytes(begin, at);
  if (!out) return out;
  for (std::size_t i : order) out->insert(out->end(), entries_[i].begin(), entries_[i].begin() + entries_[i].bytes);
  return out;
}

result<file> writer::view(const std::string& origin) const {
  if (!error_.empty()) return detail::error(error_);
  for (const entry& e : entries_)
    if (!e.view && e.bytes > 0)
      return detail::fail({"tensor '", e.name, "' was copied (add): a view reads add_view's tensors only"});
  std::vector<std::size_t> begin;
  std::size_t at = 0;
  data_order(begin, at);  // (the offsets serialize writes; the file's tensors come out in that order)
  result<std::vector<std::byte>> header = header_bytes(begin, 0);
  if (!header) return header.status();
  file out;
  out.origin_ = origin;
  out.bytes_ = std::move(*header);
  std::string err;
  try {
    err = out.validate(at);
  } catch (const std::exception& e) {
    err = detail::cat({"'", origin, "': cannot read the header: ", e.what()});
  }
  if (!err.empty()) return detail::error(err);
  // each of out.tensors_ (in data order) read where its entry's view is; zero-byte ones read nothing
  out.views_.assign(out.tensors_.size(), nullptr);
  std::map<std::string_view, const entry*> by_name;
  for (const entry& e : entries_) by_name[e.name] = &e;
  for (std::size_t j = 0; j < out.tensors_.size(); ++j) out.views_[j] = by_name.at(out.tensors_[j].name)->view;
  out.is_view_ = true;
  return out;
}

result<std::vector<std::byte>> writer::header_bytes(const std::vector<std::size_t>& begin, std::size_t reserve) const {
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
      text.append(std::to_string(begin[i] + e.bytes)).append("]}");
    }
  } catch (const nlohmann::json::exception& ex) {
    return detail::fail({"cannot write the header: ", ex.what()});
  }
  text += "}";
  text.append((8 - text.size() % 8) % 8, ' ');
  std::vector<std::byte> out;
  out.reserve(8 + text.size() + reserve);
  if (reserve) detail::advise_huge_pages(out.data(), 8 + text.size() + reserve);
  std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>((n >> (8 * i)) & 0xff));
  for (char c : text) out.push_back(static_cast<std::byte>(c));
  return out;
}

namespace detail {
sf::status write_file_atomically(const std::string& path, std::span<const std::byte> bytes) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return detail::fail({"cannot create '", tmp, "': ", std::strerror(errno)});
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
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
}  // namespace detail

sf::status writer::write(const std::string& path) const {
  result<std::vector<std::byte>> bytes = serialize();
  if (!bytes) return bytes.status();
  return detail::write_file_atomically(path, *bytes);
}

void writer::note(const std::string& e) {
  if (error_.empty()) error_ = e;
}

// ----------------------------------------------------------------------------- metadata values

std::string describe(const number_range& r) {
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

sf::status parse_number(std::string_view text, double& out, const number_range& r) {
  double v = 0;
  const bool ok = detail::parse_double(std::string(text), v) && (r.min_open ? v > r.min : v >= r.min) &&
                  (r.max_open ? v < r.max : v <= r.max);
  if (!ok) return detail::fail({"expected ", describe(r), ", found ", detail::shown(text)});
  out = v;
  return sf::status::ok();
}

}  // namespace sf::io
