// staticformer/cpu.hpp and cpu_report.hpp: the names of the instruction sets, what this CPU has
// beside what the program is compiled for, and the lines `staticformer info` and the benchmarks print.
// (The start-up check itself, on a CPU without AVX-512, is the test cpu_check: test/cpu_check_test.cmake.)
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "staticformer/cpu.hpp"
#include "staticformer/cpu_report.hpp"

namespace {

std::string names(sf::cpu::set s) {
  char buf[1024];
  sf::cpu::names(buf, sizeof buf, s);
  return buf;
}
std::string describe(sf::cpu::product p, sf::cpu::set have) {
  char buf[1024];
  sf::cpu::describe(p, buf, sizeof buf, have);
  return buf;
}

TEST(Cpu, EveryFeatureCompiledForIsDetected) {
  // (src/cpu_check.cpp would have stopped this program otherwise; this says which one)
  if (!sf::cpu::known()) GTEST_SKIP() << "no detection on this architecture";
  const sf::cpu::set have = sf::cpu::detect();
  EXPECT_EQ(sf::cpu::compiled & ~have, 0u) << "compiled for " << names(sf::cpu::compiled) << "; detected " << names(have);
}

TEST(Cpu, NamesInTableOrder) {
  EXPECT_EQ(names(0), "none");
  EXPECT_EQ(sf::cpu::bit("no such feature"), 0u);
#if defined(__x86_64__)
  EXPECT_EQ(names(sf::cpu::bit("AVX2") | sf::cpu::bit("FMA")), "FMA AVX2");
  EXPECT_EQ(names(sf::cpu::bit("AVX512_BF16")), "AVX512_BF16");
  // (the cache key of the staticformer command's engines holds these names: another set, another key)
  EXPECT_NE(names(sf::cpu::bit("AVX2") | sf::cpu::bit("AVX512F")), names(sf::cpu::bit("AVX2")));
  EXPECT_EQ(sf::cpu::compiled & sf::cpu::bit("AVX512F") ? 1 : 0, SF_CPU_ON(__AVX512F__) ? 1 : 0);
#endif
  char small[6] = {'x', 'x', 'x', 'x', 'x', 'x'};
  const std::size_t n = sf::cpu::names(small, sizeof small, sf::cpu::compiled | 1);
  EXPECT_EQ(n, 5u);  // cut short, terminated
  EXPECT_EQ(std::strlen(small), n);
}

TEST(Cpu, ReportNamesTheBackendsDispatchedTo) {
  char buf[4096];
  sf::cpu::report(buf, sizeof buf, "  ");
  const std::string r = buf;
  EXPECT_NE(r.find(std::string("  float: ") + sf::simd::native<float>::instructions), std::string::npos) << r;
  EXPECT_NE(r.find(std::string("  bf16: ") + sf::kernels::bf16_native::instructions), std::string::npos) << r;
  EXPECT_NE(r.find(std::string("  int8: ") + sf::kernels::q8::native::instructions), std::string::npos) << r;
  EXPECT_NE(r.find("  cpu: "), std::string::npos) << r;
}

TEST(Cpu, Bf16EmulatedSaysSoOnce) {
  EXPECT_EQ(sf::cpu::bf16_warning() == nullptr, sf::cpu::bf16_is_native);
#if defined(__x86_64__)
  const sf::cpu::set without = sf::cpu::compiled & ~sf::cpu::bit("AVX512_BF16");
  if (sf::cpu::bf16_is_native) {
    EXPECT_EQ(describe(sf::cpu::product::bf16, sf::cpu::detect()), "AVX512_BF16 vdpbf16ps (zmm)");
  } else {
    EXPECT_NE(describe(sf::cpu::product::bf16, without).find("(this CPU has no AVX512_BF16)"), std::string::npos);
    EXPECT_NE(std::string(sf::cpu::bf16_warning(without)).find("this CPU has no AVX512_BF16; products are emulated"),
              std::string::npos);
    EXPECT_NE(describe(sf::cpu::product::bf16, without | sf::cpu::bit("AVX512_BF16")).find("which this build is not compiled for"),
              std::string::npos);
  }
#endif
}

}  // namespace
