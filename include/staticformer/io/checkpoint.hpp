// staticformer/io/checkpoint.hpp — training checkpoints: model, tokenizer, optimizer, data position.
//
//   sf::io::save_training<C>("out", *tr, data, tok);          // out/model.safetensors + out/optimizer-00000300.safetensors
//   sf::io::load_training<C>("out", *tr, data, tok);          // continues bit for bit
//   sf::io::load_model<C1>("out/model.safetensors", p, &tok); // inference, any batch size
//
// Two files (needs nlohmann::json, like staticformer/io/safetensors.hpp):
//
// * The model, `model.safetensors`: docs/model.md's checkpoint (F32 parameters under their
//   checkpoint names, the configuration as __metadata__), readable by staticformer-run
//   and by the safetensors library, plus the metadata
//     tokenizer.vocab   the tokenizer's byte values, "[10,32,33,...]" (a checkpoint decodes on its own)
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
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "staticformer/data.hpp"
#include "staticformer/io/safetensors.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/params.hpp"
#include "staticformer/status.hpp"
#include "staticformer/tokenizer.hpp"
#include "staticformer/train.hpp"

namespace sf::io {

inline constexpr const char* model_file_name = "model.safetensors";
inline constexpr const char* optimizer_format = "staticformer-optimizer";

namespace detail {
inline std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}
inline bool parse_hex64(std::string_view s, std::uint64_t& out) {
  if (s.size() != 16) return false;
  std::uint64_t v = 0;
  for (const char c : s) {
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return false;
    v = v << 4 | static_cast<std::uint64_t>(d);
  }
  out = v;
  return true;
}
inline bool parse_int64(const std::string& s, std::int64_t& out) {
  std::size_t v = 0;
  if (!parse_size(s, v) || v > static_cast<std::size_t>(INT64_MAX)) return false;
  out = static_cast<std::int64_t>(v);
  return true;
}
inline std::string step_name(std::int64_t step) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "optimizer-%08" PRId64 ".safetensors", step);
  return buf;
}
inline std::string join(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}
}  // namespace detail

// ----------------------------------------------------------------------------- model

// docs/model.md's checkpoint plus the tokenizer's vocabulary (and `extra` metadata).
template <sf::config C>
sf::status save_model(const std::string& path, const sf::params<C, float>& p, const sf::char_tokenizer& tok,
                      metadata_map extra = {}) {
  if (tok.size() > C.V)
    return detail::error("save_model: the tokenizer has " + std::to_string(tok.size()) +
                         " symbols, more than the model's vocabulary V = " + std::to_string(C.V));
  extra[sf::tokenizer_metadata_key] = tok.to_metadata();
  return save_params<C>(path, p, extra);
}

// Loads parameters of configuration C (any batch size) and, when `tok` is given, the
// tokenizer stored with them. `metadata` (optional) receives all of the file's metadata.
// Weights that are NaN or infinite are refused unless options.allow_non_finite.
// On error, p and tok are untouched.
template <sf::config C>
sf::status load_model(const std::string& path, sf::params<C, float>& p, sf::char_tokenizer* tok = nullptr,
                      metadata_map* metadata = nullptr, const load_options& options = {}) {
  result<file> f = file::open(path);
  if (!f) return f.status();
  sf::char_tokenizer t;
  if (tok) {
    const std::string* vocab = f->metadata(sf::tokenizer_metadata_key);
    if (!vocab)
      return detail::error("'" + path + "': no tokenizer (metadata '" + sf::tokenizer_metadata_key + "')");
    if (sf::status s = sf::char_tokenizer::from_metadata(*vocab, t); !s) return s;
    if (t.size() > C.V)
      return detail::error("'" + path + "': the tokenizer has " + std::to_string(t.size()) +
                           " symbols, more than the model's vocabulary V = " + std::to_string(C.V));
  }
  if (sf::status s = load_params<C>(*f, p, options); !s) return detail::error("'" + path + "': " + s.message());
  if (tok) *tok = t;
  if (metadata) *metadata = f->metadata();
  return sf::status::ok();
}

// ----------------------------------------------------------------------------- optimizer state

// AdamW's moments, update count and hyper-parameters, and the data position.
template <class S>
sf::status save_optimizer(const std::string& path, const sf::adamw<S>& opt, const sf::data_state& data,
                          std::size_t train_tokens, std::size_t val_tokens, const metadata_map& extra = {}) {
  writer w;
  w.set_metadata(extra);
  const sf::adamw_options& o = opt.options;
  std::string rng;
  for (std::size_t i = 0; i < data.rng.size(); ++i) {
    if (i) rng += ',';
    rng += detail::hex64(data.rng[i]);
  }
  w.set_metadata({{"format", optimizer_format},
                  {"optimizer", "adamw"},
                  {"step", std::to_string(opt.t)},
                  {"beta1", detail::format_double(o.beta1)},
                  {"beta2", detail::format_double(o.beta2)},
                  {"eps", detail::format_double(o.eps)},
                  {"weight_decay", detail::format_double(o.weight_decay)},
                  {"decay", o.decay == sf::decay_on::all ? "all" : "matrices"},
                  {"data.rng", rng},
                  {"data.batches", std::to_string(data.batches)},
                  {"data.train_tokens", std::to_string(train_tokens)},
                  {"data.val_tokens", std::to_string(val_tokens)}});
  w.add_all(opt.m, "m.");
  w.add_all(opt.v, "v.");
  return w.write(path);
}

