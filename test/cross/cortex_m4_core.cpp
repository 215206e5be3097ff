// The decode-side core on a Cortex-M4 (arm-none-eabi-g++, -mcpu=cortex-m4, single-precision
// FPU, -fno-exceptions -fno-rtti): inference through the model and the kernels compiles for a
// bare-metal target. CTest then checks the object's undefined symbols: no double-precision
// helpers (__aeabi_d*: the M4 has no double FPU), no thread-local storage (__emutls_*, __tls_*),
// no heap (malloc, operator new), no exception machinery (__cxa_*, __gxx_personality_*).
// The Q8_0 kernels (kernels/q8.hpp, the scalar backend on this target) are checked the same way:
// packing a checkpoint's canonical int8 weights at load, quantizing float weights (also from a
// transposed, tied embedding), quantizing an activation, and the matrix-vector product.
#include "staticformer/decode.hpp"
#include "staticformer/kernels/q8.hpp"
#include "staticformer/model.hpp"
#include "staticformer/quantize.hpp"
#include "staticformer/sampling.hpp"

namespace {
inline constexpr sf::arch cfg{.V = 65, .T = 32, .D = 64, .H = 4, .L = 2, .F = 128};
sf::params<cfg> weights;  // in firmware: const, in flash
sf::inference_state<cfg> state;
sf::tokens_t<cfg> tokens;
sf::decoder<cfg> dec;
sf::sampler<cfg.V> sampler{7};
sf::params<cfg, sf::int8> weights_q8;  // int8 weights (quantize.hpp)
sf::decoder<cfg, sf::int8> dec_q8;
}  // namespace

// Token-by-token generation with the KV cache and sampling: the path the firmware runs.
extern "C" int sf_cortex_m4_generate(int n) {
  dec.use(weights);
  std::int32_t token = 0;
  if (!dec.prefill(0, &token, 1)) return -1;
  for (int i = 0; i < n; ++i) {
    token = sampler.sample(dec.logits(0));
    if (!dec.step(0, token)) return -1;
  }
  return token;
}

// The same with int8 weights: quantized from float here (in firmware: packed from flash).
extern "C" int sf_cortex_m4_generate_int8(int n) {
  sf::quantize(weights_q8, weights);
  dec_q8.use(weights_q8);
  std::int32_t token = 0;
  if (!dec_q8.prefill(0, &token, 1)) return -1;
  for (int i = 0; i < n; ++i) {
    token = sampler.sample(dec_q8.logits(0));
    if (!dec_q8.step(0, token)) return -1;
  }
  return token;
}

extern "C" float sf_cortex_m4_infer() {
  sf::infer(weights, state, tokens);
  return state.logits[0];
}

namespace {
namespace q8 = sf::kernels::q8;
q8::matrix<cfg.D, cfg.V> head_q8;            // the head (D, V): logits = h·W
q8::vector<cfg.D> h_q8;                      // h quantized
std::int8_t head_q[cfg.V * cfg.D];           // canonical form (in flash): q (V, D) [out, in],
float head_d[cfg.V * q8::groups_of(cfg.D)];  // d (V, ⌈D/32⌉)
float h[cfg.D], logits[cfg.V], emb[cfg.V * cfg.D];
}  // namespace

extern "C" void sf_cortex_m4_q8_load() { q8::pack(head_q8, head_q, head_d); }
extern "C" void sf_cortex_m4_q8_quantize_tied() { q8::quantize_transposed(head_q8, emb); }  // emb: (V, D)
extern "C" void sf_cortex_m4_q8_quantize(const float* W) { q8::quantize(head_q8, W); }     // W: (D, V)
extern "C" float sf_cortex_m4_q8_head() {
  q8::quantize(h_q8, h);
  q8::matvec(logits, h_q8, head_q8, nullptr);
  return logits[0];
}
