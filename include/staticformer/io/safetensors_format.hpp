// staticformer/io/safetensors_format.hpp — the safetensors format: reading, validating and writing files.
//
// Part of staticformer/io/safetensors.hpp (include that). Declarations and templates only:
// the reader, the writer and the header parser are compiled once, in the library
// staticformer::io (src/io/safetensors.cpp; it and hf_llama.cpp use nlohmann::json, which needs
// exceptions internally). Every function reports failure as an sf::status or an
// sf::io::result<T> carrying a readable message, never by throwing.
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
#include <bit>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

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

std::optional<dtype> parse_dtype(std::string_view s);

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
std::string to_string(std::span<const std::size_t> shape);

namespace detail {
sf::status error(const std::string& message);

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
std::string cat(std::initializer_list<std::string_view> parts);
sf::status fail(std::initializer_list<std::string_view> parts);
std::string quoted(std::string_view s);  // 'text'

// The problems of a file, for checks that go on past the first so that its message can say how
// many more there are: status() is ok without any, else "the first (and 3 more)".
class problems {
 public:
  void add(std::string message) {
    if (!count_++) first_ = std::move(message);
  }
  sf::status status() const;

 private:
  std::string first_;
  std::size_t count_ = 0;
};

// Every __metadata__ value is a string: numbers are written and read back with these.
std::string format_double(double v);                       // shortest round-trip form: 1e-05
bool parse_size(const std::string& s, std::size_t& out);    // decimal digits only, at most 19
bool parse_double(const std::string& s, double& out);       // finite numbers only
// "\"text\"", cut when long (hostile values are quoted in messages).
std::string shown(std::string_view s);
// Writes `bytes` to path.tmp, syncs, renames it to path: a reader never sees half a file.
sf::status write_file_atomically(const std::string& path, std::span<const std::byte> bytes);
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
  static result<file> open(const std::string& path);

  // Validates a file's bytes; `origin` names it in messages.
  static result<file> parse(std::vector<std::byte> bytes, const std::string& origin = "<memory>");

  // The header alone: a regular file is read and checked as open() reads it — the header, and the
  // tensors' extents against the file's size, with the same messages — but its values are not
  // read. What it returns has the metadata and no tensors (tensors() is empty, so every loader
  // refuses it: "missing tensor ..."), and header_only() is true. For what needs only the metadata
  // (the `staticformer` command, before it hands a checkpoint to the executable that reads it).
  // A stream, whose size is not known, is read whole, as by open().
  static result<file> open_header(const std::string& path);
  bool header_only() const { return bytes_.empty(); }  // (open and parse hold 8 bytes at least, a view its header)

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
    if (is_view_) return viewed(t);
    return std::span<const std::byte>(bytes_).subspan(data_start_ + t.begin, t.bytes());
  }
  // The bytes held: the whole file's (parse, open); none for open_header's; writer::view's: its header.
  std::size_t size_bytes() const { return bytes_.size(); }

 private:
  std::string origin_;
  std::vector<std::byte> bytes_;
  std::size_t data_start_ = 0;
  std::size_t wanted_ = 0;  // bytes being read (for the out-of-memory message)
  bool has_metadata_ = false;
  // writer::view's file: where each tensor's bytes are (tensors_' order: data order), not in bytes_.
  std::vector<const std::byte*> views_;
  bool is_view_ = false;
  friend class writer;
  std::span<const std::byte> viewed(const tensor_info& t) const;
  metadata_map metadata_;
  std::vector<tensor_info> tensors_;

  // Up to n bytes from f appended to bytes_ (in pieces: a short stream never costs n);
  // returns how many were read.
  std::size_t append(std::FILE* f, std::size_t n);
  std::uint64_t header_length() const;
  // Empty when the file is valid, else the message. Reads only what the header declares.
  static result<file> open_file(const std::string& path, bool values);  // open, open_header
  std::string read(std::FILE* f, bool values);
  // Empty when the file held in bytes_ is valid, else the message. With data_elsewhere, bytes_ is
  // the 8-byte length and the header alone, for that many bytes of data held elsewhere (writer::view).
  std::string validate(std::optional<std::size_t> data_elsewhere = std::nullopt);
  // The header length against what follows it (when known) and the limit.
  std::string check_header_length(std::uint64_t n, std::optional<std::uint64_t> available) const;
  // "truncated file: ...": the first tensor (in data order) that ends beyond `have` bytes of data.
  std::string truncated_at(std::size_t have) const;
  // Parses and checks the header, bytes_[8, data_start_): fills metadata_ and tensors_ (in
  // the header's order), checking each tensor's dtype, shape and data_offsets on their own.
  std::string parse_header();
  // Checks the tensors' byte ranges against each other and against the data size, when
  // known: every range within the data, contiguous from byte 0 without overlap or gap, the
  // last one ending at the end of the data. Sorts tensors_ into data order; `declared` is
  // the data size the header declares.
  std::string check_layout(std::optional<std::uint64_t> data_size, std::size_t& declared);
};

