"""The tuning space as a picture: tri_tune_plot, the library's one renderer (the picture `tri tune
--plot` and every binding draw, docs/tune.md "Plots"). Two or more values that vary among the
configs (constexprs, warps, stages) give a heatmap over the first two, each cell the fastest
config with those values; one gives a bar per config. The winner is outlined and named; configs
that failed or were not measured say so.

    kernel, result = module.tune("matmul", tri.Product({"BM": [64, 128], "BN": [64, 128]}), ...)
    tri.plot.save_tune_svg(result, "matmul.svg")
"""

import ctypes
import json
import os
from typing import Any, Mapping, Optional, Union

from . import _blob_bytes, _check
from ._capi import lib as _lib

__all__ = ["tune_svg", "save_tune_svg"]

Result = Union[Mapping[str, Any], str, bytes]


def tune_svg(result: Result, title: Optional[str] = None) -> str:
    """The SVG text of a tuning result: the dict Module.tune returns, or a result's JSON text (as
    tri_tune, a stored result file or one entry of a tune_export file holds it). `title` heads
    the picture (None: "@kernel on target"). Raises TriError (CORRUPT_BINARY) for anything that
    is not a tuning result."""
    if isinstance(result, bytes):
        text = result
    elif isinstance(result, str):
        text = result.encode()
    else:
        text = json.dumps(result).encode()
    out = ctypes.c_void_p()
    _check(_lib.tri_tune_plot(text, len(text), title.encode() if title is not None else None, ctypes.byref(out)))
    return _blob_bytes(out).decode("utf-8")


def save_tune_svg(result: Result, path: Union[str, os.PathLike], title: Optional[str] = None) -> None:
    """Writes tune_svg(result, title) to `path`."""
    svg = tune_svg(result, title)
    with open(path, "w", encoding="utf-8") as f:
        f.write(svg)
