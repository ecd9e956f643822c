"""Tri from Python: read block-level kernels as IR, compile them for the CPU, the reference
interpreter or NVIDIA GPUs ("cuda"), and launch them on NumPy arrays (host targets) or on device
arrays (PyTorch, CuPy: anything with __cuda_array_interface__ or DLPack) on a CUDA stream. A thin
layer over the C API (include/tri/tri.h) through ctypes, with Python's forms: exceptions that
carry the result code and message, context managers and finalizers for the handles, and launch
arguments checked against the kernel's reflected signature before the call.

    import numpy as np, tri
    with tri.Context() as ctx:
        module = tri.Module.from_file(ctx, "examples/vector_add.tri")
        kernel = module.compile("vector_add", constexprs={"BLOCK": 1024})
        x = np.arange(5000, dtype=np.float32); out = np.empty_like(x)
        kernel[(5000 + 1023) // 1024](x, x, out, 5000)

        # On a GPU: torch tensors (or CuPy arrays) and a stream.
        gpu = module.compile("vector_add", target="cuda", num_warps=4)
        xd = torch.arange(5000, dtype=torch.float32, device="cuda"); od = torch.empty_like(xd)
        gpu[(5000 + 1023) // 1024](xd, xd, od, 5000, stream=torch.cuda.current_stream())
"""

import ctypes
import dataclasses
import enum
import json
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _capi as C
from . import _device
from . import _ext
from ._capi import lib as _lib

__all__ = [
    "TriError", "ErrorCode", "LogLevel", "DType", "TypeKind", "ParamKind", "FunctionKind", "Param", "Function",
    "CompileOptions", "Context", "Module", "Kernel", "LaunchPlan", "Buffer", "DevicePtr", "Device", "DeviceAttr",
    "Cache", "CacheStat", "CacheStats", "CacheEntry", "Product", "TuneProgress", "Team", "TEAM_ID_BYTES", "version",
    "last_error_message", "launch_path", "runtime_only",
]

__version__ = "0.2.0"


class ErrorCode(enum.IntEnum):
    """The C API's TRI_ERROR_* codes."""
    INVALID_ARGUMENT = C.TRI_ERROR_INVALID_ARGUMENT
    PARSE = C.TRI_ERROR_PARSE
    VERIFY = C.TRI_ERROR_VERIFY
    CORRUPT_BINARY = C.TRI_ERROR_CORRUPT_BINARY
    UNSUPPORTED_VERSION = C.TRI_ERROR_UNSUPPORTED_VERSION
    NOT_FOUND = C.TRI_ERROR_NOT_FOUND
    LIMIT_EXCEEDED = C.TRI_ERROR_LIMIT_EXCEEDED
    OUT_OF_MEMORY = C.TRI_ERROR_OUT_OF_MEMORY
    SPECIALIZE = C.TRI_ERROR_SPECIALIZE
    LAUNCH_ARGS = C.TRI_ERROR_LAUNCH_ARGS
    UNSUPPORTED = C.TRI_ERROR_UNSUPPORTED
    COMPILE = C.TRI_ERROR_COMPILE
    RUNTIME = C.TRI_ERROR_RUNTIME
    IO = C.TRI_ERROR_IO
    INTERNAL = C.TRI_ERROR_INTERNAL
    CANCELLED = C.TRI_ERROR_CANCELLED
    UNTRUSTED = C.TRI_ERROR_UNTRUSTED


class TriError(Exception):
    """A failed Tri call: `code` (an ErrorCode, or the int of a code newer than this package),
    `name` ("TRI_ERROR_PARSE") and `message` (which names the place)."""

    def __init__(self, code: int, message: str):
        try:
            self.code: Union[ErrorCode, int] = ErrorCode(code)
        except ValueError:
            self.code = code
        self.name: str = _lib.tri_result_name(code).decode()
        self.message = message
        super().__init__(f"{self.name}: {message}")


C.make_error = TriError


def runtime_only() -> bool:
    """Whether the loaded library is libtri_rt (TRI_LIBRARY names it): packages load and launch,
    and the compiler's calls (Context.module, Module.compile, tuning, the disk cache) raise
    TriError UNSUPPORTED (docs/aot.md)."""
    return bool(getattr(_lib, "tri_runtime_only", False))


def last_error_message() -> str:
    """The calling thread's last error message ("" when nothing failed on this thread)."""
    size = _lib.tri_last_error_message(None, 0)
    buf = ctypes.create_string_buffer(size)
    _lib.tri_last_error_message(buf, size)
    return buf.value.decode("utf-8", "replace")


def _check(result: int) -> None:
    if result != C.TRI_OK:
        raise TriError(result, last_error_message())


def version() -> Tuple[int, int, int]:
    """The running library's version as (major, minor, patch)."""
    v = _lib.tri_version()
    return v // 10000, v // 100 % 100, v % 100


class LogLevel(enum.IntEnum):
    ERROR = C.TRI_LOG_ERROR
    WARNING = C.TRI_LOG_WARNING
    INFO = C.TRI_LOG_INFO
    DEBUG = C.TRI_LOG_DEBUG


class DType(enum.IntEnum):
    I1 = C.TRI_DTYPE_I1
    I8 = C.TRI_DTYPE_I8
    I16 = C.TRI_DTYPE_I16
    I32 = C.TRI_DTYPE_I32
    I64 = C.TRI_DTYPE_I64
    F16 = C.TRI_DTYPE_F16
    BF16 = C.TRI_DTYPE_BF16
    F32 = C.TRI_DTYPE_F32
    F64 = C.TRI_DTYPE_F64
    F8E4M3 = C.TRI_DTYPE_F8E4M3
    F8E5M2 = C.TRI_DTYPE_F8E5M2

    @property
    def ir_name(self) -> str:
        return self.name.lower()

    @property
    def is_float(self) -> bool:
        return self not in (DType.I1, DType.I8, DType.I16, DType.I32, DType.I64)


class TypeKind(enum.IntEnum):
    SCALAR = C.TRI_TYPE_SCALAR
    POINTER = C.TRI_TYPE_POINTER
    BLOCK = C.TRI_TYPE_BLOCK


class ParamKind(enum.IntEnum):
    VALUE = C.TRI_PARAM_VALUE
    CONSTEXPR = C.TRI_PARAM_CONSTEXPR


class FunctionKind(enum.IntEnum):
    KERNEL = C.TRI_FUNCTION_KERNEL
    DEVICE = C.TRI_FUNCTION_DEVICE


class CacheStat(enum.IntEnum):
    """What Cache.stat reads (TRI_CACHE_STAT_*): counters of this context's use, then usage of
    the directory now."""
    HITS = C.TRI_CACHE_STAT_HITS
    MISSES = C.TRI_CACHE_STAT_MISSES
    STORES = C.TRI_CACHE_STAT_STORES
    BYTES_READ = C.TRI_CACHE_STAT_BYTES_READ
    BYTES_WRITTEN = C.TRI_CACHE_STAT_BYTES_WRITTEN
    EVICTIONS = C.TRI_CACHE_STAT_EVICTIONS
    CORRUPT = C.TRI_CACHE_STAT_CORRUPT
    WRITE_FAILURES = C.TRI_CACHE_STAT_WRITE_FAILURES
    LOCK_WAITS = C.TRI_CACHE_STAT_LOCK_WAITS
    ENTRIES = C.TRI_CACHE_STAT_ENTRIES
    BYTES = C.TRI_CACHE_STAT_BYTES
    MAX_BYTES = C.TRI_CACHE_STAT_MAX_BYTES
    ENABLED = C.TRI_CACHE_STAT_ENABLED


class DeviceAttr(enum.IntEnum):
    """What Context.device_attribute reads (TRI_DEVICE_ATTR_*); sizes in bytes."""
    COMPUTE_CAPABILITY_MAJOR = C.TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MAJOR
    COMPUTE_CAPABILITY_MINOR = C.TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MINOR
    SM_COUNT = C.TRI_DEVICE_ATTR_SM_COUNT
    SHARED_PER_BLOCK = C.TRI_DEVICE_ATTR_SHARED_PER_BLOCK
    SHARED_PER_BLOCK_OPTIN = C.TRI_DEVICE_ATTR_SHARED_PER_BLOCK_OPTIN
    SHARED_PER_SM = C.TRI_DEVICE_ATTR_SHARED_PER_SM
    L2_SIZE = C.TRI_DEVICE_ATTR_L2_SIZE
    MAX_THREADS_PER_BLOCK = C.TRI_DEVICE_ATTR_MAX_THREADS_PER_BLOCK
    WARP_SIZE = C.TRI_DEVICE_ATTR_WARP_SIZE
    DRIVER_VERSION = C.TRI_DEVICE_ATTR_DRIVER_VERSION
    MAX_PTX_VERSION = C.TRI_DEVICE_ATTR_MAX_PTX_VERSION


# NumPy element types that match a Tri dtype bit for bit (Tri's integers are signless).
_NUMPY_DTYPES: Dict[np.dtype, DType] = {
    np.dtype(np.int8): DType.I8, np.dtype(np.uint8): DType.I8,
    np.dtype(np.int16): DType.I16, np.dtype(np.uint16): DType.I16,
    np.dtype(np.int32): DType.I32, np.dtype(np.uint32): DType.I32,
    np.dtype(np.int64): DType.I64, np.dtype(np.uint64): DType.I64,
    np.dtype(np.float16): DType.F16, np.dtype(np.float32): DType.F32, np.dtype(np.float64): DType.F64,
    # i1 is a byte 0 or 1 in memory (docs/ir.md), which is how NumPy, torch and CuPy store bool.
    np.dtype(np.bool_): DType.I1,
}
# Element types DLPack names that NumPy does not (dlpack.h's DLDataTypeCode and bits): bf16, bool
# (one byte), and the float8 formats Tri has (torch.float8_e4m3fn and float8_e5m2).
_DL_DTYPES: Dict[Tuple[int, int], DType] = {
    (4, 16): DType.BF16, (6, 8): DType.I1, (10, 8): DType.F8E4M3, (12, 8): DType.F8E5M2,
}
# The targets whose kernels run on host memory, and those that run on CUDA device memory on a
# stream. A kernel of any other target (one newer than this package) is not launched.
_HOST_TARGETS = ("cpu", "interp")
_CUDA_TARGETS = ("cuda",)
_INT_BITS = {DType.I1: 1, DType.I8: 8, DType.I16: 16, DType.I32: 32, DType.I64: 64}


