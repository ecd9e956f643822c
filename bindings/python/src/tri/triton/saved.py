"""A capture on disk, for a host program in any language and for replays without the program:

    DIR/manifest.json          every launch: its kernel file, launch configuration, grid and
                               arguments in the order tri_launch takes them (docs/import.md)
    DIR/kernels/NAME.tri       each kernel Triton compiled, imported by Tri (canonical text)
    DIR/kernels/NAME.ttir      the TTIR of a kernel Tri could not import (its error is in the
                               manifest; a replay tries again)
    DIR/data/L.S.in.npy        with data: the bytes of storage S of launch L before the launch
    DIR/data/L.S.out.npy       and after it (the expected outputs; `outputs_from` names who
                               computed them)

save() writes it, load() reads it back as Launch objects (whose Storage.before/after are the
.npy paths, read when a replay needs them). Nothing here needs Triton.
"""

import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import Context, TriError
from .launches import CONSTEXPR, DESCRIPTOR, SCALAR, SPECIALIZED, TENSOR, UNSUPPORTED, Arg, Launch, Storage, \
    descriptor_dtype, host_bytes, itemsize, slot_value, tri_dtype, tri_slots

FORMAT = "tri-triton-capture"
VERSION = 1
MANIFEST = "manifest.json"


def _json_number(v: Any) -> Any:
    """Non-finite floats as the strings "inf", "-inf", "nan" (JSON has no such numbers)."""
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, list):
        return [_json_number(x) for x in v]
    return v


def _from_json_number(v: Any, triton_type: str) -> Any:
    if isinstance(v, str) and triton_type.startswith(("fp", "bf")) and v in ("nan", "inf", "-inf"):
        return float(v)
    return v


def _stem(kernel: str, taken: set) -> str:
    base = re.sub(r"[^A-Za-z0-9_.-]", "_", kernel) or "kernel"
    stem, n = base, 1
    while stem in taken:
        stem, n = f"{base}.{n}", n + 1
    taken.add(stem)
    return stem


def _arg_entry(a: Arg, storages: Sequence[Storage]) -> Dict[str, Any]:
    if a.kind in (TENSOR, DESCRIPTOR):
        entry = {"name": a.name, "kind": a.kind, "dtype": tri_dtype(a.dtype), "triton_type": a.type,
                 "shape": list(a.shape), "strides": list(a.strides), "storage": a.storage,
                 "storage_offset": a.storage_offset, "byte_offset": a.byte_offset,
                 "extent_bytes": storages[a.storage].nbytes - a.byte_offset}
        if a.kind == DESCRIPTOR:
            entry.update(block_shape=list(a.block_shape), padding=a.padding)
        return entry
    if a.kind == SCALAR:
        return {"name": a.name, "kind": "scalar", "dtype": tri_dtype(a.type), "triton_type": a.type,
                "value": _json_number(a.value)}
    return {"name": a.name, "kind": "unsupported", "triton_type": a.type, "note": a.note}


def _arg_entries(launch: Launch, names: Optional[List[str]]) -> List[Dict[str, Any]]:
    """The manifest's `args`: one entry per parameter of Tri's kernel, in order; a descriptor's
    entry is followed by its shape (i32) and strides (i64) as scalars named as Tri's kernel
    names them (`names`, its runtime parameters; NAME.shape.D, NAME.stride.D where the kernel
    could not be imported), each with "descriptor": NAME."""
    slots = tri_slots(launch)
    if names is not None and len(names) != len(slots):
        names = None
    out = []
    for i, (a, part) in enumerate(slots):
        if part is None:
            out.append(_arg_entry(a, launch.storages))
            continue
        ty = "i32" if part[0] == "shape" else "i64"
        out.append({"name": names[i] if names else f"{a.name}.{part[0]}.{part[1]}", "kind": "scalar", "dtype": ty,
                    "triton_type": ty, "value": slot_value(a, part), "descriptor": a.name})
    return out


