"""The Triton corpus through the Python binding: every committed TTIR fixture (tests/import/ttir,
from tests/import/kernels.py, and tests/triton/ttir, from tests/triton/kernels.py) is imported,
compiled for "interp" (checked mode) and "cpu", launched on NumPy arrays whose sizes are not
multiples of the block, and compared with NumPy. Outputs carry guard elements (and row padding)
that no kernel may write. Needs NumPy and libtri, not Triton."""

import ast
import math
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "bindings" / "python" / "src"))

import tri  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from corpus.common import philox_uniform  # noqa: E402  (Triton's tl.rand in NumPy)

TARGETS = ("interp", "cpu")
GUARD = 8
SENTINEL = -777.0
CORPORA = {"import": ROOT / "tests" / "import", "triton": HERE}


def fixture_path(key):
    corpus, name = key.split("/")
    return CORPORA[corpus] / "ttir" / f"{name}.ttir"


@pytest.fixture(scope="module")
def ctx():
    with tri.Context() as c:
        yield c


class Runner:
    """Compiles a fixture's kernel for one target (once) and launches it."""

    def __init__(self, ctx, target, cache):
        self.ctx, self.target, self.cache = ctx, target, cache

    def kernel(self, key, name):
        k = (key, name, self.target)
        if k not in self.cache:
            path = fixture_path(key)
            module = self.ctx.module(path.read_text(), str(path.relative_to(ROOT)))
            self.cache[k] = module.compile(name, target=self.target, checked=self.target == "interp")
        return self.cache[k]

    def __call__(self, key, name, grid, *args):
        self.kernel(key, name)[grid](*args)


_kernels = {}


@pytest.fixture(params=TARGETS)
def run(request, ctx):
    return Runner(ctx, request.param, _kernels)


def out(n, dtype=np.float32, fill=SENTINEL):
    return np.full(n + GUARD, fill, dtype=dtype)


def expect_close(name, got, want, atol, rtol):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    bad = ~(np.abs(got - want) <= atol + rtol * np.abs(want))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        pytest.fail(f"{name}: {int(bad.sum())} of {bad.size} elements off; element {i} is {got.flat[i]!r}, "
                    f"expected {want.flat[i]!r} (atol {atol}, rtol {rtol})")


def expect_guard(name, buf, n, fill=SENTINEL):
    assert (buf[n:] == np.asarray(fill, dtype=buf.dtype)).all(), f"{name}: a guard element past {n} was written"


def cdiv(a, b):
    return (a + b - 1) // b


def rng(seed):
    return np.random.default_rng(seed)


def uniform(seed, n, lo, hi):
    return rng(seed).uniform(lo, hi, n).astype(np.float32)


CASES = {}


def case(*fixtures):
    def register(fn):
        CASES[fn.__name__[len("case_"):]] = (fixtures, fn)
        return fn
    return register


# ---------------------------------------------------------------- tests/import/kernels.py

@case("import/vadd")
def case_vector_add(run):
    n = 1000  # 16 programs of 64; the last has 40 lanes
    x, y = uniform(1, n, -10, 10), uniform(2, n, -10, 10)
    o = out(n)
    run("import/vadd", "add_kernel", cdiv(n, 64), x, y, o, n)
    np.testing.assert_array_equal(o[:n], x + y)
    expect_guard("vadd", o, n)


@case("import/softmax")
def case_fused_softmax(run):
    rows, cols, in_stride, out_stride = 7, 100, 100, 104  # BLOCK 128
    x = uniform(3, rows * in_stride, -4, 4)
    o = out(rows * out_stride)
    # 3 programs for 7 rows: the persistent loop runs 3, 2 and 2 times.
    run("import/softmax", "softmax_kernel", 3, o, x, in_stride, out_stride, rows, cols)
    v = x.reshape(rows, in_stride)[:, :cols].astype(np.float64)
    e = np.exp(v - v.max(axis=1, keepdims=True))
    want = np.full((rows, out_stride), SENTINEL)
    want[:, :cols] = e / e.sum(axis=1, keepdims=True)
    expect_close("softmax", o[:rows * out_stride], want.ravel(), 1e-7, 2e-5)  # the padding too
    expect_guard("softmax", o, rows * out_stride)


def layer_norm_reference(x, w, b, eps):
    x = x.astype(np.float64)
    mean = x.mean(axis=1)
    var = ((x - mean[:, None]) ** 2).mean(axis=1)
    rstd = 1 / np.sqrt(var + eps)
    return (x - mean[:, None]) * rstd[:, None] * w + b, mean, rstd