@dataclass(frozen=True)
class Buffer:
    """Host memory NumPy does not describe (bf16, f8, memory from another library): its address,
    its size in bytes (0: unknown) and its element type. The caller keeps it alive."""
    address: int
    nbytes: int
    dtype: DType


@dataclass(frozen=True)
class DevicePtr:
    """CUDA device memory (a CUdeviceptr) no array object describes, for kernels of the "cuda"
    target: its address, its size in bytes (0: unknown) and its element type. The caller keeps
    it allocated until the work queued on it is done."""
    address: int
    nbytes: int
    dtype: DType


@dataclass(frozen=True)
class Device:
    """A CUDA device as the driver reports it (Context.device)."""
    index: int
    name: str
    compute_capability: Tuple[int, int]
    sm_count: int
    shared_per_block: int
    shared_per_block_optin: int
    shared_per_sm: int
    l2_size: int
    max_threads_per_block: int
    warp_size: int
    driver_version: int  # 1000 * major + 10 * minor (12040 = 12.4)
    max_ptx_version: int  # 10 * major + minor (84 = PTX ISA 8.4)

    @property
    def arch(self) -> str:
        """The architecture's name for CompileOptions.arch ("sm_90")."""
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"


@dataclass(frozen=True)
class CacheEntry:
    """One entry of the disk cache (Cache.list)."""
    key: str
    nbytes: int
    last_use: int  # seconds since 1970
    status: str  # "ok", "ok (another build)", "bad: <why>", "removed: <why>"
    kind: str  # the payload: "obj", "ptx", "ptx+cubin"
    target: str
    kernel: str
    made_for: str
    specialized: str = ""  # constexprs, warps and stages (GPU), a launch variant's facts

    @property
    def ok(self) -> bool:
        return self.status.startswith("ok")


@dataclass(frozen=True)
class CacheStats:
    """Every CacheStat at once (Cache.stats)."""
    hits: int
    misses: int
    stores: int
    bytes_read: int
    bytes_written: int
    evictions: int
    corrupt: int
    write_failures: int
    lock_waits: int
    entries: int
    bytes: int
    max_bytes: int
    enabled: bool


@dataclass(frozen=True)
class Param:
    name: str
    kind: ParamKind
    type_kind: TypeKind
    dtype: DType
    type_text: str
    align: int = 0
    divisible: int = 0
    noalias: bool = False
    default: Optional[str] = None


@dataclass(frozen=True)
class Function:
    index: int
    name: str
    kind: FunctionKind
    params: Tuple[Param, ...]

    @property
    def runtime_params(self) -> Tuple[Param, ...]:
        return tuple(p for p in self.params if p.kind == ParamKind.VALUE)


@dataclass
class CompileOptions:
    """What tri_kernel_compile is told: the target ("cpu", "interp" or "cuda"), checked mode
    (interp only), constexpr values by name, alignment/divisibility promises by runtime
    parameter index, and for GPU targets the warps per program and the architecture ("sm_90";
    None: the current device's, which needs a driver). Launch-time specialization (on by default
    for "cuda", off for "cpu") is switched with `launch_specialization`, its variant budget set
    with `max_variants` (at most 16), and single parameters taken out of it with
    `arg_specialization={index: False}`. None leaves the library's default. A plain value: each
    compile makes its own C options object, so one CompileOptions may be shared between threads."""
    target: str = "cpu"
    checked: bool = False
    constexprs: Mapping[str, Union[int, float, bool]] = field(default_factory=dict)
    arg_align: Mapping[int, int] = field(default_factory=dict)
    arg_divisible: Mapping[int, int] = field(default_factory=dict)
    num_warps: Optional[int] = None
    num_stages: Optional[int] = None
    arch: Optional[str] = None
    launch_specialization: Optional[bool] = None
    max_variants: Optional[int] = None
    arg_specialization: Mapping[int, bool] = field(default_factory=dict)


def _closed_error(what: str) -> TriError:
    return TriError(C.TRI_ERROR_INVALID_ARGUMENT, f"{what} is closed (close() or its with-block ended); make a new one")


class _PyHandle:
    """A C handle that may be closed while other threads use it: close() marks it closed at once
    and the handle is destroyed when the last call using it returns. (tri/_launch.c's Handle does
    the same where the compiled launch path is loaded.)"""

    __slots__ = ("_ptr", "_destroy", "_what", "_lock", "_busy", "_closed")

    def __init__(self, ptr: int, destroy: Callable[[int], None], what: str):
        self._ptr, self._destroy, self._what = ptr, destroy, what
        self._lock = threading.Lock()
        self._busy = 0
        self._closed = False

    def acquire(self) -> int:
        with self._lock:
            if self._closed:
                raise _closed_error(self._what)
            self._busy += 1
            return self._ptr

    def release(self) -> None:
        with self._lock:
            self._busy -= 1
            ptr = self._take()
        if ptr:
            self._destroy(ptr)

    def _take(self) -> Optional[int]:
        if self._closed and self._busy == 0 and self._ptr:
            ptr, self._ptr = self._ptr, None
            return ptr
        return None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            ptr = self._take()
        if ptr:
            self._destroy(ptr)

    @property
    def closed(self) -> bool:
        return self._closed


# The compiled launch path (tri/_launch.c), when it loads: its Handle replaces _PyHandle, its Lock
# guards launch plans, and Kernel and LaunchPlan take their hot methods from its base classes.
_fast, _fast_missing = _ext.load()
if _fast is not None and not _ext.setup(_fast, _lib, ctypes.sizeof(C.Arg), _check, _closed_error, DevicePtr, Buffer,
                                        _NUMPY_DTYPES):
    _fast, _fast_missing = None, "the library's tri_arg is not the 24 bytes the extension was written for"
_Handle = _fast.Handle if _fast is not None else _PyHandle
_Lock = _fast.Lock if _fast is not None else threading.Lock
_KernelBase = _fast.KernelBase if _fast is not None else type("_KernelBase", (), {"__slots__": ()})
_PlanBase = _fast.PlanBase if _fast is not None else type("_PlanBase", (), {"__slots__": ()})


def launch_path() -> str:
    """Which launch path is active: "extension" (the compiled hot path, tri/_launch.c: a launch
    costs about a microsecond of Python on top of the library's) or "python" (the pure-Python
    path: the extension was not built, or TRI_PYTHON_EXTENSION=0 turned it off). Both check the
    same things and raise the same errors."""
    return "extension" if _fast is not None else "python"


class _Owner:
    """Context-manager and finalizer behaviour shared by Context, Module and Kernel."""
    _h: _Handle

    def close(self) -> None:
        """Releases the handle now; later use raises TriError. Idempotent."""
        h = getattr(self, "_h", None)
        if h is not None:
            h.close()

    @property
    def closed(self) -> bool:
        return self._h.closed

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may already be gone
            pass


def _out_handle() -> ctypes.c_void_p:
    return ctypes.c_void_p()