// What an optimizer file holds besides the moments.
struct optimizer_info {
  sf::data_state data;
  std::size_t train_tokens = 0, val_tokens = 0;
  metadata_map metadata;  // everything, including the caller's keys
};

// Reads an optimizer file into `opt` (moments, update count, options) and `info`.
// Every tensor is checked (name, dtype, shape; none missing, none extra; the moments finite,
// v not negative), and so is every number (AdamW's hyper-parameters within PyTorch's ranges).
// On error, opt is untouched.
template <class S>
sf::status load_optimizer(const std::string& path, sf::adamw<S>& opt, optimizer_info& info) {
  result<file> f = file::open(path);
  if (!f) return f.status();
  auto fail = [&](const std::string& m) { return detail::error("'" + path + "': " + m); };
  auto get = [&](const char* k) -> const std::string* { return f->metadata(k); };
  for (const char* k : {"format", "optimizer", "step", "beta1", "beta2", "eps", "weight_decay", "decay", "data.rng",
                        "data.batches", "data.train_tokens", "data.val_tokens"})
    if (!get(k)) return fail(std::string("missing metadata '") + k + "'");
  if (*get("format") != optimizer_format)
    return fail("metadata 'format': expected \"" + std::string(optimizer_format) + "\", found \"" + *get("format") + "\"");
  if (*get("optimizer") != "adamw") return fail("metadata 'optimizer': expected \"adamw\", found \"" + *get("optimizer") + "\"");
  sf::adamw_options o;
  std::int64_t step = 0;
  optimizer_info in;
  if (!detail::parse_int64(*get("step"), step)) return fail("metadata 'step' is not a count");
  // The hyper-parameters within PyTorch's ranges: betas in [0, 1), eps > 0, weight decay >= 0.
  constexpr number_range beta{.min = 0, .max = 1, .max_open = true}, positive{.min = 0, .min_open = true},
                         non_negative{.min = 0};
  struct {
    const char* key;
    double* field;
    number_range range;
  } doubles[] = {{"beta1", &o.beta1, beta},
                 {"beta2", &o.beta2, beta},
                 {"eps", &o.eps, positive},
                 {"weight_decay", &o.weight_decay, non_negative}};
  for (auto& d : doubles)
    if (sf::status s = parse_number(*get(d.key), *d.field, d.range); !s)
      return fail(std::string("metadata '") + d.key + "': " + s.message());
  if (*get("decay") == "all") o.decay = sf::decay_on::all;
  else if (*get("decay") == "matrices") o.decay = sf::decay_on::matrices;
  else return fail("metadata 'decay': expected \"all\" or \"matrices\", found " + detail::shown(*get("decay")));
  const std::string& rng = *get("data.rng");
  if (rng.size() != 4 * 16 + 3) return fail("metadata 'data.rng': expected four 16-digit hex words");
  for (std::size_t i = 0; i < 4; ++i)
    if (!detail::parse_hex64(std::string_view(rng).substr(i * 17, 16), in.data.rng[i]) ||
        (i < 3 && rng[i * 17 + 16] != ','))
      return fail("metadata 'data.rng': expected four 16-digit hex words separated by commas");
  if (!detail::parse_size(*get("data.batches"), in.data.batches) ||
      !detail::parse_size(*get("data.train_tokens"), in.train_tokens) ||
      !detail::parse_size(*get("data.val_tokens"), in.val_tokens))
    return fail("metadata 'data.batches', 'data.train_tokens' and 'data.val_tokens' must be counts");

  // AdamW's moments are finite, and v (a mean of squares) is not negative.
  auto moment_problem = [&](const std::string& name, const tensor_info& t, bool is_v) -> std::string {
    if (std::string bad = detail::find_value(*f, t, detail::not_finite); !bad.empty())
      return "tensor " + detail::quoted(name) + ": " + bad + " (optimizer moments must be finite)";
    if (is_v)
      if (std::string bad = detail::find_value(*f, t, [](double x) { return x < 0; }); !bad.empty())
        return "tensor " + detail::quoted(name) + ": " + bad + " (v holds squares: never negative)";
    return {};
  };
  // Check every tensor before touching opt.
  std::size_t expected = 0;
  std::string problem;
  sf::visit(
      [&](const sf::param_name& pn, const auto& t) {
        using Tensor = std::remove_cvref_t<decltype(t)>;
        const shape_t want(std::begin(Tensor::extents), std::end(Tensor::extents));
        for (const char* prefix : {"m.", "v."}) {
          ++expected;
          const std::string name = prefix + std::string(pn.c_str());
          const tensor_info* info = f->find(name);
          if (!problem.empty()) continue;
          if (!info) problem = "missing tensor " + detail::quoted(name);
          else if (info->type != dtype::F32)
            problem = "tensor " + detail::quoted(name) + ": expected dtype F32, found " + to_string(info->type);
          else if (info->shape != want)
            problem = "tensor " + detail::quoted(name) + ": expected shape " + to_string(want) + ", found " +
                      to_string(info->shape);
          else problem = moment_problem(name, *info, prefix[0] == 'v');
        }
      },
      opt.m);
  if (!problem.empty()) return fail(problem);
  if (f->tensors().size() != expected)
    return fail("expected " + std::to_string(expected) + " tensors (m.* and v.* of every parameter), found " +
                std::to_string(f->tensors().size()));
  sf::visit(
      [&](const sf::param_name& pn, auto& m, auto& v) {
        (void)read_tensor(*f, "m." + std::string(pn.c_str()), m);
        (void)read_tensor(*f, "v." + std::string(pn.c_str()), v);
      },
      opt.m, opt.v);
  opt.options = o;
  opt.t = step;
  in.metadata = f->metadata();
  info = std::move(in);
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
  sf::status set(std::string_view name, std::string_view text) {
    sf::status result = detail::fail({"no training setting '", name, "'"});
    for_each_field(*this, [&](const char* n, auto& field, const auto& rule) {
      if (name == n) result = parse(text, field, rule);
    });
    return result;
  }

  // train.<name> -> value, for every field.
  metadata_map to_metadata() const {
    metadata_map m;
    for_each_field(*this, [&](const char* n, const auto& field, const auto&) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(field)>, double>)
        m[std::string(prefix) + n] = detail::format_double(field);
      else
        m[std::string(prefix) + n] = std::to_string(field);
    });
    return m;
  }

  // Reads every field from the metadata `train.<name>` (all are required), each by its rule.
  // On error nothing changes and the status names the key and the value.
  sf::status from_metadata(const metadata_map& m) {
    training_settings t = *this;
    sf::status result = sf::status::ok();
    for_each_field(t, [&](const char* n, auto& field, const auto& rule) {
      if (!result) return;
      const std::string key = std::string(prefix) + n;
      const auto it = m.find(key);
      if (it == m.end()) {
        result = detail::fail({"missing metadata '", key, "'"});
      } else if (sf::status s = parse(it->second, field, rule); !s) {
        result = detail::fail({"metadata '", key, "': ", s.message()});
      }
    });
    if (result) *this = t;
    return result;
  }

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