def _runtime_names(module: Any, kernel: str) -> Optional[List[str]]:
    kernels = [f for f in module.functions if f.kind.name == "KERNEL"]
    chosen = [f for f in kernels if f.name == kernel] or (kernels if len(kernels) == 1 else [])
    return [p.name for p in chosen[0].runtime_params] if chosen else None


def _header(launch: Launch) -> str:
    target = launch.target
    arch = f"{target.get('backend', 'cuda')} sm_{target.get('arch', '?')}"
    return (f"// {launch.kernel} ({launch.source}), num_warps={launch.num_warps}, num_stages={launch.num_stages}: "
            f"imported by python3 -m tri.triton.capture from the TTIR of Triton {launch.triton_version} ({arch})\n")


def save(launches: Sequence[Launch], folder: str, data: bool = False, relative_to: Optional[str] = None,
         note: str = "") -> Path:
    """Writes the launches to `folder` (made if needed; files of an earlier save are replaced)
    and returns the manifest's path. With `data`, the bytes each launch's storages held before
    and (where kept) after it. `note` says how the capture was made (the manifest's "note")."""
    from . import relative_locations
    out = Path(folder)
    (out / "kernels").mkdir(parents=True, exist_ok=True)
    if data:
        (out / "data").mkdir(exist_ok=True)
    triton = sys.modules.get("triton")
    triton_dir = os.path.dirname(os.path.abspath(triton.__file__)) if triton is not None else None
    root = relative_to if relative_to is not None else os.getcwd()
    files: Dict[str, Tuple[str, Optional[str], Optional[List[str]]]] = {}  # TTIR digest -> (file, import error,
    # the kernel's runtime parameters)
    taken: set = set()
    entries = []
    with Context(cache_dir="") as ctx:
        for i, launch in enumerate(launches):
            entry: Dict[str, Any] = {"kernel": launch.kernel, "source": launch.source, "count": launch.count}
            names = None
            if launch.ttir is not None:
                digest = launch.ir_digest()
                if digest not in files:
                    stem = _stem(launch.kernel, taken)
                    text = relative_locations(launch.ttir, root, triton_dir)
                    ttir_name = f"kernels/{stem}.ttir"
                    try:
                        with ctx.module(text, ttir_name) as module:
                            (out / f"kernels/{stem}.tri").write_text(_header(launch) + module.to_text())
                            files[digest] = (f"kernels/{stem}.tri", None, _runtime_names(module, launch.kernel))
                    except TriError as e:
                        (out / ttir_name).write_text(text)
                        files[digest] = (ttir_name, e.message, None)
                path, import_error, names = files[digest]
                entry["tri" if import_error is None else "ttir"] = path
                if import_error is not None:
                    entry["import_error"] = import_error
            entry.update({
                "grid": list(launch.grid), "num_warps": launch.num_warps, "num_stages": launch.num_stages,
                "num_ctas": launch.num_ctas, "constexprs": _json_number(launch.constexprs),
                "specialized": _json_number(launch.specialized), "divisibility": launch.divisibility,
                "signature": {a.name: a.type for a in launch.args},
                "args": _arg_entries(launch, names),
                "storages": [],
                "outputs_from": launch.outputs_from if data else None,
                "options": launch.options, "target": launch.target, "triton": launch.triton_version,
                "error": launch.error,
            })
            for s, storage in enumerate(launch.storages):
                st: Dict[str, Any] = {"nbytes": storage.nbytes, "device": storage.device}
                for when, value in (("input", storage.before), ("output", storage.after)):
                    if data and value is not None:
                        name = f"data/{i}.{s}.{'in' if when == 'input' else 'out'}.npy"
                        np.save(out / name, host_bytes(value))
                        st[when] = name
                entry["storages"].append(st)
            entries.append(entry)
    manifest = {"format": FORMAT, "version": VERSION, "made_by": "python3 -m tri.triton.capture", "note": note,
                "launches": entries}
    path = out / MANIFEST
    path.write_text(json.dumps(manifest, indent=1) + "\n")
    return path


