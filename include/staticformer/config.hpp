// staticformer/config.hpp — what a model is (sf::arch) and how it is run (sf::run_settings).
//
//   inline constexpr sf::arch my_model{.V = 65, .T = 64, .D = 64, .H = 4, .L = 2, .F = 256};
//   static sf::params<my_model> p;                        // the weights: the architecture alone
//   inline constexpr sf::config train{my_model, {.B = 4}}; // the architecture at run settings
//   static sf::activations<train> acts;                   // what backward needs, for 4 sequences
//   float loss = sf::forward(p, acts, tokens, targets);   // (model.hpp; docs/usage.md)
//   static sf::decoder<my_model> dec;                     // one stream (decode.hpp)
//
// sf::arch is what a checkpoint stores: weights, checkpoints, exports and decoders depend on it
// alone. sf::run_settings (batch size, precision of the products) is how a trainer or decoder
// runs it; threads are a run-time argument. sf::config is both: an architecture at run settings,
// which is what training's templates take. An sf::arch converts to the sf::config that runs it
// with the default settings (B = 1, float32), so `sf::decoder<my_model>` needs no settings, and
// sf::arch_of(c) is the architecture of a config. Both are structural values, so they are
// template arguments themselves; layers take `template <sf::config C>` and name their axes
// through `sf::axes<C>`.
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
enum class activation_kind { relu, gelu, gelu_tanh, silu };
// The precision policy of the matrix products (the only thing it changes):
//   f32   float32 operands and sums: the exact path, the default.
//   bf16  the usual mixed-precision recipe: the products of the linear layers and the LM head
//         (forward, and both products of their backward) take their operands rounded to bf16
//         and sum in float32 (kernels/gemm_bf16.hpp); everything else — master weights,
//         gradients, optimizer state, norms, softmax, attention's per-head products, the
//         loss — stays float32, and so do checkpoints. Weights do not depend on it
//         (weights_config resets it), so a model trained in bf16 is an ordinary float model.
enum class precision_kind { f32, bf16 };

// The feed-forward's kind (layers/ffn.hpp):
//   mlp    y = act(x W1 + b1) W2 + b2
//   gated  y = (act(x W1 + b1) ⊙ (x W3 + b3)) W2 + b2: with silu, LLaMA's SwiGLU (W1 the gate,
//          W3 the up projection, W2 the down one); with gelu, GeGLU
enum class ffn_kind { mlp, gated };

// Which dimensions of a head RoPE rotates together (layers/position.hpp):
//   adjacent  (2i, 2i+1): Meta's LLaMA and llama2.c
//   halves    (i, i + d_k/2): Hugging Face's Llama (rotate_half)
// The two are the same model up to a permutation of each head's rows of W_q and W_k.
enum class rope_pairs_kind { adjacent, halves };

// What a checkpoint stores: docs/model.md's architecture. Every field is a metadata key of a
// checkpoint (src/io/config_codec.cpp spells them; `kv_heads`, `ffn`, `rope_base` and
// `rope_pairs` are optional keys, written only when they are not the default, so files that predate them read
// as the default).
struct arch {
  std::size_t V = 0;         // vocabulary size
  std::size_t T = 0;         // context length
  std::size_t D = 0;         // model width
  std::size_t H = 1;         // attention heads (d_k = D / H)
  std::size_t kv_heads = 0;  // heads of the keys and values; 0: H of them (each query head its own)
  std::size_t L = 1;         // decoder blocks
  std::size_t F = 0;         // feed-forward width
  ffn_kind ffn = ffn_kind::mlp;
  norm_kind norm = norm_kind::layernorm;
  position_kind position = position_kind::learned;
  activation_kind activation = activation_kind::gelu_tanh;
  bool tied = true;          // lm_head = tok_emb^T
  bool bias = true;          // biases in attention and feed-forward
  double norm_eps = 1e-5;
  double rope_base = 1e4;    // RoPE's ω_i = rope_base^(-2i/d_k)
  rope_pairs_kind rope_pairs = rope_pairs_kind::adjacent;  // RoPE's pairs of dimensions

  constexpr std::size_t dk() const { return H == 0 ? 0 : D / H; }
  constexpr std::size_t kv() const { return kv_heads == 0 ? H : kv_heads; }  // heads of K and V
  friend constexpr bool operator==(const arch&, const arch&) = default;
};

// How a model is run: by a trainer (B sequences per step) or a decoder (B streams). Nothing
// here changes the weights or a checkpoint.
struct run_settings {
  std::size_t B = 1;  // batch size: sequences per training step, or a decoder's streams
  precision_kind precision = precision_kind::f32;  // of the matrix products (above)
  friend constexpr bool operator==(const run_settings&, const run_settings&) = default;
};

// An architecture at run settings: sf::config{sf::configs::nano, {.B = 8}}.
struct config : arch, run_settings {
  constexpr config() = default;
  // (implicit: an architecture is the config that runs it with the default settings)
  constexpr config(const arch& a, const run_settings& r = {}) : arch(a), run_settings(r) {}  // NOLINT

  // The same model with its products in precision p: sf::configs::micro.with(sf::precision_kind::bf16)
  constexpr config with(precision_kind p) const {
    config c = *this;
    c.precision = p;
    return c;
  }
  friend constexpr bool operator==(const config&, const config&) = default;
};

// The architecture of a config (of an arch: itself), as a value: sf::params<arch_of(C)>.
constexpr arch arch_of(const arch& a) { return a; }

