"""One launch each of Tri's flash attention (examples/flash_attention.tri) and Triton's
(anchors.py) at f16 B4 H32 L4096 D128, full or causal, for Nsight Compute:

  ncu --clock-control none --section SpeedOfLight --section WarpStateStats \\
      -k regex:"attention" python3 bench/gpu/attention_profile.py [--causal]

usage: python3 bench/gpu/attention_profile.py [--causal] [--config BLOCK_M,BLOCK_N,warps,stages]"""
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
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--config", default="128,128,8,3")
    a = ap.parse_args()
    bm, bn, nw, ns = (int(x) for x in a.config.split(","))
    B, H, L, D = 4, 32, 4096, 128
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, H, L, D, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    tri = Tri()
    with open(os.path.join(ROOT, "examples", "flash_attention.tri")) as f:
        mod = tri.module(f.read(), "flash_attention.tri")
    kern = tri.compile(mod, "flash_attention", {"BLOCK_M": bm, "BLOCK_N": bn, "HEAD_DIM": D, "CAUSAL": int(a.causal)},
                       num_warps=nw, num_stages=ns)
    args = kern.args(q, k, v, o, ("f32", 1.0 / D ** 0.5), ("i32", q.stride(0)), ("i32", q.stride(1)),
                     ("i32", q.stride(2)), ("i32", q.stride(3)), ("i32", H), ("i32", L))
    kern.launch((triton.cdiv(L, bm), B * H), args, torch.cuda.current_stream().cuda_stream)
    anchors.triton_attention(q, k, v, o, a.causal)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
