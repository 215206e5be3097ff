// fuzz/checkpoint.cpp — libFuzzer harness: one input is a training checkpoint, two files.
//
// The input is split (fuzz_common.hpp: a 4-byte little-endian length, then that many bytes) into
// model.safetensors and optimizer.safetensors, written into the harness's scratch directory.
// For two small configurations (tiny_gpt2 and tiny_llama of fuzz_common.hpp) it then runs
//   sf::io::load_model     (parameters + the tokenizer from 'tokenizer.vocab', and without it; and
//                          into an sf::io::any_tokenizer: 'tokenizer.vocab' or 'tokenizer.bpe', the
//                          base64 of a tokenizer.bin, which must store back to the same string)
//   sf::io::load_optimizer (AdamW's moments, options and the data position), then
//                          sf::io::training_settings::from_metadata on what it read
//   sf::io::load_training  (all of it, through the name in 'train.optimizer')
// and checks their promises: what they accept is in range and round-trips, and load_model and
// load_optimizer leave their outputs untouched when they refuse.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "fuzz_common.hpp"
#include "staticformer/config.hpp"
#include "staticformer/data.hpp"
#include "staticformer/io/any_tokenizer.hpp"
#include "staticformer/io/checkpoint.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/params.hpp"
#include "staticformer/tokenizer.hpp"
#include "staticformer/train.hpp"

namespace {

namespace io = sf::io;

using sf_fuzz::guarded;

template <sf::config C>
struct checkpoint_loaders {
  using params_t = sf::params<C, float>;
  guarded<params_t> p;
  guarded<sf::adamw<params_t>> opt;
  std::unique_ptr<sf::trainer<C>> tr = std::make_unique<sf::trainer<C>>();
  std::vector<std::int32_t> ids = sf_fuzz::dataset_ids();
  sf::dataset<C> data{ids, sf_fuzz::dataset_val_fraction, sf_fuzz::dataset_seed};
  const sf::char_tokenizer sentinel_tok = sf::char_tokenizer::from_corpus("?");

  // Returns load_model's verdict with the tokenizer (load_training's first step).
  bool model(const std::string& path) {
    sf::char_tokenizer tok = sentinel_tok;
    io::metadata_map meta;
    const sf::status s = io::load_model<C>(path, *p, &tok, &meta);
    if (s) {
      SF_FUZZ_CHECK(tok.size() >= 1 && tok.size() <= C.V, tok.to_metadata());
      const auto it = meta.find(sf::tokenizer_metadata_key);
      SF_FUZZ_CHECK(it != meta.end(), "no tokenizer in the metadata");
      sf::char_tokenizer again;
      SF_FUZZ_CHECK(sf::char_tokenizer::from_metadata(it->second, again).is_ok() && again == tok, it->second);
      sf::char_tokenizer back;
      SF_FUZZ_CHECK(sf::char_tokenizer::from_metadata(tok.to_metadata(), back).is_ok() && back == tok,
                    tok.to_metadata());
      SF_FUZZ_CHECK(sf_fuzz::all_finite(*p), "non-finite weights loaded");
      p.reset();
    } else {
      SF_FUZZ_CHECK(p.untouched() && tok == sentinel_tok && meta.empty(), s.message());
    }
    // Without the tokenizer (when it was refused with it: accepted with it implies accepted without).
    if (!s) {
      const sf::status s2 = io::load_model<C>(path, *p);
      if (s2) p.reset();
      else SF_FUZZ_CHECK(p.untouched(), s2.message());
    }
    any_tokenizer(path, s.is_ok() ? &tok : nullptr);
    return s.is_ok();
  }

  // load_model into an sf::io::any_tokenizer: what it accepts fits V and is stored back to the very
  // metadata it was read from; a character tokenizer's verdict (`chars`: what load_model gave)
  // agrees; a refusal touches nothing.
  void any_tokenizer(const std::string& path, const sf::char_tokenizer* chars) {
    io::any_tokenizer tok = sentinel_tok;
    io::metadata_map meta;
    const sf::status s = io::load_model<C>(path, *p, &tok, &meta);
    if (chars) SF_FUZZ_CHECK(s.is_ok() && tok.chars() && *tok.chars() == *chars, s.message());
    if (!s) {
      SF_FUZZ_CHECK(p.untouched() && tok.chars() && *tok.chars() == sentinel_tok && meta.empty(), s.message());
      return;
    }
    p.reset();
    SF_FUZZ_CHECK(tok.is_bpe() ? tok.size() == C.V : tok.size() >= 1 && tok.size() <= C.V, tok.kind());
    const io::result<io::metadata_map> back = io::tokenizer_metadata(tok, C.V);
    SF_FUZZ_CHECK(back.is_ok() && back->size() == 1, back.message());
    const auto& [key, value] = *back->begin();
    const auto it = meta.find(key);
    SF_FUZZ_CHECK(it != meta.end(), key);
    if (tok.is_bpe()) SF_FUZZ_CHECK(it->second == value, "tokenizer.bpe is not stored back to the same string");
    const io::result<io::any_tokenizer> again = io::read_tokenizer(*back, C.V);
    SF_FUZZ_CHECK(again.is_ok() && again->is_bpe() == tok.is_bpe() && again->size() == tok.size(), again.message());
  }

