// staticformer-run — the reference runner of docs/model.md.
//
//   staticformer-run --model M.safetensors --batch X.safetensors --out R.safetensors [--steps N --lr η]
//
// Finds the compiled configuration whose metadata matches the checkpoint (or refuses,
// listing those it has), runs forward and backward on the batch and writes `logits`,
// `loss` and `grad.<name>` for every parameter. With --steps N it then runs N AdamW
// steps (β1 0.9, β2 0.999, eps 1e-8, weight decay 0) on the same batch and also writes
// every updated parameter under its own name and `losses` [N] (the loss before each step).
//
// Two translation units, to keep each quick to compile: this one (command line, files) and
// tools/runner/model.cpp, which compiles the model's forward, backward and AdamW step for
// every configuration below (declared in tools/runner/model.hpp).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "runner/model.hpp"
#include "staticformer/io/safetensors.hpp"
#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"

namespace {

struct options {
  std::string model, batch, out;
  long steps = 0;
  double lr = 1e-3;
  sf::io::load_options load;  // --allow-non-finite
};

// The configurations this runner has compiled in: the reference configurations of sf::configs::known
// (tools/runner/model.cpp instantiates sf_run::model for each).
using sf::configs::known;

void usage(std::FILE* to) {
  std::fprintf(to,
               "usage: staticformer-run --model M.safetensors --batch X.safetensors --out R.safetensors "
               "[--steps N --lr LR] [--allow-non-finite]\n"
               "  --model   checkpoint (safetensors, staticformer's names and metadata)\n"
               "  --batch   batch file: tokens I32 [B,T], targets I32 [B,T] (-1 = ignore), optional padding U8 [B,T]\n"
               "  --out     results: logits [B,T,V], loss [1], grad.<param> for every parameter\n"
               "  --steps   then run N AdamW steps on the batch (writes updated params and losses [N]);\n"
               "            0 to 1000000, default 0: no steps\n"
               "  --lr      AdamW learning rate, a finite number > 0 (default 1e-3)\n"
               "  --allow-non-finite  load a checkpoint whose weights hold NaN or Inf (refused by default)\n"
               "  --list    print the compiled configurations\n");
}

void list_configurations(std::FILE* to) {
  for (const sf::configs::named& c : known)
    if (c.reference) std::fprintf(to, "  %-12s B=%zu %s\n", c.name, c.value.B, sf::io::describe(c.value).c_str());
}

int fail(const sf::status& s, const char* what) {
  std::fprintf(stderr, "staticformer-run: %s: %s\n", what, s.message());
  return 1;
}

template <sf::config C>
int run(const sf::io::file& model_file, const options& o) {
  using model = sf_run::model<C>;  // forward, backward, AdamW step: compiled in tools/runner/model.cpp
  // Static storage: parameters, gradients, activations and optimizer state never live on the stack.
  static sf::params<C> p, g;
  static sf::activations<C> acts;
  static sf::tokens_t<C> tokens;
  static sf::targets_t<C> targets;
  static sf::padding_t<C> padding;
  static sf::adamw<sf::params<C>> opt;

  if (sf::status s = sf::io::load_params<C>(model_file, p, o.load); !s) return fail(s, o.model.c_str());
  bool has_padding = false;
  if (sf::status s = sf::io::load_batch<C>(o.batch, tokens, targets, &padding, has_padding); !s)
    return fail(s, o.batch.c_str());
  const sf::padding_t<C>* pad = has_padding ? &padding : nullptr;

  const float loss = model::forward(p, acts, tokens, targets, pad);
  sf::zero(g);
  model::backward(p, g, acts, tokens, targets, pad);

  sf::io::writer w;
  w.add("logits", acts.logits).add("loss", sf::io::dtype::F32, {1}, &loss).add_all(g, "grad.");

  if (o.steps > 0) {
    std::vector<float> losses;
    opt.reset();
    opt.options = sf::adamw_options{.beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.0};
    for (long step = 0; step < o.steps; ++step) {
      if (step > 0) {  // step 0 reuses the gradients computed above
        losses.push_back(model::forward(p, acts, tokens, targets, pad));
        sf::zero(g);
        model::backward(p, g, acts, tokens, targets, pad);
      } else {
        losses.push_back(loss);
      }
      model::step(opt, p, g, o.lr);
    }
    w.add("losses", losses, {losses.size()}).add_all(p);
  }
  w.set_metadata("format", "staticformer-results");
  if (sf::status s = w.write(o.out); !s) return fail(s, o.out.c_str());
  std::printf("loss %.6f%s -> %s\n", static_cast<double>(loss),
              o.steps > 0 ? (" after " + std::to_string(o.steps) + " AdamW steps").c_str() : "", o.out.c_str());
  return 0;
}

template <std::size_t I = 0>
int dispatch(const sf::arch& found, const sf::io::file& f, const options& o) {
  if constexpr (I == std::size(known)) {
    std::fprintf(stderr,
                 "staticformer-run: %s: no compiled configuration matches the checkpoint's metadata (%s).\n"
                 "Compiled configurations:\n",
                 o.model.c_str(), sf::io::describe(found).c_str());
    list_configurations(stderr);
    return 2;
  } else {
    if constexpr (known[I].reference)
      if (found == sf::arch_of(known[I].value)) return run<known[I].value>(f, o);
    return dispatch<I + 1>(found, f, o);
  }
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "staticformer-run: %s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    // Values are parsed strictly (the whole argument; a finite number) and range-checked.
    auto check = [&](const char* flag, const sf::status& s) {
      if (!s) {
        std::fprintf(stderr, "staticformer-run: %s: %s\n", flag, s.message());
        std::exit(2);
      }
    };
    if (a == "--model") o.model = value("--model");
    else if (a == "--batch") o.batch = value("--batch");
    else if (a == "--out") o.out = value("--out");
    else if (a == "--steps") check("--steps", sf::io::parse_integer(std::string_view(value("--steps")), o.steps, 0L, 1'000'000L));
    else if (a == "--lr") check("--lr", sf::io::parse_number(value("--lr"), o.lr, {.min = 0, .min_open = true}));
    else if (a == "--allow-non-finite") o.load.allow_non_finite = true;
    else if (a == "--list") {
      std::printf("Compiled configurations:\n");
      list_configurations(stdout);
      return 0;
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "staticformer-run: unknown argument '%s'\n", a.c_str());
      usage(stderr);
      return 2;
    }
  }
  if (o.model.empty() || o.batch.empty() || o.out.empty()) {
    usage(stderr);
    return 2;
  }
  auto f = sf::io::file::open(o.model);
  if (!f) return fail(f.status(), o.model.c_str());
  auto found = sf::io::read_config(*f);
  if (!found) return fail(found.status(), o.model.c_str());
  return dispatch(*found, *f, o);
}
