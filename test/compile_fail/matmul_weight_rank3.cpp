// (c) matmul: a rank-3 weight (D, H, d_k) where a matrix (K, N) is required.
// first-error: (sf::matmul\(Y, X, W\): X is \(T=4, D=8\), W is \(D=8, H=2, dk=4\); wrong rank - W must be a matrix of rank 2|matmul<sf::shape_error::X_is<sf::shape_error::T<4>, sf::shape_error::D<8> ?>, sf::shape_error::W_is<sf::shape_error::D<8>, sf::shape_error::H<2>, sf::shape_error::dk<4> ?> ?>::ok. "sf::matmul\(Y, X, W\): wrong rank - W must be a matrix of rank 2)
// expect: (nstantiation of|required from) .*check_matmul.*sf::tensor<float, sf::axis<sf::tag::model, 8>, sf::axis<sf::tag::heads, 2>, sf::axis<sf::tag::head_dim, 4> ?>
// expect: matmul_weight_rank3\.cpp:[0-9]+:[0-9]+: .*(required from here|sf::matmul<)
#include "staticformer/matmul.hpp"

sf::tensor<float, sf::Seq<4>, sf::Model<8>> x;
#ifdef SF_COMPILE_FAIL_CONTROL
sf::tensor<float, sf::Model<8>, sf::Model<8>> wq;
sf::tensor<float, sf::Seq<4>, sf::Model<8>> q;
#else
sf::tensor<float, sf::Model<8>, sf::Heads<2>, sf::HeadDim<4>> wq;
sf::tensor<float, sf::Seq<4>, sf::Heads<2>, sf::HeadDim<4>> q;
#endif

void run() { sf::matmul(q, x, wq); }
