"""Every f32 input through the GPU's f32 math, on the GPU: the math ops (exp2, exp, log2, log,
tanh, sin, cos, erf, rsqrt) and every one-argument math_call function.

For each function, all 2^32 bit patterns go through a Tri kernel (`%y = <fn> %x`) in chunks, and
each result is compared with the function computed in float64 by PyTorch and rounded to f32: the
distance is counted in units in the last place of f32 (adjacent f32 values are 1 apart, +0 and -0
are the same, two NaNs agree), the measure the conformance suite uses against the interpreter.
Each function is held to docs/ir.md's bound for it (CUDA's single-precision table; lgamma's
holds outside (-10.001, -2.264), inside which a result past it must be within 2^-20 absolute).
The script prints the largest distance per function and an input that reaches it, and exits
non-zero if any exceeds its bound. (The host test, tests/codegen/test_mathlib.cpp with
TRI_MATHLIB_F32_STRIDE=1, measures the same math library's host build; the GPU gives its bits.)

usage: python3 bench/gpu/ulp_sweep.py [--only exp2,asin] [--bound N (all functions)]
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

def _tgamma(x):
    g = torch.exp(torch.special.gammaln(x))
    neg = (x < 0) & (torch.remainder(torch.ceil(-x), 2) == 1)  # tgamma(x) < 0 for x in (-1, 0), (-3, -2), ...
    return torch.where((x <= 0) & (x == torch.floor(x)), torch.full_like(x, float("nan")), torch.where(neg, -g, g))


def _round(x):  # C's round: halves away from zero
    return torch.sign(x) * torch.floor(torch.abs(x) + 0.5)


# name: (Tri's expression, float64 reference, bound in ulp)
FUNCS = {
    "exp2": ("exp2", torch.exp2, 2), "exp": ("exp", torch.exp, 2), "log2": ("log2", torch.log2, 1),
    "log": ("log", torch.log, 1), "tanh": ("tanh", torch.tanh, 2), "sin": ("sin", torch.sin, 2),
    "cos": ("cos", torch.cos, 2), "erf": ("erf", torch.erf, 2), "rsqrt": ("rsqrt", torch.rsqrt, 2),
}
for _name, _ref, _bound in [
        ("expm1", torch.expm1, 1), ("log1p", torch.log1p, 1), ("log10", torch.log10, 2),
        ("exp10", lambda x: torch.pow(10.0, x), 2), ("cbrt", lambda x: torch.sign(x) * torch.abs(x) ** (1.0 / 3), 1),
        ("sinh", torch.sinh, 3), ("cosh", torch.cosh, 2), ("tan", torch.tan, 4), ("asin", torch.asin, 2),
        ("acos", torch.acos, 2), ("atan", torch.atan, 2), ("asinh", torch.asinh, 3), ("acosh", torch.acosh, 4),
        ("atanh", torch.atanh, 3), ("erfc", torch.erfc, 4), ("lgamma", torch.special.gammaln, 6),
        ("tgamma", _tgamma, 5), ("round", _round, 0), ("trunc", torch.trunc, 0)]:
    FUNCS[_name] = (f'math_call[name="{_name}"]', _ref, _bound)


def ordered(f):
    """f32 values as integers in the order of the values: adjacent floats differ by 1, -0 == +0."""
    i = f.view(torch.int32).to(torch.int64)
    return torch.where(i < 0, -(i & 0x7FFFFFFF), i)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=",".join(FUNCS))
    ap.add_argument("--bound", type=int, default=None, help="one bound for all functions (default: each its own)")
    ap.add_argument("--chunk-log2", type=int, default=27)
    args = ap.parse_args()
    tri = Tri()
    chunk = 1 << args.chunk_log2
    y = torch.empty(chunk, dtype=torch.float32, device="cuda")
    failed = []
    for name in args.only.split(","):
        expr, reference, bound = FUNCS[name]
        bound = args.bound if args.bound is not None else bound
        m = tri.module(KERNEL.replace("FN", expr), f"sweep_{name}.tri")
        k = tri.compile(m, "sweep", {"BLOCK": 1024})
        worst, worst_x, count_over = -1, None, 0
        for base in range(-(1 << 31), 1 << 31, chunk):
            x = torch.arange(base, base + chunk, dtype=torch.int64, device="cuda").to(torch.int32).view(torch.float32)
            k.launch(((chunk + 1023) // 1024,), k.args(x, y, ("i32", chunk)), torch.cuda.current_stream().cuda_stream)
            ref64 = reference(x.double())
            ref = ref64.float()
            both_nan = torch.isnan(ref) & torch.isnan(y)
            d = (ordered(y) - ordered(ref)).abs()
            d = torch.where(both_nan, torch.zeros_like(d), d)
            d = torch.where(torch.isnan(ref) ^ torch.isnan(y), torch.full_like(d, 1 << 40), d)
            if name == "lgamma":  # near its zeros below -2: absolute accuracy
                inside = (x < -2.264) & (x > -10.001) & ((y.double() - ref64).abs() < 2.0 ** -20)
                d = torch.where(inside, torch.zeros_like(d), d)
            count_over += int((d > bound).sum())
            mx, at = d.max(0)
            if int(mx) > worst:
                worst, worst_x = int(mx), float(x[at])
        torch.cuda.synchronize()
        if worst > bound:
            failed.append(name)
        print(f"{name:6s} f32: max {worst} ulp over all 2^32 inputs (at x = {worst_x!r}); "
              f"{count_over} inputs over {bound} ulp", flush=True)
    if failed:
        print(f"over the bound: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
