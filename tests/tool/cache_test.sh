#!/usr/bin/env bash
# `tri cache`: stats, ls, verify (finds and removes a damaged entry), clear, prune, export and
# import of a bundle, and the usage errors. Entries are made by `tri test` on IR files with the
# cache pointed at a fresh directory. Run by CTest (tests/tool.cmake).
set -euo pipefail
tri=${TRI_TOOL:?TRI_TOOL is the tri binary}
src=${TRI_SOURCE_DIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export TRI_CACHE_DIR="$tmp/cache"

"$tri" test "$src/tests/run/vadd.tri" "$src/tests/run/softmax.tri" > /dev/null
"$tri" cache stats > "$tmp/stats"
grep -q "^directory: $tmp/cache\$" "$tmp/stats" || fail "stats names the directory: $(cat "$tmp/stats")"
n=$(sed -n 's/^entries: //p' "$tmp/stats")
[[ $n -ge 2 ]] || fail "tri test should have stored entries, stats say $n"
grep -q '^max bytes: 1073741824$' "$tmp/stats" || fail "default bound 1 GiB: $(cat "$tmp/stats")"

"$tri" cache ls > "$tmp/ls"
[[ $(wc -l < "$tmp/ls") -eq $n ]] || fail "ls lists $(wc -l < "$tmp/ls") entries, stats $n"
grep -qP '^[0-9a-f]{32}\t[0-9]+\t[0-9]+\tok\tobj\tcpu\t' "$tmp/ls" || fail "ls format: $(head -1 "$tmp/ls")"

"$tri" cache verify > "$tmp/v" || fail "verify of a good cache: $(cat "$tmp/v")"
grep -q "^$n entries good, 0 bad" "$tmp/v" || fail "verify count: $(cat "$tmp/v")"
victim=$(ls "$tmp/cache"/*.entry | head -1)
printf 'junk' > "$victim"
rc=0; "$tri" cache verify > "$tmp/v" || rc=$?
[[ $rc -eq 1 ]] || fail "verify should exit 1 on a bad entry, got $rc"
grep -q "$(basename "$victim" .entry): removed: cache entry: not a tri cache entry" "$tmp/v" || fail "verify report: $(cat "$tmp/v")"
[[ ! -e $victim ]] || fail "verify left the bad entry"
n=$((n - 1))

"$tri" cache export "$tmp/warm.tribundle" | grep -q "^exported $n entries" || fail "export"
"$tri" cache clear | grep -q "^removed $n entries; 0 left" || fail "clear"
"$tri" cache import "$tmp/warm.tribundle" | grep -q "^imported $n entries" || fail "import"
[[ $(ls "$tmp/cache"/*.entry | wc -l) -eq $n ]] || fail "import wrote $(ls "$tmp/cache"/*.entry | wc -l) entries"
"$tri" cache prune | grep -q "^removed 0 entries; $n left" || fail "prune under the bound removes nothing"
"$tri" cache prune --max 0 | grep -q "^removed $n entries; 0 left" || fail "prune --max 0"

# --dir wins over TRI_CACHE_DIR; "" is off.
"$tri" cache stats --dir "$tmp/other" | grep -q "^entries: 0$" || fail "--dir"
rc=0; "$tri" cache stats --dir "" > "$tmp/off" || rc=$?
[[ $rc -eq 1 ]] && grep -q "off" "$tmp/off" || fail "stats with the cache off: rc $rc, $(cat "$tmp/off")"
printf 'not a bundle' > "$tmp/bad.tribundle"
rc=0; "$tri" cache import "$tmp/bad.tribundle" 2> "$tmp/err" || rc=$?
[[ $rc -eq 1 ]] && grep -q "not a tri cache bundle" "$tmp/err" || fail "bad bundle: rc $rc, $(cat "$tmp/err")"

for args in "" "frob" "export" "stats extra" "prune --max lots"; do
  rc=0; "$tri" cache $args > /dev/null 2>&1 || rc=$?
  [[ $rc -eq 2 ]] || fail "'tri cache $args' should be a usage error (2), got $rc"
done
"$tri" help cache | grep -q "usage: tri cache" || fail "help cache"
echo "tri cache: all checks passed"
