// staticformer/io/hf_llama.hpp — Hugging Face Llama directories (transformers' LlamaForCausalLM
// save_pretrained), read, and sentencepiece's tokenizer.model or tokenizers' tokenizer.json as
// llama2.c's tokenizer. Compiled into staticformer::io (src/io/hf_llama.cpp); docs/formats.md
// describes the files.
//
//   sf::io::result<sf::io::hf_llama_model> m = sf::io::read_hf_llama("TinyModel/");
//   if (!m) puts(m.message());        // names the file, the field or the tensor that does not fit
//   m->arch                           // gated silu rmsnorm rope, rope_pairs halves (rotate_half)
//   m->find("blocks.0.attn.wq")       // float32, staticformer's name and [in, out] layout
//   m->tokenizer                      // tokenizer.model's (else tokenizer.json's) pieces and scores
//   sf::io::model_checkpoint_bytes(m->arch, m->tensors, extra)   // docs/model.md's checkpoint (llama2c.hpp)
//
// The directory: config.json (model_type "llama"; hidden_size, intermediate_size,
// num_attention_heads, num_key_value_heads, num_hidden_layers, rms_norm_eps, rope_theta,
// vocab_size, max_position_embeddings, tie_word_embeddings, hidden_act "silu"; no rope_scaling,
// attention_bias or mlp_bias), model.safetensors (F32, F16 or BF16 tensors, converted to float
// exactly) or, when there is no model.safetensors (transformers' choice too), the shards named by
// model.safetensors.index.json (save_pretrained(max_shard_size=...): every tensor in the shard its
// weight_map names, in no other, none left out of the map; shards are plain file names in the
// directory; metadata.total_size, when given, the shards' tensor bytes), and optionally
// tokenizer.model (sentencepiece's model, the Llama tokenizer) or else tokenizer.json
// (LlamaTokenizerFast's: BPE with byte_fallback, its merges' ranks as llama2.c's scores — see
// parse_hf_tokenizer_json; tokenizer.model is read when both are there). transformers' Llama rotates
// the two halves of each head (rotate_half): the architecture says rope_pairs halves and the weights
// are used as they are.
// Names: model.embed_tokens → tok_emb, model.layers.N.self_attn.{q,k,v,o}_proj → blocks.N.attn.w{q,k,v,o},
// mlp.gate_proj / up_proj / down_proj → ffn.w1 / w3 / w2, input_layernorm → norm1,
// post_attention_layernorm → norm2, model.norm → norm_f, lm_head → lm_head; a linear layer is
// stored [out, in] and transposed to staticformer's [in, out].
// Everything is checked before use: the fields (present where transformers has no default,
// positive integers, heads dividing the width, key/value heads dividing the heads, an even head
// size), every tensor's presence, dtype and shape, no tensor left over, the values finite. Nothing
// throws.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "staticformer/config.hpp"
#include "staticformer/io/llama2c.hpp"
#include "staticformer/io/safetensors_format.hpp"
#include "staticformer/io/tokenizer_bin.hpp"
#include "staticformer/status.hpp"

namespace sf::io {

inline constexpr std::uint64_t hf_max_config_bytes = 1u << 20;      // config.json
inline constexpr std::uint64_t sentencepiece_max_bytes = 64u << 20;  // tokenizer.model
inline constexpr std::uint64_t hf_max_index_bytes = 64u << 20;       // model.safetensors.index.json
inline constexpr std::uint64_t hf_max_tokenizer_json_bytes = 64u << 20;  // tokenizer.json
inline constexpr int hf_max_json_depth = 64;                          // the nesting of those two

struct hf_llama_model {
  sf::arch arch;
  std::string dtype;                        // the file's tensors: "F32", "F16" or "BF16"
  std::vector<llama2c_tensor> tensors;      // llama2c_tensor_shapes(arch)'s order and names, float32
  std::optional<tokenizer_bin> tokenizer;   // tokenizer.model, else tokenizer.json, when present
  std::string weights_file;                 // "model.safetensors" or "model.safetensors.index.json"
  std::string tokenizer_file;               // "tokenizer.model", "tokenizer.json" or "" (none)

