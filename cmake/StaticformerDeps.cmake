# Dependencies are Debian packages found with find_package. A missing one stops
# CMake with a message that names the package to install.
macro(sf_require_package pkg debian)
  find_package(${pkg} ${ARGN} QUIET)
  if(NOT ${pkg}_FOUND)
    message(FATAL_ERROR "staticformer needs ${pkg}. On Debian 12: sudo apt-get install ${debian}  "
                        "(or run tools/install-deps.sh)")
  endif()
endmacro()

# Boost.Hana (header-only) — the library itself needs it.
sf_require_package(Boost libboost-dev 1.74)
if(NOT TARGET Boost::headers)
  message(FATAL_ERROR "staticformer needs Boost headers (Boost.Hana). On Debian 12: sudo apt-get install libboost-dev")
endif()
if(NOT EXISTS "${Boost_INCLUDE_DIRS}/boost/hana.hpp" AND NOT EXISTS "/usr/include/boost/hana.hpp")
  message(FATAL_ERROR "staticformer needs Boost.Hana (boost/hana.hpp). On Debian 12: sudo apt-get install libboost-dev")
endif()

# nlohmann-json (header-only) — to compile staticformer::io (src/io/safetensors.cpp); not
# needed by a consumer of the installed package.
sf_require_package(nlohmann_json nlohmann-json3-dev)

if(STATICFORMER_BUILD_TESTS OR STATICFORMER_BUILD_EXAMPLES OR STATICFORMER_BUILD_BENCHMARKS)
  sf_require_package(fmt libfmt-dev)
endif()
if(STATICFORMER_BUILD_TESTS)
  sf_require_package(GTest libgtest-dev)
endif()
if(STATICFORMER_BUILD_BENCHMARKS)
  sf_require_package(benchmark libbenchmark-dev)
endif()
