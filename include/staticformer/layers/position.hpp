// staticformer/layers/position.hpp — fixed sinusoidal positions and RoPE.
// (Learned positions are a parameter table added in embedding.hpp.)
//
// Both tables come from the compile-time config: they are computed once, in the compiler
// (in double, then rounded to T), and stored in T as constants (.rodata). Nothing in forward
// or backward evaluates a sine, a cosine or anything in double.
#pragma once
#include <cstddef>
#include <type_traits>

#include "staticformer/config.hpp"
#include "staticformer/kernels/attributes.hpp"
#include "staticformer/math.hpp"
#include "staticformer/params.hpp"
#include "staticformer/simd.hpp"
#include "staticformer/tensor.hpp"

namespace sf::layers {

namespace detail {
inline constexpr double ln_10000 = 9.210340371976184;
static_assert(math::log(1e4) == ln_10000);  // (so RoPE's default base gives the same tables as this constant)
// θ = t · base^(-2i/n), ln_base = ln(base)
constexpr double position_angle(std::size_t t, std::size_t i, std::size_t n, double ln_base = ln_10000) {
  return static_cast<double>(t) * math::exp(-static_cast<double>(2 * i) / static_cast<double>(n) * ln_base);
}
}  // namespace detail

// PE[t, 2i] = sin(t / 10000^(2i/D)),  PE[t, 2i+1] = cos(t / 10000^(2i/D))
template <config C, class T = float>
struct sinusoidal {
  using table_t = tensor<T, Seq<C.T>, Model<C.D>>;  // (T, D)
  static constexpr table_t make_table() {
    table_t pe{};
    for (std::size_t t = 0; t < C.T; ++t)
      for (std::size_t i = 0; 2 * i < C.D; ++i) {
        const double angle = detail::position_angle(t, i, C.D);
        pe(t, 2 * i) = static_cast<T>(math::sin(angle));
        if (2 * i + 1 < C.D) pe(t, 2 * i + 1) = static_cast<T>(math::cos(angle));
      }
    return pe;
  }
  static constexpr table_t table = make_table();

  // x[i] += PE[t, i]      x: (D)
  static constexpr void add(T* x, std::size_t t) {
    const T* pe = table.row(t);
    for (std::size_t i = 0; i < C.D; ++i) x[i] += pe[i];
  }
};

// RoPE: rotate the pairs (a_i, b_i) of every head's q (or k) at position t by t·ω_i,
// ω_i = rope_base^(-2i/d_k) (rope_base: the config's, 10000 by default), t 0-based, i < d_k/2:
//   x'[a_i] = x[a_i] cos θ - x[b_i] sin θ
//   x'[b_i] = x[a_i] sin θ + x[b_i] cos θ
// with (a_i, b_i) = (2i, 2i+1) (rope_pairs adjacent: Meta, llama2.c) or (i, i + d_k/2) (halves:
// Hugging Face's rotate_half). Backward is the inverse rotation (Rᵀ = R(-θ)).
template <config C, class T = float>
struct rope {
  static constexpr std::size_t B = C.B, S = C.T, D = C.D, H = C.H, dk = C.D / C.H;
  static_assert(dk % 2 == 0, "sf::layers::rope: d_k = D / H must be even");
  using pairs = axis<tag::head_dim, dk / 2>;
  using table_t = tensor<T, Seq<C.T>, pairs>;  // (T, d_k/2)
  struct tables {
    table_t cos, sin;
  };
  static constexpr tables make_tables() {
    tables r{};
    for (std::size_t t = 0; t < S; ++t)
      for (std::size_t i = 0; i < dk / 2; ++i) {
        const double theta = detail::position_angle(t, i, dk, math::log(C.rope_base));
        r.cos(t, i) = static_cast<T>(math::cos(theta));
        r.sin(t, i) = static_cast<T>(math::sin(theta));
      }
    return r;
  }
  static constexpr tables table = make_tables();

  // rotate in place by +θ (forward) or -θ (backward)   x: (B,T,D) or (B,T,kv·d_k), heads side by side
  template <bool Inverse, class X>
  static constexpr void rotate(X& x) {
    constexpr std::size_t width = X::cols;
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t t = 0; t < S; ++t) rotate_row<Inverse, width / dk>(x.row(b, t), t);
  }
  // One position t of NH heads (H: a query row; kv: a key row): xr: (NH·d_k), in place. With a
  // vector backend whose width divides a head's run (below), the vector rotation; during constant
  // evaluation and otherwise, the reference loop. Both give the same bits (tested:
  // Model.RopeVectorRotationIsTheReference).
  template <bool Inverse = false, std::size_t NH = H>
  static constexpr void rotate_row(T* xr, std::size_t t) {
    if constexpr (!std::is_void_v<vec>)
      if (!std::is_constant_evaluated()) return rotate_row_simd<vec, Inverse, NH>(xr, t);
    rotate_row_ref<Inverse, NH>(xr, t);
  }
  // The reference: pair by pair. Never vectorised by the compiler (see SF_NO_AUTO_VECTORIZE): it
  // must round the same wherever it is called from.
  template <bool Inverse = false, std::size_t NH = H>
  SF_NO_AUTO_VECTORIZE static constexpr void rotate_row_ref(T* xr, std::size_t t) {
    const T* cs = table.cos.row(t);
    const T* sn = table.sin.row(t);
    constexpr std::size_t step = halves ? 1 : 2, other = halves ? dk / 2 : 1;  // a_i = step·i, b_i = a_i + other
    for (std::size_t h = 0; h < NH; ++h) {
      T* p = xr + h * dk;
      for (std::size_t i = 0; i < dk / 2; ++i) {
        const T c = cs[i], s = Inverse ? -sn[i] : sn[i];
        const T x0 = p[step * i], x1 = p[step * i + other];
        p[step * i] = x0 * c - x1 * s;
        p[step * i + other] = x0 * s + x1 * c;
      }
    }
  }

