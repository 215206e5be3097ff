// The `staticformer` command's training executable for one architecture and one set of run
// settings (engine.hpp: SF_ENGINE_BATCH sequences a step, SF_ENGINE_PRECISION products):
//
//   train --config FILE.json --data TEXT (--steps N | --seconds S) --out MODEL.safetensors [--tokenizer TOKENIZER.bin]
//         [--lr X] [--seed K] [--threads N] [--eval-every N] [--batch B] [--precision P]
//         [--min-lr-ratio R] [--warmup F] [--beta2 X] [--clip X] [--eval-batches N]
//   bench [MODEL | --config FILE.json] [--steps N] [--batch B] [--precision P]
//
// train: the tokens are those of a character tokenizer from the corpus (its distinct bytes; at
// most the vocabulary of the architecture), or with --tokenizer those of llama2.c's BPE tokenizer
// (a tokenizer.bin of exactly V pieces) over the corpus's documents (encode_documents, below);
// 90/10 train/validation split, examples/train's recipe — AdamW (β1 0.9, β2 0.999,
// ε 1e-8, weight decay 0.1 on matrices and embeddings), gradient-norm clipping at 1, linear
// warm-up over 5% of the steps and cosine decay to 0 — of which --beta2, --clip (0: none),
// --warmup (a fraction of the steps) and --min-lr-ratio (the floor, a fraction of --lr) change
// parts, progress every --eval-every steps (the validation loss over --eval-batches batches), then
// the checkpoint: docs/model.md's tensors and metadata, the tokenizer (tokenizer.vocab, or
// tokenizer.bpe: staticformer/io/any_tokenizer.hpp) and the run's settings (train.*). The same
// flags and seed give the same file, bit for bit — with --steps N alone. --seconds S is a budget
// for the training loop (CPU seconds; wall-clock with --threads > 1), sf::time_budget as
// examples/train uses it: alone, the schedule's length is sized to it from the step rate measured
// at its start (and shortened if the rate falls), which no two runs do alike; with --steps N it
// stops a run that has not finished, and says so.
// bench: the time of a training step (forward, backward, AdamW) on random tokens: median of N.
// --config, --batch and --precision were read by `staticformer` to choose this executable; here
// they are checked against what it was compiled for.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "../generate/peak.hpp"
#include "bpe_vocab.hpp"
#include "engine.hpp"
#include "staticformer/budget.hpp"
#include "staticformer/data.hpp"
#include "staticformer/init.hpp"
#include "staticformer/io/any_tokenizer.hpp"
#include "staticformer/io/checkpoint.hpp"
#include "staticformer/io/llama2c.hpp"
#include "staticformer/io/tokenizer_bin.hpp"
#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/threads.hpp"
#include "staticformer/tokenizer.hpp"
#include "staticformer/train.hpp"

#ifndef SF_ENGINE_BATCH
#define SF_ENGINE_BATCH sf::config{SF_ENGINE_ARCH}.B
#endif
#ifndef SF_ENGINE_PRECISION
#define SF_ENGINE_PRECISION sf::config{SF_ENGINE_ARCH}.precision
#endif

