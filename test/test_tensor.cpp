// Tensors, axes, matmul's typed front-end and reflection over the parameter structs.
// Much of it is checked at compile time (static_assert); the rest at run time.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "staticformer/config.hpp"
#include "staticformer/matmul.hpp"
#include "staticformer/params.hpp"
#include "staticformer/reflect.hpp"
#include "staticformer/tensor.hpp"

// ---------------------------------------------------------------- axes: a size and an identity
static_assert(!std::is_same_v<sf::Seq<64>, sf::Model<64>>);
static_assert(!std::is_same_v<sf::Seq<64>, sf::Seq<32>>);
static_assert(std::is_same_v<sf::Seq<64>, sf::axis<sf::tag::seq, 64>>);
static_assert(sf::Seq<64>::size == sf::Model<64>::size);
static_assert(std::is_same_v<sf::axes<sf::configs::nano>::seq, sf::Seq<64>>);
static_assert(std::is_same_v<sf::axes<sf::configs::nano>::model, sf::Model<64>>);
static_assert(!std::is_same_v<sf::axes<sf::configs::nano>::seq, sf::axes<sf::configs::nano>::model>);  // T = D = 64
static_assert(sf::axes<sf::configs::ref_llama>::head_dim::size == 8);
static_assert(sf::is_axis_v<sf::Ffn<3>> && !sf::is_axis_v<int>);
static_assert(!std::is_same_v<sf::tensor<float, sf::Seq<8>, sf::Model<8>>, sf::tensor<float, sf::Model<8>, sf::Seq<8>>>);
static_assert(!sf::same_shape_v<sf::tensor<float, sf::Seq<8>, sf::Model<8>>, sf::tensor<float, sf::Model<8>, sf::Seq<8>>>);
static_assert(sf::same_shape_v<sf::tensor<float, sf::Seq<8>, sf::Model<8>>, sf::tensor<int, sf::Seq<8>, sf::Model<8>>>);
static_assert(sf::shape<sf::Batch<2>, sf::Seq<3>, sf::Model<5>>::rank == 3);
static_assert(sf::shape<sf::Batch<2>, sf::Seq<3>, sf::Model<5>>::size == 30);
static_assert(std::string_view(sf::tag_name<sf::tag::head_dim>()) == "dk");

// ---------------------------------------------------------------- tensor layout, all compile-time constants
using t235 = sf::tensor<float, sf::Batch<2>, sf::Seq<3>, sf::Model<5>>;
static_assert(t235::rank == 3 && t235::size == 30 && t235::rows == 6 && t235::cols == 5);
static_assert(t235::extents[0] == 2 && t235::extents[1] == 3 && t235::extents[2] == 5);
static_assert(std::is_same_v<t235::first_axis, sf::Batch<2>> && std::is_same_v<t235::last_axis, sf::Model<5>>);
static_assert(std::is_same_v<t235::axis_t<1>, sf::Seq<3>>);
static_assert(t235::offset(1, 2, 4) == 29 && t235::offset(0, 1, 0) == 5 && t235::offset(1, 0, 0) == 15);

static_assert(sf::tensor_alignment == 64);
static_assert(alignof(sf::tensor<float, sf::Model<1>>) == sf::tensor_alignment);
static_assert(alignof(sf::tensor<std::uint8_t, sf::Seq<3>>) == sf::tensor_alignment);
static_assert(sizeof(sf::tensor<float, sf::Seq<4>, sf::Model<16>>) == 4 * 16 * sizeof(float));  // a multiple of 64
static_assert(sizeof(sf::tensor<float, sf::Model<3>>) == 64);  // 12 bytes, padded to the alignment
static_assert(sizeof(t235) == 128);                             // 120 bytes, padded
static_assert(sizeof(sf::types<sf::configs::nano>::btd) == 4 * 64 * 64 * sizeof(float));
static_assert(std::is_trivially_copyable_v<t235> && std::is_standard_layout_v<t235>);
static_assert(std::is_aggregate_v<t235>);

