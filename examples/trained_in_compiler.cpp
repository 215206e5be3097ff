// A model trained inside the compiler, used at run time from .rodata.
//
// A 2-layer, D = 16 transformer learns the cyclic text "abcdefgh abcdefgh ..." (V = 9) with
// AdamW, every step evaluated by the compiler in constant expressions. static_assert proves
// that the loss fell. At run time the trained weights are plain constants in the binary:
// the program samples text from them and checks that a run-time forward pass on them gives
// the compile-time loss bit for bit.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"

namespace {
constexpr sf::config C{{.V = 9, .T = 8, .D = 16, .H = 2, .L = 2, .F = 32, .norm = sf::norm_kind::layernorm, .position = sf::position_kind::learned,
                       .activation = sf::activation_kind::relu, .tied = true, .bias = true}, {.B = 1}};
constexpr char alphabet[] = "abcdefgh ";  // token i is alphabet[i]
constexpr int period = 9;                 // "abcdefgh " repeats

struct trainer {
  sf::params<C> p, g;
  sf::activations<C> a;
  sf::adamw<sf::params<C>> opt;
  sf::tokens_t<C> x;
  sf::targets_t<C> y;
  float first_loss = 0, last_loss = 0;
  int steps = 0;
};

// Row b of step s reads the text from offset (3s + 5b) mod 9: x = text[o .. o+T), y = x shifted by one.
constexpr void make_batch(trainer& t) {
  for (std::size_t b = 0; b < C.B; ++b)
    for (std::size_t i = 0; i < C.T; ++i) {
      const int o = (3 * t.steps + 5 * static_cast<int>(b) + static_cast<int>(i)) % period;
      t.x(b, i) = o;
      t.y(b, i) = (o + 1) % period;
    }
}
constexpr void train_steps(trainer& t, int n) {
  for (int k = 0; k < n; ++k) {
    make_batch(t);
    const float loss = sf::forward(t.p, t.a, t.x, t.y);
    if (t.steps == 0) t.first_loss = loss;
    sf::zero(t.g);
    sf::backward(t.p, t.g, t.a, t.x, t.y);
    t.opt.step(t.p, t.g, 5e-2);
    ++t.steps;
  }
  make_batch(t);
  t.last_loss = sf::forward(t.p, t.a, t.x, t.y);  // the loss after the last update, on the next batch
}

// 24 AdamW steps in three constant expressions (g++ frees its temporaries after each
// function definition in between, which keeps the compiler's memory low).
constexpr trainer stage1 = [] {
  trainer t{};
  sf::init_params(t.p, 7);
  train_steps(t, 8);
  return t;
}();
}  // namespace
int trained_in_compiler_gc_point_1() { return 1; }
namespace {
constexpr trainer stage2 = [] {
  trainer t = stage1;
  train_steps(t, 8);
  return t;
}();
}  // namespace
int trained_in_compiler_gc_point_2() { return 2; }
namespace {
constexpr trainer stage3 = [] {
  trainer t = stage2;
  train_steps(t, 8);
  return t;
}();

// The compiler proves that training worked.
static_assert(stage3.steps == 24);
static_assert(stage3.first_loss > 2.0f, "at initialisation the loss is about log(9) = 2.2");
static_assert(stage3.last_loss < stage3.first_loss / 2, "24 AdamW steps in the compiler more than halve the loss");

// What the program keeps: the weights (constants in .rodata), the final batch and its loss.
constexpr sf::params<C> weights = stage3.p;
constexpr sf::tokens_t<C> final_x = stage3.x;
constexpr sf::targets_t<C> final_y = stage3.y;
constexpr float final_loss = stage3.last_loss;

sf::activations<C> acts;                         // run-time scratch, static storage
constexpr sf::config C1 = [] {                   // the same model with B = 1, for sampling
  sf::config c = C;
  c.B = 1;
  return c;
}();
sf::inference_state<C1> one;
}  // namespace

int main() {
  // 1. The same forward pass at run time, on the weights in .rodata: the same bits.
  const float loss = sf::forward(weights, acts, final_x, final_y);
  std::printf("loss: %.4f at step 0, %.4f after %d AdamW steps in the compiler; run-time forward on the "
              "compiled-in weights: %.9g (%s)\n",
              stage3.first_loss, final_loss, stage3.steps, loss,
              std::memcmp(&loss, &final_loss, sizeof loss) == 0 ? "bit-identical" : "DIFFERENT");
  bool ok = std::memcmp(&loss, &final_loss, sizeof loss) == 0;
  int correct = 0;  // greedy next-character accuracy on that batch
  for (std::size_t i = 0; i < C.T; ++i) {
    const float* row = acts.logits.row(0, i);
    int best = 0;
    for (int v = 1; v < static_cast<int>(C.V); ++v)
      if (row[v] > row[best]) best = v;
    correct += best == final_y(0, i);
  }
  std::printf("next-character accuracy on that batch: %d of %zu\n", correct, C.T);
  ok &= correct >= static_cast<int>(C.T) - 2;

  // 2. Greedy generation (printed, not checked) from "cde" with a sliding window of T tokens.
  char text[64] = "cde";
  std::size_t len = 3;
  sf::tokens_t<C1> window{};
  for (int step = 0; step < 24; ++step) {
    const std::size_t n = len < C.T ? len : C.T;  // the last n characters, left-aligned
    for (std::size_t i = 0; i < C.T; ++i) {
      const char ch = i < n ? text[len - n + i] : 'a';
      int id = 0;
      while (alphabet[id] != ch) ++id;
      window(0, i) = id;
    }
    sf::infer(weights, one, window);
    const float* row = one.logits.row(0, n - 1);  // the prediction after the last real character
    int best = 0;
    for (int v = 1; v < static_cast<int>(C.V); ++v)
      if (row[v] > row[best]) best = v;
    text[len++] = alphabet[best];
  }
  text[len] = '\0';
  std::printf("generated: \"%s\"\n", text);
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
