// (b) matmul: equal sizes, different axes. In the nano config T = D = 64; passing the attention
// probabilities P (T, T) where the head outputs O (T, D) belong must not compile, although
// every size agrees.
// first-error: (sf::matmul\(Y, X, W\): X is \(T=64, T=64\), W is \(D=64, D=64\); the last axis of X and the first axis of W have the same size but are different axes|matmul<sf::shape_error::X_is<sf::shape_error::T<64>, sf::shape_error::T<64> ?>, sf::shape_error::W_is<sf::shape_error::D<64>, sf::shape_error::D<64> ?> ?>::ok. "sf::matmul\(Y, X, W\): the last axis of X and the first axis of W have the same size but are different axes)
// expect: (nstantiation of|required from) .*check_matmul.*sf::tensor<float, sf::axis<sf::tag::seq, 64>, sf::axis<sf::tag::seq, 64> ?>.*sf::tensor<float, sf::axis<sf::tag::model, 64>, sf::axis<sf::tag::model, 64> ?>
// expect: matmul_axis_identity\.cpp:[0-9]+:[0-9]+: .*(required from here|sf::matmul<)
#include "staticformer/config.hpp"
#include "staticformer/matmul.hpp"

using ax = sf::axes<sf::configs::nano>;  // T = 64, D = 64
sf::tensor<float, ax::seq, ax::seq> probs;        // P    (T, T)
sf::tensor<float, ax::seq, ax::model> heads_out;  // O    (T, D)
sf::tensor<float, ax::model, ax::model> wo;       // W_O  (D, D)
sf::tensor<float, ax::seq, ax::model> out;        //      (T, D)

void run() {
#ifdef SF_COMPILE_FAIL_CONTROL
  sf::matmul(out, heads_out, wo);
#else
  sf::matmul(out, probs, wo);
#endif
}