@case("import/layer_norm_fwd")
def case_layer_norm_forward(run):
    rows, n, stride, eps = 5, 77, 80, 1e-5  # BLOCK 32: three column blocks, the last masked
    x = uniform(4, rows * stride, -3, 3)
    w, b = uniform(5, n, 0.5, 1.5), uniform(6, n, -1, 1)
    y, mean, rstd = out(rows * stride), out(rows), out(rows)
    run("import/layer_norm_fwd", "layer_norm_fwd_kernel", rows, x, y, w, b, mean, rstd, stride, n, eps)
    want_y, want_mean, want_rstd = layer_norm_reference(x.reshape(rows, stride)[:, :n], w, b, eps)
    full = np.full((rows, stride), SENTINEL)
    full[:, :n] = want_y
    expect_close("layer_norm Y", y[:rows * stride], full.ravel(), 1e-5, 1e-5)
    expect_close("layer_norm Mean", mean[:rows], want_mean, 1e-6, 1e-5)
    expect_close("layer_norm Rstd", rstd[:rows], want_rstd, 1e-6, 1e-5)
    for name, buf, size in (("Y", y, rows * stride), ("Mean", mean, rows), ("Rstd", rstd, rows)):
        expect_guard(f"layer_norm {name}", buf, size)


@case("import/matmul")
def case_matmul_leaky_relu(run):
    # 37 x 40 @ 40 x 45 in f16, blocks of 16 (3 x 3 tiles, grouped by 2 rows), leaky-ReLU epilogue.
    M, N, K = 37, 45, 40
    a = uniform(7, M * K, -1, 1).astype(np.float16)
    b = uniform(8, K * N, -1, 1).astype(np.float16)
    c = out(M * N, np.float16)
    run("import/matmul", "matmul_kernel", cdiv(M, 16) * cdiv(N, 16), a, b, c, M, N, K, K, 1, N, 1, N, 1)
    s = a.reshape(M, K).astype(np.float64) @ b.reshape(K, N).astype(np.float64)
    want = np.where(s >= 0, s, 0.01 * s)
    # f32 accumulation, then one rounding to f16.
    expect_close("matmul C", c[:M * N], want.ravel(), 1e-4, 1.5e-3)
    expect_guard("matmul C", c, M * N)


@case("import/matmul_tf32")
def case_matmul_tf32(run):
    # f32 inputs: Triton's default input precision, tf32, is kept (inputs rounded to 10 bits).
    M, N, K = 33, 20, 50
    a, b = uniform(21, M * K, -1, 1), uniform(22, K * N, -1, 1)
    c = out(M * N, np.float16)
    run("import/matmul_tf32", "matmul_kernel", cdiv(M, 16) * cdiv(N, 16), a, b, c, M, N, K, K, 1, N, 1, N, 1)
    a64, b64 = a.reshape(M, K).astype(np.float64), b.reshape(K, N).astype(np.float64)
    want = a64 @ b64
    bound = np.abs(a64) @ np.abs(b64) * 2.0 ** -9 + np.abs(want) * 2.0 ** -10 + 1e-6
    got = c[:M * N].astype(np.float64).reshape(M, N)
    bad = np.abs(got - want) > bound
    assert not bad.any(), f"matmul tf32: {int(bad.sum())} elements outside tf32's bound, e.g. " \
                          f"{got[bad][0]} vs {want[bad][0]}"
    expect_guard("matmul tf32 C", c, M * N)


@case("import/gelu")
def case_gelu(run):
    n = 200  # 4 programs of 64
    x = uniform(9, n, -5, 5)
    y, yt = out(n), out(n)
    run("import/gelu", "gelu_kernel", cdiv(n, 64), x, y, yt, n)
    v = x.astype(np.float64)
    erf = np.vectorize(math.erf)
    expect_close("gelu (erf)", y[:n], 0.5 * v * (1 + erf(v * 0.7071067811865476)), 1e-6, 1e-5)
    expect_close("gelu (libdevice tanh)", yt[:n], 0.5 * v * (1 + np.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3))),
                 1e-6, 1e-5)
    expect_guard("gelu", y, n)
    expect_guard("gelu tanh", yt, n)


