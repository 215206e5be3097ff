// (n) a layer variant with a bug: a feed-forward layer that applies W2 (F, D) where W1 (D, F)
// belongs. With F = D = 32 every size agrees, and the raw kernels would run; through the
// checked products inside the layer it does not compile.
// first-error: (sf::matmul\(Y, X, W\): X is \(B=1, T=8, D=32\), W is \(F=32, D=32\); the last axis of X and the first axis of W have the same size but are different axes|matmul<sf::shape_error::X_is<sf::shape_error::B<1>, sf::shape_error::T<8>, sf::shape_error::D<32> ?>, sf::shape_error::W_is<sf::shape_error::F<32>, sf::shape_error::D<32> ?> ?>::ok. "sf::matmul\(Y, X, W\): the last axis of X and the first axis of W have the same size but are different axes)
// expect: (nstantiation of|required from) .*check_matmul.*sf::tensor<float, sf::axis<sf::tag::batch, 1>, sf::axis<sf::tag::seq, 8>, sf::axis<sf::tag::model, 32> ?>.*sf::tensor<float, sf::axis<sf::tag::ffn, 32>, sf::axis<sf::tag::model, 32> ?>
// expect: layer_ffn_wrong_weight\.cpp:[0-9]+:[0-9]+: .*(required from here|sf::matmul<)
#include "staticformer/layers/ffn.hpp"

inline constexpr sf::config cfg{{.V = 32, .T = 8, .D = 32, .H = 2, .L = 1, .F = 32, .bias = false}, {.B = 1}};

// The library's layer, with its first product rewritten.
struct buggy_ffn : sf::layers::ffn<cfg> {
  static void forward(btd& y, const btd& x, const params_t& p, saved& s) {
#ifdef SF_COMPILE_FAIL_CONTROL
    sf::matmul(s.h, x, p.w1);  // h = x W1
#else
    sf::matmul(s.h, x, p.w2);  // h = x W2: the wrong weight
#endif
    act::template forward<N * F>(s.a.data(), s.h.data());
    sf::matmul(y, s.a, p.w2);
  }
};

buggy_ffn::btd x, y;
buggy_ffn::params_t p;
buggy_ffn::saved s;
void run() { buggy_ffn::forward(y, x, p, s); }
