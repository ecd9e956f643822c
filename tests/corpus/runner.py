"""Runs one corpus case through Tri on a host target ("interp", checked, or "cpu") and compares
its outputs with the NumPy reference; used by tests/corpus/test_corpus.py and by
bench/gpu/triton_corpus.py --device cpu. Every failure is an Outcome naming the stage (import,
compile, arguments, launch, compare) and the first line of the error, which is what
tests/corpus/expected_failures.json records."""

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from corpus import common  # noqa: E402
from corpus.common import ROOT, Addrs, Arr, Case, Desc, Export, Mismatch, compare, launch_args, tensor_of  # noqa: E402

sys.path.insert(0, str(ROOT / "bindings" / "python" / "src"))

import tri  # noqa: E402

CORPUS_DIRS = {"tutorials": common.HERE / "tutorials", "flaggems": common.HERE / "flaggems"}


@dataclass
class Outcome:
    stage: str = ""  # "" when everything passed
    error: str = ""
    max_error: float = 0.0
    notes: List[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.stage

    @property
    def text(self) -> str:
        return f"{self.stage}: {self.error}" if self.stage else "ok"


def first_line(e: BaseException) -> str:
    text = e.message if isinstance(e, tri.TriError) else f"{type(e).__name__}: {e}"
    return text.strip().splitlines()[0] if text.strip() else type(e).__name__


class Fixtures:
    """The manifests and the imported fixtures of every corpus, one module per fixture."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.manifests = {c: common.load_manifest(d) for c, d in CORPUS_DIRS.items()}
        self.modules: Dict[str, Any] = {}
        self.kernels: Dict[tuple, Any] = {}

    def entry(self, e: Export) -> Optional[Dict[str, Any]]:
        return self.manifests[e.corpus]["exports"].get(e.name)

    def path(self, e: Export) -> Path:
        return common.fixture_path(CORPUS_DIRS[e.corpus], e.name)

    def module(self, e: Export):
        if e.key not in self.modules:
            path = self.path(e)
            self.modules[e.key] = self.ctx.module(path.read_text(), str(path.relative_to(ROOT)))
        return self.modules[e.key]

    def kernel(self, e: Export, target: str, **options):
        k = (e.key, target, tuple(sorted(options.items())))
        if k not in self.kernels:
            entry = self.entry(e)
            self.kernels[k] = self.module(e).compile(entry["kernel"], target=target, **options)
        return self.kernels[k]


def host_value(v: Any, buffers: Dict[str, Any], keep: List[Any]):
    """What the host targets take for a case argument (a Desc: its tensor's base address; the
    shape and strides that follow it are launch_args')."""
    v = tensor_of(v)
    if isinstance(v, Arr):
        if v.data.dtype in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64) or \
                (v.dtype == "u8"):
            return v.data
        keep.append(v.data)
        return tri.Buffer(v.data.ctypes.data, v.data.nbytes, getattr(tri.DType, common.DTYPES[v.dtype][2]))
    if isinstance(v, Addrs):
        table = np.array([tensor_of(buffers[n]).data.ctypes.data for n in v.names], np.int64)
        keep.append(table)
        return table
    return v


def fresh_outputs(c: Case) -> Dict[str, Any]:
    """c's arguments with every output's array copied from its initial contents (an array
    passed twice, as two arguments or behind a descriptor, stays one copy)."""
    copies: Dict[int, Arr] = {}
    for n in c.outs:
        t = tensor_of(c.args[n])
        if id(t) not in copies:
            copies[id(t)] = t.copy()

    def fresh(v):
        t = copies.get(id(tensor_of(v)))
        if t is None:
            return v
        return v.with_tensor(t) if isinstance(v, Desc) else t

    return {n: fresh(v) for n, v in c.args.items()}


def run_host(fx: Fixtures, e: Export, c: Case, target: str) -> Outcome:
    """Imports, compiles, launches and checks case c of export e on target."""
    entry = fx.entry(e)
    if entry is None or not fx.path(e).exists():
        return Outcome("fixture", f"no fixture for {e.key}: run tests/corpus/{e.corpus}/make_fixtures.py")
    try:
        fx.module(e)
    except tri.TriError as x:
        return Outcome("import", first_line(x))
    if not c.outs:
        return Outcome("case", "import-only fixture: it imports now, so give it a case that launches it")
    try:
        k = fx.kernel(e, target, checked=target == "interp")
    except tri.TriError as x:
        return Outcome("compile", first_line(x))
    problems = common.check_specialization(entry, c)
    if problems:
        return Outcome("arguments", "; ".join(problems))
    bufs = fresh_outputs(c)
    keep: List[Any] = []
    try:
        values = launch_args([p.name for p in k.params], bufs, lambda n, v: host_value(v, bufs, keep))
        k.launch(c.grid, *values)
    except (tri.TriError, TypeError) as x:
        return Outcome("launch", first_line(x))
    with np.errstate(all="ignore"):
        want = c.ref() if c.ref else {}
    result = Outcome()
    problems = []
    for name, tol in c.outs.items():
        got = tensor_of(bufs[name])
        try:
            result.max_error = max(result.max_error, compare(name, got.values(), want.get(name), tol,
                                                             tensor_of(c.args[name]).values(), got.dtype))
        except Mismatch as m:
            problems.append(str(m))
    if problems:
        return Outcome("compare", "; ".join(problems), result.max_error)
    return result


def main(argv=None) -> int:
    """python3 tests/corpus/runner.py [--write-expected] [CORPUS/NAME...]: every export's test
    case on interp and cpu, one line each; --write-expected rewrites
    tests/corpus/expected_failures.json with the failures seen (review the diff: it is the
    compiler's to-do list)."""
    import argparse
    import json
    import time
    from corpus.flaggems import cases as flaggems_cases
    from corpus.tutorials import cases as tutorial_cases
    ap = argparse.ArgumentParser(description=main.__doc__.split("\n")[0])
    ap.add_argument("--write-expected", action="store_true")
    ap.add_argument("only", nargs="*")
    args = ap.parse_args(argv)
    exports = [e for r in (tutorial_cases.REGISTRY, flaggems_cases.REGISTRY) for e in r.exports.values()
               if not args.only or e.key in args.only or e.corpus in args.only]
    failures: Dict[str, Dict[str, str]] = {}
    with tri.Context() as ctx:
        fx = Fixtures(ctx)
        for e in exports:
            c = e.case("test")
            seen = {}
            for target in ("interp", "cpu"):
                if target == "interp" and e.slow:
                    continue
                t0 = time.perf_counter()
                o = run_host(fx, e, c, target)
                print(f"{e.key} [{target}] {time.perf_counter() - t0:.2f}s: {o.text}", flush=True)
                if not o.ok:
                    seen[target] = o.text
            if seen:
                texts = set(seen.values())
                ran = 1 if e.slow else 2
                failures[e.key] = {"*": texts.pop()} if len(texts) == 1 and len(seen) == ran else seen
    if args.write_expected:
        path = common.HERE / "expected_failures.json"
        old = common.load_expected_failures()
        keys = {e.key for e in exports}
        merged = {k: v for k, v in old.items() if k not in keys}
        for k, v in failures.items():
            if "why" in old.get(k, {}) and {t: e for t, e in old[k].items() if t != "why"} == v:
                v["why"] = old[k]["why"]  # an explanation kept while the failure stays the same
            merged[k] = v
        path.write_text(json.dumps({k: merged[k] for k in sorted(merged)}, indent=1) + "\n")
        print(f"wrote {path.relative_to(ROOT)}: {len(merged)} exports")
    return 0


if __name__ == "__main__":
    sys.exit(main())
