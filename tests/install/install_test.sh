#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds and runs an outside project
# (tests/install/consumer) against it twice: through find_package(tri) and through pkg-config.
#
# usage: install_test.sh BUILD_DIR LIBDIR C_COMPILER [EXTRA_C_FLAGS]
#   LIBDIR is CMAKE_INSTALL_LIBDIR; EXTRA_C_FLAGS is for sanitized builds, whose libtri.so needs
#   the sanitizer runtime in the host program too.
set -euo pipefail

build=${1:?build dir}
libdir=${2:?libdir}
cc=${3:?C compiler}
extra_cflags=${4:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tri-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

echo "== cmake --install into $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; exit 1; }
for f in include/tri/tri.h "$libdir/libtri.so" "$libdir/libtri.a" "$libdir/cmake/tri/triConfig.cmake" \
         "$libdir/pkgconfig/tri.pc" "$libdir/libtri_rt.so" "$libdir/libtri_rt.a" "$libdir/pkgconfig/tri_rt.pc" bin/tri; do
  [[ -e $prefix/$f ]] || { echo "missing after install: $f" >&2; exit 1; }
done

echo "== find_package(tri) consumer"
cmake -S "$here/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
      -DCMAKE_C_FLAGS="$extra_cflags" -DCMAKE_EXE_LINKER_FLAGS="$extra_cflags" >"$work/configure.log" \
  || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/cmake-build" >"$work/build.log" || { cat "$work/build.log"; exit 1; }
out=$("$work/cmake-build/consumer")
echo "$out"
[[ $out == *"1 kernel(s)"* ]]

echo "== pkg-config consumer"
flags=$(PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" pkg-config --cflags --libs tri)
echo "pkg-config --cflags --libs tri: $flags"
# shellcheck disable=SC2086  # the flags are words
"$cc" $extra_cflags "$here/consumer/main.c" -o "$work/consumer-pc" $flags
# No LD_LIBRARY_PATH: tri.pc's rpath finds libtri.so.0 in the prefix (issue 30).
out=$(env -u LD_LIBRARY_PATH "$work/consumer-pc")
echo "$out"
[[ $out == *"1 kernel(s)"* ]]

echo "== the installed tool"
"$prefix/bin/tri" --version

echo "== a package made by the installed tri aot, run by a program linked with libtri_rt (pkg-config tri_rt)"
src=$(cd "$here/../.." && pwd)
"$prefix/bin/tri" aot "$src/examples/vector_add.tri" -o "$work/va.tripkg" --target cpu --header "$work/aot.h" 2>/dev/null
flags=$(PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" pkg-config --cflags --libs tri_rt)
echo "pkg-config --cflags --libs tri_rt: $flags"
# shellcheck disable=SC2086  # the flags are words
"$cc" $extra_cflags -I"$work" "$src/tests/tool/aot_host.c" -o "$work/aot-host" $flags
out=$(LD_LIBRARY_PATH="$prefix/$libdir" "$work/aot-host" "$work/va.tripkg")
echo "$out"
[[ $out == "ok 5000" ]]
echo "install test passed"
