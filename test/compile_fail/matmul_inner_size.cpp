// (a) matmul: X's last axis and W's first axis differ in size (D = 8 against a weight with K = 6).
// first-error: (sf::matmul\(Y, X, W\): X is \(T=4, D=8\), W is \(D=6, F=3\); inner axis mismatch|matmul<sf::shape_error::X_is<sf::shape_error::T<4>, sf::shape_error::D<8> ?>, sf::shape_error::W_is<sf::shape_error::D<6>, sf::shape_error::F<3> ?> ?>::ok. "sf::matmul\(Y, X, W\): inner axis mismatch)
// expect: (nstantiation of|required from) .*check_matmul.*sf::tensor<float, sf::axis<sf::tag::seq, 4>, sf::axis<sf::tag::model, 8> ?>.*sf::tensor<float, sf::axis<sf::tag::model, 6>, sf::axis<sf::tag::ffn, 3> ?>
// expect: matmul_inner_size\.cpp:[0-9]+:[0-9]+: .*(required from here|sf::matmul<)
#include "staticformer/matmul.hpp"

sf::tensor<float, sf::Seq<4>, sf::Model<8>> x;
sf::tensor<float, sf::Seq<4>, sf::Ffn<3>> y;
#ifdef SF_COMPILE_FAIL_CONTROL
sf::tensor<float, sf::Model<8>, sf::Ffn<3>> w;
#else
sf::tensor<float, sf::Model<6>, sf::Ffn<3>> w;
#endif

void run() { sf::matmul(y, x, w); }
