// fuzz/fuzz_common.hpp — what the libFuzzer harnesses (and the corpus generator) share: the
// small configurations they load besides docs/model.md's reference ones, the token ids of the checkpoint
// harness's dataset, a scratch directory per process, the split of one input into two files,
// and SF_FUZZ_CHECK (a broken promise of the library aborts, which libFuzzer reports as a crash).
#pragma once
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include "staticformer/config.hpp"
#include "staticformer/reflect.hpp"

namespace sf_fuzz {

// Tiny configurations with the reference configurations' features (a valid model file of one of
// them is a few kilobytes, so the fuzzer reaches the end of loading: every tensor present,
// the finiteness scan, the copy). tiny_vaswani's norm_eps is not the default (the number codec).
inline constexpr sf::config tiny_gpt2{{.V = 7, .T = 3, .D = 4, .H = 2, .L = 1, .F = 6, .norm = sf::norm_kind::layernorm, .position = sf::position_kind::learned,
                                      .activation = sf::activation_kind::gelu_tanh, .tied = true, .bias = true}, {.B = 2}};
inline constexpr sf::config tiny_llama{{.V = 9, .T = 4, .D = 4, .H = 2, .L = 2, .F = 4, .norm = sf::norm_kind::rmsnorm, .position = sf::position_kind::rope,
                                       .activation = sf::activation_kind::relu, .tied = false, .bias = false}, {.B = 1}};
inline constexpr sf::config tiny_vaswani{{.V = 6, .T = 2, .D = 6, .H = 3, .L = 1, .F = 5, .norm = sf::norm_kind::layernorm, .position = sf::position_kind::sinusoidal,
                                         .activation = sf::activation_kind::gelu, .tied = false, .bias = true,
                                         .norm_eps = 1e-6}, {.B = 3}};

// The dataset of the checkpoint harness (and of its seeds): 40 token ids, 10 of them validation.
inline constexpr std::size_t dataset_tokens = 40;
inline constexpr double dataset_val_fraction = 0.25;
inline constexpr std::uint64_t dataset_seed = 7;
inline std::vector<std::int32_t> dataset_ids() {
  std::vector<std::int32_t> ids(dataset_tokens);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>(i * 7 % 5);
  return ids;
}
// The optimizer file's name in the checkpoint harness's directory (the seeds' model files name it
// in their metadata 'train.optimizer').
inline constexpr const char* optimizer_file_name = "optimizer.safetensors";

// Every value of every tensor of a parameter struct is finite (the harnesses' own scan, not the
// library's, whose promise they check).
template <class Params>
bool all_finite(const Params& p) {
  bool finite = true;
  sf::visit([&](const sf::param_name&, const auto& t) {
    for (std::size_t i = 0; i < t.size; ++i) finite = finite && std::isfinite(t.data()[i]);
  }, p);
  return finite;
}

[[noreturn]] inline void fail(const char* file, int line, const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s:%d: harness check failed: %s\n", file, line, what);
  if (!detail.empty()) std::fprintf(stderr, "  %s\n", detail.c_str());
  std::fflush(stderr);
  std::abort();
}
#define SF_FUZZ_CHECK(cond, detail) \
  do {                              \
    if (!(cond)) ::sf_fuzz::fail(__FILE__, __LINE__, #cond, (detail)); \
  } while (0)

// A directory of this process's own, created on first use and removed at exit: $TMPDIR if set,
// else /dev/shm (memory) if writable, else /tmp. Harnesses write only there.
class scratch_dir {
 public:
  static const scratch_dir& get() {
    static const scratch_dir d;
    return d;
  }
  std::string path() const { return path_.string(); }
  std::string file(const char* name) const { return (path_ / name).string(); }
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;

 private:
  scratch_dir() {
    std::string base;
    if (const char* t = std::getenv("TMPDIR"); t && *t) base = t;
    else if (::access("/dev/shm", W_OK) == 0) base = "/dev/shm";
    else base = "/tmp";
    std::string templ = base + "/staticformer-fuzz-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data())) fail(__FILE__, __LINE__, "mkdtemp", templ + ": " + std::strerror(errno));
    path_ = buf.data();
  }
  std::filesystem::path path_;
};

// Writes bytes to `path` (in the scratch directory), replacing it.
inline void write_file(const std::string& path, std::span<const std::uint8_t> bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) fail(__FILE__, __LINE__, "fopen", path + ": " + std::strerror(errno));
  const bool ok = (bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  if (std::fclose(f) != 0 || !ok) fail(__FILE__, __LINE__, "fwrite", path);
}

// One input as two files: a 4-byte little-endian length n, then n bytes of the first file (fewer
// if the input ends first), then the second file: the rest. An input shorter than 4 bytes is
// all first file.
struct two_files {
  std::span<const std::uint8_t> first, second;
};
inline two_files split(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return {{data, size}, {}};
  const std::size_t n = static_cast<std::size_t>(data[0]) | static_cast<std::size_t>(data[1]) << 8 |
                        static_cast<std::size_t>(data[2]) << 16 | static_cast<std::size_t>(data[3]) << 24;
  const std::size_t a = n < size - 4 ? n : size - 4;
  return {{data + 4, a}, {data + 4 + a, size - 4 - a}};
}
// The inverse, for the corpus generator.
inline std::vector<std::uint8_t> join(std::span<const std::uint8_t> first, std::span<const std::uint8_t> second) {
  std::vector<std::uint8_t> out;
  const auto n = static_cast<std::uint32_t>(first.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(n >> (8 * i)));
  out.insert(out.end(), first.begin(), first.end());
  out.insert(out.end(), second.begin(), second.end());
  return out;
}

// An output filled with a pattern, and whether a loader left it as it was.
template <class T>
struct guarded {
  static_assert(std::is_trivially_copyable_v<T>, "compared and reset bytewise");
  std::unique_ptr<T> value = std::make_unique<T>();
  std::unique_ptr<T> pristine = std::make_unique<T>();
  guarded() {
    std::memset(static_cast<void*>(value.get()), 0xA5, sizeof(T));
    std::memcpy(static_cast<void*>(pristine.get()), value.get(), sizeof(T));
  }
  T& operator*() { return *value; }
  T* operator->() { return value.get(); }
  T* get() { return value.get(); }
  bool untouched() const { return std::memcmp(value.get(), pristine.get(), sizeof(T)) == 0; }
  void reset() { std::memcpy(static_cast<void*>(value.get()), pristine.get(), sizeof(T)); }
};

}  // namespace sf_fuzz
