// startup.cpp — the reset path of a bare-metal Cortex-M4F or Cortex-M7 program (the firmware
// example's own C runtime start: no crt0, no newlib initialisation, no heap).
//   the vector table (address 0): the initial stack pointer, then the handlers
//   reset: FPU on (CP10/CP11 full access) before any floating-point instruction, .data copied
//   from flash, .bss zeroed, the free stack painted (board::stack_used), static constructors
//   run, main(), then exit via semihosting.
// A fault prints its name and ends the run with a failure status.
#include <cstdint>

#include "board.hpp"

extern "C" {
extern std::uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[], __stack_top[], __stack_limit[];
extern void (*__init_array_start[])();
extern void (*__init_array_end[])();
int main();
[[noreturn]] void sf_reset_handler();
[[noreturn]] void sf_start();
}

namespace {
[[noreturn]] void fault(const char* what) {
  board::write(what);
  board::exit(1);
}
void nmi() { fault("firmware: NMI\n"); }
void hard_fault() { fault("firmware: hard fault\n"); }
void mem_manage() { fault("firmware: memory management fault\n"); }
void bus_fault() { fault("firmware: bus fault\n"); }
void usage_fault() { fault("firmware: usage fault\n"); }
void unexpected() { fault("firmware: unexpected exception\n"); }

using handler = void (*)();
}  // namespace

// Vector table: the stack pointer's initial value, then reset, NMI, the faults, ... (Armv7-M).
__attribute__((section(".isr_vector"), used)) const handler sf_vectors[16] = {
    reinterpret_cast<handler>(__stack_top),
    sf_reset_handler,
    nmi,
    hard_fault,
    mem_manage,
    bus_fault,
    usage_fault,
    nullptr, nullptr, nullptr, nullptr,
    unexpected,  // SVCall
    unexpected,  // debug monitor
    nullptr,
    unexpected,  // PendSV
    unexpected,  // SysTick
};

// Reset: the FPU first (the compiler may use its registers anywhere after), in assembly.
extern "C" __attribute__((naked, noreturn)) void sf_reset_handler() {
  __asm__ volatile(
      "ldr r0, =0xE000ED88 \n"  // CPACR
      "ldr r1, [r0]        \n"
      "orr r1, r1, #(0xF << 20) \n"
      "str r1, [r0]        \n"
      "dsb                 \n"
      "isb                 \n"
      "b sf_start          \n");
}

extern "C" [[noreturn]] void sf_start() {
  // (volatile: keeps the compiler from turning these loops into memcpy/memset calls)
  volatile std::uint32_t* dst = __data_start;
  for (const std::uint32_t* src = __data_load; dst < __data_end;) *dst++ = *src++;
  for (volatile std::uint32_t* p = __bss_start; p < __bss_end;) *p++ = 0;
  // The stack below this frame (and 64 bytes of margin) gets the paint of board::stack_used.
  std::uint32_t* sp = nullptr;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  for (volatile std::uint32_t* p = __stack_limit; p < sp - 16;) *p++ = board::stack_paint;
  for (void (**f)() = __init_array_start; f < __init_array_end; ++f) (*f)();
  board::exit(main());
}
