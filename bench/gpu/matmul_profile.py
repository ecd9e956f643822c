"""One launch each of Tri's matmul (examples/matmul_leaky_relu.tri), Triton's (anchors.py) and
cuBLAS (torch.matmul) at f16 4096^3, for Nsight Compute to say where the time goes:

  ncu --clock-control none --section SpeedOfLight --section WarpStateStats \\
      --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active \\
      -k regex:"matmul|gemm|xmma|cutlass" python3 bench/gpu/matmul_profile.py

usage: python3 bench/gpu/matmul_profile.py [--config BM,BN,BK,GROUP_M,warps,stages]"""
import argparse
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.dirname(__file__))
import anchors  # noqa: E402
from tri_ctypes import Tri  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="128,256,64,8,8,3")
    a = ap.parse_args()
    bm, bn, bk, gm, nw, ns = (int(x) for x in a.config.split(","))
    M = N = K = 4096
    torch.manual_seed(0)
    x = torch.randn(M, K, device="cuda", dtype=torch.float16)
    w = torch.randn(K, N, device="cuda", dtype=torch.float16)
    out = torch.empty(M, N, device="cuda", dtype=torch.float16)
    tri = Tri()
    with open(os.path.join(ROOT, "examples", "matmul_leaky_relu.tri")) as f:
        mod = tri.module(f.read(), "matmul_leaky_relu.tri")
    k = tri.compile(mod, "matmul_leaky_relu", {"BM": bm, "BN": bn, "BK": bk, "GROUP_M": gm}, num_warps=nw, num_stages=ns)
    args = k.args(x, w, out, ("i32", M), ("i32", N), ("i32", K), ("i32", K), ("i32", 1), ("i32", N), ("i32", 1),
                  ("i32", N), ("i32", 1))
    stream = torch.cuda.current_stream().cuda_stream
    k.launch((triton.cdiv(M, bm) * triton.cdiv(N, bn),), args, stream)
    os.environ["TRI_BENCH_TRITON_MM_CONFIG"] = a.config
    anchors.triton_matmul(x, w, out)
    torch.matmul(x, w)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
