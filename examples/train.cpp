// train — trains the `nano` model on tiny-shakespeare from one command.
//
//   build/examples/train                      # ~60 s on one core; writes out/train/
//   build/examples/train --seconds 10 --seed 7 --out /tmp/run
//   build/examples/train --resume out/train   # continue a stopped run, bit for bit
//
// Shape: nano exactly (V 65, T 64, D 64, H 4, L 2, F 256, B 4). A character tokenizer is
// built from the corpus; its vocabulary goes into the checkpoint. Optimisation: AdamW
// (lr 4e-3, β1 0.9, β2 0.999, ε 1e-8, weight decay 0.1 on matrices and embeddings only),
// global gradient-norm clipping at 1, linear warm-up over 5% of the steps, then cosine
// decay to 0. These won a search at a fixed budget of 4M tokens on nano: B 4 beat B 2, 8,
// 16 and 32 per token (and runs as fast per token as B 8 here); β2 0.999 beat 0.99 and
// 0.95; a floor of 0 beat lr/10; weight decay 0.1 beat 0, 0.2 and 0.3.
//
// Time and determinism. --seconds S (default 60) is a budget for the training loop, on the CPU
// time of this single-threaded program (the time on one core, which other programs on a busy
// machine do not stretch; with --threads N the wall-clock time). Without --steps, the schedule is
// sized to it (staticformer/budget.hpp): the first 2.5% of the budget (at least 20 steps) measure
// the step rate, then the length N is fixed so that warm-up and cosine decay end at 95% of the
// budget, and if the rate falls later the rest of the schedule is shortened to fit (the curve
// compressed from where it is, without a jump; a line says so). Such a run depends on the machine's
// speed, so it is not bit-identical across machines or runs. --steps N fixes the length: the same flags and seed give the same losses, bit for bit, on
// every run and every machine; it runs all N steps unless --seconds is also given and runs out
// first, which it says (training stops there, saves, and can be resumed with --resume). --threads N
// splits the matrix products over N threads (sf::thread_pool): the checkpoint is the same bit for
// bit as with one thread.
//
// Output (in --out): model.safetensors (docs/model.md checkpoint + tokenizer) and the optimizer
// file it names, loss.csv, loss.png (gnuplot), sample.txt. The last line printed is
//   final: steps K of N (P% of the schedule), train loss X, val loss Y, tokens/s Z, seconds S
// K = steps run, N = the schedule's length, X = mean training loss of the last 50 steps, Y = loss over the whole validation split,
// S = wall-clock training time (steps and periodic validation), Z = tokens trained / S.
// The line before it gives the CPU time as well.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include <fmt/core.h>

#include "staticformer/budget.hpp"
#include "staticformer/cpu_report.hpp"
#include "staticformer/data.hpp"
#include "staticformer/io/checkpoint.hpp"
#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/tokenizer.hpp"
#include "staticformer/threads.hpp"
#include "staticformer/train.hpp"
#include "train/configs.hpp"

// The checkpoint code is large: save_training and load_training for nano (float32 and bf16
// products, SF_TRAIN_CONFIGS of train/configs.hpp) are compiled in a translation unit of their
// own, examples/train/checkpoint.cpp, to keep each quick to compile.
#define SF_TRAIN_EXTERN(CFG)                                                                                   \
  extern template sf::status sf::io::save_training<CFG>(const std::string&, const sf::trainer<CFG>&,          \
                                                        const sf::dataset<CFG>&, const sf::char_tokenizer&,   \
                                                        sf::io::metadata_map, const sf::io::metadata_map&);   \
  extern template sf::status sf::io::load_training<CFG>(const std::string&, sf::trainer<CFG>&, sf::dataset<CFG>&, \
                                                        sf::char_tokenizer&, sf::io::optimizer_info*);
SF_TRAIN_CONFIGS(SF_TRAIN_EXTERN)
// So is the training step (sf::trainer: forward, backward, AdamW), in examples/train/trainer.cpp.
#define SF_TRAINER_EXTERN(CFG) extern template struct sf::trainer<CFG>;
SF_TRAIN_CONFIGS(SF_TRAINER_EXTERN)

