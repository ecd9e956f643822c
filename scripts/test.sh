#!/usr/bin/env bash
# The test command (README.md, .ci/run): installs the dependencies, builds Tri in its shipped form
# (Release, LLVM linked statically into libtri.so) in build/, runs the whole CTest suite, then
# the fuzzers for a short while when scripts/fuzz.sh is there.
#
#   bash scripts/test.sh              the above
#   bash scripts/test.sh --sanitize   the CTest suite in an ASan+UBSan Debug build (build-asan/)
#                                     instead, then the concurrency tests in a ThreadSanitizer build
#                                     (build-tsan/); the fuzzers are skipped (they are ASan builds)
#
# Environment: JOBS (default: nproc) parallel jobs; TRI_FUZZ_SECONDS (default 30) how long each
# fuzz target runs (scripts/fuzz.sh SECONDS), 0 skips fuzzing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

sanitize=0
for arg in "$@"; do
  case $arg in
    --sanitize) sanitize=1 ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *) echo "test.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

jobs=${JOBS:-$(nproc)}
start=$SECONDS
step() { printf '\n== %s (%ds)\n' "$*" $((SECONDS - start)); }

step "dependencies"
bash scripts/install-deps.sh

if [[ $sanitize -eq 1 ]]; then
  build=build-asan
  config=(-DCMAKE_BUILD_TYPE=Debug -DTRI_SANITIZE=ON)
else
  build=build
  config=(-DCMAKE_BUILD_TYPE=Release -DTRI_STATIC_LLVM=ON -DTRI_SANITIZE=OFF)
fi

step "configure $build"
cmake -S . -B "$build" "${config[@]}"
step "build $build with $jobs jobs"
cmake --build "$build" -j "$jobs"
step "ctest in $build"
(cd "$build" && ctest --output-on-failure -j "$jobs")

if [[ $sanitize -eq 1 ]]; then
  # Threads sharing contexts, modules, the compile cache, the thread pool, re-entrant callbacks
  # and cancels, under ThreadSanitizer (a report fails the test). Only these tests are built.
  tsan_tests=(capi_test_concurrency capi_test_harden base_test_thread_pool)
  step "configure build-tsan"
  cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRI_SANITIZE_THREAD=ON
  step "build the concurrency tests in build-tsan with $jobs jobs"
  cmake --build build-tsan -j "$jobs" --target "${tsan_tests[@]}"
  step "ctest (ThreadSanitizer) in build-tsan"
  (cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    ctest --output-on-failure -R '^(capi/test_concurrency|capi/test_harden|base/test_thread_pool)$')
fi

fuzz_seconds=${TRI_FUZZ_SECONDS:-30}
if [[ $sanitize -eq 0 && -f scripts/fuzz.sh && $fuzz_seconds -gt 0 ]]; then
  # fuzz.sh builds the targets (clang, build-fuzz/) and runs them side by side for that long.
  step "fuzzers, $fuzz_seconds s each"
  TRI_FUZZ_JOBS=$jobs bash scripts/fuzz.sh "$fuzz_seconds"
fi

step "all tests passed"
