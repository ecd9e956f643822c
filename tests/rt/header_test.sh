#!/usr/bin/env bash
# tri.h's marks (TRI_API TRI_COMPILER: libtri only): with TRI_RUNTIME_ONLY defined, as a program
# that links libtri_rt defines it, a call to a compiler function is an error at compile time
# that names the reason, and the runtime's functions compile as before, in C99 and in C++11.
set -euo pipefail
src=${TRI_SOURCE_DIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cat >"$tmp/compiler.c" <<'C'
#include "tri/tri.h"
tri_result f(tri_module* m, tri_kernel** k) { return tri_kernel_compile(m, "k", NULL, k); }
C
cat >"$tmp/runtime.c" <<'C'
#include "tri/tri.h"
tri_result f(tri_context* c, const void* p, size_t n, tri_module** m, tri_kernel** k) {
  tri_result r = tri_module_load_package(c, p, n, "p", m);
  return r ? r : tri_module_kernel(*m, "k", NULL, k);
}
C
for lang in "c -std=c99" "c++ -std=c++11"; do
  set -- $lang
  comp=cc; [[ $1 == c++ ]] && comp=c++
  "$comp" -x "$1" "$2" -Wall -Wextra -Werror -fsyntax-only -DTRI_RUNTIME_ONLY -I"$src/include" "$tmp/runtime.c" ||
    fail "runtime functions under TRI_RUNTIME_ONLY ($1)"
  if "$comp" -x "$1" "$2" -fsyntax-only -DTRI_RUNTIME_ONLY -I"$src/include" "$tmp/compiler.c" 2>"$tmp/err"; then
    fail "tri_kernel_compile compiled under TRI_RUNTIME_ONLY ($1)"
  fi
  grep -q "unavailable: libtri only: libtri_rt has no compiler" "$tmp/err" || fail "the message ($1): $(cat "$tmp/err")"
  "$comp" -x "$1" "$2" -Wall -Wextra -Werror -fsyntax-only -I"$src/include" "$tmp/compiler.c" ||
    fail "tri_kernel_compile without TRI_RUNTIME_ONLY ($1)"
done
echo "tri.h marks: compiler functions unavailable under TRI_RUNTIME_ONLY, in C and C++"