// Saves a resumable checkpoint into directory `dir` (created if needed): the model file
// (with `model_extra` metadata) and a new optimizer file (with `optimizer_extra`), in the
// crash-safe order described at the top.
template <sf::config C>
sf::status save_training(const std::string& dir, const sf::trainer<C>& tr, const sf::dataset<C>& data,
                         const sf::char_tokenizer& tok, metadata_map model_extra = {},
                         const metadata_map& optimizer_extra = {}) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return detail::error("cannot create directory '" + dir + "': " + ec.message());
  const std::string model_path = detail::join(dir, model_file_name);
  // The optimizer file the current model file names, deleted once the new pair is in place.
  std::string previous;
  if (std::filesystem::exists(model_path, ec)) {
    if (result<file> old = file::open(model_path); old)
      if (const std::string* name = old->metadata("train.optimizer")) previous = *name;
  }
  const std::string opt_name = detail::step_name(tr.steps());
  if (sf::status s = save_optimizer(detail::join(dir, opt_name), tr.opt, data.save_state(), data.train_size(),
                                    data.val_size(), optimizer_extra);
      !s)
    return s;
  model_extra["train.step"] = std::to_string(tr.steps());
  model_extra["train.optimizer"] = opt_name;
  if (sf::status s = save_model<C>(model_path, tr.p, tok, model_extra); !s) return s;
  if (!previous.empty() && previous != opt_name && previous.find('/') == std::string::npos &&
      previous.find('\\') == std::string::npos)
    std::filesystem::remove(detail::join(dir, previous), ec);  // a leftover file is harmless
  return sf::status::ok();
}

// Restores a run saved by save_training from `dir`: parameters, tokenizer, moments,
// update count, optimizer options and the data position. `data` must be built over the
// same tokens with the same split (checked). `info` (optional) receives the optimizer
// file's metadata. On error, the trainer and dataset may be partly overwritten.
template <sf::config C>
sf::status load_training(const std::string& dir, sf::trainer<C>& tr, sf::dataset<C>& data, sf::char_tokenizer& tok,
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
