"""Memory and streams from other libraries: what a launch argument points at and where it lives.

- `__cuda_array_interface__` (CuPy, PyTorch, Numba; versions 0 to 3): the device pointer, the
  element type, the layout and, from version 3, the stream the producer works on.
- DLPack (`__dlpack__` / `__dlpack_device__`: PyTorch, CuPy, JAX, NumPy 1.22+): the capsule is
  asked for with the stream the kernel will run on, so the producer makes the data ready there
  (the array API's protocol); the capsule is kept, unconsumed, until the launch (or the plan) no
  longer needs the memory, and its own destructor gives the tensor back.
- Streams: an int (a CUstream handle; 0 the default stream), or an object with `cuda_stream`
  (torch.cuda.Stream), `__cuda_stream__()` (the CUDA Python protocol), `ptr` (cupy.cuda.Stream)
  or `handle`.

Where a v3 `__cuda_array_interface__` names a stream other than the launch's, the launch's stream
is made to wait for it with a CUDA event (cuEventRecord + cuStreamWaitEvent through libcuda,
loaded with ctypes only when this happens): nothing blocks the host.
"""

import ctypes
import os
import threading
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

# DLPack device types (dlpack.h, DLDeviceType).
DL_CPU = 1
DL_CUDA = 2
DL_CUDA_HOST = 3
DL_CUDA_MANAGED = 13
_DL_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA host", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 10: "ROCm",
             11: "ROCm host", 13: "CUDA managed", 14: "oneAPI"}

# Stream values of the protocols: CU_STREAM_LEGACY and CU_STREAM_PER_THREAD are these handles.
STREAM_LEGACY = 1
STREAM_PER_THREAD = 2


@dataclass
class View:
    """One pointer argument: the address, the size in bytes, what the memory is, its element
    type as NumPy names it (None when NumPy has no name for it: bf16), and the objects that
    must stay alive while the address is in use."""
    address: int
    nbytes: int
    device: bool
    np_dtype: Optional[Any]  # numpy.dtype
    dl_dtype: Optional[Tuple[int, int]]  # DLPack (code, bits) when the view came from DLPack
    keep: Tuple[Any, ...]
    stream: Optional[int] = None  # a v3 __cuda_array_interface__'s stream (1: legacy default)
    origin: str = ""


class NotAView(Exception):
    """The object describes no memory this module understands."""


class BadView(Exception):
    """The object describes memory a launch cannot pass (non-contiguous, masked, a lane type)."""


def _contiguous(shape, strides, itemsize) -> bool:
    if strides is None:
        return True
    expect = itemsize
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim != 1 and stride != expect:
            return False
        expect *= dim
    return True


