"""The corpora of kernels written elsewhere (tests/corpus: Triton's tutorials, FlagGems' operators)
for bench/gpu/triton_corpus.py. Each export runs at its test size and its bench size (LLM-ish
shapes) twice on the same torch tensors: by Triton, and by Tri from the committed TTIR fixture
(target "cuda", the export's num_warps and num_stages, torch's current stream). Tri's outputs are
compared with Triton's (each output's tolerance from the case), and both are timed with
triton.testing.do_bench. Triton's side is, for the tutorials, Triton compiling the same fixture
(triton.compile on the .ttir file: no tutorial source is needed); for FlagGems, the @triton.jit
function of the installed package (flag-gems, the version tests/corpus/flaggems/load.py names),
launched with the export's constexprs so Triton's own launcher specializes it; where FlagGems
cannot be imported, Triton compiling the fixture instead (the row says so).

A host-side TensorDescriptor argument (a Desc in the case) is one tensor on the device for both
sides: Triton's launch gets a triton.tools.tensor_descriptor.TensorDescriptor on it (shape,
strides, block shape from the case), Tri's the tensor's base, shape and strides (docs/import.md);
for a fixture compiled by Triton, launcher_signature gives Triton's launcher the signature the
@triton.jit function would have had.

A fixture Tri fails to import exactly as tests/corpus/expected_failures.json says is an expected
failure (XFAIL, Triton still timed), not an error. With device "cpu" the Tri side runs alone on
the cpu target against NumPy (tests/corpus/runner.py)."""

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from corpus import common, runner  # noqa: E402
from corpus.common import Addrs, Arr, Desc, Mismatch, compare, launch_args, tensor_of  # noqa: E402

CORPORA = ("tutorials", "flaggems")
WARMUP_MS, REP_MS = 10, 50


def registries():
    from corpus.flaggems import cases as flaggems_cases
    from corpus.tutorials import cases as tutorial_cases
    return {"tutorials": tutorial_cases.REGISTRY, "flaggems": flaggems_cases.REGISTRY}


@dataclass
class Job:
    """One export at one size; label is known once its case is built."""
    export: Any
    size: str
    label: str = "-"

    @property
    def key(self) -> str:
        return self.export.key


@dataclass
class Result:
    tri_ms: Optional[float] = None
    triton_ms: Optional[float] = None
    max_error: Optional[float] = None
    status: str = "ok"
    failed: bool = False
    notes: List[str] = field(default_factory=list)


def jobs(corpora, sizes, only) -> List[Job]:
    out = []
    for corpus in corpora:
        for e in registries()[corpus].exports.values():
            if only and e.name not in only and e.key not in only:
                continue
            for size in sizes:
                out.append(Job(e, size))
    return out


def known_exports() -> Dict[str, Any]:
    return {e.key: e for r in registries().values() for e in r.exports.values()}


