#!/usr/bin/env bash
# Start to first launch from packages (docs/aot.md): builds tri-bench-first-launch against
# libtri_rt (and libtri), makes a package of 20 distinct kernels with the build's `tri aot`, and
# runs 1 and 20 kernels on the target given (cpu, or cuda on a GPU machine). Prints one JSON line
# per run. BUILD is the build tree (default build/).
#   bash bench/aot/run.sh cpu|cuda [BUILD]
# On a GPU machine, make the package here or there: it needs no GPU (PTX and, with ptxas, cubins).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${1:?usage: run.sh cpu|cuda [BUILD]}
build=$(cd "${2:-$root/build}" && pwd)
out=$build/aot-bench
mkdir -p "$out"
lib=$build/src
for flavor in rt full; do
  libname=$([[ $flavor == rt ]] && echo tri_rt || echo tri)
  flags=$([[ $flavor == rt ]] && echo -DTRI_RUNTIME_ONLY || true)
  # shellcheck disable=SC2086
  ${CC:-cc} -O2 -std=c11 $flags -I"$root/include" "$root/bench/aot/first_launch.c" -L"$lib" -l"$libname" -ldl \
    -Wl,-rpath,"$lib" -o "$out/first-launch-$flavor"
done
python3 "$root/bench/aot/kernels.py" 20 "$out/kernels.tri"
if [[ ! -f $out/kernels-$target.tripkg ]]; then
  "${TRI_TOOL:-$build/tools/tri}" aot "$out/kernels.tri" -o "$out/kernels-$target.tripkg" --target "$target" \
    --variants none 2>"$out/aot.log" || { cat "$out/aot.log" >&2; exit 1; }
fi
for n in 1 20; do
  for flavor in rt full; do
    "$out/first-launch-$flavor" "$out/kernels-$target.tripkg" "$n" "$target"
  done
done