  const llama2c_tensor* find(std::string_view name) const;
};

// The architecture of a config.json's text (`origin` names it in messages).
result<sf::arch> hf_llama_config(std::string_view json_text, const std::string& origin = "config.json");
// The architecture of dir/config.json (at most hf_max_config_bytes).
result<sf::arch> read_hf_llama_config(const std::string& dir);
// Reads a directory as above.
result<hf_llama_model> read_hf_llama(const std::string& dir);
// A sharded model's index (model.safetensors.index.json's text): the weight map's tensor → shard
// file, each shard a plain file name (no '/', '\\', NUL, not "." or ".."), no tensor named twice;
// metadata.total_size when present (a non-negative integer).
struct hf_weight_index {
  std::vector<std::pair<std::string, std::string>> weight_map;  // (tensor, shard), by tensor name
  std::vector<std::string> shards;                              // the distinct shards, sorted
  std::optional<std::uint64_t> total_size;
};
result<hf_weight_index> parse_hf_weight_index(std::string_view json_text, const std::string& origin = "model.safetensors.index.json");

// tokenizers' tokenizer.json of a Llama tokenizer (LlamaTokenizerFast) as llama2.c's tokenizer, with
// the same ids as transformers' encoding (and the same pieces as the tokenizer.model it was
// converted from): model BPE with byte_fallback, vocab ids 0..V-1 with <unk>, <s>, </s> at 0, 1, 2
// and <0x00>..<0xFF> at 3..258; the text normalized as Llama's (normalizer Prepend "▁" + Replace
// " " → "▁", or no normalizer and pre_tokenizer Metaspace "▁" with split false, prepend_scheme first
// or always — which prepends no "▁" to a text that starts with a space, where llama2.c's encoder
// does); added tokens only <unk>, <s>, </s>. Scores: a piece that merges make gets minus the index
// of its first merge's group (the merges ordered by rank, a group the adjacent merges that make the
// same piece), so run.c's highest-score-first merging is the merges' rank order; other pieces come
// after in id order, the byte and special pieces score 0 (sentencepiece's scores, for a tokenizer
// converted from one). Refused, with the merge or piece named, when that cannot be exact: a merge
// whose pieces are not in the vocabulary, or that involves <unk>, <s>, </s>; a piece made by merges
// apart (not adjacent in rank); a piece that splits into two pieces with no merge of them (llama2.c's
// encoder would merge them); two pieces equal once "▁" is a space; a piece longer than 256 bytes.
result<tokenizer_bin> parse_hf_tokenizer_json(std::string_view json_text, const std::string& origin = "tokenizer.json");
result<tokenizer_bin> read_hf_tokenizer_json(const std::string& path);  // at most hf_max_tokenizer_json_bytes

// Whether `path` is a directory holding config.json (a Hugging Face model directory).
bool is_hf_directory(const std::string& path);

// ------------------------------------------------------------------ writing
// The files of a Hugging Face Llama directory, as transformers' save_pretrained and LlamaTokenizer
// write them (float32 unless `type` says otherwise): config.json (LlamaConfig's fields), model.safetensors (Hugging Face's names,
// linear layers [out, in], metadata {"format": "pt"}; a tied model has no lm_head.weight) and, with a
// tokenizer, tokenizer.model (sentencepiece's protobuf: BPE with byte fallback, ids 0/1/2 = <unk>,
// <s>, </s>, the Llama normalizer: a dummy prefix, no whitespace folding), tokenizer.json (the fast
// tokenizer's, hf_tokenizer_json), tokenizer_config.json and special_tokens_map.json. `tensors` are a LLaMA-family model's (gated silu, rmsnorm, rope, no bias):
// exactly llama2c_tensor_shapes(a), staticformer's names and [in, out] layout; adjacent RoPE pairs
// (llama2.c's, GGUF's) are permuted to Hugging Face's halves (convert_rope_pairs: the same model).
// A tokenizer must have a's vocabulary size.
struct hf_llama_files {
  std::string config_json, tokenizer_config_json, special_tokens_map_json, tokenizer_json;  // (the last three: with a tokenizer)
  // The weights' files: {"model.safetensors", bytes}, or transformers' shards
  // {"model-00001-of-00003.safetensors", bytes}, … with weights_index_json (else empty).
  std::vector<std::pair<std::string, std::vector<std::byte>>> weights;
  std::string weights_index_json;  // model.safetensors.index.json
  std::vector<std::byte> tokenizer_model;
};
// transformers' save_pretrained default max_shard_size, "10GB".
inline constexpr std::uint64_t hf_default_max_shard_bytes = 10'000'000'000;
// `type` F16 or BF16: the tensors are float16 or bfloat16 (each value rounded to the nearest, ties
// to even, as torch's .to(dtype); a value that would become ±inf is refused with its tensor and
// element) and config.json says "torch_dtype": "float16" or "bfloat16". Sharded as transformers'
// save_pretrained(max_shard_size=max_shard_bytes) shards (shard_checkpoint): the tensors in its
// state_dict order, a tensor that would take its shard past max_shard_bytes starting the next
// (a shard holds at least one); one shard is model.safetensors, several are
// model-0000k-of-0000n.safetensors with model.safetensors.index.json ({"metadata": {"total_size":
// the tensors' bytes}, "weight_map": tensor → shard}, sorted keys, indent 2): transformers' files
// byte for byte.
result<hf_llama_files> hf_llama_directory(sf::arch a, std::vector<llama2c_tensor> tensors, const tokenizer_bin* tokenizer,
                                          dtype type = dtype::F32,
                                          std::uint64_t max_shard_bytes = hf_default_max_shard_bytes);
// transformers' torch_dtype names of the types written: "float32", "float16", "bfloat16" (F32, F16,
// BF16); hf_dtype_name gives nullptr for any other type, hf_dtype_named nullopt for any other name.
const char* hf_dtype_name(dtype type);
std::optional<dtype> hf_dtype_named(std::string_view name);
// Writes those files into `dir` (created if absent; each file written whole, then renamed into place;
// config.json last). Weights of an earlier write that this one does not replace are removed first:
// model.safetensors, model.safetensors.index.json and model-*-of-*.safetensors shards.
sf::status write_hf_llama(const std::string& dir, const sf::arch& a, std::vector<llama2c_tensor> tensors,
                          const tokenizer_bin* tokenizer, dtype type = dtype::F32,
                          std::uint64_t max_shard_bytes = hf_default_max_shard_bytes);
// Whether a file name is a shard's as transformers names them: model-00001-of-00003.safetensors.
bool is_hf_shard_name(std::string_view name);
// transformers' max_shard_size text as bytes (its convert_file_size_to_int): an integer, or one
// followed by GiB, MiB, KiB (powers of 2) or GB, MB, KB (powers of 10; a final lower-case "b" means
// bits: an eighth), the unit in any case; nullopt for anything else.
std::optional<std::uint64_t> hf_shard_size(std::string_view text);
// tokenizers' tokenizer.json of a tokenizer, as transformers 4.35 (tokenizers 0.15) writes
// LlamaTokenizerFast's from the tokenizer.model above: the pieces (U+2581 for a space) in id order;
// the merges, each split of a piece into two pieces (at characters), ordered as LlamaConverter
// orders them (the made piece's score, highest first; equal scores by the made piece's id, then by
// the left and right pieces' ids); Llama's normalizer, decoder and BOS template; no newline at the
// end. Refused (a message) when ids 0, 1, 2 are not <unk>, <s>, </s>, two pieces are equal (U+2581
// for a space), a piece is not UTF-8, or the file would not read back as the same pieces
// (parse_hf_tokenizer_json). transformers' own file for test/data/bpe/tok512.model is byte for byte
// this one.
result<std::string> hf_tokenizer_json(const tokenizer_bin& t);
// sentencepiece's model file of a tokenizer (as above): read_sentencepiece_model gives it back.
std::vector<std::byte> sentencepiece_model_bytes(const tokenizer_bin& t);

// sentencepiece's model file (its protobuf: the pieces, their scores and types, the trainer's BOS
// and EOS ids) as llama2.c's tokenizer, as tools/tokenizer_bin.py (and llama2.c's tokenizer.py)
// convert it: U+2581 becomes ' ', BOS and EOS become "\n<s>\n" and "\n</s>\n", byte pieces stay
// "<0xXX>". llama2.c's tokenizer takes BOS = 1 and EOS = 2: other ids are refused.
result<tokenizer_bin> read_sentencepiece_model(const std::string& path);
result<tokenizer_bin> parse_sentencepiece_model(std::span<const std::byte> bytes, const std::string& origin = "<memory>");

}  // namespace sf::io
