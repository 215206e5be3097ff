// fuzz/llama2c.cpp — libFuzzer harness: llama2.c's model files (sf::io::parse_llama2c and the writer).
//
// The input is one file of any version. When it is refused, the message must name llama2.c. When it
// is accepted: every tensor has the shape of llama2c_tensor_shapes(arch) and finite values, a
// version-2 file's groups dequantize to the tensors; writing it back at its own version gives the
// same bytes (version 0 with its own RoPE tables, version 2 with its own groups); writing it at
// version 1 reads back to the same architecture and the same values. Read without the float values
// of its Q8_0 matrices ({.dequantize = false}), it is refused or accepted alike, with the same
// message, the same groups and the same int8 checkpoint.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "staticformer/io/llama2c.hpp"

namespace io = sf::io;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  auto m = io::parse_llama2c(bytes, "fuzz.bin");
  // Without the Q8_0 matrices' float values (what `staticformer run` reads for the int8 decoder):
  // the same verdict and message; accepted, the same groups and the same int8 checkpoint or message.
  auto g = io::parse_llama2c(bytes, "fuzz.bin", {.dequantize = false});
  SF_FUZZ_CHECK(!g == !m, "groups alone: another verdict");
  if (!m) {
    SF_FUZZ_CHECK(std::strstr(m.message(), "'fuzz.bin': llama2.c") != nullptr, m.message());
    SF_FUZZ_CHECK(std::strcmp(g.message(), m.message()) == 0, g.message());
    return 0;
  }
  SF_FUZZ_CHECK(g->arch == m->arch && g->version == m->version && g->quantized.size() == m->quantized.size(),
                "groups alone: another model");
  for (std::size_t i = 0; i < m->quantized.size(); ++i)
    SF_FUZZ_CHECK(g->quantized[i].q == m->quantized[i].q && g->quantized[i].scales == m->quantized[i].scales,
                  "groups alone: other groups");
  if (m->version == 2) {
    auto a = io::llama2c_int8_checkpoint_bytes(*m), b = io::llama2c_int8_checkpoint_bytes(*g);
    SF_FUZZ_CHECK(!a == !b && (a ? *a == *b : std::strcmp(a.message(), b.message()) == 0),
                  "groups alone: another int8 checkpoint");
  }
  SF_FUZZ_CHECK(io::llama2c_check_arch(m->arch).is_ok(), "an accepted file of an architecture llama2.c cannot hold");
  const auto shapes = io::llama2c_tensor_shapes(m->arch);
  SF_FUZZ_CHECK(shapes.size() == m->tensors.size(), "tensor count");
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const io::llama2c_tensor& t = m->tensors[i];
    SF_FUZZ_CHECK(t.name == shapes[i].first && t.shape == shapes[i].second, "tensor name or shape");
    std::size_t n = 1;
    for (std::size_t d : t.shape) n *= d;
    SF_FUZZ_CHECK(t.values.size() == n, "tensor size");
    for (float v : t.values) SF_FUZZ_CHECK(std::isfinite(v), "a value not finite");
  }
  for (const io::llama2c_q8& q : m->quantized) {
    const io::llama2c_tensor* t = m->find(q.name);
    SF_FUZZ_CHECK(t != nullptr && q.q.size() == q.rows * q.cols && q.scales.size() * m->group_size == q.q.size(),
                  "groups");
    const bool table = q.name == "tok_emb.weight";
    for (std::size_t i = 0; i < q.q.size(); ++i) {
      const std::size_t r = i / q.cols, c = i % q.cols;
      const float w = t->values[table ? i : c * q.rows + r];
      SF_FUZZ_CHECK(w == static_cast<float>(q.q[i]) * q.scales[i / m->group_size], "groups do not dequantize");
    }
  }
  auto same = io::serialize_llama2c(*m, {.version = m->version, .group_size = m->group_size ? m->group_size : 64});
  SF_FUZZ_CHECK(same.is_ok(), same.message());
  SF_FUZZ_CHECK(same->size() == size && std::memcmp(same->data(), data, size) == 0, "not written back byte for byte");
  auto v1 = io::serialize_llama2c(*m, {.version = 1});
  SF_FUZZ_CHECK(v1.is_ok(), v1.message());
  auto back = io::parse_llama2c(*v1, "v1");
  SF_FUZZ_CHECK(back.is_ok(), back.message());
  SF_FUZZ_CHECK(back->arch == m->arch && back->tensors.size() == m->tensors.size(), "version 1 architecture");
  for (std::size_t i = 0; i < m->tensors.size(); ++i)
    SF_FUZZ_CHECK(back->tensors[i].values == m->tensors[i].values, "version 1 values");
  return 0;
}
