// fuzz/safetensors_params.cpp — libFuzzer harness: one input is one safetensors file.
//
// The file is read both ways, sf::io::file::open (from a path in the harness's scratch
// directory) and sf::io::file::parse (from memory): they must agree. A file that parses is
// then written back by sf::io::writer and parsed again (same metadata and tensors), its numeric
// tensors read by read_f64, its configuration read by read_config, its tokenizer.vocab (if any)
// parsed, and it is loaded, for each of docs/model.md's reference configurations (ref_gpt2, ref_llama,
// ref_vaswani, nano) and three tiny ones with their features (fuzz_common.hpp), as parameters
// (float, double, with and without allow_non_finite), as int8 parameters and as a batch
// (with and without a padding buffer). Each loader's promises are checked: what it accepts is
// what the file holds and within range, and its outputs are untouched when it refuses.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "fuzz_common.hpp"
#include "staticformer/config.hpp"
#include "staticformer/io/any_tokenizer.hpp"
#include "staticformer/io/safetensors.hpp"
#include "staticformer/params.hpp"
#include "staticformer/quantize.hpp"
#include "staticformer/tokenizer.hpp"

namespace {

namespace io = sf::io;

using sf_fuzz::guarded;

bool numeric(io::dtype t) {
  return t == io::dtype::F32 || t == io::dtype::F64 || t == io::dtype::F16 || t == io::dtype::BF16 ||
         t == io::dtype::I32 || t == io::dtype::U8 || t == io::dtype::I64;
}

// Same metadata and the same tensors (name, dtype, shape, data bytes; and byte ranges if asked).
std::string difference(const io::file& a, const io::file& b, bool offsets) {
  if (a.metadata() != b.metadata()) return "metadata differ";
  if (a.tensors().size() != b.tensors().size()) return "tensor counts differ";
  for (const io::tensor_info& t : a.tensors()) {
    const io::tensor_info* u = b.find(t.name);
    if (!u) return "tensor '" + t.name + "' missing";
    if (u->type != t.type || u->shape != t.shape) return "tensor '" + t.name + "': dtype or shape differ";
    if (offsets && (u->begin != t.begin || u->end != t.end)) return "tensor '" + t.name + "': offsets differ";
    const auto x = a.data(t), y = b.data(*u);
    if (x.size() != y.size() || (!x.empty() && std::memcmp(x.data(), y.data(), x.size()) != 0))
      return "tensor '" + t.name + "': data differ";
  }
  return {};
}

// Everything that reads a parsed file without a compiled configuration.
void inspect(const io::file& f) {
  // The data ranges: in data order, contiguous from 0 to the end of the file.
  std::size_t at = 0;
  for (const io::tensor_info& t : f.tensors()) {
    SF_FUZZ_CHECK(t.begin == at && t.end >= t.begin, t.name);
    SF_FUZZ_CHECK(t.bytes() == t.elements() * io::size_of(t.type), t.name);
    at = t.end;
  }
  // Written back and parsed again: the same content.
  io::writer w;
  w.set_metadata(f.metadata());
  for (const io::tensor_info& t : f.tensors()) w.add(t.name, t.type, t.shape, f.data(t).data());
  SF_FUZZ_CHECK(w.check().is_ok(), w.check().message());
  io::result<std::vector<std::byte>> bytes = w.serialize();
  SF_FUZZ_CHECK(bytes.is_ok(), bytes.message());
  io::result<io::file> again = io::file::parse(std::move(*bytes), "<written back>");
  SF_FUZZ_CHECK(again.is_ok(), again.message());
  const std::string diff = difference(f, *again, false);
  SF_FUZZ_CHECK(diff.empty(), diff);

  // Numeric tensors as doubles.
  for (const io::tensor_info& t : f.tensors()) {
    io::result<std::vector<double>> v = io::read_f64(f, t.name);
    SF_FUZZ_CHECK(v.is_ok() == numeric(t.type), t.name + ": " + v.message());
    if (v) SF_FUZZ_CHECK(v->size() == t.elements(), t.name);
  }

  // The configuration the metadata describes: check_config agrees, describe names it.
  io::result<sf::arch> c = io::read_config(f);
  if (c) {
    SF_FUZZ_CHECK(c->H > 0 && c->D % c->H == 0 && c->kv() == c->H, io::describe(*c));
    const sf::status s = io::check_config(f, *c);
    SF_FUZZ_CHECK(s.is_ok(), s.message());
    SF_FUZZ_CHECK(!io::describe(*c).empty(), "");
  }

  // The tokenizer stored in a checkpoint's metadata, for the configuration it describes: what is
  // accepted is stored back (a BPE tokenizer to the same base64 string) and read again.
  if (c) {
    const io::result<io::any_tokenizer> t = io::read_tokenizer(f.metadata(), c->V);
    if (t) {
      const io::result<io::metadata_map> back = io::tokenizer_metadata(*t, c->V);
      SF_FUZZ_CHECK(back.is_ok() && back->size() == 1, back.message());
      if (t->is_bpe()) SF_FUZZ_CHECK(*f.metadata(io::bpe_tokenizer_metadata_key) == back->begin()->second, "tokenizer.bpe");
      SF_FUZZ_CHECK(io::read_tokenizer(*back, c->V).is_ok(), "the stored tokenizer is refused");
    }
  }
  if (const std::string* vocab = f.metadata(sf::tokenizer_metadata_key)) {
    sf::char_tokenizer tok;
    if (sf::status s = sf::char_tokenizer::from_metadata(*vocab, tok); s) {
      SF_FUZZ_CHECK(tok.size() >= 1 && tok.size() <= sf::char_tokenizer::max_vocab, *vocab);
      sf::char_tokenizer back;
      const sf::status r = sf::char_tokenizer::from_metadata(tok.to_metadata(), back);
      SF_FUZZ_CHECK(r.is_ok() && back == tok, tok.to_metadata());
      for (std::size_t i = 0; i < tok.size(); ++i) {
        const auto id = static_cast<std::int32_t>(i);
        SF_FUZZ_CHECK(tok.id(tok.byte(id)) == id, *vocab);
        SF_FUZZ_CHECK(i == 0 || tok.byte(id) > tok.byte(id - 1), *vocab);
      }
    }
  }
}

// The loaders of one compiled configuration, with their output buffers.
template <sf::config C>
struct loaders {
  guarded<sf::params<C, float>> p;
  guarded<sf::params<C, double>> pd;
  guarded<sf::params<C, sf::int8>> q;
  guarded<sf::tokens_t<C>> tokens;
  guarded<sf::targets_t<C>> targets;
  guarded<sf::padding_t<C>> padding;

