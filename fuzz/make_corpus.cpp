// fuzz/make_corpus.cpp — writes the harnesses' seed corpus with the library's own writers:
//
//   make_corpus DIR     DIR/safetensors_params/*  DIR/checkpoint/*  DIR/tokenizer_bin/*  DIR/llama2c/*  DIR/gguf/*
//                       (fuzz/corpus is its output)
//
// safetensors_params: a batch (with and without padding) for every configuration the harness
// compiles; a float and an int8 model of each tiny configuration; the header alone (the data cut
// off) and the metadata alone of a model of each reference configuration (a whole one is 100 KB
// to 440 KB); a file of other dtypes and shapes; an empty header.
// checkpoint: for tiny_gpt2 and tiny_llama, a model file (tokenizer, train.step, train.optimizer)
// and its optimizer file (moments, data position, training_settings) joined as the harness
// splits them (fuzz_common.hpp), and the model file alone.
// tokenizer_bin: test/data/bpe/tok512.bin, a vocabulary of the 3 special pieces, the 256 byte
// pieces and a few merges, and one of 3 pieces, each joined with texts (UTF-8, invalid UTF-8, empty);
// the tokenizer.json and the model.safetensors.index.json of test/data/hf.
// llama2c: a tiny llama2.c model (grouped-query attention, dim 4) in versions 0, 1 and 2 (group
// size 2), with a shared and with a separate classifier.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>  // getpid

#include "fuzz_common.hpp"
#include "staticformer/config.hpp"
#include "staticformer/data.hpp"
#include "staticformer/init.hpp"
#include "staticformer/io/checkpoint.hpp"
#include "staticformer/io/gguf.hpp"
#include "staticformer/io/llama2c.hpp"
#include "staticformer/io/safetensors.hpp"
#include "staticformer/io/tokenizer_bin.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/params.hpp"
#include "staticformer/quantize.hpp"
#include "staticformer/tokenizer.hpp"

namespace {

namespace fs = std::filesystem;
namespace io = sf::io;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "make_corpus: %s\n", what.c_str());
  std::exit(1);
}
void check(const sf::status& s) {
  if (!s) die(s.message());
}

std::vector<std::uint8_t> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) die("cannot read " + p.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_all(const fs::path& p, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) die("cannot write " + p.string());
}
void write_all(const fs::path& p, const std::vector<std::byte>& bytes) {
  write_all(p, std::vector<std::uint8_t>(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                         reinterpret_cast<const std::uint8_t*>(bytes.data()) + bytes.size()));
}

std::string name_of(const sf::config& c) {
  if (c == sf::configs::ref_gpt2) return "ref-gpt2";
  if (c == sf::configs::ref_llama) return "ref-llama";
  if (c == sf::configs::ref_vaswani) return "ref-vaswani";
  if (c == sf::configs::nano) return "nano";
  if (c == sf_fuzz::tiny_gpt2) return "tiny-gpt2";
  if (c == sf_fuzz::tiny_llama) return "tiny-llama";
  return "tiny-vaswani";
}

// docs/model.md's batch: tokens, targets (a few -1), optionally padding (the first token of each row).
template <sf::config C>
void batch(const fs::path& dir) {
  std::vector<std::int32_t> tokens(C.B * C.T), targets(C.B * C.T);
  std::vector<std::uint8_t> padding(C.B * C.T);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    tokens[i] = static_cast<std::int32_t>(i * 5 % C.V);
    targets[i] = i % 7 == 3 ? -1 : static_cast<std::int32_t>((i * 5 + 1) % C.V);
    padding[i] = i % C.T == 0 ? 1 : 0;
  }
  for (const bool padded : {false, true}) {
    io::writer w;
    w.add("tokens", tokens, {C.B, C.T}).add("targets", targets, {C.B, C.T});
    if (padded) w.add("padding", padding, {C.B, C.T});
    check(w.write((dir / ("batch-" + name_of(C) + (padded ? "-padded" : "") + ".safetensors")).string()));
  }
}

// A float model and its int8 twin (tiny configurations).
template <sf::config C>
void models(const fs::path& dir) {
  static sf::params<C, float> p;
  sf::init_params(p, 11);
  const sf::char_tokenizer tok = sf::char_tokenizer::from_corpus(std::string("abcdefghij").substr(0, C.V - 1));
  check(io::save_params<C>((dir / ("model-" + name_of(C) + ".safetensors")).string(), p,
                           {{sf::tokenizer_metadata_key, tok.to_metadata()}}));
  static sf::params<C, sf::int8> q;
  sf::quantize(q, p);
  check(io::save_quantized<C>((dir / ("model-" + name_of(C) + "-int8.safetensors")).string(), q));
}

