#!/usr/bin/env bash
# libtri_rt (docs/aot.md) is the runtime half alone: what ldd and nm say of it.
#  - it needs no LLVM and no libsodium: its libraries are zstd, xxhash and the C library's;
#  - no symbol of LLVM, of the compiler (passes, codegen, the IR readers and verifier, the
#    interpreter, the importer, the tuner) or of the disk cache is in it, local ones included;
#  - it exports exactly the functions tri.h declares TRI_API without TRI_COMPILER, and libtri
#    exports those and the TRI_COMPILER ones;
#  - its size, stripped, shared and static, is at most the goal (1.5 MB for the shared object;
#    the archive's size and what it adds to a program linked statically are printed).
#   tests/rt/library_test.sh LIBDIR
set -euo pipefail
src=${TRI_SOURCE_DIR:-.}
dir=${1:?usage: library_test.sh LIBDIR}
rt=$dir/libtri_rt.so
full=$dir/libtri.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

deps=$(ldd "$rt" | awk '{print $1}' | grep -v -E '^(linux-vdso\.so|/lib64/ld-linux)' | sort | tr '\n' ' ')
for d in $deps; do
  case $d in
    libzstd.so.*|libxxhash.so.*|libm.so.*|libc.so.*|libdl.so.*|libpthread.so.*) ;;
    *) fail "libtri_rt needs $d (only zstd, xxhash and the C library's are allowed): $deps" ;;
  esac
done
echo "ldd: $deps"

nm -C "$rt" >"$tmp/syms"
if grep -i -E 'llvm|tri::(passes|codegen|import|tune)::|tri::ir::(parse_text|print_text|read_binary|write_binary|verify)|tri::interp::run|tri::cache::|DiskCache|compile_cpu' "$tmp/syms" >"$tmp/bad"; then
  head -20 "$tmp/bad" >&2
  fail "libtri_rt holds symbols of LLVM, of the compiler or of the disk cache (above)"
fi
echo "nm: $(wc -l <"$tmp/syms") symbols, none of LLVM, the compiler or the disk cache"

grep -oE '^TRI_API [^(]*\btri_[a-z0-9_]+\(' "$src/include/tri/tri.h" | grep -v TRI_COMPILER |
  grep -oE 'tri_[a-z0-9_]+\($' | tr -d '(' | sort -u >"$tmp/runtime"
grep -oE '^TRI_API TRI_COMPILER [^(]*\btri_[a-z0-9_]+\(' "$src/include/tri/tri.h" |
  grep -oE 'tri_[a-z0-9_]+\($' | tr -d '(' | sort -u >"$tmp/compiler"
nm -D --defined-only "$rt" | awk '{print $3}' | sort -u >"$tmp/rt_exports"
diff "$tmp/runtime" "$tmp/rt_exports" >"$tmp/diff" || { cat "$tmp/diff" >&2; fail "libtri_rt's exports are not tri.h's runtime functions (< tri.h, > the library)"; }
nm -D --defined-only "$full" | awk '{print $3}' | grep '^tri_' | sort -u >"$tmp/full_exports"
sort -u "$tmp/runtime" "$tmp/compiler" >"$tmp/all"
diff "$tmp/all" "$tmp/full_exports" >"$tmp/diff" || { cat "$tmp/diff" >&2; fail "libtri's exports are not all of tri.h"; }
echo "exports: libtri_rt $(wc -l <"$tmp/runtime") functions, libtri $(wc -l <"$tmp/all") ($(wc -l <"$tmp/compiler") of the compiler)"

strip -o "$tmp/rt.so" "$rt"
cp "$dir/libtri_rt.a" "$tmp/rt.a"
strip --strip-unneeded "$tmp/rt.a"
shared=$(stat -c %s "$tmp/rt.so")
static=$(stat -c %s "$tmp/rt.a")
echo "size (stripped): libtri_rt.so $shared bytes, libtri_rt.a $static bytes"
[[ $shared -le 1572864 ]] || fail "libtri_rt.so is $shared bytes stripped, more than the goal of 1.5 MB"
