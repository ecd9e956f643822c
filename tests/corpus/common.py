"""What the corpus of Triton kernels written elsewhere (tests/corpus: Triton's tutorials and
FlagGems' operators) is made of, shared by the fixture generators (tests/corpus/*/make_fixtures.py),
the CPU test (tests/corpus/test_corpus.py) and the GPU benchmark (bench/gpu/triton_corpus.py).

An *export* is one specialization of one @triton.jit kernel, as its authors launch it: the
constexprs their launcher picks, num_warps and num_stages, and a *case builder*, a function of
the size ("test": small, odd shapes for the interpreter and the CPU; "bench": realistic GPU
sizes) that returns the launch: the grid, every runtime argument by parameter name, the outputs
with how each is compared, and a NumPy reference. The generator derives the rest of the
specialization from the bench-size arguments with Triton's own launcher rule (16-byte aligned
pointers, integers divisible by 16, integers equal to 1 become constants) and writes the TTIR
fixture and its manifest entry; the test checks that the test-size arguments keep those facts.

Arrays are `Arr`: NumPy storage plus a logical element type, so bf16 and f8 (which NumPy lacks)
travel the same way as f32. Needs NumPy only (no Triton, no torch)."""

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
GUARD = 8
SENTINEL = -777.0

# element type -> (NumPy storage, Triton's pointer type name, tri.DType name, torch dtype name)
DTYPES = {
    "f32": (np.float32, "fp32", "F32", "float32"),
    "f16": (np.float16, "fp16", "F16", "float16"),
    "bf16": (np.uint16, "bf16", "BF16", "bfloat16"),
    "f64": (np.float64, "fp64", "F64", "float64"),
    "f8e5m2": (np.uint8, "fp8e5", "F8E5M2", "float8_e5m2"),
    "f8e4m3": (np.uint8, "fp8e4nv", "F8E4M3", "float8_e4m3fn"),
    "i64": (np.int64, "i64", "I64", "int64"),
    "i32": (np.int32, "i32", "I32", "int32"),
    "u32": (np.uint32, "u32", "I32", "uint32"),
    "i16": (np.int16, "i16", "I16", "int16"),
    "i8": (np.int8, "i8", "I8", "int8"),
    "u8": (np.uint8, "u8", "I8", "uint8"),
    "i1": (np.bool_, "u1", "I1", "bool"),
}
FLOATS = ("f32", "f16", "bf16", "f64", "f8e5m2", "f8e4m3")

# Builders of arrays return zeros (calloc: no memory touched) while this is set: the fixture
# generators only need the bench-size arguments' types and integer values.
LAZY = False


# ---------------------------------------------------------------- element types

