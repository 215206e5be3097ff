// staticformer/optim.hpp — optimizers over the reflected parameters.
//
//   static sf::params<C> p, g;                 // parameters and their gradients
//   static sf::adamw_state<sf::params<C>> opt;  // moments m, v: same struct type, caller-owned
//   opt.options = {.weight_decay = 0.1, .decay = sf::decay_on::matrices};
//   const sf::lr_schedule sched{.max_lr = 3e-3, .min_lr = 3e-4, .warmup_steps = 100, .total_steps = 3000};
//   ...                                          // sf::zero(g); forward; backward
//   const float norm = sf::clip_grad_norm(g, 1.0);
//   opt.step(p, g, sched(opt.t));                // opt.t = updates done so far
//
// Every function walks the parameter struct with sf::visit, updates in place and
// allocates nothing. AdamW's element loop runs through the SIMD abstraction (the scalar loop
// is its reference and the compile-time path); the others are plain loops the compiler vectorises. Arithmetic follows PyTorch (torch.optim.AdamW / SGD,
// torch.nn.utils.clip_grad_norm_) operation by operation in float, with the scalar
// coefficients computed in double as Python does, so results agree with PyTorch to
// rounding (a few ulp); see test/test_optim.cpp for the reference numbers.
//
// Weight decay. torch.optim.AdamW decays every parameter; GPT-style training decays
// only the weight matrices and embeddings (rank-2 tensors) and leaves biases and
// norm gains alone. Both are available: `decay_on::all` (the default, PyTorch's
// plain AdamW) and `decay_on::matrices` (what examples/train uses). With
// weight_decay = 0 (the reference runner) the choice does not matter.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "staticformer/kernels/attributes.hpp"
#include "staticformer/math.hpp"
#include "staticformer/parallel.hpp"
#include "staticformer/reflect.hpp"
#include "staticformer/simd.hpp"

namespace sf {

// Which tensors weight decay applies to.
enum class decay_on {
  all,       // every parameter (torch.optim.AdamW with one parameter group)
  matrices,  // tensors of rank >= 2 only: weights and embeddings, not biases or norm gains
};

namespace detail {
template <class Tensor>
constexpr bool decays(decay_on d) {
  return d == decay_on::all || std::remove_cvref_t<Tensor>::rank >= 2;
}
template <class E>
struct adamw_coeffs {
  E step_size, bc2_sqrt, b1, b2, eps, one_minus_b1, one_minus_b2, keep;
};

// The element loop of AdamW over one tensor, one pass over memory (decay folded in):
//   p ← p·keep (if decay);  m ← m·β1 + (1−β1)·g;  v ← v·β2 + ((1−β2)·g)·g;
//   p ← p + (−step)·(m / (√v / √bc2 + ε))
// each operation rounded separately (no FMA), in this order, as PyTorch's float code does.
// At run time through the SIMD abstraction (lane by lane the same operations, IEEE √ and ÷: the
// same bits as the scalar loop, whatever -fno-math-errno says); the scalar loop is the reference
// and the constant-evaluation path.
template <class V, class E>
SF_KERNEL_INLINE void adamw_lanes(std::size_t i, std::size_t n, E* __restrict p, const E* __restrict g,
                                  E* __restrict m, E* __restrict v, const adamw_coeffs<E>& k, bool decay) {
  using reg = typename V::reg;
  const bool full = n == V::width;
  auto ld = [&](const E* a) { return full ? V::load(a + i) : V::load_partial(a + i, n); };
  auto st = [&](E* a, reg x) { full ? V::store(a + i, x) : V::store_partial(a + i, x, n); };
  const reg gi = ld(g);
  reg pi = ld(p);
  if (decay) pi = V::mul(pi, V::set1(k.keep));
  const reg mi = V::add(V::mul(ld(m), V::set1(k.b1)), V::mul(V::set1(k.one_minus_b1), gi));
  const reg vi = V::add(V::mul(ld(v), V::set1(k.b2)), V::mul(V::mul(V::set1(k.one_minus_b2), gi), gi));
  st(m, mi);
  st(v, vi);
  const reg denom = V::add(V::div(V::sqrt(vi), V::set1(k.bc2_sqrt)), V::set1(k.eps));
  st(p, V::add(pi, V::mul(V::set1(-k.step_size), V::div(mi, denom))));
}
template <std::size_t N, class E>
constexpr void adamw_update(E* __restrict p, const E* __restrict g, E* __restrict m, E* __restrict v,
                  const adamw_coeffs<E>& k, bool decay) {
  if constexpr (std::is_same_v<E, float>) {
    if (!std::is_constant_evaluated()) {
      using V = simd::native<float>;
      constexpr std::size_t W = V::width, vectors = (N + W - 1) / W;
      // element-wise: split over a thread pool's tasks by whole vectors, the same bits
      parallel::split(vectors, W, [&](std::size_t v0, std::size_t v1) {
        for (std::size_t i = v0 * W; i < v1 * W; i += W) adamw_lanes<V>(i, N - i < W ? N - i : W, p, g, m, v, k, decay);
      });
      return;
    }
  }
  const E step_size = k.step_size, bc2_sqrt = k.bc2_sqrt, b1 = k.b1, b2 = k.b2, eps = k.eps;
  const E c1 = k.one_minus_b1, c2 = k.one_minus_b2, keep = k.keep;
  for (std::size_t i = 0; i < N; ++i) {
    const E pi = decay ? p[i] * keep : p[i];
    const E gi = g[i];
    const E mi = m[i] * b1 + c1 * gi;
    const E vi = v[i] * b2 + c2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    const E denom = math::sqrt(vi) / bc2_sqrt + eps;  // IEEE √ (correctly rounded) at run and compile time
    p[i] = pi + (-step_size) * (mi / denom);
  }
}
}  // namespace detail

// ---------------------------------------------------------------- AdamW
// Hyper-parameters are doubles, as in PyTorch (Python floats): 1 − β2 is then the
// float nearest 0.001, not 1 − 0.999f.
struct adamw_options {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;  // decoupled: p ← p − lr·wd·p
  decay_on decay = decay_on::all;
};

// AdamW with PyTorch's semantics. At update t = 1, 2, ... with gradient g:
//   p ← p − lr·wd·p                                   (decoupled decay, before the update)
//   m ← β1·m + (1−β1)·g
//   v ← β2·v + (1−β2)·g²
//   p ← p − lr/(1−β1^t) · m / (√v / √(1−β2^t) + ε)
// which is p − lr·m̂/(√v̂ + ε) with m̂ = m/(1−β1^t), v̂ = v/(1−β2^t), written the way
// torch.optim.AdamW evaluates it. m and v start at 0.
//
// S is a parameter struct (e.g. sf::params<C>); the moments are S members, so the
// optimizer is as large as two copies of the model: give it static or heap storage
// the caller owns, never the stack. A static object starts zeroed; reset() re-zeroes.
template <class S>
struct adamw {
  adamw_options options{};
  S m;                 // first moments, same names and shapes as the parameters
  S v;                 // second moments
  std::int64_t t = 0;  // updates done so far (PyTorch's `step`)

