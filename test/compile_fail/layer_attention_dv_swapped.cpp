// (m) inside attention's backward: dV_h = Pᵀ·dO_h, a (T, d_k) result. Swapping the operands,
// dO_hᵀ·P, gives a (d_k, T) product that must not be written into dV_h, although T = d_k = 16.
// first-error: (sf::matmul_tn\(C, A, B\): C is \(T=16, dk=16\), A is \(T=16, dk=16\), B is \(T=16, T=16\); the first axis of C must equal the last axis of A|matmul_tn<sf::shape_error::C_is<sf::shape_error::T<16>, sf::shape_error::dk<16> ?>, sf::shape_error::A_is<sf::shape_error::T<16>, sf::shape_error::dk<16> ?>, sf::shape_error::B_is<sf::shape_error::T<16>, sf::shape_error::T<16> ?> ?>::ok. "sf::matmul_tn\(C, A, B\): the first axis of C must equal the last axis of A)
// expect: (nstantiation of|required from) .*check_matmul_tn.*sf::view<float, sf::shape<sf::axis<sf::tag::seq, 16> ?>, sf::axis<sf::tag::head_dim, 16>, 64>
// expect: layer_attention_dv_swapped\.cpp:[0-9]+:[0-9]+: .*(required from here|sf::matmul_tn<)
#include "staticformer/layers/attention.hpp"

inline constexpr sf::config cfg{{.V = 32, .T = 16, .D = 64, .H = 4, .L = 1, .F = 128}, {.B = 1}};  // d_k = 16 = T
using types = sf::types<cfg>;
types::btd dO, dV;
sf::tensor<float, sf::Seq<16>, sf::Seq<16>> P;

void head_dv(std::size_t b, std::size_t h) {
  const auto dOh = sf::head<cfg.H>(std::as_const(dO), b, h);
#ifdef SF_COMPILE_FAIL_CONTROL
  sf::matmul_tn(sf::head<cfg.H>(dV, b, h), std::as_const(P), dOh);  // dV_h = Pᵀ dO_h
#else
  sf::matmul_tn(sf::head<cfg.H>(dV, b, h), dOh, std::as_const(P));  // dO_hᵀ P: (d_k, T)
#endif
}