def _f8_table(kind: str) -> np.ndarray:
    """The value of each of the 256 bit patterns of an 8-bit float (NaN where none)."""
    exp_bits, man_bits, bias = (5, 2, 15) if kind == "f8e5m2" else (4, 3, 7)
    out = np.empty(256, np.float64)
    for b in range(256):
        s, e, m = b >> 7, (b >> man_bits) & ((1 << exp_bits) - 1), b & ((1 << man_bits) - 1)
        if kind == "f8e5m2" and e == 31:
            v = math.inf if m == 0 else math.nan
        elif kind == "f8e4m3" and e == 15 and m == 7:
            v = math.nan
        elif e == 0:
            v = m * 2.0 ** (1 - bias - man_bits)
        else:
            v = (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
        out[b] = -v if s else v
    return out


_F8 = {k: _f8_table(k) for k in ("f8e5m2", "f8e4m3")}


def to_bits(values, dtype: str) -> np.ndarray:
    """values (any float array) rounded to nearest even in dtype, as dtype's storage."""
    v = np.asarray(values)
    if dtype == "bf16":
        f = np.ascontiguousarray(v, dtype=np.float32)
        b = f.view(np.uint32)
        r = b >> np.uint32(16)
        r &= np.uint32(1)
        r += np.uint32(0x7FFF)
        r += b  # wraps only for NaN patterns, replaced below
        r >>= np.uint32(16)
        out = r.astype(np.uint16)
        nan = np.isnan(f)
        if nan.any():
            out[nan] = 0x7FC0
        return out
    if dtype in _F8:
        table = _F8[dtype]
        finite = np.where(np.isfinite(table), table, np.inf)
        order = np.argsort(finite, kind="stable")
        sorted_vals = finite[order]
        flat = v.astype(np.float64).ravel()
        i = np.clip(np.searchsorted(sorted_vals, flat), 1, len(sorted_vals) - 1)
        lo, hi = sorted_vals[i - 1], sorted_vals[i]
        pick_hi = (hi - flat) < (flat - lo)
        tie = (hi - flat) == (flat - lo)
        pick_hi |= tie & ((order[i] & 1) == 0)
        return np.where(pick_hi, order[i], order[i - 1]).astype(np.uint8).reshape(v.shape)
    return v.astype(DTYPES[dtype][0])


def from_bits(bits: np.ndarray, dtype: str) -> np.ndarray:
    """The logical values of dtype's storage: float64 for floats, int64 or bool otherwise."""
    if dtype == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if dtype in _F8:
        return _F8[dtype][bits]
    if dtype in FLOATS:
        return bits.astype(np.float64)
    if dtype == "i1":
        return bits.astype(bool)
    return bits.astype(np.int64)


class Arr:
    """A flat array of a Tri/Triton element type: `data` is its NumPy storage (uint16 for bf16,
    uint8 for f8, bool for i1), `dtype` its name in DTYPES."""

    __slots__ = ("data", "dtype")

    def __init__(self, data: np.ndarray, dtype: str):
        assert dtype in DTYPES, dtype
        self.data = np.ascontiguousarray(data).reshape(-1)
        self.dtype = dtype
        assert self.data.dtype == DTYPES[dtype][0], (self.data.dtype, dtype)

    @property
    def size(self) -> int:
        return self.data.size

    def values(self) -> np.ndarray:
        return from_bits(self.data, self.dtype)

    def copy(self) -> "Arr":
        return Arr(self.data.copy(), self.dtype)

    def __repr__(self):
        return f"Arr({self.dtype}[{self.size}])"


@dataclass(frozen=True)
class Addrs:
    """An argument that is an int64 array of the addresses of other buffers: the case's
    arguments named "@NAME" (not parameters of the kernel; a kernel reaches them through this
    table, as Triton's grouped GEMM tutorial does). Made where the buffers are (host or GPU)."""
    names: Tuple[str, ...]


class Desc:
    """A host-side TensorDescriptor argument (Triton's TMA descriptors): `tensor` holds the
    elements (an input the case fills, or an output with its initial contents; a case's `outs`
    names the descriptor's parameter), viewed as `shape` with `strides` (in elements, the last 1)
    and accessed in blocks of `block_shape`. Triton's launch gets a TensorDescriptor on the
    tensor; Tri's gets what docs/import.md ("Tensor descriptors") says: the tensor's base address
    in the descriptor's parameter, then its shape (i32 each) and strides (i64 each) in the
    parameters that follow (launch_args)."""

    __slots__ = ("tensor", "shape", "strides", "block_shape")

    def __init__(self, tensor: Arr, shape: Sequence[int], strides: Sequence[int], block_shape: Sequence[int]):
        self.tensor = tensor
        self.shape, self.strides, self.block_shape = (tuple(int(x) for x in t) for t in (shape, strides,
                                                                                          block_shape))
        rank = len(self.shape)
        assert rank and len(self.strides) == rank and len(self.block_shape) == rank, self
        assert self.strides[-1] == 1, f"{self}: the last stride must be 1 (TMA's innermost dimension is contiguous)"
        reach = sum((n - 1) * s for n, s in zip(self.shape, self.strides)) + 1
        assert reach <= tensor.size, f"{self}: the view reaches element {reach - 1} of {tensor.size}"

    @property
    def dtype(self) -> str:
        return self.tensor.dtype

    def type_name(self) -> str:
        """Triton's signature type of the argument: tensordesc<fp16[128, 64]>."""
        return f"tensordesc<{DTYPES[self.dtype][1]}[{', '.join(map(str, self.block_shape))}]>"

    def with_tensor(self, tensor: Arr) -> "Desc":
        return Desc(tensor, self.shape, self.strides, self.block_shape)

    def __repr__(self):
        return f"Desc({self.tensor!r}, shape {list(self.shape)}, strides {list(self.strides)}, " \
               f"block {list(self.block_shape)})"


def tensor_of(v: Any) -> Any:
    """The array behind an argument: a Desc's tensor, or the argument itself."""
    return v.tensor if isinstance(v, Desc) else v


def launch_args(params: Sequence[str], args: Dict[str, Any],
                value: Callable[[str, Any], Any] = lambda name, v: v) -> List[Any]:
    """The values of a kernel's parameters (`params`, their names in order) from a case's
    arguments by name, as docs/import.md passes a TensorDescriptor: value(name, the Desc) (its
    base, made by the caller) where the descriptor's parameter is, then its shape and its
    strides in the 2 x rank parameters that follow, whatever Triton named those (NAME_0, ...
    in 3.6; NAME.shape.0, ... in 3.9: each starts with NAME). value(name, v) makes every other
    argument too."""
    out: List[Any] = []
    i = 0
    while i < len(params):
        name = params[i]
        if name not in args:
            raise TypeError(f"no argument for parameter '{name}'")
        v = args[name]
        out.append(value(name, v))
        i += 1
        if isinstance(v, Desc):
            extra = list(v.shape) + list(v.strides)
            follow = list(params[i:i + len(extra)])
            if len(follow) < len(extra) or not all(p.startswith(name) and p not in args for p in follow):
                raise TypeError(f"descriptor '{name}' of rank {len(v.shape)} needs its shape and strides in the "
                                f"{len(extra)} parameters after it; the kernel has {follow}")
            out += extra
            i += len(extra)
    return out


def arr(values, dtype: str) -> Arr:
    """An Arr holding values (rounded to dtype)."""
    return Arr(to_bits(np.asarray(values).reshape(-1), dtype), dtype)


def size_is_real() -> bool:
    """False while a generator builds the bench-size arguments for their types only (LAZY):
    values computed from inputs can be skipped then."""
    return not LAZY


def _n(shape) -> int:
    return int(np.prod(shape)) if isinstance(shape, (tuple, list)) else int(shape)


def zeros(shape, dtype: str) -> Arr:
    """An Arr of zeros (calloc: no memory touched until written)."""
    return Arr(np.zeros(_n(shape), DTYPES[dtype][0]), dtype)


_lazy = zeros


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def uniform(seed: int, shape, lo: float, hi: float, dtype: str = "f32") -> Arr:
    if LAZY:
        return _lazy(shape, dtype)
    return arr(rng(seed).uniform(lo, hi, _n(shape)).astype(np.float32), dtype)  # float64 draws: the
    # same values on every machine (NumPy's float32 uniform draws differ in the last bit)


def normal(seed: int, shape, std: float = 1.0, dtype: str = "f32", mean: float = 0.0) -> Arr:
    if LAZY:
        return _lazy(shape, dtype)
    x = rng(seed).standard_normal(_n(shape), dtype=np.float32)  # float32 draws: fast at 2^26
    x *= np.float32(std)
    x += np.float32(mean)
    return arr(x, dtype)


def integers(seed: int, shape, lo: int, hi: int, dtype: str = "i32") -> Arr:
    """Uniform integers in [lo, hi)."""
    if LAZY:
        return _lazy(shape, dtype)
    return Arr(rng(seed).integers(lo, hi, _n(shape)).astype(DTYPES[dtype][0]), dtype)


def bools(seed: int, shape, p_true: float) -> Arr:
    if LAZY:
        return _lazy(shape, "i1")
    return Arr(rng(seed).random(_n(shape)) < p_true, "i1")


def full(shape, value, dtype: str) -> Arr:
    if LAZY:
        return _lazy(shape, dtype)
    bits = to_bits(np.array([value], np.float64), dtype)[0] if dtype in FLOATS else value
    return Arr(np.full(_n(shape), bits, DTYPES[dtype][0]), dtype)


def out(shape, dtype: str = "f32", fill=None) -> Arr:
    """An output of shape with GUARD elements after it, all holding fill (default: SENTINEL for
    floats, -1 for integers): a value no kernel computes, so writes out of bounds show."""
    n = _n(shape) + GUARD
    if fill is None:
        fill = SENTINEL if dtype in FLOATS else (False if dtype == "i1" else -1)
    return full(n, fill, dtype)


H100_SMS = 132  # the bench sizes' GPU: persistent kernels launch this many programs


def T(size: str, test, bench):
    """test or bench, by the size a case is built for."""
    return test if size == "test" else bench


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def next_pow2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


# ---------------------------------------------------------------- expected results

def expect(buf: Arr, values, n: Optional[int] = None) -> np.ndarray:
    """The whole buffer as it must be after the launch: its initial contents (guards) with the
    first n (default: values' size) elements replaced by values."""
    want = buf.values().copy()
    v = np.asarray(values).reshape(-1)
    n = v.size if n is None else n
    want[:n] = v[:n]
    return want


def expect_rows(buf: Arr, rows: int, stride: int, cols: int, values) -> np.ndarray:
    """Like expect, for rows x cols of a rows x stride matrix (the padding keeps its contents)."""
    want = buf.values().copy()
    m = want[:rows * stride].reshape(rows, stride)
    m[:, :cols] = np.asarray(values).reshape(rows, cols)
    return want


def round_to(values, dtype: str) -> np.ndarray:
    """values rounded to dtype (as dtype's logical values)."""
    return from_bits(to_bits(values, dtype), dtype)


def erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


@dataclass
class Tol:
    """How one output is compared. kind: "exact" (bit for bit; NaN equals NaN), "close"
    (|got - want| <= atol + rtol * |want|), "bound" (|got - want| <= bound, an array), "range"
    (element 0 in [lo, hi], the rest as initialized: a result the order of programs picks),
    "skip" (not compared: scratch memory). ulp: also accept a difference of that many units in
    the last place of the output's type (for 16-bit outputs rounded once more). ref_exact: on
    the GPU also bit for bit against the NumPy reference."""
    kind: str = "exact"
    atol: float = 0.0
    rtol: float = 0.0
    bound: Optional[np.ndarray] = None
    lo: int = 0
    hi: int = 0
    ulp: int = 0
    ref_exact: bool = False


def close(atol: float, rtol: float, ulp: int = 0) -> Tol:
    return Tol("close", atol, rtol, ulp=ulp)


EXACT = Tol("exact")


class Mismatch(Exception):
    pass


def _ulp(values: np.ndarray, dtype: str) -> np.ndarray:
    bits = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52, "f8e5m2": 2, "f8e4m3": 3}[dtype]
    e = np.floor(np.log2(np.maximum(np.abs(values), 1e-300)))
    return 2.0 ** (e - bits)


