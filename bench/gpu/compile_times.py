"""Cold compile of each example on the "cuda" target, in one process, broken into the stages that
Tri reports through its log sink at TRI_LOG_DEBUG: the IR passes, lowering to LLVM, LLVM's O3,
printing the optimized LLVM IR (kept for tri_kernel_code), NVPTX code generation, the driver's
JIT to a cubin, and the disk cache's store (write, fsync, rename). No torch and no Triton: the compile alone, with the configurations of run.py.

usage: python3 bench/gpu/compile_times.py [--cache DIR | --no-cache] [--reverse] [--repeat N]
       [--arch sm_90] [--json FILE]
Each compile uses a fresh context, and (unless --cache names one) a fresh cache directory under
$TMPDIR, so every compile is cold (one untimed compile first takes CUDA's own start-up). --reverse compiles the examples in the opposite order, to
see whether a compile's time depends on what the process compiled before it."""
import argparse
import ctypes
import json
import os
import re
import sys
import tempfile
import time

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
STAGES = ["passes", "lower", "O3", "print", "NVPTX codegen", "driver jit", "disk cache store"]
LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p)


def load():
    lib = ctypes.CDLL(os.path.abspath(os.environ.get("TRI_LIB", "build/src/libtri.so")))
    lib.tri_version.restype = ctypes.c_uint32
    lib.tri_last_error_message.restype = ctypes.c_size_t
    lib.tri_last_error_message.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lib


def check(lib, rc):
    if rc != 0:
        n = lib.tri_last_error_message(None, 0)
        buf = ctypes.create_string_buffer(n)
        lib.tri_last_error_message(buf, n)
        raise RuntimeError(buf.value.decode())


def compile_once(lib, name, consts, warps, cache_dir, arch):
    """One cold compile in a fresh context; returns (total ms, {stage: ms})."""
    lines = []
    sink = LOG_FN(lambda user, level, msg: lines.append(msg.decode()))
    opts = ctypes.c_void_p()
    check(lib, lib.tri_context_options_create(ctypes.byref(opts)))
    check(lib, lib.tri_context_options_set_log(opts, sink, None, ctypes.c_int32(3)))
    check(lib, lib.tri_context_options_set_cache_dir(opts, cache_dir.encode()))
    ctx = ctypes.c_void_p()
    check(lib, lib.tri_context_create(opts, ctypes.c_uint32(lib.tri_version()), ctypes.byref(ctx)))
    lib.tri_context_options_destroy(opts)
    with open(os.path.join(ROOT, "examples", name + ".tri"), "rb") as f:
        text = f.read()
    mod = ctypes.c_void_p()
    check(lib, lib.tri_module_create(ctx, text, ctypes.c_size_t(len(text)), (name + ".tri").encode(),
                                     ctypes.byref(mod)))
    o = ctypes.c_void_p()
    check(lib, lib.tri_compile_options_create(ctypes.byref(o)))
    check(lib, lib.tri_compile_options_set_target(o, b"cuda"))
    check(lib, lib.tri_compile_options_set_num_warps(o, ctypes.c_int32(warps)))
    if arch:
        check(lib, lib.tri_compile_options_set_arch(o, arch.encode()))
    for k, v in consts.items():
        check(lib, lib.tri_compile_options_set_constexpr_int(o, k.encode(), ctypes.c_int64(v)))
    k = ctypes.c_void_p()
    t0 = time.perf_counter()
    check(lib, lib.tri_kernel_compile(mod, name.encode(), o, ctypes.byref(k)))
    total = (time.perf_counter() - t0) * 1e3
    lib.tri_compile_options_destroy(o)
    lib.tri_kernel_destroy(k)
    lib.tri_module_destroy(mod)
    lib.tri_context_destroy(ctx)
    stages = {}
    for line in lines:
        for st in STAGES:
            for m in re.finditer(r"(?:^|[ (,:])" + re.escape(st) + r" ([0-9.]+)(?: ms)?", line):
                stages[st] = stages.get(st, 0.0) + float(m.group(1))
    return total, stages


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default=None, help="cache directory (default: a fresh one per compile)")
    ap.add_argument("--no-cache", action="store_true", help="disk cache off")
    ap.add_argument("--reverse", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", default=None)
    ap.add_argument("--arch", default=None, help="compile for this architecture (no driver JIT) instead of the GPU's")
    a = ap.parse_args()
    lib = load()
    configs = list(reversed(CONFIGS)) if a.reverse else CONFIGS
    rows = []
    # CUDA's own start (cuInit, the primary context: ~200 ms) would land in the first compile:
    # one untimed compile of a small kernel takes it first.
    compile_once(lib, "vector_add", {"BLOCK": 128}, 4, "", a.arch)
    print("| example | total ms | " + " | ".join(STAGES) + " |")
    print("|---|---|" + "---|" * len(STAGES))
    for rep in range(a.repeat):
        for name, consts, warps in configs:
            cache = "" if a.no_cache else a.cache or tempfile.mkdtemp(prefix="tri-cold-")
            total, st = compile_once(lib, name, consts, warps, cache, a.arch)
            rows.append({"example": name, "repeat": rep, "total_ms": total, **st})
            print(f"| {name} | {total:.1f} | " + " | ".join(f"{st[s]:.1f}" if s in st else "-" for s in STAGES) +
                  " |", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
