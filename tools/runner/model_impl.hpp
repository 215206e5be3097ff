// staticformer-run: the definitions of sf_run::model<C>'s members (tools/runner/model.hpp),
// included by the translation units that instantiate them: tools/runner/model.cpp and
// model_1.cpp … model_4.cpp, one reference configuration each (so that none takes long to compile).
#ifndef SF_TOOLS_RUNNER_MODEL_IMPL_HPP
#define SF_TOOLS_RUNNER_MODEL_IMPL_HPP

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

}  // namespace sf_run

#endif  // SF_TOOLS_RUNNER_MODEL_IMPL_HPP
