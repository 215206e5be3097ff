// staticformer/config.hpp — the one compile-time configuration of a model.
//
//   inline constexpr sf::config my_model{.V = 65, .T = 64, .D = 64, .H = 4, .L = 2, .F = 256, .B = 4};
//   static sf::params<my_model> p;         // the weights (the same type for any B)
//   static sf::activations<my_model> acts; // what backward needs; every layer reads its sizes from `my_model`
//   float loss = sf::forward(p, acts, tokens, targets);   // (model.hpp; docs/usage.md)
//
// A config is a structural value, so it is a template argument itself; layers take
// `template <sf::config C>` and name their axes through `sf::axes<C>`.
#pragma once
#include <cstddef>
#include <iterator>
#include <optional>
#include <string_view>

#include "staticformer/axis.hpp"
#include "staticformer/shape_error.hpp"

namespace sf {

enum class norm_kind { layernorm, rmsnorm };
enum class position_kind { learned, sinusoidal, rope };
enum class activation_kind { relu, gelu, gelu_tanh };
// The precision policy of the matrix products (the only thing it changes):
//   f32   float32 operands and sums: the exact path, the default.
//   bf16  the usual mixed-precision recipe: the products of the linear layers and the LM head
//         (forward, and both products of their backward) take their operands rounded to bf16
//         and sum in float32 (kernels/gemm_bf16.hpp); everything else — master weights,
//         gradients, optimizer state, norms, softmax, attention's per-head products, the
//         loss — stays float32, and so do checkpoints. Weights do not depend on it
//         (weights_config resets it), so a model trained in bf16 is an ordinary float model.
enum class precision_kind { f32, bf16 };

struct config {
  std::size_t V = 0;  // vocabulary size
  std::size_t T = 0;  // context length
  std::size_t D = 0;  // model width
  std::size_t H = 1;  // attention heads (d_k = D / H)
  std::size_t L = 1;  // decoder blocks
  std::size_t F = 0;  // feed-forward width
  std::size_t B = 1;  // batch size
  norm_kind norm = norm_kind::layernorm;
  position_kind position = position_kind::learned;
  activation_kind activation = activation_kind::gelu_tanh;
  bool tied = true;   // lm_head = tok_emb^T
  bool bias = true;   // biases in attention and feed-forward
  double norm_eps = 1e-5;
  precision_kind precision = precision_kind::f32;  // of the matrix products (above)