@case("import/reduce_scan")
def case_reductions_and_scans(run):
    # sum, max, a (value, index) argmax with a custom combine, cumsum, a product scan and a
    # reverse integer cumsum; one row of 50 per program, BLOCK 64.
    rows, cols, stride = 6, 50, 50
    x = uniform(10, rows * stride, 0.5, 1.5)
    x[2 * stride + 7] = x[2 * stride + 30] = 2.0  # a tie: the first index wins
    s, m, cs, cp = out(rows), out(rows), out(rows * stride), out(rows * stride)
    am, ic = out(rows, np.int32, -1), out(rows * stride, np.int32, -1)
    run("import/reduce_scan", "reduce_scan_kernel", rows, x, s, m, am, cs, cp, ic, cols, stride)
    v = x.reshape(rows, stride)[:, :cols].astype(np.float64)
    expect_close("tl.sum", s[:rows], v.sum(axis=1), 0, 1e-5)
    np.testing.assert_array_equal(m[:rows], v.max(axis=1).astype(np.float32))
    np.testing.assert_array_equal(am[:rows], np.argmax(v, axis=1), err_msg="argmax (custom combine)")
    expect_close("tl.cumsum", cs[:rows * stride], np.cumsum(v, axis=1).ravel(), 0, 1e-5)
    expect_close("tl.associative_scan (product)", cp[:rows * stride], np.cumprod(v, axis=1).ravel(), 0, 1e-5)
    np.testing.assert_array_equal(ic[:rows * stride], np.tile(np.arange(cols, 0, -1), rows),
                                  err_msg="reverse integer cumsum")
    for name, buf, size, fill in (("sum", s, rows, SENTINEL), ("argmax", am, rows, -1),
                                  ("cumsum", cs, rows * stride, SENTINEL), ("icum", ic, rows * stride, -1)):
        expect_guard(name, buf, size, fill)


@case("import/atomics")
def case_atomics(run):
    # A histogram (atomic_add on gathered addresses), atomic_max, and an atomic_cas claim flag.
    n, bins = 100, 8  # 4 programs of 32
    x = rng(11).integers(0, bins, n).astype(np.int32)
    hist, mx, flag = out(bins, np.int32, 0), out(1, np.int32, -5), out(1, np.int32, 0)
    run("import/atomics", "atomics_kernel", cdiv(n, 32), x, hist, mx, flag, n)
    np.testing.assert_array_equal(hist[:bins], np.bincount(x, minlength=bins))
    assert mx[0] == x.max()
    assert 1 <= flag[0] <= 4, f"atomic_cas: flag {flag[0]}, expected a program id + 1 in 1..4"
    expect_guard("histogram", hist, bins, 0)
    expect_guard("atomic_max", mx, 1, -5)
    expect_guard("atomic_cas", flag, 1, 0)


@case("import/attn_fwd")
def case_fused_attention_forward(run):
    # Two heads of 40 positions (3 blocks of 16, the last masked), head dimension 16, f16.
    heads, S, D, sm_scale = 2, 40, 16, 0.25
    q, k, v = (uniform(seed, heads * S * D, -1, 1).astype(np.float16) for seed in (12, 13, 14))
    o = out(heads * S * D, np.float16)
    run("import/attn_fwd", "attn_fwd_kernel", (cdiv(S, 16), heads), q, k, v, o, sm_scale, S)
    q64, k64, v64 = (a.astype(np.float64).reshape(heads, S, D) for a in (q, k, v))
    s = q64 @ k64.transpose(0, 2, 1) * sm_scale
    p = np.exp(s - s.max(axis=2, keepdims=True))
    want = (p / p.sum(axis=2, keepdims=True)) @ v64
    # p is rounded to f16 before the second dot, and the output to f16.
    expect_close("attention out", o[:heads * S * D], want.ravel(), 2e-3, 5e-3)
    expect_guard("attention out", o, heads * S * D)


