// host/board.hpp — board.hpp's interface on a PC, so that firmware/main.cpp also compiles for the
// host (-DSF_HOST_BOARD): the firmware's computation, with the scalar kernels the device runs
// (-DSF_SIMD_FORCE_SCALAR), on the host. The firmware test (firmware/firmware_llama_test.cmake)
// requires the device's prompt ids, text, ids and logits to be this program's, bit for bit.
// Text goes to stdout; the timer and the stack report 0 (they are the device's).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

namespace board {

inline void write(const char* text) { std::fputs(text, stdout); }
[[noreturn]] inline void exit(int status) { std::exit(status); }

// A line, written when the object ends (the device's board::line).
class line {
 public:
  line& operator<<(const char* s) {
    std::fputs(s, stdout);
    return *this;
  }
  line& operator<<(char c) {
    std::fputc(c, stdout);
    return *this;
  }
  template <class I>
    requires(std::is_integral_v<I> && !std::is_same_v<I, char> && !std::is_same_v<I, bool>)
  line& operator<<(I v) {
    if constexpr (std::is_signed_v<I>) std::printf("%lld", static_cast<long long>(v));
    else std::printf("%llu", static_cast<unsigned long long>(v));
    return *this;
  }
};

namespace timer {
inline constexpr std::uint32_t instructions_per_tick = 0;  // (no instruction counts on the host)
inline void start() {}
inline std::uint32_t now() { return 0; }
}  // namespace timer

inline std::size_t stack_size() { return 0; }
inline std::size_t stack_used() { return 0; }

}  // namespace board
