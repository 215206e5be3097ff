# CMake toolchain file: a bare-metal Cortex-M7 (Armv7E-M: the DSP instructions; its FPv5 FPU used
# in single precision) with Debian's arm-none-eabi-gcc and newlib (packages gcc-arm-none-eabi,
# libnewlib-arm-none-eabi, libstdc++-arm-none-eabi-newlib). firmware/ uses it for SF_BOARD
# mps2-an500 (docs/firmware.md):
#
#   cmake -S firmware -B build-m7 -DSF_BOARD=mps2-an500 ...   (or -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-cortex-m7.cmake)
#
# Flags: -mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16 everywhere. The model is all
# single precision; compiled for the single-precision FPU, a stray double would be a soft-float
# helper call, which the firmware test rejects (the double-precision unit of a part that has one,
# such as an STM32H7, stays unused). The rest as cmake/toolchain-cortex-m4.cmake: C++ without
# exceptions and RTTI, -ffunction-sections -fdata-sections with --gc-sections, newlib-nano, no
# C runtime start files.
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

set(SF_CORTEX_M7_FLAGS "-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16")
set(CMAKE_C_FLAGS_INIT "${SF_CORTEX_M7_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${SF_CORTEX_M7_FLAGS} -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti -fno-threadsafe-statics")
set(CMAKE_ASM_FLAGS_INIT "${SF_CORTEX_M7_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${SF_CORTEX_M7_FLAGS} --specs=nano.specs -nostartfiles -Wl,--gc-sections")

# Headers and libraries come from the cross toolchain; programs (the host's) from the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
