# tool_engine_flags: staticformer_engine_flags (cmake/engine_flags.cmake), the flags of the
# executables `staticformer` compiles on first use, on fixed inputs: a -march=x86-64-v3 build's
# instruction-set flags are carried, other flags are not, -march=native comes last.
#   cmake -DROOT=<source dir> -P test/engine_flags_test.cmake
include(${ROOT}/cmake/engine_flags.cmake)
set(_base "flag=-std=c++20\nflag=-O2\nflag=-DNDEBUG\nflag=-ffp-contract=off\n")
function(expect name got want)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${name}:\n--- got\n${got}--- want\n${want}")
  endif()
  message(STATUS "${name}: ok")
endfunction()
staticformer_engine_flags(f "" OFF "")
expect("no CMAKE_CXX_FLAGS" "${f}" "${_base}")
staticformer_engine_flags(f "-O3 -g -march=x86-64-v3 -Wall  -mtune=znver3 -DFOO=1 -mno-avx512f" OFF "")
expect("-march=x86-64-v3 -mtune=znver3" "${f}"
       "${_base}flag=-march=x86-64-v3\nflag=-mtune=znver3\nflag=-mno-avx512f\n")
staticformer_engine_flags(f "-march=x86-64-v3" ON "address,undefined")
expect("with STATICFORMER_NATIVE and a sanitizer" "${f}"
       "${_base}flag=-march=x86-64-v3\nflag=-march=native\nflag=-fsanitize=address,undefined\n")
set(CMAKE_CXX_COMPILER_ID GNU)  # g++: the element-wise loops vectorized with an overlap check
staticformer_engine_flags(f "-march=x86-64-v3" OFF "")
expect("g++" "${f}" "${_base}flag.cxx=-fvect-cost-model=dynamic\nflag=-march=x86-64-v3\n")
set(CMAKE_CXX_COMPILER_ID Clang)
staticformer_engine_flags(f "-march=x86-64-v3" OFF "")
expect("clang++" "${f}" "${_base}flag=-march=x86-64-v3\n")
