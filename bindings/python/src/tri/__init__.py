"""Tri from Python: read block-level kernels as IR, compile them for the CPU (or the reference
interpreter) and launch them on NumPy arrays. A thin layer over the C API (include/tri/tri.h)
through ctypes, with Python's forms: exceptions that carry the result code and message, context
managers and finalizers for the handles, and launch arguments checked against the kernel's
reflected signature before the call.

    import numpy as np, tri
    with tri.Context() as ctx:
        module = tri.Module.from_file(ctx, "examples/vector_add.tri")
        kernel = module.compile("vector_add", constexprs={"BLOCK": 1024})
        x = np.arange(5000, dtype=np.float32); out = np.empty_like(x)
        kernel[(5000 + 1023) // 1024](x, x, out, 5000)

Device arrays (__cuda_array_interface__, DLPack) are refused with a clear error: they need the
"cuda" target, which this package does not launch yet; so is a kernel compiled for a GPU target.
"""

import ctypes
import enum
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _capi as C
from ._capi import lib as _lib

__all__ = [
    "TriError", "ErrorCode", "LogLevel", "DType", "TypeKind", "ParamKind", "FunctionKind", "Param", "Function",
    "CompileOptions", "Context", "Module", "Kernel", "Buffer", "version", "last_error_message",
]

__version__ = "0.1.0"


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


# NumPy element types that match a Tri dtype bit for bit (Tri's integers are signless).
_NUMPY_DTYPES: Dict[np.dtype, DType] = {
    np.dtype(np.int8): DType.I8, np.dtype(np.uint8): DType.I8,
    np.dtype(np.int16): DType.I16, np.dtype(np.uint16): DType.I16,
    np.dtype(np.int32): DType.I32, np.dtype(np.uint32): DType.I32,
    np.dtype(np.int64): DType.I64, np.dtype(np.uint64): DType.I64,
    np.dtype(np.float16): DType.F16, np.dtype(np.float32): DType.F32, np.dtype(np.float64): DType.F64,
}
# The targets whose kernels run on host memory; a GPU target needs device buffers and a stream,
# which this package does not pass yet.
_HOST_TARGETS = ("cpu", "interp")
_INT_BITS = {DType.I1: 1, DType.I8: 8, DType.I16: 16, DType.I32: 32, DType.I64: 64}


@dataclass(frozen=True)
class Buffer:
    """Host memory NumPy does not describe (bf16, f8, memory from another library): its address,
    its size in bytes (0: unknown) and its element type. The caller keeps it alive."""
    address: int
    nbytes: int
    dtype: DType


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
    """What tri_kernel_compile is told: the target ("cpu" or "interp"), checked mode (interp
    only), constexpr values by name, and alignment/divisibility promises by runtime parameter
    index. A plain value: each compile makes its own C options object, so one CompileOptions
    may be shared between threads."""
    target: str = "cpu"
    checked: bool = False
    constexprs: Mapping[str, Union[int, float, bool]] = field(default_factory=dict)
    arg_align: Mapping[int, int] = field(default_factory=dict)
    arg_divisible: Mapping[int, int] = field(default_factory=dict)