@case("import/control")
def case_device_call_if_while_reshape(run):
    # A device-function call in both arms of an if, split/join of pairs, and a while loop.
    n, B, programs = 40, 16, 3
    x = uniform(15, n, -2, 2)
    o, steps = out(n), out(programs, np.int32, -1)
    run("import/control", "control_kernel", programs, x, o, steps, n)
    want = np.zeros(n, dtype=np.float32)
    want_steps = []
    for p in range(programs):
        scale, shift = (2, 1) if p % 2 == 0 else (-1, 0.5)  # scale_shift(pid, ...) in the if's arms
        a = np.float32(p) * np.float32(scale) + np.float32(shift)
        lanes = np.arange(p * B, p * B + B)
        y = np.where(lanes < n, np.concatenate([x, np.zeros(B * programs - n, np.float32)])[lanes], 0) * a
        for lane, i in enumerate(lanes):
            if i < n:
                want[i] = y[lane ^ 1]  # pairs swapped by split / join
        value, k = float(y.astype(np.float64).sum()), 0
        while value < 1000.0 and k < 64:
            value, k = value * 2 + 1, k + 1
        want_steps.append(k)
    np.testing.assert_array_equal(o[:n], want)
    np.testing.assert_array_equal(steps[:programs], want_steps, err_msg="while loop steps")
    expect_guard("control out", o, n)
    expect_guard("control steps", steps, programs, -1)


@case("import/dropout")
def case_low_memory_dropout(run):
    n, p, seed = 300, 0.3, 1234  # 5 programs of 64
    x = uniform(17, n, -1, 1)
    o = out(n)
    run("import/dropout", "seeded_dropout_kernel", cdiv(n, 64), x, o, n, p, seed)
    keep = philox_uniform(np.arange(n), seed) > np.float32(p)
    assert n // 2 < keep.sum() < n * 9 // 10, "the reference's mask is degenerate"
    want = np.where(keep, x / (np.float32(1) - np.float32(p)), np.float32(0))
    np.testing.assert_array_equal(o[:n], want)  # bit for bit: Philox is integer arithmetic
    expect_guard("dropout", o, n)


@case("import/layer_norm_bwd_dx", "import/layer_norm_bwd_dwdb")
def case_layer_norm_backward(run):
    # Both stages: dx per row and dw/db partial sums in 4 groups under a spin lock
    # (atomic_cas / atomic_xchg), then the partial sums summed by 4 programs of 32 columns.
    M, N, stride, G = 10, 100, 100, 4
    x, dy, w = uniform(18, M * stride, -2, 2), uniform(19, M * stride, -1, 1), uniform(20, N, 0.5, 1.5)
    x2 = x.reshape(M, stride)[:, :N].astype(np.float64)
    mean = x2.mean(axis=1).astype(np.float32)
    rstd = (1 / np.sqrt(((x2 - x2.mean(axis=1, keepdims=True)) ** 2).mean(axis=1) + 1e-5)).astype(np.float32)
    dx = out(M * stride)
    pdw, pdb = np.zeros(G * N, np.float32), np.zeros(G * N, np.float32)
    lock = np.zeros(2 * G, np.int32)
    run("import/layer_norm_bwd_dx", "layer_norm_bwd_dx_kernel", M, dx, dy, pdw, pdb, x, w, mean, rstd, lock, stride, N)
    dy2 = dy.reshape(M, stride)[:, :N].astype(np.float64)
    xhat = (x2 - mean[:, None].astype(np.float64)) * rstd[:, None]
    wdy = w.astype(np.float64) * dy2
    c1 = (xhat * wdy).sum(axis=1, keepdims=True) / N
    c2 = wdy.sum(axis=1, keepdims=True) / N
    want_dx = (wdy - (xhat * c1 + c2)) * rstd[:, None]
    expect_close("layer_norm_bwd DX", dx[:M * stride], want_dx.ravel(), 1e-5, 1e-4)
    expect_guard("layer_norm_bwd DX", dx, M * stride)
    assert (lock[:G] == 0).all(), f"a lock was left taken: {lock[:G]}"
    assert (lock[G:] == 1).all(), f"the group counts are {lock[G:]}, expected 1"
    fdw, fdb = out(N), out(N)
    run("import/layer_norm_bwd_dwdb", "layer_norm_bwd_dwdb_kernel", cdiv(N, 32), pdw, pdb, fdw, fdb, G, N)
    expect_close("layer_norm_bwd DW", fdw[:N], (dy2 * xhat).sum(axis=0), 1e-4, 1e-4)
    expect_close("layer_norm_bwd DB", fdb[:N], dy2.sum(axis=0), 1e-5, 1e-4)
    expect_guard("layer_norm_bwd DW", fdw, N)
    expect_guard("layer_norm_bwd DB", fdb, N)


