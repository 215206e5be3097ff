// staticformer/init.hpp — deterministic parameter initialisation and the PRNG behind it.
//
//   static sf::params<C> p;
//   sf::init_params(p, /*seed=*/1);   // GPT-2 style, the same numbers on every platform
//
// Initialisation runs once, before training; it draws in double (Box–Muller) so that a
// seed gives the same model everywhere. Nothing here is on the forward/backward path.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "staticformer/math.hpp"
#include "staticformer/params.hpp"
#include "staticformer/reflect.hpp"

namespace sf {

// A small, portable PRNG (splitmix64): the same numbers on every platform, constexpr.
struct splitmix64 {
  std::uint64_t state;
  constexpr std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  constexpr double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  constexpr double normal() {                                                              // Box–Muller
    const double u1 = 1.0 - uniform(), u2 = uniform();
    // cx:: (not the C library) at run time too: the same numbers on every platform and in the compiler
    return cx::sqrt(-2.0 * cx::log(u1)) * cx::cos(6.283185307179586 * u2);
  }
};

// GPT-2 style initialisation: matrices ~ N(0, 0.02) (the residual projections wo and
// w2 scaled by 1/√(2L)), norm weights 1, biases 0. Deterministic for a seed; constexpr.
// (Takes model_params<A, T> so that the architecture A is deduced: sf::init_params(p, seed).)
template <arch A, class T>
constexpr void init_params(model_params<A, T>& p, std::uint64_t seed, double std = 0.02) {
  splitmix64 rng{seed};
  const double resid_std = std / cx::sqrt(2.0 * static_cast<double>(A.L));
  visit(
      [&](const param_name& name, auto& t) {
        using X = std::remove_cvref_t<decltype(t)>;
        if constexpr (X::rank == 1) {
          t.fill(name.ends_with("weight") ? T{1} : T{0});  // norm gains 1, biases 0
        } else {
          const double s = name.ends_with("wo") || name.ends_with("w2") ? resid_std : std;
          for (auto& e : t) e = static_cast<T>(rng.normal() * s);
        }
      },
      p);
}

}  // namespace sf
