// GGUF files (staticformer/io/gguf.hpp) against files written by the `gguf` Python package
// (test/data/gguf/README.md): F32, F16 and Q8_0 files read to the tensors the script printed (its
// JSON: sums and elements in staticformer's [in, out] layout, transposed by the script), the
// tokenizer is tools/tokenizer_bin.py's tokenizer.bin of the same sentencepiece model, a GGUF of a
// llama2.c file's weights reads to read_llama2c's tensors, the writer round-trips, and every kind
// of bad file is refused with its message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "file_bytes.hpp"
#include "groups_alone.hpp"
#include "staticformer/io/any_tokenizer.hpp"
#include "staticformer/io/gguf.hpp"
#include "staticformer/io/llama2c.hpp"
#include "staticformer/io/quantized.hpp"
#include "staticformer/io/safetensors.hpp"

namespace {

namespace io = sf::io;
const std::string data_dir = std::string(SF_TEST_DATA_DIR) + "/gguf/";

using sf_test::read_bytes;

io::gguf_model read_ok(const std::string& file) {
  auto m = io::read_gguf(data_dir + file);
  EXPECT_TRUE(m.is_ok()) << m.message();
  if (!m) return {};
  return std::move(m).value();
}

// The model's tensors against the script's JSON: every tensor there, its shape, its sums, its elements.
void expect_json(const io::gguf_model& m, const std::string& name) {
  std::ifstream f(data_dir + name + ".json");
  const auto j = nlohmann::ordered_json::parse(f);
  ASSERT_EQ(j.size(), m.tensors.size()) << name;
  for (const auto& [tn, v] : j.items()) {
    const io::gguf_tensor* t = m.find(tn);
    ASSERT_NE(t, nullptr) << name << ": " << tn;
    EXPECT_EQ(t->shape, v["shape"].get<std::vector<std::size_t>>()) << tn;
    double sum = 0, abs_sum = 0;
    for (float x : t->values) sum += x, abs_sum += std::fabs(x);
    EXPECT_NEAR(sum, v["sum"].get<double>(), 1e-9 * abs_sum + 1e-12) << tn;
    EXPECT_NEAR(abs_sum, v["abs_sum"].get<double>(), 1e-9 * abs_sum) << tn;
    for (const auto& e : v["elements"]) {
      const auto idx = e["index"].get<std::vector<std::size_t>>();
      const std::size_t at = idx.size() == 1 ? idx[0] : idx[0] * t->shape[1] + idx[1];
      EXPECT_EQ(t->values[at], static_cast<float>(e["value"].get<double>())) << tn << " at " << at;
    }
  }
}

TEST(Gguf, F32FileWithTheTokenizer) {
  const io::gguf_model m = read_ok("llama_f32.gguf");
  expect_json(m, "llama_f32");
  const sf::arch& a = m.arch;
  EXPECT_EQ(a.V, 512u);
  EXPECT_EQ(a.T, 16u);
  EXPECT_EQ(a.D, 32u);
  EXPECT_EQ(a.H, 4u);
  EXPECT_EQ(a.kv(), 2u);
  EXPECT_EQ(a.L, 1u);
  EXPECT_EQ(a.F, 64u);
  EXPECT_TRUE(a.tied);
  EXPECT_EQ(a.norm_eps, 1e-6);        // a float32 key, read as its shortest decimal
  EXPECT_EQ(a.rope_base, 500000.0);
  EXPECT_EQ(a.rope_pairs, sf::rope_pairs_kind::adjacent);
  EXPECT_EQ(a.ffn, sf::ffn_kind::gated);
  EXPECT_EQ(a.norm, sf::norm_kind::rmsnorm);
  EXPECT_FALSE(a.bias);
  EXPECT_EQ(m.version, 3u);
  EXPECT_EQ(m.name, "tiny-f32");
  EXPECT_TRUE(m.quantized.empty());
  EXPECT_EQ(m.tokens.size(), 512u);
  EXPECT_EQ(m.scores.size(), 512u);
  EXPECT_EQ(m.token_types.size(), 512u);
  EXPECT_EQ(m.bos_id, 1);
  EXPECT_EQ(m.eos_id, 2);
  EXPECT_EQ(m.token_types[0], 2);  // <unk>: UNKNOWN
  EXPECT_EQ(m.token_types[1], 3);  // <s>: CONTROL
  EXPECT_EQ(m.token_types[3], 6);  // <0x00>: BYTE
  // The tokenizer is tools/tokenizer_bin.py's tokenizer.bin of the same sentencepiece model, byte for byte.
  auto t = io::gguf_tokenizer(m);
  ASSERT_TRUE(t.is_ok()) << t.message();
  EXPECT_EQ(t->serialize(), read_bytes(std::string(SF_TEST_DATA_DIR) + "/bpe/tok512.bin"));
  EXPECT_EQ(t->raw_piece(3), "<0x00>");
}

TEST(Gguf, F16AndQ8_0Files) {
  const io::gguf_model h = read_ok("llama_f16.gguf");
  expect_json(h, "llama_f16");
  EXPECT_FALSE(h.arch.tied);
  EXPECT_EQ(h.arch.V, 64u);  // from the embedding's extent: no tokens
  EXPECT_EQ(h.arch.L, 2u);
  EXPECT_EQ(h.arch.kv_heads, 0u);
  EXPECT_TRUE(h.tokens.empty());
  EXPECT_FALSE(io::gguf_tokenizer(h).is_ok());
  const io::gguf_model t = read_ok("tiny_f16.gguf");
  expect_json(t, "tiny_f16");
  EXPECT_EQ(t.arch.D, 4u);
  EXPECT_EQ(t.arch.kv(), 1u);
  EXPECT_EQ(t.arch.F, 6u);
  EXPECT_TRUE(t.arch.tied);
  const io::gguf_model q = read_ok("llama_q8.gguf");
  expect_json(q, "llama_q8");
  EXPECT_EQ(q.arch, h.arch);
  // Every matrix's blocks are kept, [out, in] = ggml's [ne1, ne0], and dequantize to the tensor.
  ASSERT_EQ(q.quantized.size(), 2u + 2 * 7);
  for (const io::gguf_q8& b : q.quantized) {
    const io::gguf_tensor* t = q.find(b.name);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(b.q.size(), b.rows * b.cols);
    ASSERT_EQ(b.scales.size(), b.q.size() / 32);
    const bool table = b.name == "tok_emb.weight";
    for (std::size_t i = 0; i < b.q.size(); ++i) {
      const float w = t->values[table ? i : (i % b.cols) * b.rows + i / b.cols];
      ASSERT_EQ(w, static_cast<float>(b.q[i]) * b.scales[i / 32]) << b.name << " " << i;
    }
  }
  // The F16 and Q8_0 files hold the same float32 weights, rounded two ways.
  for (std::size_t k = 0; k < h.tensors.size(); ++k) {
    const io::gguf_tensor& x = h.tensors[k];
    const io::gguf_tensor* y = q.find(x.name);
    ASSERT_NE(y, nullptr);
    const io::gguf_q8* b = q.find_q8(x.name);
    for (std::size_t i = 0; i < x.values.size(); ++i)
      ASSERT_NEAR(x.values[i], y->values[i], b ? 0.01f : 0.0f) << x.name;
  }
}

TEST(Gguf, ALlama2cFileAsGgufReadsToTheSameWeights) {
  const io::gguf_model g = read_ok("from_llama2c.gguf");
  expect_json(g, "from_llama2c");
  auto l = io::read_llama2c(std::string(SF_TEST_DATA_DIR) + "/llama2c/gqa_unshared.v1.bin");
  ASSERT_TRUE(l.is_ok()) << l.message();
  EXPECT_EQ(g.arch, l->arch);
  ASSERT_EQ(g.tensors.size(), l->tensors.size());
  for (std::size_t k = 0; k < g.tensors.size(); ++k) {
    EXPECT_EQ(g.tensors[k].name, l->tensors[k].name);
    EXPECT_EQ(g.tensors[k].shape, l->tensors[k].shape);
    EXPECT_EQ(g.tensors[k].values, l->tensors[k].values) << g.tensors[k].name;
  }
  // And the float checkpoints of the two are the same bytes.
  auto cg = io::gguf_checkpoint_bytes(g);
  auto cl = io::llama2c_checkpoint_bytes(*l);
  ASSERT_TRUE(cg.is_ok() && cl.is_ok());
  EXPECT_EQ(*cg, *cl);
}

TEST(Gguf, CheckpointCarriesTheArchitectureAndTheTokenizer) {
  const io::gguf_model m = read_ok("llama_f32.gguf");
  auto t = io::gguf_tokenizer(m);
  ASSERT_TRUE(t.is_ok());
  auto meta = io::tokenizer_metadata(*t, m.arch.V);
  ASSERT_TRUE(meta.is_ok()) << meta.message();
  auto bytes = io::gguf_checkpoint_bytes(m, *meta);
  ASSERT_TRUE(bytes.is_ok()) << bytes.message();
  auto f = io::file::parse(*bytes, "ckpt");
  ASSERT_TRUE(f.is_ok()) << f.message();
  auto a = io::read_config(*f);
  ASSERT_TRUE(a.is_ok()) << a.message();
  EXPECT_EQ(*a, m.arch);
  EXPECT_TRUE(io::has_tokenizer(f->metadata()));
  for (const io::gguf_tensor& x : m.tensors) {
    const io::tensor_info* i = f->find(x.name);
    ASSERT_NE(i, nullptr) << x.name;
    std::vector<float> v(i->elements());
    std::memcpy(v.data(), f->data(*i).data(), v.size() * 4);
    EXPECT_EQ(v, x.values) << x.name;
  }
  // The same checkpoint read in place (what `staticformer run` of a GGUF or llama2.c file loads).
  auto view = io::model_checkpoint_file(m.arch, m.tensors, *meta, "ckpt");
  ASSERT_TRUE(view.is_ok()) << view.message();
  EXPECT_EQ(view->metadata(), f->metadata());
  ASSERT_EQ(view->tensors().size(), f->tensors().size());
  for (const io::tensor_info& i : f->tensors()) {
    const io::tensor_info* k = view->find(i.name);
    ASSERT_NE(k, nullptr) << i.name;
    const auto a = f->data(i), b = view->data(*k);
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << i.name;
  }
  EXPECT_NE(std::string(io::model_checkpoint_file(m.arch, {}, {}).message()).find("tensors for"), std::string::npos);
}

TEST(Gguf, Q8_0FileAsTheInt8CheckpointAsItIs) {
  const io::gguf_model q = read_ok("llama_q8.gguf");
  auto bytes = io::gguf_int8_checkpoint_bytes(q);
  ASSERT_TRUE(bytes.is_ok()) << bytes.message();
  auto f = io::file::parse(*bytes, "int8");
  ASSERT_TRUE(f.is_ok()) << f.message();
  EXPECT_TRUE(io::is_quantized(*f));
  auto a = io::read_config(*f);
  ASSERT_TRUE(a.is_ok()) << a.message();
  EXPECT_EQ(*a, q.arch);
  for (const io::gguf_q8& b : q.quantized) {
    const io::tensor_info* t8 = f->find(b.name + ".q8");
    const io::tensor_info* ts = f->find(b.name + ".scale");
    ASSERT_TRUE(t8 && ts) << b.name;
    EXPECT_EQ(t8->shape, (io::shape_t{b.rows, b.cols}));
    EXPECT_EQ(ts->shape, (io::shape_t{b.rows, b.cols / 32}));
    EXPECT_EQ(std::memcmp(f->data(*t8).data(), b.q.data(), b.q.size()), 0) << b.name;
    EXPECT_EQ(std::memcmp(f->data(*ts).data(), b.scales.data(), b.scales.size() * 4), 0) << b.name;
  }
  // An F16 file's matrices are not Q8_0: refused, naming one.
  auto h = io::gguf_int8_checkpoint_bytes(read_ok("llama_f16.gguf"));
  EXPECT_FALSE(h.is_ok());
  EXPECT_NE(std::string(h.message()).find("matrix 'tok_emb.weight' was not Q8_0 in the file"), std::string::npos) << h.message();
  // -128 is refused (ggml never writes it; the int8 checkpoint's range is symmetric).
  io::gguf_model bad = q;
  bad.quantized[0].q[5] = -128;
  auto b = io::gguf_int8_checkpoint_bytes(bad);
  EXPECT_FALSE(b.is_ok());
  EXPECT_NE(std::string(b.message()).find("int8 value -128 at 5"), std::string::npos) << b.message();
}

// read_gguf(path, {.dequantize = false}) (what `staticformer run` reads of a GGUF file unless
// --int8 asks to quantize its floats): the Q8_0 tensors without their float values, everything else
// as read_gguf reads it, and the same int8 checkpoint; F32 and F16 files read as always.
TEST(Gguf, BlocksAloneAreReadWithoutTheFloatValues) {
  for (const char* name : {"llama_q8.gguf", "llama_f16.gguf", "llama_f32.gguf"}) {
    SCOPED_TRACE(name);
    const io::gguf_model whole = read_ok(name);
    auto r = io::read_gguf(data_dir + name, {.dequantize = false});
    ASSERT_TRUE(r.is_ok()) << r.message();
    const io::gguf_model& m = *r;
    EXPECT_EQ(m.tokens, whole.tokens);
    EXPECT_EQ(m.scores, whole.scores);
    EXPECT_EQ(m.half, whole.half);
    sf_test::expect_groups_alone(m, whole,
                                 [](const io::gguf_model& x) { return io::gguf_int8_checkpoint_bytes(x); });
  }
}

TEST(Gguf, WriterRoundTrips) {
  for (const char* file : {"llama_f32.gguf", "llama_f16.gguf", "llama_q8.gguf", "from_llama2c.gguf"}) {
    const io::gguf_model m = read_ok(file);
    auto b = io::serialize_gguf(m);
    ASSERT_TRUE(b.is_ok()) << b.message();
    auto back = io::parse_gguf(*b, "f32");
    ASSERT_TRUE(back.is_ok()) << back.message();
    EXPECT_EQ(back->arch, m.arch) << file;
    EXPECT_EQ(back->tokens, m.tokens);
    EXPECT_EQ(back->scores, m.scores);
    EXPECT_EQ(back->token_types, m.token_types);
    EXPECT_EQ(back->bos_id, m.bos_id);
    EXPECT_EQ(back->name, m.name);
    for (std::size_t k = 0; k < m.tensors.size(); ++k) EXPECT_EQ(back->tensors[k].values, m.tensors[k].values) << file;
    EXPECT_TRUE(back->quantized.empty());
    // Q8_0: a Q8_0 file's own blocks are written as they are (the same bytes of data as gguf-py's).
    auto q = io::serialize_gguf(m, {.type = io::gguf_type::Q8_0});
    ASSERT_TRUE(q.is_ok()) << q.message();
    auto qb = io::parse_gguf(*q, "q8");
    ASSERT_TRUE(qb.is_ok()) << qb.message();
    EXPECT_EQ(qb->arch, m.arch);
    // (every matrix whose input width is a multiple of 32: gqa_unshared's ffn_down, of 76, stays F32)
    ASSERT_EQ(qb->quantized.size(), 1 + (6 + (m.arch.F % 32 == 0)) * m.arch.L + (m.arch.tied ? 0 : 1)) << file;
    for (std::size_t k = 0; k < m.tensors.size(); ++k) {
      const io::gguf_tensor& x = m.tensors[k];
      const io::gguf_q8* g = qb->find_q8(x.name);
      if (!g) {
        EXPECT_EQ(qb->tensors[k].values, x.values);
        continue;
      }
      if (const io::gguf_q8* own = m.find_q8(x.name)) {
        EXPECT_EQ(g->q, own->q);
        EXPECT_EQ(g->scales, own->scales);
      }
      // Within half a step of the block's scale (and the scale's float16 rounding).
      for (std::size_t i = 0; i < x.values.size(); ++i) {
        const std::size_t r = x.shape.size() == 2 && x.name != "tok_emb.weight" ? i % x.shape[1] : i / x.shape[1];
        const std::size_t c = x.shape.size() == 2 && x.name != "tok_emb.weight" ? i / x.shape[1] : i % x.shape[1];
        const float d = g->scales[(r * g->cols + c) / 32];
        ASSERT_LE(std::fabs(qb->tensors[k].values[i] - x.values[i]), 0.5f * d + 0.002f * std::fabs(x.values[i]) + 1e-7f)
            << file << " " << x.name << " " << i;
      }
    }
  }
}

TEST(Gguf, WriterQuantizesAsGgufPyDoes) {
  // Quantizing llama_q8's dequantized weights again gives its blocks back: gguf-py's d = max|w|/127
  // of 127·d is d, and round(q·d / d) = q.
  io::gguf_model m = read_ok("llama_q8.gguf");
  std::vector<io::gguf_q8> own = std::move(m.quantized);
  m.quantized.clear();
  auto q = io::serialize_gguf(m, {.type = io::gguf_type::Q8_0});
  ASSERT_TRUE(q.is_ok()) << q.message();
  auto back = io::parse_gguf(*q, "q8");
  ASSERT_TRUE(back.is_ok()) << back.message();
  ASSERT_EQ(back->quantized.size(), own.size());
  std::size_t scale_differs = 0;
  for (std::size_t k = 0; k < own.size(); ++k) {
    EXPECT_EQ(back->quantized[k].q, own[k].q) << own[k].name;
    for (std::size_t g = 0; g < own[k].scales.size(); ++g) scale_differs += back->quantized[k].scales[g] != own[k].scales[g];
  }
  EXPECT_EQ(scale_differs, 0u);
}

// F16 written: gguf-py's F16 file back with every value (so every float16 bit) and the same
// tensors F16; a float32 file's matrices rounded to float16 (the norms F32, exact); a weight
// beyond float16's range refused, the largest half accepted.
TEST(Gguf, WritesF16) {
  const io::gguf_model h = read_ok("llama_f16.gguf");
  ASSERT_EQ(h.half.size(), 2u + 2 * 7);  // tok_emb, output and each block's seven matrices
  auto bytes = io::serialize_gguf(h, {.type = io::gguf_type::F16});
  ASSERT_TRUE(bytes.is_ok()) << bytes.message();
  auto back = io::parse_gguf(*bytes, "f16.gguf");
  ASSERT_TRUE(back.is_ok()) << back.message();
  EXPECT_EQ(back->half, h.half);
  ASSERT_EQ(back->tensors.size(), h.tensors.size());
  for (std::size_t k = 0; k < h.tensors.size(); ++k) {
    EXPECT_EQ(back->tensors[k].name, h.tensors[k].name);
    EXPECT_EQ(back->tensors[k].values, h.tensors[k].values) << h.tensors[k].name;
  }
  const io::gguf_model f = read_ok("llama_f32.gguf");
  ASSERT_TRUE(f.half.empty());
  bytes = io::serialize_gguf(f, {.type = io::gguf_type::F16});
  ASSERT_TRUE(bytes.is_ok()) << bytes.message();
  back = io::parse_gguf(*bytes, "f16.gguf");
  ASSERT_TRUE(back.is_ok()) << back.message();
  std::size_t matrices = 0, rounded = 0;
  for (std::size_t k = 0; k < f.tensors.size(); ++k) {
    const io::gguf_tensor& x = f.tensors[k];
    const bool matrix = x.shape.size() == 2;
    matrices += matrix;
    EXPECT_EQ(std::find(back->half.begin(), back->half.end(), x.name) != back->half.end(), matrix) << x.name;
    for (std::size_t i = 0; i < x.values.size(); ++i) {
      const float want = matrix ? io::detail::f16_to_float(io::detail::float_to_f16(x.values[i])) : x.values[i];
      ASSERT_EQ(back->tensors[k].values[i], want) << x.name << " " << i;
      rounded += want != x.values[i];
    }
  }
  EXPECT_EQ(matrices, 1u + 7);  // tied: tok_emb and one block's matrices
  EXPECT_GT(rounded, 0u);       // (random float32 weights: most are not float16 values)
  io::gguf_model big = f;
  const auto wq = std::find_if(big.tensors.begin(), big.tensors.end(),
                               [](const io::gguf_tensor& t) { return t.name.ends_with("attn.wq"); });
  ASSERT_NE(wq, big.tensors.end());
  io::gguf_tensor& w = *wq;
  w.values[3] = 65504.0f;  // the largest float16: kept
  EXPECT_TRUE(io::serialize_gguf(big, {.type = io::gguf_type::F16}).is_ok());
  w.values[3] = -65520.0f;  // rounds to -inf
  auto refused = io::serialize_gguf(big, {.type = io::gguf_type::F16});
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(std::string(refused.message()).find("beyond float16's range"), std::string::npos) << refused.message();
  EXPECT_NE(std::string(refused.message()).find(w.name), std::string::npos) << refused.message();
  EXPECT_TRUE(io::serialize_gguf(big, {.type = io::gguf_type::F32}).is_ok());  // (F32 holds it)
  // Q8_0: a block's scale is its largest |value| / 127 as a float16.
  w.values[3] = 65504.0f * 127.0f;  // the largest scale: kept
  EXPECT_TRUE(io::serialize_gguf(big, {.type = io::gguf_type::Q8_0}).is_ok());
  w.values[3] = -65520.0f * 127.0f;  // a scale that rounds to inf
  refused = io::serialize_gguf(big, {.type = io::gguf_type::Q8_0});
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(std::string(refused.message()).find("makes a Q8_0 scale (|value| / 127) beyond float16's range"),
            std::string::npos) << refused.message();
}

TEST(Gguf, HalfConversions) {
  EXPECT_EQ(io::detail::f16_to_float(0x3c00), 1.0f);
  EXPECT_EQ(io::detail::f16_to_float(0xc000), -2.0f);
  EXPECT_EQ(io::detail::f16_to_float(0x0001), 0x1p-24f);
  EXPECT_EQ(io::detail::f16_to_float(0x03ff), 1023 * 0x1p-24f);
  EXPECT_EQ(io::detail::f16_to_float(0x7bff), 65504.0f);
  EXPECT_TRUE(std::isinf(io::detail::f16_to_float(0x7c00)));
  EXPECT_TRUE(std::isnan(io::detail::f16_to_float(0x7e00)));
  for (std::uint32_t h = 0; h < 0x10000; ++h) {  // every finite half back to itself
    if ((h & 0x7c00) == 0x7c00) continue;
    const float f = io::detail::f16_to_float(static_cast<std::uint16_t>(h));
    ASSERT_EQ(io::detail::float_to_f16(f), h) << h;
  }
  EXPECT_EQ(io::detail::float_to_f16(1.0f + 0x1p-11f), 0x3c00);  // a tie: to even
  EXPECT_EQ(io::detail::float_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
  EXPECT_EQ(io::detail::float_to_f16(65520.0f), 0x7c00);
  EXPECT_EQ(io::detail::float_to_f16(0x1p-25f), 0x0000);         // subnormal ties: to even
  EXPECT_EQ(io::detail::float_to_f16(0x1.000002p-25f), 0x0001);
  EXPECT_EQ(io::detail::float_to_f16(3 * 0x1p-25f), 0x0002);
  EXPECT_EQ(io::detail::float_to_f16(5 * 0x1p-25f), 0x0002);
  EXPECT_EQ(io::detail::float_to_f16(-0x1p-26f), 0x8000);
  EXPECT_EQ(io::detail::float_to_f16(0x1.ffcp-15f), 0x0400);     // 1023.5 units: to the smallest normal
  // bfloat16 (Hugging Face files written --dtype bfloat16): every value back to itself, ties to even
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    if ((b & 0x7f80) == 0x7f80 && (b & 0x7f)) continue;  // (NaN)
    ASSERT_EQ(io::detail::float_to_bf16(io::detail::bf16_to_float(static_cast<std::uint16_t>(b))), b) << b;
  }
  EXPECT_EQ(io::detail::float_to_bf16(1.0f + 0x1p-8f), 0x3f80);
  EXPECT_EQ(io::detail::float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
  EXPECT_EQ(io::detail::float_to_bf16(std::nextafter(1.0f + 0x1p-8f, 2.0f)), 0x3f81);
  EXPECT_EQ(io::detail::float_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds to inf
  EXPECT_TRUE(std::isnan(io::detail::bf16_to_float(io::detail::float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

// ----------------------------------------------------------------------------- bad files

std::string refusal(const std::vector<std::byte>& b) {
  auto m = io::parse_gguf(b, "x.gguf");
  EXPECT_FALSE(m.is_ok());
  const std::string message = m ? std::string("accepted") : std::string(m.message());
  // Read without the Q8_0 tensors' float values: the same checks, the same message.
  auto g = io::parse_gguf(b, "x.gguf", {.dequantize = false});
  EXPECT_EQ(g ? std::string("accepted") : std::string(g.message()), message);
  return message;
}
#define EXPECT_REFUSED(bytes, text) EXPECT_NE(refusal(bytes).find(text), std::string::npos) << refusal(bytes)

std::size_t find(const std::vector<std::byte>& b, std::string_view s) {
  for (std::size_t i = 0; i + s.size() <= b.size(); ++i)
    if (std::memcmp(b.data() + i, s.data(), s.size()) == 0) return i;
  ADD_FAILURE() << "not found: " << s;
  return 0;
}
void put(std::vector<std::byte>& b, std::size_t at, std::uint64_t v, int n) {
  for (int k = 0; k < n; ++k) b[at + k] = static_cast<std::byte>((v >> (8 * k)) & 0xff);
}
// Where a tensor's info continues after its name: n_dims (4), extents (8 each), type (4), offset (8).
std::size_t after_name(const std::vector<std::byte>& b, std::string_view name) {
  std::string s(8, '\0');
  for (int k = 0; k < 8; ++k) s[k] = static_cast<char>((name.size() >> (8 * k)) & 0xff);
  return find(b, s + std::string(name)) + 8 + name.size();
}

TEST(Gguf, BadFilesAreRefused) {
  const std::vector<std::byte> good = read_bytes(data_dir + "llama_q8.gguf");
  ASSERT_TRUE(io::parse_gguf(good, "x.gguf").is_ok());
  auto b = good;
  put(b, 0, 0x46554746, 4);
  EXPECT_REFUSED(b, "'x.gguf': GGUF: not a GGUF file");
  b = good, put(b, 4, 1, 4);
  EXPECT_REFUSED(b, "version 1 (32-bit counts");
  b = good, put(b, 4, 4, 4);
  EXPECT_REFUSED(b, "version 4 is not 2 or 3");
  b = good, put(b, 4, 2, 4);  // version 2 reads as 3
  EXPECT_TRUE(io::parse_gguf(b, "v2").is_ok());
  b = good, put(b, 8, 1ull << 40, 8);
  EXPECT_REFUSED(b, "the tensor count 1099511627776 is more than the file's");
  b = good, put(b, 16, 1ull << 40, 8);
  EXPECT_REFUSED(b, "the key-value count 1099511627776 is more than the file's");
  // A key's length past the end of the file.
  b = good, put(b, 24, 1ull << 20, 8);
  EXPECT_REFUSED(b, "key 0: a string of 1048576 bytes, more than 65535");
  b = good, put(b, 24, 60000, 8);
  EXPECT_REFUSED(b, "truncated: key 0 needs 60000 bytes");
  // An unknown value type, a string value past the end.
  b = good, put(b, find(b, "llama.block_count") + 17, 13, 4);
  EXPECT_REFUSED(b, "key 'llama.block_count': unknown value type 13");
  b = good, put(b, find(b, "tiny-q8") - 8, 1ull << 40, 8);
  EXPECT_REFUSED(b, "key 'general.name': a string of 1099511627776 bytes");
  // Tensor infos: n_dims, extents, type, offsets.
  const std::size_t q = after_name(good, "blk.0.attn_q.weight");
  b = good, put(b, q, 5, 4);
  EXPECT_REFUSED(b, "tensor 'blk.0.attn_q.weight': n_dims 5 (1 to 4)");
  b = good, put(b, q, 0, 4);
  EXPECT_REFUSED(b, "n_dims 0");
  b = good, put(b, q + 4, 1ull << 32, 8), put(b, q + 12, 1ull << 32, 8);
  EXPECT_REFUSED(b, "tensor 'blk.0.attn_q.weight': extent 1 is 4294967296 (the element count passes 2^48)");
  b = good, put(b, q + 4, 0, 8);
  EXPECT_REFUSED(b, "extent 0 is 0");
  b = good, put(b, q + 4, 64, 8), put(b, q + 12, 16, 8);  // as many bytes
  EXPECT_REFUSED(b, "tensor 'blk.0.attn_q.weight': expected extents [32, 32], found [64, 16]");
  b = good, put(b, q + 4, 64, 8);  // twice the bytes: into the next tensor
  EXPECT_REFUSED(b, "tensors 'blk.0.attn_q.weight' and 'blk.0.attn_k.weight' overlap");
  b = good, put(b, q + 4, 48, 8);
  EXPECT_REFUSED(b, "Q8_0 with a first extent of 48, not a multiple of 32");
  b = good, put(b, q + 20, 2, 4);
  EXPECT_REFUSED(b, "tensor 'blk.0.attn_q.weight': tensor type Q4_0 is not read (F32, F16 and Q8_0 are)");
  b = good, put(b, q + 20, 1000, 4);
  EXPECT_REFUSED(b, "tensor type type 1000 is not read");
  std::uint64_t off = 0;
  for (int k = 0; k < 8; ++k) off |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(good[q + 24 + k])) << (8 * k);
  b = good, put(b, q + 24, off + 4, 8);
  EXPECT_REFUSED(b, "tensor 'blk.0.attn_q.weight': offset " + std::to_string(off + 4) + " is not a multiple of the alignment 32");
  b = good, put(b, q + 24, off + 32, 8);
  EXPECT_REFUSED(b, "overlap");
  b = good, put(b, q + 24, 1ull << 40, 8);
  EXPECT_REFUSED(b, "truncated: tensor 'blk.0.attn_q.weight' (Q8_0 [32, 32], 1088 bytes at offset 1099511627776) ends past");
  b = good, put(b, q + 24, 0xffffffffffffffe0ull, 8);
  EXPECT_REFUSED(b, "ends past");
  // A tensor given twice: rename attn_k to attn_q (same length).
  b = good;
  {
    const std::size_t k = after_name(b, "blk.0.attn_k.weight") - std::string_view("blk.0.attn_k.weight").size();
    std::memcpy(b.data() + k, "blk.0.attn_q.weight", 19);
  }
  EXPECT_REFUSED(b, "tensor 'blk.0.attn_q.weight' given twice");
  // A key given twice: rename llama.block_count's key to general.name's (lengths differ: use
  // general.architecture (20 bytes) and llama.context_length (20 bytes)).
  b = good;
  std::memcpy(b.data() + find(b, "llama.context_length"), "general.architecture", 20);
  EXPECT_REFUSED(b, "key 'general.architecture' given twice");
  // A missing, an unexpected tensor: rename output_norm (18 bytes) to something else.
  b = good;
  std::memcpy(b.data() + find(b, "output_norm.weight"), "output_nurm.weight", 18);
  EXPECT_REFUSED(b, "unexpected tensor 'output_nurm.weight'");
  // Another architecture; a missing hyperparameter; bad alignment.
  b = good;
  std::memcpy(b.data() + find(b, std::string_view("\x05\0\0\0\0\0\0\0llama", 13)) + 8, "gpt_2", 5);
  EXPECT_REFUSED(b, "architecture \"gpt_2\" is not read (llama is)");
  b = good, put(b, find(b, "llama.block_count") + 17 + 4, 60000, 4);  // (refused without 60000 blocks' names)
  EXPECT_REFUSED(b, "missing tensor 'blk.2.attn_norm.weight'");
  b = good;  // a block beyond block_count, a name with a leading zero
  std::memcpy(b.data() + find(b, "blk.1.attn_q.weight"), "blk.7.attn_q.weight", 19);
  EXPECT_REFUSED(b, "unexpected tensor 'blk.7.attn_q.weight' for a llama model of 2 blocks");
  b = good;
  std::memcpy(b.data() + find(b, "blk.1.ffn_up.weight"), "blk.01.fn_up.weight", 19);
  EXPECT_REFUSED(b, "unexpected tensor 'blk.01.fn_up.weight'");
  b = good;
  std::memcpy(b.data() + find(b, "llama.block_count"), "llama.block_cuont", 17);
  EXPECT_REFUSED(b, "no llama.block_count");
  b = good, put(b, find(b, "llama.attention.head_count_kv") + 29 + 4, 3, 4);
  EXPECT_REFUSED(b, "llama.attention.head_count_kv 3 does not divide llama.attention.head_count 4");
  {  // (gguf-py writes no general.alignment; serialize_gguf does)
    auto w = io::serialize_gguf(*io::parse_gguf(good, "x"));
    ASSERT_TRUE(w.is_ok());
    b = *w, put(b, find(b, "general.alignment") + 17 + 4, 24, 4);
    EXPECT_REFUSED(b, "general.alignment: expected a power of two from 8 to 65536, found 24");
    b = *w, put(b, find(b, "general.alignment") + 17 + 4, 4096, 4);  // the offsets are multiples of 32 (and 64)
    EXPECT_REFUSED(b, "is not a multiple of the alignment 4096");
  }
  b = good, put(b, find(b, "llama.rope.dimension_count") + 26 + 4, 4, 4);
  EXPECT_REFUSED(b, "llama.rope.dimension_count is not the head size 8");
  // A scale of inf in a Q8_0 block: its values are not finite.
  b = good;
  {
    const std::size_t o = after_name(b, "output.weight");  // the last info; the data starts at the next multiple of 32
    const std::size_t data = (o + 4 + 16 + 4 + 8 + 31) / 32 * 32;
    put(b, data + off, 0x7c00, 2);  // attn_q's first block's d
  }
  EXPECT_REFUSED(b, "tensor 'blk.0.attn_q.weight': element ");
  // Every truncation of the file is refused (and none crashes).
  std::size_t refused = 0;
  for (std::size_t n = 0; n < good.size(); n += (n < 2048 ? 1 : 97)) {
    const std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    refused += !io::parse_gguf(cut, "cut").is_ok();
    if (n < 2048) {
      ASSERT_FALSE(io::parse_gguf(cut, "cut").is_ok()) << n;
    }
  }
  EXPECT_GT(refused, 2000u);
  EXPECT_NE(refusal(std::vector<std::byte>(good.begin(), good.begin() + 1000)).find("truncated: tensor 'blk."), std::string::npos);
  EXPECT_NE(refusal(std::vector<std::byte>(good.begin(), good.end() - 40)).find("truncated: tensor 'output.weight'"),
            std::string::npos);
  // read_gguf: a missing file.
  auto missing = io::read_gguf(data_dir + "no-such.gguf");
  EXPECT_FALSE(missing.is_ok());
  EXPECT_NE(std::string(missing.message()).find("cannot open"), std::string::npos);
}

// read_gguf_header (what `staticformer run` reads of a GGUF file when its executable exists):
// read_gguf's model without the values, from the file's first bytes or, when the header does not
// fit in them, the whole file; the extents checked against the file's size, the values not read.
TEST(Gguf, HeaderAloneIsReadGgufsModelWithoutTheValues) {
  for (const char* name : {"llama_f32.gguf", "llama_f16.gguf", "llama_q8.gguf", "from_llama2c.gguf", "tiny_f16.gguf"})
    for (const std::uint64_t prefix : {std::uint64_t{4} << 20, std::uint64_t{64}}) {  // (64: read again whole)
      SCOPED_TRACE(std::string(name) + " " + std::to_string(prefix));
      const auto whole = io::read_gguf(data_dir + name);
      ASSERT_TRUE(whole) << whole.message();
      const auto h = io::read_gguf_header(data_dir + name, prefix);
      ASSERT_TRUE(h) << h.message();
      EXPECT_EQ(h->arch, whole->arch);
      EXPECT_EQ(h->version, whole->version);
      EXPECT_EQ(h->alignment, whole->alignment);
      EXPECT_EQ(h->name, whole->name);
      EXPECT_EQ(h->tokenizer_model, whole->tokenizer_model);
      EXPECT_EQ(h->tokens, whole->tokens);
      EXPECT_EQ(h->scores, whole->scores);
      EXPECT_EQ(h->token_types, whole->token_types);
      EXPECT_EQ(h->bos_id, whole->bos_id);
      EXPECT_EQ(h->eos_id, whole->eos_id);
      EXPECT_TRUE(h->tensors.empty() && h->quantized.empty() && h->half.empty());
    }
  const std::string dir = ::testing::TempDir();
  auto write = [&](const std::vector<std::byte>& b) {
    const std::string path = dir + "sf_gguf_header.gguf";
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    return path;
  };
  const std::vector<std::byte> good = read_bytes(data_dir + "llama_f32.gguf");
  auto b = good;
  b.resize(b.size() - 40);  // truncated: the extents are checked against the file's size
  std::string path = write(b);
  const auto cut = io::read_gguf_header(path);
  ASSERT_FALSE(cut);
  EXPECT_NE(std::string(cut.message()).find("truncated: tensor '"), std::string::npos) << cut.message();
  EXPECT_EQ(std::string(cut.message()), std::string(io::read_gguf(path).message()));
  b = good;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(b.data() + b.size() - 4, &nan, 4);  // a value that is not a number: only read_gguf reads values
  path = write(b);
  EXPECT_TRUE(io::read_gguf_header(path)) << io::read_gguf_header(path).message();
  EXPECT_NE(std::string(io::read_gguf(path).message()).find("is nan"), std::string::npos) << io::read_gguf(path).message();
  EXPECT_NE(std::string(io::read_gguf_header(data_dir + "no-such.gguf").message()).find("cannot open"), std::string::npos);
  std::remove(path.c_str());
}

TEST(Gguf, BadTokenizersAreRefused) {
  const std::vector<std::byte> good = read_bytes(data_dir + "llama_f32.gguf");
  auto b = good;
  // scores of another count: the array's count.
  const std::size_t s = find(b, "tokenizer.ggml.scores") + 21 + 4 + 4;
  put(b, s, 511, 8);
  EXPECT_REFUSED(b, "");  // (511 floats then: the next key is misread; refused either way)
  b = good;
  const std::size_t t = find(b, "tokenizer.ggml.tokens") + 21 + 4 + 4;
  put(b, t, 1ull << 40, 8);
  EXPECT_REFUSED(b, "key 'tokenizer.ggml.tokens': an array of 1099511627776 string needs at least");
  b = good;
  const std::size_t bos = find(b, "tokenizer.ggml.bos_token_id") + 27 + 4;
  put(b, bos, 512, 4);
  EXPECT_REFUSED(b, "tokenizer.ggml.bos_token_id is 512: not a token id (0 to 512)");
  b = good, put(b, bos, 5, 4);
  auto m = io::parse_gguf(b, "bos5");
  ASSERT_TRUE(m.is_ok()) << m.message();
  auto tk = io::gguf_tokenizer(*m);
  EXPECT_FALSE(tk.is_ok());
  EXPECT_NE(std::string(tk.message()).find("the bos/eos ids are 5/2"), std::string::npos) << tk.message();
}

}  // namespace
