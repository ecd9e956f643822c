#!/usr/bin/env bash
# Checks the dynamic symbol table of libtri.so: it must define only the C API (tri_*) besides the
# linker's own markers, so a host that carries its own LLVM or libstdc++ never binds to ours; and,
# given tri.h, every function the header declares must be exported.
#
# usage: scripts/check_exports.sh path/to/libtri.so [path/to/tri.h]
set -euo pipefail

lib=${1:?usage: check_exports.sh LIBTRI_SO [TRI_H]}
header=${2:-}
[[ -f $lib ]] || { echo "check_exports: no such file: $lib" >&2; exit 1; }

# Only symbols with global binding are exported: upper-case types, and "u" (GNU unique). Local
# entries (lower-case) can sit in .dynsym without being visible to other objects.
defined=$(nm -D --defined-only "$lib" | awk 'NF >= 3 && ($2 ~ /^[A-Z]$/ || $2 == "u") { print $3 }' | sed 's/@.*//' | sort -u)
leaks=$(grep -Ev '^(tri_[A-Za-z0-9_]+|_init|_fini|_edata|_end|__bss_start)$' <<<"$defined" || true)
status=0
if [[ -n $leaks ]]; then
  echo "check_exports: $lib exports symbols outside the C API:" >&2
  sed 's/^/  /' <<<"$leaks" >&2
  status=1
fi

exported=$(grep -E '^tri_' <<<"$defined" || true)
if [[ -z $exported ]]; then
  echo "check_exports: $lib exports no tri_* symbol at all" >&2
  status=1
fi

if [[ -n $header ]]; then
  # Declarations start with TRI_API on one line: "TRI_API <type> tri_name(".
  declared=$(grep -oE '^TRI_API[^(]*\btri_[a-z0-9_]+\(' "$header" | grep -oE 'tri_[a-z0-9_]+\($' | tr -d '(' | sort -u)
  [[ -n $declared ]] || { echo "check_exports: found no TRI_API declarations in $header" >&2; exit 1; }
  missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
  extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
  if [[ -n $missing ]]; then
    echo "check_exports: declared in $(basename "$header") but not exported by $lib:" >&2
    sed 's/^/  /' <<<"$missing" >&2
    status=1
  fi
  if [[ -n $extra ]]; then
    echo "check_exports: exported by $lib but not declared in $(basename "$header"):" >&2
    sed 's/^/  /' <<<"$extra" >&2
    status=1
  fi
fi

if [[ $status -eq 0 ]]; then
  echo "check_exports: $(wc -l <<<"$exported") tri_* symbols, nothing else"
fi
exit $status
