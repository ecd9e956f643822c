"""Replaying captured launches through Tri.

From a capture, in the process that made it (Recorder.replay, `python3 -m tri.triton.capture`),
on the GPU: for each kind of launch, Tri imports the TTIR Triton compiled and compiles it for
"cuda" with Triton's num_warps and num_stages (timed cold, in a fresh context with the disk cache
off: Tri's stages apart from the driver's JIT), then Triton's launch and Tri's launch each run on
the launch's captured inputs (every storage restored before each), the storages are compared
(compare.py), and both are timed with triton.testing.do_bench (median; Tri through a prepared
LaunchPlan, Triton through its compiled kernel's launcher). A dry-run capture replays on Tri's
"cpu" target against the interpreter's outputs instead.

From a saved folder, without Triton or the program:

    python3 -m tri.triton.replay DIR [--target cpu|interp|cuda ...] [--json FILE] [-k NAME]

runs each saved launch on the targets named (default cpu; cuda needs PyTorch) on the saved
inputs and compares with the saved outputs. Either way a launch that fails to import, compile,
run or compare is a row with its error (Tri's own message), and the replay goes on; the table
comes last, and the exit status is 1 if any row failed.
"""

import argparse
import datetime
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import Context, LogLevel, TriError
from .. import version as tri_version
from .compare import Outcome, Tolerance, compare
from .launches import DESCRIPTOR, TENSOR, Arg, Failure, Launch, aligned_copy, compile_kernel, host_bytes, itemsize, \
    tri_arguments, tri_module

PROG = "python3 -m tri.triton.replay"
_STAGE = re.compile(r"\b(passes|lower|opt\+ptx|driver jit) ([0-9.]+) ms")


@dataclass
class Row:
    """One launch on one target: times in ms (medians), Tri's cold compile in ms apart from
    the driver's JIT (`compile_ms`) with each stage (`stages`), and what the comparison found."""
    kernel: str
    shapes: str
    count: int
    source: str
    target: str
    status: str = "ok"
    failed: bool = False
    error: Optional[str] = None
    tri_ms: Optional[float] = None
    triton_ms: Optional[float] = None
    max_error: Optional[float] = None
    outputs: Dict[str, str] = field(default_factory=dict)
    compile_ms: Optional[float] = None
    stages: Dict[str, float] = field(default_factory=dict)

    @property
    def speed(self) -> Optional[float]:
        """Tri's speed over Triton's (Triton ms / Tri ms): above 1, Tri is faster."""
        if self.tri_ms and self.triton_ms:
            return self.triton_ms / self.tri_ms
        return None

    def fail(self, f: Failure) -> None:
        self.failed = True
        self.error = f"{f.stage}: {f.message}"
        self.status = f"FAIL ({self.error})"

    def to_json(self) -> Dict[str, Any]:
        return {"workload": f"triton corpus {self.kernel} {self.shapes}", "unit": "ms", "higher_is_better": False,
                "tri": self.tri_ms, "triton": self.triton_ms, "speed": self.speed, "status": self.status,
                "failed": self.failed, "error": self.error, "kernel": self.kernel, "shapes": self.shapes,
                "count": self.count, "source": self.source, "target": self.target, "max_error": self.max_error,
                "outputs": self.outputs, "compile_ms": self.compile_ms, "compile_stages": self.stages}


def geomean(values: Sequence[float]) -> Optional[float]:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


