// matmul_nt: S = Q·Kᵀ contracts the last axis of both operands. Passing K as (d_k, T) instead of
// (T, d_k), with T = d_k = 16, gives equal sizes but different axes.
// first-error: (sf::matmul_nt\(C, A, B\): A is \(T=16, dk=16\), B is \(dk=16, T=16\); the last axis of A and the last axis of B have the same size but are different axes|matmul_nt<sf::shape_error::A_is<sf::shape_error::T<16>, sf::shape_error::dk<16> ?>, sf::shape_error::B_is<sf::shape_error::dk<16>, sf::shape_error::T<16> ?> ?>::ok. "sf::matmul_nt\(C, A, B\): the last axis of A and the last axis of B have the same size but are different axes)
// expect: (nstantiation of|required from) .*check_matmul_nt.*sf::tensor<float, sf::axis<sf::tag::seq, 16>, sf::axis<sf::tag::head_dim, 16> ?>.*sf::tensor<float, sf::axis<sf::tag::head_dim, 16>, sf::axis<sf::tag::seq, 16> ?>
// expect: matmul_nt_inner_axis\.cpp:[0-9]+:[0-9]+: .*(required from here|sf::matmul_nt<)
#include "staticformer/matmul.hpp"

sf::tensor<float, sf::Seq<16>, sf::HeadDim<16>> q;
sf::tensor<float, sf::Seq<16>, sf::Seq<16>> s;
#ifdef SF_COMPILE_FAIL_CONTROL
sf::tensor<float, sf::Seq<16>, sf::HeadDim<16>> k;
#else
sf::tensor<float, sf::HeadDim<16>, sf::Seq<16>> k;
#endif

void run() { sf::matmul_nt(s, q, k); }
