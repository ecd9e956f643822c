"""The part of the corpus's fixture generators that does not depend on where the kernels come
from: for each export, the bench-size case's arguments are given to Triton's own launcher
specialization (triton._C.libtriton.native_specialize_impl, what `kernel[grid](...)` calls), so
the fixture is specialized as Triton specializes it at that size; Triton's frontend then prints
the TTIR for cuda sm_90 (tri.triton.ttir), which is written to DIR/ttir/NAME.ttir, and
DIR/manifest.json records per export the kernel, the signature, the constants, the divisibility
facts, num_warps and num_stages. Tri imports each fixture once to report what it makes of it;
a fixture Tri cannot import is still written (the test lists it as an expected failure).

Needs Triton (pip install triton; no GPU) and the Python binding (PYTHONPATH=bindings/python/src,
TRI_LIBRARY=build/src/libtri.so)."""

import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from corpus import common
from corpus.common import ROOT, Addrs, Arr, Desc, DTYPES, Export

sys.path.insert(0, str(ROOT / "bindings" / "python" / "src"))


class _Pointer:
    """What native_specialize_impl sees of a tensor: an address and an element type."""

    def __init__(self, address: int, dtype):
        self._address, self.dtype = address, dtype

    def data_ptr(self) -> int:
        return self._address


def _tl_dtype(name: str):
    import triton.language as tl
    return {"fp32": tl.float32, "fp16": tl.float16, "bf16": tl.bfloat16, "fp64": tl.float64,
            "fp8e5": tl.float8e5, "fp8e4nv": tl.float8e4nv, "i64": tl.int64, "i32": tl.int32, "u32": tl.uint32,
            "i16": tl.int16,
            "i8": tl.int8, "u8": tl.uint8, "u1": tl.int1}[name]


def launcher_specialization(fn, args: Dict[str, Any]):
    """Triton's signature types, the parameters it makes constants, and the divisibility facts
    for launching JITFunction fn on args (bench-size values; arrays are taken as 16-byte
    aligned, as PyTorch allocates them)."""
    from triton._C.libtriton import native_specialize_impl
    from triton.backends.compiler import BaseBackend
    signature, constants, divisibility = {}, {}, {}
    for p in fn.params:
        if p.is_constexpr:
            continue
        if p.name not in args:
            raise SystemExit(f"{fn.__name__}: the case gives no argument for parameter '{p.name}'")
        v = args[p.name]
        if isinstance(v, Arr):
            v = _Pointer(1 << 20, _tl_dtype(DTYPES[v.dtype][1]))
        elif isinstance(v, Addrs):
            v = _Pointer(1 << 20, _tl_dtype("i64"))
        elif isinstance(v, Desc):
            from triton.tools.tensor_descriptor import TensorDescriptor
            v = TensorDescriptor(_Pointer(1 << 20, _tl_dtype(DTYPES[v.dtype][1])), list(v.shape), list(v.strides),
                                 list(v.block_shape))
        kind, key = native_specialize_impl(BaseBackend, v, p.is_const, not p.do_not_specialize,
                                           not p.do_not_specialize_on_alignment)
        if kind == "constexpr":
            constants[p.name] = key
            continue
        signature[p.name] = kind
        if key == "D":
            divisibility[p.name] = 16
    return signature, constants, divisibility


def _relative(text: str, roots: List[Tuple[Path, str]]) -> str:
    """Locations in each (root, prefix) of roots (the tutorials' folder, FlagGems' package and the
    folder of its generated kernels) named prefix/..., Triton's own files triton/..., others
    relative to the repository, so fixtures do not depend on where things are installed."""
    from tri.triton import relative_locations
    import triton
    real_roots = [(os.path.realpath(r), p) for r, p in roots]

    def fix(m):
        real = os.path.realpath(m.group(1))
        for root, prefix in real_roots:
            if real.startswith(root.rstrip(os.sep) + os.sep):
                return f'loc("{prefix}/{os.path.relpath(real, root)}":{m.group(2)}'
        return m.group(0)

    text = re.sub(r'loc\("((?:[^"\\]|\\.)*)":(\d+)', fix, text)
    return relative_locations(text, str(ROOT), os.path.dirname(os.path.abspath(triton.__file__)))