@dataclass
class Report:
    rows: List[Row]
    meta: Dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return any(r.failed for r in self.rows)

    def speeds(self) -> List[float]:
        """Tri speed / Triton speed of the rows whose outputs matched."""
        return [r.speed for r in self.rows if r.speed is not None and not r.failed]

    def table(self) -> str:
        against_triton = any(r.target == "cuda" and r.triton_ms is not None for r in self.rows) or \
            self.meta.get("against") == "triton"
        targets = {r.target for r in self.rows}
        head = ["kernel", "shapes"] + (["target"] if len(targets) > 1 else []) + ["count", "status", "Tri ms"]
        if against_triton:
            head += ["Triton ms", "Tri speed / Triton speed"]
        head += ["max error", "Tri compile ms"]
        align = [":---" if h in ("kernel", "shapes", "target", "status") else "---:" for h in head]
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
        for r in self.rows:
            cells = [r.kernel, r.shapes] + ([r.target] if len(targets) > 1 else []) + [str(r.count), r.status,
                                                                                      _ms(r.tri_ms)]
            if against_triton:
                cells += [_ms(r.triton_ms), "-" if r.speed is None else f"{r.speed:.2f}"]
            cells += ["-" if r.max_error is None else ("0" if r.max_error == 0 else f"{r.max_error:.2e}"),
                      "-" if r.compile_ms is None else f"{r.compile_ms:.1f}"]
            lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
        out = []
        if self.meta.get("title"):
            out += [self.meta["title"], ""]
        out += lines + [""]
        ok = sum(not r.failed for r in self.rows)
        out.append(f"{ok} of {len(self.rows)} rows ok.")
        if against_triton:
            g = geomean(self.speeds())
            out.append("geometric mean of Tri speed / Triton speed: " +
                       (f"{g:.3f} over the {len(self.speeds())} rows whose outputs matched" if g else
                        "- (no row with both times and matching outputs)"))
        return "\n".join(out)

    def to_json(self) -> Dict[str, Any]:
        g = geomean(self.speeds())
        return {**{k: v for k, v in self.meta.items() if k != "title"}, "geomean_speed": g,
                "rows": [r.to_json() for r in self.rows]}

    def write_json(self, path: str) -> None:
        with open(path, "w") as f:
            f.write(json.dumps(self.to_json(), indent=1) + "\n")


def _ms(v: Optional[float]) -> str:
    return "-" if v is None else (f"{v:.4f}" if v < 1 else f"{v:.3f}")


# ---------------------------------------------------------------- memory: host or GPU

class _Host:
    """Storages as NumPy arrays (cpu and interp targets); times are wall medians."""
    device = False

    def __init__(self, repeat: int):
        self.repeat = repeat

    def hold(self, data: Any) -> np.ndarray:
        """The data as this memory holds it (no copy where it already is)."""
        return host_bytes(data)

    def upload(self, data: Any) -> np.ndarray:
        return aligned_copy(host_bytes(data))

    def address(self, buf: np.ndarray) -> int:
        return buf.ctypes.data

    def restore(self, buf: np.ndarray, pristine: np.ndarray) -> None:
        buf[:] = pristine

    def download(self, buf: np.ndarray) -> np.ndarray:
        return buf.copy()

    def sync(self) -> None:
        pass

    def stream(self) -> Any:
        return None

    def time(self, fn: Callable[[], Any]) -> float:
        times = []
        for _ in range(self.repeat):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)


class _Cuda:
    """Storages as torch uint8 tensors on the GPU; times from triton.testing.do_bench (or, with
    no Triton, CUDA events around each of many launches: median)."""
    device = True

    def __init__(self, warmup: float, rep: float):
        import torch
        if not torch.cuda.is_available():
            raise Failure("cuda", "PyTorch sees no CUDA device")
        self.torch = torch
        self.warmup, self.rep = warmup, rep
        try:
            from triton.testing import do_bench
            self.do_bench = do_bench
        except ImportError:
            self.do_bench = None

    def hold(self, data: Any):
        if isinstance(data, self.torch.Tensor) and data.is_cuda:
            return data
        return self.upload(data)

    def upload(self, data: Any):
        torch = self.torch
        if isinstance(data, torch.Tensor):
            return data.detach().to("cuda", copy=True)
        return torch.from_numpy(host_bytes(data).copy()).to("cuda")

    def address(self, buf) -> int:
        return buf.data_ptr()

    def restore(self, buf, pristine) -> None:
        buf.copy_(pristine)

    def download(self, buf) -> np.ndarray:
        return host_bytes(buf)

    def sync(self) -> None:
        self.torch.cuda.synchronize()

    def stream(self) -> Any:
        return self.torch.cuda.current_stream()

    def time(self, fn: Callable[[], Any]) -> float:
        if self.do_bench is not None:
            return float(self.do_bench(fn, warmup=self.warmup, rep=self.rep, return_mode="median"))
        torch = self.torch
        fn()
        times = []
        deadline = time.perf_counter() + self.rep / 1e3
        while len(times) < 10 or time.perf_counter() < deadline:
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
        return statistics.median(times)


