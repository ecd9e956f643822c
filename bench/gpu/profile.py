"""Where the time goes in each row of the tensor-core tables (bench/gpu/matmul.py, attention.py):
one launch each of Tri's kernel, Triton's and the library's (cuBLAS through torch.matmul, SDPA)
under Nsight Compute with --clock-control none, reporting duration, tensor-pipe utilization
(wgmma: gmma, mma.sync: hmma), SM and DRAM throughput, L2 hit rate, instructions executed, warp
cycles per issued instruction, and the stall reasons that cost each kernel most (cycles per
issued instruction).

usage: python3 bench/gpu/profile.py [--out DIR] [--ncu PATH] [--commit SHA]
  runs itself under ncu (--child), profiling only the launches between cudaProfilerStart and
  Stop (every kernel is compiled and tuned before), and writes DIR/profile.md and profile.json.
Tri's configurations are the ones its benchmarks picked most often (TRI_MATMUL / TRI_ATTENTION
below); Triton's are pinned the same way so that the search is not profiled."""
import argparse
import csv
import io
import json
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
HERE = os.path.dirname(os.path.abspath(__file__))

# row -> (dtype, M, N, K, leaky, Tri config (BM, BN, BK, GROUP_M, warps, stages), Triton config)
MATMUL_ROWS = {
    "matmul f16 1024^3": ("f16", 1024, 1024, 1024, False, (64, 128, 64, 8, 4, 4), (128, 128, 64, 8, 4, 4)),
    "matmul f16 4096^3": ("f16", 4096, 4096, 4096, False, (128, 256, 64, 8, 8, 3), (128, 256, 64, 8, 8, 3)),
    "matmul f16 8192^3": ("f16", 8192, 8192, 8192, False, (128, 256, 64, 16, 8, 3), (128, 256, 64, 8, 8, 3)),
    "matmul f16 8192x8192x512": ("f16", 8192, 8192, 512, False, (128, 128, 32, 8, 4, 4), (128, 128, 64, 8, 4, 4)),
    "matmul bf16 1024^3": ("bf16", 1024, 1024, 1024, False, (64, 128, 64, 8, 4, 4), (128, 128, 64, 8, 4, 4)),
    "matmul bf16 4096^3": ("bf16", 4096, 4096, 4096, False, (128, 256, 64, 8, 8, 3), (128, 256, 64, 8, 8, 3)),
    "matmul bf16 8192^3": ("bf16", 8192, 8192, 8192, False, (128, 256, 64, 16, 8, 3), (128, 256, 64, 8, 8, 3)),
    "matmul f16 4096^3 leaky-ReLU epilogue": ("f16", 4096, 4096, 4096, True, (128, 256, 64, 8, 8, 3),
                                              (128, 256, 64, 8, 8, 3)),
}
# row -> (causal, Tri config (BLOCK_M, BLOCK_N, warps, stages)); shape B4 H32 L4096 D128
ATTENTION_ROWS = {"attention f16 full": (False, (128, 128, 8, 3)), "attention f16 causal": (True, (128, 128, 8, 3))}

# What each implementation's kernels are called (the library ones vary by version).
NAMES = {"tri-matmul": "matmul_leaky_relu", "triton-matmul": "matmul_kernel", "cublas": "gemm|nvjet|xmma|cutlass|sm90",
         "tri-attention": "flash_attention", "triton-attention": "attention_kernel",
         "sdpa": "flash|fmha|attention|sdpa|cudnn|sm90"}

BASE_METRICS = ["gpu__time_duration.sum", "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
                "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
                "sm__throughput.avg.pct_of_peak_sustained_elapsed", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                "lts__t_sector_hit_rate.pct", "smsp__inst_executed.sum", "smsp__average_warp_latency_per_inst_issued.ratio"]
STALLS = ["barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "lg_throttle", "long_scoreboard",
          "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction", "not_selected", "selected",
          "short_scoreboard", "sleeping", "tex_throttle", "wait"]


def stall_metric(reason):
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