  // The loaded parameters are the file's F32 tensors, finite.
  template <class T>
  static void check_params(const io::file& f, const sf::params<C, T>& params, bool finite) {
    for (const io::slot& sl : io::tensor_slots(params)) {
      const io::tensor_info* t = f.find(sl.name);
      SF_FUZZ_CHECK(t && t->type == io::dtype::F32 && t->shape == sl.shape, sl.name);
      const std::span<const std::byte> d = f.data(*t);
      SF_FUZZ_CHECK(d.size() == sl.size * sizeof(float), sl.name);
      for (std::size_t i = 0; i < sl.size; ++i) {
        float x;
        std::memcpy(&x, d.data() + i * sizeof(float), sizeof(float));
        const T y = static_cast<const T*>(sl.data)[i];
        if constexpr (std::is_same_v<T, float>) SF_FUZZ_CHECK(std::memcmp(&x, &y, sizeof x) == 0, sl.name);  // bits
        else SF_FUZZ_CHECK(static_cast<T>(x) == y || (std::isnan(x) && std::isnan(y)), sl.name);
        if (finite) SF_FUZZ_CHECK(std::isfinite(x), sl.name);
      }
    }
  }

  void run(const io::file& f) {
    // The configuration check, and read_config's view of a file that passes it.
    const sf::status config_ok = io::check_config(f, C);
    if (config_ok) {
      io::result<sf::arch> c = io::read_config(f);
      SF_FUZZ_CHECK(c.is_ok(), c.message());
      SF_FUZZ_CHECK(*c == sf::arch_of(C), io::describe(*c) + " vs " + io::describe(C));
    }

    // Float parameters, then the same file with non-finite weights allowed.
    sf::status s = io::load_params<C>(f, *p);
    if (s) {
      SF_FUZZ_CHECK(config_ok.is_ok(), "loaded despite: " + std::string(config_ok.message()));
      check_params(f, *p, true);
      p.reset();
    } else if (config_ok) {
      SF_FUZZ_CHECK(p.untouched(), s.message());  // (a refused configuration returns before writing)
    }
    const sf::status s_any = io::load_params<C>(f, *p, {.allow_non_finite = true});
    if (s) SF_FUZZ_CHECK(s_any.is_ok(), s_any.message());
    if (s_any) {
      check_params(f, *p, false);
      p.reset();
    } else if (config_ok) {
      SF_FUZZ_CHECK(p.untouched(), s_any.message());
    }

    // Double parameters (F32 widened).
    s = io::load_params<C>(f, *pd);
    if (s) {
      check_params(f, *pd, true);
      pd.reset();
    } else if (config_ok) {
      SF_FUZZ_CHECK(pd.untouched(), s.message());
    }

    // int8 parameters.
    s = io::load_quantized<C>(f, *q);
    if (s) {
      SF_FUZZ_CHECK(config_ok.is_ok() && io::is_quantized(f), "");
      // Every weight it stands for is finite (int8 values times finite scales; float vectors).
      sf::dequantize(*p, *q);
      SF_FUZZ_CHECK(sf_fuzz::all_finite(*p), "an int8 checkpoint that stands for non-finite weights");
      p.reset();
      q.reset();
    } else if (config_ok) {
      SF_FUZZ_CHECK(q.untouched(), s.message());
    }

    // The batch, with a padding buffer ...
    bool has_padding = false;
    s = io::load_batch<C>(f, *tokens, *targets, padding.get(), has_padding);
    const bool file_has_padding = f.find("padding") != nullptr;
    if (s) {
      SF_FUZZ_CHECK(has_padding == file_has_padding, "");
      const std::span<const std::byte> tk = f.data(*f.find("tokens")), tg = f.data(*f.find("targets"));
      SF_FUZZ_CHECK(tk.size() == C.B * C.T * 4 && std::memcmp(tk.data(), tokens->data(), tk.size()) == 0, "tokens");
      SF_FUZZ_CHECK(tg.size() == C.B * C.T * 4 && std::memcmp(tg.data(), targets->data(), tg.size()) == 0,
                    "targets");
      for (std::size_t i = 0; i < C.B * C.T; ++i) {
        const std::int32_t a = tokens->data()[i], b = targets->data()[i];
        const unsigned pad = padding->data()[i];
        SF_FUZZ_CHECK(a >= 0 && static_cast<std::size_t>(a) < C.V, "token out of range");
        SF_FUZZ_CHECK(b == -1 || (b >= 0 && static_cast<std::size_t>(b) < C.V), "target out of range");
        SF_FUZZ_CHECK(pad <= (file_has_padding ? 1u : 0u), "padding value");
      }
      tokens.reset();
      targets.reset();
      padding.reset();
    } else {
      SF_FUZZ_CHECK(tokens.untouched() && targets.untouched() && padding.untouched(), s.message());
    }
    // ... and without: refused when the file has padding, else the same verdict.
    bool has_padding2 = false;
    const sf::status s2 = io::load_batch<C>(f, *tokens, *targets, nullptr, has_padding2);
    SF_FUZZ_CHECK(file_has_padding ? !s2 : s2.is_ok() == s.is_ok(), s2.message());
    if (s2) {
      tokens.reset();
      targets.reset();
    } else {
      SF_FUZZ_CHECK(tokens.untouched() && targets.untouched(), s2.message());
    }
  }
};

// One set of loaders per configuration, made once (the buffers are reused).
struct all_loaders {
  loaders<sf::configs::ref_gpt2> ref_gpt2;
  loaders<sf::configs::ref_llama> ref_llama;
  loaders<sf::configs::ref_vaswani> ref_vaswani;
  loaders<sf::configs::nano> nano;
  loaders<sf_fuzz::tiny_gpt2> tiny_gpt2;
  loaders<sf_fuzz::tiny_llama> tiny_llama;
  loaders<sf_fuzz::tiny_vaswani> tiny_vaswani;
  void run(const io::file& f) {
    ref_gpt2.run(f);
    ref_llama.run(f);
    ref_vaswani.run(f);
    nano.run(f);
    tiny_gpt2.run(f);
    tiny_llama.run(f);
    tiny_vaswani.run(f);
  }
};

all_loaders& state() {
  static all_loaders* s = new all_loaders;  // reachable until exit (no leak report)
  return *s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = sf_fuzz::scratch_dir::get().file("input.safetensors");
  sf_fuzz::write_file(path, {data, size});

  // From the file and from memory: the same verdict and, when valid, the same content.
  io::result<io::file> opened = io::file::open(path);
  std::vector<std::byte> bytes(size);
  if (size) std::memcpy(bytes.data(), data, size);
  io::result<io::file> parsed = io::file::parse(std::move(bytes), path);
  SF_FUZZ_CHECK(opened.is_ok() == parsed.is_ok(),
                std::string("open: ") + opened.message() + " | parse: " + parsed.message());

  // The path overloads of the loaders give the same verdict as the in-memory ones (one of
  // them per input: each reads the file again).
  all_loaders& l = state();
  if (size % 3 == 0) {
    const sf::status by_path = io::load_params<sf_fuzz::tiny_gpt2>(path, *l.tiny_gpt2.p);
    if (by_path) l.tiny_gpt2.p.reset();
    const bool in_memory = parsed && io::load_params<sf_fuzz::tiny_gpt2>(*parsed, *l.tiny_gpt2.p).is_ok();
    if (in_memory) l.tiny_gpt2.p.reset();
    SF_FUZZ_CHECK(by_path.is_ok() == in_memory, by_path.message());
  } else if (size % 3 == 1) {
    auto& b = l.ref_gpt2;
    bool has_padding = false;
    const sf::status by_path = io::load_batch<sf::configs::ref_gpt2>(path, *b.tokens, *b.targets, b.padding.get(),
                                                                      has_padding);
    b.tokens.reset();
    b.targets.reset();
    b.padding.reset();
    const bool in_memory =
        parsed && io::load_batch<sf::configs::ref_gpt2>(*parsed, *b.tokens, *b.targets, b.padding.get(), has_padding)
                      .is_ok();
    b.tokens.reset();
    b.targets.reset();
    b.padding.reset();
    SF_FUZZ_CHECK(by_path.is_ok() == in_memory, by_path.message());
  } else {
    const sf::status by_path = io::load_quantized<sf_fuzz::tiny_llama>(path, *l.tiny_llama.q);
    l.tiny_llama.q.reset();
    const bool in_memory = parsed && io::load_quantized<sf_fuzz::tiny_llama>(*parsed, *l.tiny_llama.q).is_ok();
    l.tiny_llama.q.reset();
    SF_FUZZ_CHECK(by_path.is_ok() == in_memory, by_path.message());
  }
  if (!parsed) return 0;

  const std::string diff = difference(*opened, *parsed, true);
  SF_FUZZ_CHECK(diff.empty(), diff);
  inspect(*parsed);
  l.run(*parsed);
  return 0;
}