class ManifestError(Exception):
    """A manifest that cannot be read, saying where."""


def _need(entry: Dict[str, Any], key: str, where: str) -> Any:
    if key not in entry:
        raise ManifestError(f"{where}: no '{key}'")
    return entry[key]


def load(folder: str) -> List[Launch]:
    """The launches of a saved capture (save's folder)."""
    root = Path(folder)
    path = root / MANIFEST
    try:
        manifest = json.loads(path.read_text())
    except OSError as e:
        raise ManifestError(f"{path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ManifestError(f"{path}:{e.lineno}:{e.colno}: not JSON: {e.msg}") from None
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise ManifestError(f"{path}: not a capture manifest of format {FORMAT} version {VERSION} "
                            f"(it says {manifest.get('format')!r} version {manifest.get('version')!r})")
    launches = []
    for i, e in enumerate(_need(manifest, "launches", str(path))):
        where = f"{path}: launch {i}"
        signature: Dict[str, str] = _need(e, "signature", where)
        constexprs, specialized = e.get("constexprs", {}), e.get("specialized", {})
        runtime = {a["name"]: a for a in _need(e, "args", where) if "descriptor" not in a}  # not a descriptor's
        # shape or strides (its own entry has them)
        storages = []
        for s in _need(e, "storages", where):
            storages.append(Storage(int(s["nbytes"]), s.get("device", "cpu"),
                                    root / s["input"] if "input" in s else None,
                                    root / s["output"] if "output" in s else None))
        args = []
        for name, ttype in signature.items():
            if ttype == "constexpr":
                kind = CONSTEXPR if name in constexprs else SPECIALIZED
                args.append(Arg(name, kind, ttype, value=constexprs.get(name, specialized.get(name))))
                continue
            a = runtime.get(name)
            if a is None:
                raise ManifestError(f"{where}: parameter '{name}' is in the signature and not in 'args'")
            if a["kind"] in ("tensor", "descriptor"):
                if a["kind"] == "descriptor":
                    dtype = descriptor_dtype(ttype)
                else:
                    dtype = ttype[1:][1:] if ttype.startswith("*k") else ttype[1:]
                byte_offset = int(a.get("byte_offset", a["storage_offset"] * itemsize(dtype)))
                if not 0 <= a["storage"] < len(storages):
                    raise ManifestError(f"{where}: argument '{name}' names storage {a['storage']}, and there are "
                                        f"{len(storages)}")
                args.append(Arg(name, TENSOR if a["kind"] == "tensor" else DESCRIPTOR, ttype, dtype=dtype,
                                shape=tuple(a["shape"]), strides=tuple(a["strides"]), byte_offset=byte_offset,
                                storage=int(a["storage"]), block_shape=tuple(a.get("block_shape", ())),
                                padding=a.get("padding", "zero")))
            elif a["kind"] == "scalar":
                args.append(Arg(name, SCALAR, ttype, value=_from_json_number(a["value"], ttype)))
            else:
                args.append(Arg(name, UNSUPPORTED, ttype, note=a.get("note", "")))
        launch = Launch(kernel=_need(e, "kernel", where), source=e.get("source", "?"),
                        grid=tuple(_need(e, "grid", where)), args=args, storages=storages,
                        num_warps=int(e.get("num_warps", 4)), num_stages=int(e.get("num_stages", 3)),
                        num_ctas=int(e.get("num_ctas", 1)), options=e.get("options", {}), target=e.get("target", {}),
                        divisibility=e.get("divisibility", []), triton_version=e.get("triton", ""),
                        count=int(e.get("count", 1)), outputs_from=e.get("outputs_from"), error=e.get("error"))
        if "tri" in e or "ttir" in e:
            launch.ir_path = root / e.get("tri", e.get("ttir"))
        elif launch.error is None:
            launch.error = "the manifest names no kernel file"
        launches.append(launch)
    return launches
