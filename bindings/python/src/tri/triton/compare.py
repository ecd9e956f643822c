"""Comparing what Tri's launch left in memory with what Triton's left (or with saved outputs),
argument by argument, on host copies of whole storages. An argument is compared when either
launch changed its elements: bit for bit for integer types and for floats that came out
identical, within |tri - ref| <= atol + rtol * |ref| otherwise (NaN equals NaN; the defaults
depend on the element type and are overridable). Bytes of a storage that no argument views must
be equal too, so a write past a tensor's view is caught. bf16 and the fp8 formats are decoded
here (NumPy has no such types).
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .launches import VIEWS, Arg, itemsize

# Per floating type (Triton's names): (atol, rtol). Tri's exp, division and sqrt are correctly
# rounded or nearly, where Triton uses the hardware's approximations, and reduction orders
# differ: a few units in the last place of the output type, relative.
DEFAULT_TOLERANCE: Dict[str, Tuple[float, float]] = {
    "fp64": (1e-10, 1e-10),
    "fp32": (1e-5, 1e-4),
    "fp16": (1e-3, 2e-3),
    "bf16": (1e-2, 1.6e-2),
    "fp8e4nv": (0.125, 0.25),
    "fp8e5": (0.25, 0.5),
}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _fp8_table(exp_bits: int, man_bits: int, ieee_specials: bool) -> np.ndarray:
    """The value of each fp8 byte: e4m3fn (no infinities; 0x7f and 0xff are NaN) or e5m2 (IEEE)."""
    bias = (1 << (exp_bits - 1)) - 1
    out = np.empty(256, np.float64)
    for b in range(256):
        sign = -1.0 if b & 0x80 else 1.0
        e = (b >> man_bits) & ((1 << exp_bits) - 1)
        m = b & ((1 << man_bits) - 1)
        top = (1 << exp_bits) - 1
        if ieee_specials and e == top:
            out[b] = sign * np.inf if m == 0 else np.nan
        elif not ieee_specials and e == top and m == (1 << man_bits) - 1:
            out[b] = np.nan
        elif e == 0:
            out[b] = sign * (m / (1 << man_bits)) * 2.0 ** (1 - bias)
        else:
            out[b] = sign * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
    return out


_FP8 = {"fp8e4nv": _fp8_table(4, 3, False), "fp8e5": _fp8_table(5, 2, True)}


def decode(raw: np.ndarray, dtype: str) -> Optional[np.ndarray]:
    """The values of elements given as their bit patterns (unsigned ints), as float64 for
    floating types, int64 (or uint64) for integers; None for a type with no decoder here."""
    if dtype == "fp16":
        return raw.view(np.float16).astype(np.float64)
    if dtype == "bf16":
        return (raw.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if dtype == "fp32":
        return raw.view(np.float32).astype(np.float64)
    if dtype == "fp64":
        return raw.view(np.float64)
    if dtype in _FP8:
        return _FP8[dtype][raw]
    if dtype.startswith("u"):
        return raw.astype(np.uint64)
    if dtype.startswith("i"):
        bits = itemsize(dtype) * 8
        return raw.view({8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[bits]).astype(np.int64)
    return None


def elements(buf: np.ndarray, a: Arg, writeable: bool = False) -> np.ndarray:
    """The elements tensor argument `a` views in storage bytes `buf`, as unsigned ints of the
    element's size (bit patterns)."""
    size = itemsize(a.dtype)
    count = (buf.size - a.byte_offset) // size
    flat = buf[a.byte_offset:a.byte_offset + max(count, 0) * size].view(_UINT[size])
    if a.shape and all(d > 0 for d in a.shape):
        last = sum((d - 1) * s for d, s in zip(a.shape, a.strides))
        if last >= count:
            raise ValueError(f"{a.name}: the view {list(a.shape)} with strides {list(a.strides)} runs past its "
                             f"storage of {buf.size} bytes")
    strides = tuple(s * size for s in a.strides)
    return np.lib.stride_tricks.as_strided(flat, shape=a.shape, strides=strides, writeable=writeable)


