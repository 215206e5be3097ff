// test/gradcheck/model_check.hpp — the whole-model finite-difference check, shared by
// model.cpp (small models of each style) and model_reference.cpp (docs/model.md's reference configurations);
// two translation units so that each compiles in under 10 s with g++ and clang.
#pragma once
#include <cmath>

#include "gradcheck.hpp"

namespace {

// ------------------------------------------------------------------------- the whole model
template <sf::config C>
void model_check(bool padded, std::size_t max_checks = 60) {
  static sf::params<C, T> p, g;
  static sf::activations<C, T> a;
  static sf::tokens_t<C> tok;
  static sf::targets_t<C> tgt;
  static sf::padding_t<C> pad;
  sf::splitmix64 r{6};
  randomize_params(p, r, 0.3);
  pad.zero();
  for (std::size_t i = 0; i < tok.size; ++i) {
    tok[i] = static_cast<std::int32_t>(r.next() % C.V);
    tgt[i] = i % 4 == 3 ? -1 : static_cast<std::int32_t>(r.next() % C.V);
  }
  if (padded) {
    pad(0, 0) = 1;  // left padding in row 0: query 0 of row 0 has no allowed key
    tgt(0, 0) = -1;
    pad(C.B - 1, C.T - 1) = 1;  // right padding in the last row
    tgt(C.B - 1, C.T - 1) = -1;
  }
  const sf::padding_t<C>* pp = padded ? &pad : nullptr;
  sf::forward(p, a, tok, tgt, pp);
  sf::zero(g);
  sf::backward(p, g, a, tok, tgt, pp);
  auto loss = [&] { return static_cast<double>(sf::forward(p, a, tok, tgt, pp)); };
  check_params("model", loss, p, g, max_checks);
}
}  // namespace
