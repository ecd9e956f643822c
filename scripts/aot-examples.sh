#!/usr/bin/env bash
# Packages of the examples (docs/aot.md) for their C host programs (examples/c, TRI_PACKAGE_DIR):
# one OUT_DIR/<example>.tripkg per example, holding the specializations its program asks for
# (keep this list in step with examples/c/*.c), for the targets and machines the extra arguments
# name (tri aot's options; default: cuda for sm_80 and sm_90a with cubins where ptxas is, and cpu
# for x86-64-v2, -v3 and -v4).
#   scripts/aot-examples.sh OUT_DIR [tri aot options...]
# TRI_TOOL names the tri binary (default: build/tools/tri).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scripts/aot-examples.sh OUT_DIR [tri aot options...]}
shift
tri=${TRI_TOOL:-$root/build/tools/tri}
mkdir -p "$out"
specs=(
  "vector_add vector_add:BLOCK=4096"
  "gelu gelu:BLOCK=4096"
  "softmax softmax:BLOCK=1024"
  "layernorm layernorm:BLOCK=512"
  "matmul_leaky_relu matmul_leaky_relu:BM=64,BN=64,BK=32"
  "flash_attention flash_attention:BLOCK_M=64,BLOCK_N=32,HEAD_DIM=64,CAUSAL=0 flash_attention:BLOCK_M=64,BLOCK_N=32,HEAD_DIM=64,CAUSAL=1"
  "cumsum cumsum:BLOCK=1024"
  "histogram histogram:BLOCK=1024,NUM_BINS=256"
  "argmax argmax:BLOCK=1024"
  "allgather_gemm allgather_gemm:BM=16,BN=32,BK=16"
  "gemm_reduce_scatter gemm_reduce_scatter:BM=8,BN=32,BK=16"
)
for spec in "${specs[@]}"; do
  read -r name kernels <<<"$spec"
  args=()
  for k in $kernels; do args+=(--kernel "$k"); done
  "$tri" aot "$root/examples/$name.tri" -o "$out/$name.tripkg" "${args[@]}" "$@" 2>"$out/$name.log" ||
    { cat "$out/$name.log" >&2; exit 1; }
done
echo "aot-examples: ${#specs[@]} packages in $out"
