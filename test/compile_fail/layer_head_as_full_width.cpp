// (l) inside attention: the output projection takes the heads side by side, y = O·W_O with
// O (T, D). Passing one head's slice O_h (T, d_k) instead must not compile, even with one
// head, where d_k = D = 32 and every size agrees: a head view's columns are the head axis d_k.
// first-error: (sf::matmul\(Y, X, W\): X is \(T=8, dk=32\), W is \(D=32, D=32\); the last axis of X and the first axis of W have the same size but are different axes|matmul<sf::shape_error::X_is<sf::shape_error::T<8>, sf::shape_error::dk<32> ?>, sf::shape_error::W_is<sf::shape_error::D<32>, sf::shape_error::D<32> ?> ?>::ok. "sf::matmul\(Y, X, W\): the last axis of X and the first axis of W have the same size but are different axes)
// expect: (nstantiation of|required from) .*check_matmul.*sf::view<float, sf::shape<sf::axis<sf::tag::seq, 8> ?>, sf::axis<sf::tag::head_dim, 32>, 32>.*sf::tensor<float, sf::axis<sf::tag::model, 32>, sf::axis<sf::tag::model, 32> ?>
// expect: layer_head_as_full_width\.cpp:[0-9]+:[0-9]+: .*(required from here|sf::matmul<)
#include "staticformer/layers/attention.hpp"

inline constexpr sf::config cfg{{.V = 32, .T = 8, .D = 32, .H = 1, .L = 1, .F = 64}, {.B = 1}};  // d_k = D = 32
using types = sf::types<cfg>;
types::btd o;
types::mat_dd wo;
sf::tensor<float, sf::Seq<8>, sf::Model<32>> y;

void project(std::size_t b) {
#ifdef SF_COMPILE_FAIL_CONTROL
  (void)b;
  sf::matmul(sf::at(y), sf::at(o, 0), wo);                    // y = O W_O, O: (T, D)
#else
  sf::matmul(sf::at(y), sf::head<cfg.H>(o, b, 0), wo);        // O_h (T, d_k) where O (T, D) belongs
#endif
}
