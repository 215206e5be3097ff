# Cross Cortex-M4: the inference core compiled for a bare-metal Arm target.
#
#   include(StaticformerCrossCortexM4)
#   sf_add_cross_cortex_m4_test(<name> <source.cpp>)
#
# Compiles <source.cpp> with arm-none-eabi-g++ (-mcpu=cortex-m4 -mthumb -mfloat-abi=hard
# -mfpu=fpv4-sp-d16 -fno-exceptions -fno-rtti) into an object as part of the build, and registers
# the CTest test <name>, which fails if the object needs double-precision helpers, thread-local
# storage, the heap or exception support (cmake/check_bare_metal_symbols.cmake). Skipped, with a
# status message, when arm-none-eabi-g++ is missing (Debian: gcc-arm-none-eabi
# libstdc++-arm-none-eabi-newlib) or STATICFORMER_CROSS_CORTEX_M4 is OFF.
include_guard(GLOBAL)

option(STATICFORMER_CROSS_CORTEX_M4 "Compile the inference core for a Cortex-M4 and check its symbols" ON)

function(sf_add_cross_cortex_m4_test name src)
  if(NOT STATICFORMER_CROSS_CORTEX_M4)
    return()
  endif()
  find_program(SF_ARM_CXX NAMES arm-none-eabi-g++)
  find_program(SF_ARM_NM NAMES arm-none-eabi-nm)
  if(NOT SF_ARM_CXX OR NOT SF_ARM_NM)
    message(STATUS "staticformer: Cortex-M4 core test skipped (needs arm-none-eabi-g++; on Debian 12: "
                   "sudo apt-get install gcc-arm-none-eabi libstdc++-arm-none-eabi-newlib)")
    return()
  endif()
  message(STATUS "staticformer: Cortex-M4 core test with ${SF_ARM_CXX}")
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${name}.o)
  set(werror "")
  if(STATICFORMER_WERROR)
    set(werror -Werror)
  endif()
  file(GLOB_RECURSE deps CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/staticformer/*.hpp)
  # Boost.Hana is header-only and target-independent: its headers are taken from the host
  # (after the cross compiler's own system directories).
  get_target_property(hana_dirs Boost::headers INTERFACE_INCLUDE_DIRECTORIES)
  set(after "")
  foreach(d IN LISTS hana_dirs)
    list(APPEND after -idirafter ${d})
  endforeach()
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${SF_ARM_CXX} -std=gnu++20 -O2 -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16
            -fno-exceptions -fno-rtti -ffp-contract=off -Wall -Wextra ${werror}
            -I${PROJECT_SOURCE_DIR}/include ${after} -c ${src} -o ${out}
    DEPENDS ${src} ${deps}
    COMMENT "Cross-compiling ${name} for a Cortex-M4"
    VERBATIM)
  add_custom_target(${name}_cortex_m4 ALL DEPENDS ${out})
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -DNM=${SF_ARM_NM} -DOBJ=${out}
                   -P ${PROJECT_SOURCE_DIR}/cmake/check_bare_metal_symbols.cmake)
endfunction()
