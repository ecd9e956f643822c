#!/usr/bin/env bash
# Builds and runs the CPU benchmarks (bench/cpu_bench.cpp) in the shipped configuration and writes
# a Markdown table of the results with the ratios the targets are stated in, to stdout and to
# bench/results/cpu-<date>.md. Every row comes from one run of one binary on one machine.
#
# usage: bash bench/run_cpu.sh [extra Google Benchmark flags]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${JOBS:-$(nproc)}
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTRI_STATIC_LLVM=ON -DTRI_BUILD_BENCH=ON >/dev/null
cmake --build build -j "$jobs" --target tri-bench-cpu >/dev/null
json=$(mktemp)
build/bench/tri-bench-cpu --benchmark_min_time=0.5 --benchmark_format=json "$@" >"$json"
out=bench/results/cpu-$(date +%Y-%m-%d).md
python3 bench/cpu_table.py "$json" "$(git rev-parse --short HEAD)" | tee "$out"
rm -f "$json"
echo "written to $out"
