// llama2.c's model files (staticformer/io/llama2c.hpp) against files written by llama2.c's own
// export.py (test/data/llama2c/README.md): every version reads to the tensors the script printed
// (its JSON: sums and elements in staticformer's [in, out] layout), the versions agree with each
// other, writing gives export.py's bytes back, the checkpoint conversion round-trips, and every
// kind of bad file is refused with its message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "file_bytes.hpp"
#include "groups_alone.hpp"
#include "staticformer/io/llama2c.hpp"
#include "staticformer/io/safetensors.hpp"
#include "staticformer/quantize.hpp"

namespace {

namespace io = sf::io;
const std::string data_dir = std::string(SF_TEST_DATA_DIR) + "/llama2c/";

using sf_test::read_bytes;

nlohmann::ordered_json load_json(const std::string& name) {
  std::ifstream f(data_dir + name + ".json");
  return nlohmann::ordered_json::parse(f);
}

io::llama2c_model read_ok(const std::string& file) {
  auto m = io::read_llama2c(data_dir + file);
  EXPECT_TRUE(m.is_ok()) << m.message();
  if (!m) return {};
  return std::move(m).value();
}

// Equal bytes, except that version 0's RoPE tables (which run.c skips) may differ by 1 ulp: ours are
// correctly rounded, PyTorch's vectorized cos and sin are not always.
bool same_but_rope(const std::vector<std::byte>& ours, const std::vector<std::byte>& theirs, const sf::arch& a) {
  if (ours.size() != theirs.size()) return false;
  const std::size_t cls = a.tied ? 0 : a.V * a.D * 4, tables = 2 * a.T * (a.dk() / 2) * 4;
  const std::size_t end = ours.size() - cls, begin = end - tables;
  if (!std::equal(ours.begin(), ours.begin() + static_cast<std::ptrdiff_t>(begin), theirs.begin())) return false;
  if (!std::equal(ours.begin() + static_cast<std::ptrdiff_t>(end), ours.end(), theirs.begin() + static_cast<std::ptrdiff_t>(end)))
    return false;
  std::size_t differ = 0;
  for (std::size_t at = begin; at < end; at += 4) {
    std::int32_t x, y;
    std::memcpy(&x, ours.data() + at, 4);
    std::memcpy(&y, theirs.data() + at, 4);
    if (x != y) ++differ;
    if (std::abs(x - y) > 1) return false;  // (same sign: the ulp distance)
  }
  std::printf("RoPE tables: %zu of %zu values 1 ulp from PyTorch's\n", differ, tables / 4);
  return true;
}

void set_i32(std::vector<std::byte>& b, std::size_t at, std::int32_t v) { std::memcpy(b.data() + at, &v, 4); }

std::string refusal(const std::vector<std::byte>& b) {
  auto m = io::parse_llama2c(b, "x.bin");
  EXPECT_FALSE(m.is_ok());
  const std::string message = m ? std::string("accepted") : std::string(m.message());
  // Read without the Q8_0 matrices' float values: the same checks, the same message.
  auto g = io::parse_llama2c(b, "x.bin", {.dequantize = false});
  EXPECT_EQ(g ? std::string("accepted") : std::string(g.message()), message);
  return message;
}

#define EXPECT_REFUSED(bytes, text) EXPECT_NE(refusal(bytes).find(text), std::string::npos) << refusal(bytes)

// The script's numbers: arch, every tensor's shape and sum, its elements (exactly, or within half
// a quantization step `tol` when quantized).
void check_against_json(const io::llama2c_model& m, const nlohmann::ordered_json& j, bool quantized) {
  const auto& a = j["args"];
  EXPECT_EQ(m.arch.D, a["dim"].get<std::size_t>());
  EXPECT_EQ(m.arch.L, a["n_layers"].get<std::size_t>());
  EXPECT_EQ(m.arch.H, a["n_heads"].get<std::size_t>());
  EXPECT_EQ(m.arch.kv(), a["n_kv_heads"].get<std::size_t>());
  EXPECT_EQ(m.arch.kv_heads, a["n_kv_heads"] == a["n_heads"] ? 0u : a["n_kv_heads"].get<std::size_t>());
  EXPECT_EQ(m.arch.V, a["vocab_size"].get<std::size_t>());
  EXPECT_EQ(m.arch.F, a["hidden_dim"].get<std::size_t>());
  EXPECT_EQ(m.arch.T, a["max_seq_len"].get<std::size_t>());
  EXPECT_EQ(m.arch.tied, j["shared_classifier"].get<bool>());
  EXPECT_EQ(m.arch.ffn, sf::ffn_kind::gated);
  EXPECT_EQ(m.arch.activation, sf::activation_kind::silu);
  EXPECT_EQ(m.arch.norm, sf::norm_kind::rmsnorm);
  EXPECT_EQ(m.arch.position, sf::position_kind::rope);
  EXPECT_FALSE(m.arch.bias);
  EXPECT_EQ(m.arch.norm_eps, 1e-5);
  EXPECT_EQ(m.arch.rope_base, 1e4);
  ASSERT_EQ(m.tensors.size(), j["tensors"].size());
  std::size_t k = 0;
  for (const auto& [name, t] : j["tensors"].items()) {
    SCOPED_TRACE(name);
    const io::llama2c_tensor& x = m.tensors[k++];
    EXPECT_EQ(x.name, name);  // docs/model.md's order
    const auto shape = t["shape"].get<std::vector<std::size_t>>();
    ASSERT_EQ(x.shape, io::shape_t(shape.begin(), shape.end()));
    const bool matrix = shape.size() == 2;
    float tol = 0;  // half the largest scale of the tensor's groups
    if (quantized && matrix) {
      const io::llama2c_q8* q = m.find_q8(name);
      ASSERT_NE(q, nullptr);
      for (float s : q->scales) tol = std::max(tol, s * 0.5f * 1.0001f);
    }
    double sum = 0;
    for (float v : x.values) sum += v;
    EXPECT_NEAR(sum, t["sum"].get<double>(), 1e-5 + tol * static_cast<double>(x.values.size()));
    for (const auto& e : t["elements"]) {
      const auto idx = e["index"].get<std::vector<std::size_t>>();
      const std::size_t at = matrix ? idx[0] * shape[1] + idx[1] : idx[0];
      const float want = static_cast<float>(e["value"].get<double>());
      if (tol == 0)
        EXPECT_EQ(x.values[at], want) << "element " << idx[0];
      else
        EXPECT_NEAR(x.values[at], want, tol) << "element " << idx[0];
    }
  }
}

TEST(Llama2c, ReadsEveryVersionToThePrintedTensors) {
  for (const char* name : {"gqa_unshared", "mha_shared", "gqa_unshared_q8"}) {
    const nlohmann::ordered_json j = load_json(name);
    for (const auto& f : j["files"]) {
      SCOPED_TRACE(f.get<std::string>());
      const io::llama2c_model m = read_ok(f.get<std::string>());
      const bool v2 = f.get<std::string>().find(".v2_") != std::string::npos;
      EXPECT_EQ(m.version, v2 ? 2 : f.get<std::string>().find(".v0.") != std::string::npos ? 0 : 1);
      if (v2) {
        EXPECT_EQ(m.group_size, f.get<std::string>().find("gs32") != std::string::npos ? 32u : 64u);
      }
      check_against_json(m, j, v2);
    }
  }
}

TEST(Llama2c, VersionsAgree) {
  for (const char* name : {"gqa_unshared", "mha_shared"}) {
    const io::llama2c_model v0 = read_ok(std::string(name) + ".v0.bin"), v1 = read_ok(std::string(name) + ".v1.bin");
    EXPECT_EQ(v0.arch, v1.arch);
    ASSERT_EQ(v0.tensors.size(), v1.tensors.size());
    for (std::size_t i = 0; i < v0.tensors.size(); ++i) {
      EXPECT_EQ(v0.tensors[i].name, v1.tensors[i].name);
      EXPECT_EQ(v0.tensors[i].values, v1.tensors[i].values) << v0.tensors[i].name;
    }
    EXPECT_EQ(v0.rope_cos.size(), v0.arch.T * v0.arch.dk() / 2);
    EXPECT_TRUE(v1.rope_cos.empty() && v1.quantized.empty());
  }
  // Version 2 within its quantization: every value within half its group's step of version 1's,
  // and the groups run along `in` within one row of llama2.c's [out, in] matrix.
  const io::llama2c_model v1 = read_ok("mha_shared.v1.bin");
  for (const char* f : {"mha_shared.v2_gs64.bin", "mha_shared.v2_gs32.bin"}) {
    const io::llama2c_model v2 = read_ok(f);
    EXPECT_EQ(v2.arch, v1.arch);
    for (const io::llama2c_q8& q : v2.quantized) {
      SCOPED_TRACE(q.name);
      const io::llama2c_tensor* a = v1.find(q.name);
      ASSERT_NE(a, nullptr);
      const bool table = q.name == "tok_emb.weight";
      for (std::size_t r = 0; r < q.rows; ++r)
        for (std::size_t c = 0; c < q.cols; ++c) {
          const float s = q.scales[(r * q.cols + c) / v2.group_size];
          const float w = table ? a->values[r * q.cols + c] : a->values[c * q.rows + r];
          ASSERT_LE(std::fabs(static_cast<float>(q.q[r * q.cols + c]) * s - w), s * 0.5f * 1.0001f);
        }
    }
    for (const char* n : {"blocks.0.norm1.weight", "blocks.1.norm2.weight", "norm_f.weight"})
      EXPECT_EQ(v2.find(n)->values, v1.find(n)->values);  // the norms stay float32
  }
}

TEST(Llama2c, WritesExportPysBytes) {
  for (const char* name : {"gqa_unshared", "mha_shared"}) {
    SCOPED_TRACE(name);
    const std::string b = std::string(name);
    const auto f0 = read_bytes(data_dir + b + ".v0.bin"), f1 = read_bytes(data_dir + b + ".v1.bin");
    const io::llama2c_model v0 = read_ok(b + ".v0.bin"), v1 = read_ok(b + ".v1.bin");
    auto w = io::serialize_llama2c(v0, {.version = 0});
    ASSERT_TRUE(w.is_ok()) << w.message();
    EXPECT_TRUE(*w == f0);  // with the file's own RoPE tables
    w = io::serialize_llama2c(v1, {.version = 0});  // RoPE tables computed as model.py does
    ASSERT_TRUE(w.is_ok()) << w.message();
    EXPECT_TRUE(same_but_rope(*w, f0, v1.arch));
    w = io::serialize_llama2c(v0, {.version = 1});
    ASSERT_TRUE(w.is_ok()) << w.message();
    EXPECT_TRUE(*w == f1);
  }
  // Version 2: our quantization of the float model is export.py's bit for bit, and a version-2
  // model writes its own groups back.
  const io::llama2c_model v1 = read_ok("mha_shared.v1.bin");
  for (std::size_t gs : {64u, 32u}) {
    const std::string f = "mha_shared.v2_gs" + std::to_string(gs) + ".bin";
    const auto want = read_bytes(data_dir + f);
    auto w = io::serialize_llama2c(v1, {.version = 2, .group_size = gs});
    ASSERT_TRUE(w.is_ok()) << w.message();
    EXPECT_TRUE(*w == want) << f;
    w = io::serialize_llama2c(read_ok(f), {.version = 2, .group_size = gs});
    ASSERT_TRUE(w.is_ok()) << w.message();
    EXPECT_TRUE(*w == want) << f;
  }
  const auto q8 = read_bytes(data_dir + "gqa_unshared_q8.v2_gs64.bin");
  auto w = io::serialize_llama2c(read_ok("gqa_unshared_q8.v2_gs64.bin"), {.version = 2, .group_size = 64});
  ASSERT_TRUE(w.is_ok()) << w.message();
  EXPECT_TRUE(*w == q8);
  // Requantizing the dequantized values gives the same groups too (each group's max is 127 * scale).
  io::llama2c_model m = read_ok("gqa_unshared_q8.v2_gs64.bin");
  m.quantized.clear();
  w = io::serialize_llama2c(m, {.version = 2, .group_size = 64});
  ASSERT_TRUE(w.is_ok()) << w.message();
  const io::llama2c_model again = io::parse_llama2c(*w).value();
  for (std::size_t i = 0; i < m.tensors.size(); ++i) EXPECT_EQ(again.tensors[i].values, m.tensors[i].values);
}

TEST(Llama2c, CheckpointRoundTrip) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("sf_llama2c_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* name : {"gqa_unshared", "mha_shared"}) {
    SCOPED_TRACE(name);
    const io::llama2c_model v1 = read_ok(std::string(name) + ".v1.bin");
    const std::string ck = (dir / (std::string(name) + ".safetensors")).string();
    ASSERT_TRUE(io::save_llama2c_as_checkpoint(v1, ck, {{"source", "llama2.c"}}).is_ok());
    auto f = io::file::open(ck);
    ASSERT_TRUE(f.is_ok()) << f.message();
    EXPECT_EQ(*f->metadata("format"), "staticformer");
    EXPECT_EQ(*f->metadata("source"), "llama2.c");
    if (v1.arch.kv() == v1.arch.H) {  // (the core's reader refuses n_kv_heads < n_heads until GQA lands)
      auto a = io::read_config(*f);
      ASSERT_TRUE(a.is_ok()) << a.message();
      EXPECT_EQ(*a, v1.arch);
    } else {
      EXPECT_EQ(*f->metadata("n_kv_heads"), std::to_string(v1.arch.kv()));
    }
    for (const io::llama2c_tensor& t : v1.tensors) {
      const io::tensor_info* i = f->find(t.name);
      ASSERT_NE(i, nullptr) << t.name;
      EXPECT_EQ(i->shape, t.shape);
    }
    auto back = io::llama2c_from_checkpoint(ck);
    ASSERT_TRUE(back.is_ok()) << back.message();
    EXPECT_EQ(back->arch, v1.arch);
    const std::string out = (dir / (std::string(name) + ".bin")).string();
    ASSERT_TRUE(io::write_llama2c(out, *back, {.version = 1}).is_ok());
    EXPECT_TRUE(read_bytes(out) == read_bytes(data_dir + name + ".v1.bin"));
    ASSERT_TRUE(io::write_llama2c(out, back->arch, back->tensors, 0).is_ok());
    EXPECT_TRUE(same_but_rope(read_bytes(out), read_bytes(data_dir + name + ".v0.bin"), v1.arch));
  }
  std::filesystem::remove_all(dir);
}

