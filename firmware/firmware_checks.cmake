# What the firmware tests share (firmware/firmware_test.cmake, firmware/firmware_llama_test.cmake):
# running a program, and the checks of a firmware ELF.

include("${CMAKE_CURRENT_LIST_DIR}/../tools/test_helpers.cmake")  # run

# The checks of a firmware ELF (NM: arm-none-eabi-nm, SIZE: arm-none-eabi-size): no allocation
# function, no double-precision helper, and each of the constant symbols in ARGN (regular
# expressions of demangled names, such as sf_model::weights) lies in flash (below 0x20000000, where
# RAM starts). Sets in the caller
# elf_text, elf_data, elf_bss (arm-none-eabi-size's berkeley figures: text includes .rodata) and,
# per symbol of ARGN, elf_bytes_<i> (its size; i from 0).
function(check_firmware_elf name elf)
  run(syms 0 "${NM}" "${elf}")
  # No heap: none of the allocation functions is in the program.
  string(REGEX MATCHALL "[ \t](malloc|free|calloc|realloc|_malloc_r|_free_r|_calloc_r|_realloc_r|_sbrk|_sbrk_r|_Znwj|_Znaj|_ZdlPv|_ZdaPv|_ZdlPvj|_ZdaPvj|_ZnwjRKSt9nothrow_t)\n" heap "${syms}")
  if(heap)
    message(FATAL_ERROR "${name}: the firmware contains heap functions:${heap}")
  endif()
  # No double precision (the FPU is used in single precision: double would be soft-float).
  string(REGEX MATCHALL "[ \t](__aeabi_d[a-z0-9]*|__aeabi_[fil]2d|__aeabi_ul2d|__[a-z]+df[0-9]|__extendsfdf2|__truncdfsf2)\n" dbl "${syms}")
  if(dbl)
    message(FATAL_ERROR "${name}: the firmware contains double-precision helpers:${dbl}")
  endif()
  # The constants: in flash, not copied to RAM.
  run(wsym 0 "${NM}" -S -C "${elf}")
  set(i 0)
  foreach(sym IN LISTS ARGN)
    if(NOT wsym MATCHES "([0-9a-f]+) ([0-9a-f]+) [VRr] ${sym}\n")
      message(FATAL_ERROR "${name}: no constant symbol ${sym} in the ELF")
    endif()
    set(addr "${CMAKE_MATCH_1}")
    math(EXPR bytes "0x${CMAKE_MATCH_2}")
    string(SUBSTRING "${addr}" 0 1 first_digit)
    string(LENGTH "${addr}" len)
    if(NOT len EQUAL 8 OR NOT first_digit STREQUAL "0")
      message(FATAL_ERROR "${name}: ${sym} is at 0x${addr}, not in flash")
    endif()
    set(elf_bytes_${i} ${bytes} PARENT_SCOPE)
    math(EXPR i "${i} + 1")
  endforeach()
  # Sizes: flash = text + data, RAM = data + bss.
  run(sz 0 "${SIZE}" "${elf}")
  if(NOT sz MATCHES "\n *([0-9]+)[ \t]+([0-9]+)[ \t]+([0-9]+)")
    message(FATAL_ERROR "${name}: cannot read the sizes:\n${sz}")
  endif()
  set(elf_text ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(elf_data ${CMAKE_MATCH_2} PARENT_SCOPE)
  set(elf_bss ${CMAKE_MATCH_3} PARENT_SCOPE)
endfunction()

# A firmware built with -DSF_FIRMWARE_HEAP_PROBE=ON (a program that calls malloc) must fail to link:
# --wrap leaves __wrap_malloc undefined. Reads the caller's build_rc and build_log (build_firmware).
function(expect_heap_probe_refused)
  if(build_rc EQUAL 0)
    message(FATAL_ERROR "a firmware that calls malloc linked")
  endif()
  if(NOT build_log MATCHES "undefined reference to `__wrap_malloc'")
    message(FATAL_ERROR "heap probe: not the expected link error:\n${build_log}")
  endif()
endfunction()

# Writes the caller's `summary` to WORK/summary.txt and prints it.
function(write_summary)
  file(WRITE "${WORK}/summary.txt" "${summary}")
  message(STATUS "\n${summary}")
endfunction()
