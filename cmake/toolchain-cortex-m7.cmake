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
# such as an STM32H7, stays unused). The rest is cmake/toolchain-cortex-m.cmake's: C++ without
# exceptions and RTTI, -ffunction-sections -fdata-sections with --gc-sections, newlib-nano, no
# C runtime start files.
set(SF_CORTEX_M_FLAGS "-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16")
include("${CMAKE_CURRENT_LIST_DIR}/toolchain-cortex-m.cmake")