// A version 2 file as the int8 checkpoint (llama2c_int8_checkpoint_bytes): the checkpoint loads into
// sf::params<A, sf::int8> (load_quantized's checks), its int8 values are the file's, and every
// weight it stands for (value × scale) is the file's dequantized weight exactly — for group size 32
// (copied) and 64 (each group's scale on both its halves).
template <sf::arch A>
void check_int8_checkpoint(const std::string& file) {
  SCOPED_TRACE(file);
  const io::llama2c_model m = read_ok(file);
  ASSERT_EQ(m.arch, A);
  auto bytes = io::llama2c_int8_checkpoint_bytes(m);
  ASSERT_TRUE(bytes.is_ok()) << bytes.message();
  auto f = io::file::parse(std::move(*bytes), file);
  ASSERT_TRUE(f.is_ok()) << f.message();
  EXPECT_TRUE(io::is_quantized(*f));
  static sf::params<A, sf::int8> q;
  static sf::params<A> p;
  ASSERT_TRUE(io::load_quantized<A>(*f, q).is_ok());
  for (const io::llama2c_q8& g : m.quantized) {  // the int8 values as they are in the file
    const io::tensor_info* t = f->find(g.name + ".q8");
    ASSERT_NE(t, nullptr) << g.name;
    ASSERT_EQ(f->data(*t).size(), g.q.size()) << g.name;
    EXPECT_EQ(std::memcmp(f->data(*t).data(), g.q.data(), g.q.size()), 0) << g.name;
  }
  sf::dequantize(p, q);
  std::size_t leaves = 0;
  sf::visit(
      [&](const sf::param_name& n, const auto& leaf) {
        const std::string name(n.c_str(), n.size());
        const io::llama2c_tensor* t = m.find(name);
        ASSERT_NE(t, nullptr) << name;
        ASSERT_EQ(t->values.size(), leaf.size) << name;
        EXPECT_TRUE(std::equal(t->values.begin(), t->values.end(), leaf.data())) << name;
        ++leaves;
      },
      p);
  EXPECT_EQ(leaves, m.tensors.size());
}

