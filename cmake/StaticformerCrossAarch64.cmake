# Cross aarch64: the SIMD kernels (NEON backend) built with aarch64-linux-gnu-g++ and run
# under qemu-aarch64.
#
#   include(StaticformerCrossAarch64)
#   sf_add_cross_aarch64_test(<name> <source.cpp>)
#
# Compiles <source.cpp> (a self-contained program without GoogleTest, which is not
# installed for aarch64) with `aarch64-linux-gnu-g++ -std=c++20 -O2 -static` against the
# library's headers, as part of the normal build (target <name>_aarch64), and registers the
# CTest test <name> that runs it with qemu-aarch64. Nothing happens, apart from a status
# message, when the cross compiler or qemu is missing (Debian: g++-aarch64-linux-gnu,
# qemu-user), or when STATICFORMER_CROSS_AARCH64 is OFF.
include_guard(GLOBAL)

option(STATICFORMER_CROSS_AARCH64 "Build and run the kernel self-test for aarch64 (cross compiler + qemu)" ON)

function(sf_add_cross_aarch64_test name src)
  if(NOT STATICFORMER_CROSS_AARCH64)
    return()
  endif()
  find_program(SF_AARCH64_CXX NAMES aarch64-linux-gnu-g++ aarch64-linux-gnu-g++-12)
  find_program(SF_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static)
  if(NOT SF_AARCH64_CXX OR NOT SF_QEMU_AARCH64)
    message(STATUS "staticformer: cross aarch64 kernel test skipped (needs aarch64-linux-gnu-g++ and qemu-aarch64; "
                   "on Debian 12: sudo apt-get install g++-aarch64-linux-gnu qemu-user)")
    return()
  endif()
  message(STATUS "staticformer: cross aarch64 kernel test with ${SF_AARCH64_CXX} under ${SF_QEMU_AARCH64}")

  set(out ${CMAKE_CURRENT_BINARY_DIR}/${name}_aarch64)
  set(werror "")
  if(STATICFORMER_WERROR)
    set(werror -Werror)
  endif()
  # The program depends on the library's headers and on the test headers next to it.
  file(GLOB_RECURSE deps CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/staticformer/*.hpp)
  get_filename_component(src_dir ${src} DIRECTORY)
  file(GLOB test_headers CONFIGURE_DEPENDS ${src_dir}/*.hpp ${src_dir}/../*.hpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${SF_AARCH64_CXX} -std=c++20 -O2 -static -Wall -Wextra -Wpedantic ${werror}
            -I${PROJECT_SOURCE_DIR}/include ${src} -o ${out}
    DEPENDS ${src} ${deps} ${test_headers}
    COMMENT "Cross-compiling ${name} for aarch64"
    VERBATIM)
  add_custom_target(${name}_aarch64 ALL DEPENDS ${out})
  add_test(NAME ${name} COMMAND ${SF_QEMU_AARCH64} ${out})
  set_tests_properties(${name} PROPERTIES TIMEOUT 900)
endfunction()
