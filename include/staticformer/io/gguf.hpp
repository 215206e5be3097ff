// staticformer/io/gguf.hpp — GGUF files (llama.cpp's format, versions 2 and 3) of architecture
// `llama`: read, checked, as staticformer's model; and written (F32 or Q8_0).
// Compiled into staticformer::io (src/io/gguf.cpp); docs/formats.md describes the files.
//
//   sf::io::result<sf::io::gguf_model> m = sf::io::read_gguf("model.gguf");
//   if (!m) puts(m.message());             // names the file, the key or the tensor that does not fit
//   m->arch                                // sf::arch from the llama.* keys (gated silu rmsnorm rope)
//   m->find("blocks.0.attn.wq")->values    // float32, staticformer's name and [in, out] layout
//   sf::io::gguf_tokenizer(*m)             // tokenizer.ggml.* as llama2.c's BPE tokenizer
//   sf::io::gguf_checkpoint_bytes(*m, extra)   // docs/model.md's float checkpoint, in memory
//   sf::io::write_gguf("out.gguf", *m, {.type = sf::io::gguf_type::Q8_0});
//
// The file (little-endian): "GGUF", a uint32 version (2 or 3; version 1's 32-bit counts are
// refused), the uint64 tensor and key-value counts, the key-value pairs (a string key, a uint32
// value type, the value: integers, float32/64, bool, string = uint64 length + bytes, array =
// uint32 element type + uint64 count + elements), the tensor infos (name, uint32 n_dims <= 4,
// n_dims uint64 extents with the fastest-varying first, uint32 ggml type, uint64 offset into the
// data), padding to general.alignment (default 32), the data. A ggml matrix of extents [in, out]
// is PyTorch's [out, in] row-major (Q8_0: blocks of 32 along `in`: a float16 scale d, then 32
// int8, w = q * d); staticformer's matrices are [in, out]: reading transposes (tok_emb stays [V, D]).
// GGUF llama files hold Q and K in Meta's order (RoPE on adjacent pairs: llama.cpp's converters
// permute Hugging Face's rotate-half rows back), staticformer's default rope_pairs adjacent.
//
// Everything is checked before use, with overflow-checked arithmetic: every count against the
// bytes left, every string length, the alignment (a power of two, 8 to 2^16), every tensor's
// n_dims, extents and size, its offset (aligned, inside the file, no two tensors overlapping);
// unknown value or tensor types, duplicate keys or tensors, keys of another architecture's
// model, missing or unexpected tensors — each refused with a message naming the file and what
// does not fit. Values that are NaN or infinite are refused. Nothing throws.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "staticformer/config.hpp"
#include "staticformer/io/safetensors_format.hpp"
#include "staticformer/io/llama2c.hpp"
#include "staticformer/io/tokenizer_bin.hpp"
#include "staticformer/status.hpp"

namespace sf::io {

inline constexpr std::uint32_t gguf_magic = 0x46554747;           // "GGUF" read as a little-endian uint32
inline constexpr std::uint64_t gguf_default_alignment = 32;
inline constexpr std::uint64_t gguf_max_file_bytes = 8ull << 30;  // 8 GiB: read_gguf's limit
inline constexpr std::size_t gguf_max_context = 1u << 20;         // a bound on llama.context_length

// The ggml tensor types read and written; every other is refused by name.
enum class gguf_type : std::uint32_t { F32 = 0, F16 = 1, Q8_0 = 8 };

// One tensor in staticformer's name, shape and layout (docs/model.md): float32, row-major.
using gguf_tensor = llama2c_tensor;

// One Q8_0 tensor as stored: [rows, cols] = ggml's [ne1, ne0] (a matrix's [out, in]; tok_emb
// [V, D]), q row-major, one scale (the block's float16 d, as float) per 32 consecutive values.
using gguf_q8 = llama2c_q8;

struct gguf_model {
  sf::arch arch;                     // tied when there is no output.weight
  std::uint32_t version = 3;         // of the file read
  std::uint64_t alignment = gguf_default_alignment;
  std::string name;                  // general.name, when given
  std::vector<gguf_tensor> tensors;  // docs/model.md's order
  std::vector<gguf_q8> quantized;    // the Q8_0 tensors' blocks, in docs/model.md's order
  std::vector<std::string> half;     // the names of the tensors the file held as F16 (their values exact in float16)
  // tokenizer.ggml.*: model ("llama": sentencepiece's BPE), tokens, scores, token_type, and the
  // bos/eos ids (-1: not given). Empty when the file holds no tokens.
  std::string tokenizer_model;
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<std::int32_t> token_types;
  std::int64_t bos_id = -1, eos_id = -1;

