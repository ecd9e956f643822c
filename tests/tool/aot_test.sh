#!/usr/bin/env bash
# `tri aot` (docs/aot.md): a package of an example for both targets, what --list says it holds
# (cubins where ptxas is, PTX only with TRI_PTXAS=none), the --header's typed launch functions
# compiling as C99 and C++11 and running the package's kernel from a C program linked with the
# library given as $1 (libtri, or libtri_rt), and the usage errors.
#   tests/tool/aot_test.sh LIBRARY_DIR LIBRARY_NAME
set -euo pipefail
tri=${TRI_TOOL:?TRI_TOOL is the tri binary}
src=${TRI_SOURCE_DIR:-.}
libdir=${1:?library dir}
lib=${2:?library name (tri, tri_rt)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
checks=0
ok() { checks=$((checks + 1)); }

"$tri" aot "$src/examples/vector_add.tri" -o "$tmp/va.tripkg" --arch sm_80,sm_90a --cpu x86-64-v2,x86-64-v3 \
  --header "$tmp/aot.h" 2>"$tmp/log" || fail "tri aot: $(cat "$tmp/log")"
"$tri" aot --list "$tmp/va.tripkg" >"$tmp/list.json"
python3 - "$tmp/list.json" <<'PY' || fail "--list: $(cat "$tmp/list.json")"
import json, os, sys
p = json.load(open(sys.argv[1]))
ks = {k["target"]: k for k in p["kernels"]}
assert p["ir"] and set(ks) == {"cuda", "cpu"}, p
assert ks["cpu"]["constexprs"] == {"BLOCK": 1024}
cuda = ks["cuda"]["variants"]
assert [v["classes"] for v in cuda] == ["0000000000000000", "0000000000000015", "0000000000000095"], cuda
assert [c["machine"] for c in cuda[0]["code"]] == ["sm_80", "sm_90a"]
ptxas = os.path.exists("/usr/local/cuda/bin/ptxas") or any(
    os.access(os.path.join(d, "ptxas"), os.X_OK) for d in os.environ.get("PATH", "").split(":"))
assert all(c["kind"] == ("ptx+cubin" if ptxas else "ptx") for v in cuda for c in v["code"]), cuda
assert [c["machine"] for c in ks["cpu"]["variants"][0]["code"]] == ["x86-64-v2", "x86-64-v3"]
assert all(c["kind"] == "so" for v in ks["cpu"]["variants"] for c in v["code"])
PY
ok
TRI_PTXAS=none "$tri" aot "$src/examples/vector_add.tri" -o "$tmp/ptx.tripkg" --target cuda --variants none --no-ir 2>/dev/null
"$tri" aot --list "$tmp/ptx.tripkg" | grep -q '"ir": false' || fail "--no-ir"
"$tri" aot --list "$tmp/ptx.tripkg" | grep -q '"kind": "ptx", "bytes"' || fail "TRI_PTXAS=none should give PTX only"
! "$tri" aot --list "$tmp/ptx.tripkg" | grep -q 'cubin' || fail "TRI_PTXAS=none made a cubin"
ok

cc -std=c99 -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$src/include" -x c "$tmp/aot.h" || fail "the header as C99"
c++ -std=c++11 -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$src/include" -x c++ "$tmp/aot.h" || fail "the header as C++11"
ok
cc -std=c99 -O1 -I"$src/include" -I"$tmp" "$src/tests/tool/aot_host.c" -L"$libdir" -l"$lib" -Wl,-rpath,"$libdir" \
  -o "$tmp/host" || fail "building the host program against lib$lib"
"$tmp/host" "$tmp/va.tripkg" | grep -qx "ok 5000" || fail "the host program on lib$lib"
ok
# Under the tests' fake driver (TRI_LIBCUDA): the cuda kernel of a PTX-only package loads and
# launches (the fake records the launch; it cannot run a real cubin, which ptxas's would be).
if [[ -n ${TRI_LIBCUDA:-} ]]; then
  TRI_PTXAS=none "$tri" aot "$src/examples/vector_add.tri" -o "$tmp/cuda.tripkg" --target cuda --no-ir 2>/dev/null
  "$tmp/host" "$tmp/cuda.tripkg" cuda | grep -qx "ok cuda" || fail "the cuda kernel under the fake driver on lib$lib"
  ok
fi

rc=0; "$tri" aot "$src/examples/vector_add.tri" 2>/dev/null || rc=$?
[[ $rc -eq 2 ]] || fail "no -o should be a usage error (2), got $rc"
rc=0; "$tri" aot "$src/examples/vector_add.tri" -o "$tmp/x" --kernel nope 2>"$tmp/err" || rc=$?
[[ $rc -eq 1 ]] && grep -q "nope" "$tmp/err" || fail "an unknown kernel: $rc $(cat "$tmp/err")"
rc=0; "$tri" aot "$src/examples/vector_add.tri" -o "$tmp/x" --target cuda --arch sm_12 2>"$tmp/err" || rc=$?
[[ $rc -eq 1 ]] && grep -q "unknown GPU architecture 'sm_12'" "$tmp/err" || fail "a bad arch: $(cat "$tmp/err")"
rc=0; "$tri" aot "$src/examples/vector_add.tri" -o "$tmp/x" --target cpu --cpu x86-64-v9 2>"$tmp/err" || rc=$?
[[ $rc -eq 1 ]] && grep -q "unknown cpu level 'x86-64-v9'" "$tmp/err" || fail "a bad level: $(cat "$tmp/err")"
ok
echo "tri aot on lib$lib: $checks checks passed"
