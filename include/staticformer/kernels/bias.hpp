// staticformer/kernels/bias.hpp — the gradient of a bias: column sums of the output gradient.
#pragma once
#include <cstddef>

#include "staticformer/parallel.hpp"

namespace sf::kernels {

// db[n] += Σ_m dy[m, n]      db: (N)   dy: (M, N) row-major
// Each column sums its rows in order; with a thread pool, columns are split over its tasks.
template <std::size_t M, std::size_t N, class T>
constexpr void bias_backward(T* db, const T* dy) {
  parallel::split(N, M, [&](std::size_t n0, std::size_t n1) {
    for (std::size_t m = 0; m < M; ++m)
      for (std::size_t n = n0; n < n1; ++n) db[n] += dy[m * N + n];
  });
}

}  // namespace sf::kernels
