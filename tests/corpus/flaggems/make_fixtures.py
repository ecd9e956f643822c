"""Writes the TTIR fixtures of FlagGems' operators (tests/corpus/flaggems/ttir, manifest.json)
from the installed package (PyTorch not needed: load.py):

    pip install --break-system-packages --no-deps flag-gems==5.0.2 packaging pyyaml sqlalchemy
    PYTHONPATH=bindings/python/src TRI_LIBRARY=build/src/libtri.so \\
        python3 tests/corpus/flaggems/make_fixtures.py [-k NAME]...

Which kernels, with which constexprs and arguments, is tests/corpus/flaggems/cases.py. Before
printing a fixture this checks that its specialization is FlagGems' own at the bench size: a
kernel under triton.heuristics must get the export's constexprs and num_warps from FlagGems'
heuristic functions; an autotuned kernel's (libtuner / triton.autotune) constexprs, num_warps and
num_stages must be one of the configurations of its tuning list; a generated pointwise kernel's
wrapper must pick tiles as cases.py assumes. Locations are written as flag_gems/... (the
package) and flag_gems/<generated>/... (FlagGems' generated kernels)."""

import argparse
import importlib.metadata
import re
import sys
import warnings
from pathlib import Path
from typing import Any, Dict

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from corpus import generate  # noqa: E402
from corpus.common import HERE as CORPUS_DIR, Arr, DTYPES  # noqa: E402
from corpus.flaggems import cases, load  # noqa: E402

FLAGGEMS = CORPUS_DIR / "flaggems"


class _TensorLike:
    """What FlagGems' heuristic functions read of a tensor argument."""

    def __init__(self, a: Arr):
        import torch
        self.dtype = getattr(torch, DTYPES[a.dtype][3])
        self._n = a.size

    def numel(self):
        return self._n


def _wrappers(obj):
    """The chain of wrappers around the JITFunction (LibEntry, Heuristics, Autotuner), outermost first."""
    chain = []
    while hasattr(obj, "fn") and not hasattr(obj, "arg_names") or type(obj).__name__ in ("LibEntry", "Heuristics",
                                                                                          "Autotuner", "LibTuner"):
        chain.append(obj)
        obj = obj.fn
    return chain


def verify(e, fn, args: Dict[str, Any]) -> None:
    """SystemExit naming the difference where export e is not launched as FlagGems launches it."""
    problems = []
    named = {k: (_TensorLike(v) if isinstance(v, Arr) else v) for k, v in args.items()}
    named.update(e.constexprs)
    for w in _wrappers(fn):
        kind = type(w).__name__
        if kind == "Heuristics":
            for key, heur in w.values.items():
                want = heur(dict(named))
                launch = {"num_warps": e.num_warps, "num_stages": e.num_stages}
                have = launch.get(key, e.constexprs.get(key, named.get(key)))
                named[key] = want
                if want != have:
                    problems.append(f"FlagGems' heuristic gives {key}={want!r}, cases.py says {have!r}")
        elif kind in ("Autotuner", "LibTuner"):
            def matches(c):
                return all(e.constexprs.get(k) == v for k, v in c.kwargs.items()) and \
                    c.num_warps == e.num_warps and c.num_stages == e.num_stages
            if not any(matches(c) for c in w.configs):
                listed = "; ".join(f"{c.kwargs} warps={c.num_warps} stages={c.num_stages}" for c in w.configs[:12])
                problems.append(f"no configuration of FlagGems' tuning list is {e.constexprs} warps={e.num_warps} "
                                f"stages={e.num_stages} (it has: {listed}{' ...' if len(w.configs) > 12 else ''})")
    if re.fullmatch(r"\w+_kernel_rank_\d+", e.kernel):
        wrapper = next(load.generated_dir().glob(f"*_{e.kernel}_bptr.py"), None)
        text = wrapper.read_text() if wrapper else ""
        if f"heuristics_for_tile_size({cases.PW_MAX_TILE}," not in text or \
                f"num_ctas = min({cases.PW_MAX_CTAS}, num_tiles)" not in text:
            problems.append(f"FlagGems' generated wrapper for {e.kernel} does not pick tiles as cases.py assumes")
    if problems:
        raise SystemExit(f"{e.key}: not launched as FlagGems launches it:\n  " + "\n  ".join(problems))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", "--only", action="append", default=[], help="only this export (repeatable)")
    args = ap.parse_args(argv)
    # FlagGems' kernels use `and` on tensors, which Triton 3.6 warns about at every compile.
    warnings.filterwarnings("ignore", message="Logical operators 'and' and 'or' are deprecated")
    warnings.filterwarnings("ignore", message="Enable tracemalloc")
    warnings.filterwarnings("ignore", message="tl.where with a non-boolean condition")
    version = importlib.metadata.version("flag-gems")
    if version != load.VERSION:
        raise SystemExit(f"FlagGems {version} is installed; the fixtures are made from {load.VERSION} "
                         f"(pip install --no-deps flag-gems=={load.VERSION}, or update load.VERSION)")
    root = load.package_dir()

    def resolve(e):
        return load.kernel(e.source, e.kernel)

    provenance = {"source": f"FlagGems {version} (pip package flag-gems), kernels as it launches them on an H100",
                  "flag_gems": version, "regenerate": "python3 tests/corpus/flaggems/make_fixtures.py"}
    failed = generate.generate(FLAGGEMS, cases.REGISTRY.exports, resolve,
                               [(root, "flag_gems"), (load.generated_dir(), "flag_gems/<generated>")], provenance,
                               args.only, verify)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
