// matmul: the output's last axis is not W's output axis (Y is (T, D) but x·W1 is (T, F)).
// first-error: sf::matmul\(Y, X, W\): Y's last axis must equal W's second axis
// expect: nstantiation of .*check_matmul.*sf::tensor<float, sf::axis<sf::tag::seq, 4>, sf::axis<sf::tag::model, 8> ?>.*sf::tensor<float, sf::axis<sf::tag::model, 8>, sf::axis<sf::tag::ffn, 16> ?>
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
