// docs/model.md's ref-gpt2 configuration: forward, backward and one AdamW step evaluated in constant
// expressions: the compiler runs the training step. gpt2_step_run_time.cpp then does the same
// on the CPU and checks that every bit of the loss, logits, gradients, updated parameters and
// moments agrees.
//
// The compile-time path runs the scalar reference products (kernels/gemm_ref.hpp) and the
// emulated twin of the SIMD backend (simd/emulated.hpp); the run-time path runs the register-
// tiled SIMD kernels. Equality holds because both round every operation identically (see the
// docs/design.md, "Training inside the compiler"). The work is split into three constant expressions,
// each followed by a function definition: g++ frees the compiler's temporaries at those points,
// which keeps this translation unit under 2 GB.
#include "gpt2_step.hpp"

namespace gpt2_step {
constexpr step_state ct_after_forward = [] {
  step_state s{};
  setup(s);
  forward(s);
  return s;
}();
}  // namespace gpt2_step
int constexpr_gc_point_1() { return 1; }  // (g++ collects its garbage after a function definition)
namespace gpt2_step {
constexpr step_state ct_after_backward = [] {
  step_state s = ct_after_forward;
  backward(s);
  return s;
}();
}  // namespace gpt2_step
int constexpr_gc_point_2() { return 2; }
namespace gpt2_step {
constexpr step_state ct_after_step = [] {
  step_state s = ct_after_backward;
  adamw_step(s);
  return s;
}();

// What the compiler computed, checked by the compiler.
static_assert(ct_after_forward.loss > 4.0f && ct_after_forward.loss < 4.4f, "ref-gpt2 loss at init is about log(65)");
static_assert(ct_after_step.opt.t == 1);
constexpr bool any_changed() {
  for (std::size_t i = 0; i < ct_after_step.p.tok_emb.weight.size; ++i)
    if (ct_after_step.p.tok_emb.weight[i] != ct_after_forward.p.tok_emb.weight[i]) return true;
  return false;
}
static_assert(any_changed(), "the AdamW step moved the parameters");

// Exported to the run-time unit.
constexpr results ct_results{ct_after_forward.loss, ct_after_forward.a.logits, ct_after_backward.g, ct_after_step.p,
                             ct_after_step.opt.m, ct_after_step.opt.v};
const results compile_time = ct_results;
}  // namespace gpt2_step