def generate(corpus_dir: Path, exports: Dict[str, Export], resolve: Callable[[Export], Any],
             roots: List[Tuple[Path, str]], provenance: Dict[str, Any], only: List[str],
             verify: Optional[Callable[[Export, Any, Dict[str, Any]], None]] = None, check: bool = True) -> int:
    """Writes corpus_dir/ttir/NAME.ttir and corpus_dir/manifest.json for the exports (all, or
    `only`); returns the number that Triton could not print."""
    import triton
    from tri import Context, TriError
    from tri.triton import parse_export, ttir, AuthoringError, DEFAULT_ARCH
    out_dir = corpus_dir / "ttir"
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest = common.load_manifest(corpus_dir) if only else {"exports": {}}
    manifest.update(provenance)
    manifest["triton"] = triton.__version__
    manifest["arch"] = f"sm_{DEFAULT_ARCH}"
    entries = manifest.setdefault("exports", {})
    failed = 0
    chosen = [e for e in exports.values() if not only or e.name in only]
    unknown = set(only) - {e.name for e in chosen}
    if unknown:
        raise SystemExit(f"no export named {', '.join(sorted(unknown))}")
    common.LAZY = True
    try:
        with Context() as ctx:
            for e in chosen:
                fn = resolve(e)
                from tri.triton import _jit_function
                jit = _jit_function(fn)
                bench = e.case("bench")
                if verify is not None:
                    verify(e, fn, bench.args)
                signature, specialized, divisibility = launcher_specialization(jit, bench.args)
                constexprs = {**e.constexprs, **specialized}
                spec = parse_export(e.name, dict(kernel=jit, signature=signature, constexprs=constexprs,
                                                 divisibility=divisibility), f"{e.corpus} exports")
                entry = {"kernel": e.kernel, "source": e.source, "what": e.what, "constexprs": e.constexprs,
                         "specialized": specialized, "signature": signature, "divisibility": divisibility,
                         "num_warps": e.num_warps, "num_stages": e.num_stages}
                path = out_dir / f"{e.name}.ttir"
                try:
                    text = ttir(spec, relative_to=str(ROOT))
                except AuthoringError as x:
                    failed += 1
                    lines = [ln for ln in str(x).splitlines() if ln.strip() and ln.strip() != "^"]
                    entry["triton_error"] = lines[-1].strip() if lines else str(x)
                    path.unlink(missing_ok=True)
                    print(f"{e.key}: Triton cannot print TTIR: {entry['triton_error']}")
                    entries[e.name] = entry
                    continue
                text = _relative(text, roots)
                text = re.sub(r"^// TTIR of [^:\n]*:", f"// TTIR of {roots[0][1]}/{e.source}:", text, count=1)
                path.write_text(text)
                entries[e.name] = entry
                status = "imported"
                if check:
                    try:
                        with ctx.module(text, str(path.relative_to(ROOT))) as m:
                            kernels = [f.name for f in m.functions if f.kind.name == "KERNEL"]
                            status = f"imported: @{', @'.join(kernels)}"
                    except TriError as x:
                        status = f"Tri cannot import it: {x.message.splitlines()[0]}"
                print(f"{path.relative_to(ROOT)}: {e.kernel} {e.constexprs or ''} -> {status}")
    finally:
        common.LAZY = False
    manifest["exports"] = {k: entries[k] for k in sorted(entries)}
    common.manifest_path(corpus_dir).write_text(json.dumps(manifest, indent=1, sort_keys=False) + "\n")
    # Fixtures of exports that no longer exist.
    if not only:
        for stale in out_dir.glob("*.ttir"):
            if stale.stem not in exports:
                stale.unlink()
                print(f"removed {stale.relative_to(ROOT)} (no such export)")
    return failed
