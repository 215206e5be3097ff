// An sf::arch as a C++ initializer, exactly (norm_eps as a hex float): what an exported header
// (tools/export/header.hpp) and the `staticformer` command's arch.hpp (tools/staticformer/main.cpp)
// write, so that the compiled program has the configuration of the file bit for bit.
#ifndef SF_TOOLS_EXPORT_CONFIG_LITERAL_HPP
#define SF_TOOLS_EXPORT_CONFIG_LITERAL_HPP

#include <cstdio>
#include <sstream>
#include <string>
#include <type_traits>

#include "staticformer/config.hpp"
#include "staticformer/config_fields.hpp"

namespace sf_export {

// "{.V = 65, .T = 64, ..., .norm_eps = 0x1.4f8b588e368f1p-17, .rope_base = 0x1.388p+13}": every
// field of sf::arch in declaration order (sf::for_each_field: nothing here lists them).
inline std::string config_literal(const sf::arch& arch) {
  std::ostringstream o;
  const char* sep = "{";
  sf::for_each_field(
      [&](const char* name, const auto& v) {
        using X = std::remove_cvref_t<decltype(v)>;
        o << sep << '.' << name << " = ";
        sep = ", ";
        if constexpr (std::is_enum_v<X>) {
          o << sf::enum_names<X>::type << "::" << sf::detail::enum_name(v);
        } else if constexpr (std::is_same_v<X, bool>) {
          o << (v ? "true" : "false");
        } else if constexpr (std::is_same_v<X, double>) {
          char buf[48];
          std::snprintf(buf, sizeof buf, "%a", v);
          o << buf;
        } else {
          o << v;
        }
      },
      arch);
  o << '}';
  return o.str();
}

}  // namespace sf_export

#endif  // SF_TOOLS_EXPORT_CONFIG_LITERAL_HPP