def triton_arguments(args: Dict[str, Any], values: Dict[str, Any]) -> Dict[str, Any]:
    """Triton's arguments by parameter name: `values` (what materialize made of the case's
    `args`: tensors and scalars by name), each Desc argument made a TensorDescriptor on its
    tensor with the case's shape, strides and block shape (as the kernel's authors make it:
    TensorDescriptor(x, shape, strides, block_shape), the block shape their pre-hook sets)."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    out = dict(values)
    for name, v in args.items():
        if isinstance(v, Desc):
            out[name] = TensorDescriptor(values[name], list(v.shape), list(v.strides), list(v.block_shape))
    return out


def tri_arguments(params: Sequence[str], args: Dict[str, Any], values: Dict[str, Any]) -> List[Any]:
    """Tri's arguments in the order of the kernel's parameters (names): each Desc its tensor
    (values[name]: the base address), then its shape and strides (launch_args)."""
    return launch_args(params, args, lambda name, v: values[name])


# MLIR's element types in a TTIR file -> Triton's names in a launcher signature.
_TRITON_ELEMENT = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "f64": "fp64", "f8E5M2": "fp8e5",
                   "f8E4M3FN": "fp8e4nv", "i1": "u1", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64"}


def launcher_signature(signature: Dict[int, str]) -> Dict[int, str]:
    """The signature Triton's launcher needs for a kernel Triton compiled from a TTIR file
    (triton.compile(path): IRSource) that takes host-side TensorDescriptor arguments. From a
    file, Triton 3.6 reads each parameter's MLIR type: a descriptor is
    '!tt.tensordesc<tensor<128x64xf16>>' followed by its shape (i32 each) and strides (i64
    each) as parameters of their own; its launcher knows neither the MLIR type (it fails on it)
    nor those extra parameters (it appends the shape and strides itself, after the CUtensorMap
    it makes from a TensorDescriptor). So each descriptor becomes 'tensordesc<fp16[128, 64]>'
    and the 2 x rank parameters after it are dropped: the compiled kernel then takes a
    TensorDescriptor where the @triton.jit function did, and nothing else changes."""
    out: Dict[int, str] = {}
    items = list(signature.values())
    i = 0
    while i < len(items):
        ty = items[i]
        m = re.fullmatch(r"!tt\.tensordesc<tensor<((?:\d+x)+)([^,>]+)(?:,[^>]*)?>>", ty) if isinstance(ty, str) \
            else None
        if m is None:
            out[len(out)] = ty
            i += 1
            continue
        dims = m.group(1).rstrip("x").split("x")
        if m.group(2) not in _TRITON_ELEMENT:
            raise ValueError(f"a tensor descriptor of {m.group(2)}: no Triton element type known for it")
        follow = items[i + 1:i + 1 + 2 * len(dims)]
        if follow != ["i32"] * len(dims) + ["i64"] * len(dims):
            raise ValueError(f"parameter {i} ({ty}) is not followed by its shape (i32) and strides (i64): {follow}")
        out[len(out)] = f"tensordesc<{_TRITON_ELEMENT[m.group(2)]}[{', '.join(dims)}]>"
        i += 1 + 2 * len(dims)
    return out


_TORCH_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64", "f8e5m2": "float8_e5m2",
                 "f8e4m3": "float8_e4m3fn", "i64": "int64", "i32": "int32", "u32": "uint32", "i16": "int16",
                 "i8": "int8", "u8": "uint8", "i1": "bool"}
# Storage NumPy and torch share bit for bit; the tensor is then viewed as the element type.
_SAME_SIZE_INT = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


class Gpu:
    def __init__(self):
        import torch
        import triton
        from triton.testing import do_bench
        self.torch, self.triton, self.do_bench = torch, triton, do_bench
        self.ctx = runner.tri.Context()
        self.fx = runner.Fixtures(self.ctx)
        self.expected = common.load_expected_failures()
        self.triton_kernels: Dict[str, Any] = {}
        self.flaggems_error: Optional[str] = None
        # Device-side tensor descriptors need global scratch memory from an allocator.
        triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))

    # -- tensors
    def to_device(self, a: Arr):
        torch = self.torch
        if a.dtype == "i1":
            return torch.from_numpy(a.data.copy()).cuda()
        raw = a.data.view(_SAME_SIZE_INT[a.data.itemsize])
        return torch.from_numpy(raw.copy()).cuda().view(getattr(torch, _TORCH_DTYPES[a.dtype]))

    def to_host(self, t, like: Arr) -> Arr:
        torch = self.torch
        if like.dtype == "i1":
            return Arr(t.cpu().numpy(), "i1")
        raw = t.view(getattr(torch, _SAME_SIZE_INT[like.data.itemsize].__name__)).cpu().numpy()
        return Arr(raw.view(like.data.dtype), like.dtype)

    def materialize(self, c) -> Dict[str, Any]:
        """Every argument on the device: outputs fresh from their initial contents; an array
        passed twice stays one tensor; a Desc is its tensor (triton_arguments and tri_arguments
        make each side's arguments of it); Addrs become int64 tensors of device addresses."""
        made: Dict[int, Any] = {}
        values: Dict[str, Any] = {}
        for name, v in c.args.items():
            if isinstance(v, (Arr, Desc)):
                t = tensor_of(v)
                if id(t) not in made:
                    made[id(t)] = self.to_device(t)
                values[name] = made[id(t)]
            elif not isinstance(v, Addrs):
                values[name] = v
        for name, v in c.args.items():
            if isinstance(v, Addrs):
                values[name] = self.torch.tensor([values[n].data_ptr() for n in v.names], dtype=self.torch.int64,
                                                 device="cuda")
        return values

    # -- the two sides
    def triton_side(self, e):
        """(launch(grid, values), note) for Triton's side of export e."""
        if e.key in self.triton_kernels:
            return self.triton_kernels[e.key]
        entry = self.fx.entry(e)
        made = None
        if e.corpus == "flaggems":
            try:
                from corpus.flaggems import load
                from tri.triton import _jit_function
                jit = _jit_function(load.kernel(e.source, e.kernel))
                params = [p.name for p in jit.params if not p.is_constexpr]

                def launch_jit(grid, values, jit=jit, params=params):
                    jit[grid](**{p: values[p] for p in params}, **e.constexprs, num_warps=e.num_warps,
                              num_stages=e.num_stages)

                made = (launch_jit, "Triton: FlagGems' @triton.jit function")
            except Exception as x:  # noqa: BLE001 - fall back to the fixture
                self.flaggems_error = f"{type(x).__name__}: {x}"
        if made is None:
            ck = self.triton.compile(str(self.fx.path(e)), options=dict(num_warps=e.num_warps,
                                                                          num_stages=e.num_stages))
            ck.src.signature = launcher_signature(ck.src.signature)  # before the first launch makes the launcher
            order = list(entry["signature"])

            def launch_ttir(grid, values, ck=ck, order=order):
                g = tuple(grid) + (1,) * (3 - len(grid))
                ck[g](*[values[p] for p in order])

            note = "Triton: the fixture compiled by Triton" + (
                f" (FlagGems not importable: {self.flaggems_error})" if e.corpus == "flaggems" else "")
            made = (launch_ttir, note)
        self.triton_kernels[e.key] = made
        return made

    def run(self, job: Job) -> Result:
        e, torch = job.export, self.torch
        res = Result()
        c = e.case(job.size)
        job.label = c.label
        if not c.outs:
            res.status = "import only"
        entry = self.fx.entry(e)
        if entry is None:
            return Result(status=f"FAIL (no fixture: run tests/corpus/{e.corpus}/make_fixtures.py)", failed=True)
        problems = common.check_specialization(entry, c)
        if problems:
            return Result(status="FAIL (arguments: " + "; ".join(problems) + ")", failed=True)
        grid = c.grid
        # Triton first: it is the reference.
        tt_vals, tt_args, tt_err = None, None, None
        try:
            launch, note = self.triton_side(e)
            res.notes.append(note)
            if c.outs:
                tt_vals = self.materialize(c)
                tt_args = triton_arguments(c.args, tt_vals)
                launch(grid, tt_args)
                torch.cuda.synchronize()
        except Exception as x:  # noqa: BLE001
            tt_err = f"{type(x).__name__}: {str(x).strip().splitlines()[0] if str(x).strip() else ''}"
        # Tri.
        tri_vals, k = None, None
        try:
            self.fx.module(e)
        except runner.tri.TriError as x:
            text = f"import: {runner.first_line(x)}"
            expected = common.expected_failure(self.expected, e.key, "*")
            res.status = f"XFAIL ({text})" if expected == text else f"FAIL ({text})"
            res.failed = expected != text
        if not c.outs and not res.status.startswith(("XFAIL", "FAIL")):
            res.status, res.failed = "FAIL (import-only fixture imports now: give it a case that launches it)", True
        if res.status.startswith(("XFAIL", "FAIL")) or not c.outs:
            if tt_err is None and tt_vals is not None:
                res.triton_ms = self.do_bench(lambda: launch(grid, tt_args), warmup=WARMUP_MS, rep=REP_MS,
                                              return_mode="median")
            elif tt_err:
                res.notes.append(f"Triton failed: {tt_err}")
            return res
        try:
            k = self.fx.kernel(e, "cuda", num_warps=e.num_warps, num_stages=e.num_stages)
            tri_vals = self.materialize(c)
            stream = torch.cuda.current_stream()
            args = tri_arguments([p.name for p in k.params], c.args, tri_vals)
            k.launch(grid, *args, stream=stream)
            torch.cuda.synchronize()
        except Exception as x:  # noqa: BLE001
            return Result(status=f"FAIL (Tri: {runner.first_line(x)})", failed=True, notes=res.notes)
        # Compare.
        problems, err = [], 0.0
        want = None
        if tt_err is not None or c.check_ref_on_gpu:
            with np.errstate(all="ignore"):
                want = c.ref() if c.ref else None
        for name, tol in c.outs.items():
            like = tensor_of(c.args[name])
            got = self.to_host(tri_vals[name], like)
            if tt_err is None:
                other = self.to_host(tt_vals[name], like).values()
            elif want is not None and name in want:
                other = want[name]
            else:
                continue
            try:
                err = max(err, compare(name, got.values(), other, tol, like.values(), got.dtype))
            except Mismatch as m:
                # Off Triton's output: where the case has a reference at this size, the exact
                # one decides (Hopper's f8 wgmma, Triton's, sums with fewer bits than f32).
                if tt_err is None and c.ref:
                    if want is None:
                        with np.errstate(all="ignore"):
                            want = c.ref()
                    if name in want:
                        try:
                            compare(name, got.values(), want[name], tol, like.values(), got.dtype)
                            res.notes.append(f"{name}: Tri matches NumPy, Triton is off it ({m})")
                            continue
                        except Mismatch as m2:
                            problems.append(f"{m}; Tri vs NumPy: {m2}")
                            continue
                problems.append(str(m))
        res.max_error = err
        if tt_err is not None:
            problems.insert(0, f"Triton failed ({tt_err}); Tri compared with NumPy" if want is not None else
                            f"Triton failed ({tt_err})")
        # Time.
        plan = k.plan(grid, *args, stream=torch.cuda.current_stream())
        res.tri_ms = self.do_bench(plan.launch, warmup=WARMUP_MS, rep=REP_MS, return_mode="median")
        plan.close()
        if tt_err is None:
            res.triton_ms = self.do_bench(lambda: launch(grid, tt_args), warmup=WARMUP_MS, rep=REP_MS,
                                          return_mode="median")
        if problems:
            res.status, res.failed = "FAIL (" + "; ".join(problems) + ")", True
        return res


class Cpu:
    """The Tri side alone on the cpu target against NumPy."""

    def __init__(self):
        self.ctx = runner.tri.Context()
        self.fx = runner.Fixtures(self.ctx)
        self.expected = common.load_expected_failures()

    def run(self, job: Job) -> Result:
        c = job.export.case(job.size)
        job.label = c.label
        o = runner.run_host(self.fx, job.export, c, "cpu")
        res = Result(max_error=o.max_error, notes=["vs NumPy (cpu target; not timed)"])
        if not o.ok:
            expected = common.expected_failure(self.expected, job.key, "cpu")
            res.status = f"{'XFAIL' if expected == o.text else 'FAIL'} ({o.text})"
            res.failed = expected != o.text
        return res