@case("import/checked_sqrt")
def case_device_assert(run):
    # debug=True keeps tl.device_assert; a failed one names its Python line on both targets.
    n = 70  # 3 programs of 32
    x = uniform(16, n, 0, 9)
    o = out(n)
    run("import/checked_sqrt", "checked_sqrt_kernel", 3, x, o, n)
    np.testing.assert_array_equal(o[:n], np.sqrt(x))
    expect_guard("sqrt", o, n)
    bad = x.copy()
    bad[45] = -1.0
    with pytest.raises(tri.TriError) as e:
        run("import/checked_sqrt", "checked_sqrt_kernel", 3, bad, out(n), n)
    assert e.value.code == tri.ErrorCode.RUNTIME
    assert "tests/import/kernels.py:242:" in e.value.message and "negative input" in e.value.message, e.value.message


@case("import/early_exit")
def case_early_returns(run):
    # `if row >= n_rows: return`, a store-and-return in the middle, a helper with two returns
    # (inlined: a block argument), and a return nested in an if that depends on a reduction.
    rows, cols, stride, programs = 6, 50, 64, 8  # BLOCK 64; programs 6 and 7 return at once
    x = uniform(40, rows * stride, 0.5, 2.0)
    x[5 * stride:6 * stride] *= -1  # row 5: sum(2x) < 0, so it stores 2x + 100
    flags = np.array([-1, 0, 1, 2, 3, 7], np.int32)
    o = out(rows * stride)
    run("import/early_exit", "early_exit_kernel", programs, x, o, flags, rows, cols, stride)
    want = np.full((rows, stride), SENTINEL, np.float32)
    v = x.reshape(rows, stride)[:, :cols]
    want[0, :cols] = -v[0]
    want[1, :cols] = v[1] - np.float32(1)
    want[2, :cols] = v[2] * np.float32(2)
    want[5, :cols] = v[5] * np.float32(2) + np.float32(100)  # rows 3 and 4 (sum(2x) > 0) store nothing
    np.testing.assert_array_equal(o[:rows * stride], want.ravel())
    expect_guard("early_exit", o, rows * stride)


@case("import/clipped_window")
def case_device_function_with_returns(run):
    # A noinline device function with three returns, called in a loop.
    n = 10
    x = uniform(41, n, -1, 1)
    o = out(n)
    run("import/clipped_window", "clipped_window_kernel", n, x, o, n)
    want = [sum(np.float32(x[min(max(i + k - 2, 0), n - 1)]) for k in range(5)) for i in range(n)]
    expect_close("clipped_window", o[:n], want, 1e-6, 1e-6)
    expect_guard("clipped_window", o, n)


@case("import/descriptor")
def case_tensor_descriptors(run):
    # Blocks of 8 x 16 at (8 pid_m - shift, 16 pid_n - shift): with shift 3 the first blocks start
    # before the tensor (negative offsets) and the last ones end past it; only elements in bounds
    # are read (others are zero) and written.
    M, N, stride, shift = 13, 37, 40, 3
    x = uniform(42, M * stride, -1, 1)
    for sh, grid in ((shift, (cdiv(M + shift, 8), cdiv(N + shift, 16))), (-2, (1, 2))):
        y = out(M * stride)
        run("import/descriptor", "descriptor_kernel", grid, x, y, M, N, stride, sh)
        want = np.full((M, stride), SENTINEL, np.float32)
        r0, c0 = max(-sh, 0), max(-sh, 0)  # with a negative shift the blocks start inside
        r1, c1 = min(M, grid[0] * 8 - sh), min(N, grid[1] * 16 - sh)
        want[r0:r1, c0:c1] = x.reshape(M, stride)[r0:r1, c0:c1] * np.float32(2) + np.float32(1)
        np.testing.assert_array_equal(y[:M * stride], want.ravel(), err_msg=f"shift {sh}")
        expect_guard("descriptor", y, M * stride)


@case("import/descriptor_gather")
def case_descriptor_gather_scatter(run):
    # desc.gather of 8 rows (three outside the tensor: zeros), desc.scatter of them to rows
    # M - 1 - row (three outside: not written), a NaN-padded 4 x 16 load at (M - 2, N - 8), and
    # desc.atomic_add of the gathered rows.
    M, N = 10, 40
    x = uniform(43, M * N, -1, 1)
    rows = np.array([0, 3, 9, 10, -1, 5, 12, 2], np.int32)
    y, z, sums = out(M * N), out(64), np.zeros(8 * 32 + GUARD, np.float32)
    run("import/descriptor_gather", "descriptor_gather_kernel", 1, x, rows, y, z, sums, M, N)
    x2 = x.reshape(M, N)
    g = np.array([x2[r, :32] if 0 <= r < M else np.zeros(32, np.float32) for r in rows])
    want_y = np.full((M, N), SENTINEL, np.float32)
    for r, row in zip(rows, g):
        if 0 <= M - 1 - r < M:
            want_y[M - 1 - r, :32] = row
    np.testing.assert_array_equal(y[:M * N], want_y.ravel())
    want_z = np.full((4, 16), np.nan, np.float32)
    want_z[:2, :8] = x2[8:10, 32:40]
    np.testing.assert_array_equal(z[:64], want_z.ravel())  # NaN where out of bounds
    np.testing.assert_array_equal(sums[:256], g.ravel())
    expect_guard("descriptor_gather y", y, M * N)
    expect_guard("descriptor_gather z", z, 64)
    expect_guard("descriptor_gather sums", sums, 256, 0)


