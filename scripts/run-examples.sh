#!/usr/bin/env bash
# The main command of README.md. It builds Tri in its shipped form (Release, LLVM inside
# libtri.so), installs it into build/install, then builds the example host programs in
# examples/c against that installation the way a user's project would (find_package(tri)), and
# runs each on the best backend present: each loads its kernel from examples/*.tri, compiles it,
# launches it, checks the result against plain C and prints its time and rate.
#
# The best backend is the GPU ("cuda") when the machine has an NVIDIA driver and device, else
# the CPU (LLVM ORC JIT). TRI_TARGET=interp runs the reference interpreter instead (slow, exact).
#
# Environment: JOBS (default: nproc); TRI_TARGET (default: cuda when a GPU answers, else cpu).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs=${JOBS:-$(nproc)}
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTRI_STATIC_LLVM=ON -DTRI_SANITIZE=OFF >/dev/null
cmake --build build -j "$jobs" --target tri tri_static tri-tool
cmake --install build --prefix "$PWD/build/install" >/dev/null

# Every example must parse and verify before it runs.
for f in examples/*.tri; do build/tools/tri check "$f"; done
echo "all $(ls examples/*.tri | wc -l) examples verify"

cmake -S examples/c -B build/examples -DCMAKE_PREFIX_PATH="$PWD/build/install" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/examples -j "$jobs" >/dev/null

if [[ -z "${TRI_TARGET:-}" ]]; then
  # A GPU is there when a kernel compiles for the current device (that needs libcuda and a device).
  if build/tools/tri compile examples/vector_add.tri --target cuda -o /dev/null 2>/dev/null; then
    TRI_TARGET=cuda
  else
    TRI_TARGET=cpu
  fi
fi
export TRI_TARGET
echo
printf '%-18s %-6s %-4s %12s\n' example target ok time
bad=0
for name in vector_add gelu softmax layernorm matmul_leaky_relu flash_attention cumsum histogram argmax; do
  if ! "build/examples/$name"; then
    bad=$((bad + 1))
  fi
done
echo
echo "9 example programs, $((9 - bad)) passed, $bad failed"
[[ $bad -eq 0 ]]
