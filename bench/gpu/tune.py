"""Autotuning time on the GPU: Tri's tri_tune (through the Python binding) next to Triton's
autotuner on the same configs, for matmul f16 4096^3 (examples/matmul_leaky_relu.tri; Triton's
tutorial kernel with the same epilogue, bench/gpu/anchors.py) and softmax f32 4096x4096
(examples/softmax.tri; anchors.softmax_kernel) over BLOCK x num_warps.

Each measurement is its own process, so nothing in memory helps:
  cold: an empty cache directory; the time from creating the context (Tri) or the first call of
        the autotuned kernel (Triton) until the tuned kernel's first launch has finished:
        compiling every config, benchmarking them and choosing.
  warm: a new process with the same cache directory (Tri's results and kernels on disk; Triton's
        kernel cache and, with cache_results=True, its autotuning results); the median of three.
Then, in this process, every config is timed separately (triton.testing.do_bench, L2 cleared,
median) and the config Tri chose is compared with the fastest: the "chosen/best" ratio.

usage: python3 bench/gpu/tune.py [--out DIR] [--commit SHA] [--reps N]
Writes DIR/tune-bench.json (PERF.md's shape) and DIR/tune-bench.md; prints the table last."""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")

# (BM, BN, BK, GROUP_M, num_warps, num_stages): Triton's tutorial configs for H100 and Tri's own.
MATMUL_CONFIGS = [(128, 256, 64, 8, 8, 3), (128, 128, 64, 8, 4, 4), (64, 256, 32, 8, 4, 4), (128, 128, 32, 8, 4, 4),
                  (128, 128, 32, 8, 4, 3), (128, 256, 32, 8, 8, 3), (128, 128, 64, 8, 8, 3), (64, 128, 32, 8, 4, 3)]
SOFTMAX_CONFIGS = [(block, warps) for block in (4096, 8192) for warps in (4, 8, 16)]
M = N = K = 4096
ROWS, COLS = 4096, 4096


def cdiv(a, b):
    return (a + b - 1) // b


def inputs(workload):
    import torch
    torch.manual_seed(0)
    if workload == "matmul":
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        return a, b, c
    x = torch.randn(ROWS, COLS, device="cuda", dtype=torch.float32)
    return x, torch.empty_like(x)


def check(workload, bufs):
    import torch
    if workload == "matmul":
        a, b, c = bufs
        ref = torch.nn.functional.leaky_relu(torch.matmul(a, b).float(), 0.01)
        err = ((c.float() - ref).abs() / (ref.abs() + 1)).max().item()
        assert err < 2e-2, f"matmul: max relative error {err}"
    else:
        x, out = bufs
        err = (out - torch.softmax(x, dim=1)).abs().max().item()
        assert err < 1e-5, f"softmax: max abs error {err}"


# ---- Tri

def tri_space(workload):
    if workload == "matmul":
        return [{"BM": bm, "BN": bn, "BK": bk, "GROUP_M": g, "num_warps": w, "num_stages": s}
                for bm, bn, bk, g, w, s in MATMUL_CONFIGS]
    return [{"BLOCK": b, "num_warps": w, "num_stages": 1} for b, w in SOFTMAX_CONFIGS]


def tri_call(workload, bufs):
    """(file, kernel, args, grid function of a config, key parameter names)."""
    if workload == "matmul":
        a, b, c = bufs
        args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
        return ("matmul_leaky_relu.tri", "matmul_leaky_relu", args,
                lambda cfg: (cdiv(M, cfg["BM"]) * cdiv(N, cfg["BN"]),), ("M", "N", "K"))
    x, out = bufs
    return ("softmax.tri", "softmax", (out, x, x.stride(0), out.stride(0), COLS), lambda cfg: (ROWS,), ("n_cols",))


