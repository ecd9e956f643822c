"""Capture of the Triton launches a program makes, to replay them through Tri.

    with tri.triton.capture() as rec:        # also tri.triton.capture.capture()
        model(x)                             # a PyTorch program that launches Triton kernels
    print(rec.replay().table())              # each kernel through Triton and Tri, compared, timed
    rec.save("out/", data=True)              # .tri files, manifest.json and the tensors' bytes

    python3 -m tri.triton.capture [--json FILE] [--save DIR [--save-data]] script.py [args...]

While the block runs, every launch of a Triton kernel is recorded: the kernel's name and source
line, the TTIR Triton compiled, its specialization (parameter types, the constexprs, including
those an autotuner or heuristics chose, the divisibility-by-16 facts and the runtime parameters
Triton fixed because they were 1 or None), num_warps, num_stages and num_ctas, the grid, and
each argument by parameter name: tensors as views of storages (type, shape, strides, offset; two
arguments on one storage alias), host-side TensorDescriptors as their base's view plus their own
shape, strides, block shape and padding, and scalars by value. Launches alike (same compiled kernel,
grid, tensor types, shapes, strides and aliasing) are counted once; for the first of each, the
bytes of every storage its tensors view are copied before the launch (and after it with
`keep_outputs`), so a replay starts from the values the program's launch saw.

The hook is the launcher of Triton's CompiledKernel (its `run` property), which every launch
passes through: JITFunction.run (`kernel[grid](...)`, autotuned and heuristics-wrapped kernels
included) and CompiledKernel[grid](...) alike. Launches made by Triton's autotuner while it
benchmarks configs are counted and not recorded; the config it then launches is. Triton's state
is restored when the block ends, also on an exception. Tested with Triton 3.6.

`dry_run=True` (`--dry-run`) captures on a machine without a GPU: Triton compiles for an
explicit target (sm_`arch`, default 90), and each launch runs on Tri's reference interpreter
instead of a GPU (dry.py), on host memory: tri.triton.HostTensor arrays or torch CPU tensors.
"""

import argparse
import contextlib
import functools
import inspect
import os
import runpy
import sys
import threading
import traceback
import types
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from .arrays import NotATensor, View, snapshot, synchronize, view_of
from .launches import CONSTEXPR, DESCRIPTOR, SCALAR, SPECIALIZED, TENSOR, TRITON_DTYPES, UNSUPPORTED, Arg, Launch, \
    Storage, descriptor_dtype, itemsize, pointee

PROG = "python3 -m tri.triton.capture"
_OPTIONS_KEPT = ("maxnreg", "enable_fp_fusion", "debug", "launch_cooperative_grid", "launch_pdl", "shared")


def plain(value: Any) -> Any:
    """A constexpr's or scalar's value in a form JSON and people can read: numbers, strings,
    None, bools as themselves; Triton dtypes and constexpr wrappers by value; functions by name."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if type(value).__name__ == "constexpr" and hasattr(value, "value"):
        return plain(value.value)
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if type(value).__name__ == "dtype" or type(value).__module__.startswith("triton.language"):
        return str(value)
    name = getattr(value, "__name__", None) or getattr(getattr(value, "fn", None), "__name__", None)
    if name:
        return f"<{type(value).__name__} {name}>"
    return repr(value)


_SOURCES: Dict[Tuple[int, Optional[str]], str] = {}


def _source(fn, relative_to: Optional[str]) -> str:
    """"file:line" of the kernel's `def`, the file relative to `relative_to` when under it."""
    key = (id(fn.fn), relative_to)
    if key not in _SOURCES:
        _SOURCES[key] = _find_source(fn, relative_to)
    return _SOURCES[key]


def _find_source(fn, relative_to: Optional[str]) -> str:
    code = fn.fn.__code__
    path = code.co_filename
    line = code.co_firstlineno
    try:
        lines, first = inspect.getsourcelines(fn.fn)
        line = first + next(i for i, t in enumerate(lines) if t.lstrip().startswith("def "))
    except (OSError, TypeError, StopIteration):
        pass
    root = os.path.realpath(relative_to or os.getcwd())
    real = os.path.realpath(path)
    if real.startswith(root.rstrip(os.sep) + os.sep):
        path = os.path.relpath(real, root).replace(os.sep, "/")
    return f"{path}:{line}"