def compare(what: str, got: np.ndarray, want: Optional[np.ndarray], tol: Tol, initial: np.ndarray,
            dtype: str = "f32") -> float:
    """Raises Mismatch naming the first bad element; returns the largest absolute difference.
    got, want, initial: logical values (Arr.values())."""
    got = np.asarray(got).ravel()
    if tol.kind == "skip":
        return 0.0
    if tol.kind == "range":
        if not tol.lo <= int(got[0]) <= tol.hi:
            raise Mismatch(f"{what}: element 0 is {got[0]}, expected {tol.lo}..{tol.hi}")
        if not np.array_equal(got[1:], np.asarray(initial).ravel()[1:]):
            raise Mismatch(f"{what}: an element past 0 (a guard) was written")
        return 0.0
    want = np.asarray(want).ravel()
    if got.shape != want.shape:
        raise Mismatch(f"{what}: {got.size} elements, expected {want.size}")
    if got.dtype.kind in "iub" and want.dtype.kind in "iub":
        bad = got.astype(np.int64) != want.astype(np.int64)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise Mismatch(f"{what}: {int(bad.sum())} of {bad.size} elements differ; element {i} is {got[i]}, "
                           f"expected {want[i]}")
        return 0.0
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    same_inf = np.isinf(g) & (g == w)
    with np.errstate(invalid="ignore"):
        diff = np.where(both_nan | same_inf, 0.0, np.abs(g - w))
    diff = np.where(np.isnan(diff), np.inf, diff)  # NaN on one side only
    if tol.kind == "exact":
        bad = (g != w) & ~both_nan
        how = "bit for bit"
    elif tol.kind == "close":
        limit = tol.atol + tol.rtol * np.abs(w)
        if tol.ulp and dtype in FLOATS:
            limit = np.maximum(limit, tol.ulp * _ulp(w, dtype))
        bad = ~(diff <= limit) & ~both_nan & ~same_inf
        how = f"atol {tol.atol:g}, rtol {tol.rtol:g}" + (f", {tol.ulp} ulp" if tol.ulp else "")
    elif tol.kind == "bound":
        bad = ~(diff <= np.asarray(tol.bound).ravel()) & ~both_nan
        how = "the stated bound"
    else:
        raise ValueError(tol.kind)
    err = float(diff.max()) if diff.size else 0.0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise Mismatch(f"{what}: {int(bad.sum())} of {bad.size} elements off ({how}); element {i} is {g[i]!r}, "
                       f"expected {w[i]!r}; max |diff| {err:.3g}")
    return err