class Context(_Owner):
    """The root of modules and kernels. `log` receives (LogLevel, message) up to `log_level`,
    from any thread that uses the context. `cache_dir` is the disk cache's folder ("" turns the
    cache off; None: $TRI_CACHE_DIR, else $XDG_CACHE_HOME/tri, else ~/.cache/tri) and
    `cache_max_bytes` its size bound (0: none; default 1 GiB). `interp_memory_limit` is the
    "interp" target's working-memory budget per launch in bytes (0: none), and
    `kernel_cache_capacity` how many compiled specializations each module keeps in memory
    (default 64). `ctx.cache` looks after the disk cache; `ctx.devices()` lists CUDA devices."""

    def __init__(self, log: Optional[Callable[[LogLevel, str], None]] = None, log_level: LogLevel = LogLevel.WARNING,
                 cache_dir: Optional[Union[str, os.PathLike]] = None, cache_max_bytes: Optional[int] = None,
                 interp_memory_limit: Optional[int] = None, kernel_cache_capacity: Optional[int] = None):
        opts = _out_handle()
        _check(_lib.tri_context_options_create(ctypes.byref(opts)))
        try:
            # Kept for as long as this object lives; modules and kernels hold this object, so the
            # callback outlives every C object that could call it.
            self._log_fn = None
            if log is not None:
                def trampoline(_user, level, message, _log=log):
                    try:
                        _log(LogLevel(level) if level in LogLevel._value2member_map_ else level,
                             message.decode("utf-8", "replace"))
                    except Exception:  # an exception must not unwind into C
                        pass
                self._log_fn = C.LOG_FN(trampoline)
                _check(_lib.tri_context_options_set_log(opts, self._log_fn, None, int(log_level)))
            if cache_dir is not None:
                _check(_lib.tri_context_options_set_cache_dir(opts, os.fsencode(cache_dir)))
            if cache_max_bytes is not None:
                _check(_lib.tri_context_options_set_cache_max_bytes(opts, _u64("cache_max_bytes", cache_max_bytes)))
            if interp_memory_limit is not None:
                _check(_lib.tri_context_options_set_interp_memory_limit(
                    opts, _u64("interp_memory_limit", interp_memory_limit)))
            if kernel_cache_capacity is not None:
                n = _u64("kernel_cache_capacity", kernel_cache_capacity)
                if n >= 1 << 32:
                    raise TriError(C.TRI_ERROR_INVALID_ARGUMENT, f"kernel_cache_capacity {n} does not fit in 32 bits")
                _check(_lib.tri_context_options_set_kernel_cache_capacity(opts, n))
            ctx = _out_handle()
            _check(_lib.tri_context_create(opts, C.TRI_VERSION_NUMBER, ctypes.byref(ctx)))
        finally:
            _lib.tri_context_options_destroy(opts)
        self._h = _Handle(ctx.value, _lib.tri_context_destroy, "context")
        self.cache = Cache(self)

    def module(self, source: Union[bytes, bytearray, memoryview, str], name: Optional[str] = None) -> "Module":
        """A module from IR text (str or bytes) or binary IR (bytes)."""
        return Module(self, source, name)

    def load(self, path: Union[str, os.PathLike]) -> "Module":
        """A module from a file of IR text or binary IR."""
        return Module.from_file(self, path)

    def load_package(self, source: Union[str, os.PathLike, bytes, bytearray, memoryview],
                     name: Optional[str] = None) -> "Module":
        """A module of a package made by `tri aot` (docs/aot.md): a path, or the file's bytes.
        Nothing is compiled: `module.kernel(name, ...)` gives the package's kernels, in libtri
        and in libtri_rt alike."""
        return Module.from_package(self, source, name)

    def _call(self, fn, *args) -> None:
        c = self._h.acquire()
        try:
            _check(fn(c, *args))
        finally:
            self._h.release()

    def tune_export(self, path: Union[str, os.PathLike]) -> int:
        """Writes every tuning result this context knows to a JSON file (tri_tune_export);
        returns how many."""
        n = ctypes.c_uint32()
        self._call(_lib.tri_tune_export, os.fsencode(path), ctypes.byref(n))
        return n.value

    def tune_import(self, path: Union[str, os.PathLike]) -> int:
        """Makes the results of a tune_export file this context's answers (tri_tune_import);
        returns how many were imported."""
        n = ctypes.c_uint32()
        self._call(_lib.tri_tune_import, os.fsencode(path), ctypes.byref(n))
        return n.value

    def tune_stat(self) -> Dict[str, int]:
        """This context's tuning counters: "trials" (configs benchmarked), "stored" (calls
        answered by a stored or imported result), "defaults" (frozen calls that found none),
        "pruned" (configs pruned before compiling), "other_device" (calls that met an imported
        result made on another device)."""
        out = {}
        for label, which in (("trials", C.TRI_TUNE_STAT_TRIALS), ("stored", C.TRI_TUNE_STAT_STORED),
                             ("defaults", C.TRI_TUNE_STAT_DEFAULTS), ("pruned", C.TRI_TUNE_STAT_PRUNED),
                             ("other_device", C.TRI_TUNE_STAT_OTHER_DEVICE)):
            v = ctypes.c_uint64()
            self._call(_lib.tri_tune_stat, which, ctypes.byref(v))
            out[label] = v.value
        return out

    def cancel(self) -> None:
        """Stops every launch of this context on a host target ("cpu", "interp") running now:
        each raises TriError with ErrorCode.CANCELLED. Launches made afterwards run normally;
        GPU launches are not stopped. Callable from any thread and from the log sink."""
        self._call(_lib.tri_context_cancel)

    # ---- CUDA devices: TriError UNSUPPORTED (saying why) when no driver can be loaded.

    def device_count(self) -> int:
        """How many CUDA devices the driver sees (0 with a driver and no GPU). TriError
        UNSUPPORTED, saying why, when no CUDA driver can be loaded."""
        n = ctypes.c_uint32()
        self._call(_lib.tri_device_count, ctypes.byref(n))
        return n.value

    def device_attribute(self, index: int, attr: DeviceAttr) -> int:
        v = ctypes.c_int64()
        self._call(_lib.tri_device_attribute, index, int(attr), ctypes.byref(v))
        return v.value

    def device_name(self, index: int) -> str:
        size = ctypes.c_size_t()
        self._call(_lib.tri_device_name, index, None, 0, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        self._call(_lib.tri_device_name, index, buf, size.value, ctypes.byref(size))
        return buf.value.decode("utf-8", "replace")

    def device(self, index: int) -> Device:
        """Device `index` (0-based, as the driver numbers them) with its attributes."""
        a = {attr: self.device_attribute(index, attr) for attr in DeviceAttr}
        return Device(index, self.device_name(index),
                      (a[DeviceAttr.COMPUTE_CAPABILITY_MAJOR], a[DeviceAttr.COMPUTE_CAPABILITY_MINOR]),
                      a[DeviceAttr.SM_COUNT], a[DeviceAttr.SHARED_PER_BLOCK], a[DeviceAttr.SHARED_PER_BLOCK_OPTIN],
                      a[DeviceAttr.SHARED_PER_SM], a[DeviceAttr.L2_SIZE], a[DeviceAttr.MAX_THREADS_PER_BLOCK],
                      a[DeviceAttr.WARP_SIZE], a[DeviceAttr.DRIVER_VERSION], a[DeviceAttr.MAX_PTX_VERSION])

    def devices(self) -> List[Device]:
        """Every CUDA device ([] with a driver and no GPU; TriError UNSUPPORTED without a driver)."""
        return [self.device(i) for i in range(self.device_count())]


def _u64(what: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= int(value) < 1 << 64:
        raise TriError(C.TRI_ERROR_INVALID_ARGUMENT, f"{what} must be an int in 0..2^64-1, not {value!r}")
    return int(value)


class Cache:
    """The context's disk cache of compiled kernels (docs/cache.md): `ctx.cache`."""

    #: prune's default: down to the context's size bound (UINT64_MAX in the C API).
    BOUND = (1 << 64) - 1

    def __init__(self, context: Context):
        self._ctx = context

    @property
    def dir(self) -> str:
        """The directory in use, or "" when the disk cache is off."""
        out = ctypes.c_char_p()
        self._ctx._call(_lib.tri_cache_dir, ctypes.byref(out))
        return os.fsdecode(out.value or b"")

    @property
    def enabled(self) -> bool:
        return self.stat(CacheStat.ENABLED) != 0

    def stat(self, stat: CacheStat) -> int:
        v = ctypes.c_uint64()
        self._ctx._call(_lib.tri_cache_stat, int(stat), ctypes.byref(v))
        return v.value

    def stats(self) -> CacheStats:
        v = {s: self.stat(s) for s in CacheStat}
        return CacheStats(*(v[s] for s in list(CacheStat)[:-1]), enabled=bool(v[CacheStat.ENABLED]))

    def list(self, verify: bool = False) -> List[CacheEntry]:
        """The entries, sorted by key, each read and checked in full; with verify, bad ones are
        removed (their status reads "removed: ..."). TriError UNSUPPORTED when the cache is off."""
        out = _out_handle()
        self._ctx._call(_lib.tri_cache_list, 1 if verify else 0, ctypes.byref(out))
        entries = []
        for line in _blob_bytes(out).decode("utf-8", "replace").splitlines():
            f = line.split("\t")
            if len(f) != 9:
                raise TriError(C.TRI_ERROR_INTERNAL, f"tri_cache_list gave a line of {len(f)} fields: {line!r}")
            entries.append(CacheEntry(f[0], int(f[1]), int(f[2]), f[3], f[4], f[5], f[6], f[7], f[8]))
        return entries

    def prune(self, max_bytes: Optional[int] = None) -> int:
        """Removes least recently used entries until the rest take at most max_bytes (None: the
        context's bound; 0 empties the cache), stale temporary files and abandoned locks.
        Returns how many entries it removed."""
        removed = ctypes.c_uint64()
        limit = self.BOUND if max_bytes is None else _u64("max_bytes", max_bytes)
        self._ctx._call(_lib.tri_cache_prune, limit, ctypes.byref(removed))
        return removed.value

    def export_bundle(self, path: Union[str, os.PathLike]) -> int:
        """Writes every valid entry to a bundle file (replacing it) so an application can ship a
        warm cache; returns how many entries it wrote."""
        n = ctypes.c_uint32()
        self._ctx._call(_lib.tri_cache_export, os.fsencode(path), ctypes.byref(n))
        return n.value

    def import_bundle(self, path: Union[str, os.PathLike]) -> int:
        """Adds a bundle's entries to the cache, each validated; returns how many were added
        (entries of another build of Tri are skipped and logged)."""
        n = ctypes.c_uint32()
        self._ctx._call(_lib.tri_cache_import, os.fsencode(path), ctypes.byref(n))
        return n.value


def _blob_bytes(blob: ctypes.c_void_p) -> bytes:
    try:
        size = _lib.tri_blob_size(blob)
        return ctypes.string_at(_lib.tri_blob_data(blob), size) if size else b""
    finally:
        _lib.tri_blob_destroy(blob)


def _str(p: Optional[bytes]) -> str:
    return p.decode("utf-8", "replace") if p is not None else ""


class Module(_Owner):
    """Verified IR: kernels and device functions, with reflection of their signatures."""

    def __init__(self, context: Context, source: Union[bytes, bytearray, memoryview, str], name: Optional[str] = None):
        data = source.encode() if isinstance(source, str) else bytes(source)
        if not data:
            raise TriError(C.TRI_ERROR_INVALID_ARGUMENT, f"{name or '<input>'}: the IR is empty")
        self.context = context
        out = _out_handle()
        ctx = context._h.acquire()
        try:
            _check(_lib.tri_module_create(ctx, data, len(data), name.encode() if name else None, ctypes.byref(out)))
        finally:
            context._h.release()
        self._h = _Handle(out.value, _lib.tri_module_destroy, "module")

    @classmethod
    def from_file(cls, context: Context, path: Union[str, os.PathLike]) -> "Module":
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise TriError(C.TRI_ERROR_IO, f"cannot read {os.fsdecode(path)}: {e.strerror}") from e
        return cls(context, data, os.fsdecode(path))

    @classmethod
    def from_package(cls, context: Context, source: Union[str, os.PathLike, bytes, bytearray, memoryview],
                     name: Optional[str] = None) -> "Module":
        """The module of a package (tri_module_load_package): a path, or the file's bytes."""
        if isinstance(source, (str, os.PathLike)):
            try:
                with open(source, "rb") as f:
                    data = f.read()
            except OSError as e:
                raise TriError(C.TRI_ERROR_IO, f"cannot read {os.fsdecode(source)}: {e.strerror}") from e
            name = name or os.fsdecode(source)
        else:
            data = bytes(source)
        self = cls.__new__(cls)
        self.context = context
        out = _out_handle()
        ctx = context._h.acquire()
        try:
            _check(_lib.tri_module_load_package(ctx, data, len(data), name.encode() if name else None,
                                                ctypes.byref(out)))
        finally:
            context._h.release()
        self._h = _Handle(out.value, _lib.tri_module_destroy, "module")
        return self

    def package_info(self) -> Dict[str, Any]:
        """What the package of this module holds (tri_module_package_info), as a dict: its
        kernels, their specializations, variants and code per machine."""
        return json.loads(self._blob(_lib.tri_module_package_info).decode())

    def kernel(self, name: str, options: Optional[CompileOptions] = None, **kwargs: Any) -> "Kernel":
        """The kernel `name` that this module's package holds for the options (as compile()
        takes them), with its code for this machine; compiles nothing (TriError NOT_FOUND says
        what the package holds when nothing matches)."""
        if options is not None and kwargs:
            raise TypeError("kernel() takes a CompileOptions or keyword options, not both")
        return Kernel(self, name, options or CompileOptions(**kwargs), from_package=True)

    def _blob(self, fn) -> bytes:
        out = _out_handle()
        m = self._h.acquire()
        try:
            _check(fn(m, ctypes.byref(out)))
        finally:
            self._h.release()
        return _blob_bytes(out)

    def to_text(self) -> str:
        """The module as canonical IR text (no comments: a function of the module alone)."""
        return self._blob(_lib.tri_module_to_text).decode()

    def to_text_with_comments(self) -> str:
        """What `tri fmt` writes: the canonical text with the `//` comments of the text the
        module was read from, each where it was (the same as to_text for binary IR)."""
        return self._blob(_lib.tri_module_to_text_with_comments).decode()

    def to_binary(self) -> bytes:
        """The module as binary IR (docs/format.md)."""
        return self._blob(_lib.tri_module_to_binary)

    @property
    def functions(self) -> List[Function]:
        m = self._h.acquire()
        try:
            count = ctypes.c_uint32()
            _check(_lib.tri_module_function_count(m, ctypes.byref(count)))
            return [self._function(m, i) for i in range(count.value)]
        finally:
            self._h.release()

    def function(self, name: str) -> Function:
        """The function named `name` (no '@'); TriError NOT_FOUND when there is none."""
        cache = self.__dict__.setdefault("_function_cache", {})  # a module never changes
        if name in cache:
            return cache[name]
        m = self._h.acquire()
        try:
            index = ctypes.c_uint32()
            _check(_lib.tri_module_find_function(m, name.encode(), ctypes.byref(index)))
            f = cache[name] = self._function(m, index.value)
            return f
        finally:
            self._h.release()

    @staticmethod
    def _function(m: int, index: int) -> Function:
        name, kind, count = ctypes.c_char_p(), ctypes.c_int32(), ctypes.c_uint32()
        _check(_lib.tri_module_function_name(m, index, ctypes.byref(name)))
        _check(_lib.tri_module_function_kind(m, index, ctypes.byref(kind)))
        _check(_lib.tri_module_param_count(m, index, ctypes.byref(count)))
        params = []
        for p in range(count.value):
            pname, pkind = ctypes.c_char_p(), ctypes.c_int32()
            tkind, dtype, text = ctypes.c_int32(), ctypes.c_int32(), ctypes.c_char_p()
            align, divisible, noalias = ctypes.c_uint32(), ctypes.c_uint32(), ctypes.c_int32()
            default = ctypes.c_char_p()
            _check(_lib.tri_module_param_name(m, index, p, ctypes.byref(pname)))
            _check(_lib.tri_module_param_kind(m, index, p, ctypes.byref(pkind)))
            _check(_lib.tri_module_param_type(m, index, p, ctypes.byref(tkind), ctypes.byref(dtype), ctypes.byref(text)))
            _check(_lib.tri_module_param_facts(m, index, p, ctypes.byref(align), ctypes.byref(divisible),
                                               ctypes.byref(noalias)))
            if pkind.value == C.TRI_PARAM_CONSTEXPR:
                _check(_lib.tri_module_param_default(m, index, p, ctypes.byref(default)))
            params.append(Param(_str(pname.value), ParamKind(pkind.value), TypeKind(tkind.value), DType(dtype.value),
                                _str(text.value), align.value, divisible.value, bool(noalias.value),
                                None if default.value is None else _str(default.value)))
        return Function(index, _str(name.value), FunctionKind(kind.value), tuple(params))

    def compile(self, name: str, options: Optional[CompileOptions] = None, **kwargs: Any) -> "Kernel":
        """Compiles kernel `name`. Options come as a CompileOptions or as its fields by keyword
        (target="interp", checked=True, constexprs={"BLOCK": 256}, num_warps=8)."""
        if options is not None and kwargs:
            raise TypeError("compile() takes a CompileOptions or keyword options, not both")
        return Kernel(self, name, options or CompileOptions(**kwargs))

    def tune(self, name: str, configs: Union[Sequence[Mapping[str, int]], "Product"], *args: Any,
             grid: Union["GridLike", Callable[[Mapping[str, int]], "GridLike"]],
             options: Optional[CompileOptions] = None, key: Sequence[str] = (), bucket: bool = False,
             repetitions: int = 10, frozen: bool = False, retune: bool = False, use_other_device: bool = False,
             stream: Any = None,
             progress: Union[bool, Callable[["TuneProgress"], None], None] = None) -> Tuple["Kernel", Dict[str, Any]]:
        """Autotunes kernel `name` (tri_tune, docs/tune.md) and returns the chosen config compiled
        with the result as a dict (every config's status and times, "best", "source": benchmark,
        stored, imported or default).

        `configs`: one mapping per config of constexpr values, plus optional "num_warps" and
        "num_stages"; or a tri.Product (value lists, filtered). Configs that cannot fit the
        target are pruned before compiling (their status says why). `args` are launch()'s; buffers the kernel writes are restored between
        trials. `grid` is a grid, or a function of a config's mapping giving its grid. `key`:
        names of integer parameters whose values select a stored result (`bucket` rounds them up
        to powers of two). `frozen` never benchmarks; `retune` ignores stored results;
        `use_other_device` uses an imported result made on another device (by default it is
        reported and the key is tuned here). `progress`: a function called with a TuneProgress
        as each config finishes compiling and benchmarking, on this thread; True draws a bar on
        stderr (a line per config when stderr is not a terminal). An exception it raises is
        raised again once tri_tune returns."""
        opts_py = options or CompileOptions()
        if not isinstance(configs, Product) and not configs:
            raise TriError(C.TRI_ERROR_INVALID_ARGUMENT, "tune: give at least one config")
        # Arguments are encoded as a launch of this kernel would encode them.
        enc = Kernel._shell(self, name, opts_py)
        handle = enc._launch_stream(args, stream)
        encoded = enc._encode_all(args, handle)
        raw = (C.Arg * max(len(encoded), 1))(*(e.arg for e in encoded))
        if enc._on_device():
            enc._sync(handle, encoded)
        names = [p.name for p in enc.params]
        space = _out_handle()
        _check(_lib.tri_tune_space_create(ctypes.byref(space)))
        opts = None
        try:
            if isinstance(configs, Product):
                configs = configs._add_to(space)
            else:
                configs = [dict(c) for c in configs]
                for cfg in configs:
                    consts = {k: int(v) for k, v in cfg.items() if k not in ("num_warps", "num_stages")}
                    cnames = (ctypes.c_char_p * max(len(consts), 1))(*(k.encode() for k in consts))
                    cvalues = (ctypes.c_int64 * max(len(consts), 1))(*consts.values())
                    _check(_lib.tri_tune_space_add_config(space, cnames, cvalues, len(consts),
                                                          int(cfg.get("num_warps", 4)), int(cfg.get("num_stages", 0)),
                                                          None))
            idx = []
            for k in key:
                if k not in names:
                    raise TriError(C.TRI_ERROR_INVALID_ARGUMENT, f"tune: kernel @{name} has no runtime parameter %{k}")
                idx.append(names.index(k))
            keys = (ctypes.c_uint32 * max(len(idx), 1))(*idx)
            _check(_lib.tri_tune_space_set_key(space, keys, len(idx), 1 if bucket else 0))
            _check(_lib.tri_tune_space_set_repetitions(space, repetitions))
            report = _TuneReporter(progress, configs) if progress else None
            stage_fn = C.TUNE_STAGE_FN(report.callback) if report else C.TUNE_STAGE_FN()
            _check(_lib.tri_tune_space_set_progress(space, stage_fn, None))
            if callable(grid):
                fixed = (1, 1, 1)
                grids = [_grid(grid(cfg)) for cfg in configs]

                def grid_cb(_user, config, out):
                    for d in range(3):
                        out[d] = grids[config][d]
                grid_fn = C.TUNE_GRID_FN(grid_cb)
            else:
                fixed = _grid(grid)
                grid_fn = C.TUNE_GRID_FN()
            opts = _make_options(opts_py)
            flags = ((C.TRI_TUNE_FROZEN if frozen else 0) | (C.TRI_TUNE_RETUNE if retune else 0) |
                     (C.TRI_TUNE_USE_OTHER_DEVICE if use_other_device else 0))
            out_k, out_r = _out_handle(), _out_handle()
            m = self._h.acquire()
            try:
                _check(_lib.tri_tune(m, name.encode(), opts, space, *fixed, ctypes.c_void_p(handle), raw, len(encoded),
                                     flags, C.TUNE_PROGRESS_FN(), grid_fn, None, ctypes.byref(out_k),
                                     ctypes.byref(out_r)))
            finally:
                self._h.release()
        finally:
            _lib.tri_tune_space_destroy(space)
            if opts is not None:
                _lib.tri_compile_options_destroy(opts)
        if report and report.error is not None:
            _lib.tri_kernel_destroy(out_k.value)
            _lib.tri_blob_destroy(out_r.value)
            raise report.error
        result = json.loads(_blob_bytes(out_r).decode())
        chosen = dict(configs[result["best"]])
        consts = {k: v for k, v in chosen.items() if k not in ("num_warps", "num_stages")}
        kopts = dataclasses.replace(opts_py, constexprs={**dict(opts_py.constexprs), **consts},
                                    num_warps=chosen.get("num_warps", opts_py.num_warps),
                                    num_stages=chosen.get("num_stages", opts_py.num_stages))
        return Kernel._adopt(self, name, kopts, out_k.value), result


@dataclass(frozen=True)
class TuneProgress:
    """One step of Module.tune, as its `progress` function receives it: config `index` (its
    mapping: `config`) finished `stage` ("compile" or "benchmark"), the `done`-th of `count` to
    do so; `error` is the ErrorCode that skipped it (None when it went through) and `median_us`
    its benchmark's median (None for a compile)."""
    stage: str
    index: int
    config: Mapping[str, int]
    done: int
    count: int
    error: Optional[ErrorCode]
    median_us: Optional[float]


class _TuneReporter:
    """tri_tune_space_set_progress's callback for Module.tune: calls the user's function, or
    (progress=True) draws a bar on a terminal and one line per config elsewhere."""

    def __init__(self, progress, configs):
        self.fn = progress if callable(progress) else self._draw
        self.configs = configs
        self.error: Optional[BaseException] = None
        self.done = {"compile": 0, "benchmark": 0}
        self.tty = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()

    def callback(self, _user, stage, config, done, count, status, median_ns):
        if self.error is not None:
            return
        try:
            name = "compile" if stage == C.TRI_TUNE_STAGE_COMPILE else "benchmark"
            cfg = dict(self.configs[config]) if config < len(self.configs) else {}
            self.fn(TuneProgress(name, config, cfg, done, count, ErrorCode(status) if status else None,
                                 median_ns / 1e3 if name == "benchmark" and not status else None))
        except BaseException as e:  # raised again once tri_tune returns: ctypes would print and drop it
            self.error = e

    def _draw(self, p: TuneProgress) -> None:
        self.done[p.stage] = p.done
        if self.tty:
            def bar(n):
                fill = n * 20 // max(p.count, 1)
                return f"[{'#' * fill}{'.' * (20 - fill)}] {n}/{p.count}"
            sys.stderr.write(f"\r  compile {bar(self.done['compile'])}  benchmark {bar(self.done['benchmark'])} ")
            if self.done["benchmark"] == p.count:
                sys.stderr.write("\r" + " " * 80 + "\r")
        else:
            cfg = ",".join(f"{k}={v}" for k, v in p.config.items())
            note = (f": skipped ({p.error.name})" if p.error is not None else
                    f": {p.median_us:.3f} us" if p.median_us is not None else "")
            verb = "compiled" if p.stage == "compile" else "benchmarked"
            sys.stderr.write(f"  {verb:<11} {p.done}/{p.count}  config {p.index} ({cfg}){note}\n")
        sys.stderr.flush()


class Product:
    """A tuning space as a product of value lists (tri_tune_space_add_product): every
    combination of `values` (constexpr name -> list of ints; the first name varies slowest),
    times each of `warps` and each of `stages`, kept where `filter` (an integer expression over
    the names, `warps` and `stages`, such as "BM * BN <= 32768 && warps >= 4") is nonzero."""

    def __init__(self, values: Mapping[str, Sequence[int]], warps: Sequence[int] = (4,),
                 stages: Sequence[int] = (0,), filter: Optional[str] = None):
        self.values = {k: [int(v) for v in vs] for k, vs in values.items()}
        self.warps = [int(w) for w in warps]
        self.stages = [int(s) for s in stages]
        self.filter = filter

    def _add_to(self, space: ctypes.c_void_p) -> List[Dict[str, int]]:
        names = list(self.values)
        arrays = [(ctypes.c_int64 * max(len(self.values[n]), 1))(*self.values[n]) for n in names]
        cnames = (ctypes.c_char_p * max(len(names), 1))(*(n.encode() for n in names))
        cvalues = (ctypes.POINTER(ctypes.c_int64) * max(len(names), 1))(
            *(ctypes.cast(a, ctypes.POINTER(ctypes.c_int64)) for a in arrays))
        counts = (ctypes.c_uint32 * max(len(names), 1))(*(len(self.values[n]) for n in names))
        warps = (ctypes.c_int32 * max(len(self.warps), 1))(*self.warps)
        stages = (ctypes.c_int32 * max(len(self.stages), 1))(*self.stages)
        _check(_lib.tri_tune_space_add_product(space, cnames, cvalues, counts, len(names), warps, len(self.warps),
                                               stages, len(self.stages),
                                               self.filter.encode() if self.filter else None, None))
        n = ctypes.c_uint32()
        _check(_lib.tri_tune_space_count(space, ctypes.byref(n)))
        out = []
        v = ctypes.c_int64()
        for i in range(n.value):
            cfg = {}
            for name in names + ["warps", "stages"]:
                _check(_lib.tri_tune_space_value(space, i, name.encode(), ctypes.byref(v)))
                cfg[{"warps": "num_warps", "stages": "num_stages"}.get(name, name)] = v.value
            out.append(cfg)
        return out


def _make_options(o: CompileOptions) -> ctypes.c_void_p:
    opts = _out_handle()
    _check(_lib.tri_compile_options_create(ctypes.byref(opts)))
    try:
        _check(_lib.tri_compile_options_set_target(opts, o.target.encode()))
        _check(_lib.tri_compile_options_set_checked(opts, 1 if o.checked else 0))
        for key, value in o.constexprs.items():
            if isinstance(value, (bool, int, np.integer)):
                _check(_lib.tri_compile_options_set_constexpr_int(opts, key.encode(), int(value)))
            elif isinstance(value, (float, np.floating)):
                _check(_lib.tri_compile_options_set_constexpr_float(opts, key.encode(), float(value)))
            else:
                raise TriError(C.TRI_ERROR_INVALID_ARGUMENT,
                               f"constexpr '{key}' is {type(value).__name__}; give an int, a float or a bool")
        for param, align in o.arg_align.items():
            _check(_lib.tri_compile_options_set_arg_align(opts, param, align))
        for param, divisible in o.arg_divisible.items():
            _check(_lib.tri_compile_options_set_arg_divisible(opts, param, divisible))
        if o.num_warps is not None:
            _check(_lib.tri_compile_options_set_num_warps(opts, o.num_warps))
        if o.num_stages is not None:
            _check(_lib.tri_compile_options_set_num_stages(opts, o.num_stages))
        if o.arch is not None:
            _check(_lib.tri_compile_options_set_arch(opts, o.arch.encode()))
        if o.launch_specialization is not None or o.max_variants is not None:
            # The library's defaults for what is not given: on for "cuda", off for the others; 8.
            on = o.launch_specialization if o.launch_specialization is not None else o.target in _CUDA_TARGETS
            _check(_lib.tri_compile_options_set_launch_specialization(
                opts, 1 if on else 0, 8 if o.max_variants is None else o.max_variants))
        for param, on in o.arg_specialization.items():
            _check(_lib.tri_compile_options_set_arg_specialization(opts, param, 1 if on else 0))
    except BaseException:
        _lib.tri_compile_options_destroy(opts)
        raise
    return opts


GridLike = Union[int, Sequence[int]]


def _grid(grid: GridLike) -> Tuple[int, int, int]:
    dims = (grid,) if isinstance(grid, (int, np.integer)) else tuple(grid)
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, (int, np.integer)) and 0 <= d < (1 << 32) for d in dims):
        raise TriError(C.TRI_ERROR_INVALID_ARGUMENT,
                       f"grid {grid!r}: give 1 to 3 counts of program instances, each in 0..2^32-1")
    gx, gy, gz = (tuple(int(d) for d in dims) + (1, 1))[:3]
    return gx, gy, gz


