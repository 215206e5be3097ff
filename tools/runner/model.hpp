// staticformer-run: the model's computations for configuration C, declared here and compiled
// in tools/runner/model.cpp and model_<i>.cpp (one reference configuration of sf::configs::known each), so
// that the command-line translation unit, tools/staticformer-run.cpp, does not compile them too:
// each of the two stays quick to compile.
#ifndef SF_TOOLS_RUNNER_MODEL_HPP
#define SF_TOOLS_RUNNER_MODEL_HPP

#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"

namespace sf_run {

template <sf::config C>
struct model {
  // sf::forward: returns the mean loss, leaves the logits in a.logits.
  static float forward(const sf::params<C>& p, sf::activations<C>& a, const sf::tokens_t<C>& tokens,
                       const sf::targets_t<C>& targets, const sf::padding_t<C>* padding);
  // sf::backward after forward on the same inputs: g += d loss / d p.
  static void backward(const sf::params<C>& p, sf::params<C>& g, sf::activations<C>& a, const sf::tokens_t<C>& tokens,
                       const sf::targets_t<C>& targets, const sf::padding_t<C>* padding);
  // opt.step(p, g, lr): one AdamW update.
  static void step(sf::adamw<sf::params<C>>& opt, sf::params<C>& p, const sf::params<C>& g, double lr);
};

}  // namespace sf_run

#endif  // SF_TOOLS_RUNNER_MODEL_HPP
