"""The Triton corpus on a GPU, every kernel run twice on the same torch CUDA tensors, once by
Triton and once by Tri (a committed TTIR fixture imported and compiled for target "cuda",
launched on torch's current stream), Tri's outputs compared with Triton's and both timed. Four
corpora (--corpus):

  import, triton  our own kernels: TRI_EXPORTS of tests/import/kernels.py and tests/triton/kernels.py
                  (fixtures tests/*/ttir/NAME.ttir), Triton launching the @triton.jit function with the
                  export's constexprs and the grid tests/triton/test_corpus.py uses; cases below.
  tutorials, flaggems
                  kernels written elsewhere, as their authors launch them: Triton's tutorials and FlagGems'
                  operators (tests/corpus; cases in tests/corpus/*/cases.py, the GPU side in
                  bench/gpu/triton_corpus_elsewhere.py, which says what Triton's side is for each).

Outputs are compared bit for bit for integer outputs and for outputs both compute exactly, within a
tolerance chosen per output otherwise (Tri's exp, div and sqrt are correctly rounded or close to
it where Triton uses the hardware approximations; summation orders differ). The dropout kernel
(Philox through tl.rand) is also checked bit for bit against NumPy's Philox. Each kernel runs at a
"test" size (small, odd shapes, as the CPU tests use) and a "bench" size (realistic, for timing);
every output carries guard elements (and row padding) that no kernel may write, which the
comparison covers.

Times are medians of triton.testing.do_bench (CUDA events, L2 flushed between repetitions): Tri
through a prepared LaunchPlan, Triton through its launcher. Ratio is Tri ms / Triton ms (below 1:
Tri is faster). A kernel that fails to import, compile, launch or compare is a row with its error,
the script goes on, and it exits with status 1 at the end; a tests/corpus fixture that fails to
import exactly as tests/corpus/expected_failures.json says is an XFAIL row (Triton still timed).
JSON rows are named "triton corpus <kernel> <size>" with "tri" and "triton" fields (PERF.md).

--device cpu runs the Tri side alone on NumPy arrays (target "cpu"; no torch or Triton needed) and
compares with NumPy references, which shakes out the argument lists here without a GPU.

usage (from the repository root):
  TRI_LIBRARY=build/src/libtri.so.0 PYTHONPATH=bindings/python/src \\
      python3 bench/gpu/triton_corpus.py [--out DIR] [--corpus import,triton,tutorials,flaggems]
          [--sizes test,bench] [--only NAME,...] [--device cuda|cpu] [--timeout S]
Writes DIR/triton-corpus.json and DIR/triton-corpus.md (DIR default .), and prints the table.
"""

import argparse
import ast
import datetime
import importlib.util
import json
import math
import os
import statistics
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "bindings" / "python" / "src"))

import tri  # noqa: E402

sys.path.insert(0, str(HERE))
import triton_corpus_elsewhere as elsewhere  # noqa: E402  (tests/corpus: Triton's tutorials, FlagGems)
from corpus.common import Mismatch, Tol, compare, philox_uniform  # noqa: E402

CORPORA = {"import": ROOT / "tests" / "import", "triton": ROOT / "tests" / "triton"}
GUARD = 8
SENTINEL = -777.0
NUM_WARPS = 4  # Triton's default, and Tri's
WARMUP_MS, REP_MS = 10, 50


# ---------------------------------------------------------------- the exports, read without Triton

@dataclass
class Export:
    corpus: str
    name: str  # the TRI_EXPORTS key, the fixture's stem
    kernel: str  # the @triton.jit function's name
    signature: Dict[str, str]
    constexprs: Dict[str, Any]
    options: Dict[str, Any]

    @property
    def key(self) -> str:
        return f"{self.corpus}/{self.name}"

    @property
    def fixture(self) -> Path:
        return CORPORA[self.corpus] / "ttir" / f"{self.name}.ttir"


def read_exports(corpus: str) -> Dict[str, Export]:
    """TRI_EXPORTS of tests/CORPUS/kernels.py from its syntax tree (module-level string constants
    such as F32 are resolved), so the CPU mode needs no Triton."""
    path = CORPORA[corpus] / "kernels.py"
    tree = ast.parse(path.read_text())
    names: Dict[str, Any] = {}

    def value(node):
        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.Dict):
            return {value(k): value(v) for k, v in zip(node.keys, node.values)}
        return ast.literal_eval(node)

    for node in tree.body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            continue
        target = node.targets[0].id
        if target != "TRI_EXPORTS":
            try:
                names[target] = ast.literal_eval(node.value)
            except ValueError:
                pass
            continue
        out = {}
        for k, v in zip(node.value.keys, node.value.values):
            name = ast.literal_eval(k)
            kw = {a.arg: a.value for a in v.keywords}
            out[name] = Export(corpus, name, kw["kernel"].id, value(kw["signature"]),
                               value(kw["constexprs"]) if "constexprs" in kw else {},
                               value(kw["options"]) if "options" in kw else {})
        return out
    raise SystemExit(f"{path} has no TRI_EXPORTS")


def tri_param_names(signature: Dict[str, str]) -> List[str]:
    """The parameters of the imported kernel: a TensorDescriptor argument ("tensordesc<fp32[8,
    16]>") is its base pointer, then its shape and strides (Triton 3.9's names)."""
    names = []
    for n, ty in signature.items():
        names.append(n)
        if ty.startswith("tensordesc"):
            rank = len(ty[ty.index("[") + 1:ty.index("]")].split(","))
            names += [f"{n}.shape.{d}" for d in range(rank)] + [f"{n}.stride.{d}" for d in range(rank)]
    return names


