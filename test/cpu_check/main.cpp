// The program of the test cpu_check (test/cpu_check_test.cmake): it executes an instruction of the
// widest vector extension it is compiled for, first thing in main, then prints "ran". Without
// src/cpu_check.cpp, compiled with -mavx512f and run on a CPU without AVX-512, it dies of SIGILL.
#include <cstdio>

int main() {
#if defined(__AVX512F__)
  __asm__ volatile("vpxord %%zmm16, %%zmm16, %%zmm16" ::: "xmm16");
#elif defined(__AVX2__)
  __asm__ volatile("vpxor %%ymm0, %%ymm0, %%ymm0" ::: "xmm0");
#endif
  std::puts("ran");
  return 0;
}
