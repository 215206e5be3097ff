# What the Cortex-M toolchain files share (cmake/toolchain-cortex-m4.cmake, toolchain-cortex-m7.cmake):
# Debian's arm-none-eabi-gcc and newlib, bare metal. The including file sets SF_CORTEX_M_FLAGS (the
# core and its FPU: -mcpu=... -mthumb -mfloat-abi=hard -mfpu=...), used everywhere; then C++ without
# exceptions and RTTI; -ffunction-sections -fdata-sections so that the linker (--gc-sections)
# keeps only what is reachable; newlib-nano (--specs=nano.specs) for memcpy, memset and sqrtf;
# no C runtime start files (the program brings its own vector table and reset handler).
if(NOT SF_CORTEX_M_FLAGS)
  message(FATAL_ERROR "cmake/toolchain-cortex-m.cmake: include it from a toolchain file that sets SF_CORTEX_M_FLAGS")
endif()
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(SF_ARM_PREFIX arm-none-eabi- CACHE STRING "prefix of the cross tools (arm-none-eabi-)")
set(CMAKE_C_COMPILER ${SF_ARM_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${SF_ARM_PREFIX}g++)
set(CMAKE_ASM_COMPILER ${SF_ARM_PREFIX}gcc)
set(CMAKE_OBJCOPY ${SF_ARM_PREFIX}objcopy CACHE FILEPATH "")
set(CMAKE_SIZE ${SF_ARM_PREFIX}size CACHE FILEPATH "")
set(CMAKE_NM ${SF_ARM_PREFIX}nm CACHE FILEPATH "")

# Compiler checks link nothing (there is no startup code yet when CMake tests the compiler).
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_C_FLAGS_INIT "${SF_CORTEX_M_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${SF_CORTEX_M_FLAGS} -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti -fno-threadsafe-statics")
set(CMAKE_ASM_FLAGS_INIT "${SF_CORTEX_M_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${SF_CORTEX_M_FLAGS} --specs=nano.specs -nostartfiles -Wl,--gc-sections")

# Headers and libraries come from the cross toolchain; programs (the host's) from the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