def load_triton_module(corpus: str):
    """tests/CORPUS/kernels.py imported (it needs triton), under a name of its own."""
    path = CORPORA[corpus] / "kernels.py"
    spec = importlib.util.spec_from_file_location(f"tri_corpus_{corpus}_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- cases

@dataclass
class Case:
    export: str  # "import/vadd"
    size: str  # "test" or "bench"
    label: str  # what the size is, for the table
    grid: Tuple[int, ...]
    # Every runtime parameter by name: NumPy arrays (inputs, or outputs' initial contents) and scalars.
    args: Dict[str, Any]
    outs: Dict[str, Tol]  # the outputs among args, and how each is compared
    ref: Optional[Callable[[], Dict[str, np.ndarray]]] = None  # each output's expected full buffer
    note: str = ""
    # Triton's arguments by name from the device tensors and scalars of args (default: args):
    # where they differ, as for a TensorDescriptor argument (Tri takes its base, shape, strides).
    triton_args: Optional[Callable[[Dict[str, Any]], Dict[str, Any]]] = None


def cdiv(a, b):
    return (a + b - 1) // b


def rng(seed):
    return np.random.default_rng(seed)


def uniform(seed, n, lo, hi):
    return rng(seed).uniform(lo, hi, n).astype(np.float32)


def out(n, dtype=np.float32, fill=SENTINEL):
    return np.full(n + GUARD, fill, dtype=dtype)


def filled(buf, n, values):
    """buf's initial contents (guards, padding) with the first n elements replaced by values."""
    want = buf.astype(np.float64) if buf.dtype.kind == "f" else buf.copy()
    want[:n] = np.asarray(values).ravel()
    return want


def padded_rows(buf, rows, stride, cols, values):
    """buf's initial contents with rows x cols of a rows x stride matrix replaced by values."""
    want = buf.astype(np.float64) if buf.dtype.kind == "f" else buf.copy()
    m = want[:rows * stride].reshape(rows, stride)
    m[:, :cols] = values
    return want


CASES: Dict[str, Callable[[str], List[Case]]] = {}


def case(fn):
    CASES[fn.__name__[len("case_"):]] = fn
    return fn


# ---------------------------------------------------------------- tests/import/kernels.py

@case
def case_vadd(size):
    n = 1000 if size == "test" else (1 << 22) + 17  # BLOCK 64
    x, y = uniform(1, n, -10, 10), uniform(2, n, -10, 10)
    o = out(n)
    return [Case("import/vadd", size, f"n={n}", (cdiv(n, 64),), dict(x_ptr=x, y_ptr=y, out_ptr=o, n=n),
                 {"out_ptr": Tol("exact")}, lambda: {"out_ptr": filled(o, n, x + y)})]


@case
def case_softmax(size):
    # BLOCK 128; a persistent loop: fewer programs than rows.
    rows, cols, in_stride, out_stride, programs = (7, 100, 100, 104, 3) if size == "test" else \
        (16411, 100, 100, 104, 528)
    x = uniform(3, rows * in_stride, -4, 4)
    o = out(rows * out_stride)

    def ref():
        v = x.reshape(rows, in_stride)[:, :cols].astype(np.float64)
        e = np.exp(v - v.max(axis=1, keepdims=True))
        return {"out_ptr": padded_rows(o, rows, out_stride, cols, e / e.sum(axis=1, keepdims=True))}

    return [Case("import/softmax", size, f"{rows}x{cols} ({programs} programs)", (programs,),
                 dict(out_ptr=o, in_ptr=x, in_row_stride=in_stride, out_row_stride=out_stride, n_rows=rows,
                      n_cols=cols),
                 {"out_ptr": Tol("close", 1e-7, 2e-5)}, ref)]


def layer_norm_reference(x, w, b, eps):
    x = x.astype(np.float64)
    mean = x.mean(axis=1)
    var = ((x - mean[:, None]) ** 2).mean(axis=1)
    rstd = 1 / np.sqrt(var + eps)
    return (x - mean[:, None]) * rstd[:, None] * w + b, mean, rstd


@case
def case_layer_norm_fwd(size):
    rows, n, stride, eps = (5, 77, 80, 1e-5) if size == "test" else (4096, 1000, 1008, 1e-5)  # BLOCK 32
    x = uniform(4, rows * stride, -3, 3)
    w, b = uniform(5, n, 0.5, 1.5), uniform(6, n, -1, 1)
    y, mean, rstd = out(rows * stride), out(rows), out(rows)

    def ref():
        want_y, want_mean, want_rstd = layer_norm_reference(x.reshape(rows, stride)[:, :n], w, b, eps)
        return {"Y": padded_rows(y, rows, stride, n, want_y), "Mean": filled(mean, rows, want_mean),
                "Rstd": filled(rstd, rows, want_rstd)}

    return [Case("import/layer_norm_fwd", size, f"{rows}x{n}", (rows,),
                 dict(X=x, Y=y, W=w, B=b, Mean=mean, Rstd=rstd, stride=stride, N=n, eps=eps),
                 {"Y": Tol("close", 2e-5, 1e-5), "Mean": Tol("close", 1e-6, 1e-5), "Rstd": Tol("close", 1e-6, 1e-5)},
                 ref)]


@case
def case_matmul(size):
    # f16, blocks of 16 grouped by 2 rows, leaky-ReLU epilogue; f32 accumulation, one rounding to
    # f16 (Tri and Triton may differ by an f16 ulp where their f32 sums do).
    M, N, K = (37, 45, 40) if size == "test" else (509, 515, 500)
    a = uniform(7, M * K, -1, 1).astype(np.float16)
    b = uniform(8, K * N, -1, 1).astype(np.float16)
    c = out(M * N, np.float16)

    def ref():
        s = a.reshape(M, K).astype(np.float64) @ b.reshape(K, N).astype(np.float64)
        return {"c_ptr": filled(c, M * N, np.where(s >= 0, s, 0.01 * s))}

    return [Case("import/matmul", size, f"{M}x{N}x{K} f16", (cdiv(M, 16) * cdiv(N, 16),),
                 dict(a_ptr=a, b_ptr=b, c_ptr=c, M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=N, stride_bn=1,
                      stride_cm=N, stride_cn=1),
                 {"c_ptr": Tol("close", 2.5e-6 * K, 1.5e-3)}, ref)]


@case
def case_matmul_tf32(size):
    # f32 inputs, tf32 dot (inputs rounded to 10 bits on both sides, maybe not the same way), f16 out.
    M, N, K = (33, 20, 50) if size == "test" else (257, 260, 300)
    a, b = uniform(21, M * K, -1, 1), uniform(22, K * N, -1, 1)
    c = out(M * N, np.float16)
    a64, b64 = a.reshape(M, K).astype(np.float64), b.reshape(K, N).astype(np.float64)
    want = a64 @ b64
    bound = np.zeros(c.size)
    bound[:M * N] = (np.abs(a64) @ np.abs(b64) * 2.0 ** -8 + np.abs(want) * 2.0 ** -9 + 1e-5).ravel()
    return [Case("import/matmul_tf32", size, f"{M}x{N}x{K} f32 (tf32)", (cdiv(M, 16) * cdiv(N, 16),),
                 dict(a_ptr=a, b_ptr=b, c_ptr=c, M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=N, stride_bn=1,
                      stride_cm=N, stride_cn=1),
                 {"c_ptr": Tol("bound", bound=bound)}, lambda: {"c_ptr": filled(c, M * N, want)})]


@case
def case_gelu(size):
    n = 200 if size == "test" else (1 << 22) + 5  # BLOCK 64
    x = uniform(9, n, -5, 5)
    y, yt = out(n), out(n)

    def ref():
        v = x.astype(np.float64)
        erf = np.vectorize(math.erf)
        return {"y_ptr": filled(y, n, 0.5 * v * (1 + erf(v * 0.7071067811865476))),
                "y_tanh_ptr": filled(yt, n, 0.5 * v * (1 + np.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3))))}

    return [Case("import/gelu", size, f"n={n}", (cdiv(n, 64),), dict(x_ptr=x, y_ptr=y, y_tanh_ptr=yt, n=n),
                 {"y_ptr": Tol("close", 1e-6, 1e-5), "y_tanh_ptr": Tol("close", 1e-6, 1e-5)}, ref)]