  constexpr void reset() {
    zero(m);
    zero(v);
    t = 0;
  }

  // One update of `params` with gradients `grads` and learning rate `lr`.
  constexpr void step(S& params, const S& grads, double lr) {
    t += 1;
    const adamw_options o = options;
    // Scalars in double, then rounded once to float, as PyTorch's Python code does (β^t by
    // cx::powi, correctly rounded, the same code at compile and run time).
    const double bc1 = 1.0 - cx::powi(o.beta1, t);
    const double bc2 = 1.0 - cx::powi(o.beta2, t);
    visit(
        [&](const param_name&, auto& p, const auto& g, auto& mt, auto& vt) {
          using X = std::remove_cvref_t<decltype(p)>;
          using E = typename X::value_type;  // float, or double for a double model
          detail::adamw_coeffs<E> k;
          k.step_size = static_cast<E>(lr / bc1);
          k.bc2_sqrt = static_cast<E>(math::sqrt(bc2));
          k.b1 = static_cast<E>(o.beta1);
          k.b2 = static_cast<E>(o.beta2);
          k.eps = static_cast<E>(o.eps);
          k.one_minus_b1 = static_cast<E>(1.0 - o.beta1);
          k.one_minus_b2 = static_cast<E>(1.0 - o.beta2);
          k.keep = static_cast<E>(1.0 - lr * o.weight_decay);
          const bool decay = o.weight_decay != 0.0 && detail::decays<X>(o.decay);
          detail::adamw_update<X::size>(p.data(), g.data(), mt.data(), vt.data(), k, decay);
        },
        params, grads, m, v);
  }
};

// The optimizer state of AdamW for parameter struct S (moments + step count).
template <class S> using adamw_state = adamw<S>;

// ---------------------------------------------------------------- SGD with momentum
struct sgd_options {
  double momentum = 0.9;      // 0 = plain SGD
  double weight_decay = 0.0;  // coupled L2, as torch.optim.SGD: g ← g + wd·p
  bool nesterov = false;
  decay_on decay = decay_on::all;
};

// SGD with momentum, PyTorch's semantics (dampening 0). At update t with gradient g:
//   d ← g + wd·p
//   b ← d                      at t = 1
//   b ← μ·b + d                at t > 1
//   d ← d + μ·b  (Nesterov)  or  d ← b
//   p ← p − lr·d
template <class S>
struct sgd {
  sgd_options options{};
  S buf;               // momentum buffers
  std::int64_t t = 0;  // updates done so far