@case("import/descriptor_arg")
def case_descriptor_arguments(run):
    # A TensorDescriptor argument is its base pointer, shape (i32) and strides (i64).
    M, N = 20, 16
    x = uniform(44, M * N, -4, 4)
    y = out(M * N)
    run("import/descriptor_arg", "descriptor_arg_kernel", cdiv(M, 8), x, M, N, N, 1, y, M, N, N, 1)
    np.testing.assert_array_equal(y[:M * N], x - np.float32(3))
    expect_guard("descriptor_arg", y, M * N)


def exp2_flushed(x):
    """tl.exp2 on NVIDIA GPUs: ex2.approx.ftz.f32, subnormal results flushed to zero."""
    e = np.exp2(x.astype(np.float64))
    return np.where(e < 2.0 ** -126, 0.0, e)


@case("import/gather_clamp")
def case_gather_clamp_exp2(run):
    B, lo, hi = 64, -0.5, 0.75
    x = uniform(45, B, -2, 2)
    x[[3, 17]] = np.nan
    x[20:28] = np.linspace(-140, -120, 8)  # exp2: subnormal results, flushed
    idx = rng(46).integers(0, B, B).astype(np.int32)
    for first in (1.0, -1.0):  # the `if` on a one-element tensor takes either side
        x[0] = first
        o = out(6 * B)
        run("import/gather_clamp", "gather_clamp_kernel", 1, x, idx, o, lo, hi)
        np.testing.assert_array_equal(o[:B], x[idx])  # NaN compares equal here
        np.testing.assert_array_equal(o[B:2 * B], np.take_along_axis(x.reshape(8, 8), idx.reshape(8, 8) % 8, 1).ravel())
        f32 = np.float32
        np.testing.assert_array_equal(o[2 * B:3 * B], np.fmin(np.fmax(x, f32(lo)), f32(hi)))  # NaN gives lo
        np.testing.assert_array_equal(o[3 * B:4 * B], np.minimum(np.maximum(x, f32(lo)), f32(hi)))  # NaN stays
        e, want = o[4 * B:5 * B], exp2_flushed(x)
        flushed = want == 0
        assert flushed.sum() >= 3 and (e[flushed] == 0).all(), f"exp2 did not flush: {e[flushed]}"
        ok = ~np.isnan(x)
        expect_close("exp2", e[ok], want[ok], 0, 1e-6)
        np.testing.assert_array_equal(o[5 * B:6 * B], x * f32(0.5) if first > 0 else x)
        expect_guard("gather_clamp", o, 6 * B)


def float_to_i32(v):
    """libdevice's float2int: saturating, NaN to 0."""
    v = np.nan_to_num(v.astype(np.float64), nan=0.0, posinf=2.0 ** 31, neginf=-2.0 ** 31)
    return np.clip(v, -2.0 ** 31, 2.0 ** 31 - 1).astype(np.int64).astype(np.int32)


