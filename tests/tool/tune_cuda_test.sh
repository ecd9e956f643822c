#!/usr/bin/env bash
# `tri tune --target cuda` on a GPU: the command's own device buffers (tools/device_memory.cpp)
# under tri_tune's CUDA-event timing; a config that does not compile is reported, the others are
# timed, the winner is one of them and the progress names every config. Prints "skipped: no CUDA
# device" without a GPU (CTest reports it as skipped). Run by CTest (tests/gpu.cmake).
set -euo pipefail
tri=${TRI_TOOL:?TRI_TOOL is the tri binary}
src=${TRI_SOURCE_DIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$tri" run "$src/tests/run/vadd.tri" --kernel vadd --target cuda --const BLOCK=4 --arg x=zeros:f32[4] \
     --arg y=zeros:f32[4] --arg out=zeros:f32[4] --arg n=4 >"$tmp/probe" 2>&1; then
  if grep -qi "no CUDA\|driver" "$tmp/probe"; then
    echo "skipped: no CUDA device ($(head -1 "$tmp/probe"))"
    exit 0
  fi
  cat "$tmp/probe"; echo "FAIL: a one-program cuda run failed"; exit 1
fi
rc=0
"$tri" tune "$src/tests/run/vadd.tri" --kernel vadd --target cuda --values BLOCK=256,1024 --config BLOCK=100 \
  --arg x=rand:f32[1000000] --arg y=iota:f32[1000000] --arg out=zeros:f32[1000000] --arg n=1000000 \
  --grid 1000000/BLOCK --cache-dir "$tmp/cache" --retune >"$tmp/out" 2>"$tmp/err" || rc=$?
cat "$tmp/out" "$tmp/err"
[[ $rc -eq 0 ]] || { echo "FAIL: exit status $rc"; exit 1; }
grep -q '^@vadd on cuda (benchmark' "$tmp/out" || { echo "FAIL: no benchmark header"; exit 1; }
grep -qE '^winner: config [12] \(BLOCK=(256|1024),warps=4,stages=0\)' "$tmp/out" || { echo "FAIL: winner"; exit 1; }
[[ $(grep -c '^  benchmarked ' "$tmp/err") -eq 3 ]] || { echo "FAIL: progress lines"; exit 1; }
echo "tri tune --target cuda: passed"
