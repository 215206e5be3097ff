// Prints, for every built-in configuration, the bytes each part of the model needs.
// Every number is a compile-time constant (sizeof of caller-owned structs).
#include <cstdio>

#include "staticformer/memory.hpp"
#include "staticformer/model.hpp"

template <sf::config C>
void row(const char* name) {
  using m = sf::memory_footprint<C>;
  static_assert(m::training_total > 0);
  std::printf("| %-11s | %3zu | %10zu | %12zu | %13zu | %13zu | %12zu | %14zu |\n", name, C.B, m::parameter_count,
              m::parameters, m::activations, m::adam_moments, m::inference, m::training_total);
}

int main() {
  std::printf("| config      |   B | parameters | params bytes | activations B | AdamW moments | inference B | training total |\n");
  std::printf("|-------------|-----|------------|--------------|---------------|---------------|-------------|----------------|\n");
  row<sf::configs::ref_gpt2>("ref-gpt2");
  row<sf::configs::ref_llama>("ref-llama");
  row<sf::configs::ref_vaswani>("ref-vaswani");
  row<sf::configs::nano>("nano");
  row<sf::configs::micro>("micro");
  row<sf::configs::small>("small");
  return 0;
}