// Decoding with the trained weights is in examples/train/decode.cpp (its own translation unit):
// the sample at the end, and the validation loss with float and int8 weights through the KV-cache
// decoder, with the int8 checkpoint written beside the float one.
std::string generate(const sf::params<sf::configs::nano>& p, const sf::char_tokenizer& tok, const std::string& prompt,
                     std::size_t n, std::uint64_t seed, float temperature = 0.8f);
template <sf::config DC>
sf::status report_int8(const sf::params<sf::configs::nano>& p, const sf::dataset<DC>& data,
                       const sf::char_tokenizer& tok, const std::string& out_dir);

#ifndef SF_DEFAULT_CORPUS
#define SF_DEFAULT_CORPUS "data/tinyshakespeare.txt"
#endif

namespace {

// ----------------------------------------------------------------------------- configuration

constexpr sf::config C = sf::configs::nano;

struct options {
  double seconds = 60;         // the budget (CPU seconds; wall-clock with --threads > 1)
  bool seconds_given = false;  // --seconds given: a limit for --steps and --resume too
  std::int64_t steps = 0;      // 0: sized to the budget (staticformer/budget.hpp)
  std::uint64_t seed = 1;
  std::string out = "out/train";
  std::string data = "";
  std::string resume = "";
  std::int64_t stop_after = 0;  // stop (and save) after this step: to test resuming
  double lr = 4e-3;
  double min_lr_ratio = 0.0;
  double warmup = 0.05;  // fraction of the steps
  double weight_decay = 0.1;
  double beta2 = 0.999;
  double clip = 1.0;
  std::int64_t eval_every = 0;  // 0: steps / 10
  std::size_t eval_batches = 32;
  std::size_t sample_chars = 400;
  bool plot = true;
  std::size_t threads = 1;  // > 1: the matrix products on a thread pool (the same bits)
  sf::precision_kind precision = sf::precision_kind::f32;  // of the matrix products (config.hpp)
};

// The run's settings that the checkpoint stores (train.<name> in the optimizer file) and a
// resumed run reads back: sf::io::training_settings parses and checks them, on the command
// line and in the file by the same rules.
sf::io::training_settings settings_of(const options& o) {
  sf::io::training_settings s;
  s.total_steps = o.steps;
  s.lr = o.lr;
  s.min_lr_ratio = o.min_lr_ratio;
  s.warmup = o.warmup;
  s.clip = o.clip;
  s.eval_every = o.eval_every;
  s.eval_batches = static_cast<std::int64_t>(o.eval_batches);
  s.seed = o.seed;
  return s;
}
void apply(const sf::io::training_settings& s, options& o) {
  o.steps = s.total_steps;
  o.lr = s.lr;
  o.min_lr_ratio = s.min_lr_ratio;
  o.warmup = s.warmup;
  o.clip = s.clip;
  o.eval_every = s.eval_every;
  o.eval_batches = static_cast<std::size_t>(s.eval_batches);
  o.seed = s.seed;
}

void usage(std::FILE* to) {
  std::fprintf(to,
               "usage: train [--seconds S] [--steps N] [--seed K] [--out DIR] [--resume DIR] [options]\n"
               "  --seconds S      budget of the training loop in CPU seconds on one core, > 0 (default 60): the\n"
               "                   schedule is sized to end within it, from the step rate measured over its\n"
               "                   first 2.5%% (not reproducible bit for bit); with --steps or --resume, only a limit\n"
               "  --steps N        schedule length in steps, >= 1: runs all N (reproducible), unless --seconds\n"
               "                   is also given and runs out first\n"
               "  --seed K         initialisation, data order and sampling (default 1)\n"
               "  --out DIR        output directory (default out/train; with --resume: the resumed directory)\n"
               "  --resume DIR     continue the run saved in DIR (its schedule and settings are kept)\n"
               "  --data FILE      corpus (default data/tinyshakespeare.txt)\n"
               "  --lr X           peak learning rate, > 0 (default 4e-3)\n"
               "  --warmup F       warm-up as a fraction of the steps, in [0, 1) (0.05)\n"
               "  --min-lr-ratio R floor of the cosine as a fraction of lr, 0 to 1 (0)\n"
               "  --weight-decay W (0.1, matrices only)  --beta2 B in [0, 1) (0.999)\n"
               "  --clip G         gradient-norm clipping (1.0; 0: no clipping)\n"
               "  --eval-every N   validation every N steps (default and 0: steps/10) on --eval-batches K\n"
               "                   batches (32; 0: the whole validation split)\n"
               "  --stop-after N   stop after step N and save, as if interrupted (0: do not stop)\n"
               "  --sample N       characters to generate at the end (400; 0: none)\n"
               "  --no-plot        do not run gnuplot\n"
               "  --threads N      split the matrix products over N threads, 1 to 64 (default 1): the same\n"
               "                   results bit for bit; --seconds then counts wall-clock time\n"
               "  --precision P    f32 (default: exact float32) or bf16 (the products of the linear layers\n"
               "                   and the head with bf16 operands, float32 sums; weights, optimizer and\n"
               "                   checkpoint stay float32); a resumed run needs the precision it began with\n");
}

bool parse(int argc, char** argv, options& o) {
  // Every value is parsed strictly (the whole argument, finite) and range-checked; the
  // settings the checkpoint stores by sf::io::training_settings's rules, which also check
  // them when a run is resumed.
  sf::io::training_settings run = settings_of(o);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "train: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    auto check = [&](const sf::status& s) {
      if (!s) {
        std::fprintf(stderr, "train: %s: %s\n", a.c_str(), s.message());
        std::exit(2);
      }
    };
    auto setting = [&](const char* name) { check(run.set(name, value())); };
    auto number = [&](double& out, const sf::io::number_range& range) { check(sf::io::parse_number(value(), out, range)); };
    auto integer = [&](auto& out, std::int64_t min, std::int64_t max) {
      std::int64_t v = 0;
      check(sf::io::parse_integer(std::string_view(value()), v, min, max));
      out = static_cast<std::remove_reference_t<decltype(out)>>(v);
    };
    constexpr std::int64_t max_steps = sf::io::training_settings::max_steps;
    if (a == "--seconds") number(o.seconds, {.min = 0, .max = 1e9, .min_open = true}), o.seconds_given = true;
    else if (a == "--steps") setting("total_steps");
    else if (a == "--seed") setting("seed");
    else if (a == "--out") o.out = value();
    else if (a == "--resume") o.resume = value();
    else if (a == "--data") o.data = value();
    else if (a == "--stop-after") integer(o.stop_after, 0, max_steps);
    else if (a == "--lr") setting("lr");
    else if (a == "--min-lr-ratio") setting("min_lr_ratio");
    else if (a == "--warmup") setting("warmup");
    else if (a == "--weight-decay") number(o.weight_decay, {.min = 0});
    else if (a == "--beta2") number(o.beta2, {.min = 0, .max = 1, .max_open = true});
    else if (a == "--clip") setting("clip");
    else if (a == "--eval-every") setting("eval_every");
    else if (a == "--eval-batches") setting("eval_batches");
    else if (a == "--sample") integer(o.sample_chars, 0, 100'000'000);
    else if (a == "--no-plot") o.plot = false;
    else if (a == "--threads") integer(o.threads, 1, 64);
    else if (a == "--precision") {
      const char* v = value();
      const auto p = sf::parse<sf::precision_kind>(v);
      if (!p) {
        std::fprintf(stderr, "train: --precision: '%s' is not f32 or bf16\n", v);
        std::exit(2);
      }
      o.precision = *p;
    }
    else if (a == "-h" || a == "--help") {
      usage(stdout);
      std::exit(0);
    } else {
      std::fprintf(stderr, "train: unknown argument '%s'\n", a.c_str());
      usage(stderr);
      return false;
    }
  }
  apply(run, o);
  return true;
}