@case
def case_reduce_scan(size):
    # sum, max, a (value, index) argmax with a custom combine, cumsum, a product scan and a reverse
    # integer cumsum; one row of at most 64 (BLOCK) per program.
    rows, cols, stride = (6, 50, 50) if size == "test" else (16381, 50, 53)
    x = uniform(10, rows * stride, 0.5, 1.5)
    x[2 * stride + 7] = x[2 * stride + 30] = 2.0  # a tie: the first index wins
    s, m, cs, cp = out(rows), out(rows), out(rows * stride), out(rows * stride)
    am, ic = out(rows, np.int32, -1), out(rows * stride, np.int32, -1)

    def ref():
        v = x.reshape(rows, stride)[:, :cols].astype(np.float64)
        return {"sum_ptr": filled(s, rows, v.sum(axis=1)),
                "max_ptr": filled(m, rows, v.max(axis=1).astype(np.float32)),
                "argmax_ptr": filled(am, rows, np.argmax(v, axis=1)),
                "cumsum_ptr": padded_rows(cs, rows, stride, cols, np.cumsum(v, axis=1)),
                "cumprod_ptr": padded_rows(cp, rows, stride, cols, np.cumprod(v, axis=1)),
                "icum_ptr": padded_rows(ic, rows, stride, cols, np.tile(np.arange(cols, 0, -1), (rows, 1)))}

    return [Case("import/reduce_scan", size, f"{rows}x{cols}", (rows,),
                 dict(x_ptr=x, sum_ptr=s, max_ptr=m, argmax_ptr=am, cumsum_ptr=cs, cumprod_ptr=cp, icum_ptr=ic,
                      n_cols=cols, stride=stride),
                 {"sum_ptr": Tol("close", 1e-5, 2e-5), "max_ptr": Tol("exact"), "argmax_ptr": Tol("exact"),
                  "cumsum_ptr": Tol("close", 1e-5, 2e-5), "cumprod_ptr": Tol("close", 1e-5, 2e-5),
                  "icum_ptr": Tol("exact")}, ref)]


@case
def case_atomics(size):
    # A histogram (atomic_add on gathered addresses), atomic_max, and an atomic_cas claim flag
    # (whichever program arrives first: any id + 1 in 1..programs).
    n, bins = (100, 8) if size == "test" else ((1 << 20) + 3, 64)  # BLOCK 32
    programs = cdiv(n, 32)
    x = rng(11).integers(0, bins, n).astype(np.int32)
    hist, mx, flag = out(bins, np.int32, 0), out(1, np.int32, -5), out(1, np.int32, 0)

    def ref():
        return {"bins_ptr": filled(hist, bins, np.bincount(x, minlength=bins)), "max_ptr": filled(mx, 1, [x.max()])}

    return [Case("import/atomics", size, f"n={n}, {bins} bins", (programs,),
                 dict(x_ptr=x, bins_ptr=hist, max_ptr=mx, flag_ptr=flag, n=n),
                 {"bins_ptr": Tol("exact"), "max_ptr": Tol("exact"), "flag_ptr": Tol("range", lo=1, hi=programs)},
                 ref)]


@case
def case_attn_fwd(size):
    # heads x S positions (blocks of 16, the last masked), head dimension 16, f16.
    heads, S, D, sm_scale = (2, 40, 16, 0.25) if size == "test" else (32, 1000, 16, 0.25)
    q, k, v = (uniform(seed, heads * S * D, -1, 1).astype(np.float16) for seed in (12, 13, 14))
    o = out(heads * S * D, np.float16)

    def ref():
        q64, k64, v64 = (a.astype(np.float64).reshape(heads, S, D) for a in (q, k, v))
        s = q64 @ k64.transpose(0, 2, 1) * sm_scale
        p = np.exp(s - s.max(axis=2, keepdims=True))
        return {"Out": filled(o, heads * S * D, (p / p.sum(axis=2, keepdims=True)) @ v64)}

    return [Case("import/attn_fwd", size, f"{heads} heads x {S} x {D} f16", (cdiv(S, 16), heads),
                 dict(Q=q, K=k, V=v, Out=o, sm_scale=sm_scale, seq_len=S), {"Out": Tol("close", 2e-3, 5e-3)}, ref)]


