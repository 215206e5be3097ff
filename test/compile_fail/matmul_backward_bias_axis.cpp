// matmul_backward_bias: the bias gradient db sums dy over its rows, so it is a vector over the
// last axis of dy (F), not over its row axis.
// first-error: (sf::matmul_backward_bias\(db, dy\): db is \(T=4\), dy is \(T=4, F=8\); db must be a vector over the last axis of dy|matmul_backward_bias<sf::shape_error::db_is<sf::shape_error::T<4> ?>, sf::shape_error::dy_is<sf::shape_error::T<4>, sf::shape_error::F<8> ?> ?>::ok. "sf::matmul_backward_bias\(db, dy\): db must be a vector over the last axis of dy)
// expect: (nstantiation of|required from) .*matmul_backward_bias.*tensor<float, (sf::)?axis<(sf::)?tag::seq, 4> ?>.*tensor<float, (sf::)?axis<(sf::)?tag::seq, 4>, (sf::)?axis<(sf::)?tag::ffn, 8> ?>
// expect: matmul_backward_bias_axis\.cpp:[0-9]+:[0-9]+: .*(required from here|sf::matmul_backward_bias<)
#include "staticformer/matmul.hpp"

sf::tensor<float, sf::Seq<4>, sf::Ffn<8>> dy;
#ifdef SF_COMPILE_FAIL_CONTROL
sf::tensor<float, sf::Ffn<8>> db;
#else
sf::tensor<float, sf::Seq<4>> db;
#endif

void run() { sf::matmul_backward_bias(db, dy); }
