#!/usr/bin/env bash
# Installs what is missing, builds and runs the test suite twice:
#   1. gcc    g++ -O2, warnings as errors: every test (compile-fail, install/find_package, examples,
#             benchmarks built, the command's engines compiled on first use, firmware, cross, PyTorch
#             under each BLAS, the instruction-set variants: label isa).
#   2. clang  clang -O1 -g1 with AddressSanitizer + UndefinedBehaviorSanitizer, warnings as errors:
#             what clang and the sanitizers add: clang's compile-fail messages and constant
#             evaluation, the fuzz harnesses, and every run-time test of the project's own programs,
#             sanitized. Left out, because they would repeat the gcc suite's work under other names:
#             the tests that compile engines on first use (label first_use: each is a sanitized
#             compilation of a whole model, minutes each; the engines' sources run sanitized through
#             the precompiled nano engines, the readers through the unit tests and the fuzzers), the
#             firmware and cross tests (their compilers are arm-none-eabi and aarch64 g++, not the
#             suite's), the install tests (packaging), the benchmarks and the instruction-set
#             variants of the tests (label isa, STATICFORMER_ISA_TESTS: built in the gcc suite).
# Every suite runs even when an earlier one fails. The last line is
#   N passed, M failed
# summed over the suites from ctest's results (a test whose program failed to build counts as
# failed); the exit status is non-zero if any test, build or configure step failed.
#
# Usage: tools/test.sh [--only gcc|clang]
# Environment: JOBS (parallel jobs, default nproc), SF_BUILD_ROOT (default build-ci).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash tools/install-deps.sh || { echo "tools/install-deps.sh failed"; exit 1; }

only=""
if [[ "${1:-}" == "--only" ]]; then
  only="${2:-}"
  [[ "$only" =~ ^(gcc|clang)$ ]] || { echo "usage: $0 [--only gcc|clang]"; exit 2; }
fi
jobs="${JOBS:-$(nproc)}"
build_root="${SF_BUILD_ROOT:-build-ci}"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
keep_going=(-k)  # Makefiles: build every target that can be built, so ctest reports the rest
[[ "${CMAKE_GENERATOR:-}" == Ninja* ]] && keep_going=(-k 0)

total_passed=0
total_failed=0
total_skipped=0
status=0
timings=()

run_suite() {  # name compiler build-type ctest-args -- extra-cmake-args...
  local name=$1 cxx=$2 type=$3 ctest_args=$4; shift 5
  local dir="$build_root/$name" t0=$SECONDS t1
  mkdir -p "$build_root"
  echo "=== [$name] configure + build ($cxx, $type) in $dir"
  if ! cmake -S . -B "$dir" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE="$type" \
       -DSTATICFORMER_WERROR=ON "${launcher[@]}" "$@" >"$dir.configure.log" 2>&1; then
    cat "$dir.configure.log"
    echo "=== [$name] configure FAILED"
    status=1
    timings+=("$name: configure failed")
    return
  fi
  if ! cmake --build "$dir" -j"$jobs" -- "${keep_going[@]}"; then
    echo "=== [$name] build FAILED (continuing: tests whose programs are missing will fail)"
    status=1
  fi
  t1=$SECONDS
  echo "=== [$name] built in $((t1 - t0)) s; running tests"
  local log="$dir/ctest.log"
  # shellcheck disable=SC2086  # ctest_args is a list of words
  (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 900 $ctest_args) 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local summary failed=0 total=0 skipped=0
  summary=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
  if [[ -n "$summary" ]]; then
    failed=$(sed -E 's/.* ([0-9]+) tests? failed out of.*/\1/' <<<"$summary")
    total=$(sed -E 's/.*failed out of ([0-9]+).*/\1/' <<<"$summary")
  else
    echo "=== [$name] ctest reported no results"
    status=1
  fi
  # Skipped tests are counted as passed by ctest; count them apart.
  skipped=$(grep -cE '^\s+[0-9]+ - .*\(Skipped\)$' "$log" || true)
  local passed=$((total - failed - skipped))
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  total_skipped=$((total_skipped + skipped))
  ((rc != 0 || failed != 0)) && status=1
  timings+=("$name: build $((t1 - t0)) s, tests $((SECONDS - t1)) s; $passed passed, $failed failed, $skipped skipped")
  echo "=== [$name] done in $((SECONDS - t0)) s"
}

# The clang suite is compiled with -O1 -g1 (line tables for the sanitizers' stack traces): about
# half the compile time of -O2 -g. Its PyTorch tests run once (the gcc suite runs them under each BLAS).
[[ -z "$only" || "$only" == gcc ]] && run_suite gcc g++ Release "" --
[[ -z "$only" || "$only" == clang ]] && run_suite clang clang++ RelWithDebInfo \
   "-LE ^(first_use|firmware)$ -E ^install_and_find_package$" -- \
   -DSTATICFORMER_SANITIZE=address,undefined -DSTATICFORMER_BUILD_BENCHMARKS=OFF -DSTATICFORMER_TEST_EVERY_BLAS=OFF \
   -DSTATICFORMER_FIRMWARE_TESTS=OFF -DSTATICFORMER_CROSS_AARCH64=OFF -DSTATICFORMER_CROSS_CORTEX_M4=OFF \
   -DSTATICFORMER_ISA_TESTS=OFF \
   "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"

echo "=== summary"
for t in "${timings[@]}"; do echo "  $t"; done
((total_skipped > 0)) && echo "$total_skipped skipped"
echo "$total_passed passed, $total_failed failed"
exit $status