@case
def case_control(size):
    # A device-function call in both arms of an if, split/join of pairs, a while loop. BLOCK 16.
    n = 40 if size == "test" else 100003
    B, programs = 16, cdiv(n, 16)
    x = uniform(15, n, -2, 2)
    o, steps = out(n), out(programs, np.int32, -1)

    def ref():
        pid = np.arange(programs)
        even = pid % 2 == 0
        scale = np.where(even, 2, -1).astype(np.float32)
        shift = np.where(even, 1, 0.5).astype(np.float32)
        a = pid.astype(np.float32) * scale + shift
        xp = np.zeros(programs * B, np.float32)
        xp[:n] = x
        y = xp.reshape(programs, B) * a[:, None]
        swapped = y.reshape(programs, B // 2, 2)[:, :, ::-1].reshape(-1)
        value = y.astype(np.float64).sum(axis=1)
        k = np.zeros(programs, np.int64)
        for _ in range(64):
            go = (value < 1000.0) & (k < 64)
            value = np.where(go, value * 2 + 1, value)
            k += go
        return {"out_ptr": filled(o, n, swapped[:n]), "steps_ptr": filled(steps, programs, k)}

    return [Case("import/control", size, f"n={n}", (programs,), dict(x_ptr=x, out_ptr=o, steps_ptr=steps, n=n),
                 {"out_ptr": Tol("exact"), "steps_ptr": Tol("exact")}, ref)]


@case
def case_checked_sqrt(size):
    # debug=True (Triton's own overflow checks and the device_assert stay in); only inputs that
    # pass the assert here: a failed assert stops the CUDA context for the rest of the run.
    n = 70 if size == "test" else (1 << 22) + 1  # BLOCK 32
    x = uniform(16, n, 0, 9)
    o = out(n)
    return [Case("import/checked_sqrt", size, f"n={n}", (cdiv(n, 32),), dict(x_ptr=x, out_ptr=o, n=n),
                 {"out_ptr": Tol("close", 0, 1e-6)}, lambda: {"out_ptr": filled(o, n, np.sqrt(x))},
                 note="assert not triggered")]


@case
def case_dropout(size):
    # The keep mask is Philox (integer arithmetic): the zeros must be the same elements on both
    # sides. x / (1 - p) is Triton's div.full.f32 on both sides on the GPU (the importer's
    # fdiv[approx=true]), so Tri and Triton agree bit for bit; on the CPU it is the correctly
    # rounded quotient, bit for bit with NumPy.
    n, p, seed = (300, 0.3, 1234) if size == "test" else ((1 << 22) + 7, 0.3, 1234)  # BLOCK 64
    x = uniform(17, n, -1, 1)
    o = out(n)

    def ref():
        keep = philox_uniform(np.arange(n), seed) > np.float32(p)
        assert n // 2 < keep.sum() < n * 9 // 10, "the reference's mask is degenerate"
        return {"output_ptr": filled(o, n, np.where(keep, x / (np.float32(1) - np.float32(p)), np.float32(0)))}

    return [Case("import/dropout", size, f"n={n}", (cdiv(n, 64),), dict(x_ptr=x, output_ptr=o, n_elements=n, p=p,
                                                                        seed=seed),
                 {"output_ptr": Tol("exact")}, ref)]


@case
def case_layer_norm_bwd_dx(size):
    # dx per row, and dw/db partial sums in GROUP_SIZE_M = 4 groups under a spin lock
    # (atomic_cas / atomic_xchg); the order rows take a lock in varies, so do the partial sums'
    # last bits. BLOCK_SIZE_N 128: rows of at most 128.
    M, N, stride, G = (10, 100, 100, 4) if size == "test" else (1024, 100, 104, 4)
    x, dy, w = uniform(18, M * stride, -2, 2), uniform(19, M * stride, -1, 1), uniform(20, N, 0.5, 1.5)
    x2 = x.reshape(M, stride)[:, :N].astype(np.float64)
    mean = x2.mean(axis=1).astype(np.float32)
    rstd = (1 / np.sqrt(((x2 - x2.mean(axis=1, keepdims=True)) ** 2).mean(axis=1) + 1e-5)).astype(np.float32)
    dx = out(M * stride)
    pdw, pdb = np.zeros(G * N, np.float32), np.zeros(G * N, np.float32)
    lock = np.zeros(2 * G, np.int32)

    def ref():
        dy2 = dy.reshape(M, stride)[:, :N].astype(np.float64)
        xhat = (x2 - mean[:, None].astype(np.float64)) * rstd[:, None]
        wdy = w.astype(np.float64) * dy2
        c1 = (xhat * wdy).sum(axis=1, keepdims=True) / N
        c2 = wdy.sum(axis=1, keepdims=True) / N
        want_dx = (wdy - (xhat * c1 + c2)) * rstd[:, None]
        group = np.arange(M) % G
        want_dw = np.stack([(dy2 * xhat)[group == g].sum(axis=0) for g in range(G)])
        want_db = np.stack([dy2[group == g].sum(axis=0) for g in range(G)])
        want_lock = np.array([0] * G + [1 if g < M else 0 for g in range(G)], np.int32)
        return {"DX": padded_rows(dx, M, stride, N, want_dx), "DW": want_dw.ravel(), "DB": want_db.ravel(),
                "Lock": want_lock}

    partial = Tol("close", 1e-4 + 1e-6 * (M // G), 1e-4)
    return [Case("import/layer_norm_bwd_dx", size, f"{M}x{N}, {G} groups", (M,),
                 dict(DX=dx, DY=dy, DW=pdw, DB=pdb, X=x, W=w, Mean=mean, Rstd=rstd, Lock=lock, stride=stride, N=N),
                 {"DX": Tol("close", 1e-5, 1e-4), "DW": partial, "DB": partial, "Lock": Tol("exact")}, ref)]


@case
def case_layer_norm_bwd_dwdb(size):
    # The partial sums (here random, the same on both sides) summed over their M rows, BLOCK_SIZE_M
    # = 4 rows at a time, by programs of 32 columns. In test_corpus.py M is the 4 groups of dx's.
    M, N = (4, 100) if size == "test" else (1024, 4099)
    pdw, pdb = uniform(40, M * N, -1, 1), uniform(41, M * N, -1, 1)
    fdw, fdb = out(N), out(N)

    def ref():
        return {"FINAL_DW": filled(fdw, N, pdw.reshape(M, N).astype(np.float64).sum(axis=0)),
                "FINAL_DB": filled(fdb, N, pdb.reshape(M, N).astype(np.float64).sum(axis=0))}

    tol = Tol("close", 1e-5 + 2e-6 * M, 1e-4)
    return [Case("import/layer_norm_bwd_dwdb", size, f"{M}x{N}", (cdiv(N, 32),),
                 dict(DW=pdw, DB=pdb, FINAL_DW=fdw, FINAL_DB=fdb, M=M, N=N), {"FINAL_DW": tol, "FINAL_DB": tol}, ref)]


@case
def case_early_exit(size):
    # Early returns: rows past n_rows, a store-and-return, an inlined helper with two returns, a
    # return under an if on a reduction (test_corpus.py's case_early_returns).
    rows, cols, stride = (6, 50, 64) if size == "test" else (65537, 50, 64)  # BLOCK 64
    programs = rows + 2
    x = uniform(40, rows * stride, 0.5, 2.0)
    flags = (np.arange(rows) % 6 - 1).astype(np.int32)  # -1, 0, 1, 2, 3, 4, ...
    flags[rows - 1] = 7
    x[(rows - 1) * stride:] *= -1  # the last row: sum(2x) < 0, so it stores 2x + 100
    o = out(rows * stride)

    def ref():
        v = x.reshape(rows, stride)[:, :cols]
        f = flags[:, None]
        y = np.where(f < 0, -v, np.where(f > 0, v * np.float32(2), v - np.float32(1)))
        store = ~((f >= 2) & (y.sum(axis=1, keepdims=True) > 0))
        y = np.where(f >= 2, y + np.float32(100), y)
        return {"y_ptr": padded_rows(o, rows, stride, cols, np.where(store, y, SENTINEL))}

    return [Case("import/early_exit", size, f"{rows}x{cols} ({programs} programs)", (programs,),
                 dict(x_ptr=x, y_ptr=o, flags_ptr=flags, n_rows=rows, n_cols=cols, stride=stride),
                 {"y_ptr": Tol("exact")}, ref)]


@case
def case_clipped_window(size):
    n = 10 if size == "test" else (1 << 20) + 3  # one program per element, WINDOW 5
    x = uniform(41, n, -1, 1)
    o = out(n)

    def ref():
        idx = np.clip(np.arange(n)[:, None] + np.arange(5)[None, :] - 2, 0, n - 1)
        acc = np.zeros(n, np.float32)
        for k in range(5):  # in the kernel's order, in f32
            acc = acc + x[idx[:, k]]
        return {"out_ptr": filled(o, n, acc)}

    return [Case("import/clipped_window", size, f"n={n}", (n,), dict(x_ptr=x, out_ptr=o, n=n),
                 {"out_ptr": Tol("exact")}, ref)]


@case
def case_descriptor(size):
    M, N, stride, shift = (13, 37, 40, 3) if size == "test" else (4099, 2053, 2056, 3)  # blocks 8 x 16
    x = uniform(42, M * stride, -1, 1)
    y = out(M * stride)
    grid = (cdiv(M + shift, 8), cdiv(N + shift, 16))

    def ref():
        want = y.astype(np.float64)
        m = want[:M * stride].reshape(M, stride)
        m[:, :N] = x.reshape(M, stride)[:, :N] * np.float32(2) + np.float32(1)
        return {"y_ptr": want}

    return [Case("import/descriptor", size, f"{M}x{N}, offsets shifted by -{shift}", grid,
                 dict(x_ptr=x, y_ptr=y, M=M, N=N, stride=stride, shift=shift), {"y_ptr": Tol("exact")}, ref)]


@case
def case_descriptor_gather(size):
    M, N = 10, 40  # one program: 8 rows of 32
    x = uniform(43, M * N, -1, 1)
    rows = np.array([0, 3, 9, 10, -1, 5, 12, 2], np.int32)
    y, z, sums = out(M * N), out(64), np.zeros(8 * 32 + GUARD, np.float32)

    def ref():
        x2 = x.reshape(M, N)
        g = np.array([x2[r, :32] if 0 <= r < M else np.zeros(32, np.float32) for r in rows])
        wy = y.astype(np.float64)
        for r, row in zip(rows, g):
            if 0 <= M - 1 - r < M:
                wy[(M - 1 - r) * N:(M - 1 - r) * N + 32] = row
        wz = np.full((4, 16), np.nan)
        wz[:2, :8] = x2[8:10, 32:40]
        return {"y_ptr": wy, "z_ptr": filled(z, 64, wz), "sums_ptr": filled(sums, 256, g)}

    return [Case("import/descriptor_gather", size, "8 rows of 10x40", (1,),
                 dict(x_ptr=x, rows_ptr=rows, y_ptr=y, z_ptr=z, sums_ptr=sums, M=M, N=N),
                 {"y_ptr": Tol("exact"), "z_ptr": Tol("exact"), "sums_ptr": Tol("exact")}, ref)]


@case
def case_descriptor_arg(size):
    M, N = (20, 16) if size == "test" else ((1 << 20) + 5, 16)  # blocks 8 x 16
    x = uniform(44, M * N, -4, 4)
    y = out(M * N)

    def triton_args(a):
        from triton.tools.tensor_descriptor import TensorDescriptor
        return {"xd": TensorDescriptor(a["xd"], [M, N], [N, 1], [8, 16]),
                "yd": TensorDescriptor(a["yd"], [M, N], [N, 1], [8, 16])}

    args = {"xd": x, "xd.shape.0": M, "xd.shape.1": N, "xd.stride.0": N, "xd.stride.1": 1,
            "yd": y, "yd.shape.0": M, "yd.shape.1": N, "yd.stride.0": N, "yd.stride.1": 1}
    return [Case("import/descriptor_arg", size, f"{M}x{N} (TensorDescriptor arguments)", (cdiv(M, 8),), args,
                 {"yd": Tol("exact")}, lambda: {"yd": filled(y, M * N, x - np.float32(3))},
                 triton_args=triton_args)]


@case
def case_gather_clamp(size):
    B, lo, hi = 64, -0.5, 0.75  # one program
    x = uniform(45, B, -2, 2)
    x[[3, 17]] = np.nan
    x[20:28] = np.linspace(-140, -120, 8)
    x[0] = 1.0
    idx = rng(46).integers(0, B, B).astype(np.int32)
    o = out(6 * B)

    def ref():
        f32 = np.float32
        e = np.exp2(x.astype(np.float64))
        parts = [x[idx], np.take_along_axis(x.reshape(8, 8), idx.reshape(8, 8) % 8, 1).ravel(),
                 np.fmin(np.fmax(x, f32(lo)), f32(hi)), np.minimum(np.maximum(x, f32(lo)), f32(hi)),
                 np.where(e < 2.0 ** -126, 0, e), x * f32(0.5)]
        return {"out_ptr": filled(o, 6 * B, np.concatenate(parts))}

    # exp2: Triton's ex2.approx.ftz.f32 and Tri's exp2[subnormal=flush] (4 ulp) differ in the last bits.
    return [Case("import/gather_clamp", size, "64 (one program)", (1,),
                 dict(x_ptr=x, idx_ptr=idx, out_ptr=o, lo=lo, hi=hi), {"out_ptr": Tol("close", 0, 2e-6)}, ref)]


@case
def case_libdevice(size):
    B = 64  # one program
    x = uniform(47, B, -3, 3)
    # No subnormal inputs here: Triton links libdevice in FTZ mode (they read as zero), Tri does not.
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -2.5, 1e10, -1e10, 8388609.0, -4194304.5,
               0.49999997, 3.0]
    x[:len(special)] = special
    i = rng(48).integers(-2 ** 31, 2 ** 31, B, dtype=np.int64).astype(np.int32)
    i[:6] = [0, -1, -2 ** 31, 1, 2 ** 31 - 1, 96]
    fo, io = out(4 * B), out(9 * B, np.int32, -777)
    # fout's last quarter is exp2 (approximations on both sides); the rest is exact.
    return [Case("import/libdevice", size, "64 (one program)", (1,), dict(x_ptr=x, i_ptr=i, fout_ptr=fo, iout_ptr=io),
                 {"fout_ptr": Tol("close", 0, 2e-6), "iout_ptr": Tol("exact")})]


# ---------------------------------------------------------------- tests/triton/kernels.py

@case
def case_histogram(size):
    n, bins, lo, width = (1000, 16, -4.0, 0.5) if size == "test" else ((1 << 22) + 9, 16, -4.0, 0.5)  # BLOCK 64
    x = (rng(30).standard_normal(n) * 2.5).astype(np.float32)
    counts = out(bins, np.int32, 0)

    def ref():
        b = np.floor((x - np.float32(lo)) * np.float32(1 / width)).astype(np.int32).clip(0, bins - 1)
        return {"bins_ptr": filled(counts, bins, np.bincount(b, minlength=bins))}

    return [Case("triton/histogram", size, f"n={n}", (cdiv(n, 64),),
                 dict(x_ptr=x, bins_ptr=counts, n=n, lo=lo, inv_width=1 / width), {"bins_ptr": Tol("exact")}, ref)]


@case
def case_argmax(size):
    rows, cols, stride = (5, 150, 152) if size == "test" else (4096, 1000, 1024)  # BLOCK 32
    x = rng(31).standard_normal(rows * stride).astype(np.float32).reshape(rows, stride)
    x[:, cols:] = 1e30  # the row padding is past n_cols: the mask must keep it out
    x[1, 10] = x[1, 100] = 50.0  # a tie across blocks: the first wins
    x[2, 131] = x[2, 149] = 60.0  # a tie inside a block
    x[3, 0] = 70.0  # the first column
    x[4, cols - 1] = 80.0  # the last column
    x = x.ravel()
    mx, idx = out(rows), out(rows, np.int32, -1)

    def ref():
        v = x.reshape(rows, stride)[:, :cols]
        return {"max_ptr": filled(mx, rows, v.max(axis=1)), "idx_ptr": filled(idx, rows, np.argmax(v, axis=1))}

    return [Case("triton/argmax", size, f"{rows}x{cols}", (rows,),
                 dict(x_ptr=x, max_ptr=mx, idx_ptr=idx, n_cols=cols, stride=stride),
                 {"max_ptr": Tol("exact"), "idx_ptr": Tol("exact")}, ref)]


@case
def case_cumsum(size):
    rows, cols, stride = (4, 100, 101) if size == "test" else (4096, 1000, 1001)  # BLOCK 32
    x = uniform(32, rows * stride, -1, 2)
    o = out(rows * stride)

    def ref():
        v = x.reshape(rows, stride)[:, :cols].astype(np.float64)
        return {"out_ptr": padded_rows(o, rows, stride, cols, np.cumsum(v, axis=1))}

    # f32 running sums of up to cols terms of at most 2, in different orders.
    return [Case("triton/cumsum", size, f"{rows}x{cols}", (rows,), dict(x_ptr=x, out_ptr=o, n_cols=cols, stride=stride),
                 {"out_ptr": Tol("close", 1e-5 + 8e-7 * cols, 1e-5)}, ref)]


@case
def case_rms_norm(size):
    rows, cols, stride, eps = (6, 77, 80, 1e-6) if size == "test" else (4096, 1000, 1008, 1e-6)  # BLOCK 32
    x, w = uniform(33, rows * stride, -3, 3), uniform(34, cols, 0.5, 1.5)
    o, rstd = out(rows * stride), out(rows)

    def ref():
        v = x.reshape(rows, stride)[:, :cols].astype(np.float64)
        want_rstd = 1 / np.sqrt((v * v).mean(axis=1) + eps)
        return {"out_ptr": padded_rows(o, rows, stride, cols, v * want_rstd[:, None] * w),
                "rstd_ptr": filled(rstd, rows, want_rstd)}

    return [Case("triton/rms_norm", size, f"{rows}x{cols}", (rows,),
                 dict(x_ptr=x, w_ptr=w, out_ptr=o, rstd_ptr=rstd, n_cols=cols, stride=stride, eps=eps),
                 {"out_ptr": Tol("close", 1e-5, 1e-5), "rstd_ptr": Tol("close", 1e-6, 1e-5)}, ref)]


@case
def case_transpose(size):
    M, N = (37, 21) if size == "test" else (4099, 2053)  # 16 x 8 tiles, masked on both axes
    x = uniform(35, M * N, -5, 5)
    o = out(M * N)
    return [Case("triton/transpose", size, f"{M}x{N}", (cdiv(M, 16), cdiv(N, 8)), dict(x_ptr=x, out_ptr=o, M=M, N=N),
                 {"out_ptr": Tol("exact")}, lambda: {"out_ptr": filled(o, M * N, x.reshape(M, N).T)})]


# ---------------------------------------------------------------- running

@dataclass
class Row:
    kernel: str
    size: str
    label: str
    tri_ms: Optional[float] = None
    triton_ms: Optional[float] = None
    max_error: Optional[float] = None
    status: str = "ok"
    failed: bool = False
    skipped: bool = False
    notes: List[str] = field(default_factory=list)


class Failed(Exception):
    """A stage that failed: "import", "compile", "launch", "compare", "triton", ... and why (an
    exception, or a message)."""

    def __init__(self, stage, err):
        self.stage, self.err = stage, err
        if isinstance(err, str):
            self.text = err
        elif isinstance(err, tri.TriError):
            self.text = f"{err.name}: {err.message}"
        else:
            self.text = f"{type(err).__name__}: {err}"
        super().__init__(f"{stage}: {self.text}")


def stage(name, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Failed:
        raise
    except Exception as e:  # noqa: BLE001 - every failure becomes a row
        if os.environ.get("TRI_CORPUS_TRACEBACK"):
            traceback.print_exc()
        raise Failed(name, e) from e


class Runner:
    def __init__(self, device: str, exports: Dict[str, Export]):
        self.device = device
        self.exports = exports
        self.ctx = tri.Context()
        self.modules: Dict[str, Any] = {}
        self.kernels: Dict[str, Any] = {}
        self.triton_modules: Dict[str, Any] = {}
        if device == "cuda":
            import torch  # noqa: F401
            import triton
            from triton.testing import do_bench
            self.torch = torch
            self.do_bench = do_bench
            # tl.make_tensor_descriptor needs global scratch memory for the descriptors it makes.
            triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))

    # -- Tri
    def tri_kernel(self, ex: Export):
        if ex.key not in self.kernels:
            path = ex.fixture
            module = stage("import", self.ctx.module, path.read_text(), str(path.relative_to(ROOT)))
            if self.device == "cuda":
                k = stage("compile", module.compile, ex.kernel, target="cuda", num_warps=NUM_WARPS)
            else:
                k = stage("compile", module.compile, ex.kernel, target="cpu")
            names = [p.name for p in k.params]
            if names != tri_param_names(ex.signature):
                raise Failed("compile", RuntimeError(f"the fixture's kernel takes {names}, TRI_EXPORTS says "
                                                     f"{list(ex.signature)}"))
            self.modules[ex.key], self.kernels[ex.key] = module, k
        return self.kernels[ex.key]

    # -- Triton
    def triton_fn(self, ex: Export):
        if ex.corpus not in self.triton_modules:
            self.triton_modules[ex.corpus] = stage("triton import", load_triton_module, ex.corpus)
        return getattr(self.triton_modules[ex.corpus], ex.kernel)

    def run(self, c: Case) -> Row:
        ex = self.exports[c.export]
        row = Row(c.export, c.size, c.label)
        if c.note:
            row.notes.append(c.note)
        try:
            if self.device == "cuda":
                self.run_cuda(c, ex, row)
            else:
                self.run_cpu(c, ex, row)
        except Failed as f:
            row.failed = True
            row.status = f"FAIL ({f})"
        return row

    def ordered(self, k, values: Dict[str, Any]):
        return [values[p.name] for p in k.params]

    @staticmethod
    def check_all(c: Case, got: Dict[str, np.ndarray], other: Dict[str, np.ndarray], against: str,
                  only_ref_exact: bool = False) -> Tuple[float, List[str]]:
        """Every output of got against other (Triton's outputs, or NumPy's references: there an
        output with ref_exact is compared bit for bit, and one without a reference is left out):
        the largest difference and what was off."""
        err, bad = 0.0, []
        for name, tol in c.outs.items():
            if against == "NumPy":
                if only_ref_exact and not tol.ref_exact:
                    continue
                if tol.kind != "range" and name not in other:
                    continue
                tol = Tol("exact") if tol.ref_exact else tol
            try:
                err = max(err, compare(f"{name} vs {against}", got[name], other.get(name), tol, c.args[name]))
            except Mismatch as e:
                bad.append(str(e))
                if tol.kind != "range" and np.size(got[name]) == np.size(other[name]):
                    d = np.abs(np.asarray(got[name], np.float64).ravel() - np.asarray(other[name], np.float64).ravel())
                    err = max(err, float(np.nanmax(d)) if d.size else 0.0)
        return err, bad

    def run_cpu(self, c: Case, ex: Export, row: Row):
        k = self.tri_kernel(ex)
        bufs = {n: (v.copy() if n in c.outs else v) for n, v in c.args.items()}
        stage("launch", k.launch, c.grid, *self.ordered(k, bufs))
        want = stage("reference", c.ref) if c.ref else {}
        row.max_error, bad = self.check_all(c, bufs, want, "NumPy")
        times = []
        for _ in range(5 if c.size == "test" else 2):
            t0 = time.perf_counter()
            stage("launch", k.launch, c.grid, *self.ordered(k, bufs))
            times.append((time.perf_counter() - t0) * 1e3)
        row.tri_ms = statistics.median(times)
        row.notes.append("vs NumPy (cpu target)")
        if bad:
            raise Failed("compare", "; ".join(bad))

    def run_cuda(self, c: Case, ex: Export, row: Row):
        torch = self.torch
        dev = torch.device("cuda")

        def to_dev(a):
            return torch.from_numpy(np.ascontiguousarray(a)).to(dev)

        inputs = {n: (to_dev(v) if isinstance(v, np.ndarray) else v) for n, v in c.args.items() if n not in c.outs}

        def fresh():
            return {**inputs, **{n: to_dev(c.args[n]) for n in c.outs}}

        # Triton's own kernel: the reference. Should it fail, Tri still runs, against NumPy.
        fn = None
        tt_args = fresh()
        tt_kwargs = c.triton_args(tt_args) if c.triton_args else tt_args
        tt_launch = lambda: fn[c.grid](**tt_kwargs, **ex.constexprs, num_warps=NUM_WARPS, **ex.options)  # noqa: E731
        tt_failed = None
        try:
            fn = self.triton_fn(ex)
            stage("triton", tt_launch)
            stage("triton", torch.cuda.synchronize)
        except Failed as f:
            tt_failed = f
        # Tri on the TTIR fixture, on the same inputs, fresh outputs, torch's current stream.
        k = self.tri_kernel(ex)
        # A fault in Triton's kernel (the descriptor case's illegal instruction on an H200 at
        # daf2b92) leaves the CUDA context unusable: the copy then fails, and the row says so
        # instead of the script stopping without its table.
        tri_args = stage("launch", fresh)
        stream = torch.cuda.current_stream()
        stage("launch", k.launch, c.grid, *self.ordered(k, tri_args), stream=stream)
        stage("launch", torch.cuda.synchronize)
        got = {n: tri_args[n].cpu().numpy() for n in c.outs}
        problems: List[str] = []
        bad: List[str] = []
        if tt_failed is None:
            ref = {n: tt_args[n].cpu().numpy() for n in c.outs}
            row.max_error, bad = self.check_all(c, got, ref, "Triton")
            problems += bad
        else:
            problems.append(tt_failed.text)
        exact_vs_numpy = any(t.ref_exact for t in c.outs.values())
        if c.ref and (tt_failed is not None or bad or exact_vs_numpy):
            want = stage("reference", c.ref)
            # With Triton's outputs in agreement, only the ref_exact outputs (dropout's) go to
            # NumPy; otherwise every output does, to tell which side is off.
            err, bad_ref = self.check_all(c, got, want, "NumPy", only_ref_exact=tt_failed is None and not bad)
            if tt_failed is not None:
                row.max_error = err
            if tt_failed is None and not bad:
                problems += bad_ref
                row.notes.append("bit for bit vs NumPy")
            elif tt_failed is None and not bad_ref:
                # Tri matches the exact reference where Triton does not (Triton's f8 wgmma
                # accumulates with fewer bits than f32): the row is Tri's, and says so.
                problems = [p for p in problems if p not in bad]
                row.notes.append("Tri matches NumPy; Triton is off it: " + "; ".join(bad))
            else:
                problems.append("Tri vs NumPy: " + ("; ".join(bad_ref) if bad_ref else "ok"))
        # Timing: Tri through a prepared plan (arguments encoded once), Triton through kernel[grid].
        plan = stage("launch", k.plan, c.grid, *self.ordered(k, tri_args), stream=stream)
        row.tri_ms = stage("timing", self.do_bench, plan.launch, warmup=WARMUP_MS, rep=REP_MS, return_mode="median")
        plan.close()
        if tt_failed is None:
            row.triton_ms = stage("timing", self.do_bench, tt_launch, warmup=WARMUP_MS, rep=REP_MS,
                                  return_mode="median")
        if problems:
            raise Failed("triton" if tt_failed is not None else "compare", "; ".join(problems))


# ---------------------------------------------------------------- output

def fmt_ms(v):
    return "-" if v is None else (f"{v:.4f}" if v < 1 else f"{v:.3f}")


def fmt_err(r: Row):
    if r.max_error is None:
        return "-"
    return "0" if r.max_error == 0 else f"{r.max_error:.2e}"


def table(rows: List[Row]) -> str:
    lines = ["| kernel | size | Tri ms | Triton ms | ratio | max error | status |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in rows:
        ratio = "-" if not (r.tri_ms and r.triton_ms) else f"{r.tri_ms / r.triton_ms:.2f}"
        status = r.status + (f" ({'; '.join(r.notes)})" if r.notes and not r.failed else "")
        status = status.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r.kernel} | {r.label} | {fmt_ms(r.tri_ms)} | {fmt_ms(r.triton_ms)} | {ratio} | "
                     f"{fmt_err(r)} | {status} |")
    return "\n".join(lines)


