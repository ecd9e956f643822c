"""Turns Google Benchmark JSON from tri-bench-cpu into the Markdown table bench/run_cpu.sh commits.

The peak estimate is cores x clock x flops per cycle per core, the last from the CPU's vector
extensions (AVX-512: 2 FMA units x 16 f32 x 2; AVX2+FMA: 2 x 8 x 2; otherwise SSE: 2 x 4 x 2).
"""
import json
import os
import platform
import sys

data = json.load(open(sys.argv[1]))
commit = sys.argv[2] if len(sys.argv) > 2 else "?"
rows = {b["name"].replace("/real_time", ""): b for b in data["benchmarks"]}
ctx = data["context"]


def flags():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                return set(line.split(":")[1].split())
    except OSError:
        pass
    return set()


def model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":")[1].strip()
    except OSError:
        pass
    return platform.processor()


f = flags()
per_cycle = 64 if "avx512f" in f else 32 if {"avx2", "fma"} <= f else 16
cores = ctx["num_cpus"]
mhz = ctx["mhz_per_cpu"]
peak = cores * mhz / 1e3 * per_cycle


def ms(name):
    return rows[name]["real_time"]


def gbs(name):
    return rows[name]["bytes_per_second"] / 1e9


print(f"# CPU benchmarks, {ctx['date'][:10]}")
print()
print(f"Machine: {model()}, {cores} cores at {mhz} MHz, load average {ctx.get('load_avg', ['?'])[0]:.2f} "
      f"at the start; commit {commit}; `bash bench/run_cpu.sh`. Each row is the mean wall time "
      f"Google Benchmark reports over >= 0.5 s; all rows come from one run of one binary.")
print()
print("| workload | Tri CPU | reference | ratio | target |")
print("|---|---|---|---|---|")
mem = gbs("BM_memcpy")
for blk in ("1024", "4096"):
    name = f"BM_vector_add_tri/{blk}"
    if name in rows:
        v = gbs(name)
        print(f"| vector add 2^24 f32, BLOCK={blk} (3 arrays) | {v:.2f} GB/s | memcpy 2^24 f32 (2 arrays): "
              f"{mem:.2f} GB/s | {v / mem:.2f}x | >= 0.7x memcpy |")
print(f"| vector add 2^24 f32, plain C loop | — | {gbs('BM_vector_add_c'):.2f} GB/s | "
      f"{gbs('BM_vector_add_tri/4096') / gbs('BM_vector_add_c'):.2f}x | (for scale) |")
sm = ms("BM_softmax_tri")
print(f"| softmax 4096 x 1024 f32, fused | {sm:.2f} ms | unfused C (5 passes): {ms('BM_softmax_c_unfused'):.2f} ms | "
      f"{ms('BM_softmax_c_unfused') / sm:.2f}x faster | faster than unfused C |")
print(f"| softmax 4096 x 1024 f32, fused | {sm:.2f} ms | fused C loop, 1 thread: {ms('BM_softmax_c_fused'):.2f} ms | "
      f"{ms('BM_softmax_c_fused') / sm:.2f}x faster | (for scale) |")
for name, b in rows.items():
    if name.startswith("BM_matmul_f32_tri/"):
        tiles = name.split("/")[1:]
        g = b["GFLOP/s"] / 1e9 if b["GFLOP/s"] > 1e6 else b["GFLOP/s"]
        print(f"| matmul f32 512^3, BM/BN/BK = {'/'.join(tiles)} | {g:.1f} GFLOP/s ({b['real_time']:.2f} ms) | "
              f"peak estimate {peak:.0f} GFLOP/s | {g / peak:.0%} of peak | reported |")
print()
print("Notes: Tri runs program instances on the context's thread pool (all cores); the C references")
print("run on one thread. Debian's libbenchmark is a debug build (its warning), which does not")
print("affect the timed code. The machine is shared, so absolute numbers move between runs; the")
print("ratios come from one run.")
