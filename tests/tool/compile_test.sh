#!/usr/bin/env bash
# `tri compile` without a GPU: PTX, launch descriptor and LLVM IR for a named architecture,
# TRI_DUMP writing the stages, and the usage errors. Run by CTest (tests/gpu.cmake).
set -euo pipefail
tri=${TRI_TOOL:?TRI_TOOL is the tri binary}
src=${TRI_SOURCE_DIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$tri" compile "$src/examples/softmax.tri" --target sm_90 --const BLOCK=256 --num-warps 2 \
  -o "$tmp/k.ptx" --meta "$tmp/k.json" --llvm "$tmp/k.ll"
grep -q '^\.target sm_90' "$tmp/k.ptx" || fail "no .target sm_90 in the PTX"
grep -q '\.entry softmax' "$tmp/k.ptx" || fail "no .entry softmax in the PTX"
grep -q '"schema": 1' "$tmp/k.json" || fail "no schema in the descriptor"
grep -q '"block": \[64, 1, 1\]' "$tmp/k.json" || fail "2 warps should be 64 threads: $(cat "$tmp/k.json")"
grep -q 'nvptx64-nvidia-cuda' "$tmp/k.ll" || fail "the LLVM IR is not for NVPTX"
"$tri" compile "$src/examples/vector_add.tri" --target sm_80 > "$tmp/stdout.ptx"
grep -q '^\.target sm_80' "$tmp/stdout.ptx" || fail "PTX to stdout"

(cd "$tmp" && TRI_DUMP=ir,ptx TRI_DUMP_DIR="$tmp/dump" "$tri" compile "$src/examples/gelu.tri" --target sm_90 -o /dev/null)
ls "$tmp"/dump/gelu.cuda.*.tri >/dev/null || fail "TRI_DUMP wrote no IR"
ls "$tmp"/dump/gelu.cuda.*.ptx >/dev/null || fail "TRI_DUMP wrote no PTX"
if ls "$tmp"/dump/*.ll >/dev/null 2>&1; then fail "TRI_DUMP wrote a stage it was not asked for"; fi

if "$tri" compile "$src/examples/softmax.tri" --target sm_12 -o /dev/null 2>"$tmp/err"; then fail "sm_12 accepted"; fi
grep -q "unknown GPU architecture 'sm_12'" "$tmp/err" || fail "message for a bad arch: $(cat "$tmp/err")"
rc=0; "$tri" compile 2>/dev/null || rc=$?
[[ $rc -eq 2 ]] || fail "no FILE should be a usage error (2), got $rc"
echo "tri compile: 9 checks passed"
