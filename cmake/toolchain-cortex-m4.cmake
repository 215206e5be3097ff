# CMake toolchain file: a bare-metal Cortex-M4F (Arm's single-precision FPU, the Armv7E-M DSP
# instructions) with Debian's arm-none-eabi-gcc and newlib (packages gcc-arm-none-eabi,
# libnewlib-arm-none-eabi, libstdc++-arm-none-eabi-newlib).
#
#   cmake -S firmware -B build-m4 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-cortex-m4.cmake ...
#
# Flags: -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 everywhere; the rest is
# cmake/toolchain-cortex-m.cmake's (C++ without exceptions and RTTI, sections collected by the
# linker, newlib-nano, no C runtime start files).
set(SF_CORTEX_M_FLAGS "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
include("${CMAKE_CURRENT_LIST_DIR}/toolchain-cortex-m.cmake")