class _Handle:
    """A C handle that may be closed while other threads use it: close() marks it closed at once
    and the handle is destroyed when the last call using it returns."""

    __slots__ = ("_ptr", "_destroy", "_what", "_lock", "_busy", "_closed")

    def __init__(self, ptr: int, destroy: Callable[[int], None], what: str):
        self._ptr, self._destroy, self._what = ptr, destroy, what
        self._lock = threading.Lock()
        self._busy = 0
        self._closed = False

    def acquire(self) -> int:
        with self._lock:
            if self._closed:
                raise TriError(C.TRI_ERROR_INVALID_ARGUMENT,
                               f"{self._what} is closed (close() or its with-block ended); make a new one")
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
    from any thread that uses the context; `cache_dir` is the compiled-kernel cache folder."""

    def __init__(self, log: Optional[Callable[[LogLevel, str], None]] = None, log_level: LogLevel = LogLevel.WARNING,
                 cache_dir: Optional[Union[str, os.PathLike]] = None):
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
            ctx = _out_handle()
            _check(_lib.tri_context_create(opts, C.TRI_VERSION_NUMBER, ctypes.byref(ctx)))
        finally:
            _lib.tri_context_options_destroy(opts)
        self._h = _Handle(ctx.value, _lib.tri_context_destroy, "context")

    def module(self, source: Union[bytes, bytearray, memoryview, str], name: Optional[str] = None) -> "Module":
        """A module from IR text (str or bytes) or binary IR (bytes)."""
        return Module(self, source, name)

    def load(self, path: Union[str, os.PathLike]) -> "Module":
        """A module from a file of IR text or binary IR."""
        return Module.from_file(self, path)


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

    def _blob(self, fn) -> bytes:
        out = _out_handle()
        m = self._h.acquire()
        try:
            _check(fn(m, ctypes.byref(out)))
        finally:
            self._h.release()
        return _blob_bytes(out)

    def to_text(self) -> str:
        """The module as canonical IR text."""
        return self._blob(_lib.tri_module_to_text).decode()

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
        m = self._h.acquire()
        try:
            index = ctypes.c_uint32()
            _check(_lib.tri_module_find_function(m, name.encode(), ctypes.byref(index)))
            return self._function(m, index.value)
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
        (target="interp", checked=True, constexprs={"BLOCK": 256})."""
        if options is not None and kwargs:
            raise TypeError("compile() takes a CompileOptions or keyword options, not both")
        return Kernel(self, name, options or CompileOptions(**kwargs))


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
    except BaseException:
        _lib.tri_compile_options_destroy(opts)
        raise
    return opts


GridLike = Union[int, Sequence[int]]


