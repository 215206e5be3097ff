// staticformer/config_fields.hpp — the fields of sf::arch, visited by name.
//
//   sf::for_each_field([](const char* name, const auto& field) { ... }, c);   // "V", 65; ...; "norm_eps", 1e-05
//
// sf::arch (what a checkpoint stores) stays a plain structural aggregate (a template argument,
// designated initializers); this header adapts it as a Hana struct, so that code that handles
// every field (the checkpoint metadata of staticformer/io/config_codec.hpp, the C++ literal
// of an exported header) is written once, over the fields, instead of listing them. A
// static_assert checks that the adaptation names every field of the struct, so a field added
// to sf::arch cannot be forgotten here.
// Optional: the core does not include it.
#pragma once
#include <cstddef>
#include <type_traits>

#include <boost/hana/accessors.hpp>
#include <boost/hana/adapt_struct.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>

#include "staticformer/config.hpp"

BOOST_HANA_ADAPT_STRUCT(sf::arch, V, T, D, H, kv_heads, L, F, ffn, norm, position, activation, tied, bias, norm_eps,
                        rope_base, rope_pairs);

namespace sf {

namespace detail {
// Converts to anything: S{any_field{}, ...} compiles for at most as many values as S has fields.
struct any_field {
  template <class X> constexpr operator X() const noexcept;  // NOLINT: implicit on purpose; never called
};
template <class S, class... A>
constexpr std::size_t aggregate_field_count() {
  if constexpr (requires { S{A{}..., any_field{}}; }) return aggregate_field_count<S, A..., any_field>();
  else return sizeof...(A);
}
}  // namespace detail

static_assert(decltype(boost::hana::length(boost::hana::accessors<arch>()))::value ==
                  detail::aggregate_field_count<arch>(),
              "staticformer/config_fields.hpp: BOOST_HANA_ADAPT_STRUCT(sf::arch, ...) must name every field");

// f(name, field of c, field of cs...) for every field, in declaration order, like sf::visit
// over parameters: name is the member's name ("V", ..., "norm_eps"), the fields are
// references (const where the architectures are).
template <class F, class Arch, class... Archs>
  requires(std::is_same_v<std::remove_const_t<Arch>, arch> && (std::is_same_v<std::remove_const_t<Archs>, arch> && ...))
constexpr void for_each_field(F&& f, Arch& c, Archs&... cs) {
  boost::hana::for_each(boost::hana::accessors<arch>(), [&](auto pair) {
    const auto get = boost::hana::second(pair);
    f(boost::hana::to<const char*>(boost::hana::first(pair)), get(c), get(cs)...);
  });
}

}  // namespace sf