// The names of an enumeration's values, in the order of the values (0, 1, ...): to_string
// and parse below are built on them, and checkpoints store them (docs/model.md's metadata);
// `type` is the enumeration's qualified name, for code that writes a config as C++.
template <class E> struct enum_names;
template <> struct enum_names<ffn_kind> {
  static constexpr const char* type = "sf::ffn_kind";  // (a generated C++ literal names it)
  static constexpr const char* value[] = {"mlp", "gated"};
};
template <> struct enum_names<rope_pairs_kind> {
  static constexpr const char* type = "sf::rope_pairs_kind";  // (a generated C++ literal names it)
  static constexpr const char* value[] = {"adjacent", "halves"};
};
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
  static constexpr const char* value[] = {"relu", "gelu", "gelu_tanh", "silu"};
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

constexpr const char* to_string(ffn_kind k) { return detail::enum_name(k); }
constexpr const char* to_string(norm_kind k) { return detail::enum_name(k); }
constexpr const char* to_string(position_kind k) { return detail::enum_name(k); }
constexpr const char* to_string(activation_kind k) { return detail::enum_name(k); }
constexpr const char* to_string(precision_kind k) { return detail::enum_name(k); }
constexpr const char* to_string(rope_pairs_kind k) { return detail::enum_name(k); }

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
template <std::size_t H, std::size_t KV>
constexpr bool check_kv_heads_divide_heads() {
  if constexpr (H % KV != 0 || KV > H) {
    SF_SHAPE_ERROR("sf::config: the key/value heads kv_heads must divide the heads H (each group of H / kv_heads "
                   "query heads shares one key/value head); choose kv_heads among the divisors of H (H: "
                   "multi-head, 1: multi-query) or 0 for H",
                   shape_error::config<shape_error::H<H>, shape_error::kv_heads<KV>>);
  }
  return H % KV == 0;
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
  if constexpr (C.H > 0 && C.kv() > 0) detail::check_kv_heads_divide_heads<C.H, C.kv()>();
  static_assert(C.rope_base > 0.0 && C.norm_eps > 0.0, "sf::config: rope_base and norm_eps must be positive");
  return true;
}

// The axes of a configuration. T and D are distinct types even when C.T == C.D.
template <config C>
struct axes {
  using batch = Batch<C.B>;
  using seq = Seq<C.T>;
  using model = Model<C.D>;
  using kv_model = Model<C.kv() * (C.D / C.H)>;  // the keys' and values' width, kv·d_k (= D without GQA)
  using heads = Heads<C.H>;
  using head_dim = HeadDim<C.D / C.H>;
  using ffn = Ffn<C.F>;
  using vocab = Vocab<C.V>;
};

// The reference configurations of docs/model.md: each an architecture at the batch size its
// golden test trains it with (sf::arch_of(ref_gpt2) is the architecture alone).
namespace configs {
inline constexpr config ref_gpt2{{.V = 65, .T = 16, .D = 32, .H = 4, .L = 2, .F = 128, .norm = norm_kind::layernorm,
                                  .position = position_kind::learned, .activation = activation_kind::gelu_tanh,
                                  .tied = true, .bias = true},
                                 {.B = 2}};
inline constexpr config ref_llama{{.V = 96, .T = 24, .D = 48, .H = 6, .L = 3, .F = 96, .norm = norm_kind::rmsnorm,
                                   .position = position_kind::rope, .activation = activation_kind::relu,
                                   .tied = false, .bias = false},
                                  {.B = 3}};
inline constexpr config ref_vaswani{{.V = 50, .T = 12, .D = 40, .H = 5, .L = 1, .F = 160, .norm = norm_kind::layernorm,
                                     .position = position_kind::sinusoidal, .activation = activation_kind::gelu,
                                     .tied = false, .bias = true},
                                    {.B = 1}};
inline constexpr config nano{{.V = 65, .T = 64, .D = 64, .H = 4, .L = 2, .F = 256, .norm = norm_kind::layernorm,
                              .position = position_kind::learned, .activation = activation_kind::gelu_tanh,
                              .tied = true, .bias = true},
                             {.B = 4}};
// LLaMA-2's block (llama2.c's model.py): grouped-query attention (2 key/value heads for 6 query
// heads) and SwiGLU with a hidden width that is no power of two.
inline constexpr config ref_llama2{{.V = 90, .T = 20, .D = 48, .H = 6, .kv_heads = 2, .L = 2, .F = 100, .ffn = ffn_kind::gated,
                                    .norm = norm_kind::rmsnorm, .position = position_kind::rope,
                                    .activation = activation_kind::silu, .tied = false, .bias = false},
                                   {.B = 2}};
// Benchmark shapes (GPT-2 style).
inline constexpr config micro{{.V = 256, .T = 128, .D = 128, .H = 4, .L = 4, .F = 512}, {.B = 4}};
inline constexpr config small{{.V = 512, .T = 256, .D = 192, .H = 6, .L = 6, .F = 768}, {.B = 2}};

// The named shapes, each once: what the tools call them (by their architecture: the batch size
// is the one the tests and benchmarks train them with). `reference`: one of docs/model.md's
// reference configurations, which staticformer-run (the golden tests' runner) has compiled in.
// `staticformer info` prints the name of a file's shape; the `staticformer` command finds the
// executables compiled in advance (CMake's STATICFORMER_PRECOMPILED_MODELS) by these names.
// The reference entries come first (tools/runner/model.cpp instantiates them by index and checks it).
struct named {
  const char* name;
  config value;
  bool reference;
};
inline constexpr named known[] = {{"nano", nano, true},         {"ref-gpt2", ref_gpt2, true},
                                  {"ref-llama", ref_llama, true}, {"ref-vaswani", ref_vaswani, true},
                                  {"ref-llama2", ref_llama2, true}, {"micro", micro, false},
                                  {"small", small, false}};
}  // namespace configs

}  // namespace sf