  const gguf_tensor* find(std::string_view name) const;
  const gguf_q8* find_q8(std::string_view name) const;
};

// The tensors (staticformer's names and shapes, docs/model.md's order) of a llama architecture.
inline std::vector<std::pair<std::string, shape_t>> gguf_tensor_shapes(const sf::arch& a) {
  return llama2c_tensor_shapes(a);
}

// What read_gguf makes of Q8_0 tensors besides their blocks (quantized).
struct gguf_read_options {
  // true: their float values too (q × d), in tensors. false: those tensors' values are left empty
  // (their names and shapes are there): for what reads the blocks alone, as the int8 checkpoint
  // does (gguf_int8_checkpoint_bytes), without the floats' memory (four times the blocks'). The
  // checks are the same.
  bool dequantize = true;
};

result<gguf_model> read_gguf(const std::string& path, const gguf_read_options& options = {});
result<gguf_model> parse_gguf(std::span<const std::byte> bytes, const std::string& origin = "<memory>",
                              const gguf_read_options& options = {});
// Everything read_gguf reads but the tensors' values (tensors, quantized and half stay empty),
// with the same checks of the header, the extents and the file's size; the values are not read,
// only the first `prefix` bytes of the file (4 MiB: e.g. a tokenizer of 200,000 pieces), or the
// whole file when the header is longer or refused (then read_gguf's message, but for the values).
result<gguf_model> read_gguf_header(const std::string& path, std::uint64_t prefix = std::uint64_t{4} << 20);
// The same of a file of file_size bytes from its first bytes (at least the header's: else refused).
result<gguf_model> parse_gguf_header(std::span<const std::byte> bytes, std::uint64_t file_size,
                                     const std::string& origin = "<memory>");

// The file's tokenizer as llama2.c's tokenizer.bin, as tools/tokenizer_bin.py makes it from the
// sentencepiece model: U+2581 becomes ' ', the bos and eos pieces "\n<s>\n" and "\n</s>\n", the
// byte pieces <0xXX> stay. Refused unless tokenizer.ggml.model is "llama" with as many scores as
// tokens, and bos/eos (when given) are 1 and 2 (sf::bpe_tokenizer's).
result<tokenizer_bin> gguf_tokenizer(const gguf_model& m);

// The other way: m.tokens, scores, token types and bos/eos (1, 2) from llama2.c's tokenizer, as
// llama.cpp's converter stores sentencepiece's pieces: ' ' becomes U+2581, "\n<s>\n" and
// "\n</s>\n" (ids 1 and 2) "<s>" and "</s>"; types: 2 (unknown) for id 0 "<unk>", 3 (control)
// for 1 and 2, 6 (byte) for <0xXX>, else 1 (normal). gguf_tokenizer gives the same tokenizer back.
void gguf_set_tokenizer(gguf_model& m, const tokenizer_bin& t);

// A float checkpoint (docs/model.md) of a llama architecture (gated silu, rmsnorm, rope, no bias)
// as a model to write with write_gguf (RoPE's halves pairs, a Hugging Face model's, permuted to
// GGUF's adjacent ones: convert_rope_pairs); its BPE tokenizer, if any, as the tokenizer.
result<gguf_model> gguf_from_checkpoint(const file& f);

// docs/model.md's float checkpoint of the model: config_metadata(m.arch) plus `extra`.
result<std::vector<std::byte>> gguf_checkpoint_bytes(const gguf_model& m, const metadata_map& extra = {});

// A model whose every matrix (tok_emb and lm_head too) was Q8_0 in the file as staticformer's int8
// checkpoint (io/quantized.hpp: groups of 32 along the input axis, [out, in]), in memory, without
// requantizing: the file's blocks are the checkpoint's groups, so the int8 values and every weight
// q·d are the file's. Refused when a matrix was not Q8_0, or holds the int8 value -128 or a
// negative scale (the int8 checkpoint's range is symmetric) — then quantize the float weights.
result<std::vector<std::byte>> gguf_int8_checkpoint_bytes(const gguf_model& m, const metadata_map& extra = {});

struct gguf_write_options {
  gguf_type type = gguf_type::F32;  // of the matrices and tok_emb (F32, F16 or Q8_0); the norms are F32
};

// A GGUF version 3 file of the model: general.architecture llama, the llama.* keys, the
// tokenizer when m.tokens is not empty, the tensors in ggml's names and layout. F16 rounds each
// value to the nearest float16 (ties to even; a magnitude of 65520 or more is refused). Q8_0 quantizes
// as gguf-py does (d = max|w| / 127 in float32, q = round-half-away(w / d), d stored as float16),
// or copies m.quantized's blocks of a tensor when given. A matrix whose input width is not a
// multiple of 32 is written F32. m.tensors must hold exactly gguf_tensor_shapes(m.arch).
result<std::vector<std::byte>> serialize_gguf(const gguf_model& m, const gguf_write_options& o = {});
sf::status write_gguf(const std::string& path, const gguf_model& m, const gguf_write_options& o = {});

}  // namespace sf::io
