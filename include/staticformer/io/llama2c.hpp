// staticformer/io/llama2c.hpp — llama2.c's model files (versions 0, 1 and 2), read and written.
// Compiled into staticformer::io (src/io/llama2c.cpp); docs/formats.md describes the files.
//
//   sf::io::result<sf::io::llama2c_model> m = sf::io::read_llama2c("stories15M.bin");
//   if (!m) puts(m.message());            // names the file, the field or the tensor that does not fit
//   m->arch                               // sf::arch: gated silu, rmsnorm 1e-5, rope 10000, no bias
//   m->find("blocks.0.attn.wq")->values   // float32, staticformer's name and [in, out] layout
//   sf::io::save_llama2c_as_checkpoint(*m, "model.safetensors");         // docs/model.md's checkpoint
//   sf::io::llama2c_int8_checkpoint_bytes(*m)                            // a version 2 file's groups, int8
//   sf::io::write_llama2c("out.bin", *m, {.version = 2, .group_size = 64}); // export.py's bytes
//   auto back = sf::io::llama2c_from_checkpoint("model.safetensors");    // and the other way
//
// The versions (llama2.c's export.py: legacy_export, version1_export, version2_export):
//   0  run.c's legacy file: 7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size,
//      seq_len; vocab_size < 0: a classifier of its own), float32 tensors, RoPE's cos and sin
//      tables ([seq_len, head_size/2] each, which run.c skips), then the classifier if any
//   1  a 256-byte header (magic "ak42" = 0x616b3432, version, the 7 int32, a shared-classifier
//      byte, zeros), then float32 tensors: the norms first
//   2  as 1 plus the group size after the flag byte; the norms float32, every matrix (token
//      embedding and classifier too) Q8_0: its int8 values, then one float32 scale per group
//      of group_size consecutive values of the [out, in] matrix (runq.c)
// llama2.c stores a linear layer PyTorch's way, [out, in]; staticformer's matrices are [in, out]:
// reading and writing transpose (tok_emb stays [V, D]).
//
// Everything is checked before use: the header's fields (positive, n_heads dividing dim,
// n_kv_heads dividing n_heads, an even head size, seq_len at most max_seq_len, a known version, a
// zero padding), every size computed without overflow, and the file's size exactly what the header
// implies — a truncated or oversized file is refused naming the tensor that does not fit, before
// anything past the header is read. Values that are NaN or infinite, negative scales and the int8
// value -128 (which export.py never writes) are refused too. Nothing throws.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "staticformer/config.hpp"
#include "staticformer/io/safetensors_format.hpp"
#include "staticformer/status.hpp"

namespace sf::io {

inline constexpr std::uint32_t llama2c_magic = 0x616b3432;  // "ak42" (little-endian "24ka")
inline constexpr std::size_t llama2c_header_bytes = 256;    // versions 1 and 2
inline constexpr std::size_t llama2c_legacy_header_bytes = 28;  // version 0: 7 int32
inline constexpr std::size_t llama2c_max_seq_len = 1u << 20;    // a bound on seq_len (LLaMA 2: 4096)
inline constexpr std::uint64_t llama2c_max_file_bytes = 8ull << 30;  // 8 GiB: read_llama2c's limit

// One tensor in staticformer's name, shape and layout (docs/model.md): float32, row-major.
struct llama2c_tensor {
  std::string name;
  shape_t shape;
  std::vector<float> values;
};

// The element of `items` (tensors of any of the LLaMA-family formats: anything with a `name`) named
// `name`, or nullptr: the models' find and find_q8.
template <class T>
const T* find_named(const std::vector<T>& items, std::string_view name) {
  for (const T& t : items)
    if (t.name == name) return &t;
  return nullptr;
}

// One matrix of a version-2 file as stored: llama2.c's [rows = out, cols = in] layout (tok_emb:
// [V, D]), q row-major, one scale per group of group_size consecutive values of q (row-major:
// since cols is a multiple of the group size, a group lies within one row, along `in`).
struct llama2c_q8 {
  std::string name;  // staticformer's name of the tensor
  std::size_t rows = 0, cols = 0;
  std::vector<std::int8_t> q;
  std::vector<float> scales;  // rows * cols / group_size; w = q * scale
};

struct llama2c_model {
  sf::arch arch;                         // tied = the classifier is the token embedding
  int version = 1;                       // of the file read (0, 1, 2)
  std::size_t group_size = 0;            // version 2's Q8_0 group size; 0 otherwise
  std::vector<llama2c_tensor> tensors;   // docs/model.md's order (tok_emb, blocks..., norm_f, lm_head)
  std::vector<llama2c_q8> quantized;     // version 2: every matrix's groups, in the file's order
  std::vector<float> rope_cos, rope_sin; // version 0: the file's tables, [seq_len, head_size/2]