// The header of a reference configuration's model file, without its data.
template <sf::config C>
void header_only(const fs::path& dir) {
  static sf::params<C, float> p;
  io::writer w;
  w.set_metadata(io::config_metadata(C)).add_all(p);
  io::result<std::vector<std::byte>> bytes = w.serialize();
  if (!bytes) die(bytes.message());
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | std::to_integer<std::uint64_t>((*bytes)[static_cast<std::size_t>(i)]);
  bytes->resize(8 + n);
  write_all(dir / ("header-" + name_of(C) + ".safetensors"), *bytes);
}

// Other dtypes and shapes, an empty header, metadata only.
void misc(const fs::path& dir) {
  {
    io::writer w;
    const double f64[3] = {1.5, -2.0, 1e300};
    const std::int64_t i64[2] = {-1, 1LL << 40};
    const std::uint8_t u8[4] = {0, 1, 2, 255};
    const std::uint16_t bf16[2] = {0x3f80, 0xffff};
    const std::int8_t i8[3] = {-127, 0, 127};
    w.set_metadata("note", "dtypes")
        .add("f64", io::dtype::F64, {3}, f64)
        .add("i64", io::dtype::I64, {2, 1}, i64)
        .add("u8", io::dtype::U8, {2, 2}, u8)
        .add("bf16", io::dtype::BF16, {2}, bf16)
        .add("i8", io::dtype::I8, {3}, i8)
        .add("empty", io::dtype::F32, {0, 4}, nullptr)
        .add("scalar", io::dtype::I32, {}, i64);
    check(w.write((dir / "dtypes.safetensors").string()));
  }
  for (const sf::config& c : {sf::configs::ref_gpt2, sf::configs::ref_llama, sf::configs::ref_vaswani, sf::configs::nano}) {
    io::writer w;
    w.set_metadata(io::config_metadata(c));
    check(w.write((dir / ("metadata-only-" + name_of(c) + ".safetensors")).string()));
  }
  check(io::writer().write((dir / "empty.safetensors").string()));
}

// A checkpoint (model + optimizer files) joined as the checkpoint harness splits it.
template <sf::config C>
void checkpoint(const fs::path& dir, const fs::path& tmp) {
  using params_t = sf::params<C, float>;
  static params_t p;
  static sf::adamw<params_t> opt;
  sf::init_params(p, 5);
  opt.options = {.beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8, .weight_decay = 0.1, .decay = sf::decay_on::matrices};
  opt.t = 3;
  sf::visit([](const sf::param_name&, auto& m, auto& v) {
    for (std::size_t i = 0; i < m.size; ++i) {
      m.data()[i] = 0.001f * static_cast<float>(i % 7) - 0.003f;
      v.data()[i] = 1e-6f * static_cast<float>(i % 5);
    }
  }, opt.m, opt.v);
  const std::vector<std::int32_t> ids = sf_fuzz::dataset_ids();
  sf::dataset<C> data(ids, sf_fuzz::dataset_val_fraction, sf_fuzz::dataset_seed);
  check(data.status());
  sf::tokens_t<C> x;
  sf::targets_t<C> y;
  for (int i = 0; i < 3; ++i) data.next_batch(x, y);
  io::training_settings settings;
  check(settings.set("total_steps", "100"));
  const sf::char_tokenizer tok = sf::char_tokenizer::from_corpus(C.V < 8 ? "hello " : "abcdefgh");
  const fs::path model = tmp / io::model_file_name, optimizer = tmp / sf_fuzz::optimizer_file_name;
  check(io::save_optimizer(optimizer.string(), opt, data.save_state(), data.train_size(), data.val_size(),
                           settings.to_metadata()));
  check(io::save_model<C>(model.string(), p, tok,
                          {{"train.step", "3"}, {"train.optimizer", sf_fuzz::optimizer_file_name}}));
  const std::vector<std::uint8_t> m = read_all(model), o = read_all(optimizer);
  write_all(dir / ("checkpoint-" + name_of(C)), sf_fuzz::join(m, o));
  write_all(dir / ("model-only-" + name_of(C)), sf_fuzz::join(m, {}));
  // The same model with a BPE tokenizer of V pieces (metadata tokenizer.bpe).
  std::vector<std::string> pieces = {"<unk>", "\n<s>\n", "\n</s>\n", " ", "e", "t", "h", "th", "he", " the"};
  pieces.resize(C.V);
  io::result<io::tokenizer_bin> bpe = io::tokenizer_bin::from_pieces(pieces, std::vector<float>(C.V, -1.0f));
  if (!bpe) die(bpe.message());
  check(io::save_model<C>(model.string(), p, *bpe, {{"train.step", "3"}}));
  write_all(dir / ("model-only-" + name_of(C) + "-bpe"), sf_fuzz::join(read_all(model), {}));
}

