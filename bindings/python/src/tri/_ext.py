"""Finding and feeding tri._launch, the compiled launch hot path (tri/_launch.c).

The extension is optional: a wheel built where a C compiler and Python's headers exist carries
it, and without it every launch takes the pure-Python path of tri/__init__.py (which the extension
falls back to for anything it does not handle). tri.launch_path() says which is active.

Environment:
- TRI_PYTHON_EXTENSION: "0" never loads the extension; "1" requires it (importing tri fails,
  saying why, when it cannot load); unset or "auto" uses it when it loads.
- TRI_PYTHON_EXTENSION_PATH: the extension file to load instead of the package's own
  tri/_launch*.so (the tests build one in the build tree and load it from there).

setup() hands the extension the library's entry points (from the libtri ctypes loaded) and the
tables its readers use, and a hook through which it learns torch's dtypes from what a torch
tensor's own __cuda_array_interface__ said, so that its direct torch reader answers exactly as
that interface would.
"""

import ctypes
import importlib.util
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

MODE_ENV = "TRI_PYTHON_EXTENSION"
PATH_ENV = "TRI_PYTHON_EXTENSION_PATH"


def load() -> Tuple[Optional[Any], str]:
    """(the extension module or None, why it is not used)."""
    mode = os.environ.get(MODE_ENV, "auto").strip().lower()
    if mode in ("0", "off", "no", "false"):
        return None, f"{MODE_ENV}={os.environ[MODE_ENV]}"
    try:
        path = os.environ.get(PATH_ENV)
        if path:
            spec = importlib.util.spec_from_file_location("tri._launch", path)
            if spec is None or spec.loader is None:
                raise ImportError(f"{PATH_ENV} names {path}, which is not a Python extension module")
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
        else:
            from . import _launch as mod  # type: ignore[attr-defined]
    except ImportError as e:
        if mode in ("1", "on", "yes", "true"):
            raise ImportError(f"tri: {MODE_ENV}={os.environ[MODE_ENV]} asks for the compiled launch path, and it "
                              f"cannot be loaded: {e}. Build it with `pip install bindings/python` (a C compiler and "
                              f"Python's headers are needed) or unset {MODE_ENV}") from e
        return None, f"not built ({e})"
    return mod, ""


def _address(fn: Any) -> int:
    return ctypes.cast(fn, ctypes.c_void_p).value or 0


def setup(mod: Any, lib: ctypes.CDLL, arg_size: int, check: Callable[[int], None],
          closed_error: Callable[[str], Exception], device_ptr: type, buffer: type, numpy_dtypes: Dict[Any, int]) -> bool:
    """Gives the extension what it reads with; False when it cannot be used (the caller goes on
    without it)."""
    import numpy as np

    if arg_size != 24:
        return False
    # Every NumPy type object NumPy hands out for the dtypes Tri takes (several spellings of one
    # type are distinct objects: int64 is both "l" and "q" on Linux).
    types: List[Tuple[Any, int, int]] = []
    for code in np.typecodes["All"]:
        try:
            dt = np.dtype(code)
        except TypeError:
            continue
        if dt in numpy_dtypes and all(dt is not t for t, _, _ in types):
            types.append((dt, int(numpy_dtypes[dt]), dt.itemsize))
    for dt, tri_dtype in numpy_dtypes.items():
        if all(dt is not t for t, _, _ in types):
            types.append((dt, int(tri_dtype), dt.itemsize))
    # The C reader's layout reads must agree with NumPy on arrays of every kind it will meet.
    base = np.arange(24, dtype=np.float32)
    probes = []
    for a in (base, base.reshape(4, 6), base[::2], base.reshape(4, 6)[:, 1:], np.zeros((0, 3), np.int64),
              np.arange(5, dtype=np.uint8), base.reshape(4, 6).T):
        probes.append((a, a.__array_interface__["data"][0], a.nbytes, bool(a.flags.c_contiguous)))
    typestrs = {dt.str: (tri, size) for dt, tri, size in types}
    mod.init(_address(lib.tri_launch), _address(lib.tri_launch_plan_launch), check, closed_error, np.ndarray, types,
             probes, device_ptr, buffer, typestrs, _learn(mod))
    return True


_torch_table: List[Tuple[Any, int, int]] = []


def _learn(mod: Any) -> Callable[[Any, int, int], bool]:
    def learn(value: Any, tri_dtype: int, itemsize: int) -> bool:
        """Called by the compiled reader after it read the __cuda_array_interface__ of an object
        whose type is named Tensor and took it: if it is torch's own Tensor (whose interface,
        version 2, names no stream), the reader learns the Tri dtype of its torch dtype and from
        then on reads such tensors without building the interface's dict. False: not torch's."""
        t = type(value)
        torch = sys.modules.get("torch")
        if torch is None or t is not getattr(torch, "Tensor", None) or t.__module__ != "torch":
            return False
        dt = value.dtype
        if all(dt is not d for d, _, _ in _torch_table):
            _torch_table.append((dt, tri_dtype, itemsize))
            mod.register_torch(t, list(_torch_table))
        return True
    return learn

