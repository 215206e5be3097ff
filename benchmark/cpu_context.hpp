// cpu_context.hpp — the first lines of every Google Benchmark program here (in the context block
// Google Benchmark prints before the table): what this build's float, bf16 and int8 products run
// on, what this CPU has (staticformer/cpu_report.hpp), and the FMA peak measured at start, the
// lines print_cpu prints too (peak_lines, tools/generate/peak.hpp; the rows' own pct_peak counters
// use the peak measured beside them).
// A program with bf16 rows also says once on stderr when its bf16 products are emulated.
#pragma once
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "../tools/generate/peak.hpp"
#include "staticformer/cpu_report.hpp"

namespace sf_bench {

inline void add_cpu_context(bool bf16_rows) {
  char text[2048];
  const sf::cpu::set have = sf::cpu::detect();
  const struct {
    sf::cpu::product p;
    const char* key;
  } lines[] = {{sf::cpu::product::f32, "float products"},
               {sf::cpu::product::bf16, "bf16 products"},
               {sf::cpu::product::int8, "int8 products"},
               {sf::cpu::product::cpu, "cpu"}};
  for (const auto& l : lines) {
    sf::cpu::describe(l.p, text, sizeof text, have);
    benchmark::AddCustomContext(l.key, text);
  }
  peak_lines(0.05, [](const char* key, const char* value) { benchmark::AddCustomContext(key, value); });  // (peak.hpp)
  if (const char* w = sf::cpu::bf16_warning(have); w && bf16_rows) std::fprintf(stderr, "%s\n", w);
}

}  // namespace sf_bench
