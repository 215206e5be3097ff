// The `staticformer` command's executables for one architecture (see main.cpp): what the two of
// them share. An executable is compiled for the architecture SF_ENGINE_ARCH — an sf::arch
// expression (or an sf::config, whose architecture it is): `sf::configs::nano` for the shapes
// CMake compiles in advance, or the one that
// `staticformer` writes into arch.hpp of its cache directory and includes with -include —, the
// training executable also for SF_ENGINE_BATCH sequences a step and SF_ENGINE_PRECISION
// products (run settings, not part of the architecture).
#ifndef SF_TOOLS_STATICFORMER_ENGINE_HPP
#define SF_TOOLS_STATICFORMER_ENGINE_HPP

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "staticformer/config.hpp"
#include "staticformer/io/config_codec.hpp"
#include "staticformer/io/safetensors_format.hpp"
#include "staticformer/params.hpp"

#ifndef SF_ENGINE_ARCH
#error "compile with -DSF_ENGINE_ARCH=<an sf::arch> (the staticformer command and CMake do)"
#endif

namespace sf_engine {

// The architecture: what a checkpoint stores.
inline constexpr sf::arch arch = sf::arch_of(SF_ENGINE_ARCH);

// "staticformer run: message" on stderr; exit status 1 (2 for a bad command line).
inline int fail(const char* command, const std::string& message, int status = 1) {
  std::fprintf(stderr, "staticformer %s: %s\n", command, message.c_str());
  return status;
}

// The file at `path`, checked to hold this executable's architecture (the `staticformer` command
// chose the executable by it; a mismatch means the file changed in between).
inline sf::io::result<sf::io::file> open_model(const std::string& path) {
  sf::io::result<sf::io::file> f = sf::io::file::open(path);
  if (!f) return f;
  const sf::io::result<sf::arch> found = sf::io::read_config(*f);
  if (!found) return sf::status::error((path + ": not a staticformer checkpoint: " + found.message()).c_str());
  if (*found != arch)
    return sf::status::error((path + ": its architecture (" + sf::io::describe(*found) +
                              ") is not this executable's (" + sf::io::describe(arch) + ")")
                                 .c_str());
  return f;
}

}  // namespace sf_engine

#endif  // SF_TOOLS_STATICFORMER_ENGINE_HPP
