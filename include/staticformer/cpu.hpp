// staticformer/cpu.hpp — the instruction sets a build is compiled for, and those the CPU has.
//
//   sf::cpu::features        the one list of instruction sets (name, compiled for, where the CPU says so)
//   sf::cpu::compiled        bit i set: this translation unit is compiled for features[i] (the
//                            compiler's predefined macro, e.g. __AVX512F__ from -march=native)
//   sf::cpu::detect()        bit i set: this CPU (and its OS) has features[i] — x86-64: cpuid, and
//                            xgetbv for the ymm/zmm state the OS saves; AArch64 Linux: the hwcaps
//                            (getauxval); elsewhere nothing is known (known() is false)
//   sf::cpu::names(out, n, bits)   the names of a set, separated by spaces (no heap)
//   sf::cpu::model()         whether an x86-64 CPU is an AMD, and its family (cpuid 1)
//
// The products each precision runs on (which backend the kernels dispatch to, and a note when the
// CPU has more) are in staticformer/cpu_report.hpp. This header holds no kernel: it is what the
// start-up check (src/cpu_check.cpp, in every executable the project builds) needs.
//
// Every function here is compiled for the baseline instruction set of the architecture
// (SF_CPU_BASELINE: x86-64 without SSE3 and later, whatever -march says), so that the start-up
// check can run them on a CPU that lacks what the rest of the program was compiled for. (g++'s
// target("arch=x86-64") resets the instruction set; clang's keeps the command line's features,
// so it lists the ones to turn off.) They call nothing but each other: a function compiled with the
// command line's features must not run before the check.
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__aarch64__) && defined(__linux__) && __has_include(<sys/auxv.h>)
#include <sys/auxv.h>
#define SF_CPU_HWCAPS 1
#endif

#if defined(__x86_64__) && defined(__clang__)
#define SF_CPU_BASELINE                                                                                           \
  __attribute__((target("arch=x86-64,no-sse3,no-ssse3,no-sse4.1,no-sse4.2,no-popcnt,no-avx,no-avx2,no-fma,"   \
                        "no-f16c,no-bmi,no-bmi2,no-lzcnt,no-movbe,no-avx512f")))
#elif defined(__x86_64__) && defined(__GNUC__)
#define SF_CPU_BASELINE __attribute__((target("arch=x86-64")))
#else
#define SF_CPU_BASELINE
#endif

// 1 when the predefined macro m is defined as 1 (as g++ and clang define the feature macros), else
// 0: its spelling is "1" only then.
#define SF_CPU_STR2(m) #m
#define SF_CPU_STR(m) SF_CPU_STR2(m)
#define SF_CPU_ON(m) (SF_CPU_STR(m)[0] == '1' && SF_CPU_STR(m)[1] == '\0')