void tokenizer_bin(const fs::path& dir) {
  std::vector<std::string> pieces = {"<unk>", "\n<s>\n", "\n</s>\n"};
  const char hex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) pieces.push_back(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">");
  for (const char* p : {" ", "e", "t", "h", " t", "th", "he", "the", " the", "\xc3\xa9"}) pieces.emplace_back(p);
  std::vector<float> scores(pieces.size());
  for (std::size_t i = 259; i < scores.size(); ++i) scores[i] = -static_cast<float>(i - 259);
  auto bytes = [](const io::result<io::tokenizer_bin>& t) {
    if (!t) die(t.message());
    const std::vector<std::byte> b = t->serialize();
    return std::vector<std::uint8_t>(reinterpret_cast<const std::uint8_t*>(b.data()),
                                     reinterpret_cast<const std::uint8_t*>(b.data()) + b.size());
  };
  const std::vector<std::uint8_t> bytes_vocab = bytes(io::tokenizer_bin::from_pieces(pieces, scores));
  const std::vector<std::uint8_t> three = bytes(io::tokenizer_bin::from_pieces({"a", "b", "ab"}, {0, 0, 1}));
  const std::vector<std::byte> tok512 = [] {
    std::ifstream f(std::string(SF_SOURCE_DIR) + "/test/data/bpe/tok512.bin", std::ios::binary);
    std::vector<char> c((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (c.empty()) die("cannot read test/data/bpe/tok512.bin");
    std::vector<std::byte> b(c.size());
    std::memcpy(b.data(), c.data(), c.size());
    return b;
  }();
  const std::vector<std::uint8_t> shakespeare = bytes(io::tokenizer_bin::parse(tok512, 512));
  auto text = [](std::string_view s) {
    return std::vector<std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()),
                                     reinterpret_cast<const std::uint8_t*>(s.data()) + s.size());
  };
  write_all(dir / "tok512-shakespeare", sf_fuzz::join(shakespeare, text("First Citizen:\nBefore we proceed, hear me speak.")));
  write_all(dir / "tok512-invalid-utf8", sf_fuzz::join(shakespeare, text("\x80\xc3 caf\xc3\xa9 \xe4\xb8\xad\xff\xf0\x9f\x98")));
  write_all(dir / "tok512-empty-text", sf_fuzz::join(shakespeare, {}));
  write_all(dir / "bytes-the", sf_fuzz::join(bytes_vocab, text("the then thé  \x01\n")));
  write_all(dir / "three-pieces", sf_fuzz::join(three, text("abab ba")));
  // Hugging Face's JSON files (the tokenizer.json of tok512.model, a sharded model's index)
  auto file = [](const std::string& path) {
    std::ifstream f(std::string(SF_SOURCE_DIR) + "/" + path, std::ios::binary);
    std::vector<std::uint8_t> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (b.empty()) die("cannot read " + path);
    return b;
  };
  write_all(dir / "hf-tokenizer-json", sf_fuzz::join(file("test/data/hf/llama_tied_bf16_fast/tokenizer.json"),
                                                     text("ROMEO:  But soft \xe6\x97\xa5\n")));
  write_all(dir / "hf-index-json", sf_fuzz::join(file("test/data/hf/llama_tied_bf16_sharded/model.safetensors.index.json"), {}));
}

void llama2c(const fs::path& dir) {
  for (bool tied : {true, false}) {
    io::llama2c_model m;
    m.arch = {.V = 5, .T = 3, .D = 4, .H = 2, .kv_heads = 1, .L = 1, .F = 6, .ffn = sf::ffn_kind::gated,
              .norm = sf::norm_kind::rmsnorm, .position = sf::position_kind::rope,
              .activation = sf::activation_kind::silu, .tied = tied, .bias = false};
    int k = 0;
    for (auto& [name, shape] : io::llama2c_tensor_shapes(m.arch)) {
      std::size_t n = 1;
      for (std::size_t d : shape) n *= d;
      std::vector<float> v(n);
      for (float& x : v) x = static_cast<float>((k++ * 37) % 23 - 11) / 16.0f;
      m.tensors.push_back({name, shape, v});
    }
    for (int version : {0, 1, 2}) {
      auto b = io::serialize_llama2c(m, {.version = version, .group_size = 2});
      if (!b) die(b.message());
      write_all(dir / ("v" + std::to_string(version) + (tied ? "-shared" : "-classifier")), *b);
    }
  }
}