// ---------------------------------------------------------------- constexpr construction, indexing, arithmetic
using m23 = sf::tensor<int, sf::Seq<2>, sf::Model<3>>;
constexpr m23 a = sf::make_tensor<m23>(1, 2, 3, 4, 5, 6);
constexpr m23 b = sf::make_tensor<m23>(10, 20, 30, 40, 50, 60);
static_assert(a(0, 0) == 1 && a(0, 2) == 3 && a(1, 0) == 4 && a(1, 2) == 6);
static_assert(a[4] == 5 && *a.row(1) == 4 && a.row(1)[2] == 6);
static_assert(m23{}(1, 1) == 0);  // value-initialised: zeros
static_assert(a + b == sf::make_tensor<m23>(11, 22, 33, 44, 55, 66));
static_assert(b - a == sf::make_tensor<m23>(9, 18, 27, 36, 45, 54));
static_assert(a * 2 == sf::make_tensor<m23>(2, 4, 6, 8, 10, 12) && 3 * a == a + a + a);
static_assert(!(a == b));
static_assert([] {
  m23 t{};
  t(1, 2) = 7;
  t += a;
  t -= sf::make_tensor<m23>(1, 1, 1, 1, 1, 1);
  t *= 10;
  return t == sf::make_tensor<m23>(0, 10, 20, 30, 40, 120);
}());
static_assert([] {
  m23 t{};
  t.fill(3);
  int s = 0;
  for (int v : t) s += v;
  t.zero();
  return s == 18 && t == m23{};
}());
static_assert([] {  // element-wise ops keep the left operand's element type
  const auto f = sf::make_tensor<sf::tensor<float, sf::Model<2>>>(0.5f, 1.5f);
  const auto i = sf::make_tensor<sf::tensor<int, sf::Model<2>>>(1, 2);
  const auto r = f + i;
  return std::is_same_v<decltype(r), const sf::tensor<float, sf::Model<2>>> && r[0] == 1.5f && r[1] == 3.5f;
}());

// ---------------------------------------------------------------- matmul in a constant expression
static_assert([] {
  const auto x = sf::make_tensor<sf::tensor<float, sf::Seq<2>, sf::Model<3>>>(1, 2, 3, 4, 5, 6);
  const auto w = sf::make_tensor<sf::tensor<float, sf::Model<3>, sf::Ffn<2>>>(1, 0, 0, 1, 1, 1);
  const auto bias = sf::make_tensor<sf::tensor<float, sf::Ffn<2>>>(0.5f, -1);
  sf::tensor<float, sf::Seq<2>, sf::Ffn<2>> y{}, yb{};
  sf::matmul(y, x, w);
  sf::matmul(yb, x, w, bias);
  return y == sf::make_tensor<decltype(y)>(4, 5, 10, 11) && yb == sf::make_tensor<decltype(y)>(4.5f, 4, 10.5f, 10);
}());

TEST(Tensor, RuntimeIndexingMatchesRowMajorLayout) {
  t235 t{};
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t k = 0; k < 5; ++k) t(i, j, k) = static_cast<float>(100 * i + 10 * j + k);
  for (std::size_t f = 0; f < t.size; ++f)
    EXPECT_EQ(t[f], static_cast<float>(100 * (f / 15) + 10 * (f / 5 % 3) + f % 5)) << f;
  EXPECT_EQ(t.row(1, 2), t.data() + 25);
  EXPECT_EQ(t.end() - t.begin(), 30);
}

TEST(Tensor, StorageIsAligned) {
  static t235 s;
  auto h = std::make_unique<sf::types<sf::configs::ref_gpt2>::btd>();  // over-aligned new
  t235 local{};
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(s.data()) % sf::tensor_alignment, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(h->data()) % sf::tensor_alignment, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(local.data()) % sf::tensor_alignment, 0u);
}

// ---------------------------------------------------------------- matmul's typed front-end against a plain reference
namespace {
std::mt19937 rng(1234);

template <class X>
void randomise(X& t) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (auto& v : t) v = d(rng);
}

// y[m, n] = sum_k x[m, k] w[k, n] (+ b[n]) in double, and the matching error bound for float
template <std::size_t M, std::size_t K, std::size_t N>
void reference(const float* x, const float* w, const float* b, std::vector<double>& y, std::vector<double>& bound) {
  y.assign(M * N, 0.0);
  bound.assign(M * N, 0.0);
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) {
      double s = b ? b[n] : 0.0, mag = b ? std::fabs(b[n]) : 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        s += static_cast<double>(x[m * K + k]) * w[k * N + n];
        mag += std::fabs(static_cast<double>(x[m * K + k]) * w[k * N + n]);
      }
      y[m * N + n] = s;
      bound[m * N + n] = 1e-6 + 2.0 * static_cast<double>(K + 1) * 6e-8 * mag;  // K+1 roundings of float
    }
}

template <class Y, class X, class W, bool WithBias>
void check_forward() {
  static X x;
  static W w;
  static Y y;
  static sf::tensor<float, typename W::template axis_t<1>> bias;
  randomise(x);
  randomise(w);
  randomise(bias);
  y.fill(12345.0f);  // must be overwritten, not accumulated into
  if constexpr (WithBias) sf::matmul(y, x, w, bias);
  else sf::matmul(y, x, w);
  std::vector<double> ref, bound;
  reference<X::rows, X::cols, W::cols>(x.data(), w.data(), WithBias ? bias.data() : nullptr, ref, bound);
  for (std::size_t i = 0; i < Y::size; ++i) ASSERT_NEAR(y[i], ref[i], bound[i]) << "element " << i;
}

