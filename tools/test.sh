#!/usr/bin/env bash
# Installs what is missing, builds and runs the whole test suite three times:
#   1. g++   -O2, warnings as errors   (plus compile-fail, install/find_package, cross NEON)
#   2. clang -O2, warnings as errors
#   3. g++   AddressSanitizer + UndefinedBehaviorSanitizer
# Usage: tools/test.sh [--only gcc|clang|sanitize]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash tools/install-deps.sh
only="${2:-}"; [[ "${1:-}" == "--only" ]] || only=""
jobs=$(nproc)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

run_suite() {  # name compiler build-type extra-cmake-args...
  local name=$1 cxx=$2 type=$3; shift 3
  echo "=== [$name] configure + build ($cxx, $type)"
  local t0=$SECONDS
  cmake -S . -B "build-ci/$name" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE="$type" \
        -DSTATICFORMER_WERROR=ON "${launcher[@]}" "$@" >/dev/null
  cmake --build "build-ci/$name" -j"$jobs"
  echo "=== [$name] built in $((SECONDS - t0)) s; running tests"
  (cd "build-ci/$name" && ctest --output-on-failure -j"$jobs" --timeout 900)
  echo "=== [$name] done in $((SECONDS - t0)) s"
}

[[ -z "$only" || "$only" == gcc ]] && run_suite gcc g++ Release
[[ -z "$only" || "$only" == clang ]] && run_suite clang clang++ Release -DSTATICFORMER_BUILD_BENCHMARKS=OFF
[[ -z "$only" || "$only" == sanitize ]] && run_suite sanitize g++ RelWithDebInfo -DSTATICFORMER_SANITIZE=address,undefined \
   -DSTATICFORMER_BUILD_BENCHMARKS=OFF
echo "all suites passed"
