// test/file_bytes.hpp — a test's whole file as bytes or text (an empty result when it cannot be
// read: the comparison that follows then fails, naming the file).
#pragma once
#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace sf_test {

inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

inline std::vector<std::byte> read_bytes(const std::string& path) {
  const std::string s = read_text(path);
  std::vector<std::byte> b(s.size());
  if (!s.empty()) std::memcpy(b.data(), s.data(), s.size());
  return b;
}

}  // namespace sf_test
