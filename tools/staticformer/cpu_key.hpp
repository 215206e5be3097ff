// cpu_key.hpp — the CPU's part of the cache key of the executables the `staticformer` command
// compiles on first use (main.cpp, locate; test/test_cpu.cpp checks it).
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "staticformer/cpu.hpp"

namespace sf_engine {

// With -march=native among the compile flags, an executable is compiled for the instruction sets
// of the CPU that compiles it, so the key names them, "|cpu=" and sf::cpu::names(have) (`have`:
// this CPU's): another CPU sharing the cache (the same home directory on another machine, a VM's
// CPU changed) gets its own executable; the same CPU, the same key. Without -march=native, ""
// whatever the CPU: the flags alone say what the executable runs on, and every CPU shares it.
inline std::string cpu_key(const std::vector<std::string>& flags, sf::cpu::set have) {
  if (std::find(flags.begin(), flags.end(), "-march=native") == flags.end()) return "";
  char names[1024];
  sf::cpu::names(names, sizeof names, have);
  return std::string("|cpu=") + names;
}
inline std::string cpu_key(const std::vector<std::string>& flags) { return cpu_key(flags, sf::cpu::detect()); }

}  // namespace sf_engine