class Kernel(_Owner):
    """A kernel compiled for one target and specialization. Launch it with
    `kernel.launch(grid, *args)` or `kernel[grid](*args)`: NumPy arrays for pointers (the
    array's dtype must be the pointee's), Python numbers for scalars. It keeps its module and
    context alive and may be launched from several threads at once."""

    def __init__(self, module: Module, name: str, options: CompileOptions):
        self.module = module
        self.name = name
        self.options = options
        self._target = options.target  # as compiled, whatever happens to `options` later
        opts = _make_options(options)
        out = _out_handle()
        m = module._h.acquire()
        try:
            _check(_lib.tri_kernel_compile(m, name.encode(), opts, ctypes.byref(out)))
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

    @property
    def arg_count(self) -> int:
        return len(self.params)

    def to_text(self) -> str:
        """The specialized IR the kernel was compiled from."""
        out = _out_handle()
        k = self._h.acquire()
        try:
            _check(_lib.tri_kernel_to_text(k, ctypes.byref(out)))
        finally:
            self._h.release()
        return _blob_bytes(out).decode()

    def _where(self, i: int, p: Param) -> str:
        return f"argument {i} (%{p.name}) of kernel @{self.name} is {p.type_text}"

    def _arg(self, i: int, p: Param, value: Any, keep: List[Any]) -> C.Arg:
        a = C.Arg()
        a.dtype = int(p.dtype)
        if p.type_kind == TypeKind.POINTER:
            a.kind = C.TRI_TYPE_POINTER
            if isinstance(value, np.ndarray):
                got = _NUMPY_DTYPES.get(value.dtype)
                if got != p.dtype:
                    raise TriError(C.TRI_ERROR_LAUNCH_ARGS,
                                   f"{self._where(i, p)}, so it takes an array of {p.dtype.ir_name}, "
                                   f"but an array of {value.dtype} was given")
                if not value.flags.c_contiguous:
                    raise TriError(C.TRI_ERROR_LAUNCH_ARGS,
                                   f"{self._where(i, p)}, but the array given is not contiguous "
                                   "(pass numpy.ascontiguousarray(a))")
                a.value.p = value.ctypes.data
                a.extent = value.nbytes
                keep.append(value)
            elif isinstance(value, Buffer):
                if value.dtype != p.dtype:
                    raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"{self._where(i, p)}, but a Buffer of "
                                                            f"{value.dtype.ir_name} was given")
                a.value.p = value.address
                a.extent = value.nbytes
            elif hasattr(value, "__cuda_array_interface__") or hasattr(value, "__dlpack__"):
                raise TriError(C.TRI_ERROR_UNSUPPORTED,
                               f"{self._where(i, p)}, but a device array was given: device buffers need the "
                               "\"cuda\" target, which this package does not launch yet; pass a NumPy array")
            else:
                raise TriError(C.TRI_ERROR_LAUNCH_ARGS,
                               f"{self._where(i, p)}, so it takes a NumPy array (or tri.Buffer), "
                               f"but {type(value).__name__} was given")
            return a
        if p.type_kind != TypeKind.SCALAR:
            raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"{self._where(i, p)}, which a launch cannot pass")
        a.kind = C.TRI_TYPE_SCALAR
        if p.dtype.is_float:
            if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
                raise TriError(C.TRI_ERROR_LAUNCH_ARGS,
                               f"{self._where(i, p)}, so it takes a number, but {type(value).__name__} was given")
            a.value.f = float(value)
            return a
        if not isinstance(value, (int, np.integer)):
            raise TriError(C.TRI_ERROR_LAUNCH_ARGS,
                           f"{self._where(i, p)}, so it takes an int, but {type(value).__name__} was given")
        v, bits = int(value), _INT_BITS[p.dtype]
        lo, hi = (0, 1) if bits == 1 else (-(1 << (bits - 1)), (1 << bits) - 1)
        if not lo <= v <= hi:
            raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"{self._where(i, p)}, and {v} does not fit in it")
        a.value.i = v - (1 << 64) if v >= (1 << 63) else v
        return a

    def launch(self, grid: GridLike, *args: Any) -> None:
        """Runs the kernel over `grid` (an int or 1 to 3 ints) and returns when it has finished."""
        dims = (grid,) if isinstance(grid, (int, np.integer)) else tuple(grid)
        if not 1 <= len(dims) <= 3 or not all(isinstance(d, (int, np.integer)) and 0 <= d < (1 << 32) for d in dims):
            raise TriError(C.TRI_ERROR_INVALID_ARGUMENT,
                           f"grid {grid!r}: give 1 to 3 counts of program instances, each in 0..2^32-1")
        gx, gy, gz = (tuple(int(d) for d in dims) + (1, 1))[:3]
        if self._target not in _HOST_TARGETS:
            raise TriError(C.TRI_ERROR_UNSUPPORTED,
                           f"kernel @{self.name} was compiled for target \"{self._target}\"; this package "
                           "launches host targets only (\"cpu\", \"interp\"), with host arrays")
        if len(args) != len(self.params):
            sig = ", ".join(f"%{p.name}: {p.type_text}" for p in self.params)
            raise TriError(C.TRI_ERROR_LAUNCH_ARGS, f"kernel @{self.name} takes {len(self.params)} arguments "
                                                    f"({sig}), but {len(args)} were given")
        keep: List[Any] = []  # the arrays, alive until the call returns
        raw = (C.Arg * max(len(args), 1))()
        for i, (p, value) in enumerate(zip(self.params, args)):
            raw[i] = self._arg(i, p, value, keep)
        k = self._h.acquire()
        try:
            # ctypes drops the GIL for the call, so launches from several threads run at once.
            _check(_lib.tri_launch(k, gx, gy, gz, None, raw, len(args)))
        finally:
            self._h.release()

    def __getitem__(self, grid: GridLike) -> Callable[..., None]:
        """Triton's form: kernel[grid](*args)."""
        return lambda *args: self.launch(grid, *args)
