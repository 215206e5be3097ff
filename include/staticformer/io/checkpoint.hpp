// staticformer/io/checkpoint.hpp — training checkpoints: model, tokenizer, optimizer, data position.
//
//   sf::io::save_training<C>("out", *tr, data, tok);          // out/model.safetensors + out/optimizer-00000300.safetensors
//   sf::io::load_training<C>("out", *tr, data, tok);          // continues bit for bit
//   sf::io::load_model<C1>("out/model.safetensors", p, &tok); // inference, any batch size
//
// The tokenizer `tok` is an sf::char_tokenizer, an sf::io::tokenizer_bin (llama2.c's BPE) or an
// sf::io::any_tokenizer (either: staticformer/io/any_tokenizer.hpp says how each is stored). Loading
// into an sf::char_tokenizer refuses a checkpoint that carries a BPE tokenizer.
//
// Two files (the code that is not a template is compiled into staticformer::io:
// src/io/checkpoint.cpp):
//
// * The model, `model.safetensors`: docs/model.md's checkpoint (F32 parameters under their
//   checkpoint names, the configuration as __metadata__), readable by staticformer-run
//   and by the safetensors library, plus the metadata
//     tokenizer.vocab   a character tokenizer's byte values, "[10,32,33,...]" (a checkpoint decodes
//                       on its own), or
//     tokenizer.bpe     a BPE tokenizer: its tokenizer.bin in base64 (io/any_tokenizer.hpp)
//     train.step        optimizer updates done
//     train.optimizer   the name of the optimizer file that belongs to it (same directory)
//
// * The optimizer state, `optimizer-<step>.safetensors`: F32 tensors `m.<param>` and
//   `v.<param>` (AdamW's moments) and the metadata
//     format = staticformer-optimizer, optimizer = adamw, step, beta1, beta2, eps,
//     weight_decay, decay (all | matrices)       doubles in shortest round-trip form
//     data.rng = four 64-bit words in hex, data.batches, data.train_tokens, data.val_tokens
//   plus any caller metadata (examples/train stores its schedule and its flags there:
//   training_settings, below, parses them back strictly).
//
// Crash safety. Every file is written to `<path>.tmp` and renamed over `<path>`, so a
// file is always either the old one or the new one. The optimizer file of a save has a
// new name (its step) and is written first; then the model file, which names it, is
// renamed into place; only then is the previous optimizer file deleted. A crash at any
// moment leaves a model file whose optimizer file exists and matches it.
#pragma once
#include <array>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "staticformer/data.hpp"
#include "staticformer/io/any_tokenizer.hpp"
#include "staticformer/io/safetensors.hpp"
#include "staticformer/io/tokenizer_bin.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/params.hpp"
#include "staticformer/status.hpp"
#include "staticformer/tokenizer.hpp"
#include "staticformer/train.hpp"

