"""Loads FlagGems' kernels (pip package flag-gems) as FlagGems itself builds them, with or
without PyTorch: where torch cannot be imported (this repository's CPU machines), a stand-in
module answers every attribute FlagGems touches at import time, configured as an H100 (compute
capability 9.0, 132 SMs), and FlagGems is told its vendor (GEMS_VENDOR=nvidia, ARCH=sm_90)
instead of probing for a device. The package's __init__ (which registers every operator with
torch and imports optional fused libraries) is not run: the `flag_gems`, `flag_gems.ops` and
`flag_gems.fused` packages are made empty shells over their folders, and only the operator
modules named are imported, each with the runtime, utils and config loader it imports itself.

`kernel(source, name)` returns the @triton.jit function (inside FlagGems' libentry / heuristics /
libtuner wrappers) named `name` in module flag_gems/`source`; a name NAME_kernel_rank_R whose
module has a pointwise_dynamic function NAME is that function's generated kernel for task rank
R, written by FlagGems' own code generator (into FLAGGEMS_CACHE_DIR; GENERATED_DIR here)."""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
import tempfile
import types
from pathlib import Path
from typing import Any, Optional
from unittest import mock

VERSION = "5.0.2"  # the FlagGems release the fixtures were made from (tests/corpus/flaggems/manifest.json)
GENERATED_DIR = Path(tempfile.gettempdir()) / "tri-corpus-flaggems"
_loaded: Optional[Path] = None


def _configure_h100(torch_stub) -> None:
    torch_stub.__version__ = "2.9.0"
    torch_stub.cuda.get_device_capability.return_value = (9, 0)
    torch_stub.cuda.is_available.return_value = True
    torch_stub.cuda.device_count.return_value = 1
    torch_stub.cuda.current_device.return_value = 0
    props = torch_stub.cuda.get_device_properties.return_value
    props.major, props.minor, props.multi_processor_count = 9, 0, 132
    props.shared_memory_per_block_optin, props.shared_memory_per_block = 232448, 49152
    props.shared_memory_per_multiprocessor, props.total_memory = 233472, 80 << 30
    props.name = "NVIDIA H100 80GB HBM3"
    # torch.finfo / iinfo of the stand-in dtypes (module-level constants of some operators).
    import numpy as np

    class _Info:  # Python numbers, as torch's finfo/iinfo give (Triton's constexpr takes no NumPy scalars)
        def __init__(self, info, **kw):
            for k in ("bits", "min", "max", "eps", "tiny"):
                if hasattr(info, k):
                    setattr(self, k, (int if k == "bits" or isinstance(getattr(info, k), (int, np.integer))
                                      else float)(getattr(info, k)))
            self.__dict__.update(kw)

    bf16 = dict(bits=16, min=-3.3895313892515355e38, max=3.3895313892515355e38, eps=0.0078125,
                tiny=1.1754943508222875e-38)
    floats = {id(torch_stub.float32): _Info(np.finfo(np.float32)), id(torch_stub.float16): _Info(np.finfo(np.float16)),
              id(torch_stub.float64): _Info(np.finfo(np.float64)), id(torch_stub.bfloat16): _Info(None, **bf16)}
    ints = {id(getattr(torch_stub, n)): _Info(np.iinfo(getattr(np, n))) for n in ("int8", "int16", "int32", "int64",
                                                                                  "uint8")}
    torch_stub.finfo.side_effect = lambda dt=None: floats[id(dt if dt is not None else torch_stub.float32)]
    torch_stub.iinfo.side_effect = lambda dt: ints[id(dt)]