@case("import/libdevice")
def case_libdevice_compositions(run):
    B = 64
    x = uniform(47, B, -3, 3)
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -2.5, 1e10, -1e10, 1e-40, -1e-40, 8388609.0,
               -4194304.5, 0.49999997, 3.0]
    x[:len(special)] = special
    i = rng(48).integers(-2 ** 31, 2 ** 31, B, dtype=np.int64).astype(np.int32)
    i[:6] = [0, -1, -2 ** 31, 1, 2 ** 31 - 1, 96]
    fo, io = out(4 * B), out(9 * B, np.int32, -777)
    run("import/libdevice", "libdevice_kernel", 1, x, i, fo, io)
    f32 = np.float32
    np.testing.assert_array_equal(fo[:B], np.rint(x), err_msg="rint")
    np.testing.assert_array_equal(fo[B:2 * B], np.where(x <= f32(0.5), f32(0), x - f32(0.5)), err_msg="fdim")
    np.testing.assert_array_equal(fo[2 * B:3 * B], np.where(np.isnan(x), f32(0), np.clip(x, 0, 1)), err_msg="saturatef")
    e, want = fo[3 * B:4 * B], exp2_flushed(x)
    finite = np.isfinite(want)
    expect_close("libdevice exp2", e[finite], want[finite], 0, 1e-6)
    np.testing.assert_array_equal(e[~finite], want[~finite].astype(np.float32), err_msg="libdevice exp2")
    flags = np.isnan(x) + 2 * np.isinf(x) + 4 * np.signbit(x) + 8 * np.isfinite(x)
    np.testing.assert_array_equal(io[:B], flags, err_msg="isnan/isinf/signbit/finitef")
    np.testing.assert_array_equal(io[B:2 * B], float_to_i32(np.rint(x)), err_msg="float2int_rn")
    np.testing.assert_array_equal(io[2 * B:3 * B], float_to_i32(np.floor(x)), err_msg="float2int_rd")
    u = i.view(np.uint32).astype(np.uint64)
    popc = np.array([bin(int(v)).count("1") for v in u])
    clz = np.array([32 - int(v).bit_length() for v in u])
    np.testing.assert_array_equal(io[3 * B:4 * B], popc + 64 * clz, err_msg="popc, clz")
    ffs = np.array([(int(v) & -int(v)).bit_length() for v in u])
    np.testing.assert_array_equal(io[4 * B:5 * B], ffs, err_msg="ffs")
    brev = np.array([int(f"{int(v):032b}"[::-1], 2) for v in u], np.uint32).view(np.int32)
    np.testing.assert_array_equal(io[5 * B:6 * B], brev, err_msg="brev")
    i64 = i.astype(np.int64)
    b = (i64 * 7 + 3).astype(np.int32).astype(np.int64)  # i * 7 + 3 wraps in i32
    np.testing.assert_array_equal(io[6 * B:7 * B], ((i64 * b) >> 32).astype(np.int32), err_msg="mulhi")
    b3 = (i64 * 3).astype(np.int32).astype(np.int64)
    hadd = ((i64 + b3) >> 1).astype(np.int32)
    rhadd = ((i64 + 5 + 1) >> 1).astype(np.int32)
    np.testing.assert_array_equal(io[7 * B:8 * B], hadd ^ rhadd, err_msg="hadd, rhadd")
    np.testing.assert_array_equal(io[8 * B:9 * B], x.view(np.int32), err_msg="float_as_int")
    expect_guard("libdevice f", fo, 4 * B)
    expect_guard("libdevice i", io, 9 * B, -777)


# ---------------------------------------------------------------- tests/triton/kernels.py

@case("triton/histogram")
def case_histogram(run):
    n, bins, lo, width = 1000, 16, -4.0, 0.5  # 16 programs of 64; values past both ends clamp
    x = (rng(30).standard_normal(n) * 2.5).astype(np.float32)
    assert (x < lo).any() and (x >= lo + bins * width).any()
    counts = out(bins, np.int32, 0)
    run("triton/histogram", "histogram_kernel", cdiv(n, 64), x, counts, n, lo, 1 / width)
    b = np.floor((x - np.float32(lo)) * np.float32(1 / width)).astype(np.int32).clip(0, bins - 1)
    np.testing.assert_array_equal(counts[:bins], np.bincount(b, minlength=bins))
    assert counts[:bins].sum() == n
    expect_guard("histogram", counts, bins, 0)


@case("triton/argmax")
def case_argmax_custom_combine(run):
    rows, cols, stride = 5, 150, 152  # BLOCK 32: five blocks per row, the last has 22 columns
    x = rng(31).standard_normal(rows * stride).astype(np.float32).reshape(rows, stride)
    x[:, cols:] = 1e30  # the row padding is past n_cols: the mask must keep it out
    x[1, 10] = x[1, 100] = 50.0  # a tie across blocks: the first wins
    x[2, 131] = x[2, 149] = 60.0  # a tie inside the last, masked block
    x[3, 0] = 70.0  # the first column
    x[4, 149] = 80.0  # the last column
    mx, idx = out(rows), out(rows, np.int32, -1)
    run("triton/argmax", "argmax_kernel", rows, x.ravel(), mx, idx, cols, stride)
    np.testing.assert_array_equal(idx[:rows], np.argmax(x[:, :cols], axis=1))
    np.testing.assert_array_equal(mx[:rows], x[:, :cols].max(axis=1))
    assert list(idx[1:rows]) == [10, 131, 0, 149]
    expect_guard("argmax", idx, rows, -1)
    expect_guard("max", mx, rows)


