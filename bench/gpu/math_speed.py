"""The f32 math functions, Triton against Tri: one Triton kernel per function (libdevice's, as
Triton code calls them, and tl.*'s where Triton has its own), each applied elementwise to 2^26 f32
elements in the function's domain, plus the activations of the issue's slow rows (GeLU with erf,
GeLU with tanh and libdevice's powif, a log-heavy divergence term). The program only launches the
kernels; run it under Tri's capture, which replays each launch through Tri on the same tensors
(the TTIR Triton compiled, imported), compares the outputs and times both:

    TRI_LIBRARY=build/src/libtri.so.0 PYTHONPATH=bindings/python/src \\
        python3 -m tri.triton.capture --json math-speed.json bench/gpu/math_speed.py [--small] [--only asin,erf]

Without a GPU, `--dry-run` after `capture` runs the same launches (at --small size, on NumPy arrays)
through Tri's interpreter and its cpu target, which checks the program. bench/gpu/math_sass.py
counts the same functions' SASS instructions without a GPU.
"""

import importlib.util
import math
import os
import sys
import tempfile

import numpy as np

SMALL = "--small" in sys.argv
ONLY = next((a.split("=", 1)[1] if "=" in a else sys.argv[sys.argv.index(a) + 1] for a in sys.argv if a.startswith("--only")),
            "")
N = 1 << 14 if SMALL else 1 << 26
BLOCK = 1024

# name: (expression in x (and y), domain of x, domain of y or None, log-uniform)
FUNCS = {
    "exp": ("libdevice.exp(x)", (-10, 10), None, False),
    "exp2": ("libdevice.exp2(x)", (-10, 10), None, False),
    "exp10": ("libdevice.exp10(x)", (-5, 5), None, False),
    "expm1": ("libdevice.expm1(x)", (-5, 5), None, False),
    "log": ("libdevice.log(x)", (1e-3, 1e3), None, True),
    "log2": ("libdevice.log2(x)", (1e-3, 1e3), None, True),
    "log10": ("libdevice.log10(x)", (1e-3, 1e3), None, True),
    "log1p": ("libdevice.log1p(x)", (-0.9, 100), None, False),
    "sin": ("libdevice.sin(x)", (-100, 100), None, False),
    "cos": ("libdevice.cos(x)", (-100, 100), None, False),
    "tan": ("libdevice.tan(x)", (-1.5, 1.5), None, False),
    "asin": ("libdevice.asin(x)", (-1, 1), None, False),
    "acos": ("libdevice.acos(x)", (-1, 1), None, False),
    "atan": ("libdevice.atan(x)", (-100, 100), None, False),
    "sinh": ("libdevice.sinh(x)", (-10, 10), None, False),
    "cosh": ("libdevice.cosh(x)", (-10, 10), None, False),
    "tanh": ("libdevice.tanh(x)", (-10, 10), None, False),
    "asinh": ("libdevice.asinh(x)", (-100, 100), None, False),
    "acosh": ("libdevice.acosh(x)", (1, 100), None, False),
    "atanh": ("libdevice.atanh(x)", (-0.999, 0.999), None, False),
    "erf": ("libdevice.erf(x)", (-4, 4), None, False),
    "erfc": ("libdevice.erfc(x)", (-4, 9), None, False),
    "lgamma": ("libdevice.lgamma(x)", (0.01, 30), None, False),
    "tgamma": ("libdevice.tgamma(x)", (0.1, 30), None, False),
    "cbrt": ("libdevice.cbrt(x)", (-100, 100), None, False),
    "pow": ("libdevice.pow(x, y)", (0.01, 10), (-3, 3), False),
    "pow_2": ("libdevice.pow(x, 2.0)", (-10, 10), None, False),
    "powi_2": ("libdevice.pow(x, 2)", (-10, 10), None, False),  # __nv_powif with a constant
    "powi_3": ("libdevice.pow(x, 3)", (-10, 10), None, False),
    "atan2": ("libdevice.atan2(x, y)", (-10, 10), (-10, 10), False),
    "hypot": ("libdevice.hypot(x, y)", (-10, 10), (-10, 10), False),
    "tl_exp": ("tl.exp(x)", (-10, 10), None, False),
    "tl_log": ("tl.log(x)", (1e-3, 1e3), None, True),
    "tl_sin": ("tl.sin(x)", (-100, 100), None, False),
    "tl_erf": ("tl.erf(x)", (-4, 4), None, False),
    # the issue's rows: FlagGems' gelu (erf), gelu_tanh (powif 2, tanh), liger's jsd (logs)
    "gelu_erf": ("0.5 * x * (1.0 + libdevice.erf(x * 0.7071067811865476))", (-5, 5), None, False),
    "gelu_tanh": ("0.5 * x * (1.0 + libdevice.tanh(0.7978845608 * x * (1.0 + 0.044715 * libdevice.pow(x, 2))))",
                  (-5, 5), None, False),
    "jsd_term": ("0.5 * (x * libdevice.log(2.0 * x / (x + y)) + y * libdevice.log(2.0 * y / (x + y)))", (1e-4, 1),
                 (1e-4, 1), True),
}

KERNEL = '''
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def math_{name}(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, {expr}, mask=m)
'''


def kernel(name, expr, work):
    """The @triton.jit function for one expression (Triton reads its source from a file)."""
    path = os.path.join(work, f"math_{name}.py")
    with open(path, "w") as f:
        f.write(KERNEL.format(name=name, expr=expr))
    spec = importlib.util.spec_from_file_location(f"math_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, f"math_{name}")


def values(rng, lo_hi, log):
    lo, hi = lo_hi
    if log:
        return np.exp(rng.uniform(math.log(lo), math.log(hi), N)).astype(np.float32)
    return rng.uniform(lo, hi, N).astype(np.float32)


def main():
    names = [n for n in FUNCS if not ONLY or n in ONLY.split(",")]
    try:
        import torch
        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    if gpu:
        to_dev = lambda a: torch.from_numpy(a).cuda()  # noqa: E731
    else:  # python3 -m tri.triton.capture --dry-run: host arrays
        from tri.triton import HostTensor
        to_dev = HostTensor  # noqa: E731
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as work:
        sys.path.insert(0, work)
        for name in names:
            expr, xd, yd, log = FUNCS[name]
            x = values(rng, xd, log)
            y = values(rng, yd, log) if yd else np.ones(N, np.float32)
            out = np.zeros(N, np.float32)
            xt, yt, ot = to_dev(x), to_dev(y), to_dev(out)
            kernel(name, expr, work)[(N + BLOCK - 1) // BLOCK,](xt, yt, ot, N, BLOCK=BLOCK)
            if gpu:
                torch.cuda.synchronize()
            print(f"ran math_{name}", flush=True)


if __name__ == "__main__":
    main()