class _TorchStub(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`import torch` (and torch.anything) where PyTorch is not installed."""

    def find_spec(self, name, path, target=None):
        if name == "torch" or name.startswith("torch."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        if spec.name == "torch":
            m = mock.MagicMock(name="torch")
            _configure_h100(m)
        else:
            m = sys.modules["torch"]
            for part in spec.name.split(".")[1:]:
                m = getattr(m, part)
        m.__path__, m.__spec__, m.__name__ = [], spec, spec.name
        return m

    def exec_module(self, module):
        pass


def have_torch() -> bool:
    mod = sys.modules.get("torch")
    if mod is not None:
        return not isinstance(mod, mock.MagicMock)
    return importlib.util.find_spec("torch") is not None


def package_dir() -> Path:
    """flag_gems' folder, shells in place (idempotent)."""
    global _loaded
    if _loaded is not None:
        return _loaded
    spec = importlib.util.find_spec("flag_gems")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"FlagGems is not installed for {sys.executable}: pip install --break-system-packages "
                          f"--no-deps flag-gems=={VERSION} packaging pyyaml sqlalchemy")
    root = Path(spec.submodule_search_locations[0])
    os.environ.setdefault("GEMS_VENDOR", "nvidia")
    os.environ.setdefault("ARCH", "sm_90")
    os.environ.setdefault("FLAGGEMS_CACHE_DIR", str(GENERATED_DIR))
    if not have_torch():
        sys.meta_path.insert(0, _TorchStub())
    for name, sub in (("flag_gems", ""), ("flag_gems.ops", "ops"), ("flag_gems.fused", "fused")):
        if name not in sys.modules:
            m = types.ModuleType(name)
            m.__path__ = [str(root / sub)]
            m.__file__ = str(root / sub / "__init__.py")
            sys.modules[name] = m
    sys.modules["flag_gems"].vendor_name = "nvidia"  # what the package's __init__ sets; generated code reads it
    _loaded = root
    return root


def module(source: str):
    """flag_gems/SOURCE (ops/softmax.py) imported."""
    package_dir()
    return importlib.import_module("flag_gems." + source[:-3].replace("/", "."))


def generated_dir() -> Path:
    package_dir()
    return Path(os.environ["FLAGGEMS_CACHE_DIR"]) / "code_cache"


# Operators whose kernel FlagGems writes per tensor rank with a generator of its own: the
# generator, the wrapper's and the kernel's names, the file (as FlagGems names them).
_RANK_GENERATED = {"ops/gather.py": ("_gather_wrapper", "_gather_flaggems_jit_function", "gather_rank_{}.py"),
                   "ops/scatter.py": ("_scatter_wrapper", "_scatter_jit_function", "scatter_rank_{}.py")}


def _rank_generated(source: str, rank: int):
    from flag_gems.utils.code_utils import IndentedBuffer, write_atomic
    m = module(source)
    wrapper, kernel_name, file_name = _RANK_GENERATED[source]

    class _Ranked:  # what the generators read of their tensor arguments: gather the first's ndim,
        ndim = rank  # scatter the second's shape
        shape = (1,) * rank

    code = m.generate_code((_Ranked(), _Ranked()), wrapper, kernel_name, IndentedBuffer())
    path = generated_dir() / file_name.format(rank)
    write_atomic(path, code.getvalue())
    spec = importlib.util.spec_from_file_location(f"_tri_corpus_{path.stem}", path)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return getattr(gen, kernel_name)


def kernel(source: str, name: str) -> Any:
    """The kernel object FlagGems launches (see the module docstring). A source SOURCE#rankR
    names the kernel FlagGems generates for rank R tensors (gather, scatter)."""
    if "#rank" in source:
        base, rank = source.split("#rank")
        return _rank_generated(base, int(rank))
    m = module(source)
    obj = getattr(m, name, None)
    if obj is not None:
        return obj
    g = re.fullmatch(r"(\w+)_kernel_rank_(\d+)", name)
    pointwise = getattr(m, g.group(1), None) if g else None
    if pointwise is None or not hasattr(pointwise, "instantiate"):
        raise AttributeError(f"flag_gems/{source} has no kernel {name}")
    overload = pointwise.instantiate(int(g.group(2)))
    return overload.__globals__[name]
