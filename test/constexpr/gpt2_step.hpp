// test/constexpr/gpt2_step.hpp — the ref-gpt2 training step of gpt2_step_*.cpp, written once:
// gpt2_step_compile_time.cpp evaluates it in constant expressions, gpt2_step_run_time.cpp runs
// it on the CPU and compares every bit. (Two translation units, so that neither the compiler's
// evaluation nor the optimised run-time code makes one unit slow.)
#pragma once
#include <cstdint>

#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"

namespace gpt2_step {
constexpr sf::config C = sf::configs::ref_gpt2;

struct step_state {
  sf::params<C> p, g;
  sf::activations<C> a;
  sf::adamw<sf::params<C>> opt;
  sf::tokens_t<C> tok;
  sf::targets_t<C> tgt;
  float loss;
};

// Parameters, tokens and targets from a seed (uniform small values: cheap for the compiler).
constexpr void setup(step_state& s) {
  sf::splitmix64 r{2024};
  sf::visit([&](const sf::param_name&, auto& t) {
    for (auto& e : t) e = static_cast<float>(static_cast<std::int64_t>(r.next() >> 40) - (1 << 23)) * 0x1p-28f;
  }, s.p);
  for (std::size_t i = 0; i < s.tok.size; ++i) {
    s.tok[i] = static_cast<std::int32_t>(r.next() % C.V);
    s.tgt[i] = i % 7 == 3 ? -1 : static_cast<std::int32_t>(r.next() % C.V);  // some ignored targets
  }
}
constexpr void forward(step_state& s) { s.loss = sf::forward(s.p, s.a, s.tok, s.tgt); }
constexpr void backward(step_state& s) {
  sf::zero(s.g);
  sf::backward(s.p, s.g, s.a, s.tok, s.tgt);
}
constexpr void adamw_step(step_state& s) {
  s.opt.options.weight_decay = 0.1;
  s.opt.step(s.p, s.g, 1e-2);
}

}  // namespace gpt2_step

namespace gpt2_step {
// What the compile-time unit computed (defined there, in .rodata).
struct results {
  float loss;
  typename sf::types<C>::btv logits;
  sf::params<C> grads, params, m, v;  // gradients; parameters and AdamW moments after the step
};
extern const results compile_time;
}  // namespace gpt2_step
