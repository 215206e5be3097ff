// staticformer/kernels/fetch.hpp — lines to fetch into L2 while a matrix product runs.
//
// A batched decoder step whose weights come from memory (a stories15M-shaped model: 61 MB that
// pass through L3 at every step) finds its streams' keys and values evicted from L3 when their
// attention runs, and reads them from memory at a few GB/s, one short row after another (16
// streams × 6 layers at 100 keys: about 1 ms of a 7 ms step on a Zen 4). Meanwhile its matrix
// products are bound by the FMA units, the memory idle beside them. A fetch_list names the lines
// the next attention reads; the register tiles of gemm_nn_panels (kernels/gemm.hpp) fetch one of
// them into L2 at each k step beside their FMAs, so they are in L2 or L3 when the attention
// comes. A prefetch never faults and changes no value: the products' bits are the same with or
// without one.
#pragma once

#include <cstddef>

#include "staticformer/kernels/attributes.hpp"

namespace sf::kernels {

// rows × lines lines of 64 bytes: the line j of row i begins at at + i·stride + j·(64 / sizeof(T))
// (elements). For rows whose starts are 64-byte aligned (the decoder's caches) these are exactly
// the lines of their first count elements (count_lines).
template <class T>
struct fetch_range {
  const T* at = nullptr;
  std::size_t stride = 0, rows = 0, lines = 0;
};
template <class T>
constexpr std::size_t count_lines(std::size_t count) {
  return (count * sizeof(T) + 63) / 64;
}

// A walk over n ranges (each at least one row of at least one line), one line per next().
template <class T>
struct fetch_list {
  const fetch_range<T>* ranges = nullptr;
  std::size_t n = 0;
  std::size_t cur = 0, i = 0, j = 0;  // range, row, line of the next fetch

  constexpr bool more() const { return cur < n; }
  constexpr void stop() { cur = n; }
  // The next line's address (more() must hold), and the walk moves past it.
  constexpr const T* step() {
    const fetch_range<T>& r = ranges[cur];
    const T* p = r.at + i * r.stride + j * (64 / sizeof(T));
    if (++j == r.lines) {
      j = 0;
      if (++i == r.rows) i = 0, ++cur;
    }
    return p;
  }
  SF_KERNEL_INLINE void next() { SF_PREFETCH_L2(step()); }
};

}  // namespace sf::kernels