def child_tri(workload, cache_dir, reps):
    import torch
    import tri
    bufs = inputs(workload)
    path, kernel, args, grid, key = tri_call(workload, bufs)
    with open(os.path.join(ROOT, "examples", path)) as f:
        text = f.read()
    stream = torch.cuda.current_stream()
    lines = []
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    ctx = tri.Context(cache_dir=cache_dir, log=lambda level, msg: lines.append(msg), log_level=tri.LogLevel.INFO)
    t1 = time.perf_counter()
    mod = ctx.module(text, path)
    t2 = time.perf_counter()
    space = tri_space(workload)
    k, res = mod.tune(kernel, space, *args, grid=grid, options=tri.CompileOptions(target="cuda"), key=key,
                      repetitions=reps, stream=stream)
    t3 = time.perf_counter()
    k.launch(grid(space[res["best"]]), *args, stream=stream)
    torch.cuda.synchronize()
    t4 = time.perf_counter()
    seconds = t4 - t0
    check(workload, bufs)
    stat = ctx.tune_stat()
    return {"seconds": seconds, "best": res["best"], "source": res["source"], "trials": stat["trials"],
            "phases_ms": {"context": (t1 - t0) * 1e3, "module": (t2 - t1) * 1e3, "tune": (t3 - t2) * 1e3,
                          "first launch": (t4 - t3) * 1e3},
            "log": [m for m in lines if "chose config" in m or "new variant" in m],
            "medians_us": [c.get("median_ns", 0) / 1e3 for c in res["configs"]],
            "errors": [c.get("error", "") for c in res["configs"] if c.get("status", 0) != 0]}


# ---- Triton

def triton_kernel(workload, cache_results):
    import triton
    sys.path.insert(0, HERE)
    import anchors
    if workload == "matmul":
        configs = [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": g}, num_warps=w, num_stages=s)
                   for bm, bn, bk, g, w, s in MATMUL_CONFIGS]
        key, fn = ["M", "N", "K"], anchors.matmul_kernel
    else:
        configs = [triton.Config({"BLOCK": b}, num_warps=w, num_stages=1) for b, w in SOFTMAX_CONFIGS]
        key, fn = ["n_cols"], anchors.softmax_kernel
    try:
        return triton.autotune(configs=configs, key=key, cache_results=cache_results)(fn), cache_results
    except TypeError:  # a Triton without cache_results
        return triton.autotune(configs=configs, key=key)(fn), False


def child_triton(workload, cache_dir):
    os.environ["TRITON_CACHE_DIR"] = cache_dir
    import torch
    import triton
    bufs = inputs(workload)
    kernel, cached = triton_kernel(workload, True)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    if workload == "matmul":
        a, b, c = bufs
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)  # noqa: E731
        kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    else:
        x, out = bufs
        kernel[(ROWS,)](out, x, x.stride(0), out.stride(0), COLS)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    check(workload, bufs)
    best = kernel.best_config
    return {"seconds": seconds, "best": str(best), "cache_results": cached}


def spawn(kind, workload, cache_dir, reps):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, "--workload", workload, "--cache", cache_dir,
           "--reps", str(reps)]
    # The driver's own JIT cache (~/.nv/ComputeCache) would make a "cold" Tri run warm: off.
    env = dict(os.environ, CUDA_CACHE_DISABLE="1") if kind == "tri" else None
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{kind} {workload} child failed:\n{p.stdout}\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


# ---- every Tri config timed separately

