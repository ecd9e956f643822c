#!/usr/bin/env bash
# Golden tests of the `tri` command's output: tests/golden/cli/NAME.cmd holds one shell command
# line (`tri ...`, run from the source tree with the built tri first on PATH; @TMP@ is a fresh
# temporary folder), NAME.out what it prints (stdout and stderr, in order) and, last, its exit
# status as "exit N". What changes from run to run or machine to machine is normalized before
# comparing: times ("1.234 ms", "5.6 us", "12 s"), cache keys (8, 16 or 32 hex digits), dates,
# sizes ("12 KiB"), the host CPU's name and feature count, LLVM's minor version, the temporary
# folder, and the width of the spaces that align columns.
# With TRI_UPDATE_GOLDEN=1 the .out files are rewritten (review the diff).
#
# usage: cli_golden.sh NAME...   (TRI_TOOL: the tri binary; TRI_SOURCE_DIR: the source tree)
set -euo pipefail
tri=${TRI_TOOL:?TRI_TOOL is the tri binary}
src=${TRI_SOURCE_DIR:?TRI_SOURCE_DIR is the source tree}
dir=$src/tests/golden/cli
failed=0
for name in "$@"; do
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/tri-cli.XXXXXX")
  line=$(<"$dir/$name.cmd")
  line=${line//@TMP@/$tmp}
  rc=0
  got=$(cd "$src" && PATH="$(dirname "$tri"):$PATH" TRI_CACHE_DIR="$tmp/cache" COLUMNS=100 \
        bash -c "$line" 2>&1) || rc=$?
  got=$(printf '%s\nexit %d\n' "$got" "$rc" |
        sed -E -e "s#$tmp#@TMP@#g" \
               -e 's/[0-9]+(\.[0-9]+)? (ms|us|s)\b/N \2/g' \
               -e 's/\b[0-9a-f]{32}\b/KEY32/g; s/\b[0-9a-f]{16}\b/KEY16/g; s/\b[0-9a-f]{8}\b/KEY8/g' \
               -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}(:[0-9]{2})?/DATE/g' \
               -e 's/\b[0-9]+(\.[0-9]+)? (B|KiB|MiB|GiB)\b/SIZE/g; s/cpu [A-Za-z0-9_.-]+/cpu CPU/g' \
               -e 's/[0-9]+ features/N features/g; s/llvm 19(\.[0-9]+)*/llvm 19/g; s/   +/  /g')
  rm -rf "$tmp"
  if [[ ${TRI_UPDATE_GOLDEN:-} == 1 ]]; then
    printf '%s\n' "$got" >"$dir/$name.out"
    echo "updated $name.out"
  elif ! diff -u "$dir/$name.out" <(printf '%s\n' "$got") >"${TMPDIR:-/tmp}/tri-cli-diff.$$"; then
    echo "FAIL $name: the output differs from tests/golden/cli/$name.out (TRI_UPDATE_GOLDEN=1 rewrites it):"
    cat "${TMPDIR:-/tmp}/tri-cli-diff.$$"
    failed=1
  else
    echo "PASS $name"
  fi
  rm -f "${TMPDIR:-/tmp}/tri-cli-diff.$$"
done
exit $failed
