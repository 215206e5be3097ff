// Shared by the two translation units of test_gradcheck (test/test_gradcheck.cpp, the layers,
// and test/gradcheck/model.cpp, the whole model): small configurations, finite-difference checks.
#ifndef SF_TEST_GRADCHECK_HPP
#define SF_TEST_GRADCHECK_HPP

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "staticformer/model.hpp"

namespace {
using T = double;

constexpr sf::config small(sf::norm_kind n, sf::position_kind p, sf::activation_kind a, bool bias, bool tied) {
  return sf::config{{.V = 11, .T = 5, .D = 8, .H = 2, .L = 2, .F = 12, .norm = n, .position = p, .activation = a, .tied = tied, .bias = bias}, {.B = 2}};
}
// The same with the gated feed-forward (SwiGLU with silu).
constexpr sf::config gated(sf::config c) {
  c.ffn = sf::ffn_kind::gated;
  return c;
}
// The same with one key/value head for all the query heads (multi-query attention).
constexpr sf::config multi_query(sf::config c) {
  c.kv_heads = 1;
  return c;
}
using N = sf::norm_kind;
using P = sf::position_kind;
using A = sf::activation_kind;

template <class X>
void randomize(X& t, sf::splitmix64& r, double s = 1.0) {
  for (auto& e : t) e = static_cast<T>(r.normal() * s);
}
template <class S>
void randomize_params(S& p, sf::splitmix64& r, double s = 0.5) {
  sf::visit([&](const sf::param_name& name, auto& t) {
    for (auto& e : t) e = static_cast<T>(r.normal() * s + (name.ends_with("weight") && t.rank == 1 ? 1.0 : 0.0));
  }, p);
}

// Central difference of loss() w.r.t. one element.
template <class F>
double numeric(F&& loss, T& elem) {
  const T old = elem, h = 1e-6;
  elem = old + h;
  const double lp = loss();
  elem = old - h;
  const double lm = loss();
  elem = old;
  return (lp - lm) / (2 * h);
}

// Compares the analytic gradient of every element (up to `max_checks`, evenly spread) of x.
template <class F, class X, class G>
void check(const std::string& what, F&& loss, X& x, const G& analytic, std::size_t max_checks = 60) {
  const std::size_t step = x.size > max_checks ? x.size / max_checks : 1;
  int bad = 0;
  for (std::size_t i = 0; i < x.size; i += step) {
    const double fd = numeric(loss, x[i]);
    const double an = analytic[i];
    // double precision central differences: truncation ~h², rounding ~eps·|L|/h; 1e-7 absolute is far above both
    if (std::fabs(fd - an) > 1e-7 + 1e-6 * std::fabs(fd)) {
      if (bad++ < 3) ADD_FAILURE() << what << "[" << i << "]: finite difference " << fd << ", backward " << an;
    }
  }
}
template <class F, class S>
void check_params(const std::string& what, F&& loss, S& p, S& g, std::size_t max_checks = 60) {
  sf::visit([&](const sf::param_name& name, auto& t, const auto& gt) {
    check(what + " " + name.c_str(), loss, t, gt, max_checks);
  }, p, g);
}
template <class X, class G>
double dot(const X& a, const G& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size; ++i) s += a[i] * b[i];
  return s;
}
}  // namespace

#endif  // SF_TEST_GRADCHECK_HPP