def _stream(stream: Any) -> int:
    try:
        return _device.stream_handle(stream)
    except TypeError as e:
        raise TriError(C.TRI_ERROR_INVALID_ARGUMENT, f"stream: {e}") from None


def _array_address(a: np.ndarray) -> int:
    """The address NumPy's a.ctypes.data gives, the cheapest way there is: a ctypes view of a
    writable array's buffer (a third of the cost of __array_interface__); the interface for
    read-only and empty arrays."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    except (TypeError, ValueError, BufferError):
        return a.__array_interface__["data"][0]


class _Encoded:
    """One argument as the C API takes it, with what must outlive its use: the objects that own
    the memory, and the stream a v3 __cuda_array_interface__ asked to be synchronized with."""
    __slots__ = ("arg", "keep", "wait")

    def __init__(self, arg: C.Arg, keep: Tuple[Any, ...] = (), wait: Optional[int] = None):
        self.arg, self.keep, self.wait = arg, keep, wait


def _misaligned(where: str, align: int, address: int) -> str:
    """The message for a pointer argument that breaks the alignment its kernel was compiled for
    (an {align=N} fact in the IR, or an arg_align promise): every target would read it wrong or
    fault, so it is refused before the launch."""
    return (f"{where} with {{align={align}}}, but the address given, {address:#x}, is not a multiple of {align}: "
            f"pass memory that starts on a {align}-byte boundary (a view such as a[1:] moves the start; copy it), "
            f"or compile without that fact")


class Kernel(_KernelBase, _Owner):
    """A kernel compiled for one target and specialization. Launch it with
    `kernel.launch(grid, *args, stream=None)` or `kernel[grid](*args, stream=None)`, or prepare
    a launch with `kernel.plan(grid, *args)`. Pointers: NumPy arrays (dtype the pointee's) or
    tri.Buffer on the host targets; device arrays (__cuda_array_interface__ or DLPack: torch,
    CuPy) or tri.DevicePtr on "cuda". Scalars: Python numbers. It keeps its module and context
    alive and may be launched from several threads at once."""

    @classmethod
    def _shell(cls, module: "Module", name: str, options: "CompileOptions") -> "Kernel":
        """A Kernel with no compiled handle yet: enough to encode arguments (tri_tune's)."""
        k = cls.__new__(cls)
        k.module, k.name, k.options, k._target = module, name, options, options.target
        k.params = module.function(name).runtime_params
        return k

    @classmethod
    def _adopt(cls, module: "Module", name: str, options: "CompileOptions", handle: int) -> "Kernel":
        """A Kernel around a handle the library made (tri_tune's chosen kernel)."""
        k = cls._shell(module, name, options)
        k._h = _Handle(handle, _lib.tri_kernel_destroy, f"kernel @{name}")
        k._setup_fast_path()
        return k

    def _setup_fast_path(self) -> None:
        """Tells the compiled launch path (tri/_launch.c) the handle and, per runtime parameter,
        what it takes: (0: pointer, whose lo is the alignment it was compiled for; 1: integer in
        lo..hi; 2: float; 3: nothing it handles, dtype, lo, hi). Kernels of targets this package
        does not launch are left to the Python path."""
        if _fast is None:
            return
        if self._target not in _HOST_TARGETS and self._target not in _CUDA_TARGETS:
            self._launch_setup(None, (), False)
            return
        spec = []
        for i, p in enumerate(self.params):
            if p.type_kind == TypeKind.POINTER:
                spec.append((0, int(p.dtype), max(p.align, self.options.arg_align.get(i, 0)), 0))
            elif p.type_kind == TypeKind.SCALAR and p.dtype.is_float:
                spec.append((2, int(p.dtype), 0, 0))
            elif p.type_kind == TypeKind.SCALAR:
                bits = _INT_BITS[p.dtype]
                lo, hi = (0, 1) if bits == 1 else (-(1 << (bits - 1)), (1 << bits) - 1)
                # Values past int64 (an i64 given as an unsigned 64-bit value) take the Python path.
                spec.append((1, int(p.dtype), lo, min(hi, (1 << 63) - 1)))
            else:
                spec.append((3, int(p.dtype), 0, 0))
        self._launch_setup(self._h, tuple(spec), self._on_device())

    def __init__(self, module: Module, name: str, options: CompileOptions, from_package: bool = False):
        self.module = module
        self.name = name
        self.options = options
        self._target = options.target  # as compiled, whatever happens to `options` later
        opts = _make_options(options)
        out = _out_handle()
        m = module._h.acquire()
        try:
            get = _lib.tri_module_kernel if from_package else _lib.tri_kernel_compile
            _check(get(m, name.encode(), opts, ctypes.byref(out)))
        finally:
            module._h.release()
            _lib.tri_compile_options_destroy(opts)
        self._h = _Handle(out.value, _lib.tri_kernel_destroy, f"kernel @{name}")
        count = ctypes.c_uint32()
        _check(_lib.tri_kernel_arg_count(out.value, ctypes.byref(count)))
        self.params: Tuple[Param, ...] = module.function(name).runtime_params
        if len(self.params) != count.value:
            raise TriError(C.TRI_ERROR_INTERNAL, f"kernel @{name} reflects {len(self.params)} runtime parameters "
                                                 f"but takes {count.value} arguments")
        self._setup_fast_path()

    @property
    def arg_count(self) -> int:
        return len(self.params)

    @property
    def target(self) -> str:
        return self._target

    @property
    def _target(self) -> str:
        """The target as compiled, whatever happens to `options` later."""
        return self._target_name

    @_target.setter
    def _target(self, value: str) -> None:
        self._target_name = value
        if getattr(self, "_h", None) is not None:  # what the compiled launch path knows follows it
            self._setup_fast_path()

    def _blob(self, fn, *args) -> bytes:
        out = _out_handle()
        k = self._h.acquire()
        try:
            _check(fn(k, *args, ctypes.byref(out)))
        finally:
            self._h.release()
        return _blob_bytes(out)

    def to_text(self) -> str:
        """The specialized IR the kernel was compiled from."""
        return self._blob(_lib.tri_kernel_to_text).decode()

    def code(self, kind: str) -> Union[str, bytes]:
        """Code the target made, by kind: "llvm" (LLVM IR after optimization) for "cpu" and
        "cuda"; "asm" (the host assembly) for "cpu"; "ptx" (the PTX module) and "metadata" (the
        launch descriptor, JSON) for "cuda"; "cubin" (bytes: the machine code the driver made,
        with a GPU) for "cuda". Stages a compile does not keep are made on the first call.
        TriError NOT_FOUND when the target makes nothing of that kind (the message lists what
        it makes)."""
        data = self._blob(_lib.tri_kernel_code, kind.encode())
        return data if kind == "cubin" else data.decode("utf-8", "replace")

    def metadata(self) -> Dict[str, Any]:
        """The "cuda" launch descriptor (code("metadata")) as a dict: entry, arch, block,
        shared_bytes, params, ..."""
        return json.loads(self.code("metadata"))

    def variants(self) -> Dict[str, Any]:
        """What launch-time specialization has made so far (docs/capi.md "Variants"), as a dict:
        {"schema": 1, "max_variants": n, "variants": [{"key", "classes", "reason"}, ...]}."""
        return json.loads(self._blob(_lib.tri_kernel_variants).decode())

    # ---- Arguments

    def _where(self, i: int, p: Param) -> str:
        return f"argument {i} (%{p.name}) of kernel @{self.name} is {p.type_text}"

    def _on_device(self) -> bool:
        return self._target in _CUDA_TARGETS

    def _check_launchable(self) -> None:
        if self._target not in _HOST_TARGETS and self._target not in _CUDA_TARGETS:
            raise TriError(C.TRI_ERROR_UNSUPPORTED,
                           f"kernel @{self.name} was compiled for target \"{self._target}\"; this package "
                           "launches \"cpu\" and \"interp\" kernels (host arrays) and \"cuda\" ones (device arrays)")

    def _check_count(self, args: Sequence[Any]) -> None:
        if len(args) != len(self.params):
            sig = ", ".join(f"%{p.name}: {p.type_text}" for p in self.params)
            raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"kernel @{self.name} takes {len(self.params)} arguments "
                                                    f"({sig}), but {len(args)} were given")

    def _pointer(self, i: int, p: Param, value: Any, stream: int) -> _Encoded:
        # The messages are made only when an argument is refused: a launch that goes through
        # builds no string.
        a = C.Arg()
        a.kind, a.dtype = C.TRI_TYPE_POINTER, int(p.dtype)
        device = self._on_device()
        if isinstance(value, (np.ndarray, Buffer)):
            if device:
                raise TriError(C.TRI_ERROR_LAUNCH_ARGS,
                               f"{self._where(i, p)}, but a host "
                               f"{'array' if isinstance(value, np.ndarray) else 'Buffer'} was given and "
                               f"{self._runs()}: pass device memory (a torch/CuPy array on the GPU, or tri.DevicePtr)")
            if isinstance(value, Buffer):
                if value.dtype != p.dtype:
                    raise TriError(C.TRI_ERROR_LAUNCH_ARGS,
                                   f"{self._where(i, p)}, but a Buffer of {value.dtype.ir_name} was given")
                a.value.p, a.extent = value.address, value.nbytes
                return _Encoded(a)
            got = _NUMPY_DTYPES.get(value.dtype)
            if got != p.dtype:
                raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"{self._where(i, p)}, so it takes an array of "
                                                        f"{p.dtype.ir_name}, but an array of {value.dtype} was given")
            if not value.flags.c_contiguous:
                raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"{self._where(i, p)}, but the array given is not contiguous "
                                                        "(pass numpy.ascontiguousarray(a))")
            a.value.p, a.extent = _array_address(value), value.nbytes
            return _Encoded(a, (value,))
        if isinstance(value, DevicePtr):
            if not device:
                raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"{self._where(i, p)}, but a DevicePtr was given and "
                                                        f"{self._runs()}: pass host memory (a NumPy array or "
                                                        "tri.Buffer)")
            if value.dtype != p.dtype:
                raise TriError(C.TRI_ERROR_LAUNCH_ARGS,
                               f"{self._where(i, p)}, but a DevicePtr of {value.dtype.ir_name} was given")
            a.value.p, a.extent = value.address, value.nbytes
            return _Encoded(a)
        view = self._view(i, p, value, stream)
        if view.device != device:
            raise self._wrong_memory(self._where(i, p), view.device, view.origin)
        if view.np_dtype is not None:
            got = _NUMPY_DTYPES.get(view.np_dtype)
        else:
            got = _DL_DTYPES.get(view.dl_dtype)
        if got != p.dtype:
            if view.np_dtype is not None:
                got_name = str(view.np_dtype) + (" (a type NumPy has no name for)" if view.np_dtype.kind == "V" else "")
            else:
                got_name = (got.ir_name if got is not None else
                            f"DLPack type code {view.dl_dtype[0]} of {view.dl_dtype[1]} bits")
            raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"{self._where(i, p)}, so it takes an array of {p.dtype.ir_name}, "
                                                    f"but an array of {got_name} was given")
        a.value.p, a.extent = view.address, view.nbytes
        return _Encoded(a, view.keep, view.stream)

    def _runs(self) -> str:
        return f"kernel @{self.name} runs on " + ("the GPU (\"cuda\")" if self._on_device()
                                                  else f"the host (\"{self._target}\")")

    def _wrong_memory(self, where: str, on_device: bool, origin: str) -> TriError:
        return TriError(C.TRI_ERROR_LAUNCH_ARGS,
                        f"{where}, but {'device' if on_device else 'host'} memory ({origin}) was given and "
                        f"{self._runs()}: "
                        + ("compile for \"cuda\" or pass a NumPy array" if on_device else
                           "move it to the GPU first (e.g. x.cuda())"))

    def _view(self, i: int, p: Param, value: Any, stream: int) -> "_device.View":
        """A __cuda_array_interface__ or DLPack view of value; TriError LAUNCH_ARGS otherwise."""
        problems = []
        try:
            view = _device.from_cai(value)
            # A type NumPy has no name for (torch describes bf16 as "|V2"): DLPack names it.
            if view.np_dtype.kind != "V" or not hasattr(value, "__dlpack__"):
                return view
        except _device.NotAView:
            pass
        except _device.BadView as e:
            raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"{self._where(i, p)}, but {e}") from None
        except Exception as e:  # torch: KeyError for bf16, RuntimeError for a tensor that requires grad
            problems.append(f"__cuda_array_interface__: {type(e).__name__}: {e}")
        if hasattr(value, "__dlpack__"):
            try:
                device_type, _ = _device.dlpack_device(value)
                origin = f"DLPack ({_device.dl_device_name(device_type)})"
                on_gpu = device_type in (_device.DL_CUDA, _device.DL_CUDA_MANAGED)
                if not on_gpu and device_type != _device.DL_CPU:
                    raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"{self._where(i, p)}, but memory ({origin}) was given, which "
                                                            "Tri cannot launch on")
                if on_gpu != self._on_device():
                    # Refused before the capsule is asked for: a producer may copy or synchronize for it.
                    raise self._wrong_memory(self._where(i, p), on_gpu, origin)
                return _device.from_dlpack(value, stream if on_gpu else None)
            except _device.BadView as e:
                raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"{self._where(i, p)}, but {e}") from None
            except TriError:
                raise
            except Exception as e:
                problems.append(f"__dlpack__: {type(e).__name__}: {e}")
        if problems:
            raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"{self._where(i, p)}, but the {type(value).__name__} given cannot be read: "
                                                    + "; ".join(problems))
        takes = ("a device array (__cuda_array_interface__ or DLPack) or tri.DevicePtr" if self._on_device()
                 else "a NumPy array (or tri.Buffer)")
        raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"{self._where(i, p)}, so it takes {takes}, but {type(value).__name__} was given")

    def _scalar(self, i: int, p: Param, value: Any) -> _Encoded:
        a = C.Arg()
        a.kind, a.dtype = C.TRI_TYPE_SCALAR, int(p.dtype)
        if p.dtype.is_float:
            if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
                raise TriError(C.TRI_ERROR_LAUNCH_ARGS,
                               f"{self._where(i, p)}, so it takes a number, but {type(value).__name__} was given")
            a.value.f = float(value)
            return _Encoded(a)
        if not isinstance(value, (int, np.integer)):
            raise TriError(C.TRI_ERROR_LAUNCH_ARGS,
                           f"{self._where(i, p)}, so it takes an int, but {type(value).__name__} was given")
        v, bits = int(value), _INT_BITS[p.dtype]
        lo, hi = (0, 1) if bits == 1 else (-(1 << (bits - 1)), (1 << bits) - 1)
        if not lo <= v <= hi:
            raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"{self._where(i, p)}, and {v} does not fit in it")
        a.value.i = v - (1 << 64) if v >= (1 << 63) else v
        return _Encoded(a)

    def _encode(self, i: int, value: Any, stream: int) -> _Encoded:
        p = self.params[i]
        if p.type_kind == TypeKind.POINTER:
            e = self._pointer(i, p, value, stream)
            align = max(p.align, self.options.arg_align.get(i, 0))
            if align > 1 and (e.arg.value.p or 0) % align:
                raise TriError(C.TRI_ERROR_LAUNCH_ARGS, _misaligned(self._where(i, p), align, e.arg.value.p))
            return e
        if p.type_kind != TypeKind.SCALAR:
            raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"{self._where(i, p)}, which a launch cannot pass")
        return self._scalar(i, p, value)

    def _launch_stream(self, args: Sequence[Any], stream: Any) -> int:
        """The stream to run on: the one given; else, on "cuda", the stream the first argument's
        v3 __cuda_array_interface__ names (where its producer works); else the default stream."""
        if stream is not None or not self._on_device():
            return _stream(stream)
        for p, value in zip(self.params, args):
            if p.type_kind == TypeKind.POINTER and not isinstance(value, (np.ndarray, Buffer, DevicePtr)):
                try:
                    s = _device.from_cai(value).stream
                except Exception:
                    continue  # reported, if it matters, when the argument is encoded
                if s is not None:
                    return 0 if s == _device.STREAM_LEGACY else s
        return 0

    def _encode_all(self, args: Sequence[Any], stream: int) -> List[_Encoded]:
        self._check_launchable()
        self._check_count(args)
        return [self._encode(i, value, stream) for i, value in enumerate(args)]

    @staticmethod
    def _sync(stream: int, encoded: Sequence[_Encoded]) -> None:
        """Orders `stream` after the streams v3 arrays asked to be synchronized with."""
        waits = []
        for e in encoded:
            if e.wait is not None and not _device.same_stream(e.wait, stream) and e.wait not in waits:
                waits.append(e.wait)
        if waits:
            try:
                _device.wait_all(stream, waits)
            except (OSError, AttributeError, RuntimeError) as err:
                raise TriError(C.TRI_ERROR_RUNTIME, f"could not order stream {stream:#x} after the arrays' streams "
                                                    f"{', '.join(hex(w) for w in waits)}: {err}") from None

    def launch(self, grid: GridLike, *args: Any, stream: Any = None) -> None:
        """Runs the kernel over `grid` (an int or 1 to 3 ints). On the host targets it returns
        when every program has finished, and `stream` must be None. On "cuda" it enqueues the
        kernel on `stream` (an int CUstream handle, or an object with `cuda_stream`, such as
        torch.cuda.Stream, or `ptr`, such as cupy.cuda.Stream; None: the stream a v3
        __cuda_array_interface__ argument names, else the default stream) and returns."""
        gx, gy, gz = _grid(grid)
        handle = self._launch_stream(args, stream)
        encoded = self._encode_all(args, handle)
        raw = (C.Arg * max(len(encoded), 1))(*(e.arg for e in encoded))
        if self._on_device():
            self._sync(handle, encoded)
        k = self._h.acquire()
        try:
            # ctypes drops the GIL for the call, so launches from several threads run at once.
            _check(_lib.tri_launch(k, gx, gy, gz, handle or None, raw, len(encoded)))
        finally:
            self._h.release()
        del encoded  # the arrays and DLPack capsules: alive until the call has returned

    def __getitem__(self, grid: GridLike) -> Callable[..., None]:
        """Triton's form: kernel[grid](*args, stream=None)."""
        return lambda *args, stream=None: self._launch_py(grid, *args, stream=stream)

    # The pure-Python launch. Where the compiled path is loaded, its KernelBase.launch and
    # kernel[grid] take these names' places and come back here for whatever they do not handle.
    _launch_py = launch
    _getitem_py = __getitem__
    if _fast is not None:
        del launch, __getitem__

    def plan(self, grid: GridLike, *args: Any, stream: Any = None) -> "LaunchPlan":
        """A prepared launch: the grid, stream and arguments checked and encoded once; the
        plan's set_arg / set_grid / set_stream change one thing, and launch() runs it with no
        checking or encoding. The plan keeps the arrays it was given alive."""
        return LaunchPlan(self, grid, args, stream)