namespace {

using sf_engine::arch;
using sf_engine::fail;

// The model as trained: the architecture with the run settings.
constexpr sf::config trained{arch, {.B = SF_ENGINE_BATCH, .precision = SF_ENGINE_PRECISION}};
static_assert(sf::check_config<trained>());

constexpr std::size_t max_corpus_bytes = std::size_t{256} << 20;

using clock_type = std::chrono::steady_clock;
double since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

struct options {
  std::string config, data, out, model, tokenizer;
  sf::io::training_settings run;  // steps, lr, seed, ... (checked by its rules)
  double beta2 = 0.999;  // AdamW's (not a training_settings field: stored as train.beta2)
  double seconds = 0;  // --seconds: the training loop's budget (0: none)
  std::size_t threads = 1;
  std::size_t batch = trained.B;
  sf::precision_kind precision = trained.precision;
};

// Reads the command line shared by train and bench; "" or the message of the first error.
std::string parse(int argc, char** argv, options& o, bool bench) {
  o.run.total_steps = bench ? 20 : 0;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc && a.size() > 2 && a[0] == '-' && a[1] == '-') return a + " needs a value";
    if (a == "--config") o.config = argv[++i];
    else if (a == "--data" && !bench) o.data = argv[++i];
    else if (a == "--out" && !bench) o.out = argv[++i];
    else if (a == "--tokenizer" && !bench) o.tokenizer = argv[++i];
    else if (a == "--steps" || a == "--lr" || a == "--seed" || a == "--eval-every" ||
             (!bench && (a == "--eval-batches" || a == "--min-lr-ratio" || a == "--warmup" || a == "--clip"))) {
      // the training_settings field of that name ('-' for '_'; --steps: total_steps), by its rule
      std::string name = a == "--steps" ? "total_steps" : a.substr(2);
      std::replace(name.begin(), name.end(), '-', '_');
      if (sf::status s = o.run.set(name, argv[++i]); !s) return a + ": " + s.message();
    } else if (a == "--beta2" && !bench) {
      constexpr sf::io::number_range open_unit{.min = 0, .max = 1, .min_open = true, .max_open = true};
      if (sf::status s = sf::io::parse_number(std::string_view(argv[++i]), o.beta2, open_unit); !s)
        return a + ": " + s.message();
    } else if (a == "--seconds" && !bench) {
      if (sf::status s = sf::io::parse_number(std::string_view(argv[++i]), o.seconds,
                                              sf::io::number_range{.min = 0, .max = 1e9, .min_open = true});
          !s)
        return a + ": " + s.message();
    } else if (a == "--threads") {
      if (sf::status s = sf::io::parse_integer(std::string_view(argv[++i]), o.threads, std::size_t{1}, std::size_t{64}); !s)
        return a + ": " + s.message();
    } else if (a == "--batch") {
      if (sf::status s = sf::io::parse_integer(std::string_view(argv[++i]), o.batch, std::size_t{1}, std::size_t{1} << 20);
          !s)
        return a + ": " + s.message();
    } else if (a == "--precision") {
      const auto p = sf::parse<sf::precision_kind>(argv[++i]);
      if (!p) return a + ": '" + argv[i] + "' is not f32 or bf16";
      o.precision = *p;
    } else if (bench && !a.empty() && a[0] != '-' && o.model.empty()) {
      o.model = a;
    } else {
      return "unknown argument '" + a + "' (staticformer " + (bench ? "bench" : "train") + " --help lists them)";
    }
  }
  if (o.batch != trained.B || o.precision != trained.precision)  // (staticformer chose the executable by these)
    return "this executable trains B " + std::to_string(trained.B) + " with " + sf::to_string(trained.precision) +
           " products, not --batch " + std::to_string(o.batch) + " --precision " + sf::to_string(o.precision);
  return "";
}

// The corpus, at most max_corpus_bytes: "" or why it cannot be read.
std::string read_corpus(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open it";
  std::ostringstream s;
  std::vector<char> buf(1 << 16);
  std::size_t total = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    total += n;
    if (total > max_corpus_bytes) return "larger than 256 MiB";
    s.write(buf.data(), static_cast<std::streamsize>(n));
  }
  if (in.bad()) return "a read error";
  text = s.str();
  return "";
}

// The corpus in the tokens of llama2.c's BPE tokenizer, as llama2.c's pretokenization treats a
// collection of documents: each document encoded as run.c encodes a prompt (<s>, the dummy prefix
// " ", the merges), the ids of all of them concatenated. The documents are the text between blank
// lines ("\n\n"), each without the newlines at its ends; empty ones are skipped. So every document
// starts with <s> as run.c's prompt does, and the model learns to end one with <s>, which ends
// run.c's text (a text without blank lines is one document). The merges of each document take
// O(n log n) (tokenizer_bin's vector encode): a 1 MB corpus in about half a second.
sf::status encode_documents(const sf::io::tokenizer_bin& tok, std::string_view text, std::vector<std::int32_t>& ids,
                            std::size_t& documents) {
  ids.clear();
  documents = 0;
  std::vector<std::int32_t> doc;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find("\n\n", at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view d = text.substr(at, end - at);
    at = end == text.size() ? end : end + 2;
    while (!d.empty() && d.front() == '\n') d.remove_prefix(1);
    while (!d.empty() && d.back() == '\n') d.remove_suffix(1);
    if (d.empty()) continue;
    if (sf::status s = tok.encode(d, /*bos=*/true, /*eos=*/false, doc); !s) return s;
    ids.insert(ids.end(), doc.begin(), doc.end());
    ++documents;
  }
  return sf::status::ok();
}