def _count(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def from_cai(value: Any) -> View:
    """A view of an object with __cuda_array_interface__; NotAView when it has none."""
    import numpy as np

    try:
        cai = value.__cuda_array_interface__
    except AttributeError as e:
        raise NotAView(str(e)) from None
    if not isinstance(cai, dict):
        raise BadView(f"its __cuda_array_interface__ is a {type(cai).__name__}, not a dict")
    if cai.get("mask") is not None:
        raise BadView("it is a masked array (__cuda_array_interface__ 'mask'), which a kernel cannot read")
    try:
        dtype = np.dtype(cai["typestr"])
        shape = tuple(int(d) for d in cai["shape"])
        address = int(cai["data"][0] or 0)
    except (KeyError, TypeError, ValueError) as e:
        raise BadView(f"its __cuda_array_interface__ is malformed ({e})") from None
    strides = cai.get("strides")
    if not _contiguous(shape, strides, dtype.itemsize):
        raise BadView("it is not contiguous (pass a contiguous copy, e.g. x.contiguous())")
    stream = cai.get("stream") if int(cai.get("version", 0)) >= 3 else None
    if stream is not None:
        stream = int(stream)
        if stream == 0:
            raise BadView("its __cuda_array_interface__ names stream 0, which the protocol forbids "
                          "(1 is the legacy default stream, 2 the per-thread one)")
    return View(address, _count(shape) * dtype.itemsize, True, dtype, None, (value,), stream,
                "__cuda_array_interface__")


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

# DLPack type codes (DLDataTypeCode) and sizes, as NumPy names them.
_DL_INT, _DL_UINT, _DL_FLOAT, _DL_BFLOAT = 0, 1, 2, 4


def dlpack_device(value: Any) -> Tuple[int, int]:
    """(device type, device id) of an object with __dlpack_device__; NotAView without."""
    try:
        fn = value.__dlpack_device__
    except AttributeError as e:
        raise NotAView(str(e)) from None
    dev = fn()
    return int(dev[0]), int(dev[1])


def dl_device_name(device_type: int) -> str:
    return _DL_NAMES.get(device_type, f"device type {device_type}")


def from_dlpack(value: Any, stream: Optional[int]) -> View:
    """A view of an object with __dlpack__. `stream` is the CUDA stream the memory will be used
    on (None for host memory): the producer makes the data ready there."""
    import numpy as np

    device_type, _ = dlpack_device(value)
    if stream is None:
        capsule = value.__dlpack__()
    else:
        # The array API's values: 1 is the legacy default stream; 0 is not allowed.
        capsule = value.__dlpack__(stream=stream if stream not in (0, None) else STREAM_LEGACY)
    try:
        address = _capsule_pointer(capsule, b"dltensor")
    except ValueError as e:  # a used or versioned capsule
        raise BadView(f"its __dlpack__ gave a capsule this package cannot read ({e})") from None
    t = _DLTensor.from_address(address)  # DLManagedTensor begins with its DLTensor
    if t.dtype.lanes != 1:
        raise BadView(f"its elements are vectors of {t.dtype.lanes} lanes")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    code, bits = int(t.dtype.code), int(t.dtype.bits)
    itemsize = (bits + 7) // 8
    strides = None if not t.strides else tuple(t.strides[i] * itemsize for i in range(t.ndim))
    if not _contiguous(shape, strides, itemsize):
        raise BadView("it is not contiguous (pass a contiguous copy, e.g. x.contiguous())")
    np_dtype = None
    kind = {_DL_INT: "i", _DL_UINT: "u", _DL_FLOAT: "f"}.get(code)
    if kind and bits in (8, 16, 32, 64) and not (kind == "f" and bits == 8):
        np_dtype = np.dtype(f"{kind}{itemsize}")
    base = t.data or 0
    address = base + int(t.byte_offset) if base else 0
    device = device_type in (DL_CUDA, DL_CUDA_MANAGED)
    # The capsule holds the tensor: kept unconsumed, its destructor calls the tensor's deleter.
    return View(address, _count(shape) * itemsize, device, np_dtype, (code, bits), (value, capsule), None,
                f"DLPack ({dl_device_name(device_type)})")


def stream_handle(stream: Any) -> int:
    """The CUstream handle an argument names (see the module's docstring); 0 is the default
    stream. TypeError for anything else."""
    if stream is None:
        return 0
    if isinstance(stream, bool):
        raise TypeError("a bool is not a stream")
    if isinstance(stream, int):
        if stream < 0:
            raise TypeError(f"stream handle {stream} is negative")
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        got = proto()
        return stream_handle(int(got[1]))
    for attr in ("cuda_stream", "ptr", "handle"):
        h = getattr(stream, attr, None)
        if h is not None:
            return stream_handle(int(h))
    raise TypeError(f"{type(stream).__name__} is not a stream: give an int (a CUstream handle) or an object with "
                    "cuda_stream (torch.cuda.Stream), ptr (cupy.cuda.Stream) or __cuda_stream__")


def same_stream(a: int, b: int) -> bool:
    """Whether two handles are one stream (0 and 1 both name the legacy default stream)."""
    legacy = (0, STREAM_LEGACY)
    return a == b or (a in legacy and b in legacy)


# ---- Ordering one stream after another through the driver (only for v3 CAI streams)

class _Driver:
    _lock = threading.Lock()
    _lib: Optional[ctypes.CDLL] = None

    @classmethod
    def get(cls) -> ctypes.CDLL:
        with cls._lock:
            if cls._lib is None:
                name = os.environ.get("TRI_LIBCUDA") or "libcuda.so.1"
                lib = ctypes.CDLL(name)
                vp, pvp = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
                protos = {
                    "cuCtxGetCurrent": [pvp],
                    "cuStreamGetCtx": [vp, pvp],
                    "cuCtxPushCurrent_v2": [vp],
                    "cuCtxPopCurrent_v2": [pvp],
                    "cuEventCreate": [pvp, ctypes.c_uint],
                    "cuEventRecord": [vp, vp],
                    "cuStreamWaitEvent": [vp, vp, ctypes.c_uint],
                    "cuEventDestroy_v2": [vp],
                }
                for fn, args in protos.items():
                    f = getattr(lib, fn)
                    f.restype = ctypes.c_int
                    f.argtypes = args
                cls._lib = lib
            return cls._lib


def _cu(result: int, what: str) -> None:
    if result != 0:
        raise RuntimeError(f"{what} failed with CUDA error {result}")


def stream_wait(consumer: int, producer: int) -> None:
    """Makes `consumer` wait, on the device, for the work queued on `producer` so far."""
    cu = _Driver.get()
    current = ctypes.c_void_p()
    _cu(cu.cuCtxGetCurrent(ctypes.byref(current)), "cuCtxGetCurrent")
    ctx = ctypes.c_void_p()
    pushed = False
    # The event is made and recorded in the producer stream's context.
    if producer not in (0, STREAM_LEGACY, STREAM_PER_THREAD) and cu.cuStreamGetCtx(producer, ctypes.byref(ctx)) == 0:
        if ctx.value != current.value:
            _cu(cu.cuCtxPushCurrent_v2(ctx), "cuCtxPushCurrent")
            pushed = True
    elif not current.value:
        raise RuntimeError("no CUDA context is current on this thread to order the default stream in")
    try:
        event = ctypes.c_void_p()
        _cu(cu.cuEventCreate(ctypes.byref(event), 2), "cuEventCreate")  # CU_EVENT_DISABLE_TIMING
        try:
            _cu(cu.cuEventRecord(event, producer), "cuEventRecord")
            _cu(cu.cuStreamWaitEvent(consumer, event, 0), "cuStreamWaitEvent")
        finally:
            cu.cuEventDestroy_v2(event)  # released once the wait is done with it
    finally:
        if pushed:
            cu.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))


def wait_all(consumer: int, producers: List[int]) -> None:
    for p in producers:
        stream_wait(consumer, p)
