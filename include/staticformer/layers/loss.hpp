// staticformer/layers/loss.hpp — cross-entropy over the vocabulary, ignoring targets of -1.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "staticformer/config.hpp"
#include "staticformer/kernels/vmath.hpp"
#include "staticformer/math.hpp"
#include "staticformer/parallel.hpp"
#include "staticformer/params.hpp"

namespace sf::layers {

template <config C, class T = float>
struct cross_entropy {
  static constexpr std::size_t N = C.B * C.T, V = C.V;
  using btv = typename types<C, T>::btv;

  // Number of targets that count (not -1).
  static constexpr std::size_t count(const targets_t<C>& targets) {
    std::size_t n = 0;
    for (std::size_t r = 0; r < N; ++r) n += targets[r] >= 0 ? 1 : 0;
    return n;
  }

  // Kahan-compensated Σ of -log p[target] over rows: a batch's sum may run over several calls
  // (sf::forward_backward's chunks), continuing the same compensated sum row by row.
  struct loss_sum {
    T sum{}, comp{};
  };

  // p = softmax(logits) per row;  sum += Σ_{rows with target ≥ 0} -log p[target]
  // logits, probs: (B,T,V)  targets: (B,T)
  // -log p[t] = log Σ_j e^{z_j - m} + m - z_t, with m and Σ from the softmax kernel.
  static constexpr void forward_sum(btv& probs, const btv& logits, const targets_t<C>& targets, loss_sum& s) {
    // Σ over rows in T with Kahan compensation (float stays accurate over B·T rows, no double)
    for (std::size_t r = 0; r < N; ++r) {
      const T* z = logits.data() + r * V;
      T* pr = probs.data() + r * V;
      for (std::size_t j = 0; j < V; ++j) pr[j] = z[j];
      const auto [mx, sum] = softmax(pr);
      const std::int32_t tgt = targets[r];
      if (tgt < 0) continue;
      const T term = log(sum) + (mx - z[tgt]) - s.comp;  // -log p[tgt]
      const T next = s.sum + term;
      s.comp = (next - s.sum) - term;
      s.sum = next;
    }
  }
  // loss = (1/n) Σ_{rows with target ≥ 0} -log p[target],  n = their count (loss = 0 when every
  // target is ignored); p = softmax(logits) per row.  logits, probs: (B,T,V)  targets: (B,T)
  static constexpr T forward(btv& probs, const btv& logits, const targets_t<C>& targets) {
    loss_sum s;
    forward_sum(probs, logits, targets, s);
    return mean(s, count(targets));
  }
  static constexpr T mean(const loss_sum& s, std::size_t n) { return n ? s.sum / static_cast<T>(n) : T{}; }
  // log in T: float arithmetic only for float (cx::logf), the same bits at compile and run time
  static constexpr T log(T x) {
    if constexpr (std::is_same_v<T, float>) return cx::logf(x);
    else return math::log(x);
  }

  // p = softmax(p) in place; returns max and Σ e^{p - max} (before normalisation)    p: (V)
  struct stats {
    T max, sum;
  };
  static constexpr stats softmax(T* p) {
    if constexpr (std::is_same_v<T, float>) {
      const simd::softmax_stats st = simd::softmax_scaled(p, V, 1.0f);  // the library's one softmax kernel
      return {st.max, st.sum};
    } else {  // double (finite-difference tests): the formula
      T mx = p[0];
      for (std::size_t j = 1; j < V; ++j) mx = p[j] > mx ? p[j] : mx;
      T sum{};
      for (std::size_t j = 0; j < V; ++j) sum += (p[j] = math::exp(p[j] - mx));
      for (std::size_t j = 0; j < V; ++j) p[j] /= sum;
      return {mx, sum};
    }
  }

  // dlogits = (p - onehot(target)) / n for counted rows, 0 for ignored ones.
  // dlogits: (B,T,V) written (may alias probs)  probs: (B,T,V) from forward
  // n: the count the loss is divided by (that of these targets, or of the whole batch when these
  // rows are one chunk of it).
  static constexpr void backward(btv& dlogits, const btv& probs, const targets_t<C>& targets) {
    backward(dlogits, probs, targets, count(targets));
  }
  static constexpr void backward(btv& dlogits, const btv& probs, const targets_t<C>& targets, std::size_t n) {
    const T inv_n = n ? T{1} / static_cast<T>(n) : T{};
    parallel::split(N, V, [&](std::size_t r0, std::size_t r1) {  // rows: any split, the same bits
      for (std::size_t r = r0; r < r1; ++r) {
        const std::int32_t tgt = targets[r];
        T* d = dlogits.data() + r * V;
        const T* pr = probs.data() + r * V;
        if (tgt < 0) {
          for (std::size_t j = 0; j < V; ++j) d[j] = T{};
          continue;
        }
        for (std::size_t j = 0; j < V; ++j) d[j] = pr[j] * inv_n;
        d[tgt] -= inv_n;
      }
    });
  }
};

}  // namespace sf::layers