TEST(Llama2c, Version2IsTheInt8CheckpointAsItIs) {
  constexpr sf::arch base{.ffn = sf::ffn_kind::gated, .norm = sf::norm_kind::rmsnorm, .position = sf::position_kind::rope,
                          .activation = sf::activation_kind::silu, .bias = false};
  constexpr sf::arch mha_shared = [&] {
    sf::arch a = base;
    a.V = 96, a.T = 64, a.D = 64, a.H = 8, a.L = 2, a.F = 64, a.tied = true;
    return a;
  }();
  constexpr sf::arch gqa_q8 = [&] {
    sf::arch a = base;
    a.V = 64, a.T = 64, a.D = 64, a.H = 8, a.kv_heads = 4, a.L = 3, a.F = 128, a.tied = false;
    return a;
  }();
  check_int8_checkpoint<mha_shared>("mha_shared.v2_gs32.bin");
  check_int8_checkpoint<mha_shared>("mha_shared.v2_gs64.bin");
  check_int8_checkpoint<gqa_q8>("gqa_unshared_q8.v2_gs64.bin");
  // Float files, and groups that are not a multiple of 32, are refused (quantize the floats instead).
  auto v1 = io::llama2c_int8_checkpoint_bytes(read_ok("mha_shared.v1.bin"));
  ASSERT_FALSE(v1.is_ok());
  EXPECT_NE(std::string(v1.message()).find("float weights, not Q8_0 groups"), std::string::npos) << v1.message();
  io::llama2c_model m = read_ok("mha_shared.v2_gs32.bin");
  m.group_size = 16;
  auto g16 = io::llama2c_int8_checkpoint_bytes(m);
  ASSERT_FALSE(g16.is_ok());
  EXPECT_NE(std::string(g16.message()).find("groups of 16 are not a multiple of 32"), std::string::npos) << g16.message();
}

