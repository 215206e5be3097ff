// staticformer/layers/loss.hpp — cross-entropy over the vocabulary, ignoring targets of -1.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "staticformer/config.hpp"
#include "staticformer/kernels/vmath.hpp"
#include "staticformer/math.hpp"
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

  // p = softmax(logits) per row;  loss = (1/n) Σ_{rows with target ≥ 0} -log p[target],  n = their count
  // (loss = 0 when every target is ignored).  logits, probs: (B,T,V)  targets: (B,T)
  static constexpr T forward(btv& probs, const btv& logits, const targets_t<C>& targets) {
    const std::size_t n = count(targets);
    double loss = 0;  // summed in double: the mean over B·T rows stays accurate in float
    for (std::size_t r = 0; r < N; ++r) {
      const T* z = logits.data() + r * V;
      T* pr = probs.data() + r * V;
      T mx = z[0];
      for (std::size_t j = 1; j < V; ++j) mx = z[j] > mx ? z[j] : mx;
      const T sum = exp_shifted(pr, z, mx);  // pr = e^{z - mx}, returns Σ pr
      const T inv = T{1} / sum;
      for (std::size_t j = 0; j < V; ++j) pr[j] *= inv;
      const std::int32_t tgt = targets[r];
      if (tgt >= 0) loss += static_cast<double>(math::log(sum) + mx - z[tgt]);  // -log softmax(z)[tgt]
    }
    return n ? static_cast<T>(loss / static_cast<double>(n)) : T{};
  }

  // p[j] = e^{z[j] - mx}, returns Σ_j p[j]     p, z: (V)
  static constexpr T exp_shifted(T* p, const T* z, T mx) {
    if constexpr (std::is_same_v<T, float>) {
      if (!std::is_constant_evaluated()) {
        using Vb = simd::native<float>;
        constexpr std::size_t W = Vb::width, full = V / W * W;
        typename Vb::reg s = Vb::zero();
        const typename Vb::reg m = Vb::set1(mx);
        for (std::size_t j = 0; j < full; j += W) {
          const typename Vb::reg e = simd::vexp<Vb>(Vb::sub(Vb::load(z + j), m));
          Vb::store(p + j, e);
          s = Vb::add(s, e);
        }
        float sum = Vb::hsum(s);
        for (std::size_t j = full; j < V; ++j) sum += (p[j] = math::exp(z[j] - mx));
        return sum;
      }
    }
    T sum{};
    for (std::size_t j = 0; j < V; ++j) sum += (p[j] = math::exp(z[j] - mx));
    return sum;
  }

  // dlogits = (p - onehot(target)) / n for counted rows, 0 for ignored ones.
  // dlogits: (B,T,V) written (may alias probs)  probs: (B,T,V) from forward
  static void backward(btv& dlogits, const btv& probs, const targets_t<C>& targets) {
    const std::size_t n = count(targets);
    const T inv_n = n ? T{1} / static_cast<T>(n) : T{};
    for (std::size_t r = 0; r < N; ++r) {
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
  }
};

}  // namespace sf::layers
