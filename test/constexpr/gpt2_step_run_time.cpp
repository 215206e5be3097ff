// The ref-gpt2 training step of gpt2_step.hpp on the CPU (the SIMD kernels), compared bit for
// bit with what the compiler computed in gpt2_step_compile_time.cpp.
#include <cstdio>
#include <cstring>

#include "gpt2_step.hpp"

namespace {
gpt2_step::step_state run_time;  // static storage

template <class X>
bool same_bits(const char* what, const X& ct, const X& rt) {
  const bool same = std::memcmp(&ct, &rt, sizeof(X)) == 0;
  std::printf("  %-34s %s\n", what, same ? "identical" : "DIFFERENT");
  return same;
}
}  // namespace

int main() {
  using namespace gpt2_step;
  setup(run_time);
  forward(run_time);
  const results& ct = compile_time;
  bool ok = same_bits("loss", ct.loss, run_time.loss);
  ok &= same_bits("logits (B,T,V)", ct.logits, run_time.a.logits);
  backward(run_time);
  ok &= same_bits("gradients", ct.grads, run_time.g);
  adamw_step(run_time);
  ok &= same_bits("parameters after one AdamW step", ct.params, run_time.p);
  ok &= same_bits("AdamW moments m", ct.m, run_time.opt.m);
  ok &= same_bits("AdamW moments v", ct.v, run_time.opt.v);
  std::printf("ref-gpt2 loss %.9g (compile time) vs %.9g (run time, %s backend): %s\n", ct.loss,
              run_time.loss, sf::simd::native<float>::name, ok ? "bit-identical" : "MISMATCH");
  return ok ? 0 : 1;
}