template <class X, class W>
void check_backward() {
  using Y = sf::tensor<float, typename X::first_axis, typename W::template axis_t<1>>;
  static_assert(X::rank == 2);
  static X x, dx;
  static W w, dw;
  static Y dy;
  static sf::tensor<float, typename W::template axis_t<1>> db;
  randomise(x);
  randomise(w);
  randomise(dy);
  constexpr std::size_t M = X::rows, K = X::cols, N = W::cols;

  dx.fill(12345.0f);  // written
  sf::matmul_backward_input(dx, dy, w);
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t k = 0; k < K; ++k) {
      double s = 0, mag = 0;
      for (std::size_t n = 0; n < N; ++n) {
        s += static_cast<double>(dy[m * N + n]) * w[k * N + n];
        mag += std::fabs(static_cast<double>(dy[m * N + n]) * w[k * N + n]);
      }
      ASSERT_NEAR(dx[m * K + k], s, 1e-6 + 2.0 * (N + 1) * 6e-8 * mag) << m << "," << k;
    }

  dw.fill(0.25f);  // accumulated
  sf::matmul_backward_weight(dw, x, dy);
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t n = 0; n < N; ++n) {
      double s = 0.25, mag = 0.25;
      for (std::size_t m = 0; m < M; ++m) {
        s += static_cast<double>(x[m * K + k]) * dy[m * N + n];
        mag += std::fabs(static_cast<double>(x[m * K + k]) * dy[m * N + n]);
      }
      ASSERT_NEAR(dw[k * N + n], s, 1e-6 + 2.0 * (M + 1) * 6e-8 * mag) << k << "," << n;
    }

  db.fill(-0.5f);  // accumulated
  sf::matmul_backward_bias(db, dy);
  for (std::size_t n = 0; n < N; ++n) {
    double s = -0.5, mag = 0.5;
    for (std::size_t m = 0; m < M; ++m) {
      s += dy[m * N + n];
      mag += std::fabs(dy[m * N + n]);
    }
    ASSERT_NEAR(db[n], s, 1e-6 + 2.0 * (M + 1) * 6e-8 * mag) << n;
  }
}
}  // namespace

TEST(Matmul, ForwardAgreesWithReference) {
  // odd sizes (remainder paths), a vector-width multiple, and leading axes flattened into rows
  check_forward<sf::tensor<float, sf::Seq<3>, sf::Ffn<7>>, sf::tensor<float, sf::Seq<3>, sf::Model<5>>,
                sf::tensor<float, sf::Model<5>, sf::Ffn<7>>, false>();
  check_forward<sf::tensor<float, sf::Seq<16>, sf::Ffn<32>>, sf::tensor<float, sf::Seq<16>, sf::Model<64>>,
                sf::tensor<float, sf::Model<64>, sf::Ffn<32>>, false>();
  check_forward<sf::tensor<float, sf::Batch<2>, sf::Seq<13>, sf::Ffn<33>>,
                sf::tensor<float, sf::Batch<2>, sf::Seq<13>, sf::Model<17>>,
                sf::tensor<float, sf::Model<17>, sf::Ffn<33>>, false>();
  check_forward<sf::tensor<float, sf::Seq<1>, sf::Model<1>>, sf::tensor<float, sf::Seq<1>, sf::Model<1>>,
                sf::tensor<float, sf::Model<1>, sf::Model<1>>, false>();
}

TEST(Matmul, ForwardWithBiasAgreesWithReference) {
  check_forward<sf::tensor<float, sf::Seq<3>, sf::Ffn<7>>, sf::tensor<float, sf::Seq<3>, sf::Model<5>>,
                sf::tensor<float, sf::Model<5>, sf::Ffn<7>>, true>();
  using g = sf::types<sf::configs::ref_gpt2>;  // (B=2, T=16, D=32) · (D, F=128) + b1
  check_forward<g::btf, g::btd, g::mat_df, true>();
  using v = sf::types<sf::configs::ref_vaswani>;  // (B=1, T=12, D=40) · (D=40, D=40) + b
  check_forward<v::btd, v::btd, v::mat_dd, true>();
}