# ---------------------------------------------------------------- cases and exports

@dataclass
class Case:
    export: str  # "tutorials/matmul_f16"
    size: str  # "test" or "bench"
    label: str  # what the size is, for tables ("4096x4096 f16")
    grid: Tuple[int, ...]
    # Every runtime parameter of the @triton.jit function by name: Arr (inputs, and outputs'
    # initial contents) and Python scalars. Parameters the fixture made constants (an integer
    # equal to 1 at the bench size) are here too and must keep that value.
    args: Dict[str, Any]
    outs: Dict[str, Tol]  # the outputs among args, and how each is compared
    ref: Optional[Callable[[], Dict[str, np.ndarray]]] = None  # each output's whole expected buffer
    note: str = ""
    check_ref_on_gpu: bool = False  # also compare with NumPy on the GPU (the reference is cheap)


@dataclass
class Export:
    """One fixture: `kernel` (the @triton.jit function's name) from `source` (a tutorial file, or a
    FlagGems module), specialized on `constexprs`; `build(size)` makes its cases."""
    corpus: str
    name: str
    kernel: str
    source: str
    constexprs: Dict[str, Any]
    build: Callable[[str], Case]
    num_warps: int = 4
    num_stages: int = 3
    slow: bool = False  # interp in checked mode takes too long: the test runs it on "cpu" only
    what: str = ""  # a line saying what it is, for the docs and the generator's output

    @property
    def key(self) -> str:
        return f"{self.corpus}/{self.name}"

    def case(self, size: str) -> Case:
        c = self.build(size)
        c.export = self.key
        c.size = size
        return c