// The one warning of a bf16 run whose products are emulated on this CPU (staticformer/cpu_report.hpp).
void warn_emulated(const char* command) {
  if (const char* w = trained.precision == sf::precision_kind::bf16 ? sf::cpu::bf16_warning() : nullptr)
    std::fprintf(stderr, "staticformer %s: %s\n", command, w);
}

int train(int argc, char** argv) {
  options o;
  if (std::string e = parse(argc, argv, o, false); !e.empty()) return fail("train", e, 2);
  warn_emulated("train");
  if (o.data.empty() || o.out.empty() || (o.run.total_steps == 0 && o.seconds == 0))
    return fail("train", "usage: staticformer train --config FILE.json --data TEXT (--steps N | --seconds S) "
                         "--out MODEL.safetensors [--tokenizer TOKENIZER.bin]", 2);
  std::string text;
  if (std::string why = read_corpus(o.data, text); !why.empty() || text.empty())
    return fail("train", "the corpus '" + o.data + "': " + (why.empty() ? "it is empty" : why));
  sf::io::any_tokenizer tok;
  std::vector<std::int32_t> ids;
  std::string tokens_text;  // how the corpus was tokenized, for the log
  if (!o.tokenizer.empty()) {  // llama2.c's BPE tokenizer: exactly V pieces
    sf::io::result<sf::io::tokenizer_bin> t = sf_engine::open_training_tokenizer(o.tokenizer, arch.V, o.config);
    if (!t) return fail("train", t.message());
    std::size_t documents = 0;
    if (sf::status s = encode_documents(*t, text, ids, documents); !s) return fail("train", s.message());
    tokens_text = "BPE tokenizer " + o.tokenizer + " (" + std::to_string(t->size()) + " pieces): " +
                  std::to_string(ids.size()) + " tokens in " + std::to_string(documents) +
                  " documents (separated by blank lines, each after <s>)";
    if (sf::status s = sf::io::llama2c_check_arch(arch); !s)
      std::fprintf(stderr, "staticformer train: note: %s, so `staticformer convert --llama2c` will refuse the model\n",
                   s.message());
    tok = std::move(*t);
  } else {
    const sf::char_tokenizer chars = sf::char_tokenizer::from_corpus(text);
    if (chars.size() > arch.V)
      return fail("train", "the corpus has " + std::to_string(chars.size()) +
                               " distinct bytes; the architecture's vocabulary holds " + std::to_string(arch.V));
    if (sf::status s = chars.encode(text, ids); !s) return fail("train", s.message());
    tokens_text = "vocabulary " + std::to_string(chars.size());
    tok = chars;
  }
  sf::dataset<trained> data(ids, 0.1, o.run.seed);
  if (!data.ok()) return fail("train", data.status().message());

  // Parameters, gradients, moments, activations: allocated once, before the first step.
  auto tr = std::make_unique<sf::trainer<trained>>();
  sf::init_params(tr->p, o.run.seed);
  tr->opt.options = {.beta1 = 0.9, .beta2 = o.beta2, .eps = 1e-8, .weight_decay = 0.1, .decay = sf::decay_on::matrices};
  // The schedule: --steps N, or sized to --seconds S by a probe (staticformer/budget.hpp); the
  // budget, when given, limits the loop.
  sf::time_budget budget = sf::time_budget::for_run(
      o.seconds, o.seconds > 0, o.threads, o.run.eval_every,
      {.max_lr = o.run.lr, .min_lr = o.run.lr * o.run.min_lr_ratio, .warmup = o.run.warmup}, o.run.total_steps);
  const char* clock_name = budget.clock_name();
  auto schedule_text = [&] {  // the schedule, once the length is fixed
    char text[256];
    std::snprintf(text, sizeof text, "%lld steps of %zu tokens, AdamW lr %g (warm-up %lld, cosine to %g)",
                  static_cast<long long>(budget.total()), trained.B * trained.T, o.run.lr,
                  static_cast<long long>(budget.schedule(0).warmup_steps), o.run.lr * o.run.min_lr_ratio);
    return std::string(text);
  };
  char limit_text[400];  // the schedule, and the budget
  if (budget.sizing())
    std::snprintf(limit_text, sizeof limit_text, "schedule sized to %g %s seconds (the step rate measured over its "
                  "first %.2f s, warm-up and cosine ending at %g%% of them)", o.seconds, clock_name,
                  budget.probe_length(), 100 * budget.settings().fill);
  else if (budget.limited())
    std::snprintf(limit_text, sizeof limit_text, "%s, limit %g %s seconds", schedule_text().c_str(), o.seconds,
                  clock_name);
  else
    std::snprintf(limit_text, sizeof limit_text, "%s", schedule_text().c_str());
  const std::size_t eval_batches = static_cast<std::size_t>(o.run.eval_batches);
  std::printf("staticformer train: %s; B %zu, %s products, %zu parameters\n", sf::io::describe(arch).c_str(),
              trained.B, sf::to_string(trained.precision), sf::parameter_count<sf::params<arch>>);
  std::printf("corpus %s: %zu bytes, %s; %s, beta2 %g, clip %g, seed %llu, %zu thread%s\n", o.data.c_str(),
              text.size(), tokens_text.c_str(), limit_text, o.beta2, o.run.clip,
              static_cast<unsigned long long>(o.run.seed), o.threads, o.threads == 1 ? "" : "s");
  std::fflush(stdout);

  const sf::thread_pool pool(o.threads);
  const sf::use_threads use_pool(pool);
  if (budget.sizing())  // (what a validation costs, for the sizing)
    std::printf("step 0: val loss %.4f\n", budget.timed([&] { return tr->evaluate(data, eval_batches); }));
  const auto t0 = clock_type::now();
  const std::clock_t c0 = std::clock();
  budget.start(0);
  double window = 0, last_window = NAN;
  std::int64_t window_n = 0;
  bool out_of_time = false;
  while (!budget.finished(tr->steps())) {
    if (budget.out_of_time()) {
      out_of_time = true;
      break;
    }
    const sf::step_result r = tr->step(data, budget.lr(tr->steps()), o.run.clip);
    if (!std::isfinite(r.loss) || !r.updated)
      return fail("train", "step " + std::to_string(tr->steps() + 1) + ": the loss or the gradient is not finite");
    window += r.loss;
    ++window_n;
    const std::int64_t step = tr->steps();
    // the probe over (the schedule's length fixed), or the rate fallen (the rest compressed to fit)
    if (const sf::time_budget::event e = budget.stepped(step); e != sf::time_budget::event::none) {
      std::printf("%s\n", budget.event_line(e, step, schedule_text()).c_str());
      std::fflush(stdout);
    }
    if (!budget.sizing() && budget.validation_due(step)) {  // (none during the probe: the line gives the length)
      last_window = window / static_cast<double>(window_n);
      const double val = budget.timed([&] { return tr->evaluate(data, eval_batches); });
      std::printf("step %lld/%lld: train loss %.4f, val loss %.4f, lr %.2e, %.0f tok/s\n", static_cast<long long>(step),
                  static_cast<long long>(budget.total()), last_window, val, r.lr,
                  static_cast<double>(step * static_cast<std::int64_t>(trained.B * trained.T)) / since(t0));
      std::fflush(stdout);
      window = 0;
      window_n = 0;
    }
  }
  budget.settle(tr->steps());  // (a run stopped during the probe: its length from the rate so far)
  const std::int64_t total = budget.total(), done = tr->steps();
  if (window_n > 0) last_window = window / static_cast<double>(window_n);  // (a run stopped between reports)
  const double seconds = since(t0);  // (the training loop's: the final validation left out)
  o.run.total_steps = total;
  o.run.seconds = seconds;
  o.run.cpu_seconds = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  const double val_loss = tr->evaluate(data);  // the whole validation split
  sf::io::metadata_map meta = o.run.to_metadata();
  meta["train.beta2"] = sf::io::detail::format_double(o.beta2);
  meta["train.batch"] = std::to_string(trained.B);
  meta["train.precision"] = sf::to_string(trained.precision);
  meta["train.data"] = o.data;
  if (!o.tokenizer.empty()) meta["train.tokenizer"] = o.tokenizer;
  if (sf::status s = sf::io::save_model<arch>(o.out, tr->p, tok, meta); !s) return fail("train", o.out + ": " + s.message());
  std::printf("saved %s\n", o.out.c_str());
  if (out_of_time)
    std::printf("stopped at step %lld of %lld by the budget of %s %s seconds (--seconds)\n", static_cast<long long>(done),
                static_cast<long long>(total), sf::io::detail::format_double(o.seconds).c_str(), clock_name);
  std::printf("time: %.1f s wall clock, %.1f s CPU\n", seconds, o.run.cpu_seconds);
  // (the format of examples/train's final line)
  std::printf("final: steps %lld of %lld (%lld%% of the schedule), train loss %.4f, val loss %.4f, tokens/s %.0f, "
              "seconds %.1f\n",
              static_cast<long long>(done), static_cast<long long>(total), static_cast<long long>(done * 100 / total),
              last_window, val_loss,
              static_cast<double>(done * static_cast<std::int64_t>(trained.B * trained.T)) / seconds, seconds);
  return 0;
}

