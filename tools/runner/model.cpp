// staticformer-run: the model's forward, backward and AdamW step for every configuration the
// runner has compiled in (the list `configurations` in tools/staticformer-run.cpp; one missing
// here is a link error). See tools/runner/model.hpp.
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

template struct model<sf::configs::ref_gpt2>;
template struct model<sf::configs::ref_llama>;
template struct model<sf::configs::ref_vaswani>;
template struct model<sf::configs::nano>;

}  // namespace sf_run
