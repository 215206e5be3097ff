# Tests that run /usr/bin/python3 with PyTorch (CTest label pytorch), registered through
#
#   sf_add_pytorch_test(NAME name COMMAND command... [TIMEOUT s] [ENVIRONMENT var=value...])
#
# They are skipped (one message) when /usr/bin/python3 has no torch and numpy.
#
# Under every BLAS. Debian's python3-torch calls libblas.so.3, which Debian's alternatives system
# points at the reference BLAS (package libblas3) or at OpenBLAS as soon as libopenblas0-serial or
# -pthread is installed; the float64 results of the two differ in their last bits. So that no test
# depends on which one a machine has, with STATICFORMER_TEST_EVERY_BLAS (default ON) every such
# test is registered once per BLAS installed here, named name@reference, name@openblas-serial,
# name@openblas-pthread, each with LD_LIBRARY_PATH set to that BLAS's directory (the dynamic linker
# then resolves libblas.so.3 there first). Off (or no BLAS directory found): one test, the
# system's choice. tools/test.sh turns it off in its clang and sanitizer suites (the same Python
# code; the gcc suite covers every BLAS once).
option(STATICFORMER_TEST_EVERY_BLAS "Run the PyTorch tests once under each BLAS installed" ON)

execute_process(COMMAND /usr/bin/python3 -c "import torch, numpy" RESULT_VARIABLE _sf_no_torch
                OUTPUT_QUIET ERROR_QUIET)
if(_sf_no_torch EQUAL 0)
  set(SF_HAVE_TORCH ON)
else()
  set(SF_HAVE_TORCH OFF)
  message(STATUS "staticformer: /usr/bin/python3 has no torch and numpy: the PyTorch tests are skipped "
                 "(apt-get install python3-torch)")
endif()

set(SF_BLAS_VARIANTS "")  # label;dir;label;dir...
if(SF_HAVE_TORCH AND STATICFORMER_TEST_EVERY_BLAS AND CMAKE_LIBRARY_ARCHITECTURE)
  # Debian's directories of the libblas.so.3 alternatives, for this architecture
  foreach(_label reference openblas-serial openblas-pthread)
    set(_dir /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/${_label})
    if(_label STREQUAL "reference")
      set(_dir /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/blas)
    endif()
    if(EXISTS ${_dir}/libblas.so.3)
      list(APPEND SF_BLAS_VARIANTS ${_label} ${_dir})
    endif()
  endforeach()
  message(STATUS "staticformer: PyTorch tests under each BLAS: ${SF_BLAS_VARIANTS}")
endif()

function(sf_add_pytorch_test)
  cmake_parse_arguments(PARSE_ARGV 0 A "" "NAME;TIMEOUT" "COMMAND;ENVIRONMENT")
  if(NOT SF_HAVE_TORCH)
    return()
  endif()
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 300)
  endif()
  set(_env PYTHONDONTWRITEBYTECODE=1 ${A_ENVIRONMENT})
  set(_variants ${SF_BLAS_VARIANTS})
  if(NOT _variants)
    add_test(NAME ${A_NAME} COMMAND ${A_COMMAND})
    set_tests_properties(${A_NAME} PROPERTIES LABELS pytorch TIMEOUT ${A_TIMEOUT} ENVIRONMENT "${_env}")
    return()
  endif()
  while(_variants)
    list(POP_FRONT _variants _label _dir)
    add_test(NAME ${A_NAME}@${_label} COMMAND ${A_COMMAND})
    set_tests_properties(${A_NAME}@${_label} PROPERTIES LABELS pytorch TIMEOUT ${A_TIMEOUT}
                         ENVIRONMENT "${_env};LD_LIBRARY_PATH=${_dir}")
  endwhile()
endfunction()