@case("triton/cumsum")
def case_cumsum_across_blocks(run):
    rows, cols, stride = 4, 100, 101  # BLOCK 32: the running total crosses three block edges
    x = uniform(32, rows * stride, -1, 2)
    o = out(rows * stride)
    run("triton/cumsum", "cumsum_kernel", rows, x, o, cols, stride)
    want = np.full((rows, stride), SENTINEL)
    want[:, :cols] = np.cumsum(x.reshape(rows, stride)[:, :cols].astype(np.float64), axis=1)
    expect_close("cumsum", o[:rows * stride], want.ravel(), 1e-5, 1e-5)
    expect_guard("cumsum", o, rows * stride)


@case("triton/rms_norm")
def case_rms_norm_device_function(run):
    rows, cols, stride, eps = 6, 77, 80, 1e-6  # the mean square comes from a device function
    x, w = uniform(33, rows * stride, -3, 3), uniform(34, cols, 0.5, 1.5)
    o, rstd = out(rows * stride), out(rows)
    run("triton/rms_norm", "rms_norm_kernel", rows, x, w, o, rstd, cols, stride, eps)
    v = x.reshape(rows, stride)[:, :cols].astype(np.float64)
    want_rstd = 1 / np.sqrt((v * v).mean(axis=1) + eps)
    want = np.full((rows, stride), SENTINEL)
    want[:, :cols] = v * want_rstd[:, None] * w
    expect_close("rms_norm rstd", rstd[:rows], want_rstd, 1e-6, 1e-5)
    expect_close("rms_norm out", o[:rows * stride], want.ravel(), 1e-5, 1e-5)
    expect_guard("rms_norm out", o, rows * stride)
    expect_guard("rms_norm rstd", rstd, rows)


@case("triton/transpose")
def case_transpose_tiles(run):
    M, N = 37, 21  # 16 x 8 tiles: 3 x 3 programs, masked on both axes
    x = uniform(35, M * N, -5, 5)
    o = out(M * N)
    run("triton/transpose", "transpose_kernel", (cdiv(M, 16), cdiv(N, 8)), x, o, M, N)
    np.testing.assert_array_equal(o[:M * N], x.reshape(M, N).T.ravel())
    expect_guard("transpose", o, M * N)


# ---------------------------------------------------------------- the tests

@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_matches_numpy(run, name):
    CASES[name][1](run)


def test_checked_mode_names_the_python_line(ctx):
    # x is 10 elements shorter than n says: the interpreter's checked mode reports the load at
    # its line in kernels.py, with the argument's name.
    kernel = Runner(ctx, "interp", _kernels).kernel("import/vadd", "add_kernel")
    n = 100
    with pytest.raises(tri.TriError) as e:
        kernel[2](np.ones(n - 10, np.float32), np.ones(n, np.float32), np.zeros(n, np.float32), n)
    assert e.value.code == tri.ErrorCode.RUNTIME
    assert "tests/import/kernels.py:16:9: error: 'load'" in e.value.message and "%x_ptr" in e.value.message, \
        e.value.message


def export_names(kernels_py):
    """The keys of TRI_EXPORTS in a kernels file, read without running it (no Triton needed)."""
    for node in ast.parse(kernels_py.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "TRI_EXPORTS" for t in node.targets):
            return sorted(ast.literal_eval(k) for k in node.value.keys)
    pytest.fail(f"{kernels_py} has no TRI_EXPORTS")


@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_every_export_has_a_fixture_and_every_fixture_a_case(corpus):
    folder = CORPORA[corpus]
    fixtures = sorted(p.stem for p in (folder / "ttir").glob("*.ttir"))
    assert fixtures == export_names(folder / "kernels.py"), \
        f"tests/{corpus}/ttir is out of step with TRI_EXPORTS of its kernels.py: run python3 -m tri.triton"
    tested = {f for fixtures_, _ in CASES.values() for f in fixtures_}
    missing = [f for f in fixtures if f"{corpus}/{f}" not in tested]
    assert not missing, f"fixtures without a NumPy check here: {missing}"
