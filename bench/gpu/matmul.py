"""Matmul on tensor cores: Tri's examples/matmul_leaky_relu.tri next to the same kernel in
Triton (Triton's tutorial matmul with the leaky-ReLU epilogue, bench/gpu/anchors.py) and
torch.matmul (cuBLAS), in one process on one GPU. Every Tri result is checked against torch
before it is timed; each implementation runs its best of a few block configurations, all
listed in the output. TFLOP/s = 2 M N K / median time (triton.testing.do_bench).

usage: python3 bench/gpu/matmul.py [--out DIR] [--commit SHA] [--sizes 1024,4096,8192]
Writes DIR/matmul-bench.json (PERF.md's shape) and DIR/matmul-bench.md; prints the table last."""
import argparse
import os
import sys

import torch
import triton
from triton.testing import do_bench

sys.path.insert(0, os.path.dirname(__file__))
import anchors  # noqa: E402
import report  # noqa: E402
from tri_ctypes import Tri  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")

# (BM, BN, BK, GROUP_M, num_warps, num_stages)
TRI_CONFIGS = [(128, 128, 32, 8, 4, 2), (128, 128, 32, 8, 4, 3), (128, 128, 32, 8, 4, 4), (128, 256, 32, 8, 8, 3),
               (128, 256, 64, 8, 8, 3), (128, 256, 64, 8, 8, 4), (128, 128, 64, 8, 8, 3), (64, 128, 32, 8, 4, 3),
               (128, 128, 64, 8, 4, 4), (256, 128, 64, 8, 8, 3), (64, 128, 64, 8, 4, 4), (128, 128, 64, 8, 4, 3)]


def bench(fn):
    return do_bench(fn, warmup=25, rep=200, return_mode="median")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--commit", default="")
    ap.add_argument("--sizes", default="1024,4096,8192")
    a = ap.parse_args()
    import tempfile
    os.environ["TRI_CACHE_DIR"] = tempfile.mkdtemp(prefix="tri-bench-cache-")
    torch.manual_seed(0)
    tri = Tri()
    with open(os.path.join(ROOT, "examples", "matmul_leaky_relu.tri")) as f:
        text = f.read()
    # The bf16 rows run the same kernel with its f16 types spelled bf16.
    mods = {"f16": tri.module(text, "matmul_leaky_relu.tri"),
            "bf16": tri.module(text.replace("f16", "bf16"), "matmul_leaky_relu_bf16.tri")}
    stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    shapes = [(s, s, s) for s in (int(x) for x in a.sizes.split(","))] + [(8192, 8192, 512)]
    rows, lines = [], []
    kernels = {}
    for dt_name, dt in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        for (M, N, K) in shapes if dt_name == "f16" else [s for s in shapes if s[0] == s[2]]:
            x = torch.randn(M, K, device="cuda", dtype=dt)
            w = torch.randn(K, N, device="cuda", dtype=dt)
            ref = torch.nn.functional.leaky_relu(torch.matmul(x, w).float(), 0.01)
            flops = 2 * M * N * K
            best = None
            for cfg in TRI_CONFIGS:
                bm, bn, bk, gm, nw, ns = cfg
                key = (dt_name,) + cfg
                if key not in kernels:
                    kernels[key] = tri.compile(mods[dt_name], "matmul_leaky_relu", {"BM": bm, "BN": bn, "BK": bk, "GROUP_M": gm},
                                               num_warps=nw, num_stages=ns)
                k = kernels[key]
                out = torch.empty(M, N, device="cuda", dtype=dt)
                args = k.args(x, w, out, ("i32", M), ("i32", N), ("i32", K), ("i32", x.stride(0)), ("i32", x.stride(1)),
                              ("i32", w.stride(0)), ("i32", w.stride(1)), ("i32", out.stride(0)), ("i32", out.stride(1)))
                grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
                f = lambda k=k, args=args, grid=grid: k.launch(grid, args, stream())  # noqa: E731
                f()
                torch.cuda.synchronize()
                err = ((out.float() - ref).abs() / (ref.abs() + 1)).max().item()
                if err > 2e-2:
                    raise AssertionError(f"matmul {M}x{N}x{K} config {cfg}: max relative error {err}")
                tf = flops / bench(f) / 1e9
                lines.append(f"  tri {cfg}: {tf:.0f} TFLOP/s (max rel err {err:.1e})")
                print(lines[-1], flush=True)
                if best is None or tf > best[0]:
                    best = (tf, cfg)
            out = torch.empty(M, N, device="cuda", dtype=dt)
            tt = flops / bench(lambda: anchors.triton_matmul(x, w, out)) / 1e9
            cb = flops / bench(lambda: torch.matmul(x, w)) / 1e9
            name = f"matmul {dt_name} {M}x{N}x{K} (leaky-ReLU epilogue)"
            r = {"workload": name, "unit": "TFLOP/s", "higher_is_better": True, "tri": best[0], "triton": tt,
                 "cublas": cb, "target": cb, "tri_config": list(best[1])}
            rows.append(r)
            print(f"  {name}: tri {best[0]:.0f} {best[1]}, triton {tt:.0f}, cublas {cb:.0f}", flush=True)
    report.write(a.out, "matmul", a.commit, rows, lines, "BM, BN, BK, GROUP_M, warps, stages", "cublas", "cuBLAS")

if __name__ == "__main__":
    main()
