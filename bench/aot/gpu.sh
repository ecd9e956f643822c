#!/usr/bin/env bash
# On a GPU machine, with the folder bench/aot/prepare.sh made (carried from the machine that made
# the packages, which needs no GPU): the numbers and checks of issue 27 (docs/aot.md).
#  1. every example's C program on TRI_TARGET=cuda three ways, each checking its results against
#     plain C: linked with libtri and compiling from IR (the reference); linked with libtri_rt
#     only and running the sm_80+sm_90a packages (the GPU's cubins); and with libtri_rt running
#     the sm_80 packages (the PTX path through the driver's JIT);
#  2. start to first launch through libtri_rt (and libtri) from a package of 20 kernels, CUDA's
#     own start timed apart (bench/aot/first_launch.c; 7 runs each, all printed);
#  3. the launch cost through libtri_rt from a package next to libtri's (bench/launch/c_launch.c).
# Run from the repository's root (the examples' IR is read from examples/). Writes to OUT
# (default AOT/results) and exits 1 if anything failed.
#   bash bench/aot/gpu.sh AOT [OUT]
set -uo pipefail
aot=$(cd "${1:?usage: gpu.sh AOT_FOLDER [OUT]}" && pwd)
out=${2:-$aot/results}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$aot/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} TRI_EXAMPLES_DIR=$PWD/examples
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpu.txt" 2>&1 || true
echo "GPU: $(cat "$out/gpu.txt")"

examples=(vector_add gelu softmax layernorm matmul_leaky_relu flash_attention cumsum histogram argmax)
fails=0
printf '| example | libtri, from IR | libtri_rt, sm_80+sm_90a package | libtri_rt, sm_80 package (PTX JIT) |\n|---|---|---|---|\n' \
  >"$out/examples.md"
for e in "${examples[@]}"; do
  row="| $e"
  for how in ir both sm80; do
    case $how in
      ir) cmd=("$aot/bin/example_$e"); env=(TRI_TARGET=cuda) ;;
      both) cmd=("$aot/bin/example_rt_$e"); env=(TRI_TARGET=cuda TRI_PACKAGE_DIR="$aot/sm80_90a") ;;
      sm80) cmd=("$aot/bin/example_rt_$e"); env=(TRI_TARGET=cuda TRI_PACKAGE_DIR="$aot/sm80") ;;
    esac
    if env "${env[@]}" "${cmd[@]}" >"$out/$e.$how.log" 2>&1 && grep -q ' ok ' "$out/$e.$how.log"; then
      row+=" | $(grep ' ok ' "$out/$e.$how.log" | head -1 | awk '{print "ok, " $(NF-3) " " $(NF-2)}')"
    else
      row+=" | FAILED (see $e.$how.log)"
      fails=$((fails + 1))
    fi
  done
  echo "$row |" >>"$out/examples.md"
done
cat "$out/examples.md"

for n in 1 20; do
  for flavor in rt full; do
    for i in 1 2 3 4 5 6 7; do "$aot/bin/first-launch-$flavor" "$aot/kernels-cuda.tripkg" "$n" cuda || fails=$((fails + 1)); done
  done
done | tee "$out/first_launch.jsonl"
"$aot/bin/launch-rt" --target cuda --package "$aot/vector_add-1024.tripkg" | tee "$out/launch_rt.json"
"$aot/bin/launch-full" --target cuda --package "$aot/vector_add-1024.tripkg" | tee "$out/launch_full_package.json"
"$aot/bin/launch-full" --target cuda | tee "$out/launch_full_ir.json"
echo "gpu.sh: $fails failure(s); results in $out"
exit $((fails > 0))
