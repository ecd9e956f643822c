"""Cold compile of each example on the "cuda" target, in one process, broken into the stages that
Tri reports through its log sink at TRI_LOG_DEBUG: the IR passes, lowering to LLVM, LLVM's O3,
printing the optimized LLVM IR (kept for tri_kernel_code), NVPTX code generation, the driver's
JIT to a cubin, and the disk cache's store (write, fsync, rename). No torch and no Triton: the
compile alone, with the configurations of run.py.

usage: python3 bench/gpu/compile_times.py [--cache DIR | --no-cache] [--reverse] [--repeat N]
       [--arch sm_90] [--json FILE]
Each compile uses a fresh context, and (unless --cache names one) a fresh cache directory under
$TMPDIR, so every compile is cold (one untimed compile first takes CUDA's own start-up).
--reverse compiles the examples in the opposite order, to see whether a compile's time depends
on what the process compiled before it."""
import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from tri_ctypes import STAGES, Tri, stage_times  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")

# (example, constexprs, num_warps): the configurations bench/gpu/run.py measures.
CONFIGS = [
    ("vector_add", {"BLOCK": 1024}, 4),
    ("gelu", {"BLOCK": 1024}, 4),
    ("softmax", {"BLOCK": 1024}, 4),
    ("layernorm", {"BLOCK": 4096}, 8),
    ("cumsum", {"BLOCK": 1024}, 4),
    ("argmax", {"BLOCK": 1024}, 4),
    ("histogram", {"BLOCK": 1024, "NUM_BINS": 64}, 4),
]


def compile_once(name, consts, warps, cache_dir, arch):
    """One cold compile in a fresh context; returns (total ms, {stage: ms})."""
    lines = []
    tri = Tri(log=lambda level, msg: lines.append(msg), cache_dir=cache_dir)
    with open(os.path.join(ROOT, "examples", name + ".tri"), "rb") as f:
        mod = tri.module(f.read(), name + ".tri")
    t0 = time.perf_counter()
    k = tri.compile(mod, name, consts, num_warps=warps, arch=arch)
    total = (time.perf_counter() - t0) * 1e3
    tri.lib.tri_kernel_destroy(k.k)
    tri.lib.tri_module_destroy(mod)
    tri.lib.tri_context_destroy(tri.ctx)
    return total, stage_times(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default=None, help="cache directory (default: a fresh one per compile)")
    ap.add_argument("--no-cache", action="store_true", help="disk cache off")
    ap.add_argument("--reverse", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", default=None)
    ap.add_argument("--arch", default=None, help="compile for this architecture (no driver JIT) instead of the GPU's")
    a = ap.parse_args()
    configs = list(reversed(CONFIGS)) if a.reverse else CONFIGS
    rows = []
    # CUDA's own start (cuInit, the primary context: ~200 ms) would land in the first compile:
    # one untimed compile of a small kernel takes it first.
    compile_once("vector_add", {"BLOCK": 128}, 4, "", a.arch)
    print("| example | total ms | " + " | ".join(STAGES) + " |")
    print("|---|---|" + "---|" * len(STAGES))
    for rep in range(a.repeat):
        for name, consts, warps in configs:
            cache = "" if a.no_cache else a.cache or tempfile.mkdtemp(prefix="tri-cold-")
            total, st = compile_once(name, consts, warps, cache, a.arch)
            rows.append({"example": name, "repeat": rep, "total_ms": total, **st})
            print(f"| {name} | {total:.1f} | " + " | ".join(f"{st[s]:.1f}" if s in st else "-" for s in STAGES) +
                  " |", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
