// board.hpp — what the firmware example needs from QEMU's MPS2 boards (mps2-an386, a Cortex-M4F;
// mps2-an500, a Cortex-M7): text out and exit through Arm semihosting (the debugger's channel: QEMU
// with -semihosting), a cycle timer (the same CMSDK timer at the same address on both), and the
// stack's high-water mark. No newlib stdio (it would bring malloc), nothing but a few instructions
// and registers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace board {

// ---------------------------------------------------------------- semihosting
// A request: r0 = operation, r1 = argument, then BKPT 0xAB (Thumb); the host answers in r0.
inline int semihost(int op, const void* arg) {
  register int r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}
inline void write(const char* text) { semihost(0x04, text); }  // SYS_WRITE0: a NUL-terminated string
// SYS_EXIT: ADP_Stopped_ApplicationExit ends QEMU with status 0; any other reason with status 1.
[[noreturn]] inline void exit(int status) {
  semihost(0x18, reinterpret_cast<const void*>(status == 0 ? 0x20026 : 0x20023));
  for (;;) {
  }
}

// A small line buffer, so that a line is one semihosting call.
class line {
 public:
  line& operator<<(const char* s) {
    while (*s) put(*s++);
    return *this;
  }
  line& operator<<(char c) {
    put(c);
    return *this;
  }
  template <class I>
    requires(std::is_integral_v<I> && !std::is_same_v<I, char> && !std::is_same_v<I, bool>)
  line& operator<<(I v) {  // decimal
    std::uint64_t u = static_cast<std::uint64_t>(v);
    if constexpr (std::is_signed_v<I>) {
      if (v < 0) {
        put('-');
        u = 0 - u;
      }
    }
    char digits[20];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u);
    while (n) put(digits[--n]);
    return *this;
  }
  void flush() {
    buf_[n_] = '\0';
    if (n_) write(buf_);
    n_ = 0;
  }
  ~line() { flush(); }

 private:
  void put(char c) {
    if (n_ + 1 >= sizeof buf_) flush();
    buf_[n_++] = c;
  }
  char buf_[256];
  std::size_t n_ = 0;
};

// ---------------------------------------------------------------- cycles
// CMSDK APB timer 0 (0x40000000), clocked at the board's 25 MHz: a 32-bit down counter.
// Under QEMU with -icount shift=0 every instruction advances the virtual clock by 1 ns, so one
// tick of the timer is 40 instructions: instructions = 40 · ticks (resolution 40).
namespace timer {
inline volatile std::uint32_t* const reg = reinterpret_cast<volatile std::uint32_t*>(0x40000000);
inline constexpr std::uint32_t instructions_per_tick = 40;  // 1 GHz (-icount shift=0) / 25 MHz
inline void start() {
  reg[0] = 0;            // CTRL: stop
  reg[2] = 0xffffffffu;  // RELOAD
  reg[1] = 0xffffffffu;  // VALUE
  reg[0] = 1;            // CTRL: enable
}
inline std::uint32_t now() { return 0xffffffffu - reg[1]; }  // ticks since start (wraps after 171 s)
}  // namespace timer

// ---------------------------------------------------------------- stack
// The linker script's stack: [__stack_limit, __stack_top). startup.cpp paints it with stack_paint
// before main; what is no longer paint at the end was used.
inline constexpr std::uint32_t stack_paint = 0x5afe57acu;
extern "C" std::uint32_t __stack_limit[], __stack_top[];
inline std::size_t stack_size() {
  return static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(__stack_top) - reinterpret_cast<std::uintptr_t>(__stack_limit));
}
// The bytes of stack used so far: from the top down to the deepest word that is not paint.
inline std::size_t stack_used() {
  const volatile std::uint32_t* p = __stack_limit;
  while (p < __stack_top && *p == stack_paint) ++p;
  return static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(__stack_top) - reinterpret_cast<std::uintptr_t>(p));
}

}  // namespace board
