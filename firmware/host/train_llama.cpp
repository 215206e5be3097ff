// train_llama — the firmware test's second model: docs/model.md's ref-llama configuration (RoPE, RMSNorm,
// ReLU, untied head, no biases; V 96, T 24, D 48, H 6, L 3, F 96) trained briefly on
// tiny-shakespeare with a character tokenizer, saved as a checkpoint with the tokenizer in its
// metadata (what examples/train writes for nano). Deterministic: same arguments, same file.
//
//   train_llama CORPUS OUT.safetensors [STEPS]      (default 200 steps, a few seconds)
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "staticformer/data.hpp"
#include "staticformer/init.hpp"
#include "staticformer/io/params.hpp"
#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/tokenizer.hpp"

namespace {
constexpr sf::config C = sf::configs::ref_llama;
sf::params<C> p, g;
sf::activations<C> acts;
sf::adamw<sf::params<C>> opt;
sf::tokens_t<C> x;
sf::targets_t<C> y;
}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) return std::fprintf(stderr, "usage: train_llama CORPUS OUT.safetensors [STEPS]\n"), 2;
  const long steps = argc == 4 ? std::strtol(argv[3], nullptr, 10) : 200;
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) return std::fprintf(stderr, "train_llama: cannot open %s\n", argv[1]), 1;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const sf::char_tokenizer tok = sf::char_tokenizer::from_corpus(text);
  if (tok.size() > C.V) return std::fprintf(stderr, "train_llama: %zu symbols > V = %zu\n", tok.size(), C.V), 1;
  std::vector<std::int32_t> ids;
  if (sf::status s = tok.encode(text, ids); !s) return std::fprintf(stderr, "%s\n", s.message()), 1;
  sf::dataset<C> data(ids, 0.1, 1);
  if (!data.ok()) return std::fprintf(stderr, "%s\n", data.status().message()), 1;
  sf::init_params(p, 1);
  float first = 0, loss = 0;
  for (long step = 0; step < steps; ++step) {
    data.next_batch(x, y);
    loss = sf::forward(p, acts, x, y);
    sf::zero(g);
    sf::backward(p, g, acts, x, y);
    opt.step(p, g, 3e-3);
    if (step == 0) first = loss;
  }
  std::printf("train_llama: %ld steps, loss %.3f -> %.3f\n", steps, static_cast<double>(first), static_cast<double>(loss));
  if (sf::status s = sf::io::save_params<C>(argv[2], p, {{sf::tokenizer_metadata_key, tok.to_metadata()}}); !s)
    return std::fprintf(stderr, "%s\n", s.message()), 1;
  return 0;
}