namespace sf::io {

inline constexpr const char* model_file_name = "model.safetensors";
inline constexpr const char* optimizer_format = "staticformer-optimizer";

namespace detail {
std::string hex64(std::uint64_t v);                          // 16 lower-case hex digits
bool parse_hex64(std::string_view s, std::uint64_t& out);   // exactly 16 of them
bool parse_int64(const std::string& s, std::int64_t& out);  // a count (parse_size) up to INT64_MAX
std::string step_name(std::int64_t step);                   // "optimizer-00000300.safetensors"
std::string join(const std::string& dir, const std::string& name);  // dir/name

// The code of the templates below, over type-erased parameters (tensor_slots) and numbers.
// `tok` is the tokenizer's metadata (tokenizer_metadata: or why it does not fit the model).
sf::status save_model(const std::string& path, const sf::arch& c, const std::vector<slot>& p,
                      const result<metadata_map>& tok, metadata_map extra);
// `chars_only`: refuse a BPE tokenizer (the caller wants an sf::char_tokenizer).
sf::status load_model(const std::string& path, const sf::arch& c, const std::vector<slot>& p, any_tokenizer* tok,
                      bool chars_only, metadata_map* metadata, const load_options& options);
sf::status save_optimizer(const std::string& path, const sf::adamw_options& o, std::int64_t t,
                          const std::vector<slot>& m, const std::vector<slot>& v, const sf::data_state& data,
                          std::size_t train_tokens, std::size_t val_tokens, const metadata_map& extra);
}  // namespace detail

// What a checkpoint's tokenizer can be given as: saved from any of the three, loaded into a
// character tokenizer or into either kind.
template <class T>
concept checkpoint_tokenizer =
    std::same_as<T, sf::char_tokenizer> || std::same_as<T, tokenizer_bin> || std::same_as<T, any_tokenizer>;
template <class T>
concept loaded_tokenizer = std::same_as<T, sf::char_tokenizer> || std::same_as<T, any_tokenizer>;

// ----------------------------------------------------------------------------- model

// docs/model.md's checkpoint plus the tokenizer (and `extra` metadata). A character tokenizer
// has at most V symbols, a BPE one exactly V pieces.
template <sf::config C, checkpoint_tokenizer Tok>
sf::status save_model(const std::string& path, const sf::params<C, float>& p, const Tok& tok,
                      metadata_map extra = {}) {
  return detail::save_model(path, C, tensor_slots(p), tokenizer_metadata(tok, C.V), std::move(extra));
}

// Loads parameters of configuration C (any batch size) and, when `tok` is given, the
// tokenizer stored with them (an sf::char_tokenizer refuses a BPE one). `metadata` (optional)
// receives all of the file's metadata.
// Weights that are NaN or infinite are refused unless options.allow_non_finite.
// On error, p and tok are untouched.
template <sf::config C, loaded_tokenizer Tok = sf::char_tokenizer>
sf::status load_model(const std::string& path, sf::params<C, float>& p, Tok* tok = nullptr,
                      metadata_map* metadata = nullptr, const load_options& options = {}) {
  if constexpr (std::same_as<Tok, any_tokenizer>) {
    return detail::load_model(path, C, tensor_slots(std::as_const(p)), tok, false, metadata, options);
  } else {
    any_tokenizer t;
    const sf::status s =
        detail::load_model(path, C, tensor_slots(std::as_const(p)), tok ? &t : nullptr, true, metadata, options);
    if (s && tok) *tok = *t.chars();
    return s;
  }
}

// ----------------------------------------------------------------------------- optimizer state

// AdamW's moments, update count and hyper-parameters, and the data position.
template <class S>
sf::status save_optimizer(const std::string& path, const sf::adamw<S>& opt, const sf::data_state& data,
                          std::size_t train_tokens, std::size_t val_tokens, const metadata_map& extra = {}) {
  return detail::save_optimizer(path, opt.options, opt.t, tensor_slots(opt.m), tensor_slots(opt.v), data,
                                train_tokens, val_tokens, extra);
}

// What an optimizer file holds besides the moments.
struct optimizer_info {
  sf::data_state data;
  std::size_t train_tokens = 0, val_tokens = 0;
  metadata_map metadata;  // everything, including the caller's keys
};

namespace detail {
// load_optimizer over type-erased moments (tensor_slots of opt.m and opt.v, written on success
// only), returning the options and the update count.
sf::status load_optimizer(const std::string& path, const std::vector<slot>& m, const std::vector<slot>& v,
                          sf::adamw_options& options, std::int64_t& step, optimizer_info& info);
}  // namespace detail

// Reads an optimizer file into `opt` (moments, update count, options) and `info`.
// Every tensor is checked (name, dtype, shape; none missing, none extra; the moments finite,
// v not negative), and so is every number (AdamW's hyper-parameters within PyTorch's ranges).
// On error, opt is untouched.
template <class S>
sf::status load_optimizer(const std::string& path, sf::adamw<S>& opt, optimizer_info& info) {
  sf::adamw_options o;
  std::int64_t step = 0;
  if (sf::status s = detail::load_optimizer(path, tensor_slots(std::as_const(opt.m)), tensor_slots(std::as_const(opt.v)),
                                            o, step, info);
      !s)
    return s;
  opt.options = o;
  opt.t = step;
  return sf::status::ok();
}

// ----------------------------------------------------------------------------- a run's settings

// The settings of a training run that a program stores beside the optimizer state (as the
// metadata `train.<name>` of the optimizer file: save_optimizer's `extra`) so that a resumed
// run continues with exactly the same schedule. Every value, from a command line (set) or
// read back from a file (from_metadata), is parsed strictly and range-checked by the same
// rules, and a bad one is refused with the field and the value:
//   metadata 'train.total_steps': expected an integer from 1 to 1000000000000, found "nan"
// The defaults are examples/train's.
struct training_settings {
  static constexpr std::int64_t max_steps = 1'000'000'000'000;

