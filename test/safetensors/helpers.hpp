// Shared by the three translation units of test_safetensors (test/test_safetensors.cpp,
// test/safetensors/golden.cpp and refusals.cpp): temporary files, raw files, random parameters,
// EXPECT_MESSAGE.
#ifndef SF_TEST_SAFETENSORS_HELPERS_HPP
#define SF_TEST_SAFETENSORS_HELPERS_HPP

#include "staticformer/io/safetensors.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using sf::io::dtype;

namespace sf_test {

inline const std::string golden_dir = std::string(SF_TEST_DATA_DIR) + "/golden/";

// A fresh temporary directory per test program (shared by its translation units), removed at exit.
inline const fs::path& tmp_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("sf_test_safetensors_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  static const struct cleanup {
    ~cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } c;
  (void)c;
  return dir;
}
inline std::string tmp(const std::string& name) { return (tmp_dir() / name).string(); }

inline std::vector<std::byte> bytes_of(std::string_view s) {
  std::vector<std::byte> b(s.size());
  if (!s.empty()) std::memcpy(b.data(), s.data(), s.size());
  return b;
}
inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
inline void write_all(const std::string& path, std::string_view s) {
  std::ofstream out(path, std::ios::binary);
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
}
// A file from a header text and a data section.
inline std::string raw_file(std::string_view header, std::string_view data) {
  std::string s(8, '\0');
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s.append(header).append(data);
}
inline std::string parse_error(std::string_view contents) {
  auto f = sf::io::file::parse(bytes_of(contents), "x.safetensors");
  return f ? std::string("(parsed)") : std::string(f.message());
}

template <sf::config C>
std::unique_ptr<sf::params<C>> random_params(unsigned seed) {
  auto p = std::make_unique<sf::params<C>>();
  std::uint32_t s = seed * 2654435761u + 1;
  sf::visit(
      [&](const sf::param_name&, auto& t) {
        for (auto& v : t) {
          s = s * 1664525u + 1013904223u;
          v = static_cast<float>(static_cast<std::int32_t>(s >> 8) - (1 << 23)) / float(1 << 24);
        }
      },
      *p);
  return p;
}

// Every value of a parameter struct, in visiting order (through sf::io::tensor_slots: gtest
// macros stay out of generic lambdas, which keeps this file quick to compile).
template <class S>
std::vector<double> flatten(const S& s) {
  std::vector<double> out;
  for (const sf::io::slot& sl : sf::io::tensor_slots(s)) {
    const float* f = static_cast<const float*>(sl.data);
    out.insert(out.end(), f, f + sl.size);
  }
  return out;
}
// (name, shape) of every tensor of a parameter struct.
template <class S>
std::vector<std::pair<std::string, sf::io::shape_t>> names_and_shapes(const S& s) {
  std::vector<std::pair<std::string, sf::io::shape_t>> out;
  for (const sf::io::slot& sl : sf::io::tensor_slots(s)) out.emplace_back(sl.name, sl.shape);
  return out;
}

// A writer holding the parameters of C with one tensor changed, dropped or added.
template <sf::config C>
sf::io::writer params_writer(const sf::params<C>& p, const std::string& skip = "") {
  sf::io::writer w;
  w.set_metadata(sf::io::config_metadata(C));
  for (const sf::io::slot& sl : sf::io::tensor_slots(p))
    if (sl.name != skip) w.add(sl.name, sl.type, sl.shape, sl.data);
  return w;
}

inline constexpr sf::config gpt2 = sf::configs::ref_gpt2;

// One out-of-line comparison instead of a gtest macro per message keeps this file quick to compile.
inline void expect_message(const char* got, const char* want, int line) {
  EXPECT_STREQ(got, want) << "(test line " << line << ")";
}
#define EXPECT_MESSAGE(x, want) expect_message((x).message(), want, __LINE__)

}  // namespace sf_test

#endif  // SF_TEST_SAFETENSORS_HELPERS_HPP
