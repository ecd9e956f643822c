"""Writes the TTIR fixtures of Triton's tutorials (tests/corpus/tutorials/ttir, manifest.json)
from the tutorials' own source, which this repository does not carry:

    git clone https://github.com/triton-lang/triton && git -C triton checkout v3.6.0   # or any 3.6 tree
    PYTHONPATH=bindings/python/src TRI_LIBRARY=build/src/libtri.so \\
        python3 tests/corpus/tutorials/make_fixtures.py --source triton/python/tutorials [-k NAME]...

The tutorials run their benchmarks (and need a GPU and torch) when imported, so they are not
imported: each file is parsed, and only its @triton.jit functions, the module-level constants
they name and the imports they need are executed, under the file's own name and line numbers
(Triton reads a kernel's source through inspect, and the fixtures' locations point at the
tutorial's lines, written as python/tutorials/FILE.py). Decorators other than triton.jit
(autotune, heuristics) are dropped: each export in cases.py fixes the constexprs the tutorial's
launcher or autotuner picks. Which exports there are, with their cases, is
tests/corpus/tutorials/cases.py; the generic part is tests/corpus/generate.py. Deterministic:
the same Triton and the same source give the same files."""

import argparse
import ast
import hashlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Dict, Set

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from corpus import generate  # noqa: E402
from corpus.common import HERE as CORPUS_DIR  # noqa: E402
from corpus.tutorials import cases  # noqa: E402

TUTORIALS = CORPUS_DIR / "tutorials"


def _is_jit(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Attribute) and target.attr == "jit") or \
        (isinstance(target, ast.Name) and target.id == "jit")


def _jit_decorator(decorator: ast.expr) -> ast.expr:
    """triton.jit, keeping only the keywords that change the TTIR (noinline) or Triton's
    specialization (do_not_specialize*); launch_metadata and repr name host functions."""
    if not isinstance(decorator, ast.Call):
        return decorator
    wanted = ("noinline", "do_not_specialize", "do_not_specialize_on_alignment")
    keep = [k for k in decorator.keywords if k.arg in wanted]
    if not keep:
        return decorator.func
    return ast.Call(func=decorator.func, args=[], keywords=keep)


def _bound_names(node: ast.stmt) -> Set[str]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _used_names(node: ast.AST) -> Set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} | \
        {n.value.id for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}


def load_kernels(path: Path) -> ModuleType:
    """A module holding the @triton.jit functions of the tutorial at path, and what they need."""
    source = path.read_text()
    tree = ast.parse(source, str(path))
    defs: Dict[str, ast.stmt] = {}
    jit: Dict[str, ast.FunctionDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(_is_jit(d) for d in node.decorator_list):
            jit[node.name] = node
        for name in _bound_names(node):
            defs.setdefault(name, node)  # the first binding: imports come first
    # What the kernels name, transitively (a constant may name another constant).
    wanted: Set[int] = set()
    todo = list(jit.values())
    while todo:
        node = todo.pop()
        if id(node) in wanted:
            continue
        wanted.add(id(node))
        if isinstance(node, ast.FunctionDef):
            local = {a.arg for a in node.args.args + node.args.kwonlyargs} | {
                n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            parts = node.body + node.args.defaults + [a.annotation for a in node.args.args if a.annotation]
            used = set().union(*(_used_names(n) for n in parts)) - local | {"triton"}
        else:
            used = _used_names(node)
        for name in used:
            dep = defs.get(name)
            if dep is not None and id(dep) not in wanted and (
                    isinstance(dep, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)) or dep.name in jit):
                todo.append(dep)
    body = []
    for node in tree.body:
        if id(node) not in wanted:
            continue
        if isinstance(node, ast.FunctionDef):
            node.decorator_list = [_jit_decorator(d) for d in node.decorator_list if _is_jit(d)]
        body.append(node)
    module = ModuleType(f"tutorial_{path.stem.replace('-', '_')}")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module  # Triton looks the kernel's module up by name
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), module.__dict__)
    return module


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", required=True, type=Path, help="python/tutorials of a Triton 3.6 checkout")
    ap.add_argument("--revision", default="", help="which Triton tree --source is (recorded in manifest.json)")
    ap.add_argument("-k", "--only", action="append", default=[], help="only this export (repeatable)")
    args = ap.parse_args(argv)
    modules: Dict[str, ModuleType] = {}

    def resolve(e):
        if e.source not in modules:
            path = args.source / e.source
            if not path.exists():
                raise SystemExit(f"{path}: no such tutorial (--source names Triton's python/tutorials)")
            modules[e.source] = load_kernels(path)
        fn = getattr(modules[e.source], e.kernel, None)
        if fn is None:
            raise SystemExit(f"{e.source} has no @triton.jit function {e.kernel}")
        return fn

    files = sorted({e.source for e in cases.REGISTRY.exports.values()})
    digests = {f: hashlib.sha256((args.source / f).read_bytes()).hexdigest()[:16] for f in files
               if (args.source / f).exists()}
    provenance = {"source": "Triton's tutorials (python/tutorials of triton-lang/triton)",
                  "regenerate": "python3 tests/corpus/tutorials/make_fixtures.py --source TRITON/python/tutorials",
                  "source_sha256": digests}
    if args.revision:
        provenance["revision"] = args.revision
    failed = generate.generate(TUTORIALS, cases.REGISTRY.exports, resolve, [(args.source, "python/tutorials")],
                               provenance, args.only)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
