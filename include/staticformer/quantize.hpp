// staticformer/quantize.hpp — int8 weights: sf::params<C, sf::int8>, quantized from float.
//
//   static sf::params<C> p;                  // float weights (trained, or loaded)
//   static sf::params<C, sf::int8> q;        // the same struct, every matrix int8 (Q8_0)
//   sf::quantize(q, p);
//   static sf::decoder<C, sf::int8> dec;  dec.use(q);   // decode.hpp: the int8 decoder
//
// The parameter structs of params.hpp are declared once; with the element type sf::int8 their
// matrices become sf::q8_weight (kernels/q8.hpp: groups of 32 along the input axis, one float
// scale per group, int8 values) and their vectors (norm weights, biases) stay float. The names
// are the float checkpoint's, so visiting, counting, printing and the int8 checkpoint
// (io/quantized.hpp) come from the same declaration.
//
// Every matrix, as a matrix of y = x·W with K inputs and N outputs:
//   attn.wq … wo (D, D), ffn.w1 (D, F), ffn.w2 (F, D), lm_head (D, V):  K = the first axis
//   tok_emb (V, D), pos_emb (T, D) (tables):  K = D, N = rows — row r of the table is output
//   column r, so a tied embedding is the head matrix itself (logits = h·Eᵀ) and a lookup
//   dequantizes one column.
// All groups therefore run along D or along the product's input axis.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "staticformer/kernels/q8.hpp"
#include "staticformer/params.hpp"
#include "staticformer/reflect.hpp"

namespace sf {

// The element type that selects int8 (Q8_0) weights: sf::params<C, sf::int8>.
struct int8 {};

// One quantized weight: the float tensor F's values as a q8 matrix<K, N>.
template <class F>
struct q8_weight {
  using float_tensor = F;
  using first = typename F::template axis_t<0>;
  using last = typename F::last_axis;
  // a table (rows × D): vocabulary or positions along the first axis
  static constexpr bool table = std::is_same_v<typename first::tag, tag::vocab> || std::is_same_v<typename first::tag, tag::seq>;
  static constexpr std::size_t K = table ? last::size : first::size;  // inputs (grouped by 32)
  static constexpr std::size_t N = table ? first::size : last::size;  // outputs
  using matrix_t = kernels::q8::matrix<K, N>;

  static constexpr bool sf_leaf = true;             // visited by sf::visit like a tensor
  static constexpr std::size_t size = K * N;        // weights
  static constexpr std::size_t groups = matrix_t::groups;

  matrix_t m;

  // w = Q8_0(x)                          x: the float tensor (K, N) [in, out], or (N, K) for a table
  void quantize(const F& x) {
    if constexpr (table) kernels::q8::quantize_transposed(m, x.data());
    else kernels::q8::quantize(m, x.data());
  }
  // x = the dequantized values, in the float tensor's layout
  void dequantize(F& x) const {
    if constexpr (table) {
      for (std::size_t n = 0; n < N; ++n) column(x.data() + n * K, n);
    } else {
      kernels::q8::dequantize(x.data(), m);
    }
  }
  // out[k] = w[k, n]  (K): output column n — a table's row n (an embedding lookup)
  constexpr void column(float* out, std::size_t n) const { kernels::q8::dequantize_column(out, m, n); }
};

// params.hpp's structs with T = sf::int8: matrices quantized, vectors float.
template <config C>
struct types<C, int8> {
  using ax = axes<C>;
  using vec_d = tensor<float, typename ax::model>;
  using vec_f = tensor<float, typename ax::ffn>;
  using mat_dd = q8_weight<typename types<C, float>::mat_dd>;
  using mat_dkv = q8_weight<typename types<C, float>::mat_dkv>;
  using vec_kv = tensor<float, typename ax::kv_model>;
  using mat_df = q8_weight<typename types<C, float>::mat_df>;
  using mat_fd = q8_weight<typename types<C, float>::mat_fd>;
  using mat_vd = q8_weight<typename types<C, float>::mat_vd>;
  using mat_td = q8_weight<typename types<C, float>::mat_td>;
  using mat_dv = q8_weight<typename types<C, float>::mat_dv>;
};

namespace detail {
template <class X> struct is_q8_weight : std::false_type {};
template <class F> struct is_q8_weight<q8_weight<F>> : std::true_type {};
}  // namespace detail

// q = Q8_0(p): every matrix quantized (groups of 32 along its input axis), vectors copied.
template <arch A>
void quantize(model_params<A, int8>& q, const model_params<A, float>& p) {
  visit_alike(
      [](const param_name&, auto& qi, const auto& pi) {
        if constexpr (detail::is_q8_weight<std::remove_cvref_t<decltype(qi)>>::value) qi.quantize(pi);
        else qi = pi;
      },
      q, p);
}

// p = the float weights q stands for (every int8 value times its scale), e.g. to evaluate the
// quantization error of the weights alone.
template <arch A>
void dequantize(model_params<A, float>& p, const model_params<A, int8>& q) {
  visit_alike(
      [](const param_name&, auto& pi, const auto& qi) {
        if constexpr (detail::is_q8_weight<std::remove_cvref_t<decltype(qi)>>::value) qi.dequantize(pi);
        else pi = qi;
      },
      p, q);
}

}  // namespace sf
