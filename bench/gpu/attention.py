"""Attention forward on tensor cores: Tri's examples/flash_attention.tri next to the same algorithm
in Triton (bench/gpu/anchors.py) and PyTorch's fused attention (SDPA), in one process on one GPU,
for f16 Q, K, V of shape [B, H, L, D]. Tri's output is checked against SDPA before it is timed.
TFLOP/s = 4 B H L^2 D / time (half that when causal). Rows are named "attention f16 full" and
"attention f16 causal"; the shape is in their "shape" field (default B4 H32 L4096 D128).

usage: python3 bench/gpu/attention.py [--out DIR] [--commit SHA] [--shape B,H,L,D]
Writes DIR/attention-bench.json (PERF.md's shape) and DIR/attention-bench.md."""
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
# (BLOCK_M, BLOCK_N, warps, stages)
TRI_CONFIGS = [(128, 64, 8, 3), (128, 64, 8, 2), (128, 128, 8, 3), (64, 64, 4, 3)]


def tri_attention(tri, mod, q, k, v, causal, cfg, stream):
    """Tri's kernel at configuration cfg (BLOCK_M, BLOCK_N, warps, stages) on q, k, v [B, H, L, D]:
    its launch function (on the stream stream() returns) and the output it writes."""
    B, H, L, D = q.shape
    bm, bn, nw, ns = cfg
    kern = tri.compile(mod, "flash_attention", {"BLOCK_M": bm, "BLOCK_N": bn, "HEAD_DIM": D, "CAUSAL": int(causal)},
                       num_warps=nw, num_stages=ns)
    o = torch.empty_like(q)
    args = kern.args(q, k, v, o, ("f32", 1.0 / D ** 0.5), ("i32", q.stride(0)), ("i32", q.stride(1)),
                     ("i32", q.stride(2)), ("i32", q.stride(3)), ("i32", H), ("i32", L))
    grid = (triton.cdiv(L, bm), B * H)
    return (lambda: kern.launch(grid, args, stream())), o


def bench(fn):
    return do_bench(fn, warmup=25, rep=200, return_mode="median")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--commit", default="")
    ap.add_argument("--shape", default="4,32,4096,128")
    a = ap.parse_args()
    import tempfile
    os.environ["TRI_CACHE_DIR"] = tempfile.mkdtemp(prefix="tri-bench-cache-")
    B, H, L, D = (int(x) for x in a.shape.split(","))
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, H, L, D, device="cuda", dtype=torch.float16) for _ in range(3))
    tri = Tri()
    with open(os.path.join(ROOT, "examples", "flash_attention.tri")) as f:
        mod = tri.module(f.read(), "flash_attention.tri")
    stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    rows, lines = [], []
    for causal in (False, True):
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        flops = 4 * B * H * L * L * D / (2 if causal else 1)
        best = None
        for cfg in TRI_CONFIGS:
            fn, o = tri_attention(tri, mod, q, k, v, causal, cfg, stream)
            fn()
            torch.cuda.synchronize()
            err = (o.float() - ref.float()).abs().max().item()
            if err > 2e-2:
                raise AssertionError(f"attention causal={causal} config {cfg}: max abs error {err}")
            tf = flops / bench(fn) / 1e9
            lines.append(f"  tri {'causal' if causal else 'full'} {cfg}: {tf:.0f} TFLOP/s (max abs err {err:.1e})")
            print(lines[-1], flush=True)
            if best is None or tf > best[0]:
                best = (tf, cfg)
        o = torch.empty_like(q)
        anchors.triton_attention(q, k, v, o, causal)
        torch.cuda.synchronize()
        assert (o.float() - ref.float()).abs().max().item() < 2e-2, "Triton's attention differs from SDPA"
        tt = flops / bench(lambda: anchors.triton_attention(q, k, v, o, causal)) / 1e9
        sd = flops / bench(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)) / 1e9
        name = f"attention f16 {'causal' if causal else 'full'}"
        rows.append({"workload": name, "shape": f"B{B} H{H} L{L} D{D}", "unit": "TFLOP/s", "higher_is_better": True,
                     "tri": best[0], "triton": tt, "sdpa": sd, "target": sd, "tri_config": list(best[1])})
        print(f"  {name}: tri {best[0]:.0f} {best[1]}, triton {tt:.0f}, sdpa {sd:.0f}", flush=True)
    report.write(a.out, "attention", a.commit, rows, lines, "BLOCK_M, BLOCK_N, warps, stages", "sdpa", "SDPA")

if __name__ == "__main__":
    main()
