// hello — a tiny configuration, a few tensors, one matmul, printed with fmt.
//
//   tools/demo.sh          (installs what is missing, builds this and runs it)
#include <cstdio>

#include <fmt/core.h>

#include "staticformer/fmt.hpp"
#include "staticformer/params.hpp"
#include "staticformer/staticformer.hpp"

// Every shape of the model is a compile-time constant of this one value.
inline constexpr sf::config tiny{{.V = 16, .T = 4, .D = 8, .H = 2, .L = 1, .F = 12}, {.B = 2}};
static_assert(sf::check_config<tiny>());
using ax = sf::axes<tiny>;

// Activations (B, T, D), a feed-forward weight (D, F) and bias (F), the output (B, T, F).
// Static storage: tensors hold their data inline, so large ones never go on the stack.
static sf::tensor<float, ax::batch, ax::seq, ax::model> x;
static sf::tensor<float, ax::model, ax::ffn> w;
static sf::tensor<float, ax::ffn> b;
static sf::tensor<float, ax::batch, ax::seq, ax::ffn> y;

// The same product can run at compile time.
constexpr float compile_time_value() {
  sf::tensor<float, sf::Seq<2>, sf::Model<3>> a{};
  sf::tensor<float, sf::Model<3>, sf::Ffn<2>> m{};
  sf::tensor<float, sf::Seq<2>, sf::Ffn<2>> r{};
  a.fill(1.0f);
  m.fill(2.0f);
  sf::matmul(r, a, m);
  return r(1, 1);  // 1·2 + 1·2 + 1·2
}
static_assert(compile_time_value() == 6.0f);

int main() {
  for (std::size_t i = 0; i < x.size; ++i) x[i] = static_cast<float>(i % 5) * 0.25f;
  for (std::size_t i = 0; i < w.size; ++i) w[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.1f;
  for (std::size_t i = 0; i < b.size; ++i) b[i] = 0.01f * static_cast<float>(i);

  sf::matmul(y, x, w, b);  // y = x·w + b; a shape mistake here would not compile

  fmt::print("config     {}\n", tiny);
  fmt::print("parameters {} in {} tensors\n", sf::parameter_count<sf::params<tiny>>,
             sf::tensor_count<sf::params<tiny>>);
  fmt::print("x {:<16} {} bytes\n", decltype(x)::shape_type{}, sizeof x);
  fmt::print("w {:<16} {} bytes\n", decltype(w)::shape_type{}, sizeof w);
  fmt::print("b {:<16} {} bytes\n", decltype(b)::shape_type{}, sizeof b);
  fmt::print("y {:<16} {} bytes\n", decltype(y)::shape_type{}, sizeof y);
  fmt::print("y = x·w + b:\n{:.3f}\n", y);

  // Check one element against the definition, so that this example is also a test.
  double expect = b[5];
  for (std::size_t k = 0; k < ax::model::size; ++k) expect += static_cast<double>(x(1, 3, k)) * w(k, 5);
  const double diff = y(1, 3, 5) - expect;
  if (diff > 1e-5 || diff < -1e-5) {
    std::fprintf(stderr, "hello: y(1, 3, 5) = %g, expected %g\n", static_cast<double>(y(1, 3, 5)), expect);
    return 1;
  }
  fmt::print("y(1, 3, 5) = {:.6f} matches the definition; compile-time matmul gave {}\n", y(1, 3, 5),
             compile_time_value());
  return 0;
}