  void optimizer(const std::string& path) {
    io::optimizer_info info;
    info.metadata = {{"sentinel", ""}};
    const sf::status s = io::load_optimizer(path, *opt, info);
    if (!s) {
      SF_FUZZ_CHECK(opt.untouched() && info.metadata.size() == 1 && info.metadata.count("sentinel"), s.message());
      return;
    }
    const sf::adamw_options& o = opt->options;
    SF_FUZZ_CHECK(opt->t >= 0, "negative step");
    SF_FUZZ_CHECK(o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1 && o.eps > 0 && o.weight_decay >= 0 &&
                      std::isfinite(o.eps) && std::isfinite(o.weight_decay),
                  "options out of range");
    bool ok = true;
    sf::visit([&](const sf::param_name&, const auto& m, const auto& v) {
      for (std::size_t i = 0; i < m.size; ++i) ok = ok && std::isfinite(m.data()[i]) && std::isfinite(v.data()[i]) &&
                                                    v.data()[i] >= 0;
    }, opt->m, opt->v);
    SF_FUZZ_CHECK(ok, "moments out of range");
    SF_FUZZ_CHECK(info.metadata.count("format") && info.metadata.count("data.rng"), "metadata");
    // The run's settings stored beside the optimizer state (examples/train): strict, and round-trip.
    io::training_settings ts;
    if (ts.from_metadata(info.metadata)) {
      io::training_settings back;
      const io::metadata_map m = ts.to_metadata();
      const sf::status r = back.from_metadata(m);
      SF_FUZZ_CHECK(r.is_ok() && back.to_metadata() == m, r.message());
      SF_FUZZ_CHECK(ts.total_steps >= 1 && ts.lr > 0 && ts.warmup >= 0 && ts.warmup < 1 && ts.clip >= 0, "settings");
    }
    opt.reset();
  }

  // (Only when load_model accepts the model file: load_training starts with it.)
  void training(const std::string& dir) {
    sf::char_tokenizer tok;
    io::optimizer_info info;
    const sf::status s = io::load_training<C>(dir, *tr, data, tok, &info);
    if (!s) return;
    SF_FUZZ_CHECK(tok.size() >= 1 && tok.size() <= C.V, tok.to_metadata());
    SF_FUZZ_CHECK(data.save_state() == info.data, "data position");
    SF_FUZZ_CHECK(info.train_tokens == data.train_size() && info.val_tokens == data.val_size(), "dataset sizes");
    SF_FUZZ_CHECK(tr->opt.t >= 0, "negative step");
  }

  void run(const std::string& dir, const std::string& model_path, const std::string& opt_path) {
    const bool model_ok = model(model_path);
    optimizer(opt_path);
    if (model_ok) training(dir);
  }
};

struct all_loaders {
  checkpoint_loaders<sf_fuzz::tiny_gpt2> gpt2;
  checkpoint_loaders<sf_fuzz::tiny_llama> llama;
};

all_loaders& state() {
  static all_loaders* s = new all_loaders;  // reachable until exit (no leak report)
  return *s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const sf_fuzz::scratch_dir& dir = sf_fuzz::scratch_dir::get();
  const std::string model_path = dir.file(io::model_file_name), opt_path = dir.file(sf_fuzz::optimizer_file_name);
  const sf_fuzz::two_files files = sf_fuzz::split(data, size);
  sf_fuzz::write_file(model_path, files.first);
  sf_fuzz::write_file(opt_path, files.second);
  all_loaders& l = state();
  l.gpt2.run(dir.path(), model_path, opt_path);
  l.llama.run(dir.path(), model_path, opt_path);
  return 0;
}