// read_llama2c(path, {.dequantize = false}) (what `staticformer run` reads of a version 2 file
// whose groups its int8 checkpoint takes as they are): a version 2 file's matrices without their
// float values, everything else as read_llama2c reads it, and the same int8 checkpoint; float files
// read as always.
TEST(Llama2c, GroupsAloneAreReadWithoutTheFloatValues) {
  for (const char* name : {"mha_shared.v2_gs32.bin", "mha_shared.v2_gs64.bin", "gqa_unshared_q8.v2_gs64.bin",
                           "mha_shared.v1.bin", "gqa_unshared.v0.bin"}) {
    SCOPED_TRACE(name);
    const io::llama2c_model whole = read_ok(name);
    auto r = io::read_llama2c(data_dir + name, {.dequantize = false});
    ASSERT_TRUE(r.is_ok()) << r.message();
    const io::llama2c_model& m = *r;
    EXPECT_EQ(m.version, whole.version);
    EXPECT_EQ(m.group_size, whole.group_size);
    EXPECT_EQ(m.rope_cos, whole.rope_cos);
    EXPECT_EQ(m.rope_sin, whole.rope_sin);
    sf_test::expect_groups_alone(m, whole,
                                 [](const io::llama2c_model& x) { return io::llama2c_int8_checkpoint_bytes(x); });
  }
}

