// Built with -fno-exceptions -fno-rtti: the whole core must compile and run that way,
// and must not pull in <iostream>.
#include "staticformer/staticformer.hpp"
#ifdef _GLIBCXX_IOSTREAM
#error "the staticformer core must not include <iostream>"
#endif
#include <cstdio>

static sf::tensor<float, sf::Seq<5>, sf::Model<7>> x;
static sf::tensor<float, sf::Model<7>, sf::Ffn<3>> w;
static sf::tensor<float, sf::Seq<5>, sf::Ffn<3>> y;

int main() {
  x.fill(1.0f);
  w.fill(0.5f);
  sf::matmul(y, x, w);
  const sf::status s = y(4, 2) == 3.5f ? sf::status::ok() : sf::status::error("matmul gave ", static_cast<int>(y(4, 2)));
  std::printf("%s\n", s.message());
  return s ? 0 : 1;
}