class LaunchPlan(_PlanBase, _Owner):
    """A kernel bound to a grid, a stream and arguments (Kernel.plan). Hot loops update what
    changes in place and call launch(). It keeps its kernel (and the arrays it holds) alive. The
    C plan is not thread-safe; this object serializes its calls with a lock."""

    def __init__(self, kernel: Kernel, grid: GridLike, args: Sequence[Any], stream: Any = None):
        self.kernel = kernel
        gx, gy, gz = _grid(grid)
        self._stream = kernel._launch_stream(args, stream)
        encoded = kernel._encode_all(args, self._stream)
        self._args: List[_Encoded] = list(encoded)
        raw = (C.Arg * max(len(encoded), 1))(*(e.arg for e in encoded))
        self._lock = _Lock()
        out = _out_handle()
        k = kernel._h.acquire()
        try:
            _check(_lib.tri_launch_plan_create(k, gx, gy, gz, self._stream or None, raw, len(encoded),
                                               ctypes.byref(out)))
        finally:
            kernel._h.release()
        self._h = _Handle(out.value, _lib.tri_launch_plan_destroy, f"launch plan of kernel @{kernel.name}")
        if _fast is not None:
            self._plan_setup(self._h, self._lock)
            self._changed()

    def _changed(self) -> None:
        """Tells the compiled path (with the lock held, or before the plan is shared) whether a
        launch must order its stream after the arrays' streams, which the Python path does."""
        if _fast is not None:
            self._plan_set_sync(self.kernel._on_device() and any(
                e.wait is not None and not _device.same_stream(e.wait, self._stream) for e in self._args))

    def _call(self, fn, *args) -> None:
        p = self._h.acquire()
        try:
            _check(fn(p, *args))
        finally:
            self._h.release()

    def set_arg(self, index: int, value: Any) -> None:
        """Replaces argument `index` (checked like a launch's); a refused value changes nothing."""
        if not 0 <= index < len(self.kernel.params):
            raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"kernel @{self.kernel.name} takes {len(self.kernel.params)} "
                                                    f"arguments; there is no argument {index}")
        with self._lock:
            e = self.kernel._encode(index, value, self._stream)
            self._call(_lib.tri_launch_plan_set_arg, index, ctypes.byref(e.arg))
            self._args[index] = e
            self._changed()

    def set_grid(self, grid: GridLike) -> None:
        gx, gy, gz = _grid(grid)
        with self._lock:
            self._call(_lib.tri_launch_plan_set_grid, gx, gy, gz)

    def set_stream(self, stream: Any) -> None:
        """Moves later launches to another stream (the values Kernel.launch takes; None: the
        default stream)."""
        handle = _stream(stream)
        with self._lock:
            self._call(_lib.tri_launch_plan_set_stream, handle or None)
            self._stream = handle
            self._changed()

    def launch(self) -> None:
        """Launches as Kernel.launch would with the plan's kernel, grid, stream and arguments."""
        with self._lock:
            if self.kernel._on_device():
                self.kernel._sync(self._stream, self._args)
            self._call(_lib.tri_launch_plan_launch)

    __call__ = launch
    # The pure-Python launch; PlanBase.launch (tri/_launch.c) takes its place where it is loaded
    # and comes back here when the stream must be ordered after the arrays'.
    _plan_launch_py = launch
    if _fast is not None:
        del launch, __call__


