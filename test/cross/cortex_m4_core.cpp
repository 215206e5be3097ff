// The decode-side core on a Cortex-M4 (arm-none-eabi-g++, -mcpu=cortex-m4, single-precision
// FPU, -fno-exceptions -fno-rtti): inference through the model and the kernels compiles for a
// bare-metal target. CTest then checks the object's undefined symbols: no double-precision
// helpers (__aeabi_d*: the M4 has no double FPU), no thread-local storage (__emutls_*, __tls_*),
// no heap (malloc, operator new), no exception machinery (__cxa_*, __gxx_personality_*).
#include "staticformer/model.hpp"

namespace {
inline constexpr sf::config cfg{.V = 65, .T = 32, .D = 64, .H = 4, .L = 2, .F = 128, .B = 1};
sf::params<cfg> weights;  // in firmware: const, in flash
sf::inference_state<cfg> state;
sf::tokens_t<cfg> tokens;
}  // namespace

extern "C" float sf_cortex_m4_infer() {
  sf::infer(weights, state, tokens);
  return state.logits[0];
}