def _tensor_arg(name: str, ttype: str, view: View, storage: int, value: Any) -> Arg:
    dtype = pointee(ttype)
    shape, strides = view.shape, view.strides
    note = ""
    if dtype not in TRITON_DTYPES:
        note = f"a pointer to {dtype}"
    elif shape is None or strides is None:
        note = "a tensor whose shape and strides its object does not give"
    elif view.elem_bytes != itemsize(dtype):
        # triton.reinterpret to a type of another size: a contiguous tensor is a flat array of it.
        nbytes = int(np.prod(shape, dtype=np.int64)) * view.elem_bytes
        contiguous = all(s == int(np.prod(shape[i + 1:], dtype=np.int64))
                         for i, s in enumerate(strides) if shape[i] > 1)
        if contiguous and nbytes % itemsize(dtype) == 0:
            shape, strides = (nbytes // itemsize(dtype),), (1,)
        else:
            note = f"a non-contiguous tensor of {view.elem_bytes}-byte elements reinterpreted as {dtype}"
    if note:
        return Arg(name, UNSUPPORTED, ttype, dtype=dtype, note=note, framework_dtype=view.framework_dtype, raw=value)
    return Arg(name, TENSOR, ttype, dtype=dtype, shape=tuple(shape), strides=tuple(strides),
               byte_offset=view.byte_offset, storage=storage, framework_dtype=view.framework_dtype, raw=value)


def _descriptor_arg(name: str, ttype: str, view: View, storage: int, value: Any) -> Arg:
    """A host-side TensorDescriptor argument: its base's place in the storage, its own shape,
    strides (elements), block shape and padding."""
    dtype = descriptor_dtype(ttype)
    note = ""
    if dtype not in TRITON_DTYPES:
        note = f"a tensor descriptor of {dtype}"
    elif view.elem_bytes != itemsize(dtype):
        note = f"a tensor descriptor of {dtype} on a tensor of {view.elem_bytes}-byte elements"
    if note:
        return Arg(name, UNSUPPORTED, ttype, dtype=dtype, note=note, framework_dtype=view.framework_dtype, raw=value)
    return Arg(name, DESCRIPTOR, ttype, dtype=dtype, shape=tuple(int(x) for x in value.shape),
               strides=tuple(int(x) for x in value.strides), byte_offset=view.byte_offset, storage=storage,
               block_shape=tuple(int(x) for x in value.block_shape), padding=str(getattr(value, "padding", "zero")),
               framework_dtype=view.framework_dtype, raw=value)


def describe(compiled: Any, call: Sequence[Any], relative_to: Optional[str] = None) -> Tuple[Launch, List[View]]:
    """The Launch a call of `compiled`'s launcher makes, and the View of each of its storages.
    `call` is what the launcher got: the grid's three counts, the stream, the function and
    Triton's own values, then one value per parameter of the kernel (constexprs included)."""
    import triton
    src = compiled.src
    fn = getattr(src, "fn", None)
    if fn is None:
        raise ValueError(f"kernel {compiled.name} was compiled from {type(src).__name__}, not from a @triton.jit "
                         "function; its parameters are unknown")
    names = list(fn.arg_names)
    values = list(call[len(call) - len(names):])
    signature, constants, attrs = src.signature, src.constants, src.attrs
    args: List[Arg] = []
    storages: List[Storage] = []
    views: List[View] = []
    where: Dict[Tuple[str, int], int] = {}
    for i, (name, value) in enumerate(zip(names, values)):
        t = signature.get(name)
        if t == "constexpr":
            v = constants.get((i,), value)
            kind = CONSTEXPR if fn.params[i].is_constexpr else SPECIALIZED
            args.append(Arg(name, kind, "constexpr", value=plain(v), raw=value))
        elif isinstance(t, str) and t.startswith(("*", "tensordesc")):
            desc = t.startswith("tensordesc")
            try:
                v = view_of(value.base if desc else value)
            except NotATensor as e:
                args.append(Arg(name, UNSUPPORTED, t, dtype=descriptor_dtype(t) if desc else pointee(t),
                                note=f"a tensor descriptor on {e}" if desc else str(e), raw=value))
                continue
            k = (v.device, v.base)
            if k not in where:
                where[k] = len(storages)
                storages.append(Storage(v.nbytes, v.device))
                views.append(v)
            args.append((_descriptor_arg if desc else _tensor_arg)(name, t, v, where[k], value))
        elif isinstance(t, str) and t in TRITON_DTYPES:
            args.append(Arg(name, SCALAR, t, value=plain(value), raw=value))
        else:
            args.append(Arg(name, UNSUPPORTED, str(t), note=f"a parameter of Triton type {t} (tuples are not "
                                                            "captured yet)", raw=value))
    md = compiled.metadata
    divisibility = [names[k[0]] for k, v in attrs.items()
                    if len(k) == 1 and any(a and a[0] == "tt.divisibility" for a in v)]
    target = md.target
    launch = Launch(
        kernel=fn.__name__, source=_source(fn, relative_to), grid=tuple(int(g) for g in call[:3]), args=args,
        storages=storages, num_warps=md.num_warps, num_stages=md.num_stages, num_ctas=getattr(md, "num_ctas", 1),
        options={k: plain(getattr(md, k)) for k in _OPTIONS_KEPT if hasattr(md, k)},
        target={"backend": target.backend, "arch": target.arch, "warp_size": target.warp_size},
        divisibility=sorted(divisibility, key=names.index), ttir=compiled.asm.get("ttir"),
        triton_version=triton.__version__, compiled=compiled, digest=getattr(compiled, "hash", None))
    return launch, views


def _graph_capturing(handles: Sequence[Any]) -> bool:
    """Whether torch is capturing a CUDA graph on this thread's stream (no copy may be made)."""
    torch = sys.modules.get("torch")
    if torch is None or not any(not isinstance(h, np.ndarray) for h in handles):
        return False
    try:
        return bool(torch.cuda.is_current_stream_capturing())
    except Exception:  # noqa: BLE001 - no CUDA in this torch
        return False


class DryLaunchError(Exception):
    """A dry run's launch that Tri's interpreter could not run (dry.py)."""


class Recorder:
    """The launches of one capture: `launches` (one per kind, each with its `count`), and the
    counts of what was not recorded: `tuning` (launches Triton's autotuner made to benchmark
    configs) and `skipped` (kernels not among `kernels`)."""

    def __init__(self, keep_outputs: bool = False, kernels: Optional[Sequence[str]] = None, dry_run: bool = False,
                 relative_to: Optional[str] = None):
        self.launches: List[Launch] = []
        self.keep_outputs = keep_outputs or dry_run
        self.kernels = set(kernels) if kernels else None
        self.dry_run = dry_run
        self.relative_to = relative_to
        self.total = 0
        self.tuning = 0
        self.skipped = 0
        self.active = True  # False once the capture's block has ended
        self._index: Dict[Tuple, Launch] = {}
        self._lock = threading.RLock()
        self._local = threading.local()

    def __iter__(self) -> Iterator[Launch]:
        return iter(self.launches)

    def __len__(self) -> int:
        return len(self.launches)

    def summary(self) -> str:
        kernels = len({(l.kernel, l.source) for l in self.launches})
        text = (f"{self.total} launch{'es' if self.total != 1 else ''} of {kernels} "
                f"kernel{'s' if kernels != 1 else ''} captured, {len(self.launches)} different")
        if self.tuning:
            text += f"; {self.tuning} autotuner benchmark launches not recorded"
        if self.skipped:
            text += f"; {self.skipped} launches of other kernels skipped"
        return text

    # -- the hook

    @contextlib.contextmanager
    def _tuning(self):
        self._local.depth = getattr(self._local, "depth", 0) + 1
        try:
            yield
        finally:
            self._local.depth -= 1

    def on_launch(self, compiled: Any, launcher: Any, *call: Any) -> Any:
        """Called instead of Triton's launcher with its arguments; records, then launches. A
        launcher taken during the capture and called after it (a framework that keeps
        `compiled.run`) just launches."""
        if not self.active:
            return launcher(*call)
        if getattr(self._local, "depth", 0):
            with self._lock:
                self.tuning += 1
            return launcher(*call)
        name = getattr(getattr(compiled.src, "fn", None), "__name__", compiled.name)
        if self.kernels is not None and name not in self.kernels:
            with self._lock:
                self.skipped += 1
            return launcher(*call)
        views: List[View] = []
        try:
            launch, views = describe(compiled, call, self.relative_to)
        except Exception as e:  # noqa: BLE001 - the program goes on; the launch is a row with its error
            launch = Launch(kernel=name, source="?", grid=tuple(int(g) for g in call[:3]), args=[],
                            error=f"capture: {type(e).__name__}: {e}", compiled=compiled)
        bad = [a for a in launch.args if a.kind == UNSUPPORTED]
        if bad and launch.error is None:
            launch.error = "; ".join(f"%{a.name}: {a.note}" for a in bad)
        key = launch.key()
        with self._lock:
            self.total += 1
            seen = self._index.get(key)
            if seen is not None:
                seen.count += 1
                first = False
            else:
                self._index[key] = launch
                self.launches.append(launch)
                first = True
        if not first:
            return self._launch(launch, launcher, call, record=False)
        handles = [v.handle for v in views]
        if _graph_capturing(handles):
            launch.error = "launched while a CUDA graph was being captured: its inputs could not be copied"
            return self._launch(launch, launcher, call, record=True)
        # The copies are made on torch's current stream, between device-wide waits: the
        # program's work before the launch is done, and the launch (on whatever stream) starts
        # after them.
        synchronize(handles)
        for s, h in zip(launch.storages, handles):
            s.before = snapshot(h)
        synchronize(handles)
        result = self._launch(launch, launcher, call, record=True)
        if self.keep_outputs and launch.error is None:
            synchronize(handles)
            for s, h in zip(launch.storages, handles):
                s.after = snapshot(h)
            synchronize(handles)
            launch.outputs_from = "tri interp (dry run)" if self.dry_run else "triton"
        return result

    def _launch(self, launch: Launch, launcher: Any, call: Sequence[Any], record: bool) -> Any:
        try:
            return launcher(*call)
        except DryLaunchError as e:
            if record and launch.error is None:
                launch.error = f"dry run: {e}"
            print(f"{PROG}: warning: {launch.kernel} ({launch.source}) did not run: {e}", file=sys.stderr)
            return None

    # -- afterwards

    def replay(self, **kwargs: Any):
        """Runs every recorded launch through Tri (replay.replay_recorded) and returns the Report.
        Call it after the capture's with-block (whose hook would record the replay's launches)."""
        if self in _active:
            raise RuntimeError("replay() inside the capture's with-block: call it after the block ends")
        from .replay import replay_recorded
        return replay_recorded(self, **kwargs)

    def save(self, folder: str, data: bool = False, relative_to: Optional[str] = None) -> str:
        """Writes the launches to `folder` (saved.save): .tri files and manifest.json, and with
        `data` the storages' bytes. Returns the manifest's path."""
        from .saved import save
        if self.dry_run:
            arch = next((l.target.get("arch") for l in self.launches if l.target), "?")
            note = (f"a dry run without a GPU: Triton compiled each kernel for cuda sm_{arch}, and each launch ran on "
                    "Tri's reference interpreter (checked mode) instead of the GPU; the expected outputs are the "
                    "interpreter's")
        else:
            note = "captured on a GPU: the expected outputs are what Triton's launch left in memory"
        return str(save(self.launches, folder, data=data, relative_to=relative_to or self.relative_to, note=note))


# ---------------------------------------------------------------- installing the hook

_active: List[Recorder] = []


def _install(rec: Recorder):
    """Wraps CompiledKernel.run and Autotuner._bench; returns what undoes it."""
    from triton.compiler.compiler import CompiledKernel
    from triton.runtime.autotuner import Autotuner
    run = CompiledKernel.__dict__.get("run")
    if not isinstance(run, property):
        import triton
        raise RuntimeError(f"Triton {triton.__version__}'s CompiledKernel has no `run` property to wrap; "
                           f"{PROG} was written for Triton 3.6")
    bench = Autotuner.__dict__["_bench"]

    def recording_run(compiled):
        return functools.partial(rec.on_launch, compiled, run.fget(compiled))

    @functools.wraps(bench)
    def recording_bench(self, *args, **kwargs):
        with rec._tuning():
            return bench(self, *args, **kwargs)

    CompiledKernel.run = property(recording_run)
    Autotuner._bench = recording_bench

    def undo():
        CompiledKernel.run = run
        Autotuner._bench = bench
    return undo


@contextlib.contextmanager
def capture(keep_outputs: bool = False, kernels: Optional[Sequence[str]] = None, dry_run: bool = False,
            arch: int = 90, relative_to: Optional[str] = None) -> Iterator[Recorder]:
    """Records the Triton launches made inside the with-block (see the module's text).
    keep_outputs: also copy each first launch's storages after it (for Recorder.save(data=True)
    with expected outputs). kernels: record only kernels of these names. dry_run: no GPU (Triton
    compiles for sm_`arch`, Tri's interpreter runs the launches). relative_to: the folder source
    files are named relative to (default: the current directory)."""
    from . import _triton
    _triton()
    if _active:
        raise RuntimeError("a capture is already active in this process; captures do not nest")
    rec = Recorder(keep_outputs, kernels, dry_run, relative_to)
    undo_dry = None
    if dry_run:
        from .dry import install
        undo_dry = install(arch)
    try:
        undo = _install(rec)
    except BaseException:
        if undo_dry:
            undo_dry(rec.launches)
        raise
    _active.append(rec)
    try:
        yield rec
    finally:
        rec.active = False
        _active.pop()
        undo()
        if undo_dry:
            undo_dry(rec.launches)


class _CallableModule(types.ModuleType):
    """`tri.triton.capture` is this module and, called, the capture() context manager."""

    def __call__(self, *args: Any, **kwargs: Any):
        return capture(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule


# ---------------------------------------------------------------- the command

def _run_script(path: str, args: Sequence[str]) -> int:
    """Runs a Python file as __main__ with its arguments; its exit status (1 for an exception,
    which is printed)."""
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [path] + list(args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        runpy.run_path(path, run_name="__main__")
        return 0
    except SystemExit as e:
        if e.code is None or e.code == 0:
            return 0
        if not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
        return e.code if isinstance(e.code, int) else 1
    except Exception:  # noqa: BLE001 - reported; the launches captured so far are still replayed
        traceback.print_exc()
        return 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a Python program, capture every Triton launch it makes, then replay each kind of launch\n"
                    "through Triton and Tri on the same inputs: compare the outputs, time both, print a table.",
        epilog="The table's speed is Triton ms / Tri ms (above 1: Tri is faster); the geometric mean is over the\n"
               "rows whose outputs matched. Exit status: 0 when the program succeeded and every row is ok, 1\n"
               "otherwise, 2 for usage errors. docs/import.md, \"Capture and replay\", says more.")
    p.add_argument("script", metavar="script.py", help="the program to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON (PERF.md's shape)")
    p.add_argument("--save", metavar="DIR", help="write each captured kernel as a .tri file, and manifest.json")
    p.add_argument("--save-data", action="store_true", help="with --save: also each launch's storages before and "
                                                            "after it (.npy), for python3 -m tri.triton.replay")
    p.add_argument("--no-replay", action="store_true", help="capture (and save) only")
    p.add_argument("-k", "--kernel", action="append", default=[], metavar="NAME",
                   help="only launches of the kernel named NAME (repeatable)")
    p.add_argument("--dry-run", action="store_true",
                   help="no GPU: Triton compiles for --arch, Tri's interpreter runs each launch on host memory "
                        "(tri.triton.HostTensor or torch CPU tensors), and the replay runs Tri's cpu target "
                        "against the interpreter's outputs")
    p.add_argument("--arch", type=int, default=90, metavar="N", help="with --dry-run: the compute capability "
                                                                     "Triton compiles for (default 90)")
    p.add_argument("--warmup", type=float, default=25, metavar="MS", help="do_bench's warmup (default 25 ms)")
    p.add_argument("--rep", type=float, default=100, metavar="MS", help="do_bench's repetition time (default 100 ms)")
    p.add_argument("--atol", type=float, default=None, help="absolute tolerance of floating outputs "
                                                            "(default: by type, compare.py)")
    p.add_argument("--rtol", type=float, default=None, help="relative tolerance of floating outputs")
    p.add_argument("--relative-to", metavar="DIR", default=None,
                   help="name source files relative to DIR (default: the current directory)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    a = _parser().parse_args(argv)
    if a.save_data and not a.save:
        _parser().error("--save-data needs --save DIR")
    if not os.path.isfile(a.script):
        print(f"{PROG}: error: {a.script}: no such file", file=sys.stderr)
        return 1
    from . import AuthoringError
    from .compare import Tolerance
    try:
        cm = capture(keep_outputs=a.save_data, kernels=a.kernel or None, dry_run=a.dry_run, arch=a.arch,
                     relative_to=a.relative_to)
        with cm as rec:
            status = _run_script(a.script, a.args)
    except (AuthoringError, RuntimeError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    print(f"{PROG}: {a.script}: {rec.summary()}" + (f"; the program failed (exit status {status})" if status else ""),
          file=sys.stderr)
    if a.save:
        path = rec.save(a.save, data=a.save_data, relative_to=a.relative_to)
        print(f"{PROG}: wrote {path}", file=sys.stderr)
    failed = bool(status)
    if not rec.launches:
        print(f"{PROG}: nothing to replay: {a.script} launched no Triton kernel"
              + (f" named {', '.join(a.kernel)}" if a.kernel else ""), file=sys.stderr)
    elif not a.no_replay:
        report = rec.replay(tolerance=Tolerance(a.atol, a.rtol), warmup=a.warmup, rep=a.rep,
                            progress=lambda line: print(line, file=sys.stderr, flush=True))
        report.meta["command"] = " ".join([PROG] + list(argv if argv is not None else sys.argv[1:]))
        print(report.table(), flush=True)
        if a.json:
            report.write_json(a.json)
        failed = failed or report.failed
    return 1 if failed else 0


if __name__ == "__main__":
    # Run as `python3 -m tri.triton.capture`: the hooks must be those of the module imported
    # under its own name, which the recorded launches' classes come from.
    from tri.triton.capture import main as _main
    sys.exit(_main())
