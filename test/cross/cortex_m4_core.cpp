// The decode-side core on a Cortex-M4 (arm-none-eabi-g++, -mcpu=cortex-m4, single-precision
// FPU, -fno-exceptions -fno-rtti): inference through the model and the kernels compiles for a
// bare-metal target. CTest then checks the object's undefined symbols: no double-precision
// helpers (__aeabi_d*: the M4 has no double FPU), no thread-local storage (__emutls_*, __tls_*),
// no heap (malloc, operator new), no exception machinery (__cxa_*, __gxx_personality_*).
#include "staticformer/decode.hpp"
#include "staticformer/model.hpp"
#include "staticformer/sampling.hpp"

namespace {
inline constexpr sf::config cfg{.V = 65, .T = 32, .D = 64, .H = 4, .L = 2, .F = 128, .B = 1};
sf::params<cfg> weights;  // in firmware: const, in flash
sf::inference_state<cfg> state;
sf::tokens_t<cfg> tokens;
sf::decoder<cfg> dec;
sf::sampler<cfg.V> sampler{7};
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

extern "C" float sf_cortex_m4_infer() {
  sf::infer(weights, state, tokens);
  return state.logits[0];
}
