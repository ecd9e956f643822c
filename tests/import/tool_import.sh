#!/usr/bin/env bash
# `tri import` (tools/cmd_import.cpp) and the other `tri` commands on TTIR input: conversion to
# canonical text and binary, the census of ops read and made, located errors, usage errors.
# Run from the source root with TRI_TOOL set (CTest does both).
set -euo pipefail
tri=${TRI_TOOL:?TRI_TOOL is not set}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Conversion: the census names TTIR ops and the Tri ops made for them.
"$tri" import tests/import/ttir/vadd.ttir -o "$tmp/vadd.tri" >"$tmp/out" 2>"$tmp/err" || fail "import exited $?: $(cat "$tmp/err")"
grep -q '^tests/import/ttir/vadd.ttir -> .*/vadd.tri: 1 kernel(s), 0 device function(s)$' "$tmp/out" || fail "header: $(cat "$tmp/out")"
grep -q 'TTIR ops read (19): .*tt.load 2' "$tmp/out" || fail "TTIR census: $(cat "$tmp/out")"
grep -q 'Tri ops made (19): .*load 2' "$tmp/out" || fail "Tri census: $(cat "$tmp/out")"
# The output is canonical Tri text that checks and describes like any other.
"$tri" check "$tmp/vadd.tri" || fail "the converted file does not check"
"$tri" fmt --check "$tmp/vadd.tri" || fail "the converted file is not canonical"
# (the signature is wrapped at 100 columns: docs/ir.md, "Layout")
[[ "$(head -2 "$tmp/vadd.tri" | tr '\n' ' ' | tr -s ' ')" == \
   'kernel @add_kernel(%x_ptr: ptr<f32> {align=16}, %y_ptr: ptr<f32> {align=16}, %out_ptr: ptr<f32> {align=16}, %n: i32) { ' ]] ||
  fail "kernel header: $(head -2 "$tmp/vadd.tri")"
# Binary output, and the other commands reading TTIR directly.
"$tri" import tests/import/ttir/control.ttir --binary -o "$tmp/control.trib" >/dev/null
"$tri" convert "$tmp/control.trib" -o "$tmp/from_binary.tri"
"$tri" import tests/import/ttir/control.ttir -o "$tmp/control.tri" >/dev/null
cmp -s "$tmp/from_binary.tri" "$tmp/control.tri" || fail "binary and text imports differ"
"$tri" info tests/import/ttir/control.ttir >"$tmp/info"
grep -q '1 kernel, 2 device functions' "$tmp/info" || fail "info: $(cat "$tmp/info")"
"$tri" check tests/import/ttir/*.ttir || fail "tri check on the fixtures"
# To stdout: the text on stdout, the census on stderr.
"$tri" import tests/import/ttir/vadd.ttir >"$tmp/stdout.tri" 2>"$tmp/census"
cmp -s "$tmp/stdout.tri" "$tmp/vadd.tri" || fail "stdout output differs from -o output"
grep -q 'TTIR ops read' "$tmp/census" || fail "census not on stderr"

# A located error, exit status 1.
sed 's/arith.addf %x_6/arith.bogus %x_6/' tests/import/ttir/vadd.ttir >"$tmp/bad.ttir"
rc=0
"$tri" import "$tmp/bad.ttir" -o "$tmp/bad.tri" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "bad input: exit $rc"
grep -q "bad.ttir:[0-9]*:5: error: op 'arith.bogus' is not supported by the TTIR importer .*(from tests/import/kernels.py:18:" \
  "$tmp/err" || fail "bad input message: $(cat "$tmp/err")"
[ ! -e "$tmp/bad.tri" ] || fail "an output file was written for bad input"

# Usage errors: exit status 2.
rc=0; "$tri" import >/dev/null 2>&1 || rc=$?; [ "$rc" = 2 ] || fail "no file: exit $rc"
rc=0; "$tri" import a.ttir b.ttir >/dev/null 2>&1 || rc=$?; [ "$rc" = 2 ] || fail "two files: exit $rc"
rc=0; "$tri" import --frob a.ttir >/dev/null 2>&1 || rc=$?; [ "$rc" = 2 ] || fail "unknown option: exit $rc"
"$tri" help import | grep -q 'usage: tri import' || fail "help import"
"$tri" --help | grep -q 'import FILE.ttir' || fail "tri --help lists import"
echo "tool_import: ok"
