// examples/train/decode.cpp — the trained model through the KV-cache decoder (decode.hpp): the
// sample text at the end of a run, and the validation loss with float and with int8 weights
// (quantize.hpp), the int8 checkpoint written beside the float one. A translation unit of its
// own, to keep each of examples/train quick to compile.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "staticformer/data.hpp"
#include "staticformer/decode.hpp"
#include "staticformer/io/checkpoint.hpp"
#include "staticformer/quantize.hpp"
#include "staticformer/sampling.hpp"
#include "staticformer/tokenizer.hpp"
#include "configs.hpp"

namespace {
constexpr sf::config C = sf::configs::nano;
constexpr sf::config C1 = [] {  // the same weights, one sequence at a time
  sf::config c = C;
  c.B = 1;
  return c;
}();
}  // namespace

namespace {
// Mean cross-entropy over the whole validation split, position by position through the KV-cache
// decoder with weights W (float: sf::params, int8: sf::params<C, sf::int8>): the loss the deployed
// model sees. (With float weights it equals trainer::evaluate up to the summation order.)
template <class W, class Weights, sf::config DC>
double decoder_val_loss(const Weights& weights, const sf::dataset<DC>& data) {
  static sf::decoder<C1, W> dec;
  static sf::tokens_t<C> tokens;
  static sf::targets_t<C> targets;
  dec.use(weights);
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t j = 0; j < data.val_windows(); ++j) {
    data.val_window(j, 0, tokens, targets);
    dec.reset(0);
    for (std::size_t t = 0; t < C.T; ++t) {
      if (!dec.step(0, tokens(0, t))) return NAN;
      const float* l = dec.logits(0);
      double m = l[0], z = 0;
      for (std::size_t v = 1; v < C.V; ++v) m = std::max(m, static_cast<double>(l[v]));
      for (std::size_t v = 0; v < C.V; ++v) z += std::exp(static_cast<double>(l[v]) - m);
      sum += m + std::log(z) - static_cast<double>(l[targets(0, t)]);
      ++n;
    }
  }
  return n ? sum / static_cast<double>(n) : NAN;
}

}  // namespace

// Generates `n` bytes after `prompt` with temperature sampling (0.8), one stream, with the
// KV-cache decoder (decode.hpp): the prompt is prefilled once, then one step per token. When the
// context is full, the last 3T/4 tokens are kept and re-prefilled (decoder::slide).
std::string generate(const sf::params<C>& p, const sf::char_tokenizer& tok, const std::string& prompt, std::size_t n,
                     std::uint64_t seed, float temperature) {
  static sf::decoder<C1> dec;
  static sf::sampler<C1.V> sampler{0};
  sampler.seed(seed);
  (void)sampler.configure({.temperature = temperature});
  dec.use(p);
  std::vector<std::int32_t> ids;
  if (!tok.encode(prompt, ids) || ids.empty()) ids = {0};
  const std::size_t len = std::min(ids.size(), C1.T);  // the last T tokens of a long prompt
  std::string out;
  if (!dec.prefill(0, ids.data() + (ids.size() - len), len)) return out;
  for (std::size_t k = 0; k < n; ++k) {
    const std::int32_t next = sampler.sample(dec.logits(0));
    out += tok.decode(next);
    if (dec.position(0) == C1.T && !dec.slide(0, C1.T - C1.T / 4)) break;
    if (!dec.step(0, next)) break;
  }
  return out;
}

// int8 weights quantized from p: the validation loss through the decoder beside the float
// weights' (the quality bar of issue #9: within 1%), the weights' sizes, and
// out_dir/model-int8.safetensors (io/quantized.hpp, with the tokenizer, for `staticformer run`).
// (data: the run's, whose config may differ from nano in the precision of its products only)
template <sf::config DC>
sf::status report_int8(const sf::params<C>& p, const sf::dataset<DC>& data, const sf::char_tokenizer& tok,
                       const std::string& out_dir) {
  static sf::params<C, sf::int8> q;
  sf::quantize(q, p);
  const double float_loss = decoder_val_loss<float>(p, data);
  const double int8_loss = decoder_val_loss<sf::int8>(q, data);
  fmt::print("int8 weights: val loss {:.4f} (float weights through the same decoder: {:.4f}, {:+.2f}%); "
             "weights {:.0f} KiB int8, {:.0f} KiB float ({:.2f}x less)\n",
             int8_loss, float_loss, 100.0 * (int8_loss / float_loss - 1.0), sizeof(q) / 1024.0, sizeof(p) / 1024.0,
             static_cast<double>(sizeof(p)) / static_cast<double>(sizeof(q)));
  const std::string path = sf::io::detail::join(out_dir, "model-int8.safetensors");
  if (sf::status s = sf::io::save_quantized<C>(path, q, {{sf::tokenizer_metadata_key, tok.to_metadata()}}); !s)
    return s;
  fmt::print("saved {} (int8 weights, for `staticformer run`)\n", path);
  return sf::status::ok();
}
#define SF_TRAIN_REPORT_INT8(CFG)                                                                     \
  template sf::status report_int8<CFG>(const sf::params<C>&, const sf::dataset<CFG>&, const sf::char_tokenizer&, \
                                       const std::string&);
SF_TRAIN_CONFIGS(SF_TRAIN_REPORT_INT8)
