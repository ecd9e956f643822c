#!/usr/bin/env bash
# The GPU benchmarks (bench/gpu/run.py: Tri next to Triton and PyTorch) on a machine with an
# NVIDIA GPU, Python, PyTorch and Triton. It builds Tri in its shipped form when build/ has no
# libtri.so yet (a machine without LLVM can take a build/ made elsewhere), then runs every
# workload and writes gpu-bench.md and gpu-bench.json to OUT (default bench/results/latest).
#
# usage: bash bench/run_gpu.sh [--only NAME]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
lib=${TRI_LIB:-$(ls build/src/libtri.so.0.* 2>/dev/null | head -1 || true)}
if [[ -z "$lib" ]]; then
  bash scripts/install-deps.sh
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTRI_STATIC_LLVM=ON >/dev/null
  cmake --build build -j "$(nproc)" --target tri >/dev/null
  lib=$(ls build/src/libtri.so.0.* | head -1)
fi
out=${OUT:-bench/results/latest}
TRI_LIB=$lib python3 bench/gpu/run.py --out "$out" --commit "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$@"
