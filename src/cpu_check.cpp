// cpu_check.cpp — the start-up check of every executable the project builds (not part of
// staticformer::io): a program compiled for instructions this CPU lacks (-march=native on an
// AVX-512 machine, then run on an AVX2 one: a build directory or the engine cache copied, a VM's CPU
// changed) stops before it runs any of them, with a message naming them, instead of dying of
// SIGILL somewhere later.
//
// CMake adds this file to every executable that links sf_project_flags (CMakeLists.txt), the
// `staticformer` command compiles it into every executable it builds on first use (build.txt,
// source.check=), and staticformer_add_model into those of a user's project (installed beside the
// engine sources; cmake/StaticformerModel.cmake), each time with that executable's own flags: its
// predefined macros are what the executable is compiled for (sf::cpu::compiled). The code is
// compiled for the baseline (SF_CPU_BASELINE, staticformer/cpu.hpp) and runs from an init_array
// constructor of priority 101, before every ordinary static constructor; it calls only
// staticformer/cpu.hpp's baseline functions and the C library (write, _exit). Exit status 1.
// Never in a firmware build (the Cortex-M ones are projects of their own, without
// sf_project_flags).
#include <unistd.h>

#include "staticformer/cpu.hpp"

namespace {

// glibc passes (argc, argv, envp) to the init_array functions: argv[0] names the program.
SF_CPU_BASELINE __attribute__((constructor(101))) void sf_cpu_check(int argc, char** argv, char**) {
  if (!sf::cpu::known()) return;
  constexpr sf::cpu::set need = sf::cpu::compiled;
  const sf::cpu::set have = sf::cpu::detect();
  if ((need & ~have) == 0) return;
  char msg[2048], list[1024];
  std::size_t at = 0;
  at = sf::cpu::append(msg, sizeof msg, at, argc > 0 && argv && argv[0] ? argv[0] : "staticformer");
  at = sf::cpu::append(msg, sizeof msg, at, ": this CPU lacks ");
  sf::cpu::names(list, sizeof list, need & ~have);
  at = sf::cpu::append(msg, sizeof msg, at, list);
  at = sf::cpu::append(msg, sizeof msg, at,
                       ", which this program was compiled for (-march=native on another machine?); rebuild it on "
                       "this machine, or configure with -DSTATICFORMER_NATIVE=OFF (the staticformer command: its "
                       "engines compiled on first use are rebuilt for this CPU)\n  compiled for: ");
  sf::cpu::names(list, sizeof list, need);
  at = sf::cpu::append(msg, sizeof msg, at, list);
  at = sf::cpu::append(msg, sizeof msg, at, "\n  this CPU has: ");
  sf::cpu::names(list, sizeof list, have);
  at = sf::cpu::append(msg, sizeof msg, at, list);
  at = sf::cpu::append(msg, sizeof msg, at, "\n");
  for (std::size_t done = 0; done < at;) {
    const ssize_t n = ::write(2, msg + done, at - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::_exit(1);
}

}  // namespace