TEST(Matmul, BackwardAgreesWithReference) {
  check_backward<sf::tensor<float, sf::Seq<3>, sf::Model<5>>, sf::tensor<float, sf::Model<5>, sf::Ffn<7>>>();
  check_backward<sf::tensor<float, sf::Seq<24>, sf::Model<48>>, sf::tensor<float, sf::Model<48>, sf::Ffn<96>>>();
  check_backward<sf::tensor<float, sf::Seq<17>, sf::Ffn<33>>, sf::tensor<float, sf::Ffn<33>, sf::Model<9>>>();
}

// ---------------------------------------------------------------- reflection: checkpoint names of docs/model.md
namespace {
struct named_shape {
  std::string name;
  std::vector<std::size_t> shape;
  friend bool operator==(const named_shape&, const named_shape&) = default;
  friend std::ostream& operator<<(std::ostream& o, const named_shape& n) {
    o << n.name << " [";
    for (std::size_t i = 0; i < n.shape.size(); ++i) o << (i ? ", " : "") << n.shape[i];
    return o << "]";
  }
};

template <class P>
std::vector<named_shape> visited(P& p) {
  std::vector<named_shape> out;
  sf::visit([&](const sf::param_name& n, auto& t) {
    using X = std::remove_cvref_t<decltype(t)>;
    out.push_back({n.c_str(), std::vector<std::size_t>(X::extents, X::extents + X::rank)});
  }, p);
  return out;
}

// docs/model.md's table, written out by hand for one block `l`.
void block_names(std::vector<named_shape>& v, int l, std::size_t D, std::size_t F, bool layernorm, bool bias) {
  const std::string p = "blocks." + std::to_string(l) + ".";
  v.push_back({p + "norm1.weight", {D}});
  if (layernorm) v.push_back({p + "norm1.bias", {D}});
  for (const char* w : {"wq", "wk", "wv", "wo"}) v.push_back({p + "attn." + w, {D, D}});
  if (bias)
    for (const char* b : {"bq", "bk", "bv", "bo"}) v.push_back({p + "attn." + b, {D}});
  v.push_back({p + "norm2.weight", {D}});
  if (layernorm) v.push_back({p + "norm2.bias", {D}});
  v.push_back({p + "ffn.w1", {D, F}});
  if (bias) v.push_back({p + "ffn.b1", {F}});
  v.push_back({p + "ffn.w2", {F, D}});
  if (bias) v.push_back({p + "ffn.b2", {D}});
}
}  // namespace

TEST(Reflect, RefGpt2CheckpointNamesAreSpecs) {
  // V 65, T 16, D 32, L 2, F 128; layernorm, learned positions, tied, bias
  std::vector<named_shape> spec = {{"tok_emb.weight", {65, 32}}, {"pos_emb.weight", {16, 32}}};
  for (int l = 0; l < 2; ++l) block_names(spec, l, 32, 128, true, true);
  spec.push_back({"norm_f.weight", {32}});
  spec.push_back({"norm_f.bias", {32}});  // no lm_head.weight: tied
  // Spot-check the hand-written list itself (so that a bug in block_names cannot hide one in the library).
  ASSERT_EQ(spec.size(), 36u);
  EXPECT_EQ(spec[2].name, "blocks.0.norm1.weight");
  EXPECT_EQ(spec[8].name, "blocks.0.attn.bq");
  EXPECT_EQ(spec[17].name, "blocks.0.ffn.b2");
  EXPECT_EQ(spec[18].name, "blocks.1.norm1.weight");

  static sf::params<sf::configs::ref_gpt2> p;
  EXPECT_EQ(visited(p), spec);
}

TEST(Reflect, RefLlamaCheckpointNamesAreSpecs) {
  // V 96, T 24, D 48, L 3, F 96; rmsnorm (no norm biases), RoPE (no pos_emb), untied, no bias
  std::vector<named_shape> spec = {{"tok_emb.weight", {96, 48}}};
  for (int l = 0; l < 3; ++l) block_names(spec, l, 48, 96, false, false);
  spec.push_back({"norm_f.weight", {48}});
  spec.push_back({"lm_head.weight", {48, 96}});
  ASSERT_EQ(spec.size(), 27u);
  EXPECT_EQ(spec[1].name, "blocks.0.norm1.weight");
  EXPECT_EQ(spec[6].name, "blocks.0.norm2.weight");
  EXPECT_EQ(spec[8].name, "blocks.0.ffn.w2");

  static sf::params<sf::configs::ref_llama> p;
  EXPECT_EQ(visited(p), spec);
}