// ----------------------------------------------------------------------------- helpers

std::atomic<bool> interrupted{false};
extern "C" void on_sigint(int) { interrupted = true; }

using clock_type = std::chrono::steady_clock;
double since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }
// CPU time of this (single-threaded) process since c0.
double cpu_since(std::clock_t c0) { return static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC; }

std::string clock_string(double s) {
  const auto t = static_cast<long>(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60) : fmt::format("{}:{:02}", t / 60, t % 60);
}

std::string rate_string(double tokens_per_second) {
  return tokens_per_second >= 1e3 ? fmt::format("{:.1f}k", tokens_per_second / 1e3) : fmt::format("{:.0f}", tokens_per_second);
}

// Reads at most `limit` bytes of `path` into out; "" on success, else why not (a file, pipe or
// device longer than the limit is refused, not read to its end: /dev/zero ends here too).
std::string read_file(const std::string& path, std::string& out, std::size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open it";
  out.clear();
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    const auto got = static_cast<std::size_t>(in.gcount());
    if (out.size() + got > limit) return "it is longer than " + std::to_string(limit) + " bytes";
    out.append(buf, got);
  }
  return in.bad() ? "a read error" : "";
}
constexpr std::size_t max_corpus_bytes = std::size_t{256} << 20;

// One row of loss.csv.
struct row {
  std::int64_t step;  // updates done after this row's step (1-based)
  double seconds;
  double lr;
  double train_loss;
  double val_loss;  // NaN when not evaluated at this step
  double train_avg = NAN;  // mean train loss of the last `smooth_window` steps (filled when written)
};

