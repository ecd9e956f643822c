"""Matmul on tensor cores: Tri's examples/matmul_leaky_relu.tri next to the same kernel in Triton
(Triton's tutorial matmul with the leaky-ReLU epilogue, bench/gpu/anchors.py) and torch.matmul
(cuBLAS), in one process on one GPU. The plain rows ("matmul f16 4096^3") run both kernels
without their epilogue (Tri's example with its epilogue section cut out, plain_matmul_text;
Triton's with LEAKY=False) against cuBLAS; the fused row ("matmul f16 4096^3 leaky-ReLU
epilogue") runs them with it, against Triton and Tri's own plain kernel. Every Tri result is
checked against torch before it is timed; each implementation runs its best of a few block
configurations, all listed in the output. TFLOP/s = 2 M N K / median time (triton.testing.do_bench).

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

# (BM, BN, BK, GROUP_M, num_warps, num_stages): the configurations that won some shape in earlier
# runs of a longer list (bench/results/matmul-2026-11-27-61a65ca.md has all twelve).
TRI_CONFIGS = [(128, 256, 64, 8, 8, 3), (256, 128, 64, 8, 8, 3), (128, 256, 64, 8, 8, 4), (128, 128, 32, 8, 4, 4),
               (64, 128, 64, 8, 4, 4), (128, 128, 64, 8, 4, 3), (64, 128, 32, 8, 4, 3), (128, 128, 64, 8, 8, 3),
               (128, 256, 64, 16, 8, 3)]


def plain_matmul_text(text):
    """The example without its epilogue: the accumulator rounded to the output type directly."""
    a = text.index("  // ---- epilogue")
    b = text.index("  // ---- c_ptrs")
    return text[:a] + "  %c_tile = fptrunc %acc : <BM x BN x f16>\n\n" + text[b:]


def tri_matmul(k, x, w, out, bm, bn, stream):
    """The launch of Tri's compiled kernel k (BM = bm, BN = bn) computing out from x @ w, on the
    stream stream() returns."""
    M, K = x.shape
    N = w.shape[1]
    args = k.args(x, w, out, ("i32", M), ("i32", N), ("i32", K), ("i32", x.stride(0)), ("i32", x.stride(1)),
                  ("i32", w.stride(0)), ("i32", w.stride(1)), ("i32", out.stride(0)), ("i32", out.stride(1)))
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    return lambda: k.launch(grid, args, stream())


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
    # The bf16 rows run the same kernels with their f16 types spelled bf16.
    mods = {}
    for dt_name in ("f16", "bf16"):
        for leaky in (False, True):
            t = text if leaky else plain_matmul_text(text)
            mods[(dt_name, leaky)] = tri.module(t.replace("f16", dt_name), f"matmul_{dt_name}_{int(leaky)}.tri")
    stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    sizes = [int(x) for x in a.sizes.split(",")]
    # (dtype, M, N, K, leaky)
    cases = [("f16", s, s, s, False) for s in sizes] + [("f16", 8192, 8192, 512, False)]
    # The fused row at 4096^3 (the row), or the largest size asked for; its plain row is there too.
    fs = 4096 if 4096 in sizes else max(sizes)
    cases += [("bf16", s, s, s, False) for s in sizes] + [("f16", fs, fs, fs, True)]
    rows, lines = [], []
    kernels, tri_best = {}, {}
    for dt_name, M, N, K, leaky in cases:
        dt = torch.float16 if dt_name == "f16" else torch.bfloat16
        x = torch.randn(M, K, device="cuda", dtype=dt)
        w = torch.randn(K, N, device="cuda", dtype=dt)
        ref = torch.matmul(x, w).float()
        if leaky:
            ref = torch.nn.functional.leaky_relu(ref, 0.01)
        flops = 2 * M * N * K
        best = None
        for cfg in TRI_CONFIGS:
            bm, bn, bk, gm, nw, ns = cfg
            key = (dt_name, leaky) + cfg
            if key not in kernels:
                kernels[key] = tri.compile(mods[(dt_name, leaky)], "matmul_leaky_relu",
                                           {"BM": bm, "BN": bn, "BK": bk, "GROUP_M": gm}, num_warps=nw, num_stages=ns)
            k = kernels[key]
            out = torch.empty(M, N, device="cuda", dtype=dt)
            f = tri_matmul(k, x, w, out, bm, bn, stream)
            f()
            torch.cuda.synchronize()
            err = ((out.float() - ref).abs() / (ref.abs() + 1)).max().item()
            if err > 2e-2:
                raise AssertionError(f"matmul {M}x{N}x{K} config {cfg}: max relative error {err}")
            tf = flops / bench(f) / 1e9
            tag = f"{dt_name} {M}x{N}x{K}{' leaky' if leaky else ''}"
            lines.append(f"  tri {tag} {cfg}: {tf:.0f} TFLOP/s (max rel err {err:.1e})")
            print(lines[-1], flush=True)
            if best is None or tf > best[0]:
                best = (tf, cfg)
        tri_best[(dt_name, M, N, K, leaky)] = best[0]
        out = torch.empty(M, N, device="cuda", dtype=dt)
        anchors.triton_matmul(x, w, out, leaky)
        torch.cuda.synchronize()
        assert ((out.float() - ref).abs() / (ref.abs() + 1)).max().item() < 2e-2, "Triton's matmul differs from torch"
        tt = flops / bench(lambda: anchors.triton_matmul(x, w, out, leaky)) / 1e9
        cb = flops / bench(lambda: torch.matmul(x, w)) / 1e9
        shape = f"{M}^3" if M == N == K else f"{M}x{N}x{K}"
        name = f"matmul {dt_name} {shape}" + (" leaky-ReLU epilogue" if leaky else "")
        r = {"workload": name, "unit": "TFLOP/s", "higher_is_better": True, "tri": best[0], "triton": tt,
             "cublas": cb, "target": tt if leaky else cb, "tri_config": list(best[1])}
        if leaky:  # the fused kernel against Tri's plain one (target: >= 0.95)
            r["tri_plain"] = tri_best[(dt_name, M, N, K, False)]
            r["fused_over_plain"] = best[0] / r["tri_plain"]
        rows.append(r)
        print(f"  {name}: tri {best[0]:.0f} {best[1]}, triton {tt:.0f}, cublas {cb:.0f}", flush=True)
    table = report.write(a.out, "matmul", a.commit, rows, lines, "BM, BN, BK, GROUP_M, warps, stages", "cublas",
                         "cuBLAS")
    for r in rows:
        if "tri_plain" in r:
            print(f"{r['workload']}: fused {r['tri']:.0f} / plain {r['tri_plain']:.0f} TFLOP/s = "
                  f"{r['fused_over_plain']:.2f} (target 0.95); Tri/Triton {r['tri'] / r['triton']:.2f} (target 1.0)")
    return table


if __name__ == "__main__":
    main()
