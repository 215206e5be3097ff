// staticformer-run: the model's forward, backward and AdamW step for every reference configuration
// (sf::configs::known, `reference`). See tools/runner/model.hpp.
#include <cstddef>
#include <iterator>

#include "model.hpp"

namespace sf_run {

template <sf::config C>
float model<C>::forward(const sf::params<C>& p, sf::activations<C>& a, const sf::tokens_t<C>& tokens,
                        const sf::targets_t<C>& targets, const sf::padding_t<C>* padding) {
  return sf::forward(p, a, tokens, targets, padding);
}

template <sf::config C>
void model<C>::backward(const sf::params<C>& p, sf::params<C>& g, sf::activations<C>& a, const sf::tokens_t<C>& tokens,
                        const sf::targets_t<C>& targets, const sf::padding_t<C>* padding) {
  sf::backward(p, g, a, tokens, targets, padding);
}

template <sf::config C>
void model<C>::step(sf::adamw<sf::params<C>>& opt, sf::params<C>& p, const sf::params<C>& g, double lr) {
  opt.step(p, g, lr);
}

// The definitions for every reference configuration: explicit instantiations, one per reference
// entry of sf::configs::known (the static_assert below fails when the list changes, naming this
// file), which tools/staticformer-run.cpp finds at link time.
template struct model<sf::configs::known[0].value>;
template struct model<sf::configs::known[1].value>;
template struct model<sf::configs::known[2].value>;
template struct model<sf::configs::known[3].value>;
template struct model<sf::configs::known[4].value>;

constexpr bool instantiated_every_reference() {
  constexpr std::size_t instantiated = 5;  // the entries 0 .. 4 above
  for (std::size_t i = 0; i < std::size(sf::configs::known); ++i)
    if (sf::configs::known[i].reference != (i < instantiated)) return false;
  return true;
}
static_assert(instantiated_every_reference(),
              "tools/runner/model.cpp: instantiate model<C> for exactly the reference entries of sf::configs::known "
              "(they come first in the list)");

}  // namespace sf_run