  // The vector rotation, V::width lanes at once; V::width divides `run`, a head's entries in one
  // pass: d_k/2 (halves: the a_i, then the b_i, each contiguous) or d_k (adjacent: the pairs side
  // by side). Each output is two products and an add or subtract, as in the reference (no fused
  // operation), so the bits are the reference's: with x = (…, a, b, …) and swap_pairs(x) =
  // (…, b, a, …), adjacent pairs are x·(c, c) + swap(x)·(−s, s) (pair_table), and
  // a·c + b·(−s) = a·c − b·s, b·c + a·s = a·s + b·c exactly; the inverse subtracts instead.
  static constexpr bool halves = C.rope_pairs == rope_pairs_kind::halves;
  static constexpr std::size_t run = halves ? dk / 2 : dk;
  template <class V>
  static constexpr bool fits = std::is_same_v<typename V::value_type, T> && (V::width > 1) && run % V::width == 0;
  // the backend: the native one if it fits, else AVX2's 8 lanes (in an AVX-512 build), else none
  using vec = std::conditional_t<fits<simd::native<T>>, simd::native<T>,
#if defined(SF_SIMD_HAVE_AVX2)
                                 std::conditional_t<fits<simd::avx2>, simd::avx2, void>
#else
                                 void
#endif
                                 >;
  // adjacent pairs' tables for the vector rotation: (c_0, c_0, c_1, c_1, …) and (−s_0, s_0, −s_1, s_1, …)
  struct pair_tables {
    tensor<T, Seq<C.T>, HeadDim<dk>> cos, sin;  // (T, d_k)
  };
  static constexpr pair_tables make_pair_tables() {
    pair_tables r{};
    for (std::size_t t = 0; t < S; ++t)
      for (std::size_t i = 0; i < dk / 2; ++i) {
        r.cos(t, 2 * i) = r.cos(t, 2 * i + 1) = table.cos(t, i);
        r.sin(t, 2 * i) = -table.sin(t, i);
        r.sin(t, 2 * i + 1) = table.sin(t, i);
      }
    return r;
  }
  static constexpr pair_tables pair_table = make_pair_tables();

  template <class V, bool Inverse = false, std::size_t NH = H>
  static void rotate_row_simd(T* xr, std::size_t t) {
    static_assert(fits<V>, "sf::layers::rope::rotate_row_simd: V::width must divide the head's run (internal)");
    constexpr std::size_t W = V::width;
    if constexpr (halves) {
      const T* cs = table.cos.row(t);
      const T* sn = table.sin.row(t);
      for (std::size_t h = 0; h < NH; ++h) {
        T* a = xr + h * dk;  // a_i = i
        T* b = a + dk / 2;   // b_i = i + d_k/2
        for (std::size_t i = 0; i < dk / 2; i += W) {
          const auto c = V::load(cs + i), s = V::load(sn + i), x0 = V::load(a + i), x1 = V::load(b + i);
          if constexpr (!Inverse) {
            V::store(a + i, V::sub(V::mul(x0, c), V::mul(x1, s)));  // a·c − b·s
            V::store(b + i, V::add(V::mul(x0, s), V::mul(x1, c)));  // a·s + b·c
          } else {
            V::store(a + i, V::add(V::mul(x0, c), V::mul(x1, s)));  // a·c − b·(−s)
            V::store(b + i, V::sub(V::mul(x1, c), V::mul(x0, s)));  // a·(−s) + b·c
          }
        }
      }
    } else {
      const T* cp = pair_table.cos.row(t);
      const T* sp = pair_table.sin.row(t);
      for (std::size_t h = 0; h < NH; ++h) {
        T* p = xr + h * dk;
        for (std::size_t i = 0; i < dk; i += W) {
          const auto x = V::load(p + i), c = V::load(cp + i), s = V::load(sp + i);
          const auto xc = V::mul(x, c), xs = V::mul(V::swap_pairs(x), s);
          V::store(p + i, Inverse ? V::sub(xc, xs) : V::add(xc, xs));
        }
      }
    }
  }
  template <class X> static constexpr void forward(X& x) { rotate<false>(x); }    // x: (B,T,·), in place
  template <class X> static constexpr void backward(X& dx) { rotate<true>(dx); }  // dx: (B,T,·), in place
};

}  // namespace sf::layers