# ---------------------------------------------------------------- one launch

def _stage_times(lines: Sequence[str]) -> Dict[str, float]:
    """Milliseconds per stage from the library's debug timing lines ("kernel @k: passes 1.20 ms")."""
    out: Dict[str, float] = {}
    for line in lines:
        for m in _STAGE.finditer(line):
            out[m.group(1)] = out.get(m.group(1), 0.0) + float(m.group(2))
    return out


def compile_cold(launch: Launch, target: str) -> Tuple[Context, Any, float, Dict[str, float], List[str]]:
    """Tri's module and kernel for the launch, made in a fresh context with the disk cache off:
    the context, the kernel, the milliseconds apart from the driver's JIT, each stage's (import,
    then the library's own timing lines: passes, lower, opt+ptx, driver jit), and the list the
    context's log goes on filling."""
    lines: List[str] = []
    ctx = Context(log=lambda level, msg: lines.append(msg), log_level=LogLevel.DEBUG, cache_dir="")
    try:
        t0 = time.perf_counter()
        module = tri_module(ctx, launch)
        t1 = time.perf_counter()
        kernel = compile_kernel(module, launch, target)
        t2 = time.perf_counter()
    except BaseException:
        ctx.close()
        raise
    stages = {"import": (t1 - t0) * 1e3, **_stage_times(lines)}
    total = (t2 - t0) * 1e3 - stages.get("driver jit", 0.0)
    return ctx, kernel, total, stages, lines