constexpr std::size_t smooth_window = 100;

// Fills train_avg: the mean of the last smooth_window training losses.
void smooth(std::vector<row>& rows) {
  double sum = 0;
  std::size_t n = 0, first = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!std::isfinite(rows[i].train_loss)) continue;
    sum += rows[i].train_loss;
    ++n;
    while (n > smooth_window) {
      if (std::isfinite(rows[first].train_loss)) {
        sum -= rows[first].train_loss;
        --n;
      }
      ++first;
    }
    rows[i].train_avg = sum / static_cast<double>(n);
  }
}

bool write_csv(const std::string& path, std::vector<row> rows) {
  smooth(rows);
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) return false;
  std::fprintf(f, "step,tokens,seconds,lr,train_loss,val_loss,train_loss_avg%zu\n", smooth_window);
  for (const row& r : rows) {
    std::fprintf(f, "%lld,%lld,%.3f,%.6g,", static_cast<long long>(r.step),
                 static_cast<long long>(r.step) * static_cast<long long>(C.B * C.T), r.seconds, r.lr);
    if (std::isfinite(r.train_loss)) std::fprintf(f, "%.6f", r.train_loss);  // empty: not measured
    std::fprintf(f, ",");
    if (std::isfinite(r.val_loss)) std::fprintf(f, "%.6f", r.val_loss);
    std::fprintf(f, ",");
    if (std::isfinite(r.train_avg)) std::fprintf(f, "%.6f", r.train_avg);
    std::fprintf(f, "\n");
  }
  const bool ok = std::fclose(f) == 0;
  return ok && std::rename(tmp.c_str(), path.c_str()) == 0;
}

// Rows of an earlier loss.csv up to `last_step` (for a resumed run), as write_csv wrote them:
// "" on success, else what is wrong (a resumed run refuses a damaged loss.csv rather than guess).
// The file is read only as far as such a file can reach (a row is at most ~100 bytes).
std::string read_csv(const std::string& path, std::int64_t last_step, std::vector<row>& rows) {
  std::string text;
  const std::size_t limit = 4096 + 128 * static_cast<std::size_t>(last_step + 2);
  if (std::string why = read_file(path, text, limit); !why.empty()) return "'" + path + "': " + why;
  rows.clear();
  std::size_t line_no = 0, pos = 0;
  std::int64_t previous = -1;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (++line_no == 1) continue;  // header
    std::vector<std::string> f(1);
    for (const char c : line) {
      if (c == ',') f.emplace_back();
      else f.back() += c;
    }
    auto bad = [&](const std::string& what) { return "'" + path + "' line " + std::to_string(line_no) + ": " + what; };
    if (f.size() != 7) return bad("expected 7 comma-separated fields, found " + std::to_string(f.size()));
    row r{};
    if (sf::status st = sf::io::parse_integer<std::int64_t>(f[0], r.step, 0, last_step + 1); !st)
      return bad(std::string("step: ") + st.message());
    if (r.step <= previous) return bad("steps must increase");
    if (std::int64_t tokens = 0; !sf::io::parse_integer<std::int64_t>(f[1], tokens, 0, INT64_MAX))
      return bad("tokens: expected a non-negative integer, found '" + f[1] + "'");
    previous = r.step;
    // seconds, lr, train loss, val loss: numbers (the losses may be empty: not measured)
    auto num = [&](const std::string& x, double& v, bool may_be_empty) -> std::string {
      if (x.empty() && may_be_empty) return v = NAN, "";
      if (sf::status st = sf::io::parse_number(x, v); !st) return st.message();
      return "";
    };
    for (auto [field, out, empty] : {std::tuple{2, &r.seconds, false}, std::tuple{3, &r.lr, false},
                                     std::tuple{4, &r.train_loss, true}, std::tuple{5, &r.val_loss, true}})
      if (std::string why = num(f[static_cast<std::size_t>(field)], *out, empty); !why.empty())
        return bad("field " + std::to_string(field + 1) + ": " + why);
    if (r.step <= last_step) rows.push_back(r);
  }
  return "";
}