@dataclass
class Tolerance:
    """atol and rtol for floating outputs; None takes DEFAULT_TOLERANCE's for the element type."""
    atol: Optional[float] = None
    rtol: Optional[float] = None

    def of(self, dtype: str) -> Tuple[float, float]:
        atol, rtol = DEFAULT_TOLERANCE.get(dtype, (0.0, 0.0))
        return (atol if self.atol is None else self.atol, rtol if self.rtol is None else self.rtol)


@dataclass
class Outcome:
    """The comparison of one launch: per output compared, "exact" or its largest difference;
    the problems found (none: ok); the largest difference over all outputs."""
    outputs: Dict[str, str] = field(default_factory=dict)
    problems: List[str] = field(default_factory=list)
    max_error: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def exact(self) -> bool:
        return self.ok and all(v == "exact" for v in self.outputs.values())


def _index(shape, flat: int):
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def _compare_arg(a: Arg, got: np.ndarray, want: np.ndarray, tol: Tolerance, against: str, out: Outcome) -> None:
    if np.array_equal(got, want):
        out.outputs[a.name] = "exact"
        return
    g, w = decode(got, a.dtype), decode(want, a.dtype)
    if g is None or a.dtype not in DEFAULT_TOLERANCE:  # integers, and types compared bit for bit
        bad = got != want
        i = int(np.flatnonzero(bad.ravel())[0])
        gv, wv = (got.ravel()[i], want.ravel()[i]) if g is None else (g.ravel()[i], w.ravel()[i])
        out.outputs[a.name] = "differs"
        out.problems.append(f"{a.name}: {int(bad.sum())} of {bad.size} {a.dtype} elements differ (compared bit for "
                            f"bit); element {list(_index(a.shape, i))} is {gv}, {against}'s {wv}")
        if g is not None:
            out.max_error = max(out.max_error, float(np.abs(g.astype(np.float64) - w.astype(np.float64)).max()))
        return
    atol, rtol = tol.of(a.dtype)
    both_nan = np.isnan(g) & np.isnan(w)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(both_nan | (g == w), 0.0, np.abs(g - w))
    diff = np.where(np.isnan(diff), np.inf, diff)
    err = float(diff.max()) if diff.size else 0.0
    out.max_error = max(out.max_error, err)
    bad = ~(diff <= atol + rtol * np.where(np.isfinite(w), np.abs(w), 0.0))
    if bad.any():
        i = int(np.flatnonzero(bad.ravel())[0])
        out.outputs[a.name] = f"{err:.3g}"
        out.problems.append(f"{a.name}: {int(bad.sum())} of {bad.size} {a.dtype} elements off by more than atol "
                            f"{atol:g} + rtol {rtol:g} x |{against}|; element {list(_index(a.shape, i))} is "
                            f"{g.ravel()[i]!r}, {against}'s {w.ravel()[i]!r}; max |diff| {err:.3g}")
    else:
        out.outputs[a.name] = f"{err:.3g}"


def compare(args: Sequence[Arg], before: Sequence[np.ndarray], want: Sequence[np.ndarray],
            got: Sequence[np.ndarray], tol: Tolerance = Tolerance(), against: str = "Triton") -> Outcome:
    """Compares Tri's storages after its launch (`got`) with the reference's (`want`), given
    both started from `before`; all are uint8 arrays, one per storage of the launch."""
    out = Outcome()
    tensors = [a for a in args if a.kind in VIEWS]  # tensors, and the views descriptors make of theirs
    for a in tensors:
        b = elements(before[a.storage], a)
        w = elements(want[a.storage], a)
        g = elements(got[a.storage], a)
        if np.array_equal(w, b) and np.array_equal(g, b):
            continue  # an input: neither launch changed it
        _compare_arg(a, g, w, tol, against, out)
    for s, (w, g) in enumerate(zip(want, got)):
        if np.array_equal(w, g):
            continue
        # Equal outside the views: Tri's bytes with the reference's views written over them
        # must be the reference's bytes.
        merged = g.copy()
        views = [a for a in tensors if a.storage == s]
        for a in views:
            elements(merged, a, writeable=True)[...] = elements(w, a)
        if not np.array_equal(merged, w):
            i = int(np.flatnonzero(merged != w)[0])
            names = ", ".join(a.name for a in views) or "no argument"
            out.problems.append(f"storage of {names}: byte {i} of {w.size}, outside every argument's view, "
                                f"differs (Tri wrote {int(g[i])}, {against}'s is {int(w[i])})")
    return out