class Registry:
    """The exports of one corpus, in the order they are declared."""

    def __init__(self, corpus: str):
        self.corpus = corpus
        self.exports: Dict[str, Export] = {}

    def export(self, name: str, kernel: str, source: str, constexprs: Optional[Dict[str, Any]] = None,
               num_warps: int = 4, num_stages: int = 3, slow: bool = False, what: str = ""):
        def register(build):
            assert name not in self.exports, f"export {name} declared twice"
            self.exports[name] = Export(self.corpus, name, kernel, source, dict(constexprs or {}), build, num_warps,
                                        num_stages, slow, what)
            return build
        return register


def case(label: str, grid, args: Dict[str, Any], outs: Dict[str, Tol], ref=None, note: str = "",
         check_ref_on_gpu: bool = False) -> Case:
    grid = tuple(grid) if isinstance(grid, (tuple, list)) else (int(grid),)
    return Case("", "", label, grid, args, outs, ref, note, check_ref_on_gpu)


# ---------------------------------------------------------------- fixtures and their manifest

def manifest_path(corpus_dir: Path) -> Path:
    return corpus_dir / "manifest.json"


def load_manifest(corpus_dir: Path) -> Dict[str, Any]:
    """The manifest a generator wrote: per export, the kernel, Triton's signature, the constants
    and facts of the specialization, num_warps and num_stages."""
    p = manifest_path(corpus_dir)
    return json.loads(p.read_text()) if p.exists() else {"exports": {}}


def fixture_path(corpus_dir: Path, name: str) -> Path:
    return corpus_dir / "ttir" / f"{name}.ttir"