  constexpr std::size_t dk() const { return H == 0 ? 0 : D / H; }
  // The same model with its products in precision p: sf::configs::micro.with(sf::precision_kind::bf16)
  constexpr config with(precision_kind p) const {
    config c = *this;
    c.precision = p;
    return c;
  }
  friend constexpr bool operator==(const config&, const config&) = default;
};

// The names of an enumeration's values, in the order of the values (0, 1, ...): to_string
// and parse below are built on them, and checkpoints store them (docs/model.md's metadata);
// `type` is the enumeration's qualified name, for code that writes a config as C++.
template <class E> struct enum_names;
template <> struct enum_names<norm_kind> {
  static constexpr const char* type = "sf::norm_kind";  // (a generated C++ literal names it)
  static constexpr const char* value[] = {"layernorm", "rmsnorm"};
};
template <> struct enum_names<position_kind> {
  static constexpr const char* type = "sf::position_kind";  // (a generated C++ literal names it)
  static constexpr const char* value[] = {"learned", "sinusoidal", "rope"};
};
template <> struct enum_names<activation_kind> {
  static constexpr const char* type = "sf::activation_kind";  // (a generated C++ literal names it)
  static constexpr const char* value[] = {"relu", "gelu", "gelu_tanh"};
};
template <> struct enum_names<precision_kind> {
  static constexpr const char* type = "sf::precision_kind";  // (a generated C++ literal names it)
  static constexpr const char* value[] = {"f32", "bf16"};
};

namespace detail {
template <class E>
constexpr const char* enum_name(E k) {  // (a value outside the enumeration reads as the last name)
  constexpr std::size_t n = std::size(enum_names<E>::value);
  const auto i = static_cast<std::size_t>(k);
  return enum_names<E>::value[i < n ? i : n - 1];
}
}  // namespace detail

constexpr const char* to_string(norm_kind k) { return detail::enum_name(k); }
constexpr const char* to_string(position_kind k) { return detail::enum_name(k); }
constexpr const char* to_string(activation_kind k) { return detail::enum_name(k); }
constexpr const char* to_string(precision_kind k) { return detail::enum_name(k); }

// The inverse of to_string: sf::parse<sf::norm_kind>("rmsnorm") is norm_kind::rmsnorm, and a
// name that is not one of E's is nothing.
template <class E>
  requires requires { enum_names<E>::value; }
constexpr std::optional<E> parse(std::string_view name) {
  for (std::size_t i = 0; i < std::size(enum_names<E>::value); ++i)
    if (name == enum_names<E>::value[i]) return static_cast<E>(i);
  return std::nullopt;
}

namespace detail {
// The size checks take the sizes as template arguments, so that the compiler's
// "in instantiation of" line names them: check_heads_divide_width<D = 64, H = 5>.
template <std::size_t D, std::size_t H>
constexpr bool check_heads_divide_width() {
  if constexpr (D % H != 0) {
    SF_SHAPE_ERROR("sf::config: the head count H must divide the model width D exactly (d_k = D / H); "
                   "choose H among the divisors of D or change D",
                   shape_error::config<shape_error::D<D>, shape_error::H<H>>);
  }
  return D % H == 0;
}
template <std::size_t D, std::size_t H, std::size_t dk>
constexpr bool check_rope_head_dim_even() {
  if constexpr (dk % 2 != 0) {
    SF_SHAPE_ERROR("sf::config: RoPE rotates pairs of the features of a head, so d_k = D / H must be even; "
                   "change D or H, or use learned or sinusoidal positions",
                   shape_error::config<shape_error::D<D>, shape_error::H<H>, shape_error::dk<dk>>);
  }
  return dk % 2 == 0;
}
template <std::size_t D>
constexpr bool check_sinusoidal_width_even() {
  if constexpr (D % 2 != 0) {
    SF_SHAPE_ERROR("sf::config: sinusoidal positions pair (sin, cos) columns, so D must be even",
                   shape_error::config<shape_error::D<D>>);
  }
  return D % 2 == 0;
}
}  // namespace detail

// Compile-time validation of a configuration. Called from every public entry
// point that takes a config, so a bad config fails with one readable message.
template <config C>
constexpr bool check_config() {
  static_assert(C.V > 0 && C.T > 0 && C.D > 0 && C.H > 0 && C.L > 0 && C.F > 0 && C.B > 0,
                "sf::config: V, T, D, H, L, F and B must all be positive");
  if constexpr (C.H > 0) {
    detail::check_heads_divide_width<C.D, C.H>();
    if constexpr (C.position == position_kind::rope && C.D % C.H == 0)
      detail::check_rope_head_dim_even<C.D, C.H, C.D / C.H>();
  }
  if constexpr (C.position == position_kind::sinusoidal) detail::check_sinusoidal_width_even<C.D>();
  return true;
}

// The axes of a configuration. T and D are distinct types even when C.T == C.D.
template <config C>
struct axes {
  using batch = Batch<C.B>;
  using seq = Seq<C.T>;
  using model = Model<C.D>;
  using heads = Heads<C.H>;
  using head_dim = HeadDim<C.D / C.H>;
  using ffn = Ffn<C.F>;
  using vocab = Vocab<C.V>;
};

// The reference configurations of docs/model.md.
namespace configs {
inline constexpr config ref_gpt2{.V = 65, .T = 16, .D = 32, .H = 4, .L = 2, .F = 128, .B = 2,
                                 .norm = norm_kind::layernorm, .position = position_kind::learned,
                                 .activation = activation_kind::gelu_tanh, .tied = true, .bias = true};
inline constexpr config ref_llama{.V = 96, .T = 24, .D = 48, .H = 6, .L = 3, .F = 96, .B = 3,
                                  .norm = norm_kind::rmsnorm, .position = position_kind::rope,
                                  .activation = activation_kind::relu, .tied = false, .bias = false};
inline constexpr config ref_vaswani{.V = 50, .T = 12, .D = 40, .H = 5, .L = 1, .F = 160, .B = 1,
                                    .norm = norm_kind::layernorm, .position = position_kind::sinusoidal,
                                    .activation = activation_kind::gelu, .tied = false, .bias = true};
inline constexpr config nano{.V = 65, .T = 64, .D = 64, .H = 4, .L = 2, .F = 256, .B = 4,
                             .norm = norm_kind::layernorm, .position = position_kind::learned,
                             .activation = activation_kind::gelu_tanh, .tied = true, .bias = true};
// Benchmark shapes (GPT-2 style).
inline constexpr config micro{.V = 256, .T = 128, .D = 128, .H = 4, .L = 4, .F = 512, .B = 4};
inline constexpr config small{.V = 512, .T = 256, .D = 192, .H = 6, .L = 6, .F = 768, .B = 2};

// The named shapes, each once: what the tools call them. `reference`: one of docs/model.md's
// reference configurations, which staticformer-run (the golden tests' runner) has compiled in.
// `staticformer info` prints the name of a file's shape; the `staticformer` command finds the
// executables compiled in advance (CMake's STATICFORMER_PRECOMPILED_MODELS) by these names.
struct named {
  const char* name;
  config value;
  bool reference;
};
inline constexpr named known[] = {{"nano", nano, true},         {"ref-gpt2", ref_gpt2, true},
                                  {"ref-llama", ref_llama, true}, {"ref-vaswani", ref_vaswani, true},
                                  {"micro", micro, false},        {"small", small, false}};
}  // namespace configs

}  // namespace sf