#: The size in bytes of a GPU team's unique id (Team.make_id, Team.join).
TEAM_ID_BYTES = C.TRI_TEAM_ID_BYTES


class Team(_Owner):
    """A team of ranks that run one kernel together over a symmetric heap (docs/distributed.md):
    every rank owns a heap of the same size, and `alloc` places a buffer at the same offset of
    every rank's heap, so that the IR's distributed ops (rank, num_ranks, symm_at, put, get,
    notify, wait) reach a peer's copy.

    `Team(ctx, num_ranks, heap_bytes_per_rank)` makes a host team (tri_team_create) that runs
    kernels of the "cpu" and "interp" targets: each rank is threads of this process and each heap
    is host memory, which `view` shows as a NumPy array. `Team.join(...)` joins a GPU team
    (one process per GPU, on NVSHMEM) that runs "cuda" kernels. A team keeps its context alive,
    may be used from several threads at once, and is released by close() or its with-block
    (pointers and views of its heaps are invalid afterwards)."""

    def __init__(self, context: Context, num_ranks: int, heap_bytes_per_rank: int):
        """A host team of `num_ranks` ranks (1 to 1024), each with a heap of
        `heap_bytes_per_rank` bytes (rounded up to a multiple of 64), 64-byte aligned. Waits
        time out after 30 s (set_wait_timeout)."""
        if isinstance(num_ranks, bool) or not isinstance(num_ranks, (int, np.integer)) \
                or not 0 <= int(num_ranks) < 1 << 32:
            raise TriError(C.TRI_ERROR_INVALID_ARGUMENT, f"num_ranks must be an int in 0..2^32-1, not {num_ranks!r}")
        heap = _u64("heap_bytes_per_rank", heap_bytes_per_rank)
        out = _out_handle()
        context._call(_lib.tri_team_create, int(num_ranks), heap, ctypes.byref(out))
        self._adopt_handle(context, out.value, heap, gpu=False)

    def _adopt_handle(self, context: Context, handle: int, heap: int, gpu: bool) -> None:
        self.context = context
        self._gpu = gpu
        self._h = _Handle(handle, _lib.tri_team_destroy, "team")
        self.heap_bytes: int = (heap + 63) // 64 * 64  # each rank's heap, as the library rounds it
        self._rank, self._num_ranks = self._rank_info()

    # ---- GPU teams (NVSHMEM): one process per rank, each on its own GPU

    @staticmethod
    def make_id(context: Context) -> bytes:
        """The unique id (TEAM_ID_BYTES bytes) of a new GPU team, to send to the other ranks'
        processes by any means (a pipe, a file, MPI). The process that makes it joins as rank 0.
        TriError UNSUPPORTED (saying how to point Tri at NVSHMEM) when NVSHMEM cannot be loaded."""
        buf = ctypes.create_string_buffer(C.TRI_TEAM_ID_BYTES)
        context._call(_lib.tri_team_make_id, buf, C.TRI_TEAM_ID_BYTES)
        return buf.raw

    @classmethod
    def join(cls, context: Context, id: Union[bytes, bytearray, memoryview], rank: int, num_ranks: int, device: int,
             heap_bytes_per_rank: int) -> "Team":
        """Joins the GPU team of `id` (from make_id) as rank `rank` of `num_ranks`, on CUDA
        device `device` (0-based), whose primary context becomes current on the calling thread;
        each rank's heap is heap_bytes_per_rank bytes of that GPU's memory, zeroed. Blocks until
        every rank has joined; one GPU team per process at a time. In a GPU team alloc, free and
        close are collective (every rank makes the same calls in the same order), ptr gives
        device addresses, and launch takes this rank's arguments only."""
        data = bytes(id)
        heap = _u64("heap_bytes_per_rank", heap_bytes_per_rank)
        for what, v in (("rank", rank), ("num_ranks", num_ranks), ("device", device)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= int(v) < 1 << 32:
                raise TriError(C.TRI_ERROR_INVALID_ARGUMENT, f"{what} must be an int in 0..2^32-1, not {v!r}")
        out = _out_handle()
        # ctypes drops the GIL for the call: the other ranks' joins may run in this process's threads.
        context._call(_lib.tri_team_join, data, len(data), int(rank), int(num_ranks), int(device), heap,
                      ctypes.byref(out))
        team = cls.__new__(cls)
        team._adopt_handle(context, out.value, heap, gpu=True)
        return team

    def barrier(self) -> None:
        """Waits until this rank's GPU work is done and every rank of the team has called it
        (a host team returns at once). TriError RUNTIME when a kernel of this rank failed."""
        self._call(_lib.tri_team_barrier)

    def launch_async(self, kernel: Kernel, grid: GridLike, *args: Any, stream: Any = None) -> None:
        """Launches this process's rank of a GPU team's kernel (compiled for "cuda") with this
        rank's `args` on `stream` (the values Kernel.launch takes) and returns without waiting,
        as Kernel.launch does on "cuda". A host team raises TriError INVALID_ARGUMENT (use
        launch)."""
        gx, gy, gz = _grid(grid)
        handle = kernel._launch_stream(args, stream)
        encoded = self._encode(kernel, args, self._rank, handle)
        raw = (C.Arg * max(len(encoded), 1))(*(e.arg for e in encoded))
        if kernel._on_device():
            kernel._sync(handle, encoded)
        self._launch(kernel, _lib.tri_team_launch_async, gx, gy, gz, raw, len(encoded), handle or None)
        del encoded

    # ---- Both kinds

    def _call(self, fn, *args) -> None:
        t = self._h.acquire()
        try:
            _check(fn(t, *args))
        finally:
            self._h.release()

    def _rank_info(self) -> Tuple[int, int]:
        r, n = ctypes.c_uint32(), ctypes.c_uint32()
        self._call(_lib.tri_team_rank, ctypes.byref(r), ctypes.byref(n))
        return r.value, n.value

    @property
    def rank(self) -> int:
        """This process's rank (tri_team_rank): 0 for a host team, whose process runs them all."""
        return self._rank_info()[0]

    @property
    def num_ranks(self) -> int:
        """The number of ranks of the team."""
        return self._rank_info()[1]

    @property
    def is_gpu(self) -> bool:
        """True for a GPU team (Team.join), False for a host team."""
        return self._gpu

    def alloc(self, nbytes: int) -> int:
        """Allocates `nbytes` (more than 0) in every rank's heap at one offset, 64-byte aligned
        and zero-filled, and returns the offset (first fit). TriError OUT_OF_MEMORY (saying how
        much is free) when no free range of that size is left."""
        off = ctypes.c_uint64()
        self._call(_lib.tri_team_alloc, _u64("nbytes", nbytes), ctypes.byref(off))
        return off.value

    def free(self, offset: int) -> None:
        """Frees the allocation at `offset` (from alloc) on every rank."""
        self._call(_lib.tri_team_free, _u64("offset", offset))

    def ptr(self, rank: int, offset: int) -> int:
        """The address of byte `offset` of rank `rank`'s heap: host memory for a host team (a
        rank's kernel arguments are its own addresses), a device address on this GPU for a GPU
        team. Valid until the team is closed. TriError INVALID_ARGUMENT for a rank past the team
        or an offset past the heap."""
        if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or not 0 <= int(rank) < 1 << 32:
            raise TriError(C.TRI_ERROR_INVALID_ARGUMENT, f"rank must be an int in 0..2^32-1, not {rank!r}")
        out = ctypes.c_void_p()
        self._call(_lib.tri_team_ptr, int(rank), _u64("offset", offset), ctypes.byref(out))
        return out.value or 0

    def view(self, rank: int, offset: int, dtype: Any, shape: Union[int, Sequence[int]]) -> np.ndarray:
        """A writable NumPy array over rank `rank`'s heap at `offset` (host teams only), to fill
        inputs, read results and pass as that rank's kernel arguments. It keeps this object
        alive, but like ptr it is invalid once the team is closed."""
        if self._gpu:
            raise TriError(C.TRI_ERROR_INVALID_ARGUMENT, "Team.view: a GPU team's heaps are device memory; pass "
                                                         "tri.DevicePtr(team.ptr(rank, offset), nbytes, dtype) instead")
        dt = np.dtype(dtype)
        dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
        nbytes = int(np.prod(dims, dtype=np.int64)) * dt.itemsize
        off = _u64("offset", offset)
        if off + nbytes > self.heap_bytes:
            raise TriError(C.TRI_ERROR_INVALID_ARGUMENT, f"Team.view: {nbytes} bytes at offset {off} run past the "
                                                         f"heap of {self.heap_bytes} bytes")
        raw = (ctypes.c_char * nbytes).from_address(self.ptr(rank, off))
        raw._team = self  # the array's base holds it: the team outlives the view unless closed
        return np.frombuffer(raw, dtype=dt).reshape(dims)

    def set_wait_timeout(self, timeout_ms: int) -> None:
        """How long a `wait` of this team's launches may go without its signal before the launch
        fails with TriError RUNTIME naming the wait; 0 waits forever (default 30000 ms).
        Launches that begin later use it."""
        self._call(_lib.tri_team_set_wait_timeout, _u64("timeout_ms", timeout_ms))

    def _encode(self, kernel: Kernel, args: Sequence[Any], rank: int, stream: int) -> List[_Encoded]:
        try:
            return kernel._encode_all(args, stream)
        except TriError as e:  # named by rank, as the library names its own argument errors
            raise TriError(int(e.code), f"rank {rank}: {e.message}") from None

    def _launch(self, kernel: Kernel, fn, *args) -> None:
        k = kernel._h.acquire()
        try:
            t = self._h.acquire()
            try:
                _check(fn(k, t, *args))
            finally:
                self._h.release()
        finally:
            kernel._h.release()

    def launch(self, kernel: Kernel, grid: GridLike, rank_args: Sequence[Sequence[Any]]) -> None:
        """Runs `kernel` on every rank this process runs, each over `grid`, and returns when they
        have all finished. `rank_args` holds one argument list per such rank, each what
        Kernel.launch takes: for a host team one per rank of the team (rank 0's first; the
        kernel compiled for "cpu" or "interp", pointers into that rank's heap from view or ptr);
        for a GPU team one list, this rank's. A failure on any rank stops the waits of the others
        and raises TriError naming the lowest failed rank ("rank 2: ...")."""
        gx, gy, gz = _grid(grid)
        ranks = 1 if self._gpu else self._num_ranks
        if isinstance(rank_args, (str, bytes)) or not isinstance(rank_args, Sequence) or len(rank_args) != ranks:
            got = f"{len(rank_args)} were given" if isinstance(rank_args, Sequence) else \
                f"a {type(rank_args).__name__} was given"
            raise TriError(C.TRI_ERROR_LAUNCH_ARGS,
                           f"a launch of {'this GPU team rank' if self._gpu else f'a team of {ranks} ranks'} "
                           f"takes {ranks} argument list{'s' if ranks != 1 else ''} (one per rank), but {got}")
        if not self._gpu and kernel._on_device():
            raise TriError(C.TRI_ERROR_INVALID_ARGUMENT,
                           f"kernel @{kernel.name} is compiled for the \"{kernel.target}\" target, and this team runs "
                           "on the host (Team(ctx, ...)); GPU kernels run in GPU teams (Team.join)")
        encoded: List[_Encoded] = []
        for i, args in enumerate(rank_args):
            rank = self._rank if self._gpu else i
            if isinstance(args, (str, bytes, np.ndarray)) or not isinstance(args, Sequence):
                raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"rank {rank}: give the rank's arguments as a list or tuple, "
                                                        f"not a {type(args).__name__}")
            encoded.extend(self._encode(kernel, args, rank, 0))
        per_rank = len(encoded) // ranks
        raw = (C.Arg * max(len(encoded), 1))(*(e.arg for e in encoded))
        if kernel._on_device():
            kernel._sync(0, encoded)
        self._launch(kernel, _lib.tri_team_launch, gx, gy, gz, raw, per_rank)
        del encoded  # the arrays: alive until the call has returned