namespace sf::cpu {

// x86: cpuid leaf/subleaf, register (0 eax, 1 ebx, 2 ecx, 3 edx) and bit; the register state the
// OS must save (XCR0 bits: state_ymm, state_zmm) for the instructions to run.
// AArch64: leaf = the auxiliary vector entry (16 AT_HWCAP, 26 AT_HWCAP2) and its bit.
inline constexpr std::uint32_t state_ymm = 0x6u, state_zmm = 0xe6u;
struct feature {
  const char* name;
  bool compiled;
  std::uint32_t leaf, subleaf;
  std::uint8_t reg, bit;
  std::uint32_t state;
};

// The one list. The names are Intel's (and the Linux hwcaps' on AArch64).
inline constexpr feature features[] = {
#if defined(__x86_64__)
    {"SSE3", SF_CPU_ON(__SSE3__), 1, 0, 2, 0, 0},
    {"SSSE3", SF_CPU_ON(__SSSE3__), 1, 0, 2, 9, 0},
    {"SSE4.1", SF_CPU_ON(__SSE4_1__), 1, 0, 2, 19, 0},
    {"SSE4.2", SF_CPU_ON(__SSE4_2__), 1, 0, 2, 20, 0},
    {"POPCNT", SF_CPU_ON(__POPCNT__), 1, 0, 2, 23, 0},
    {"MOVBE", SF_CPU_ON(__MOVBE__), 1, 0, 2, 22, 0},
    {"LZCNT", SF_CPU_ON(__LZCNT__), 0x80000001u, 0, 2, 5, 0},
    {"BMI", SF_CPU_ON(__BMI__), 7, 0, 1, 3, 0},
    {"BMI2", SF_CPU_ON(__BMI2__), 7, 0, 1, 8, 0},
    {"AVX", SF_CPU_ON(__AVX__), 1, 0, 2, 28, state_ymm},
    {"F16C", SF_CPU_ON(__F16C__), 1, 0, 2, 29, state_ymm},
    {"FMA", SF_CPU_ON(__FMA__), 1, 0, 2, 12, state_ymm},
    {"AVX2", SF_CPU_ON(__AVX2__), 7, 0, 1, 5, state_ymm},
    {"AVX_VNNI", SF_CPU_ON(__AVXVNNI__), 7, 1, 0, 4, state_ymm},
    {"VAES", SF_CPU_ON(__VAES__), 7, 0, 2, 9, state_ymm},
    {"VPCLMULQDQ", SF_CPU_ON(__VPCLMULQDQ__), 7, 0, 2, 10, state_ymm},
    {"GFNI", SF_CPU_ON(__GFNI__), 7, 0, 2, 8, 0},
    {"AVX512F", SF_CPU_ON(__AVX512F__), 7, 0, 1, 16, state_zmm},
    {"AVX512DQ", SF_CPU_ON(__AVX512DQ__), 7, 0, 1, 17, state_zmm},
    {"AVX512CD", SF_CPU_ON(__AVX512CD__), 7, 0, 1, 28, state_zmm},
    {"AVX512BW", SF_CPU_ON(__AVX512BW__), 7, 0, 1, 30, state_zmm},
    {"AVX512VL", SF_CPU_ON(__AVX512VL__), 7, 0, 1, 31, state_zmm},
    {"AVX512_IFMA", SF_CPU_ON(__AVX512IFMA__), 7, 0, 1, 21, state_zmm},
    {"AVX512_VBMI", SF_CPU_ON(__AVX512VBMI__), 7, 0, 2, 1, state_zmm},
    {"AVX512_VBMI2", SF_CPU_ON(__AVX512VBMI2__), 7, 0, 2, 6, state_zmm},
    {"AVX512_VNNI", SF_CPU_ON(__AVX512VNNI__), 7, 0, 2, 11, state_zmm},
    {"AVX512_BITALG", SF_CPU_ON(__AVX512BITALG__), 7, 0, 2, 12, state_zmm},
    {"AVX512_VPOPCNTDQ", SF_CPU_ON(__AVX512VPOPCNTDQ__), 7, 0, 2, 14, state_zmm},
    {"AVX512_BF16", SF_CPU_ON(__AVX512BF16__), 7, 1, 0, 5, state_zmm},
#elif defined(__aarch64__)
    {"ASIMDHP", SF_CPU_ON(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC), 16, 0, 0, 10, 0},
    {"ASIMDDP", SF_CPU_ON(__ARM_FEATURE_DOTPROD), 16, 0, 0, 20, 0},
    {"SVE", SF_CPU_ON(__ARM_FEATURE_SVE), 16, 0, 0, 22, 0},
    {"I8MM", SF_CPU_ON(__ARM_FEATURE_MATMUL_INT8), 26, 0, 0, 13, 0},
    {"BF16", SF_CPU_ON(__ARM_FEATURE_BF16), 26, 0, 0, 14, 0},
#endif
    {nullptr, false, 0, 0, 0, 0, 0},  // (the end: no architecture has an empty list)
};
inline constexpr std::size_t count = sizeof(features) / sizeof(features[0]) - 1;
static_assert(count <= 64, "sf::cpu: a set of features is one 64-bit word");

using set = std::uint64_t;

// The index of the feature called `name`, or count.
constexpr std::size_t index(const char* name) {
  for (std::size_t i = 0; i < count; ++i) {
    const char *a = features[i].name, *b = name;
    while (*a && *a == *b) ++a, ++b;
    if (*a == *b) return i;
  }
  return count;
}
// The set holding only the feature `name` (0 if this architecture's list has none of that name).
constexpr set bit(const char* name) { return index(name) < count ? set{1} << index(name) : 0; }

constexpr set compiled_set() {
  set s = 0;
  for (std::size_t i = 0; i < count; ++i)
    if (features[i].compiled) s |= set{1} << i;
  return s;
}
// What this translation unit is compiled for.
inline constexpr set compiled = compiled_set();

// Whether detect() can tell what this CPU has (x86-64; AArch64 Linux).
constexpr bool known() {
#if defined(__x86_64__) || defined(SF_CPU_HWCAPS)
  return true;
#else
  return false;
#endif
}

#if defined(__x86_64__)
SF_CPU_BASELINE inline void cpuid(std::uint32_t leaf, std::uint32_t subleaf, std::uint32_t (&r)[4]) {
  __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(subleaf));
}
#endif

