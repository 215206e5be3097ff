// (g) a bias over the wrong axis: y = x·W1 + b with W1 (D, F) needs b over F, not over D.
// first-error: (sf::matmul\(Y, X, W, b\): b is \(D=8\), W is \(D=8, F=3\); the bias must be a vector over the output axis of W|matmul_bias<sf::shape_error::b_is<sf::shape_error::D<8> ?>, sf::shape_error::W_is<sf::shape_error::D<8>, sf::shape_error::F<3> ?> ?>::ok. "sf::matmul\(Y, X, W, b\): the bias must be a vector over the output axis of W)
// expect: (nstantiation of|required from) .*check_bias.*sf::tensor<float, sf::axis<sf::tag::model, 8> ?>.*sf::tensor<float, sf::axis<sf::tag::model, 8>, sf::axis<sf::tag::ffn, 3> ?>
// expect: matmul_bias_axis\.cpp:[0-9]+:[0-9]+: .*(required from here|sf::matmul<)
#include "staticformer/matmul.hpp"

sf::tensor<float, sf::Seq<4>, sf::Model<8>> x;
sf::tensor<float, sf::Model<8>, sf::Ffn<3>> w1;
sf::tensor<float, sf::Seq<4>, sf::Ffn<3>> h;
#ifdef SF_COMPILE_FAIL_CONTROL
sf::tensor<float, sf::Ffn<3>> b1;
#else
sf::tensor<float, sf::Model<8>> b1;
#endif

void run() { sf::matmul(h, x, w1, b1); }