int bench(int argc, char** argv) {
  options o;
  if (std::string e = parse(argc, argv, o, true); !e.empty()) return fail("bench", e, 2);
  warn_emulated("bench");
  auto tr = std::make_unique<sf::trainer<trained>>();
  sf::init_params(tr->p, 1);
  if (!o.model.empty()) {  // the model's weights (the time does not depend on them, but they are the user's)
    sf::io::result<sf::io::file> f = sf_engine::open_model(o.model);
    if (!f) return fail("bench", f.message());
    if (sf::status s = sf::io::load_params<arch>(*f, tr->p); !s) return fail("bench", o.model + ": " + s.message());
  }
  // Random tokens: a dataset over a stream of them.
  std::vector<std::int32_t> ids(trained.T * 64 + 1);
  sf::xoshiro256 rng(7);
  for (auto& id : ids) id = static_cast<std::int32_t>(rng.below(arch.V));
  sf::dataset<trained> data(ids, 0.0, 1);
  const sf::lr_schedule schedule{.max_lr = 1e-4, .min_lr = 1e-4, .warmup_steps = 0, .total_steps = 1};
  const sf::thread_pool pool(o.threads);
  const sf::use_threads use_pool(pool);
  for (int i = 0; i < 3; ++i) tr->step(data, schedule, 1.0);  // warm-up
  std::vector<double> times;
  for (std::int64_t i = 0; i < o.run.total_steps; ++i) {
    const auto t0 = clock_type::now();
    tr->step(data, schedule, 1.0);
    times.push_back(since(t0));
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  const double flops = 6.0 * static_cast<double>(sf::parameter_count<sf::params<arch>>) *
                       static_cast<double>(trained.B * trained.T);  // 6 N per token (the usual estimate)
  sf_bench::print_cpu(stdout, "");  // the products' instruction sets, this CPU's, the peak
  std::printf("train step: %s, B %zu, %s products, %zu thread%s: median %.3f ms of %lld steps, %.0f tokens/s, "
              "~%.1f GFLOP/s (6 x parameters x tokens)\n",
              sf::io::describe(arch).c_str(), trained.B, sf::to_string(trained.precision), o.threads,
              o.threads == 1 ? "" : "s", median * 1e3, static_cast<long long>(o.run.total_steps),
              static_cast<double>(trained.B * trained.T) / median, flops / median * 1e-9);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "train") return train(argc, argv);
  if (command == "bench") return bench(argc, argv);
  if (command == "--architecture") {
    std::printf("%s B=%zu %s\n", sf::io::describe(arch).c_str(), trained.B, sf::to_string(trained.precision));
    return 0;
  }
  std::fprintf(stderr, "%s: train or bench (this executable serves `staticformer`; run that)\n", argv[0]);
  return 2;
}
