// (e) compound assignment between shapes that have the same sizes but transposed axes:
// (T, D) += (D, T) with T = D = 8.
// first-error: (sf::tensor element-wise op: lhs is \(T=8, D=8\), rhs is \(D=8, T=8\); the two shapes differ|elementwise<sf::shape_error::lhs_is<sf::shape_error::T<8>, sf::shape_error::D<8> ?>, sf::shape_error::rhs_is<sf::shape_error::D<8>, sf::shape_error::T<8> ?> ?>::ok. "sf::tensor element-wise op: the two shapes differ)
// expect: (nstantiation of|required from) .*check_elementwise.*sf::tensor<float, sf::axis<sf::tag::seq, 8>, sf::axis<sf::tag::model, 8> ?>.*sf::tensor<float, sf::axis<sf::tag::model, 8>, sf::axis<sf::tag::seq, 8> ?>
// expect: ::operator\+=
// expect: elementwise_compound\.cpp:[0-9]+:[0-9]+: .*(required from here|operator\+=<)
#include "staticformer/tensor.hpp"

using td = sf::tensor<float, sf::Seq<8>, sf::Model<8>>;
using dt = sf::tensor<float, sf::Model<8>, sf::Seq<8>>;

#ifdef SF_COMPILE_FAIL_CONTROL
void accumulate(td& acc, const td& x, const dt&) { acc += x; }
#else
void accumulate(td& acc, const td&, const dt& x) { acc += x; }
#endif