def child(manifest_path):
    import torch
    sys.path.insert(0, HERE)
    import anchors
    from attention import tri_attention
    from matmul import plain_matmul_text, tri_matmul
    from tri_ctypes import Tri
    tri = Tri()
    stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    with open(os.path.join(ROOT, "examples", "matmul_leaky_relu.tri")) as f:
        text = f.read()
    launches = []  # (row, impl, name pattern, fn)
    torch.manual_seed(0)
    for row, (dt_name, M, N, K, leaky, cfg, tcfg) in MATMUL_ROWS.items():
        dt = torch.float16 if dt_name == "f16" else torch.bfloat16
        x = torch.randn(M, K, device="cuda", dtype=dt)
        w = torch.randn(K, N, device="cuda", dtype=dt)
        out = torch.empty(M, N, device="cuda", dtype=dt)
        src = (text if leaky else plain_matmul_text(text)).replace("f16", dt_name)
        bm, bn, bk, gm, nw, ns = cfg
        k = tri.compile(tri.module(src, f"{row}.tri"), "matmul_leaky_relu", {"BM": bm, "BN": bn, "BK": bk, "GROUP_M": gm},
                        num_warps=nw, num_stages=ns)
        launches.append((row, "tri", NAMES["tri-matmul"], tri_matmul(k, x, w, out, bm, bn, stream)))

        def triton_run(x=x, w=w, out=out, leaky=leaky, tcfg=tcfg):
            os.environ["TRI_BENCH_TRITON_MM_CONFIG"] = ",".join(str(v) for v in tcfg)
            anchors._matmul_best.clear()
            anchors.triton_matmul(x, w, out, leaky)
        launches.append((row, "triton", NAMES["triton-matmul"], triton_run))
        if not leaky:
            launches.append((row, "cublas", NAMES["cublas"], lambda x=x, w=w: torch.matmul(x, w)))
    B, H, L, D = 4, 32, 4096, 128
    q, kk, v = (torch.randn(B, H, L, D, device="cuda", dtype=torch.float16) for _ in range(3))
    with open(os.path.join(ROOT, "examples", "flash_attention.tri")) as f:
        amod = tri.module(f.read(), "flash_attention.tri")
    for row, (causal, cfg) in ATTENTION_ROWS.items():
        fn, o = tri_attention(tri, amod, q, kk, v, causal, cfg, stream)
        launches.append((row, "tri", NAMES["tri-attention"], fn))
        launches.append((row, "triton", NAMES["triton-attention"],
                         lambda o=o, c=causal: anchors.triton_attention(q, kk, v, o, c)))
        launches.append((row, "sdpa", NAMES["sdpa"],
                         lambda c=causal: torch.nn.functional.scaled_dot_product_attention(q, kk, v, is_causal=c)))
    for _, _, _, fn in launches:  # compile, tune, warm
        fn()
        fn()
    torch.cuda.synchronize()
    with open(manifest_path, "w") as f:
        json.dump([[r, i, p] for r, i, p, _ in launches], f)
    torch.cuda.cudart().cudaProfilerStart()
    for _, _, _, fn in launches:
        fn()
        torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def num(s):
    try:
        return float(str(s).replace(",", ""))
    except ValueError:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--commit", default="")
    ap.add_argument("--child", default="")
    a = ap.parse_args()
    if a.child:
        return child(a.child)
    os.makedirs(a.out, exist_ok=True)
    manifest = os.path.join(a.out, "profile-manifest.json")
    metrics = BASE_METRICS + [stall_metric(s) for s in STALLS]
    # Only the metrics this ncu knows on this GPU (one unknown name fails the whole run).
    q = subprocess.run([a.ncu, "--query-metrics"], capture_output=True, text=True)
    if q.returncode == 0 and q.stdout:
        known = set(re.findall(r"^(\S+)", q.stdout, re.M))
        kept = [m for m in metrics if m.split(".")[0] in known]
        print(f"metrics this ncu does not know, left out: {sorted(set(metrics) - set(kept))}")
        metrics = kept
    cmd = [a.ncu, "--clock-control", "none", "--profile-from-start", "off", "--csv", "--page", "raw", "--metrics",
           ",".join(metrics), sys.executable, os.path.abspath(__file__), "--child", manifest]
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(a.out, "profile-ncu.log"), "w") as f:
        f.write(p.stdout + "\n---- stderr\n" + p.stderr)
    if p.returncode != 0:
        sys.exit(f"ncu failed ({p.returncode}); see {a.out}/profile-ncu.log")
    lines = p.stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    records = list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))[1:]  # the second line gives units
    with open(manifest) as f:
        want = json.load(f)
    results, at = [], 0
    for row, impl, pattern in want:  # each launch's kernel, in launch order
        while at < len(records) and not re.search(pattern, records[at]["Kernel Name"]):
            at += 1
        if at == len(records):
            results.append({"row": row, "impl": impl, "kernel": None})
            continue
        r = records[at]
        at += 1
        m = {k: num(r.get(k)) for k in metrics}
        stalls = sorted(((s, m[stall_metric(s)]) for s in STALLS if m.get(stall_metric(s)) is not None and s != "selected"),
                        key=lambda x: -x[1])
        results.append({"row": row, "impl": impl, "kernel": r["Kernel Name"][:60], "metrics": m,
                        "top_stalls": stalls[:4]})
    table = [f"Nsight Compute (--clock-control none), commit {a.commit}: one launch each, after warm-up.", "",
             "| row | impl | kernel | us | tensor pipe % (gmma / hmma) | SM % | DRAM % | L2 hit % | warp inst (M) | "
             "cycles/issue | top stalls (cycles per issue) |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if r["kernel"] is None:
            table.append(f"| {r['row']} | {r['impl']} | (not found) | | | | | | | | |")
            continue
        m = r["metrics"]
        f = lambda k, d=1: "-" if m.get(k) is None else f"{m[k]:.{d}f}"  # noqa: E731
        dur = m.get("gpu__time_duration.sum")
        dur_us = "-" if dur is None else f"{dur / 1000:.1f}"  # ns
        inst = "-" if m.get("smsp__inst_executed.sum") is None else f"{m['smsp__inst_executed.sum'] / 1e6:.1f}"
        st = ", ".join(f"{s} {v:.2f}" for s, v in r["top_stalls"])
        table.append(f"| {r['row']} | {r['impl']} | `{r['kernel']}` | {dur_us} | "
                     f"{f('sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active')} / "
                     f"{f('sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active')} | "
                     f"{f('sm__throughput.avg.pct_of_peak_sustained_elapsed')} | "
                     f"{f('dram__throughput.avg.pct_of_peak_sustained_elapsed')} | {f('lts__t_sector_hit_rate.pct')} | "
                     f"{inst} | {f('smsp__average_warp_latency_per_inst_issued.ratio', 2)} | {st} |")
    with open(os.path.join(a.out, "profile.json"), "w") as f:
        json.dump({"commit": a.commit, "command": "python3 bench/gpu/profile.py", "results": results}, f, indent=1)
    with open(os.path.join(a.out, "profile.md"), "w") as f:
        f.write("\n".join(table) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
