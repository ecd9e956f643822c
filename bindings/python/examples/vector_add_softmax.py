"""A complete program on the tri package: vector add and a fused row softmax compiled for the
CPU (or the interpreter: TRI_TARGET=interp) and checked against NumPy, then the errors a user
gets for a wrong argument and, in checked mode, for an array that is too short.

    TRI_LIBRARY=build/src/libtri.so PYTHONPATH=bindings/python/src python3 bindings/python/examples/vector_add_softmax.py

The kernels are the repository's examples/*.tri (TRI_EXAMPLES_DIR names another folder).
tests/test_example.py runs these functions under pytest.
"""

import os
import sys
from pathlib import Path

import numpy as np

import tri

EXAMPLES = Path(os.environ.get("TRI_EXAMPLES_DIR") or Path(__file__).resolve().parents[3] / "examples")


def vector_add(ctx: tri.Context, target: str, n: int) -> None:
    module = ctx.load(EXAMPLES / "vector_add.tri")
    kernel = module.compile("vector_add", target=target, constexprs={"BLOCK": 1024})
    rng = np.random.default_rng(1)
    x = rng.uniform(-8, 8, n).astype(np.float32)
    y = rng.uniform(-8, 8, n).astype(np.float32)
    out = np.empty_like(x)
    kernel[(n + 1023) // 1024](x, y, out, n)
    np.testing.assert_array_equal(out, x + y)
    print(f"vector_add ({target}): {n} elements match NumPy")


def softmax(ctx: tri.Context, target: str, rows: int, cols: int) -> None:
    with ctx.load(EXAMPLES / "softmax.tri") as module:
        kernel = module.compile("softmax", tri.CompileOptions(target=target, constexprs={"BLOCK": 1024}))
    x = np.random.default_rng(2).uniform(-8, 8, (rows, cols)).astype(np.float32)
    out = np.zeros_like(x)
    kernel.launch(rows, out, x, cols, cols, cols)  # one program per row
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    print(f"softmax ({target}): {rows} x {cols} matches NumPy")


def wrong_argument(ctx: tri.Context) -> tri.TriError:
    """An int32 array where vector_add takes f32: refused before the call."""
    kernel = ctx.load(EXAMPLES / "vector_add.tri").compile("vector_add")
    x = np.ones(16, dtype=np.int32)
    y = out = np.ones(16, dtype=np.float32)
    try:
        kernel[1](x, y, out, 16)
    except tri.TriError as e:
        assert e.code == tri.ErrorCode.LAUNCH_ARGS
        return e
    raise AssertionError("an int32 array for %x must be refused")


def too_short(ctx: tri.Context) -> tri.TriError:
    """A 50-element array for n = 64: the interpreter's checked mode stops at the first load
    past its end, naming the op and the address."""
    kernel = ctx.load(EXAMPLES / "vector_add.tri").compile(
        "vector_add", target="interp", checked=True, constexprs={"BLOCK": 64})
    x, y, out = np.ones(50, np.float32), np.ones(64, np.float32), np.zeros(64, np.float32)
    try:
        kernel[1](x, y, out, 64)
    except tri.TriError as e:
        assert e.code == tri.ErrorCode.RUNTIME
        return e
    raise AssertionError("a 50-element %x for n = 64 must be reported")


def main() -> int:
    target = os.environ.get("TRI_TARGET") or "cpu"
    small = target == "interp"
    with tri.Context() as ctx:
        vector_add(ctx, target, 3000 if small else 1_000_000)
        softmax(ctx, target, 4 if small else 256, 1000)
        print(f"wrong argument -> {wrong_argument(ctx)}")
        print(f"array too short (checked mode) -> {too_short(ctx)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
