#!/usr/bin/env bash
# Installs what is missing, builds and runs the test suite in three builds:
#   1. gcc       g++ -O2, warnings as errors: every target (but the header check: clang's) and every
#                test (compile-fail,
#                install/find_package, examples, benchmarks built, the command's engines compiled on
#                first use, firmware, cross, PyTorch under each BLAS, the instruction-set variants).
#   2. clang     clang -O2, warnings as errors: what clang adds — every header compiled alone
#                (sf_header_selfcontained), the core without exceptions and RTTI, the compile-fail
#                messages, the two trainings inside the compiler (constant evaluation), the fuzz
#                harnesses (clang's libFuzzer with ASan + UBSan over the readers), and the programs
#                that instantiate the library's paths for users — the staticformer command with its
#                precompiled engines, staticformer-run, the examples — with their tests.
#   3. sanitize  g++ -O1 -g1, AddressSanitizer + UndefinedBehaviorSanitizer: what the sanitizers add
#                beyond the fuzzers (which run the readers under ASan + UBSan in suite 2): the
#                hostile-input suite through the programs (staticformer-run and examples/train:
#                bad files, 3 GB sparse files, /dev/zero, bad flags) and the demo's training runs
#                (training, checkpoints, resume, the float and int8 decoders of its sample), sanitized.
# A sanitized translation unit takes 3-4 times the CPU of an -O2 one (clang's UBSan over 10 times),
# so suites 2 and 3 build only their targets (SF_CLANG_TARGETS, SF_SANITIZE_TARGETS) and run the
# tests that use them; the rest of suite 1's tests would repeat its work under other names.
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

run_suite() {  # name compiler build-type ctest-args targets -- extra-cmake-args...  (targets "": all)
  local name=$1 cxx=$2 type=$3 ctest_args=$4 targets=$5; shift 6
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
  local target_args=() t
  if [[ -n "$targets" ]]; then  # those of the list this configuration has (e.g. no fuzz_* without libFuzzer)
    local have
    have=$(cmake --build "$dir" --target help 2>/dev/null | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p')
    for t in $targets; do
      if grep -qxF "$t" <<<"$have"; then target_args+=("$t"); else echo "=== [$name] no target $t here"; fi
    done
    target_args=(--target "${target_args[@]}")
  fi
  if ! cmake --build "$dir" -j"$jobs" "${target_args[@]}" -- "${keep_going[@]}"; then
    echo "=== [$name] build FAILED (continuing: tests whose programs are missing will fail)"
    status=1
  fi
  t1=$SECONDS
  echo "=== [$name] built in $((t1 - t0)) s; running tests"
  local log="$dir/ctest.log"
  # shellcheck disable=SC2086  # ctest_args is a list of words
  local ctest_words=()
  read -ra ctest_words <<<"$ctest_args"  # words, never globbed
  (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 900 "${ctest_words[@]}") 2>&1 | tee "$log"
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

# Suites 2 and 3: their targets, and the tests that use only those (ctest -R).
clang_targets="staticformer_io sf_header_selfcontained sf_core_freestanding test_constexpr_gpt2_step \
  staticformer_cli staticformer-run train hello memory quickstart trained_in_compiler test_cpu test_budget \
  fuzz_safetensors_params fuzz_checkpoint fuzz_tokenizer_bin fuzz_llama2c fuzz_gguf"
clang_tests='^(compile_fail_.*|constexpr_gpt2_step|core_no_exceptions_no_rtti|fuzz_.*|example_.*|tool_staticformer_run|bad_inputs|docs_links|test_cpu|cpu_check|test_budget)$'
sanitize_targets="staticformer_io staticformer-run train"
sanitize_tests='^(bad_inputs|example_train_(loss_falls|resume|budget))$'

[[ -z "$only" || "$only" == gcc ]] && run_suite gcc g++ Release "" "" -- -DSTATICFORMER_HEADER_CHECK=OFF
[[ -z "$only" || "$only" == clang ]] && run_suite clang clang++ Release "-R $clang_tests" "${SF_CLANG_TARGETS:-$clang_targets}" -- \
   -DSTATICFORMER_BUILD_BENCHMARKS=OFF -DSTATICFORMER_TEST_EVERY_BLAS=OFF -DSTATICFORMER_ISA_TESTS=OFF
# -O1 -g1: line tables for the sanitizers' stack traces, about half the compile time of -O2 -g.
[[ -z "$only" || "$only" == sanitize ]] && run_suite sanitize g++ RelWithDebInfo "-R $sanitize_tests" \
   "${SF_SANITIZE_TARGETS:-$sanitize_targets}" -- \
   -DSTATICFORMER_SANITIZE=address,undefined -DSTATICFORMER_BUILD_BENCHMARKS=OFF -DSTATICFORMER_TEST_EVERY_BLAS=OFF \
   -DSTATICFORMER_ISA_TESTS=OFF -DSTATICFORMER_FIRMWARE_TESTS=OFF "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"

echo "=== summary"
for t in "${timings[@]}"; do echo "  $t"; done
((total_skipped > 0)) && echo "$total_skipped skipped"
echo "$total_passed passed, $total_failed failed"
exit $status
