#!/usr/bin/env bash
# Tests of the `tri` command (tools/tri.cpp), registered by tests/tool.cmake. Each mode is one
# CTest test; TRI_TOOL is the tool's path.
#
# usage: tool_test.sh example FILE   check, fmt, convert and info on one good IR file
#        tool_test.sh errors         bad files give exit 1 with the library's located message
#        tool_test.sh usage          help, version, usage errors (exit 2)
#        tool_test.sh stdin          '-' reads standard input
set -uo pipefail

tri=${TRI_TOOL:?TRI_TOOL must name the tri executable}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=$here/data
work=$(mktemp -d "${TMPDIR:-/tmp}/tri-tool.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# run EXPECTED_STATUS CMD...: runs CMD with stdout/stderr in $work/out, $work/err.
run() {
  local want=$1
  shift
  "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [[ $got -ne $want ]]; then
    fail "'$*' exited $got, expected $want; stderr:"
    sed 's/^/    /' "$work/err" >&2
    return 1
  fi
  return 0
}

# The first stderr line must be "SOURCE:LINE:COL: error: ..." (the library's message).
expect_located() {
  local source=$1
  if ! head -n1 "$work/err" | grep -Eq "^$(printf '%s' "$source" | sed 's/[.[\*^$/]/\\&/g'):[0-9]+:[0-9]+: error: "; then
    fail "expected a located error for $source, got:"
    sed 's/^/    /' "$work/err" >&2
  fi
}

mode_example() {
  local f=${1:?file}
  run 0 "$tri" check "$f" && [[ -s $work/err ]] && fail "check $f printed on stderr: $(cat "$work/err")"
  run 0 "$tri" fmt "$f" -o "$work/canon.tri" || return
  # Canonical text is a fixed point of fmt and passes --check.
  run 0 "$tri" fmt "$work/canon.tri" -o "$work/canon2.tri" && cmp -s "$work/canon.tri" "$work/canon2.tri" \
    || fail "fmt is not idempotent on $f"
  run 0 "$tri" fmt --check "$work/canon.tri" || true
  run 0 "$tri" fmt "$f" && cmp -s "$work/out" "$work/canon.tri" || fail "fmt to stdout differs from fmt -o on $f"
  # fmt keeps the comments, '// run:' lines included, in order.
  diff <(grep -o '//.*' "$f" | sed 's/ *$//') <(grep -o '//.*' "$work/canon.tri") >/dev/null \
    || fail "fmt changed the comments of $f"
  # The binary carries no comments: its text is the canonical text without them.
  sed -E 's#^[[:space:]]*//.*$##; s#[[:space:]]+//.*$##' "$f" >"$work/bare.tri"
  run 0 "$tri" fmt "$work/bare.tri" -o "$work/bare_canon.tri" || return
  grep -q '//' "$work/bare_canon.tri" && fail "the comments of $f were not all removed for the binary test"
  # text -> binary -> text gives the canonical text; binary -> binary is the same bytes.
  run 0 "$tri" convert "$f" -o "$work/m.bin" || return
  cmp -s "$work/m.bin" "$work/canon.tri" && fail "convert $f wrote text, expected binary"
  run 0 "$tri" convert "$work/m.bin" -o "$work/back.tri" && cmp -s "$work/back.tri" "$work/bare_canon.tri" \
    || fail "text -> binary -> text differs from fmt on $f"
  run 0 "$tri" convert "$work/m.bin" --to binary -o "$work/m2.bin" && cmp -s "$work/m.bin" "$work/m2.bin" \
    || fail "binary -> binary is not byte-identical on $f"
  run 0 "$tri" convert "$f" --to text -o "$work/t.tri" && cmp -s "$work/t.tri" "$work/bare_canon.tri" \
    || fail "convert --to text differs from fmt on $f"
  run 0 "$tri" check "$work/m.bin" || true
  run 0 "$tri" fmt "$work/m.bin" -o "$work/fromb.tri" && cmp -s "$work/fromb.tri" "$work/bare_canon.tri" \
    || fail "fmt of the binary differs from fmt of the text on $f"
  # A file with run lines, formatted in place as the README says, still runs them all.
  if grep -q "// *run:" "$f"; then
    local inplace=$work/inplace/$(basename "$f")  # same name: run lines may expect it in messages
    mkdir -p "$work/inplace" && cp "$f" "$inplace"
    run 0 "$tri" fmt "$inplace" -o "$inplace" || return
    run 0 "$tri" fmt --check "$inplace" || fail "fmt --check fails on the formatted $f"
    "$tri" test "$f" >"$work/before.txt" 2>&1
    "$tri" test "$inplace" >"$work/after.txt" 2>&1
    [[ "$(tail -n1 "$work/before.txt")" == "$(tail -n1 "$work/after.txt")" ]] \
      || fail "tri test on the formatted $f: '$(tail -n1 "$work/after.txt")', on the original: '$(tail -n1 "$work/before.txt")'"
  fi
  # info lists every function of the canonical text, each with its kind.
  run 0 "$tri" info "$f" || return
  local want got
  want=$(grep -E '^(kernel|func) @' "$work/canon.tri" | sed -E 's/^(kernel|func) (@[A-Za-z0-9_.]+).*/\1 \2/')
  got=$(grep -E '^(kernel|func) @' "$work/out")
  [[ "$want" == "$got" ]] || fail "info $f lists functions '$got', the text has '$want'"
  [[ -n $want ]] || fail "$f has no function"
  run 0 "$tri" info "$work/m.bin" && grep -E '^(kernel|func) @' "$work/out" | diff -q - <(echo "$got") >/dev/null \
    || fail "info differs between $f and its binary"
}

mode_errors() {
  run 1 "$tri" check "$data/bad_parse.tri" && expect_located "$data/bad_parse.tri"
  grep -q ':4:' "$work/err" || fail "the parse error is not on line 4: $(cat "$work/err")"
  run 1 "$tri" check "$data/bad_verify.tri" && expect_located "$data/bad_verify.tri"
  grep -q ':4:' "$work/err" || fail "the verify error is not on line 4: $(cat "$work/err")"
  grep -q "add" "$work/err" || fail "the verify error does not name 'add': $(cat "$work/err")"
  for cmd in fmt info; do
    run 1 "$tri" $cmd "$data/bad_parse.tri" && expect_located "$data/bad_parse.tri"
  done
  run 1 "$tri" convert "$data/bad_verify.tri" -o "$work/x.bin" && expect_located "$data/bad_verify.tri"
  [[ -e $work/x.bin ]] && fail "convert wrote an output for a bad input"
  # Every file is checked: the good one passes, both bad ones are reported.
  run 1 "$tri" check "$data/bad_parse.tri" "$data/scale.tri" "$data/bad_verify.tri"
  [[ $(grep -c ': error: ' "$work/err") -eq 2 ]] || fail "check of three files did not report two errors"
  run 1 "$tri" check "$work/no-such-file.tri"
  grep -q "no-such-file.tri" "$work/err" || fail "a missing file is not named: $(cat "$work/err")"
  # A truncated binary is refused with the library's message.
  run 0 "$tri" convert "$data/scale.tri" -o "$work/s.bin"
  head -c $(($(wc -c <"$work/s.bin") - 3)) "$work/s.bin" >"$work/cut.bin"
  run 1 "$tri" check "$work/cut.bin"
  grep -q "cut.bin" "$work/err" || fail "a truncated binary's error does not name the file: $(cat "$work/err")"
  # fmt --check flags a file that is not canonical.
  run 0 "$tri" fmt "$data/scale.tri" -o "$work/canon.tri"
  sed 's/^  /    /' "$work/canon.tri" >"$work/spaced.tri"
  run 1 "$tri" fmt --check "$work/spaced.tri"
  grep -q "spaced.tri" "$work/err" || fail "fmt --check does not name the file"
  run 0 "$tri" fmt --check "$work/canon.tri"
  # An output that cannot be written.
  run 1 "$tri" fmt "$data/scale.tri" -o "$work/no-such-dir/out.tri"
}

mode_usage() {
  run 0 "$tri" --help && grep -q "^usage: tri" "$work/out" || fail "--help does not print the usage"
  run 0 "$tri" -h && grep -q "^usage: tri" "$work/out" || fail "-h does not print the usage"
  run 0 "$tri" help && grep -q "^usage: tri" "$work/out" || fail "help does not print the usage"
  for cmd in check fmt convert info; do
    run 0 "$tri" help $cmd && grep -q "^usage: tri $cmd" "$work/out" || fail "help $cmd"
    run 0 "$tri" $cmd --help && grep -q "^usage: tri $cmd" "$work/out" || fail "$cmd --help"
    run 2 "$tri" $cmd && grep -q "see 'tri $cmd --help'" "$work/err" || fail "$cmd without a file is not a usage error"
    [[ $(wc -l <"$work/err") -eq 2 ]] || fail "$cmd's usage error is not one line and a pointer to --help"
    run 2 "$tri" $cmd --bogus "$data/scale.tri" && grep -q "unknown option '--bogus'" "$work/err" \
      || fail "$cmd --bogus is not a usage error"
  done
  run 0 "$tri" --version && grep -Eq '^tri [0-9]+\.[0-9]+\.[0-9]+' "$work/out" || fail "--version"
  run 2 "$tri" && grep -q "^usage: tri" "$work/err" || fail "no command is not a usage error"
  run 2 "$tri" frobnicate && grep -q "unknown command 'frobnicate'" "$work/err" && grep -q "see 'tri --help'" "$work/err" \
    || fail "an unknown command is not a usage error pointing at --help"
  [[ -s $work/out ]] && fail "an unknown command printed on stdout"
  run 2 "$tri" help frobnicate || true
  run 2 "$tri" convert "$data/scale.tri" || true  # no -o
  run 2 "$tri" convert "$data/scale.tri" -o "$work/x" --to yaml || true
  run 2 "$tri" fmt "$data/scale.tri" "$data/scale.tri" || true
}

mode_stdin() {
  run 0 "$tri" check - <"$data/scale.tri" || true
  run 0 "$tri" fmt "$data/scale.tri" -o "$work/canon.tri"
  run 0 "$tri" fmt - <"$data/scale.tri" && cmp -s "$work/out" "$work/canon.tri" || fail "fmt - differs from fmt FILE"
  run 0 "$tri" convert - -o "$work/s.bin" <"$data/scale.tri"
  run 0 "$tri" convert "$work/s.bin" -o "$work/s_text.tri"  # the binary has no comments: compare with it
  run 0 "$tri" convert - -o - <"$work/s.bin" && cmp -s "$work/out" "$work/s_text.tri" \
    || fail "convert of binary on stdin to stdout differs from convert of the file"
  run 0 "$tri" info - <"$work/s.bin" && grep -q '^<stdin>: 1 kernel, 1 device function' "$work/out" \
    || fail "info - does not describe the module: $(cat "$work/out")"
  grep -q '^  %x: ptr<f32> {align=16, noalias}$' "$work/out" || fail "info does not show %x's facts"
  grep -q '^  constexpr BLOCK: i32 = 1024$' "$work/out" || fail "info does not show BLOCK's default"
  grep -q '^  constexpr UNROLL: i32$' "$work/out" || fail "info shows a default for UNROLL"
  printf 'kernel @k( {' >"$work/bad.tri"
  run 1 "$tri" check - <"$work/bad.tri" && expect_located "<stdin>"
}

mode=${1:?mode}
shift
case $mode in
  example) mode_example "$@" ;;
  errors) mode_errors ;;
  usage) mode_usage ;;
  stdin) mode_stdin ;;
  *) echo "tool_test.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac
if [[ $failures -ne 0 ]]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "ok"