// RoPE's pair conventions: halves and back is the identity; W_q's column j of the halves model is
// the adjacent model's column 2j (j < d_k/2) or 2(j - d_k/2) + 1, within each head; W_k too.
TEST(Llama2c, RopePairsConvertByPermutingColumns) {
  io::llama2c_model m = read_ok("gqa_unshared.v1.bin");
  const std::size_t dk = m.arch.dk();
  sf::arch a = m.arch;
  std::vector<io::llama2c_tensor> t = m.tensors;
  ASSERT_TRUE(io::convert_rope_pairs(a, t, sf::rope_pairs_kind::halves).is_ok());
  EXPECT_EQ(a.rope_pairs, sf::rope_pairs_kind::halves);
  std::size_t changed = 0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    const bool qk = t[k].name.find("attn.wq") != std::string::npos || t[k].name.find("attn.wk") != std::string::npos;
    if (!qk) {
      EXPECT_TRUE(t[k].values == m.tensors[k].values) << t[k].name;
      continue;
    }
    ++changed;
    const std::size_t cols = t[k].shape[1];
    for (std::size_t r = 0; r < t[k].shape[0]; ++r)
      for (std::size_t j = 0; j < cols; ++j) {
        const std::size_t i = j % dk, from = j - i + (i < dk / 2 ? 2 * i : 2 * (i - dk / 2) + 1);
        ASSERT_EQ(t[k].values[r * cols + j], m.tensors[k].values[r * cols + from]) << t[k].name;
      }
  }
  EXPECT_EQ(changed, 2 * m.arch.L);
  ASSERT_TRUE(io::convert_rope_pairs(a, t, sf::rope_pairs_kind::adjacent).is_ok());
  EXPECT_EQ(a, m.arch);
  for (std::size_t k = 0; k < t.size(); ++k) EXPECT_TRUE(t[k].values == m.tensors[k].values) << t[k].name;
}