def _stage(name: str, fn: Callable, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except Failure:
        raise
    except TriError as e:
        raise Failure(name, e.message) from None
    except Exception as e:  # noqa: BLE001 - every failure becomes a row
        raise Failure(name, f"{type(e).__name__}: {e}") from None


def triton_arguments(launch: Launch, bases: Sequence[int]) -> List[Any]:
    """What Triton's compiled kernel takes for the launch with storage i at address bases[i]:
    each tensor as its address, each descriptor as a TensorDescriptor (its shape, strides,
    block shape and padding as captured) on its address, the rest as the program passed it."""
    def value(a: Arg) -> Any:
        if a.kind == TENSOR:
            return bases[a.storage] + a.byte_offset
        if a.kind == DESCRIPTOR:
            from triton.tools.tensor_descriptor import TensorDescriptor

            from .arrays import Address, DTypeName
            base = Address(bases[a.storage] + a.byte_offset,
                           DTypeName(a.dtype, itemsize(a.dtype), floating=a.dtype.startswith(("fp", "bf"))))
            return TensorDescriptor(base, list(a.shape), list(a.strides), list(a.block_shape), a.padding)
        return a.raw
    return [value(a) for a in launch.args]


def replay_launch(launch: Launch, target: str, mem: Any, tol: Tolerance, against_triton: bool, row: Row) -> None:
    """Runs one launch on `target` into `row`; raises Failure for what failed."""
    if launch.error:
        raise Failure("capture", launch.error)
    ctx, kernel, row.compile_ms, row.stages, log = compile_cold(launch, target)
    compiled_lines = len(log)
    with ctx:
        if any(s.before is None for s in launch.storages):
            row.status = "compiled (no input data saved)"
            return
        pristine = [_stage("data", mem.hold, s.before) for s in launch.storages]
        work = [_stage("data", mem.upload, p) for p in pristine]
        bases = [mem.address(w) for w in work]
        tri_args = tri_arguments(kernel, launch, bases, device=mem.device)
        before = [_stage("data", host_bytes, s.before) for s in launch.storages]

        def restore():
            for w, p in zip(work, pristine):
                mem.restore(w, p)

        want: Optional[List[np.ndarray]] = None
        triton_launch = None
        if against_triton:
            if launch.compiled is None:
                raise Failure("triton", "no compiled Triton kernel to launch (only a capture in this process has one)")
            triton_args = triton_arguments(launch, bases)
            triton_launch = lambda: launch.compiled[launch.grid](*triton_args)  # noqa: E731
            restore()
            _stage("triton", triton_launch)
            _stage("triton", mem.sync)
            want = [mem.download(w) for w in work]
            against = "Triton"
        else:
            if all(s.after is not None for s in launch.storages):
                want = [_stage("data", host_bytes, s.after) for s in launch.storages]
            against = "expected"
        restore()
        _stage("launch", kernel.launch, launch.grid, *tri_args, stream=mem.stream())
        _stage("launch", mem.sync)
        got = [mem.download(w) for w in work]
        # A variant the first launch specialized (on "cuda": alignment, divisibility, ones).
        variant = _stage_times(log[compiled_lines:])
        if variant:
            row.stages["first launch's variant"] = sum(v for k, v in variant.items() if k != "driver jit")
        outcome: Optional[Outcome] = None
        if want is not None:
            outcome = _stage("compare", compare, launch.args, before, want, got, tol, against)
            row.max_error, row.outputs = outcome.max_error, outcome.outputs
        plan = _stage("launch", kernel.plan, launch.grid, *tri_args, stream=mem.stream())
        with plan:
            row.tri_ms = _stage("timing", mem.time, plan.launch)
        if triton_launch is not None:
            row.triton_ms = _stage("timing", mem.time, triton_launch)
        kernel.close()
    if outcome is None:
        row.status = "ran (no expected outputs saved)"
    elif not outcome.ok:
        raise Failure("compare", "; ".join(outcome.problems))
    else:
        row.status = "ok (exact)" if outcome.exact else f"ok (max |diff| {outcome.max_error:.2g})"


def replay(launches: Sequence[Launch], targets: Sequence[str] = ("cpu",), against_triton: bool = False,
           tolerance: Tolerance = Tolerance(), warmup: float = 25, rep: float = 100, repeat: int = 5,
           progress: Optional[Callable[[str], None]] = None) -> Report:
    """Every launch on every target; a Report of one row each."""
    rows = []
    mems: Dict[str, Any] = {}
    for i, launch in enumerate(launches):
        for target in targets:
            row = Row(launch.kernel, launch.label(), launch.count, launch.source, target)
            try:
                if target not in mems:
                    mems[target] = _Cuda(warmup, rep) if target == "cuda" else \
                        _Host(1 if target == "interp" else repeat)
                replay_launch(launch, target, mems[target], tolerance, against_triton, row)
            except Failure as f:
                row.fail(f)
            rows.append(row)
            if progress:
                times = f"Tri {_ms(row.tri_ms)} ms" + (f", Triton {_ms(row.triton_ms)} ms" if against_triton else "")
                progress(f"[{i + 1}/{len(launches)}] {row.kernel} {row.shapes} ({target}): {times}: {row.status}")
    meta = {"date": datetime.date.today().isoformat(), "tri": ".".join(map(str, tri_version())),
            "commit": _commit(), "targets": list(targets), "against": "triton" if against_triton else "saved outputs"}
    return Report(rows, meta)


def _commit() -> str:
    """The git commit of the tree this package was loaded from ("" outside a checkout)."""
    try:
        return subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def replay_recorded(recorder: Any, tolerance: Tolerance = Tolerance(), warmup: float = 25, rep: float = 100,
                    progress: Optional[Callable[[str], None]] = None) -> Report:
    """A Recorder's launches: on the GPU next to Triton, or after a dry run on the cpu target
    against the interpreter's outputs."""
    if recorder.dry_run:
        report = replay(recorder.launches, ("cpu",), False, tolerance, progress=progress)
        report.meta["title"] = ("Tri's cpu target on the captured launches (dry run: expected outputs from Tri's "
                                "interpreter; ms: median wall time of 5 launches)")
        return report
    report = replay(recorder.launches, ("cuda",), True, tolerance, warmup, rep, progress=progress)
    meta = report.meta
    try:
        import torch
        import triton
        meta.update(gpu=torch.cuda.get_device_name(), triton=triton.__version__, torch=torch.__version__)
    except Exception:  # noqa: BLE001 - the table says what it can
        pass
    meta["title"] = (f"Tri vs Triton {meta.get('triton', '?')} on {meta.get('gpu', 'the GPU')} ({meta['date']}): "
                     "medians of triton.testing.do_bench; Tri speed / Triton speed = Triton ms / Tri ms (above 1: "
                     "Tri is faster); max error = largest |Tri - Triton| over the outputs compared; Tri compile = "
                     "cold, in-process, without the driver's JIT")
    return report


# ---------------------------------------------------------------- the command

def main(argv: Optional[Sequence[str]] = None) -> int:
    from .saved import ManifestError, load
    p = argparse.ArgumentParser(prog=PROG, description="Replay a saved capture (python3 -m tri.triton.capture --save "
                                                       "DIR --save-data) through Tri, without Triton or the program, "
                                                       "and compare with the saved outputs.")
    p.add_argument("dir", metavar="DIR", help="the folder with manifest.json")
    p.add_argument("--target", action="append", choices=("cpu", "interp", "cuda"), default=[],
                   help="where Tri runs the launches (repeatable; default cpu; cuda needs PyTorch)")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON (PERF.md's shape)")
    p.add_argument("-k", "--kernel", action="append", default=[], metavar="NAME", help="only this kernel (repeatable)")
    p.add_argument("--atol", type=float, default=None, help="absolute tolerance of floating outputs")
    p.add_argument("--rtol", type=float, default=None, help="relative tolerance of floating outputs")
    p.add_argument("--repeat", type=int, default=5, help="timed launches per row on cpu (median; default 5)")
    a = p.parse_args(argv)
    try:
        launches = load(a.dir)
    except ManifestError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    if a.kernel:
        unknown = set(a.kernel) - {l.kernel for l in launches}
        if unknown:
            print(f"{PROG}: error: no launch of {', '.join(sorted(unknown))} in {a.dir} (it has "
                  f"{', '.join(sorted({l.kernel for l in launches}))})", file=sys.stderr)
            return 1
        launches = [l for l in launches if l.kernel in a.kernel]
    targets = a.target or ["cpu"]
    report = replay(launches, targets, False, Tolerance(a.atol, a.rtol), repeat=a.repeat,
                    progress=lambda line: print(line, file=sys.stderr, flush=True))
    froms = sorted({l.outputs_from for l in launches if l.outputs_from})
    report.meta["title"] = (f"Tri's {', '.join(targets)} target{'s' if len(targets) > 1 else ''} on the launches "
                            f"saved in {a.dir} (expected outputs from {', '.join(froms) or 'nobody: none saved'}); ms: median "
                            "wall time of the launches on the host, do_bench's median on cuda")
    report.meta["command"] = " ".join([PROG] + list(argv if argv is not None else sys.argv[1:]))
    print(report.table(), flush=True)
    if a.json:
        report.write_json(a.json)
    return 1 if report.failed else 0


if __name__ == "__main__":
    from tri.triton.replay import main as _main
    sys.exit(_main())
