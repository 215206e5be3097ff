// (e) element-wise op on different shapes: a residual add of a (T, F) tensor to a (T, D) one.
// first-error: (sf::tensor element-wise op: lhs is \(T=4, D=8\), rhs is \(T=4, F=32\); the two shapes differ|elementwise<sf::shape_error::lhs_is<sf::shape_error::T<4>, sf::shape_error::D<8> ?>, sf::shape_error::rhs_is<sf::shape_error::T<4>, sf::shape_error::F<32> ?> ?>::ok. "sf::tensor element-wise op: the two shapes differ)
// expect: (nstantiation of|required from) .*check_elementwise.*sf::tensor<float, sf::axis<sf::tag::seq, 4>, sf::axis<sf::tag::model, 8> ?>.*sf::tensor<float, sf::axis<sf::tag::seq, 4>, sf::axis<sf::tag::ffn, 32> ?>
// expect: elementwise_shape\.cpp:[0-9]+:[0-9]+: .*(required from here|operator\+<)
#include "staticformer/tensor.hpp"

using td = sf::tensor<float, sf::Seq<4>, sf::Model<8>>;
using tf = sf::tensor<float, sf::Seq<4>, sf::Ffn<32>>;

#ifdef SF_COMPILE_FAIL_CONTROL
td residual(const td& x, const td& h, const tf&) { return x + h; }
#else
td residual(const td& x, const td&, const tf& h) { return x + h; }
#endif
