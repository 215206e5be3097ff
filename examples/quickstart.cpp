// The README's example: declare a model, train it a little, watch the loss fall.
#include <cstdio>

#include "staticformer/staticformer.hpp"

inline constexpr sf::arch model{.V = 16, .T = 8, .D = 32, .H = 4, .L = 2, .F = 64};  // what a checkpoint stores
inline constexpr sf::config cfg{model, {.B = 8}};  // trained 8 sequences at a time (a run setting)
static sf::params<model> p, g;            // weights and gradients: one reflected struct type
static sf::activations<cfg> acts;         // what backward needs; sizeof is a compile-time constant
static sf::adamw<sf::params<model>> opt;  // AdamW moments m, v: the same struct type again
static sf::tokens_t<cfg> x;               // (B,T) token ids
static sf::targets_t<cfg> y;              // (B,T) next tokens (-1 = ignore)

int main() {
  sf::init_params(p, /*seed=*/1);
  for (std::size_t i = 0; i < x.size; ++i) {  // learn "the next token is this one + 1"
    x[i] = static_cast<int>((i * 7) % cfg.V);
    y[i] = static_cast<int>((i * 7 + 1) % cfg.V);
  }
  float first = 0, loss = 0;
  for (int step = 0; step < 100; ++step) {
    loss = sf::forward(p, acts, x, y);  // logits in acts.logits, (B,T,V)
    sf::zero(g);                        // parameter gradients accumulate
    sf::backward(p, g, acts, x, y);
    opt.step(p, g, /*lr=*/1e-2);
    if (step == 0) first = loss;
    if (step % 20 == 0) std::printf("step %3d  loss %.4f\n", step, static_cast<double>(loss));
  }
  std::printf("loss %.4f -> %.4f, %zu parameters, %zu bytes of activations\n", static_cast<double>(first),
              static_cast<double>(loss), sf::parameter_count<sf::params<cfg>>, sizeof acts);
  return loss < 0.1f * first ? 0 : 1;  // run as a test: the loss must fall
}
