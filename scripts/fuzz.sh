#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/CMakeLists.txt) if needed, seeds their corpora, and runs each
# target for SECONDS (default 60), all at once. Prints each target's executions; exits non-zero
# when a target finds a crash, a leak or a timeout, printing the saved input's path.
#
# usage: scripts/fuzz.sh [SECONDS]
# env:   TRI_FUZZ_BUILD_DIR  build dir (default: <source>/build-fuzz, ignored by git)
#        TRI_FUZZ_JOBS       make -j (default 2)
#        TRI_FUZZ_ARGS       extra libFuzzer flags for every target (e.g. "-jobs=4 -workers=4")
set -euo pipefail
secs=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TRI_FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${TRI_FUZZ_JOBS:-2}

mkdir -p "$build"
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$build" -DTRI_FUZZ=ON -DTRI_BUILD_TESTS=OFF \
    -DTRI_STATIC_LLVM=OFF -DCMAKE_BUILD_TYPE=Debug >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log"; exit 1; }
fi
cmake --build "$build" --target tri_fuzz -j "$jobs" >"$build/build.log" 2>&1 || { tail -50 "$build/build.log"; exit 1; }
"$root/fuzz/make_corpus.sh" "$build"

targets=()
for t in fuzz_text fuzz_binary fuzz_ttir fuzz_cache fuzz_package fuzz_tune; do
  [ -x "$build/fuzz/$t" ] && targets+=("$t")
done
[ ${#targets[@]} -gt 0 ] || { echo "fuzz.sh: no fuzz targets were built" >&2; exit 1; }

mkdir -p "$build/logs"
declare -A pids
for t in "${targets[@]}"; do
  kind=${t#fuzz_}
  dict=()
  [ "$kind" = text ] && dict=(-dict="$build/text.dict")
  mkdir -p "$build/artifacts/$t"
  (
    start=$(date +%s)
    rc=0
    # shellcheck disable=SC2086
    "$build/fuzz/$t" "$build/corpus/$kind" -max_total_time="$secs" -timeout=25 -print_final_stats=1 \
      -artifact_prefix="$build/artifacts/$t/" "${dict[@]}" ${TRI_FUZZ_ARGS:-} || rc=$?
    echo "tri-fuzz-seconds: $(($(date +%s) - start))"
    exit $rc
  ) >"$build/logs/$t.log" 2>&1 &
  pids[$t]=$!
done

status=0
for t in "${targets[@]}"; do
  rc=0
  wait "${pids[$t]}" || rc=$?
  execs=$(grep -h 'stat::number_of_executed_units' "$build/logs/$t.log" | awk '{s += $2} END {print s + 0}')
  cov=$(grep -o 'cov: [0-9]*' "$build/logs/$t.log" | tail -1 || true)
  ran=$(sed -n 's/^tri-fuzz-seconds: //p' "$build/logs/$t.log")
  echo "$t: $execs executions in ${ran}s ($cov), exit $rc, log $build/logs/$t.log"
  if [ "$rc" -ne 0 ]; then
    status=1
    grep -h -E 'ERROR: |==== tri fuzz|Test unit written to|SUMMARY' "$build/logs/$t.log" | head -20 >&2 || true
    tail -40 "$build/logs/$t.log" >&2
  fi
done
exit $status