// What this CPU has, of `features` (everything on an architecture that known() is false for).
SF_CPU_BASELINE inline set detect() {
  set s = 0;
#if defined(__x86_64__)
  std::uint32_t r[4];
  cpuid(0, 0, r);
  const std::uint32_t max_leaf = r[0];
  cpuid(0x80000000u, 0, r);
  const std::uint32_t max_extended = r[0];
  std::uint32_t max_sub7 = 0;
  if (max_leaf >= 7) {
    cpuid(7, 0, r);
    max_sub7 = r[0];
  }
  // The register state the OS saves (XCR0), when it has turned XSAVE on (OSXSAVE, cpuid 1 ecx bit 27).
  std::uint32_t xcr0 = 0;
  cpuid(1, 0, r);
  if (r[2] & (1u << 27)) {
    std::uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = lo;
  }
  for (std::size_t i = 0; i < count; ++i) {
    const feature& f = features[i];
    const bool leaf_exists = f.leaf >= 0x80000000u ? f.leaf <= max_extended
                             : f.leaf == 7        ? max_leaf >= 7 && f.subleaf <= max_sub7
                                                  : f.leaf <= max_leaf;
    if (!leaf_exists) continue;
    cpuid(f.leaf, f.subleaf, r);
    if ((r[f.reg] >> f.bit & 1u) && (xcr0 & f.state) == f.state) s |= set{1} << i;
  }
#elif defined(SF_CPU_HWCAPS)
  const unsigned long hwcap = getauxval(16), hwcap2 = getauxval(26);
  for (std::size_t i = 0; i < count; ++i)
    if (((features[i].leaf == 16 ? hwcap : hwcap2) >> features[i].bit) & 1u) s |= set{1} << i;
#else
  s = compiled;  // (nothing to ask: assume what the build was compiled for)
#endif
  return s;
}

// The CPU's vendor and family, as cpuid leaf 0 and 1 give them: the family is the base family, plus
// the extended family when the base is 0xF (AMD's Zen 3 and Zen 4 are family 0x19, Zen 5 0x1A).
// All zero where there is no cpuid. (What the kernels choose by it: kernels/gemv.hpp's loads from
// memory.)
struct x86_model {
  bool amd = false;  // "AuthenticAMD"
  std::uint32_t family = 0;
};
SF_CPU_BASELINE inline x86_model model() {
  x86_model m;
#if defined(__x86_64__)
  std::uint32_t r[4];
  cpuid(0, 0, r);  // the vendor: ebx, edx, ecx
  m.amd = r[1] == 0x68747541u && r[3] == 0x69746e65u && r[2] == 0x444d4163u;  // "Auth" "enti" "cAMD"
  if (r[0] >= 1) {
    cpuid(1, 0, r);
    const std::uint32_t base = r[0] >> 8 & 0xfu, extended = r[0] >> 20 & 0xffu;
    m.family = base == 0xfu ? base + extended : base;
  }
#endif
  return m;
}

// text appended to out[at..n-1) (one byte kept for the terminator); the new end.
SF_CPU_BASELINE inline std::size_t append(char* out, std::size_t n, std::size_t at, const char* text) {
  for (; *text && at + 1 < n; ++text) out[at++] = *text;
  if (n) out[at] = '\0';
  return at;
}

// The names of the features of `s`, separated by spaces, into out (n bytes, always terminated; cut
// short if too small); their length. "none" for an empty set.
SF_CPU_BASELINE inline std::size_t names(char* out, std::size_t n, set s) {
  std::size_t at = append(out, n, 0, s == 0 ? "none" : "");
  for (std::size_t i = 0; i < count; ++i)
    if (s >> i & 1u) at = append(out, n, append(out, n, at, at ? " " : ""), features[i].name);
  return at;
}

}  // namespace sf::cpu
