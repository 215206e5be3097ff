# staticformer_engine_flags(OUT CXX_FLAGS NATIVE SANITIZE): the flag= lines of staticformer-build.txt,
# the flags `staticformer` compiles an executable for a new architecture with (tools/CMakeLists.txt).
#   the release flags: -std=c++20 -O2 -DNDEBUG -ffp-contract=off
#   with g++ (CMAKE_CXX_COMPILER_ID GNU) a flag.cxx= line (a flag for the build's own compiler only:
#     `staticformer` drops it when $STATICFORMER_CXX names another, which may not know it):
#     -fvect-cost-model=dynamic. g++ 12's -O2 vectorizes a loop only where the vector code needs no
#     run-time check and no scalar remainder ("very cheap"), which left element-wise loops over rows
#     that may alias or whose length is no multiple of the vector (SwiGLU's gate ⊙ up over F = 172)
#     scalar; with it they are vectorized, as at -O3 and as clang's -O2 does, in no measurably
#     longer compile (docs/benchmarks.md, "Zen 3"). Element-wise loops only: without -ffast-math no
#     float sum is reordered, so the bits stay.
#   every -m… flag of CXX_FLAGS (CMAKE_CXX_FLAGS: -march=x86-64-v3, -mtune=znver3, -mavx2, …): the
#     instruction sets this build was asked for are the engines' too (without them a
#     -march=x86-64-v3 build with STATICFORMER_NATIVE=OFF compiled SSE2 engines)
#   -march=native when NATIVE (after them, as in the project's own compile lines, so it wins)
#   -fsanitize=SANITIZE when SANITIZE is set (the I/O library the engines link has it)
# Tested by test/engine_flags_test.cmake (test tool_engine_flags).
function(staticformer_engine_flags out cxx_flags native sanitize)
  set(_lines "flag=-std=c++20\nflag=-O2\nflag=-DNDEBUG\nflag=-ffp-contract=off\n")
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    string(APPEND _lines "flag.cxx=-fvect-cost-model=dynamic\n")
  endif()
  separate_arguments(_tokens UNIX_COMMAND "${cxx_flags}")
  foreach(_f IN LISTS _tokens)
    if(_f MATCHES "^-m")
      string(APPEND _lines "flag=${_f}\n")
    endif()
  endforeach()
  if(native)
    string(APPEND _lines "flag=-march=native\n")
  endif()
  if(sanitize)
    string(APPEND _lines "flag=-fsanitize=${sanitize}\n")
  endif()
  set(${out} "${_lines}" PARENT_SCOPE)
endfunction()