bool plot(const std::string& csv, const std::string& png, const std::string& title) {
  std::FILE* g = popen("gnuplot 2>/dev/null", "w");
  if (!g) return false;
  std::fprintf(g,
               "set terminal pngcairo size 900,540 font 'sans,11' noenhanced\n"
               "set output '%s'\n"
               "set datafile separator ','\n"
               "set key top right\n"
               "set grid\n"
               "set autoscale xfix\n"
               "set title '%s'\n"
               "set xlabel 'step'\n"
               "set ylabel 'loss (nats/char)'\n"
               "set yrange [1:4.5]\n"
               "set y2tics nomirror\n"
               "set y2label 'learning rate'\n"
               "set ytics nomirror\n"
               "plot '%s' using 1:5 with lines lw 1 lc rgb '#c6d9ec' title 'train (per step)', \\\n"
               "     '' using 1:7 with lines lw 2 lc rgb '#1f77b4' title 'train (mean of %zu steps)', \\\n"
               "     '' using 1:(strlen(strcol(6)) > 0 ? $6 : 1/0) with linespoints lw 2 pt 7 lc rgb '#d62728' "
               "title 'validation', \\\n"
               "     '' using 1:4 axes x1y2 with lines dt 2 lc rgb '#555555' title 'learning rate'\n",
               png.c_str(), title.c_str(), csv.c_str(), smooth_window);
  return pclose(g) == 0;
}


}  // namespace

