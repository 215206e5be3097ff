// staticformer/kernels/bias.hpp — the gradient of a bias: column sums of the output gradient.
#pragma once
#include <cstddef>

namespace sf::kernels {

// db[n] += Σ_m dy[m, n]      db: (N)   dy: (M, N) row-major
template <std::size_t M, std::size_t N, class T>
constexpr void bias_backward(T* db, const T* dy) {
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) db[n] += dy[m * N + n];
}

}  // namespace sf::kernels