  std::int64_t total_steps = 0;   // the schedule's length, 1 .. max_steps (0: not set yet)
  double lr = 4e-3;               // peak learning rate, > 0
  double min_lr_ratio = 0.0;      // the schedule's floor as a fraction of lr, 0 .. 1
  double warmup = 0.05;           // warm-up as a fraction of the steps, [0, 1)
  double clip = 1.0;              // global gradient-norm clipping, >= 0 (0: none)
  std::int64_t eval_every = 0;    // steps between validations, 0 .. max_steps (0: total_steps / 10)
  std::int64_t eval_batches = 32; // batches per validation, 0 .. 10^9 (0: the whole split)
  std::uint64_t seed = 1;         // any 64-bit value
  double seconds = 0.0;           // training time of the sessions so far: wall clock, >= 0
  double cpu_seconds = 0.0;       //   and CPU, >= 0

  // f(name, field, rule) for every field, in declaration order; the rule is a number_range
  // or an integer_rule.
  template <class T> struct integer_rule {
    T min, max;
  };
  template <class Self, class F>
  static void for_each_field(Self& s, F&& f) {
    constexpr integer_rule<std::int64_t> steps{1, max_steps}, every{0, max_steps}, batches{0, 1'000'000'000};
    constexpr integer_rule<std::uint64_t> any{0, UINT64_MAX};
    constexpr number_range positive{.min = 0, .min_open = true}, non_negative{.min = 0}, ratio{.min = 0, .max = 1},
                           fraction{.min = 0, .max = 1, .max_open = true};
    f("total_steps", s.total_steps, steps);
    f("lr", s.lr, positive);
    f("min_lr_ratio", s.min_lr_ratio, ratio);
    f("warmup", s.warmup, fraction);
    f("clip", s.clip, non_negative);
    f("eval_every", s.eval_every, every);
    f("eval_batches", s.eval_batches, batches);
    f("seed", s.seed, any);
    f("seconds", s.seconds, non_negative);
    f("cpu_seconds", s.cpu_seconds, non_negative);
  }

  // Sets the field `name` ("lr", "total_steps", ...) from text by its rule; on error the
  // field keeps its value and the status says what was expected (without the name):
  //   expected a number > 0, found "fast"
  sf::status set(std::string_view name, std::string_view text);

  // train.<name> -> value, for every field.
  metadata_map to_metadata() const;

  // Reads every field from the metadata `train.<name>` (all are required), each by its rule.
  // On error nothing changes and the status names the key and the value.
  sf::status from_metadata(const metadata_map& m);

  static constexpr const char* prefix = "train.";

 private:
  static sf::status parse(std::string_view text, double& out, const number_range& r) {
    return parse_number(text, out, r);
  }
  template <class T>
  static sf::status parse(std::string_view text, T& out, const integer_rule<T>& r) {
    return parse_integer(text, out, r.min, r.max);
  }
};

// ----------------------------------------------------------------------------- a training run

namespace detail {
// Creates `dir` if needed; `previous` receives the name of the optimizer file that the
// directory's model file names, if any.
sf::status prepare_training_dir(const std::string& dir, std::string& previous);
// Deletes dir/previous unless it is `current` or not a plain file name (a leftover is harmless).
void remove_previous_optimizer(const std::string& dir, const std::string& previous, const std::string& current);
}  // namespace detail

// Saves a resumable checkpoint into directory `dir` (created if needed): the model file
// (with `model_extra` metadata) and a new optimizer file (with `optimizer_extra`), in the
// crash-safe order described at the top.
template <sf::config C, checkpoint_tokenizer Tok>
sf::status save_training(const std::string& dir, const sf::trainer<C>& tr, const sf::dataset<C>& data,
                         const Tok& tok, metadata_map model_extra = {},
                         const metadata_map& optimizer_extra = {}) {
  // The optimizer file the current model file names, deleted once the new pair is in place.
  std::string previous;
  if (sf::status s = detail::prepare_training_dir(dir, previous); !s) return s;
  const std::string model_path = detail::join(dir, model_file_name);
  const std::string opt_name = detail::step_name(tr.steps());
  if (sf::status s = save_optimizer(detail::join(dir, opt_name), tr.opt, data.save_state(), data.train_size(),
                                    data.val_size(), optimizer_extra);
      !s)
    return s;
  model_extra["train.step"] = std::to_string(tr.steps());
  model_extra["train.optimizer"] = opt_name;
  if (sf::status s = save_model<C>(model_path, tr.p, tok, model_extra); !s) return s;
  detail::remove_previous_optimizer(dir, previous, opt_name);
  return sf::status::ok();
}

// Restores a run saved by save_training from `dir`: parameters, tokenizer, moments,
// update count, optimizer options and the data position. `data` must be built over the
// same tokens with the same split (checked). `info` (optional) receives the optimizer
// file's metadata. On error, the trainer and dataset may be partly overwritten.
template <sf::config C, loaded_tokenizer Tok>
sf::status load_training(const std::string& dir, sf::trainer<C>& tr, sf::dataset<C>& data, Tok& tok,
                         optimizer_info* info = nullptr) {
  const std::string model_path = detail::join(dir, model_file_name);
  metadata_map meta;
  if (sf::status s = load_model<C>(model_path, tr.p, &tok, &meta); !s) return s;
  auto opt_it = meta.find("train.optimizer");
  auto step_it = meta.find("train.step");
  if (opt_it == meta.end() || step_it == meta.end())
    return detail::error("'" + model_path + "' has no optimizer state (metadata 'train.optimizer' and "
                         "'train.step'): it can be used for inference but not resumed");
  const std::string& opt_name = opt_it->second;
  if (opt_name.find('/') != std::string::npos || opt_name.find('\\') != std::string::npos)
    return detail::error("'" + model_path + "': metadata 'train.optimizer' must be a file name, found \"" +
                         opt_name + "\"");
  optimizer_info in;
  if (sf::status s = load_optimizer(detail::join(dir, opt_name), tr.opt, in); !s) return s;
  if (std::to_string(tr.opt.t) != step_it->second)
    return detail::error("'" + model_path + "' is at step " + step_it->second + " but its optimizer file '" +
                         opt_name + "' is at step " + std::to_string(tr.opt.t));
  if (in.train_tokens != data.train_size() || in.val_tokens != data.val_size())
    return detail::error("the checkpoint was trained on " + std::to_string(in.train_tokens) + " + " +
                         std::to_string(in.val_tokens) + " tokens (train + validation), this dataset has " +
                         std::to_string(data.train_size()) + " + " + std::to_string(data.val_size()));
  data.restore_state(in.data);
  if (info) *info = std::move(in);
  return sf::status::ok();
}

}  // namespace sf::io