def check_specialization(entry: Dict[str, Any], c: Case) -> List[str]:
    """What in case c's arguments breaks the fixture's specialization (manifest entry `entry`):
    a missing or extra argument, a constant that differs, an integer that is not divisible as
    stated, a pointer of another element type."""
    problems = []
    sig: Dict[str, str] = entry["signature"]
    consts: Dict[str, Any] = entry["specialized"]
    div: Dict[str, int] = entry["divisibility"]
    for name in list(sig) + list(consts):
        if name not in c.args:
            problems.append(f"no argument for parameter '{name}'")
    for name in c.args:
        if name not in sig and name not in consts and not name.startswith("@"):
            problems.append(f"argument '{name}' is no runtime parameter of the fixture")
    for name, v in consts.items():
        if name in c.args and c.args[name] != v:
            problems.append(f"'{name}' is {c.args[name]!r}, but the fixture made it the constant {v!r}")
    for name, t in sig.items():
        v = c.args.get(name)
        if v is None:
            continue
        if t.startswith("*"):
            ok = isinstance(v, Addrs) and t == "*i64" or isinstance(v, Arr) and DTYPES[v.dtype][1] == t[1:]
            if not ok:
                problems.append(f"'{name}' takes {t}, got {v!r}")
        elif t.startswith("tensordesc"):
            if not isinstance(v, Desc) or v.type_name() != t:
                problems.append(f"'{name}' takes a {t}, got {v!r}")
            else:
                elem = np.dtype(DTYPES[v.dtype][0]).itemsize
                if any(s * elem % 16 for s in v.strides[:-1]):
                    problems.append(f"'{name}' has strides {list(v.strides)}: TensorDescriptor needs 16-byte "
                                    "multiples (but the last)")
        elif name in div and isinstance(v, int) and v % div[name]:
            problems.append(f"'{name}' = {v} is not divisible by {div[name]}, as the fixture states")
    return problems


# ---------------------------------------------------------------- expected failures

def load_expected_failures() -> Dict[str, Dict[str, str]]:
    """tests/corpus/expected_failures.json: export key -> {target or "*": the exact error, and
    optionally "why": a note where the cause is not Tri's (a kernel that reads undefined lanes)}."""
    p = HERE / "expected_failures.json"
    data = json.loads(p.read_text())
    return {k: v for k, v in data.items() if not k.startswith("//")}


def expected_failure(failures: Dict[str, Dict[str, str]], key: str, target: str) -> Optional[str]:
    entry = failures.get(key)
    if not entry:
        return None
    return entry.get(target, entry.get("*"))


# ---------------------------------------------------------------- references shared by corpora

def attention_reference(q: Arr, k: Arr, v: Arr, heads: int, S: int, D: int, sm_scale: float, causal: bool):
    """Softmax attention of heads x S x D operands in float64: the output, the base-2 log-sum-exp
    of the scaled scores per query (what flash-attention kernels keep for the backward) and the
    probabilities."""
    q64, k64, v64 = (a.values().reshape(heads, S, D) for a in (q, k, v))
    s = q64 @ k64.transpose(0, 2, 1) * sm_scale
    if causal:
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    mx = s.max(axis=2, keepdims=True)
    e = np.exp(s - mx)
    p = e / e.sum(axis=2, keepdims=True)
    return p @ v64, (mx[..., 0] + np.log(e.sum(axis=2))) / math.log(2), p


def philox(seed: int, c0, c1, c2, c3, rounds: int = 10):
    """Triton's tl.philox: Philox 4x32 on counters (c0, c1, c2, c3) (uint32 arrays) and key
    (seed lo, seed hi); the four uint32 outputs."""
    mask = np.uint64(0xFFFFFFFF)
    c = [np.asarray(x).astype(np.uint64) & mask for x in (c0, c1, c2, c3)]
    c0, c1, c2, c3 = np.broadcast_arrays(*c)
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64((seed >> 32) & 0xFFFFFFFF)
    A, B = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    for _ in range(rounds):
        p0, p2 = c0, c2
        c0 = ((B * p2) >> np.uint64(32)) ^ c1 ^ k0
        c2 = ((A * p0) >> np.uint64(32)) ^ c3 ^ k1
        c1 = (B * p2) & mask
        c3 = (A * p0) & mask
        k0 = (k0 + np.uint64(0x9E3779B9)) & mask
        k1 = (k1 + np.uint64(0xBB67AE85)) & mask
    return [x.astype(np.uint32) for x in (c0, c1, c2, c3)]


def uint_to_uniform_float(x: np.ndarray) -> np.ndarray:
    """Triton's tl.uint_to_uniform_float for uint32: a float32 in [0, 1)."""
    x = x.astype(np.uint32).view(np.int32)
    x = np.where(x < 0, ~x, x)
    return x.astype(np.float32) * np.float32(4.6566127342e-10)


def philox_uniform(offsets: np.ndarray, seed: int) -> np.ndarray:
    """Triton's tl.rand(seed, offsets): the first Philox output on counter (offset, 0, 0, 0)."""
    return uint_to_uniform_float(philox(seed, offsets, 0, 0, 0)[0])
