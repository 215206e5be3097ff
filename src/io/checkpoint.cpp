// src/io/checkpoint.cpp — training checkpoints (staticformer/io/checkpoint.hpp): the model file,
// the optimizer file, a run's settings and the directory of a training run.
#include "staticformer/io/checkpoint.hpp"

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <system_error>

namespace sf::io {

namespace detail {
std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}
bool parse_hex64(std::string_view s, std::uint64_t& out) {
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
bool parse_int64(const std::string& s, std::int64_t& out) {
  std::size_t v = 0;
  if (!parse_size(s, v) || v > static_cast<std::size_t>(INT64_MAX)) return false;
  out = static_cast<std::int64_t>(v);
  return true;
}
std::string step_name(std::int64_t step) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "optimizer-%08" PRId64 ".safetensors", step);
  return buf;
}
std::string join(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

// ----------------------------------------------------------------------------- model

sf::status save_model(const std::string& path, const sf::arch& c, const std::vector<slot>& p,
                      const result<metadata_map>& tok, metadata_map extra) {
  if (!tok) return error(std::string("save_model: ") + tok.message());
  for (const auto& [key, value] : *tok) extra[key] = value;
  return save_slots(path, c, p, extra);
}

sf::status load_model(const std::string& path, const sf::arch& c, const std::vector<slot>& p, any_tokenizer* tok,
                      bool chars_only, metadata_map* metadata, const load_options& options) {
  result<file> f = file::open(path);
  if (!f) return f.status();
  result<any_tokenizer> t = any_tokenizer{};
  if (tok) {
    t = read_tokenizer(f->metadata(), c.V);
    if (!t) return error("'" + path + "': " + t.message());
    if (chars_only && t->is_bpe())
      return error("'" + path + "': its tokenizer is a BPE one (metadata '" + bpe_tokenizer_metadata_key +
                   "'); load it into an sf::io::any_tokenizer (a character tokenizer was asked for)");
  }
  if (sf::status s = load_slots(*f, c, p, options); !s) return error("'" + path + "': " + s.message());
  if (tok) *tok = std::move(*t);
  if (metadata) *metadata = f->metadata();
  return sf::status::ok();
}

// ----------------------------------------------------------------------------- optimizer state

sf::status save_optimizer(const std::string& path, const sf::adamw_options& o, std::int64_t t,
                          const std::vector<slot>& m, const std::vector<slot>& v, const sf::data_state& data,
                          std::size_t train_tokens, std::size_t val_tokens, const metadata_map& extra) {
  writer w;
  w.set_metadata(extra);
  std::string rng;
  for (std::size_t i = 0; i < data.rng.size(); ++i) {
    if (i) rng += ',';
    rng += hex64(data.rng[i]);
  }
  w.set_metadata({{"format", optimizer_format},
                  {"optimizer", "adamw"},
                  {"step", std::to_string(t)},
                  {"beta1", format_double(o.beta1)},
                  {"beta2", format_double(o.beta2)},
                  {"eps", format_double(o.eps)},
                  {"weight_decay", format_double(o.weight_decay)},
                  {"decay", o.decay == sf::decay_on::all ? "all" : "matrices"},
                  {"data.rng", rng},
                  {"data.batches", std::to_string(data.batches)},
                  {"data.train_tokens", std::to_string(train_tokens)},
                  {"data.val_tokens", std::to_string(val_tokens)}});
  w.add_slots(m, "m.");
  w.add_slots(v, "v.");
  return w.write(path);
}

sf::status load_optimizer(const std::string& path, const std::vector<slot>& m_slots, const std::vector<slot>& v_slots,
                          sf::adamw_options& options, std::int64_t& step_out, optimizer_info& info) {
  result<file> f = file::open(path);
  if (!f) return f.status();
  auto fail = [&](const std::string& m) { return error("'" + path + "': " + m); };
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
  if (!parse_int64(*get("step"), step)) return fail("metadata 'step' is not a count");
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
  else return fail("metadata 'decay': expected \"all\" or \"matrices\", found " + shown(*get("decay")));
  const std::string& rng = *get("data.rng");
  if (rng.size() != 4 * 16 + 3) return fail("metadata 'data.rng': expected four 16-digit hex words");
  for (std::size_t i = 0; i < 4; ++i)
    if (!parse_hex64(std::string_view(rng).substr(i * 17, 16), in.data.rng[i]) || (i < 3 && rng[i * 17 + 16] != ','))
      return fail("metadata 'data.rng': expected four 16-digit hex words separated by commas");
  if (!parse_size(*get("data.batches"), in.data.batches) || !parse_size(*get("data.train_tokens"), in.train_tokens) ||
      !parse_size(*get("data.val_tokens"), in.val_tokens))
    return fail("metadata 'data.batches', 'data.train_tokens' and 'data.val_tokens' must be counts");

  // AdamW's moments are finite, and v (a mean of squares) is not negative.
  auto moment_problem = [&](const std::string& name, const tensor_info& t, bool is_v) -> std::string {
    if (std::string bad = find_not_finite(*f, t); !bad.empty())
      return "tensor " + detail::quoted(name) + ": " + bad + " (optimizer moments must be finite)";
    if (is_v)
      if (std::string bad = find_value(*f, t, [](double x) { return x < 0; }); !bad.empty())
        return "tensor " + detail::quoted(name) + ": " + bad + " (v holds squares: never negative)";
    return {};
  };
  // Check every tensor before touching the moments.
  std::size_t expected = 0;
  std::string problem;
  for (const slot& sl : m_slots) {
    for (const char* prefix : {"m.", "v."}) {
      ++expected;
      const std::string name = prefix + sl.name;
      const tensor_info* t = f->find(name);
      if (!problem.empty()) continue;
      if (!t) problem = "missing tensor " + detail::quoted(name);
      else if (t->type != dtype::F32)
        problem = "tensor " + detail::quoted(name) + ": expected dtype F32, found " + to_string(t->type);
      else if (t->shape != sl.shape)
        problem = "tensor " + detail::quoted(name) + ": expected shape " + to_string(sl.shape) + ", found " +
                  to_string(t->shape);
      else problem = moment_problem(name, *t, prefix[0] == 'v');
    }
  }
  if (!problem.empty()) return fail(problem);
  if (f->tensors().size() != expected)
    return fail("expected " + std::to_string(expected) + " tensors (m.* and v.* of every parameter), found " +
                std::to_string(f->tensors().size()));
  // The slots point into the caller's non-const moments (see load_optimizer).
  auto copy = [&](const std::string& name, const slot& sl) {
    const tensor_info& t = *f->find(name);
    if (sl.type == dtype::F32) convert(t.type, f->data(t), static_cast<float*>(const_cast<void*>(sl.data)), sl.size);
    else convert(t.type, f->data(t), static_cast<double*>(const_cast<void*>(sl.data)), sl.size);
  };
  for (std::size_t i = 0; i < m_slots.size(); ++i) {
    copy("m." + m_slots[i].name, m_slots[i]);
    copy("v." + m_slots[i].name, v_slots[i]);
  }
  options = o;
  step_out = step;
  in.metadata = f->metadata();
  info = std::move(in);
  return sf::status::ok();
}

// ----------------------------------------------------------------------------- a training run

sf::status prepare_training_dir(const std::string& dir, std::string& previous) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return error("cannot create directory '" + dir + "': " + ec.message());
  const std::string model_path = join(dir, model_file_name);
  if (std::filesystem::exists(model_path, ec)) {
    if (result<file> old = file::open(model_path); old)
      if (const std::string* name = old->metadata("train.optimizer")) previous = *name;
  }
  return sf::status::ok();
}

void remove_previous_optimizer(const std::string& dir, const std::string& previous, const std::string& current) {
  std::error_code ec;
  if (!previous.empty() && previous != current && previous.find('/') == std::string::npos &&
      previous.find('\\') == std::string::npos)
    std::filesystem::remove(join(dir, previous), ec);  // a leftover file is harmless
}
}  // namespace detail

// ----------------------------------------------------------------------------- a run's settings

sf::status training_settings::set(std::string_view name, std::string_view text) {
  sf::status result = detail::fail({"no training setting '", name, "'"});
  for_each_field(*this, [&](const char* n, auto& field, const auto& rule) {
    if (name == n) result = parse(text, field, rule);
  });
  return result;
}

metadata_map training_settings::to_metadata() const {
  metadata_map m;
  for_each_field(*this, [&](const char* n, const auto& field, const auto&) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(field)>, double>)
      m[std::string(prefix) + n] = detail::format_double(field);
    else
      m[std::string(prefix) + n] = std::to_string(field);
  });
  return m;
}

sf::status training_settings::from_metadata(const metadata_map& m) {
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

}  // namespace sf::io
