// staticformer-run: the model's forward, backward and AdamW step for every reference configuration
// (sf::configs::known, `reference`). See tools/runner/model.hpp.
#include <cstddef>
#include <iterator>

#include "model_impl.hpp"

namespace sf_run {

// The definitions for every reference configuration: explicit instantiations, one per reference
// entry of sf::configs::known, one translation unit each: entry 0 here, entry i in model_i.cpp
// (the static_assert below fails when the list changes, naming this file), which
// tools/staticformer-run.cpp finds at link time.
template struct model<sf::configs::known[0].value>;

constexpr bool instantiated_every_reference() {
  constexpr std::size_t instantiated = 5;  // the entries 0 (here) and 1 .. 4 (model_1.cpp .. model_4.cpp)
  for (std::size_t i = 0; i < std::size(sf::configs::known); ++i)
    if (sf::configs::known[i].reference != (i < instantiated)) return false;
  return true;
}
static_assert(instantiated_every_reference(),
              "tools/runner/model.cpp: instantiate model<C> for exactly the reference entries of sf::configs::known "
              "(they come first in the list; one translation unit each, tools/runner/model_<i>.cpp)");

}  // namespace sf_run