def git_commit():
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except Exception:  # noqa: BLE001
        return ""


LEGACY = tuple(CORPORA)
ALL_CORPORA = LEGACY + elsewhere.CORPORA


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=".", help="folder for triton-corpus.json and triton-corpus.md (default .)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="cuda: Tri next to Triton on the GPU; cpu: Tri's cpu target against NumPy")
    ap.add_argument("--corpus", default=",".join(ALL_CORPORA),
                    help=f"comma-separated corpora (default all: {','.join(ALL_CORPORA)})")
    ap.add_argument("--sizes", default=None,
                    help="test (small, odd shapes), bench (realistic), or both (default: both on cuda, test on cpu)")
    ap.add_argument("--only", default="", help="comma-separated export names (vadd,softmax,...) or corpus/name")
    ap.add_argument("--timeout", type=float, default=90.0,
                    help="seconds one kernel (both sides, both timings) may take before the run is stopped "
                         "with what it has (0: no limit)")
    args = ap.parse_args(argv)
    sizes = [s for s in (args.sizes or ("test,bench" if args.device == "cuda" else "test")).split(",") if s]
    for s in sizes:
        if s not in ("test", "bench"):
            ap.error(f"--sizes: {s!r} is neither test nor bench")
    corpora = [c for c in args.corpus.split(",") if c]
    for c in corpora:
        if c not in ALL_CORPORA:
            ap.error(f"--corpus: no corpus {c!r} (there are {', '.join(ALL_CORPORA)})")
    only = {s for s in args.only.split(",") if s}

    exports: Dict[str, Export] = {}
    for corpus in CORPORA:
        for ex in read_exports(corpus).values():
            exports[ex.key] = ex
    # Every export must have a case here (the corpus grows: this script must grow with it). A
    # case function is named after its export (case_vadd: vadd), and export names are unique
    # across the two corpora.
    by_name = {ex.name: ex.key for ex in exports.values()}
    rows: List[Row] = []
    for ex in sorted(exports.values(), key=lambda e: e.key):
        if ex.name not in CASES:
            rows.append(Row(ex.key, "-", "-", status="FAIL (no case in bench/gpu/triton_corpus.py)", failed=True))
    for name in sorted(set(CASES) - set(by_name)):
        rows.append(Row(name, "-", "-", status="FAIL (a case for an export TRI_EXPORTS does not have)", failed=True))
    elsewhere_keys = elsewhere.known_exports()
    unknown = {s for s in only if s not in by_name and s not in exports and s not in elsewhere_keys and
               s not in {k.split("/")[1] for k in elsewhere_keys}}
    if unknown:
        ap.error(f"--only: no export named {', '.join(sorted(unknown))}")
    # Jobs: a legacy Case (tests/import, tests/triton) or an elsewhere.Job (tests/corpus).
    selected: List[Any] = []
    for name in sorted(set(CASES) & set(by_name), key=lambda n: by_name[n]):
        if exports[by_name[name]].corpus not in corpora:
            continue
        if only and name not in only and by_name[name] not in only:
            continue
        for size in sizes:
            for c in CASES[name](size):
                if c.export != by_name[name]:
                    raise SystemExit(f"case_{name} makes a case for {c.export}")
                selected.append(c)
    selected += elsewhere.jobs([c for c in corpora if c in elsewhere.CORPORA], sizes, only)

    runner = Runner(args.device, exports) if any(c in LEGACY for c in corpora) else None
    other = None
    if any(c in elsewhere.CORPORA for c in corpora):
        other = elsewhere.Gpu() if args.device == "cuda" else elsewhere.Cpu()
    meta = {"date": datetime.date.today().isoformat(), "commit": git_commit(), "device": args.device,
            "command": "python3 bench/gpu/triton_corpus.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "tri": ".".join(map(str, tri.version()))}
    if args.device == "cuda":
        import torch
        import triton
        meta.update(gpu=torch.cuda.get_device_name(), triton=triton.__version__, torch=torch.__version__)
        try:
            import importlib.metadata
            meta["flag_gems"] = importlib.metadata.version("flag-gems")
        except Exception:  # noqa: BLE001
            meta["flag_gems"] = None
    t_start = time.perf_counter()
    outdir = Path(args.out)
    lock = threading.Lock()
    current: List[Optional[Any]] = [None]

    def key_of(c):
        return c.key if isinstance(c, elsewhere.Job) else c.export

    def watchdog():
        # A kernel that never ends (a lock that is never released, say) blocks the GPU: write what
        # there is, with the hung kernel failed, and leave.
        with lock:
            c = current[0]
            if c is not None:
                rows.append(Row(key_of(c), c.size, c.label, status=f"FAIL (timeout: still running after "
                                                                   f"{args.timeout:g} s; the run was stopped)",
                                failed=True))
                for later in selected[selected.index(c) + 1:]:
                    rows.append(Row(key_of(later), later.size, later.label, status="FAIL (not run: the run was "
                                                                                   "stopped by a timeout)",
                                    failed=True))
            write_results(outdir, rows, meta, args.device, t_start)
        os._exit(1)

    for c in selected:
        timer = threading.Timer(args.timeout, watchdog) if args.timeout > 0 else None
        with lock:
            current[0] = c
        if timer:
            timer.daemon = True
            timer.start()
        if isinstance(c, elsewhere.Job):
            try:
                res = other.run(c)
            except Exception as x:  # noqa: BLE001 - every failure becomes a row
                if os.environ.get("TRI_CORPUS_TRACEBACK"):
                    traceback.print_exc()
                res = elsewhere.Result(status=f"FAIL ({type(x).__name__}: {x})", failed=True)
            r = Row(c.key, c.size, c.label, res.tri_ms, res.triton_ms, res.max_error, res.status, res.failed,
                    notes=res.notes)
        else:
            r = runner.run(c)
        if timer:
            timer.cancel()
        with lock:
            current[0] = None
            rows.append(r)
        print(f"  {r.kernel} {r.label}: {fmt_ms(r.tri_ms)} / {fmt_ms(r.triton_ms)} ms, {r.status}", flush=True)
    with lock:
        return write_results(outdir, rows, meta, args.device, t_start)


def write_results(outdir: Path, rows: List[Row], meta: Dict[str, Any], device: str, t_start: float) -> int:
    """Prints the table and writes triton-corpus.md and .json to outdir; 1 if any row failed."""
    meta["seconds"] = round(time.perf_counter() - t_start, 1)
    md = table(rows)
    failed = [r for r in rows if r.failed]
    if device == "cuda":
        how = ("medians of triton.testing.do_bench (Tri through a LaunchPlan); ratio = Tri ms / Triton ms; "
               "max error = largest |Tri - Triton| over the outputs")
    else:
        how = ("Tri's cpu target alone (no Triton): ms = median wall time of a few synchronous launches; "
               "max error = largest |Tri - NumPy| over the outputs")
    header = f"Triton corpus on {meta.get('gpu', device)} ({meta['date']}, commit {meta['commit'] or '?'}): {how}."
    text = f"{header}\n\n{md}\n\n{len(rows) - len(failed)} of {len(rows)} rows ok.\n"
    print()
    print(text, flush=True)
    outdir.mkdir(parents=True, exist_ok=True)
    json_rows = []
    for r in rows:
        json_rows.append({"workload": f"triton corpus {r.kernel} {r.label}", "unit": "ms", "higher_is_better": False,
                          "tri": r.tri_ms, "triton": r.triton_ms, "kernel": r.kernel, "size": r.size,
                          "max_error": r.max_error, "status": r.status, "notes": r.notes})
    (outdir / "triton-corpus.json").write_text(json.dumps({**meta, "rows": json_rows}, indent=1) + "\n")
    (outdir / "triton-corpus.md").write_text(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
