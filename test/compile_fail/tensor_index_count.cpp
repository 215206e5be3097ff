// (c) tensor::operator(): three indices into a rank-2 tensor.
// first-error: (sf::tensor::operator\(\): x is \(T=4, D=8\), 3 indices; wrong number of indices|index<sf::shape_error::x_is<sf::shape_error::T<4>, sf::shape_error::D<8> ?>, sf::shape_error::indices<3> ?>::ok. "sf::tensor::operator\(\): wrong number of indices)
// expect: (operator\(\).*Axes = .sf::axis<sf::tag::seq, 4>, sf::axis<sf::tag::model, 8>.|sf::tensor<int, sf::axis<sf::tag::seq, 4>, sf::axis<sf::tag::model, 8>>::operator\(\))
// expect: (I = .int, int, int.|operator\(\)<int, int, int>)
// expect: tensor_index_count\.cpp:[0-9]+:[0-9]+: .*(required from here|operator\(\)<)
#include "staticformer/tensor.hpp"

int read(const sf::tensor<int, sf::Seq<4>, sf::Model<8>>& x) {
#ifdef SF_COMPILE_FAIL_CONTROL
  return x(1, 2);
#else
  return x(1, 2, 3);
#endif
}
