// fuzz/gguf.cpp — libFuzzer harness: GGUF files (sf::io::parse_gguf, parse_gguf_header, the
// tokenizer, the checkpoint and the writer).
//
// The input is one file. When it is refused, the message must name it and GGUF. When it is
// accepted: every tensor has the shape of gguf_tensor_shapes(arch) and finite values, the Q8_0
// blocks dequantize to the tensors, and make a valid int8 checkpoint or a message; the float
// checkpoint of it is a valid safetensors file; written
// back (F32, and Q8_0 with its own blocks) it reads to the same architecture, tokens and values.
// Read without the float values of its Q8_0 tensors ({.dequantize = false}), it is refused or
// accepted alike, with the same message, the same blocks and the same int8 checkpoint.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "staticformer/io/gguf.hpp"
#include "staticformer/io/quantized.hpp"
#include "staticformer/io/safetensors.hpp"

namespace io = sf::io;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  auto m = io::parse_gguf(bytes, "fuzz.gguf");
  // The header alone (what `staticformer run` reads when its executable exists), of the whole input
  // and of its first half as the start of a file of the input's size: accepted whenever the whole
  // file is, with the same model but the values; of the first half, only when the whole input's
  // header is accepted too, with the same model.
  auto h = io::parse_gguf_header(bytes, size, "fuzz.gguf");
  auto half = io::parse_gguf_header(bytes.first(size / 2), size, "fuzz.gguf");
  SF_FUZZ_CHECK(h || std::strstr(h.message(), "'fuzz.gguf': GGUF: ") != nullptr, h.message());
  SF_FUZZ_CHECK(!m || h, h.message());
  SF_FUZZ_CHECK(!half || h, "the first half's header is accepted, the whole input's is not");
  for (const auto* x : {&h, &half})
    if (*x) {
      SF_FUZZ_CHECK((*x)->tensors.empty() && (*x)->quantized.empty() && (*x)->half.empty(), "header: values");
      SF_FUZZ_CHECK((*x)->arch == h->arch && (*x)->tokens == h->tokens && (*x)->scores == h->scores &&
                        (*x)->token_types == h->token_types && (*x)->bos_id == h->bos_id && (*x)->eos_id == h->eos_id,
                    "header: another model");
      if (m) SF_FUZZ_CHECK((*x)->arch == m->arch && (*x)->tokens == m->tokens, "header: not the file's model");
    }
  // Without the Q8_0 tensors' float values (what `staticformer run` reads for the int8 decoder):
  // the same verdict and message; accepted, the same blocks and the same int8 checkpoint or message.
  auto g = io::parse_gguf(bytes, "fuzz.gguf", {.dequantize = false});
  SF_FUZZ_CHECK(!g == !m, "blocks alone: another verdict");
  if (!m) {
    SF_FUZZ_CHECK(std::strstr(m.message(), "'fuzz.gguf': GGUF: ") != nullptr, m.message());
    SF_FUZZ_CHECK(std::strcmp(g.message(), m.message()) == 0, g.message());
    return 0;
  }
  SF_FUZZ_CHECK(g->arch == m->arch && g->quantized.size() == m->quantized.size(), "blocks alone: another model");
  for (std::size_t i = 0; i < m->quantized.size(); ++i)
    SF_FUZZ_CHECK(g->quantized[i].q == m->quantized[i].q && g->quantized[i].scales == m->quantized[i].scales,
                  "blocks alone: other blocks");
  if (!m->quantized.empty()) {
    auto a = io::gguf_int8_checkpoint_bytes(*m), b = io::gguf_int8_checkpoint_bytes(*g);
    SF_FUZZ_CHECK(!a == !b && (a ? *a == *b : std::strcmp(a.message(), b.message()) == 0),
                  "blocks alone: another int8 checkpoint");
  }
  const auto shapes = io::gguf_tensor_shapes(m->arch);
  SF_FUZZ_CHECK(shapes.size() == m->tensors.size(), "tensor count");
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const io::gguf_tensor& t = m->tensors[i];
    SF_FUZZ_CHECK(t.name == shapes[i].first && t.shape == shapes[i].second, "tensor name or shape");
    std::size_t n = 1;
    for (std::size_t d : t.shape) n *= d;
    SF_FUZZ_CHECK(t.values.size() == n, "tensor size");
    for (float v : t.values) SF_FUZZ_CHECK(std::isfinite(v), "a value not finite");
  }
  for (const io::gguf_q8& q : m->quantized) {
    const io::gguf_tensor* t = m->find(q.name);
    SF_FUZZ_CHECK(t != nullptr && q.q.size() == q.rows * q.cols && q.scales.size() * 32 == q.q.size(), "blocks");
    const bool as_is = t->shape.size() == 1 || q.name == "tok_emb.weight";
    for (std::size_t i = 0; i < q.q.size(); ++i) {
      const float w = t->values[as_is ? i : (i % q.cols) * q.rows + i / q.cols];
      SF_FUZZ_CHECK(w == static_cast<float>(q.q[i]) * q.scales[i / 32], "blocks do not dequantize");
    }
  }
  if (!m->tokens.empty()) {
    SF_FUZZ_CHECK(m->tokens.size() == m->arch.V, "tokens and vocabulary");
    (void)io::gguf_tokenizer(*m);  // ok or a message: either is fine
  }
  if (!m->quantized.empty()) {  // the int8 checkpoint of the blocks: ok and valid, or refused with a message
    auto q8 = io::gguf_int8_checkpoint_bytes(*m);
    if (q8) {
      auto qf = io::file::parse(*q8, "int8");
      SF_FUZZ_CHECK(qf.is_ok() && io::is_quantized(*qf), qf.message());
    } else {
      SF_FUZZ_CHECK(std::strstr(q8.message(), "GGUF: ") != nullptr, q8.message());
    }
  }
  auto ck = io::gguf_checkpoint_bytes(*m);
  SF_FUZZ_CHECK(ck.is_ok(), ck.message());
  auto f = io::file::parse(*ck, "ckpt");
  SF_FUZZ_CHECK(f.is_ok(), f.message());
  for (io::gguf_type type : {io::gguf_type::F32, io::gguf_type::Q8_0}) {
    auto w = io::serialize_gguf(*m, {.type = type});
    if (!w && type == io::gguf_type::Q8_0 && std::strstr(w.message(), "Q8_0 scale (|value| / 127) beyond float16's range")) {
      float amax = 0;  // refused only when a value is too large for a float16 scale
      for (const io::gguf_tensor& t : m->tensors)
        for (float v : t.values) amax = std::max(amax, std::fabs(v));
      SF_FUZZ_CHECK(amax / 127.0f > 65504.0f, w.message());
      continue;
    }
    SF_FUZZ_CHECK(w.is_ok(), w.message());
    auto back = io::parse_gguf(*w, "written");
    SF_FUZZ_CHECK(back.is_ok(), back.message());
    SF_FUZZ_CHECK(back->arch == m->arch, "written: architecture");
    SF_FUZZ_CHECK(back->tokens == m->tokens && back->scores == m->scores, "written: tokens");
    SF_FUZZ_CHECK(back->tensors.size() == m->tensors.size(), "written: tensors");
    for (std::size_t i = 0; i < m->tensors.size(); ++i) {
      const io::gguf_q8* own = m->find_q8(m->tensors[i].name);
      // F32 is exact; Q8_0 keeps a Q8_0 tensor's blocks (so its values) and quantizes the others.
      if (type == io::gguf_type::F32 || own)
        SF_FUZZ_CHECK(back->tensors[i].values == m->tensors[i].values, "written: values");
    }
  }
  return 0;
}
