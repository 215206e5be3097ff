// staticformer-run: the model's forward, backward and AdamW step for every reference configuration
// (sf::configs::known, `reference`). See tools/runner/model.hpp.
#include <cstddef>
#include <utility>

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

// The definitions for every reference configuration: taking the functions' addresses here
// instantiates them in this translation unit, where tools/staticformer-run.cpp finds them at link time.
using any_function = void (*)();
template <std::size_t I>
const any_function* instantiate() {
  constexpr sf::config C = sf::configs::known[I].value;
  if constexpr (sf::configs::known[I].reference) {
    static const any_function functions[] = {reinterpret_cast<any_function>(&model<C>::forward),
                                             reinterpret_cast<any_function>(&model<C>::backward),
                                             reinterpret_cast<any_function>(&model<C>::step)};
    return functions;
  }
  return nullptr;
}
template <std::size_t... I>
const any_function* const* all(std::index_sequence<I...>) {
  static const any_function* const each[] = {instantiate<I>()...};
  return each;
}
extern const any_function* const* const instantiated;
const any_function* const* const instantiated = all(std::make_index_sequence<std::size(sf::configs::known)>());

}  // namespace sf_run
