#!/usr/bin/env bash
# The numbers of issue 27 on one target (docs/aot.md): start to first launch from a package
# (tri-bench-first-launch built against libtri_rt and libtri; a package of 20 distinct kernels made
# with the build's `tri aot`; 1 and 20 kernels, RUNS runs each, default 7) and the launch cost of a
# package's kernel through each library (bench/launch/c_launch.c built against each). Prints each
# run's JSON line, then the table (bench/aot/table.py: PERF.md's JSON and Markdown, written to
# BUILD/aot-bench/aot-TARGET.{json,md}). BUILD is the build tree (default build/).
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
  # shellcheck disable=SC2086
  ${CC:-cc} -O2 -std=c11 $flags -I"$root/include" "$root/bench/launch/c_launch.c" -L"$lib" -l"$libname" -ldl \
    -Wl,-rpath,"$lib" -o "$out/launch-$flavor"
done
runs=${RUNS:-7}
python3 "$root/bench/aot/kernels.py" 20 "$out/kernels.tri"
if [[ ! -f $out/kernels-$target.tripkg ]]; then
  "${TRI_TOOL:-$build/tools/tri}" aot "$out/kernels.tri" -o "$out/kernels-$target.tripkg" --target "$target" \
    --variants none 2>"$out/aot.log" || { cat "$out/aot.log" >&2; exit 1; }
fi
"${TRI_TOOL:-$build/tools/tri}" aot "$root/examples/vector_add.tri" -o "$out/vector_add-$target.tripkg" \
  --target "$target" --kernel vector_add:BLOCK=1024 2>>"$out/aot.log"
for n in 1 20; do
  for i in $(seq "$runs"); do
    for flavor in rt full; do
      "$out/first-launch-$flavor" "$out/kernels-$target.tripkg" "$n" "$target"
    done
  done
done | tee "$out/first_launch.jsonl"
for flavor in rt full; do
  "$out/launch-$flavor" --target "$target" --package "$out/vector_add-$target.tripkg" >"$out/launch-$flavor.json"
done
gpu=none
[[ $target == cuda ]] && gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
python3 "$root/bench/aot/table.py" "$out" "$target" "bash bench/aot/run.sh $target" --gpu "${gpu:-unknown}" \
  --json "$out/aot-$target.json" --md "$out/aot-$target.md"
