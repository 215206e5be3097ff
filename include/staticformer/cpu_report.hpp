// staticformer/cpu_report.hpp — what the products of this build run on, and what this CPU has.
//
//   sf::cpu::describe(product::f32 | bf16 | int8 | cpu, out, n, have)   one line, no newline:
//       f32   the float products: sf::simd::native<float>'s instructions (e.g. "AVX-512F FMA (zmm, 16 floats)"),
//             with AVX-512 also the width of the loads of weights from memory (kernels/gemv.hpp:
//             "; weights from memory: 512-bit loads (zmm)" or "256-bit loads (ymm)")
//       bf16  the bf16 products: sf::kernels::bf16_native's ("AVX512_BF16 vdpbf16ps (zmm)", or emulated)
//       int8  the int8 (Q8_0) products: sf::kernels::q8::native's ("AVX512_VNNI vpdpbusd (zmm)", ...)
//       cpu   what this CPU has, then what the build is compiled for (staticformer/cpu.hpp's names)
//     each with a note in parentheses when the CPU has an instruction set the build leaves unused
//     (e.g. "this CPU has AVX512_BF16, which this build is not compiled for") or lacks the one the
//     product would use ("this CPU has no AVX512_BF16")
//   sf::cpu::report(out, n, indent, have)     the four lines ("float: ", "bf16: ", "int8: ", "cpu: "),
//                                             each after `indent` and ending in a newline
//   sf::cpu::bf16_warning(have)               the one-line warning a bf16 run prints once on stderr
//                                             when its products are emulated; nullptr when native
//
// The text follows the backends the kernels dispatch to (each has `instructions`), from the same
// macros, so it cannot claim an instruction the code does not use. `have` defaults to detect().
// No heap, no I/O: the caller prints.
#pragma once
#include <cstddef>
#include <type_traits>

#include "staticformer/cpu.hpp"
#include "staticformer/kernels/gemm_bf16.hpp"
#include "staticformer/kernels/gemv.hpp"
#include "staticformer/kernels/q8.hpp"
#include "staticformer/simd.hpp"

namespace sf::cpu {

enum class product { f32, bf16, int8, cpu };

// Whether the bf16 products of this build run on bf16 instructions (else they are emulated).
inline constexpr bool bf16_is_native = !std::is_same_v<kernels::bf16_native, kernels::bf16_portable>;

namespace detail {
// " (this CPU has NAME, which this build is not compiled for: rebuild with -march=native)" when
// the CPU has the feature and the build is not compiled for it; else "".
inline std::size_t unused(char* out, std::size_t n, std::size_t at, set have, const char* name) {
  const set b = bit(name);
  if (!(have & b) || (compiled & b)) return at;
  at = append(out, n, at, " (this CPU has ");
  at = append(out, n, at, name);
  return append(out, n, at, ", which this build is not compiled for: rebuild on it with -march=native)");
}
}  // namespace detail

inline std::size_t describe(product p, char* out, std::size_t n, set have = detect()) {
  std::size_t at = append(out, n, 0, "");
  switch (p) {
    case product::f32:
      at = append(out, n, at, simd::native<float>::instructions);
      if constexpr (kernels::detail::wider_loads_possible<float, kernels::weights_in::memory>)  // (kernels/gemv.hpp)
        at = append(out, n, at,
                    kernels::detail::wide_loads_from_memory() ? "; weights from memory: 512-bit loads (zmm)"
                                                              : "; weights from memory: 256-bit loads (ymm)");
      if (!(compiled & bit("AVX512F"))) at = detail::unused(out, n, at, have, "AVX512F");
      if (!(compiled & bit("AVX2"))) at = detail::unused(out, n, at, have, "AVX2");
      return at;
    case product::bf16:
      at = append(out, n, at, kernels::bf16_native::instructions);
      if (bf16_is_native) return at;
      if (bit("AVX512_BF16") == 0) return append(out, n, at, " (no bf16 kernel for this architecture)");
      if (!known()) return at;
      if (!(have & bit("AVX512_BF16"))) return append(out, n, at, " (this CPU has no AVX512_BF16)");
      return detail::unused(out, n, at, have, "AVX512_BF16");
    case product::int8:
      at = append(out, n, at, kernels::q8::native::instructions);
      if (!(compiled & (bit("AVX512_VNNI") | bit("AVX_VNNI")))) {
        const std::size_t before = at;
        at = detail::unused(out, n, at, have, "AVX512_VNNI");
        if (at == before) at = detail::unused(out, n, at, have, "AVX_VNNI");
      }
      return at;
    case product::cpu:
      if (!known()) {
        at = append(out, n, at, "unknown (no detection on this architecture)");
      } else {
        at = append(out, n, at, "this CPU has ");
        at += names(out + at, n - at, have);
      }
      at = append(out, n, at, "; this build is compiled for ");
      return at + names(out + at, n - at, compiled);
  }
  return at;
}

inline std::size_t report(char* out, std::size_t n, const char* indent = "", set have = detect()) {
  constexpr struct {
    product p;
    const char* label;
  } lines[] = {{product::f32, "float: "}, {product::bf16, "bf16: "}, {product::int8, "int8: "}, {product::cpu, "cpu: "}};
  std::size_t at = append(out, n, 0, "");
  for (const auto& l : lines) {
    at = append(out, n, append(out, n, at, indent), l.label);
    at += describe(l.p, out + at, n - at, have);
    at = append(out, n, at, "\n");
  }
  return at;
}

inline const char* bf16_warning(set have = detect()) {
  if (bf16_is_native) return nullptr;
  if (bit("AVX512_BF16") == 0 || !known())
    return "bf16: this build has no bf16 instructions for this CPU; products are emulated and slower than float32";
  if (have & bit("AVX512_BF16"))
    return "bf16: this build is not compiled for AVX512_BF16, which this CPU has (rebuild on it with -march=native); "
           "products are emulated and slower than float32";
  return "bf16: this CPU has no AVX512_BF16; products are emulated and slower than float32";
}

}  // namespace sf::cpu