  const llama2c_tensor* find(std::string_view name) const;
  const llama2c_q8* find_q8(std::string_view name) const;
};

// Ok when llama2.c can hold the architecture: ffn gated, silu, rmsnorm with norm_eps 1e-5, rope
// with rope_base 10000, no bias, every size positive and an int32, H dividing D, kv() dividing H,
// an even head size, T at most llama2c_max_seq_len. Else what does not fit, e.g.
// "llama2.c holds only rmsnorm models (this one: layernorm)".
sf::status llama2c_check_arch(const sf::arch& a);

// The tensors (names and shapes, in docs/model.md's order) of a llama2.c architecture.
std::vector<std::pair<std::string, shape_t>> llama2c_tensor_shapes(const sf::arch& a);

// What read_llama2c makes of a version-2 file's Q8_0 matrices besides their groups (quantized).
struct llama2c_read_options {
  // true: their float values too (q × scale), in tensors. false: those tensors' values are left
  // empty (their names and shapes are there): for what reads the groups alone, as the int8
  // checkpoint does (llama2c_int8_checkpoint_bytes), without the floats' memory (four times the
  // groups'). The checks are the same.
  bool dequantize = true;
};

// Reads a file of any version (the magic tells 1 and 2 from 0). `origin` names memory in messages.
result<llama2c_model> read_llama2c(const std::string& path, const llama2c_read_options& options = {});
result<llama2c_model> parse_llama2c(std::span<const std::byte> bytes, const std::string& origin = "<memory>",
                                    const llama2c_read_options& options = {});
// The header alone, checked as read_llama2c checks it (the file's size is the one the header
// implies): a model with arch, version and group_size, and no tensors. The values are not read.
result<llama2c_model> read_llama2c_header(const std::string& path);

struct llama2c_write_options {
  int version = 1;              // 0, 1 or 2
  std::size_t group_size = 64;  // version 2 (export.py's default); must divide dim and hidden_dim
};

// The bytes of llama2.c's export.py for these weights (versions 0 and 1: byte for byte; version 2:
// export.py's quantization — scale = max|w| / 127 in float32, q = round-half-even(w / scale) —
// or, when m.quantized holds groups of this group size, those groups as they are). Version 0's
// RoPE tables are m.rope_cos/rope_sin when they have the right size, else computed as model.py does.
// m.tensors must hold exactly llama2c_tensor_shapes(m.arch) (any order), every value finite.
result<std::vector<std::byte>> serialize_llama2c(const llama2c_model& m, const llama2c_write_options& o = {});
// Writes path + ".tmp", then renames it over path.
sf::status write_llama2c(const std::string& path, const llama2c_model& m, const llama2c_write_options& o = {});
sf::status write_llama2c(const std::string& path, const sf::arch& a, const std::vector<llama2c_tensor>& tensors,
                         int version, std::size_t group_size = 64);

// The same model in RoPE's other pair convention (a.rope_pairs becomes `to`): within each head the
// columns of blocks.*.attn.wq and wk are permuted — column j of the halves model (pairs (i, i+d_k/2),
// Hugging Face's rotate_half) is column 2j (j < d_k/2) or 2(j-d_k/2)+1 of the adjacent one (pairs
// (2i, 2i+1), Meta's and llama2.c's). The queries and keys are permuted alike, so every attention
// score is the same sum (in another order: equal up to float rounding). Nothing else changes.
sf::status convert_rope_pairs(sf::arch& a, std::vector<llama2c_tensor>& tensors, sf::rope_pairs_kind to);

// The int8 checkpoint (io/quantized.hpp: Q8_0 in groups of 32 along each matrix's input axis,
// [out, in]) of a LLaMA-family model whose every matrix is `quantized` in groups of `group_size`
// (a multiple of 32) along its input axis — llama2.c's version 2, GGUF's Q8_0 (32) —, the norms
// from `tensors`, without requantizing: each 32-value part of a group takes the group's scale, so
// the int8 values and every weight q · scale are the given ones. Refused: a matrix without groups
// ("was not Q8_0": quantize the float weights instead), a group size that is not a multiple of 32,
// the int8 value -128, a scale that is negative or not finite.
result<std::vector<std::byte>> q8_checkpoint_bytes(const sf::arch& a, const std::vector<llama2c_tensor>& tensors,
                                                   const std::vector<llama2c_q8>& quantized, std::size_t group_size,
                                                   const metadata_map& extra = {});

// A float checkpoint (docs/model.md) of a LLaMA-family model of any architecture (llama2.c's,
// Hugging Face's): config_metadata(a), `extra` (no configuration key), and the tensors, which
// must be exactly llama2c_tensor_shapes(a) in names and shapes (any order).
result<std::vector<std::byte>> model_checkpoint_bytes(const sf::arch& a, const std::vector<llama2c_tensor>& tensors,
                                                      const metadata_map& extra = {});
// The same checkpoint as a file read in place (writer::view): what file::parse of
// model_checkpoint_bytes gives, without the copy; it reads `tensors`, which must outlive it.
result<file> model_checkpoint_file(const sf::arch& a, const std::vector<llama2c_tensor>& tensors,
                                   const metadata_map& extra = {}, const std::string& origin = "<memory>");
// The float tensors of a LLaMA-family checkpoint of architecture a: exactly llama2c_tensor_shapes(a),
// each F32 of its shape with finite values (messages name f's origin and the tensor).
result<std::vector<llama2c_tensor>> read_checkpoint_tensors(const file& f, const sf::arch& a);
// A model as docs/model.md's float checkpoint: config_metadata(m.arch) plus `extra`, and the
// float tensors (a version-2 model's dequantized values).
sf::status save_llama2c_as_checkpoint(const llama2c_model& m, const std::string& path, const metadata_map& extra = {});
// The same checkpoint's bytes, in memory (sf::io::file::parse reads them).
result<std::vector<std::byte>> llama2c_checkpoint_bytes(const llama2c_model& m, const metadata_map& extra = {});
// A version-2 model as staticformer's int8 checkpoint (io/quantized.hpp: Q8_0 in groups of 32
// along each matrix's input axis, [out, in] like llama2.c's), in memory, without requantizing:
// llama2.c's groups run along the same axis, so a group size of 32 is copied and a multiple of 32
// (export.py's default 64) gives each of its 32-value halves (or parts) the group's scale — the
// int8 values and every weight q·scale are the file's. Refused when m holds no Q8_0 groups
// (version 0 or 1) or its group size is not a multiple of 32 (then quantize the float weights:
// llama2c_checkpoint_bytes, sf::quantize).
result<std::vector<std::byte>> llama2c_int8_checkpoint_bytes(const llama2c_model& m, const metadata_map& extra = {});
// The other way: a float checkpoint of an architecture llama2.c can hold (llama2c_check_arch) as
// a model to write with write_llama2c (version 1 unless changed); a checkpoint with RoPE's halves
// pairs (from Hugging Face) is converted to adjacent pairs (convert_rope_pairs).
result<llama2c_model> llama2c_from_checkpoint(const file& f);
result<llama2c_model> llama2c_from_checkpoint(const std::string& path);

}  // namespace sf::io
