#!/usr/bin/env bash
# `tri cache`: stats, ls, verify (finds and removes a damaged entry; survives a FIFO and a sparse
# giant), clear, prune, export and import of a bundle, keygen, sign, check and import --trust,
# and the usage errors. Entries are made by `tri test` on IR files with the
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
[[ $(wc -l < "$tmp/ls") -eq $((n + 1)) ]] || fail "ls lists $(wc -l < "$tmp/ls") lines, stats $n entries"
grep -qP '^KEY +SIZE +LAST USE +STATUS +KIND +TARGET +KERNEL +SPECIALIZED FOR +MADE FOR$' "$tmp/ls" ||
  fail "ls header: $(head -1 "$tmp/ls")"
grep -qP '^[0-9a-f]{16}  .* ok +obj +cpu +@' "$tmp/ls" || fail "ls format: $(sed -n 2p "$tmp/ls")"
! grep -q '@tri_target_probe' "$tmp/ls" || fail "tri test's target probe is in the cache: $(cat "$tmp/ls")"
"$tri" cache ls -l > "$tmp/ls-l"
grep -qP '^[0-9a-f]{32}  .*features \+' "$tmp/ls-l" || fail "ls -l: whole keys and CPU features"

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

# ls and verify survive any single bad file (issue 29, point 5): a FIFO and a sparse 6 GiB file
# under entries' names are listed as bad without being read (no hang, no 6 GiB), and removed.
"$tri" test "$src/tests/run/vadd.tri" > /dev/null
mkfifo "$tmp/cache/00000000000000000000000000000001.entry"
truncate -s 6G "$tmp/cache/00000000000000000000000000000002.entry"
timeout 60 "$tri" cache ls > "$tmp/ls" || fail "ls with a FIFO and a giant: rc $?"
# The two keys share 31 digits, so both are printed whole; the reason is the row's last column.
grep -qP '^00000000000000000000000000000001  0 B  .*  bad  +-  +-  +-  +-  +bad: not a regular file \(a FIFO\)$' \
  "$tmp/ls" || fail "ls FIFO: $(cat "$tmp/ls")"
grep -qP '^00000000000000000000000000000002  6\.0 GiB  .*  bad  .*  bad: 6442450944 bytes, more than' "$tmp/ls" ||
  fail "ls giant: $(cat "$tmp/ls")"
grep -qP '^[0-9a-f]{32}  .* ok +obj +cpu +@vadd ' "$tmp/ls" || fail "ls: the good entries' keys as long as the bad ones'"
rc=0; timeout 60 "$tri" cache verify > "$tmp/v" || rc=$?
[[ $rc -eq 1 ]] || fail "verify over a FIFO and a giant should exit 1, got $rc: $(cat "$tmp/v")"
[[ ! -e "$tmp/cache/00000000000000000000000000000001.entry" && ! -e "$tmp/cache/00000000000000000000000000000002.entry" ]] ||
  fail "verify left the FIFO or the giant"
[[ $(stat -c %a "$tmp/cache") == 700 && $(stat -c %a "$tmp/cache/cache.key") == 600 ]] ||
  fail "the cache directory and its secret are private: $(stat -c '%a %n' "$tmp/cache" "$tmp/cache/cache.key")"

# Signing (issue 29, point 2): keygen, export --sign, check, import --trust; an unsigned bundle
# or another key's is refused where a key is trusted, and imports nothing.
"$tri" cache keygen "$tmp/release" | grep -q "public key $tmp/release.pub" || fail "keygen"
"$tri" cache keygen "$tmp/other" > /dev/null
[[ $(stat -c %a "$tmp/release.key") == 600 ]] || fail "the secret key file is 0600"
[[ $(wc -c < "$tmp/release.pub") -eq 65 && $(wc -c < "$tmp/release.key") -eq 129 ]] || fail "key files are hex lines"
rc=0; "$tri" cache keygen "$tmp/release" > /dev/null 2>&1 || rc=$?
[[ $rc -eq 1 ]] || fail "keygen must not replace a key, got $rc"
n=$(ls "$tmp/cache"/*.entry | wc -l)
"$tri" cache export "$tmp/signed.tribundle" --sign "$tmp/release.key" | grep -q "^exported $n entries to .*, signed" ||
  fail "export --sign"
"$tri" cache check "$tmp/signed.tribundle" | grep -q "$n entries, signed by $(cat "$tmp/release.pub")" || fail "check"
"$tri" cache check "$tmp/signed.tribundle" --trust "$tmp/release.pub" > /dev/null || fail "check --trust"
rc=0; "$tri" cache check "$tmp/signed.tribundle" --trust "$tmp/other.pub" 2> "$tmp/err" || rc=$?
[[ $rc -eq 1 ]] && grep -q "not by the key given" "$tmp/err" || fail "check --trust another key: rc $rc, $(cat "$tmp/err")"
"$tri" cache export "$tmp/plain.tribundle" > /dev/null
"$tri" cache check "$tmp/plain.tribundle" | grep -q "unsigned" || fail "check unsigned"
export TRI_CACHE_DIR="$tmp/fresh"
rc=0; "$tri" cache import "$tmp/plain.tribundle" --trust "$tmp/release.pub" 2> "$tmp/err" || rc=$?
[[ $rc -eq 1 ]] && grep -q "is not signed" "$tmp/err" || fail "import unsigned with --trust: rc $rc, $(cat "$tmp/err")"
rc=0; "$tri" cache import "$tmp/signed.tribundle" --trust "$tmp/other.pub" 2> "$tmp/err" || rc=$?
[[ $rc -eq 1 ]] && grep -q "does not trust" "$tmp/err" || fail "import another key's: rc $rc, $(cat "$tmp/err")"
[[ $(ls "$tmp/fresh" | grep -c '\.entry$') -eq 0 ]] || fail "a refused import left entries"
"$tri" cache import "$tmp/signed.tribundle" --trust "$tmp/other.pub" --trust "$tmp/release.pub" |
  grep -q "^imported $n entries" || fail "import --trust"
"$tri" cache sign "$tmp/plain.tribundle" --key "$tmp/other.key" | grep -q "^signed" || fail "sign"
"$tri" cache check "$tmp/plain.tribundle" --trust "$tmp/other.pub" > /dev/null || fail "check after sign"
printf 'x' >> "$tmp/plain.tribundle"
rc=0; "$tri" cache check "$tmp/plain.tribundle" 2> "$tmp/err" || rc=$?
[[ $rc -eq 1 ]] || fail "check of a changed bundle: rc $rc"
# Exports never replace what is not a regular file (point 10).
mkfifo "$tmp/out.fifo"
rc=0; "$tri" cache export "$tmp/out.fifo" 2> "$tmp/err" || rc=$?
[[ $rc -eq 1 && -p "$tmp/out.fifo" ]] && grep -q "not a regular file" "$tmp/err" || fail "export to a FIFO: rc $rc, $(cat "$tmp/err")"
export TRI_CACHE_DIR="$tmp/cache"

for args in "" "frob" "export" "stats extra" "prune --max lots" "sign x" "keygen" "ls --sign k" "stats --trust k"; do
  rc=0; "$tri" cache $args > /dev/null 2>&1 || rc=$?
  [[ $rc -eq 2 ]] || fail "'tri cache $args' should be a usage error (2), got $rc"
done
"$tri" help cache | grep -q "usage: tri cache" || fail "help cache"
echo "tri cache: all checks passed"