namespace detail {
// IEEE binary16 and bfloat16 bits as float, exactly (every value of both is a float): subnormals,
// infinities and NaNs (payload kept) included.
inline float f16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);  // inf, nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);  // normal: rebias 15 -> 127
  } else if (man == 0) {
    bits = sign;  // ±0
  } else {  // subnormal: man · 2^-24, normalised
    int e = -1;
    do {
      ++e;
      man <<= 1;
    } while ((man & 0x400u) == 0);
    bits = sign | (static_cast<std::uint32_t>(112 - e) << 23) | ((man & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline float bf16_to_float(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// The other way, rounding to the nearest (ties to even), as torch's and numpy's conversions do:
// a float as IEEE binary16 (below 2^-14 a subnormal; from 65520 on ±inf; NaN a quiet NaN) and as
// bfloat16 (the upper 16 bits, rounded; from 0x1.fffp127 on ±inf; NaN a quiet NaN).
inline std::uint16_t float_to_f16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
  if (ax >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  std::uint32_t q, rest, half;
  if (ax < 0x38800000u) {  // below 2^-14: a subnormal half (or 0), q · 2^-24
    const std::uint32_t e = ax >> 23;
    if (e < 102) return sign;  // below 2^-25: 0
    const std::uint32_t m = (ax & 0x7fffffu) | 0x800000u, shift = 126 - e;  // |f| = m · 2^(e-150)
    q = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  } else {  // normal: drop 13 mantissa bits
    q = (((ax >> 23) - 112) << 10) | ((ax >> 13) & 0x3ffu), rest = ax & 0x1fffu, half = 0x1000u;
  }
  if (rest > half || (rest == half && (q & 1u))) ++q;  // a carry into the exponent is right
  return static_cast<std::uint16_t>(sign | q);
}
inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // NaN: quiet
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

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
    case dtype::F16:
    case dtype::BF16:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, src.data() + i * 2, 2);
        dst[i] = static_cast<Dst>(from == dtype::F16 ? f16_to_float(h) : bf16_to_float(h));
      }
      return true;
    default: return false;
  }
}

// "[3, 1]": the index of element i of a row-major tensor of this shape.
std::string index_string(const shape_t& shape, std::size_t i);

// Asks the kernel for transparent huge pages under the n bytes at p, before their first write
// (Linux; "madvise" is the default policy of /sys/kernel/mm/transparent_hugepage). Tens of MB of
// weights written into fresh 4 KiB pages cost a page fault (and a cleared page) every 4 KiB: most of
// what reading a stories15M-sized file took. Only whole 2 MiB pages inside the range can be huge;
// the range is widened to whole 4 KiB pages (memory of the same mapping beside it is advised too:
// harmless). Nothing happens under 2 MiB, elsewhere, or when the kernel refuses.
void advise_huge_pages(const void* p, std::size_t n);

// v resized to n value-initialized elements, its storage advised for huge pages before they are
// written (advise_huge_pages): for the large buffers of the readers and the writer.
template <class T>
void resize_huge(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
  advise_huge_pages(v.data() + v.size(), (n > v.size() ? n - v.size() : 0) * sizeof(T));
  v.resize(n);
}

// Whether every float32 of d (little-endian, d.size()/4 of them) is finite: no exponent of all
// ones (inf, nan), tested on the bits with an or over the whole span (vectorized: no early exit).
bool all_finite_f32(std::span<const std::byte> d);