namespace {
// The run, with the model's products in TC.precision (nano otherwise).
template <sf::config TC>
int run(options& o) {
  if (const char* w = TC.precision == sf::precision_kind::bf16 ? sf::cpu::bf16_warning() : nullptr) std::fprintf(stderr, "train: %s\n", w);
  const bool resuming = !o.resume.empty();

  // ---- corpus, tokenizer, data
  std::string corpus_path = o.data;
  if (corpus_path.empty()) corpus_path = std::filesystem::exists("data/tinyshakespeare.txt") ? "data/tinyshakespeare.txt"
                                                                                              : SF_DEFAULT_CORPUS;
  std::string text;
  if (std::string why = read_file(corpus_path, text, max_corpus_bytes); !why.empty() || text.empty()) {
    std::fprintf(stderr, "train: cannot read the corpus '%s': %s (give one with --data FILE)\n", corpus_path.c_str(),
                 why.empty() ? "it is empty" : why.c_str());
    return 1;
  }
  const sf::char_tokenizer tok = sf::char_tokenizer::from_corpus(text);
  if (tok.size() > C.V) {
    std::fprintf(stderr, "train: the corpus has %zu distinct bytes; this model's vocabulary holds V = %zu\n",
                 tok.size(), C.V);
    return 1;
  }
  std::vector<std::int32_t> ids;
  if (sf::status s = tok.encode(text, ids); !s) return std::fprintf(stderr, "train: %s\n", s.message()), 1;
  sf::dataset<TC> data(ids, 0.1, o.seed);
  if (!data.ok()) return std::fprintf(stderr, "train: %s\n", data.status().message()), 1;

  // ---- model, gradients, moments, activations: allocated once, never in a step
  auto tr = std::make_unique<sf::trainer<TC>>();
  sf::init_params(tr->p, o.seed);
  double elapsed_before = 0, cpu_before = 0;  // training seconds of earlier sessions (wall, CPU)
  std::vector<row> rows;
  if (resuming) {
    sf::char_tokenizer saved_tok;
    sf::io::optimizer_info info;
    if (sf::status s = sf::io::load_training<TC>(o.resume, *tr, data, saved_tok, &info); !s)
      return std::fprintf(stderr, "train: cannot resume from '%s': %s\n", o.resume.c_str(), s.message()), 1;
    // A run continues in the precision it began with (bit for bit); runs saved before there was a
    // choice were float32.
    const auto saved = info.metadata.find("train.precision");
    const std::string was = saved == info.metadata.end() ? "f32" : saved->second;
    if (was != sf::to_string(TC.precision))
      return std::fprintf(stderr, "train: cannot resume from '%s': it was trained with --precision %s, not %s\n",
                          o.resume.c_str(), was.c_str(), sf::to_string(TC.precision)), 1;
    if (!(saved_tok == tok))
      return std::fprintf(stderr, "train: the checkpoint's tokenizer differs from this corpus's\n"), 1;
    // The run's settings come from the checkpoint, so that it continues exactly; each is
    // parsed strictly and range-checked (sf::io::training_settings), like the command line.
    sf::io::training_settings run = settings_of(o);
    if (sf::status s = run.from_metadata(info.metadata); !s)
      return std::fprintf(stderr, "train: cannot resume from '%s': %s\n", o.resume.c_str(), s.message()), 1;
    apply(run, o);
    elapsed_before = run.seconds;
    cpu_before = run.cpu_seconds;
    if (std::string why = read_csv(sf::io::detail::join(o.resume, "loss.csv"), tr->steps(), rows); !why.empty())
      return std::fprintf(stderr, "train: cannot resume from '%s': %s\n", o.resume.c_str(), why.c_str()), 1;
  } else {
    tr->opt.options = {.beta1 = 0.9, .beta2 = o.beta2, .eps = 1e-8, .weight_decay = o.weight_decay,
                       .decay = sf::decay_on::matrices};
  }
  // The schedule's length: --steps N (or the resumed run's), else sized to the budget by a probe
  // (staticformer/budget.hpp). The budget limits the loop by default and whenever --seconds is given.
  sf::time_budget budget = sf::time_budget::for_run(
      o.seconds, o.seconds_given, o.threads, o.eval_every,
      {.max_lr = o.lr, .min_lr = o.lr * o.min_lr_ratio, .warmup = o.warmup}, o.steps);
  const char* clock_name = budget.clock_name();
  const std::string limit_text =
      budget.limited() ? fmt::format("limit {:g} {} seconds", o.seconds, clock_name) : "no time limit";
  auto schedule_text = [&] {
    const std::int64_t total = budget.total();
    const sf::lr_schedule s = budget.schedule(0);
    return fmt::format("{} steps ({} tokens), AdamW lr {:g} warm-up {} steps, cosine to {:g}", total,
                       total * static_cast<std::int64_t>(C.B * C.T), o.lr, s.warmup_steps, s.min_lr);
  };

  fmt::print("staticformer train: nano (V {} T {} D {} H {} L {} F {}), B {}, {} products, {} parameters, {:.1f} MB "
             "of training state\n",
             C.V, C.T, C.D, C.H, C.L, C.F, C.B, sf::to_string(TC.precision), sf::parameter_count<sf::params<C>>,
             static_cast<double>(sizeof(sf::trainer<TC>)) / (1 << 20));
  fmt::print("corpus {}: {} chars, vocabulary {}, train {} / validation {} tokens\n", corpus_path, text.size(),
             tok.size(), data.train_size(), data.val_size());
  if (budget.sizing())
    fmt::print("schedule: sized to the budget of {:g} {} seconds (the step rate measured over its first {:.2f} s, "
               "at least {} steps; warm-up {:g}% and cosine to {:g} end at {:g}% of it), AdamW lr {:g}, wd {:g}, clip {:g}; "
               "seed {}\n",
               o.seconds, clock_name, budget.probe_length(), budget.settings().probe_steps, 100 * o.warmup,
               o.lr * o.min_lr_ratio, 100 * budget.settings().fill, o.lr, tr->opt.options.weight_decay, o.clip, o.seed);
  else
    fmt::print("schedule: {}, wd {:g}, clip {:g}; seed {}; {}\n", schedule_text(), tr->opt.options.weight_decay, o.clip,
               o.seed, limit_text);
  fmt::print("validation {} on {} windows spread over the split; at the end on all {}\n",
             budget.eval_every() > 0 ? fmt::format("every {} steps", budget.eval_every())
                                     : std::string("every tenth of the schedule"),
             std::min(o.eval_batches * C.B, data.val_windows()), data.val_windows());
  if (resuming) fmt::print("resumed from {} at step {}\n", o.resume, tr->steps());
  std::fflush(stdout);

  std::signal(SIGINT, on_sigint);
  const bool tty = ::isatty(::fileno(stdout)) != 0;
  const std::int64_t start_step = tr->steps();
  if (!resuming) {
    const double v0 = budget.timed([&] { return tr->evaluate(data, o.eval_batches); });  // (its cost, for the sizing)
    fmt::print("step 0: val loss {:.4f}\n", v0);
    rows.push_back({0, 0.0, 0.0, NAN, v0});
  }

  // ---- training (with --threads N the matrix products are split over N threads: same bits)
  const sf::thread_pool pool(o.threads);
  const sf::use_threads use_pool(pool);
  const auto t0 = clock_type::now();
  const std::clock_t c0 = std::clock();
  budget.start(tr->steps());
  double window_loss = 0;
  std::int64_t window_n = 0;
  std::string stop_reason;
  while (!budget.finished(tr->steps())) {
    if (interrupted) {
      stop_reason = "(interrupted)";
      break;
    }
    if (budget.out_of_time()) {
      stop_reason = fmt::format("by the budget of {:g} {} seconds (--seconds)", o.seconds, clock_name);
      break;
    }
    const sf::step_result r = tr->step(data, budget.lr(tr->steps()), o.clip);
    if (!std::isfinite(r.loss) || !r.updated) {
      std::fprintf(stderr, "\ntrain: step %lld: loss %g, gradient norm %g — stopping\n",
                   static_cast<long long>(tr->steps() + 1), static_cast<double>(r.loss),
                   static_cast<double>(r.grad_norm));
      return 1;
    }
    const std::int64_t step = tr->steps();
    // the probe over (the schedule's length fixed), or the rate fallen (the rest compressed to fit)
    if (const sf::time_budget::event e = budget.stepped(step); e != sf::time_budget::event::none)
      fmt::print("{}{}\n", tty ? "\r\033[K" : "",
                 budget.event_line(e, step, schedule_text(),
                                   fmt::format("; validation every {} steps", budget.eval_every())));
    const std::int64_t total = budget.planned(step);
    window_loss += r.loss;
    ++window_n;
    double val = NAN;
    if (budget.validation_due(step)) val = budget.timed([&] { return tr->evaluate(data, o.eval_batches); });
    const double secs = elapsed_before + since(t0);
    rows.push_back({step, secs, r.lr, r.loss, val});

    const double session = since(t0);
    const double tps = static_cast<double>((step - start_step) * static_cast<std::int64_t>(C.B * C.T)) / session;
    const double left = static_cast<double>(total - step) * session / static_cast<double>(step - start_step);
    if (std::isfinite(val)) {
      fmt::print("{}step {:>5}/{}: train loss {:.4f}, val loss {:.4f}, lr {:.2e}, {} tok/s, {} elapsed\n",
                 tty ? "\r\033[K" : "", step, total, window_loss / static_cast<double>(window_n), val, r.lr,
                 rate_string(tps), clock_string(secs));
      window_loss = 0;
      window_n = 0;
    } else if (tty) {
      constexpr int width = 24;
      const int filled = static_cast<int>(width * static_cast<double>(step) / static_cast<double>(total));
      fmt::print("\r\033[K[{:#<{}}{:.<{}}] step {}/{} | loss {:.3f} | {} tok/s | {} left", "", filled, "",
                 width - filled, step, total, r.loss, rate_string(tps), clock_string(left));
    }
    std::fflush(stdout);
    if (o.stop_after > 0 && step >= o.stop_after && !budget.finished(step)) {
      stop_reason = fmt::format("by --stop-after {}", o.stop_after);
      break;
    }
  }
  budget.settle(tr->steps());  // (a run stopped during the probe: its length from the rate so far)
  o.eval_every = budget.eval_every();  // (kept in the checkpoint: a resumed run validates at the same steps)
  const std::int64_t total = budget.total();
  const double seconds = elapsed_before + since(t0);
  const double cpu_seconds = cpu_before + cpu_since(c0);
  if (tty) fmt::print("\r\033[K");

  const bool finished = tr->steps() >= total;
  const double val_loss = tr->evaluate(data);  // the whole validation split
  double train_loss = 0;
  {
    std::size_t n = 0;
    for (auto it = rows.rbegin(); it != rows.rend() && n < 50 && it->step > 0; ++it, ++n) train_loss += it->train_loss;
    train_loss = n ? train_loss / static_cast<double>(n) : NAN;
  }
  if (finished && !rows.empty()) rows.back().val_loss = val_loss;  // the last point: the whole split

  // The run's settings (train.<name>, sf::io::training_settings) and the batch size.
  sf::io::training_settings run = settings_of(o);
  run.total_steps = total;
  run.seconds = seconds;
  run.cpu_seconds = cpu_seconds;
  sf::io::metadata_map run_meta = run.to_metadata();
  run_meta["train.batch"] = std::to_string(C.B);
  run_meta["train.precision"] = sf::to_string(TC.precision);
  if (sf::status s = sf::io::save_training<TC>(o.out, *tr, data, tok, {}, run_meta); !s)
    return std::fprintf(stderr, "train: cannot save the checkpoint in '%s': %s\n", o.out.c_str(), s.message()), 1;
  const std::string csv = sf::io::detail::join(o.out, "loss.csv");
  if (!write_csv(csv, rows)) std::fprintf(stderr, "train: cannot write '%s'\n", csv.c_str());
  const std::string png = sf::io::detail::join(o.out, "loss.png");
  bool plotted = false;
  if (o.plot) {
    plotted = plot(csv, png,
                   fmt::format("nano on tiny-shakespeare: B {}, {}, {} steps, val loss {:.3f}", C.B,
                               sf::to_string(TC.precision), tr->steps(), val_loss));
    if (!plotted) std::fprintf(stderr, "train: gnuplot failed or is missing (apt-get install gnuplot-nox); no plot\n");
  }
  fmt::print("saved {}/{} (+ optimizer state), {}{}\n", o.out, sf::io::model_file_name, csv,
             plotted ? ", " + png : std::string());

  if (sf::status s = report_int8(tr->p, data, tok, o.out); !s)  // train/decode.cpp
    std::fprintf(stderr, "train: %s\n", s.message());
  if (o.sample_chars > 0) {
    const std::string sample = generate(tr->p, tok, "\n", o.sample_chars, o.seed ^ 0x5eed5eedULL);  // train/decode.cpp
    std::ofstream(sf::io::detail::join(o.out, "sample.txt"), std::ios::binary) << sample;
    fmt::print("---- sample (temperature 0.8) ----\n{}\n----------------------------------\n", sample);
  }
  if (!finished)
    fmt::print("stopped at step {} of {} {}; continue with: train --resume {}\n", tr->steps(), total,
               stop_reason.empty() ? "(stopped)" : stop_reason, o.out);
  const double tokens = static_cast<double>(tr->steps() * static_cast<std::int64_t>(C.B * C.T));
  fmt::print("time: {:.1f} s wall clock, {:.1f} s CPU ({:.0f} tokens per CPU second)\n", seconds, cpu_seconds,
             tokens / cpu_seconds);
  fmt::print("final: steps {} of {} ({}% of the schedule), train loss {:.4f}, val loss {:.4f}, tokens/s {:.0f}, "
             "seconds {:.1f}\n",
             tr->steps(), total, tr->steps() * 100 / total, train_loss, val_loss, tokens / seconds, seconds);
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) return 2;
  bool out_given = false;
  for (int i = 1; i < argc; ++i) out_given = out_given || std::strcmp(argv[i], "--out") == 0;
  if (!o.resume.empty() && !out_given) o.out = o.resume;
  return o.precision == sf::precision_kind::bf16 ? run<C.with(sf::precision_kind::bf16)>(o) : run<C>(o);
}
