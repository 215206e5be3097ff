// (k) inside attention: the scores of one head are S = Q_h·K_hᵀ. Forgetting the transpose,
// S = Q_h·K_h, must not compile even where every size agrees: here T = d_k = 16, and the
// product would contract the head axis d_k of Q_h with the sequence axis T of K_h.
// first-error: (sf::matmul\(Y, X, W\): X is \(T=16, dk=16\), W is \(T=16, dk=16\); the last axis of X and the first axis of W have the same size but are different axes|matmul<sf::shape_error::X_is<sf::shape_error::T<16>, sf::shape_error::dk<16> ?>, sf::shape_error::W_is<sf::shape_error::T<16>, sf::shape_error::dk<16> ?> ?>::ok. "sf::matmul\(Y, X, W\): the last axis of X and the first axis of W have the same size but are different axes)
// expect: (nstantiation of|required from) .*check_matmul.*sf::view<.*sf::axis<sf::tag::head_dim, 16>, 64>.*sf::view<.*sf::axis<sf::tag::seq, 16> ?>, sf::axis<sf::tag::head_dim, 16>, 64>
// expect: layer_head_missing_transpose\.cpp:[0-9]+:[0-9]+: .*(required from here|sf::matmul<|sf::matmul_nt<)
#include "staticformer/layers/attention.hpp"

inline constexpr sf::config cfg{{.V = 32, .T = 16, .D = 64, .H = 4, .L = 1, .F = 128}, {.B = 1}};  // d_k = 16 = T
using types = sf::types<cfg>;
types::btd q, k;
sf::tensor<float, sf::Seq<16>, sf::Seq<16>> scores;

void head_scores(std::size_t b, std::size_t h) {
  const auto Q = sf::head<cfg.H>(std::as_const(q), b, h);  // (T, d_k), row stride D
  const auto K = sf::head<cfg.H>(std::as_const(k), b, h);
#ifdef SF_COMPILE_FAIL_CONTROL
  sf::matmul_nt(scores, Q, K);  // S = Q_h K_hᵀ
#else
  sf::matmul(scores, Q, K);     // S = Q_h K_h: the transpose is missing
#endif
}