// dst: the rows × cols values of a file's row-major matrix, value(i) its element i, in the same
// order or transposed (dst[c * rows + r] = file[r, c]), written row by row (no division per
// element). Then "" when every value is finite, else "element [2, 1] is nan": the first that is
// not in the file's order, with its index in dst's `shape` (the llama2.c and GGUF readers).
template <class Value>
std::string fill_rows(float* dst, std::size_t rows, std::size_t cols, bool transpose, const shape_t& shape,
                      Value value) {
  for (std::size_t row = 0; row < rows; ++row) {
    const std::size_t i0 = row * cols;
    if (transpose)
      for (std::size_t c = 0; c < cols; ++c) dst[c * rows + row] = value(i0 + c);
    else
      for (std::size_t c = 0; c < cols; ++c) dst[i0 + c] = value(i0 + c);
  }
  if (all_finite_f32(std::as_bytes(std::span<const float>(dst, rows * cols)))) return {};
  for (std::size_t i = 0; i < rows * cols; ++i)
    if (const float v = value(i); !std::isfinite(v))
      return cat({"element ", index_string(shape, transpose ? (i % cols) * rows + i / cols : i), " is ",
                  std::isnan(v) ? "nan" : format_double(v)});
  return {};
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
// find_value for a value that is not finite: an F32 tensor is first tested whole
// (all_finite_f32), and scanned element by element only when some value is not finite.
std::string find_not_finite(const file& f, const tensor_info& t);

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
result<std::vector<double>> read_f64(const file& f, std::string_view name);

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
void push_slot(std::vector<slot>& out, const sf::param_name& n, dtype type, const std::size_t* extents,
               std::size_t rank, const void* data, std::size_t size);
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
  writer& set_metadata(const std::string& key, const std::string& value);
  writer& set_metadata(const metadata_map& m);

  // `data` points to elements of `type`, row-major, as many as the shape holds; copied now.
  writer& add(const std::string& name, dtype type, shape_t shape, const void* data);
  // The same, not copied: `data` must stay as it is until the last serialize() or write().
  writer& add_view(const std::string& name, dtype type, shape_t shape, const void* data);
  template <class T>
  writer& add(const std::string& name, const std::vector<T>& values, shape_t shape) {
    return add_values(name, values, std::move(shape), true);
  }
  template <class T>
  writer& add_view(const std::string& name, const std::vector<T>& values, shape_t shape) {
    return add_values(name, values, std::move(shape), false);
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
  writer& add_slots(const std::vector<slot>& slots, const std::string& prefix = "");

  std::size_t tensor_count() const { return entries_.size(); }
  // The first problem found while adding, if any.
  sf::status check() const;

  // The file's bytes: header padded with spaces to a multiple of 8, data ordered by
  // decreasing element size so that every tensor is aligned to its element size.
  result<std::vector<std::byte>> serialize() const;
  // What file::parse(*serialize(), origin) gives — the same header, checked the same way —
  // without copying the data: the file reads each tensor where add_view's memory is, so that
  // memory must outlive it. Refused when a tensor was copied by add (the file would read the
  // writer's copy). Its size_bytes() is the header's.
  result<file> view(const std::string& origin = "<memory>") const;

  // Writes `path + ".tmp"`, then renames it over `path`: readers never see a partial file.
  sf::status write(const std::string& path) const;

 private:
  struct entry {
    std::string name;
    dtype type;
    shape_t shape;
    std::vector<std::byte> data;  // add's copy
    const std::byte* view;        // add_view's bytes (nullptr: data)
    std::size_t bytes;
    const std::byte* begin() const { return view ? view : data.data(); }
  };
  writer& add_entry(const std::string& name, dtype type, shape_t shape, const void* data, bool copy);
  // The data order (by decreasing element size, stable) and each tensor's first byte in the data.
  std::vector<std::size_t> data_order(std::vector<std::size_t>& begin, std::size_t& total) const;
  // The 8-byte length and the header, padded (the tensors at `begin`).
  result<std::vector<std::byte>> header_bytes(const std::vector<std::size_t>& begin, std::size_t reserve) const;
  template <class T>
  writer& add_values(const std::string& name, const std::vector<T>& values, shape_t shape, bool copy) {
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    if (n != values.size()) {
      note(detail::cat({"tensor '", name, "': shape ", to_string(shape), " holds ", detail::num(n),
                        " elements, but ", detail::num(values.size()), " were given"}));
      return *this;
    }
    return add_entry(name, dtype_of<T>, std::move(shape), values.data(), copy);
  }
  std::vector<entry> entries_;
  metadata_map metadata_;
  std::string error_;
  void note(const std::string& e);
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
std::string describe(const number_range& r);

sf::status parse_number(std::string_view text, double& out, const number_range& r = {});

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
