#!/usr/bin/env bash
# Makes, on a machine without a GPU, what bench/aot/gpu.sh runs on one (docs/aot.md), in one folder
# to carry there, BUILD/aot-gpu:
#   lib/            libtri.so and libtri_rt.so of BUILD (build with -DTRI_STATIC_LLVM=ON: the GPU
#                   machine has no LLVM)
#   bin/            every example's C program linked with libtri (example_*) and with libtri_rt
#                   (example_rt_*), and the start-to-first-launch and launch-cost programs built
#                   against each library
#   sm80_90a/       every example's package for sm_80 and sm_90a (cubins from ptxas where it is,
#                   and PTX)
#   sm80/           the same for sm_80 alone: on an H100/H200 it runs through the driver's JIT
#   kernels-cuda.tripkg, vector_add-1024.tripkg   20 distinct kernels; @vector_add, BLOCK=1024
#   bash bench/aot/prepare.sh [BUILD]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
tri=${TRI_TOOL:-$build/tools/tri}
out=$build/aot-gpu
mkdir -p "$out/lib" "$out/bin"
cp -a "$build"/src/libtri.so* "$build"/src/libtri_rt.so* "$out/lib/"
cp "$build"/tests/example_* "$out/bin/"
for flavor in rt full; do
  libname=$([[ $flavor == rt ]] && echo tri_rt || echo tri)
  flags=$([[ $flavor == rt ]] && echo -DTRI_RUNTIME_ONLY || true)
  # shellcheck disable=SC2086
  ${CC:-cc} -O2 -std=c11 $flags -I"$root/include" "$root/bench/aot/first_launch.c" -L"$out/lib" -l"$libname" -ldl \
    -Wl,-rpath,'$ORIGIN/../lib' -o "$out/bin/first-launch-$flavor"
  # shellcheck disable=SC2086
  ${CC:-cc} -O2 -std=c11 $flags -I"$root/include" "$root/bench/launch/c_launch.c" -L"$out/lib" -l"$libname" -ldl \
    -Wl,-rpath,'$ORIGIN/../lib' -o "$out/bin/launch-$flavor"
done
TRI_TOOL=$tri bash "$root/scripts/aot-examples.sh" "$out/sm80_90a" --target cuda --arch sm_80,sm_90a
TRI_TOOL=$tri bash "$root/scripts/aot-examples.sh" "$out/sm80" --target cuda --arch sm_80
python3 "$root/bench/aot/kernels.py" 20 "$out/kernels.tri"
"$tri" aot "$out/kernels.tri" -o "$out/kernels-cuda.tripkg" --target cuda --variants none 2>/dev/null
"$tri" aot "$root/examples/vector_add.tri" -o "$out/vector_add-1024.tripkg" --kernel vector_add:BLOCK=1024 2>/dev/null
"$tri" aot --list "$out/sm80_90a/vector_add.tripkg" | grep -q '"kind": "ptx+cubin"' ||
  echo "prepare.sh: no cubins in the packages (no ptxas here): every launch on the GPU will go through the PTX JIT" >&2
echo "prepare.sh: $(du -sh "$out" | cut -f1) in $out (carry it, and run bash bench/aot/gpu.sh $out there)"