TEST(Reflect, RefVaswaniHasNoPositionParameters) {
  static sf::params<sf::configs::ref_vaswani> p;  // sinusoidal: fixed, not a parameter; untied
  const auto v = visited(p);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front(), (named_shape{"tok_emb.weight", {50, 40}}));
  EXPECT_EQ(v[1].name, "blocks.0.norm1.weight");
  EXPECT_EQ(v.back(), (named_shape{"lm_head.weight", {40, 50}}));
  for (const auto& n : v) EXPECT_EQ(n.name.find("pos_emb"), std::string::npos);
}

// Counts by hand from docs/model.md's shapes:
//  ref_gpt2:  tok 65·32 = 2080, pos 16·32 = 512, per block: norms 2·(32+32) = 128, attention 4·32·32 + 4·32
//             = 4224, ffn 32·128 + 128 + 128·32 + 32 = 8352 → 12704, two blocks 25408, norm_f 64 → 28064.
//  ref_llama: tok 96·48 = 4608, per block: norms 2·48 = 96, attention 4·48·48 = 9216, ffn 2·48·96 = 9216
//             → 18528, three blocks 55584, norm_f 48, lm_head 48·96 = 4608 → 64848.
static_assert(sf::parameter_count<sf::params<sf::configs::ref_gpt2>> == 28064);
static_assert(sf::tensor_count<sf::params<sf::configs::ref_gpt2>> == 36);
static_assert(sf::parameter_count<sf::params<sf::configs::ref_llama>> == 64848);
static_assert(sf::tensor_count<sf::params<sf::configs::ref_llama>> == 27);
// The batch size is not part of the weights.
static_assert(std::is_same_v<sf::params<sf::configs::ref_gpt2>,
                             sf::params<sf::config{{.V = 65, .T = 16, .D = 32, .H = 4, .L = 2, .F = 128, .activation = sf::activation_kind::gelu_tanh}, {.B = 7}}>>);

TEST(Reflect, ParameterCountAgreesWithAVisit) {
  static sf::params<sf::configs::ref_gpt2> p;
  std::size_t scalars = 0, tensors = 0;
  sf::visit([&](const sf::param_name&, const auto& t) {
    scalars += t.size;
    ++tensors;
  }, p);
  EXPECT_EQ(scalars, 28064u);
  EXPECT_EQ(tensors, 36u);
}

namespace {
inline constexpr sf::config tiny{{.V = 5, .T = 2, .D = 4, .H = 2, .L = 2, .F = 6}, {.B = 1}};
}

// visit, zero and lock-step visiting in a constant expression
static_assert([] {
  sf::params<tiny> p{}, g{};
  sf::visit([](const sf::param_name&, auto& t) { t.fill(2.0f); }, p);
  sf::visit([](const sf::param_name&, auto& t, const auto& s) { t += s; t += s; }, g, p);  // g = 2p
  float sum_g = 0;
  sf::visit([&](const sf::param_name&, const auto& t) { for (float v : t) sum_g += v; }, g);
  sf::zero(p);
  float sum_p = 0;
  sf::visit([&](const sf::param_name&, const auto& t) { for (float v : t) sum_p += v; }, p);
  return sum_g == 4.0f * sf::parameter_count<sf::params<tiny>> && sum_p == 0.0f;
}());
static_assert([] {  // names are available at compile time too
  sf::params<tiny> p{};
  int hits = 0, seen = 0;
  sf::visit([&](const sf::param_name& n, const auto&) {
    ++seen;
    if (n == "blocks.1.ffn.b2" || n == "pos_emb.weight" || n == "tok_emb.weight") ++hits;
  }, p);
  return hits == 3 && seen == sf::tensor_count<sf::params<tiny>>;
}());

TEST(Reflect, ZeroClearsEveryTensor) {
  static sf::params<sf::configs::ref_llama> p;
  sf::visit([](const sf::param_name&, auto& t) { t.fill(1.5f); }, p);
  sf::zero(p);
  std::size_t nonzero = 0, seen = 0;
  sf::visit([&](const sf::param_name&, const auto& t) {
    for (float v : t) {
      if (v != 0.0f) ++nonzero;
      ++seen;
    }
  }, p);
  EXPECT_EQ(seen, sf::parameter_count<sf::params<sf::configs::ref_llama>>);
  EXPECT_EQ(nonzero, 0u);
}

TEST(Reflect, ParamNameBuildsDottedNames) {
  const sf::param_name n = sf::param_name{}.child("blocks").child(std::size_t{12}).child("attn").child("wq");
  EXPECT_STREQ(n.c_str(), "blocks.12.attn.wq");
  EXPECT_EQ(n.size(), 17u);
  EXPECT_TRUE(n == "blocks.12.attn.wq");
  EXPECT_FALSE(n == "blocks.12.attn.w");
  EXPECT_FALSE(n == "blocks.12.attn.wqx");
}
