// An sf::config as a C++ initializer, exactly (norm_eps as a hex float): what an exported header
// (tools/export/header.hpp) and the `staticformer` command's arch.hpp (tools/staticformer/main.cpp)
// write, so that the compiled program has the configuration of the file bit for bit.
#ifndef SF_TOOLS_EXPORT_CONFIG_LITERAL_HPP
#define SF_TOOLS_EXPORT_CONFIG_LITERAL_HPP

#include <cstdio>
#include <sstream>
#include <string>

#include "staticformer/config.hpp"

namespace sf_export {

// "{.V = 65, .T = 64, ..., .norm_eps = 0x1.4f8b588e368f1p-17}" (B = 1)
inline std::string config_literal(const sf::config& c) {
  char eps[48];
  std::snprintf(eps, sizeof eps, "%a", c.norm_eps);
  std::ostringstream o;
  o << "{.V = " << c.V << ", .T = " << c.T << ", .D = " << c.D << ", .H = " << c.H << ", .L = " << c.L
    << ", .F = " << c.F << ", .B = 1,\n    .norm = sf::norm_kind::" << sf::to_string(c.norm)
    << ", .position = sf::position_kind::" << sf::to_string(c.position)
    << ", .activation = sf::activation_kind::" << sf::to_string(c.activation) << ",\n    .tied = "
    << (c.tied ? "true" : "false") << ", .bias = " << (c.bias ? "true" : "false") << ", .norm_eps = " << eps << "}";
  return o.str();
}

}  // namespace sf_export

#endif  // SF_TOOLS_EXPORT_CONFIG_LITERAL_HPP
