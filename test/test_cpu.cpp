// staticformer/cpu.hpp and cpu_report.hpp: the names of the instruction sets, what this CPU has
// beside what the program is compiled for, the lines `staticformer info` and the benchmarks print, and
// the CPU's part of the `staticformer` command's cache key.
// (The start-up check itself, on a CPU without AVX-512, is the test cpu_check: test/cpu_check_test.cmake.)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../tools/staticformer/cpu_key.hpp"
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

// cpu::model() (the vendor and family that kernels/gemv.hpp chooses its loads from memory by)
// against what Linux says in /proc/cpuinfo: "vendor_id" and "cpu family" (decimal).
TEST(Cpu, ModelIsWhatProcCpuinfoSays) {
#if !defined(__x86_64__) || !defined(__linux__)
  GTEST_SKIP() << "x86-64 Linux only";
#else
  std::FILE* f = std::fopen("/proc/cpuinfo", "r");
  if (!f) GTEST_SKIP() << "no /proc/cpuinfo";
  std::string vendor;
  long family = -1;
  char line[512];
  while (std::fgets(line, sizeof line, f) && (vendor.empty() || family < 0)) {
    const std::string l = line;
    const auto colon = l.find(':');
    if (colon == std::string::npos) continue;
    std::string value = l.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    value.erase(value.find_last_not_of(" \t\n") + 1);
    if (l.rfind("vendor_id", 0) == 0 && vendor.empty()) vendor = value;
    if (l.rfind("cpu family", 0) == 0 && family < 0) family = std::stol(value);
  }
  std::fclose(f);
  if (vendor.empty() || family < 0) GTEST_SKIP() << "/proc/cpuinfo names no vendor_id or cpu family";
  const sf::cpu::x86_model m = sf::cpu::model();
  EXPECT_EQ(m.amd, vendor == "AuthenticAMD") << vendor;
  EXPECT_EQ(static_cast<long>(m.family), family) << vendor;
#endif
}

TEST(Cpu, NamesInTableOrder) {
  EXPECT_EQ(names(0), "none");
  EXPECT_EQ(sf::cpu::bit("no such feature"), 0u);
#if defined(__x86_64__)
  EXPECT_EQ(names(sf::cpu::bit("AVX2") | sf::cpu::bit("FMA")), "FMA AVX2");
  EXPECT_EQ(names(sf::cpu::bit("AVX512_BF16")), "AVX512_BF16");
  EXPECT_EQ(sf::cpu::compiled & sf::cpu::bit("AVX512F") ? 1 : 0, SF_CPU_ON(__AVX512F__) ? 1 : 0);
#endif
  char small[6] = {'x', 'x', 'x', 'x', 'x', 'x'};
  const std::size_t n = sf::cpu::names(small, sizeof small, sf::cpu::compiled | 1);
  EXPECT_EQ(n, 5u);  // cut short, terminated
  EXPECT_EQ(std::strlen(small), n);
}

// The CPU's part of the staticformer command's cache key (tools/staticformer/cpu_key.hpp): under
// -march=native, the same set of features gives the same key and any other set another (every
// feature added or removed, one at a time, and sets of several); without it, "" whatever the CPU.
TEST(Cpu, CacheKeyNamesTheFeaturesOnlyUnderMarchNative) {
  const std::vector<std::string> native = {"-O2", "-march=native", "-g"}, portable = {"-O2", "-g"},
                                  other_march = {"-O2", "-march=x86-64-v3"}, not_a_flag = {"-O2 -march=native"};
  if (sf::cpu::count == 0) GTEST_SKIP() << "no features on this architecture";
  const sf::cpu::set all = sf::cpu::count == 64 ? ~sf::cpu::set{0} : (sf::cpu::set{1} << sf::cpu::count) - 1;
  const sf::cpu::set a = all & 0x5555555555555555u, b = all & 0x3333333333333333u;  // two sets of several
  std::vector<sf::cpu::set> sets = {0, a, b, all};
  for (std::size_t i = 0; i < sf::cpu::count; ++i) sets.push_back(a ^ (sf::cpu::set{1} << i));  // a, one changed
  for (std::size_t i = 0; i < sets.size(); ++i) {
    EXPECT_EQ(sf_engine::cpu_key(native, sets[i]), sf_engine::cpu_key(native, sets[i]));
    EXPECT_EQ(sf_engine::cpu_key(native, sets[i]).rfind("|cpu=", 0), 0u) << sf_engine::cpu_key(native, sets[i]);
    for (std::size_t j = 0; j < i; ++j)
      EXPECT_NE(sf_engine::cpu_key(native, sets[i]), sf_engine::cpu_key(native, sets[j]))
          << names(sets[i]) << " / " << names(sets[j]);
    EXPECT_EQ(sf_engine::cpu_key(portable, sets[i]), "");
    EXPECT_EQ(sf_engine::cpu_key(other_march, sets[i]), "");
    EXPECT_EQ(sf_engine::cpu_key(not_a_flag, sets[i]), "");  // (one flag a list element)
  }
  // without a set: this CPU's
  EXPECT_EQ(sf_engine::cpu_key(native), sf_engine::cpu_key(native, sf::cpu::detect()));
  EXPECT_EQ(sf_engine::cpu_key(portable), "");
}

TEST(Cpu, ReportNamesTheBackendsDispatchedTo) {
  char buf[4096];
  sf::cpu::report(buf, sizeof buf, "  ");
  const std::string r = buf;
  EXPECT_NE(r.find(std::string("  float: ") + sf::simd::native<float>::instructions), std::string::npos) << r;
  // with AVX-512, the loads of weights from memory, as kernels::gemv<weights_in::memory> chooses them
  using sf::kernels::weights_in;
  if constexpr (sf::kernels::detail::wider_loads_possible<float, weights_in::memory>)
    EXPECT_NE(r.find(sf::kernels::detail::wide_loads_from_memory() ? "; weights from memory: 512-bit loads (zmm)\n"
                                                                   : "; weights from memory: 256-bit loads (ymm)\n"),
              std::string::npos)
        << r;
  else
    EXPECT_EQ(r.find("weights from memory"), std::string::npos) << r;
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
