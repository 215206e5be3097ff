// matmul: the output's last axis is not W's output axis (Y is (T, D) but x·W1 is (T, F)).
// first-error: (sf::matmul\(Y, X, W\): Y is \(T=4, D=8\), X is \(T=4, D=8\), W is \(D=8, F=16\); the last axis of Y must equal the second axis of W|matmul<sf::shape_error::Y_is<sf::shape_error::T<4>, sf::shape_error::D<8> ?>, sf::shape_error::X_is<sf::shape_error::T<4>, sf::shape_error::D<8> ?>, sf::shape_error::W_is<sf::shape_error::D<8>, sf::shape_error::F<16> ?> ?>::ok. "sf::matmul\(Y, X, W\): the last axis of Y must equal the second axis of W)
// expect: (nstantiation of|required from) .*check_matmul.*sf::tensor<float, sf::axis<sf::tag::seq, 4>, sf::axis<sf::tag::model, 8> ?>.*sf::tensor<float, sf::axis<sf::tag::model, 8>, sf::axis<sf::tag::ffn, 16> ?>
// expect: matmul_output_axis\.cpp:[0-9]+:[0-9]+: .*(required from here|sf::matmul<)
#include "staticformer/matmul.hpp"

sf::tensor<float, sf::Seq<4>, sf::Model<8>> x;
sf::tensor<float, sf::Model<8>, sf::Ffn<16>> w1;
#ifdef SF_COMPILE_FAIL_CONTROL
sf::tensor<float, sf::Seq<4>, sf::Ffn<16>> y;
#else
sf::tensor<float, sf::Seq<4>, sf::Model<8>> y;
#endif

void run() { sf::matmul(y, x, w1); }