  constexpr void reset() {
    zero(buf);
    t = 0;
  }

  constexpr void step(S& params, const S& grads, double lr) {
    t += 1;
    const sgd_options o = options;
    const bool first = t == 1;
    visit(
        [&](const param_name&, auto& p, const auto& g, auto& b) {
          using X = std::remove_cvref_t<decltype(p)>;
          using E = typename X::value_type;
          constexpr std::size_t n = X::size;
          const E mu = static_cast<E>(o.momentum), neg_lr = static_cast<E>(-lr);
          const E wd = detail::decays<X>(o.decay) ? static_cast<E>(o.weight_decay) : E{0};
          E* __restrict pp = p.data();
          const E* __restrict gp = g.data();
          E* __restrict bp = b.data();
          for (std::size_t i = 0; i < n; ++i) {
            E d = gp[i];
            if (wd != E{0}) d = d + wd * pp[i];
            if (mu != E{0}) {
              const E bi = first ? d : bp[i] * mu + d;
              bp[i] = bi;
              d = o.nesterov ? d + mu * bi : bi;
            }
            pp[i] = pp[i] + neg_lr * d;
          }
        },
        params, grads, buf);
  }
};

template <class S> using sgd_state = sgd<S>;

// ---------------------------------------------------------------- gradient clipping
// The global L2 norm of every tensor of `s`: √(Σ g²), accumulated in double.
template <class S>
double global_norm(const S& s) {
  double total = 0.0;
  visit(
      [&](const param_name&, const auto& x) {
        constexpr std::size_t n = std::remove_cvref_t<decltype(x)>::size;
        constexpr std::size_t lanes = 8;  // independent partial sums: vectorisable, fixed order
        constexpr std::size_t full = n / lanes * lanes;
        double acc[lanes] = {};
        const auto* xp = x.data();
        for (std::size_t i = 0; i < full; i += lanes)
          for (std::size_t j = 0; j < lanes; ++j) acc[j] += static_cast<double>(xp[i + j]) * xp[i + j];
        for (std::size_t i = full; i < n; ++i) acc[0] += static_cast<double>(xp[i]) * xp[i];
        for (std::size_t j = 0; j < lanes; ++j) total += acc[j];
      },
      s);
  return std::sqrt(total);
}

// torch.nn.utils.clip_grad_norm_: if the global norm N of the gradients exceeds
// max_norm, scale every gradient by max_norm / (N + 1e-6). Returns N, the norm before
// clipping. A non-finite N (NaN or Inf in a gradient) leaves the gradients untouched
// and is returned as is, so the caller can skip the update.
template <class S>
float clip_grad_norm(S& grads, double max_norm) {
  const double norm = global_norm(grads);
  if (!std::isfinite(norm)) return static_cast<float>(norm);
  const double coef = max_norm / (norm + 1e-6);
  if (coef < 1.0) {
    visit(
        [&](const param_name&, auto& x) {
          using X = std::remove_cvref_t<decltype(x)>;
          constexpr std::size_t n = X::size;
          const auto c = static_cast<typename X::value_type>(coef);
          auto* xp = x.data();
          for (std::size_t i = 0; i < n; ++i) xp[i] *= c;
        },
        grads);
  }
  return static_cast<float>(norm);
}

// ---------------------------------------------------------------- learning-rate schedule
// Linear warm-up, then cosine decay to a floor. For update number `step` (0-based:
// the learning rate of the (step+1)-th update):
//   step < W:         lr = max_lr · (step + 1) / W
//   W ≤ step < N:     lr = min_lr + ½ (max_lr − min_lr) (1 + cos(π (step − W) / (N − W)))
//   step ≥ N:         lr = min_lr
// with W = warmup_steps and N = total_steps. constexpr, so a schedule can be checked
// at compile time.
struct lr_schedule {
  double max_lr = 1e-3;
  double min_lr = 1e-4;
  std::int64_t warmup_steps = 0;
  std::int64_t total_steps = 1;

  constexpr double operator()(std::int64_t step) const { return at(static_cast<double>(step)); }
  // At a fractional step: the same curve between the steps (a schedule compressed into fewer steps,
  // staticformer/budget.hpp). At a whole step the same bits as operator() (exact in double).
  constexpr double at(double step) const {
    const double warmup = static_cast<double>(warmup_steps), total = static_cast<double>(total_steps);
    if (step < warmup) return max_lr * (step + 1.0) / warmup;
    if (step >= total) return min_lr;
    const double progress = (step - warmup) / (total - warmup);
    return min_lr + 0.5 * (max_lr - min_lr) * (1.0 + math::cos(3.14159265358979323846 * progress));
  }
};

}  // namespace sf
