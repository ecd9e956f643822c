"""Every f32 input through the GPU's inline f32 math (exp2, exp, log2, log, tanh), on the GPU.

For each function, all 2^32 bit patterns go through a Tri kernel (`%y = <fn> %x`) in chunks, and
each result is compared with the function computed in float64 by PyTorch and rounded to f32: the
distance is counted in units in the last place of f32 (adjacent f32 values are 1 apart, +0 and -0
are the same, two NaNs agree), the measure the conformance suite uses against the interpreter.
docs/ir.md bounds these functions at 4 ulp; the script prints the largest distance per function
and an input that reaches it, and exits non-zero if any exceeds the bound.

usage: python3 bench/gpu/ulp_sweep.py [--only exp2,exp] [--bound 4]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from tri_ctypes import Tri  # noqa: E402

KERNEL = """
kernel @sweep(%x: ptr<f32>, %y: ptr<f32>, %n: i32) constexpr(BLOCK: i32 = 1024) {
  %pid = program_id[axis=0] : i32
  %bs = const[value=BLOCK] : i32
  %start = mul %pid, %bs : i32
  %range = arange[start=0, end=BLOCK] : <BLOCK x i32>
  %startv = splat %start : <BLOCK x i32>
  %offs = add %startv, %range : <BLOCK x i32>
  %nv = splat %n : <BLOCK x i32>
  %mask = cmp[pred=slt] %offs, %nv : <BLOCK x i1>
  %xb = splat %x : <BLOCK x ptr<f32>>
  %xp = addptr %xb, %offs : <BLOCK x ptr<f32>>
  %xv = load %xp, mask=%mask : <BLOCK x f32>
  %r = FN %xv : <BLOCK x f32>
  %yb = splat %y : <BLOCK x ptr<f32>>
  %yp = addptr %yb, %offs : <BLOCK x ptr<f32>>
  store %yp, %r, mask=%mask
  return
}
"""

REFERENCE = {"exp2": torch.exp2, "exp": torch.exp, "log2": torch.log2, "log": torch.log, "tanh": torch.tanh}


def ordered(f):
    """f32 values as integers in the order of the values: adjacent floats differ by 1, -0 == +0."""
    i = f.view(torch.int32).to(torch.int64)
    return torch.where(i < 0, -(i & 0x7FFFFFFF), i)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=",".join(REFERENCE))
    ap.add_argument("--bound", type=int, default=4)
    ap.add_argument("--chunk-log2", type=int, default=27)
    args = ap.parse_args()
    tri = Tri()
    chunk = 1 << args.chunk_log2
    y = torch.empty(chunk, dtype=torch.float32, device="cuda")
    worst_all = 0
    for name in args.only.split(","):
        m = tri.module(KERNEL.replace("FN", name), f"sweep_{name}.tri")
        k = tri.compile(m, "sweep", {"BLOCK": 1024})
        worst, worst_x, count_over = -1, None, 0
        for base in range(-(1 << 31), 1 << 31, chunk):
            x = torch.arange(base, base + chunk, dtype=torch.int64, device="cuda").to(torch.int32).view(torch.float32)
            k.launch(((chunk + 1023) // 1024,), k.args(x, y, ("i32", chunk)), torch.cuda.current_stream().cuda_stream)
            ref = REFERENCE[name](x.double()).float()
            both_nan = torch.isnan(ref) & torch.isnan(y)
            d = (ordered(y) - ordered(ref)).abs()
            d = torch.where(both_nan, torch.zeros_like(d), d)
            d = torch.where(torch.isnan(ref) ^ torch.isnan(y), torch.full_like(d, 1 << 40), d)
            count_over += int((d > args.bound).sum())
            mx, at = d.max(0)
            if int(mx) > worst:
                worst, worst_x = int(mx), float(x[at])
        torch.cuda.synchronize()
        worst_all = max(worst_all, worst)
        print(f"{name:5s} f32: max {worst} ulp over all 2^32 inputs (at x = {worst_x!r}); "
              f"{count_over} inputs over {args.bound} ulp", flush=True)
    return 0 if worst_all <= args.bound else 1


if __name__ == "__main__":
    sys.exit(main())