// gguf: tiny llama models written by serialize_gguf (F32 with a tokenizer, F32 with a classifier,
// Q8_0 of width 32), and gguf-py's tiny F16 file of test/data/gguf.
void gguf(const fs::path& dir) {
  struct seed {
    const char* name;
    sf::arch a;
    io::gguf_type type;
    bool tokens;
  };
  const sf::arch base{.V = 5, .T = 3, .D = 4, .H = 2, .kv_heads = 1, .L = 1, .F = 6, .ffn = sf::ffn_kind::gated,
                      .norm = sf::norm_kind::rmsnorm, .position = sf::position_kind::rope,
                      .activation = sf::activation_kind::silu, .tied = true, .bias = false};
  sf::arch untied = base, wide = base;
  untied.tied = false;
  wide.V = 3, wide.D = 32, wide.F = 32;
  for (const seed& sd : {seed{"f32-tokens", base, io::gguf_type::F32, true}, seed{"f32-classifier", untied, io::gguf_type::F32, false},
                         seed{"q8_0", wide, io::gguf_type::Q8_0, false}}) {
    io::gguf_model m;
    m.arch = sd.a;
    int k = 0;
    for (auto& [name, shape] : io::gguf_tensor_shapes(m.arch)) {
      std::size_t n = 1;
      for (std::size_t d : shape) n *= d;
      std::vector<float> v(n);
      for (float& x : v) x = static_cast<float>((k++ * 37) % 23 - 11) / 16.0f;
      m.tensors.push_back({name, shape, v});
    }
    if (sd.tokens) {
      m.tokenizer_model = "llama";
      m.tokens = {"<unk>", "<s>", "</s>", "\xe2\x96\x81" "a", "<0x41>"};
      m.scores = {0, 0, 0, -1, -2};
      m.token_types = {2, 3, 3, 1, 6};
      m.bos_id = 1, m.eos_id = 2;
    }
    auto b = io::serialize_gguf(m, {.type = sd.type});
    if (!b) die(b.message());
    write_all(dir / sd.name, *b);
  }
  fs::copy_file(fs::path(SF_SOURCE_DIR) / "test/data/gguf/tiny_f16.gguf", dir / "gguf-py-f16",
                fs::copy_options::overwrite_existing);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR   (writes DIR/safetensors_params, DIR/checkpoint, DIR/tokenizer_bin, DIR/llama2c and DIR/gguf)\n", argv[0]);
    return 2;
  }
  const fs::path root = argv[1], st = root / "safetensors_params", ck = root / "checkpoint";
  fs::create_directories(st);
  fs::create_directories(ck);
  fs::create_directories(root / "tokenizer_bin");
  tokenizer_bin(root / "tokenizer_bin");
  fs::create_directories(root / "llama2c");
  llama2c(root / "llama2c");
  fs::create_directories(root / "gguf");
  gguf(root / "gguf");

  batch<sf::configs::ref_gpt2>(st);
  batch<sf::configs::ref_llama>(st);
  batch<sf::configs::ref_vaswani>(st);
  batch<sf::configs::nano>(st);
  batch<sf_fuzz::tiny_gpt2>(st);
  batch<sf_fuzz::tiny_llama>(st);
  batch<sf_fuzz::tiny_vaswani>(st);
  models<sf_fuzz::tiny_gpt2>(st);
  models<sf_fuzz::tiny_llama>(st);
  models<sf_fuzz::tiny_vaswani>(st);
  header_only<sf::configs::ref_gpt2>(st);
  header_only<sf::configs::ref_llama>(st);
  header_only<sf::configs::ref_vaswani>(st);
  header_only<sf::configs::nano>(st);
  misc(st);

  const fs::path tmp = fs::temp_directory_path() / ("staticformer-make-corpus-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  checkpoint<sf_fuzz::tiny_gpt2>(ck, tmp);
  checkpoint<sf_fuzz::tiny_llama>(ck, tmp);
  fs::remove_all(tmp);
  std::printf("wrote %s, %s, %s, %s and %s\n", st.string().c_str(), ck.string().c_str(),
              (root / "tokenizer_bin").string().c_str(), (root / "llama2c").string().c_str(), (root / "gguf").string().c_str());
  return 0;
}
