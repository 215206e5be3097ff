#!/usr/bin/env bash
# Installs what is missing, builds and runs the whole test suite three times:
#   1. gcc       g++   -O2, warnings as errors   (plus compile-fail, install/find_package, examples)
#   2. clang     clang -O2, warnings as errors   (the same tests, benchmarks not built)
#   3. sanitize  g++   AddressSanitizer + UndefinedBehaviorSanitizer (run-time tests only)
# Every suite runs even when an earlier one fails. The last line is
#   N passed, M failed
# summed over the suites from ctest's results (a test whose program failed to build counts as
# failed); the exit status is non-zero if any test, build or configure step failed.
#
# Usage: tools/test.sh [--only gcc|clang|sanitize]
# Environment: JOBS (parallel jobs, default nproc), SF_BUILD_ROOT (default build-ci).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash tools/install-deps.sh || { echo "tools/install-deps.sh failed"; exit 1; }

only=""
if [[ "${1:-}" == "--only" ]]; then
  only="${2:-}"
  [[ "$only" =~ ^(gcc|clang|sanitize)$ ]] || { echo "usage: $0 [--only gcc|clang|sanitize]"; exit 2; }
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

# The compile-fail suite and the install test check compilers and packaging, not run-time
# behaviour, so the sanitizer build skips them. It is compiled with -O1 -g1 (line tables for the
# sanitizers' stack traces): about half the compile time of -O2 -g, which made it the slowest suite.
[[ -z "$only" || "$only" == gcc ]] && run_suite gcc g++ Release "" --
# The PyTorch tests run once per installed BLAS in the gcc suite only (the same Python code).
[[ -z "$only" || "$only" == clang ]] && run_suite clang clang++ Release "" -- -DSTATICFORMER_BUILD_BENCHMARKS=OFF \
   -DSTATICFORMER_TEST_EVERY_BLAS=OFF
[[ -z "$only" || "$only" == sanitize ]] && run_suite sanitize g++ RelWithDebInfo \
   "-LE compile_fail -E ^(install_and_find_package|tool_staticformer_install)$" -- \
   -DSTATICFORMER_SANITIZE=address,undefined -DSTATICFORMER_BUILD_BENCHMARKS=OFF -DSTATICFORMER_TEST_EVERY_BLAS=OFF \
   "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"

echo "=== summary"
for t in "${timings[@]}"; do echo "  $t"; done
((total_skipped > 0)) && echo "$total_skipped skipped"
echo "$total_passed passed, $total_failed failed"
exit $status
