#!/usr/bin/env bash
# `tri tune` on a terminal (issue 30, point 4): progress is one bar for the compiles and one for
# the benchmarks, redrawn in place with carriage returns and wiped at the end, with no per-config
# lines (those are for logs: tests/golden/cli/tune_progress_one_line_per_config). The command runs
# under util-linux's `script`, which gives it a pseudo-terminal. Run by CTest (tests/tool_run.cmake).
set -euo pipefail
tri=${TRI_TOOL:?TRI_TOOL is the tri binary}
src=${TRI_SOURCE_DIR:-.}
command -v script >/dev/null || { echo "FAIL: util-linux's script is not installed (Debian: bsdutils)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmd="'$tri' tune '$src/tests/run/vadd.tri' --kernel vadd --values BLOCK=64,128,256,512 --arg x=rand:f32[4096] \
--arg y=iota:f32[4096] --arg out=zeros:f32[4096] --arg n=4096 --grid 4096/BLOCK --repeat 2 \
--cache-dir '$tmp/cache' --retune >'$tmp/out'"
script -q -e -c "$cmd" /dev/null >"$tmp/tty"
fail() { echo "FAIL: $*"; od -c "$tmp/tty" | head -40; exit 1; }
tr '\r' '\n' <"$tmp/tty" >"$tmp/frames"
grep -qE '^  compile \[#{20}\] 4/4  benchmark \[#{20}\] 4/4 *$' "$tmp/frames" || fail "no full bars"
grep -qE '^  compile \[[#.]{20}\] [0-3]/4  benchmark \[\.{20}\] 0/4 *$' "$tmp/frames" || fail "no bar while compiling"
[[ $(tr -cd '\r' <"$tmp/tty" | wc -c) -ge 8 ]] || fail "not redrawn in place"
grep -q 'compiled \|benchmarked ' "$tmp/tty" && fail "per-config lines on a terminal"
python3 -c 'import re, sys; sys.exit(not re.search(rb"\r {40,}\r$", open(sys.argv[1], "rb").read()))' "$tmp/tty" ||
  fail "the bar is not wiped at the end"
grep -q '^winner: config [0-3] (BLOCK=' "$tmp/out" || fail "no table on stdout: $(cat "$tmp/out")"
echo "tri tune on a terminal: bars redrawn in place, then wiped"