def separately(workload):
    import torch
    import tri
    from triton.testing import do_bench
    bufs = inputs(workload)
    path, kernel, args, grid, _ = tri_call(workload, bufs)
    with open(os.path.join(ROOT, "examples", path)) as f:
        text = f.read()
    ctx = tri.Context(cache_dir=tempfile.mkdtemp(prefix="tri-tune-sep-"))
    mod = ctx.module(text, path)
    stream = torch.cuda.current_stream()
    times = []
    for cfg in tri_space(workload):
        consts = {k: v for k, v in cfg.items() if k not in ("num_warps", "num_stages")}
        k = mod.compile(kernel, tri.CompileOptions(target="cuda", constexprs=consts, num_warps=cfg["num_warps"],
                                                   num_stages=cfg["num_stages"]))
        g = grid(cfg)
        times.append(do_bench(lambda k=k, g=g: k.launch(g, *args, stream=stream), warmup=25, rep=200,
                              return_mode="median") * 1e3)
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--commit", default="")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--child", choices=["tri", "triton"])
    ap.add_argument("--workload", choices=["matmul", "softmax"])
    ap.add_argument("--cache")
    a = ap.parse_args()
    if a.child == "tri":
        print(json.dumps(child_tri(a.workload, a.cache, a.reps)))
        return
    if a.child == "triton":
        print(json.dumps(child_triton(a.workload, a.cache)))
        return

    import torch
    import triton
    rows, lines = [], []
    for workload in ("matmul", "softmax"):
        tri_dir = tempfile.mkdtemp(prefix="tri-tune-")
        triton_dir = tempfile.mkdtemp(prefix="triton-tune-")
        tri_cold = spawn("tri", workload, tri_dir, a.reps)
        # Warm: the median of three new processes (one process's time varies by about 10%).
        warms = sorted((spawn("tri", workload, tri_dir, a.reps) for _ in range(3)), key=lambda r: r["seconds"])
        tri_warm = warms[1]
        tt_cold = spawn("triton", workload, triton_dir, a.reps)
        tt_warm = sorted((spawn("triton", workload, triton_dir, a.reps) for _ in range(3)), key=lambda r: r["seconds"])[1]
        assert tri_warm["source"] == "stored" and tri_warm["trials"] == 0, tri_warm
        sep = separately(workload)
        fastest = min(range(len(sep)), key=lambda i: sep[i])
        ratio = sep[tri_cold["best"]] / sep[fastest]
        space = tri_space(workload)
        n = len(space)
        shape = "f16 4096^3" if workload == "matmul" else "f32 4096x4096"
        rows.append({"workload": f"tune {workload} cold", "shape": shape, "configs": n, "unit": "s",
                     "higher_is_better": False, "tri": tri_cold["seconds"], "triton": tt_cold["seconds"],
                     "target": 1.0, "tri_best": tri_cold["best"], "triton_best": tt_cold["best"]})
        rows.append({"workload": f"tune {workload} warm", "shape": shape, "configs": n, "unit": "s",
                     "higher_is_better": False, "tri": tri_warm["seconds"], "triton": tt_warm["seconds"],
                     "tri_runs": [r["seconds"] for r in warms],
                     "target": 0.005, "triton_cache_results": tt_warm["cache_results"]})
        rows.append({"workload": f"tune {workload} chosen/best", "unit": "ratio", "higher_is_better": False,
                     "tri": ratio, "target": 1.03, "chosen": tri_cold["best"], "fastest": fastest,
                     "separately_us": sep, "tuner_medians_us": tri_cold["medians_us"]})
        lines.append(f"{workload} ({shape}), {n} configs:")
        for i, cfg in enumerate(space):
            mark = (" <- Tri's choice" if i == tri_cold["best"] else "") + (" <- fastest alone" if i == fastest else "")
            lines.append(f"  {i}: {cfg}: tuner median {tri_cold['medians_us'][i]:.1f} us, alone {sep[i]:.1f} us{mark}")
        lines.append(f"  Triton chose {tt_cold['best']}")
        for label, run in (("cold", tri_cold), ("warm", tri_warm)):
            phases = ", ".join(f"{k} {v:.1f} ms" for k, v in run["phases_ms"].items())
            lines.append(f"  Tri {label}: {phases}; " + " | ".join(run["log"]))
        for e in tri_cold["errors"]:
            lines.append(f"  skipped: {e}")
        print("\n".join(lines[-(n + 4):]), flush=True)

    commit = a.commit
    res = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(), "commit": commit,
           "command": "python3 bench/gpu/tune.py", "triton": triton.__version__, "torch": torch.__version__,
           "rows": rows}
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "tune-bench.json"), "w") as f:
        json.dump(res, f, indent=1)
    table = [f"GPU: {res['gpu']}, Triton {triton.__version__}, torch {torch.__version__}, commit {commit}", "",
             "| workload | Tri | Triton autotuner | target | Tri/Triton |", "|---|---|---|---|---|"]
    for r in rows:
        if r["unit"] == "s":
            table.append(f"| {r['workload']} ({r['configs']} configs) | {r['tri'] * 1e3:.1f} ms | "
                         f"{r['triton'] * 1e3:.1f} ms | <= {r['target'] * 1e3:g} ms | {r['tri'] / r['triton']:.3f} |")
        else:
            table.append(f"| {r['workload']} | {r['tri']:.3f} (config {r['chosen']}; fastest alone {r['fastest']}) "
                         f"| | <= {r['target']} | |")
    with open(os.path.join(a.out, "tune-bench.md"), "w") as f:
        f.write("\n".join(table + ["", "every configuration:"] + lines) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