TEST(Llama2c, RefusesArchitecturesItCannotHold) {
  io::llama2c_model m = read_ok("mha_shared.v1.bin");
  auto refused = [&](sf::arch a, const char* text) {
    io::llama2c_model x = m;
    x.arch = a;
    auto w = io::serialize_llama2c(x);
    ASSERT_FALSE(w.is_ok());
    EXPECT_NE(std::string(w.message()).find(text), std::string::npos) << w.message();
    EXPECT_NE(std::string(io::llama2c_check_arch(a).message()).find(text), std::string::npos);
  };
  sf::arch a = m.arch;
  a.bias = true;
  refused(a, "llama2.c holds only bias-free models");
  a = m.arch, a.norm = sf::norm_kind::layernorm;
  refused(a, "only rmsnorm models (this one: layernorm)");
  a = m.arch, a.ffn = sf::ffn_kind::mlp;
  refused(a, "only gated feed-forward");
  a = m.arch, a.activation = sf::activation_kind::gelu;
  refused(a, "only silu models (this one: gelu)");
  a = m.arch, a.position = sf::position_kind::learned;
  refused(a, "only rope models (this one: learned)");
  a = m.arch, a.norm_eps = 1e-6;
  refused(a, "only norm_eps 1e-5 models (this one: 1e-06)");
  a = m.arch, a.rope_base = 5e5;
  refused(a, "only rope_base 10000 models");
  a = m.arch, a.kv_heads = 3;
  refused(a, "n_kv_heads 3 does not divide n_heads 8");
  // Tensors: missing, of another shape, not finite; an unknown version or group size.
  io::llama2c_model x = m;
  x.tensors.pop_back();
  EXPECT_STREQ(io::serialize_llama2c(x).message(), "llama2.c: missing tensor 'norm_f.weight'");
  x = m;
  x.tensors[1].shape = {65};
  EXPECT_NE(std::string(io::serialize_llama2c(x).message()).find("tensor 'blocks.0.norm1.weight': expected shape"),
            std::string::npos);
  x = m;
  x.tensors[2].values[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(std::string(io::serialize_llama2c(x).message()).find("blocks.0.attn.wq': element [0, 5] is not finite"),
            std::string::npos);
  EXPECT_NE(std::string(io::serialize_llama2c(m, {.version = 3}).message()).find("cannot write version 3"),
            std::string::npos);
  EXPECT_NE(std::string(io::serialize_llama2c(m, {.version = 2, .group_size = 48}).message())
                .find("group_size 48 does not divide dim 64"),
            std::string::npos);
  // A checkpoint of another architecture.
  io::writer w;
  sf::arch g = m.arch;
  g.norm = sf::norm_kind::layernorm;
  w.set_metadata(io::config_metadata(g));
  auto bytes = w.serialize();
  ASSERT_TRUE(bytes.is_ok());
  auto f = io::file::parse(*bytes, "g.safetensors");
  ASSERT_TRUE(f.is_ok()) << f.message();
  EXPECT_NE(std::string(io::llama2c_from_checkpoint(*f).message()).find("'g.safetensors': llama2.c holds only rmsnorm"),
            std::string::npos);
}

TEST(Llama2c, RefusesBadFiles) {
  const auto v1 = read_bytes(data_dir + "mha_shared.v1.bin");
  const auto v0 = read_bytes(data_dir + "gqa_unshared.v0.bin");
  const auto v2 = read_bytes(data_dir + "gqa_unshared_q8.v2_gs64.bin");
  auto b = v1;
  // Truncated and oversized, naming the tensor.
  b.pop_back();
  EXPECT_REFUSED(b, "'x.bin': llama2.c v1: truncated: tensor blocks.1.ffn.w3 (llama2.c layers[1].feed_forward.w3) "
                    "needs bytes [239104, 255488), the file has 255487");
  b = v1;
  b.resize(100000);
  EXPECT_REFUSED(b, "truncated: tensor blocks.0.attn.wv (llama2.c layers[0].attention.wv) needs bytes [91648, 108032)");
  b = v1;
  b.push_back(std::byte{0});
  EXPECT_REFUSED(b, "oversized: 1 bytes after the last tensor blocks.1.ffn.w3 (the header implies 255488 bytes)");
  b = v0;
  b.resize(b.size() - 4);
  EXPECT_REFUSED(b, "llama2.c v0: truncated: tensor lm_head.weight (llama2.c output)");
  b = v0;
  b.resize(v0.size() - 96 * 64 * 4 - 10);
  EXPECT_REFUSED(b, "truncated: tensor rope_sin (llama2.c freqs_sin)");
  b = v2;
  b.resize(b.size() - 1);
  EXPECT_REFUSED(b, "llama2.c v2: truncated: tensor lm_head.weight (llama2.c output)");
  EXPECT_REFUSED(std::vector<std::byte>(100), "llama2.c v0: dim is 0: expected a positive int32 (no magic");
  EXPECT_REFUSED(std::vector<std::byte>(27), "llama2.c v0: truncated header: 27 bytes of version 0's 28");
  b.assign(v1.begin(), v1.begin() + 200);
  EXPECT_REFUSED(b, "llama2.c v1: truncated header: 200 bytes of version 1's 256");
  // Magic, version, flags, padding.
  b = v1;
  b[0] = std::byte{0x33};  // no magic: read as version 0, whose header then does not fit
  EXPECT_REFUSED(b, "n_heads 64 does not divide dim 1634415667 (no magic 0x616b3432: read as version 0)");
  b = v1;
  set_i32(b, 4, 3);
  EXPECT_REFUSED(b, "'x.bin': llama2.c: version 3 is not one of llama2.c's (1 or 2 after the magic)");
  b = v1;
  b[36] = std::byte{2};
  EXPECT_REFUSED(b, "shared_classifier flag is 2: expected 0 or 1");
  b = v1;
  b[255] = std::byte{1};
  EXPECT_REFUSED(b, "header byte 255 is 1: the padding after the fields must be zero");
  // The sizes.
  const std::pair<std::size_t, std::int32_t> fields[] = {{8, 0}, {12, -5}, {16, 0}, {20, -1}, {24, 0}, {28, 0}, {32, -64}};
  const char* names[] = {"dim is 0", "hidden_dim is -5", "n_layers is 0", "n_heads is -1", "n_kv_heads is 0",
                         "vocab_size is 0", "seq_len is -64"};
  for (std::size_t i = 0; i < 7; ++i) {
    b = v1;
    set_i32(b, fields[i].first, fields[i].second);
    EXPECT_REFUSED(b, std::string(names[i]) + ": expected a positive int32");
  }
  b = v1;
  set_i32(b, 24, 3);
  EXPECT_REFUSED(b, "n_kv_heads 3 does not divide n_heads 8");
  b = v1;
  set_i32(b, 24, 16);
  EXPECT_REFUSED(b, "n_kv_heads 16 does not divide n_heads 8");
  b = v1;
  set_i32(b, 20, 7);
  EXPECT_REFUSED(b, "n_heads 7 does not divide dim 64");
  b = v1;
  set_i32(b, 20, 64);
  set_i32(b, 24, 64);
  EXPECT_REFUSED(b, "the head size dim / n_heads = 1 is odd");
  b = v1;
  set_i32(b, 32, 1 << 21);
  EXPECT_REFUSED(b, "seq_len 2097152 is above 1048576");
  b = v0;
  set_i32(b, 20, std::numeric_limits<std::int32_t>::min());
  EXPECT_REFUSED(b, "vocab_size is 2147483648: expected a positive int32");
  // Huge sizes: refused by the file's size, nothing allocated for them.
  b = v1;
  for (std::size_t at : {8u, 12u, 16u, 28u}) set_i32(b, at, 1 << 30);
  set_i32(b, 20, 1 << 29), set_i32(b, 24, 1 << 29);
  EXPECT_REFUSED(b, "truncated: tensor blocks.0.norm1.weight");
  set_i32(b, 16, std::numeric_limits<std::int32_t>::max());
  EXPECT_REFUSED(b, "truncated: tensor blocks.0.norm1.weight");
  // Version 2: group size, scales, int8 values.
  b = v2;
  set_i32(b, 37, 0);
  EXPECT_REFUSED(b, "group_size is 0: expected a positive int32");
  b = v2;
  set_i32(b, 37, 48);
  EXPECT_REFUSED(b, "group_size 48 does not divide dim 64 and hidden_dim 128");
  const std::size_t q0 = 256 + (3 * 2 + 1) * 64 * 4;  // the token embedding's int8 values
  b = v2;
  b[q0 + 5] = std::byte{0x80};
  EXPECT_REFUSED(b, "tensor tok_emb.weight: int8 value -128 at 5");
  b = v2;
  set_i32(b, q0 + 64 * 64 + 4, -1);  // a NaN scale (all bits set)
  EXPECT_REFUSED(b, "tensor tok_emb.weight: the scale of group 1 is nan");
  // A value that is not finite, named in staticformer's layout.
  b = v1;
  const float inf = std::numeric_limits<float>::infinity();
  const std::size_t wq0 = 256 + (2 * 2 + 1) * 64 * 4 + 96 * 64 * 4;  // blocks.0.attn.wq, llama2.c's [out, in]
  std::memcpy(b.data() + wq0 + (1 * 64 + 2) * 4, &inf, 4);            // its row 1, column 2
  EXPECT_REFUSED(b, "tensor blocks.0.attn.wq: element [2, 1] is inf");
  // Two: the first in the file's order is named, not the first in ours ([0, 3] comes before [2, 1]).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(b.data() + wq0 + (3 * 64 + 0) * 4, &nan, 4);  // its row 3, column 0: ours [0, 3]
  EXPECT_REFUSED(b, "tensor blocks.0.attn.wq: element [2, 1] is inf");
  // From a path: a missing file, a directory.
  EXPECT_NE(std::string(io::read_llama2c(data_dir + "none.bin").message()).find("cannot open"), std::string::npos);
  EXPECT_NE(std::string(io::read_llama2c(data_dir).message()).find("not a regular file"), std::string::npos);
}

// read_llama2c_header (what `staticformer run` reads of a llama2.c file when its executable
// exists): read_llama2c's architecture, version and group size, no tensors; the file's size checked
// as read_llama2c checks it, the values not read.
TEST(Llama2c, HeaderAloneIsReadLlama2csHeader) {
  for (const char* name : {"mha_shared.v1.bin", "gqa_unshared.v0.bin", "gqa_unshared_q8.v2_gs64.bin"}) {
    SCOPED_TRACE(name);
    const io::llama2c_model whole = read_ok(name);
    const auto h = io::read_llama2c_header(data_dir + name);
    ASSERT_TRUE(h) << h.message();
    EXPECT_EQ(h->arch, whole.arch);
    EXPECT_EQ(h->version, whole.version);
    EXPECT_EQ(h->group_size, whole.group_size);
    EXPECT_TRUE(h->tensors.empty());
    EXPECT_TRUE(h->quantized.empty());
  }
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sf_llama2c_header_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::vector<std::byte>& b) {
    const std::string path = (dir / "x.bin").string();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    return path;
  };
  const auto v1 = read_bytes(data_dir + "mha_shared.v1.bin");
  auto b = v1;
  b.pop_back();  // truncated: refused by both, with the same message
  std::string path = write(b);
  const auto cut = io::read_llama2c_header(path);
  ASSERT_FALSE(cut);
  EXPECT_NE(std::string(cut.message()).find("llama2.c v1: truncated: tensor blocks.1.ffn.w3"), std::string::npos) << cut.message();
  EXPECT_EQ(std::string(cut.message()), std::string(io::read_llama2c(path).message()));
  b = v1;
  b.push_back(std::byte{0});  // oversized
  path = write(b);
  EXPECT_NE(std::string(io::read_llama2c_header(path).message()).find("oversized: 1 bytes after the last tensor"),
            std::string::npos);
  b = v1;
  set_i32(b, 20, 7);  // a header that does not fit
  path = write(b);
  EXPECT_NE(std::string(io::read_llama2c_header(path).message()).find("n_heads 7 does not divide dim 64"),
            std::string::npos);
  b = v1;
  const float inf = std::numeric_limits<float>::infinity();
  std::memcpy(b.data() + b.size() - 4, &inf, 4);  // a value that is not finite: only read_llama2c reads values
  path = write(b);
  EXPECT_TRUE(io::read_llama2c_header(path)) << io::read_llama2c_header(path).message();
  EXPECT_NE(std::string(io::read_llama2c(path).message()).find("is inf"), std::string::npos);
  EXPECT_NE(std::string(io::read_llama2c_header(data_dir + "none.bin").message()).find("cannot open"), std::string::npos);
  EXPECT_NE(std::string(io::read_llama2c_header(data_dir).message()).find("not a regular file"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
