"""The tensors a Triton launch is given, as a capture sees them: which storage each one views
(its base address, size and device), where in it the tensor starts, its shape and strides, and
how to copy a storage's bytes (to snapshot a launch's inputs and outputs). PyTorch tensors (on
the GPU or the CPU), Triton's reinterpret() wrappers of them, and HostTensor, a NumPy-backed
tensor that Triton's launcher accepts like a torch tensor, for dry runs on a machine without a
GPU or PyTorch (docs/import.md, "Capture and replay").
"""

from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple

import numpy as np


class DTypeName(str):
    """An element type's name as Triton reads a tensor's dtype ("float32", "bfloat16"), which
    also says its size and kind as torch's dtype does (Triton's TensorDescriptor checks them)."""

    def __new__(cls, name: str, itemsize: int, floating: Optional[bool] = None):
        self = super().__new__(cls, name)
        self.itemsize = itemsize
        self.is_floating_point = name.startswith(("float", "bfloat")) if floating is None else floating
        return self


class Address:
    """An address as a tensor-like object with data_ptr() and dtype: what a replay next to
    Triton gives Triton's TensorDescriptor as its base (the replay's copy of a storage)."""

    def __init__(self, address: int, dtype: DTypeName):
        self.address, self.dtype = address, dtype

    def data_ptr(self) -> int:
        return self.address


class HostTensor:
    """A NumPy array that Triton's launcher takes as a tensor argument: data_ptr(), dtype (a
    name Triton knows: "float32", "int32", "bfloat16", ...), shape, stride(), storage_offset()
    and element_size(), like a torch tensor; also the base of a Triton TensorDescriptor. Its storage is the array that owns the memory, so
    views of one array (HostTensor(a[8:]), HostTensor(a.T)) alias as torch views do. bf16 has no
    NumPy type: pass a uint16 array of the bit patterns with dtype="bfloat16"."""

    def __init__(self, array: np.ndarray, dtype: Optional[str] = None):
        if not isinstance(array, np.ndarray):
            raise TypeError(f"HostTensor takes a NumPy array, not {type(array).__name__}")
        self.array = array
        self.dtype = DTypeName(dtype or array.dtype.name, array.itemsize)
        if dtype == "bfloat16" and array.dtype.itemsize != 2:
            raise TypeError(f"a bfloat16 HostTensor takes an array of 2-byte elements, not {array.dtype}")
        self.shape = tuple(array.shape)

    def data_ptr(self) -> int:
        return self.array.ctypes.data

    def element_size(self) -> int:
        return self.array.itemsize

    def stride(self, dim: Optional[int] = None):
        s = tuple(b // self.array.itemsize for b in self.array.strides)
        return s if dim is None else s[dim]

    def numel(self) -> int:
        return int(self.array.size)

    def storage_array(self) -> np.ndarray:
        """The array that owns the memory this one views."""
        root = self.array
        while isinstance(root.base, np.ndarray):
            root = root.base
        return root

    def storage_offset(self) -> int:
        return (self.data_ptr() - self.storage_array().ctypes.data) // self.array.itemsize

    def numpy(self) -> np.ndarray:
        return self.array

    @property
    def T(self) -> "HostTensor":
        return HostTensor(self.array.T, self.dtype if self.dtype == "bfloat16" else None)

    def __getitem__(self, index) -> "HostTensor":
        return HostTensor(self.array[index], self.dtype if self.dtype == "bfloat16" else None)

    def __repr__(self) -> str:
        return f"HostTensor({self.dtype}{list(self.shape)})"


@dataclass
class View:
    """A tensor argument: `handle` owns storage [base, base + nbytes) on `device` ("cpu",
    "cuda:0"), and the tensor starts `byte_offset` bytes in, with `shape` and `strides` in
    elements of `elem_bytes` bytes (None where the object does not say)."""
    handle: Any
    base: int
    nbytes: int
    device: str
    byte_offset: int
    shape: Optional[Tuple[int, ...]]
    strides: Optional[Tuple[int, ...]]
    elem_bytes: int
    framework_dtype: str


class NotATensor(Exception):
    """An argument with data_ptr() whose memory a capture cannot describe or copy."""


def _is_torch_tensor(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "untyped_storage")


def view_of(value: Any) -> View:
    """The View of a tensor argument; NotATensor saying what is supported otherwise."""
    if isinstance(value, HostTensor):
        root = value.storage_array()
        if not root.flags.c_contiguous and not root.flags.f_contiguous:
            raise NotATensor("a HostTensor over memory NumPy does not own contiguously")
        return View(root, root.ctypes.data, root.nbytes, "cpu", value.data_ptr() - root.ctypes.data, value.shape,
                    value.stride(), value.element_size(), str(value.dtype))
    if _is_torch_tensor(value):
        st = value.untyped_storage()
        return View(st, st.data_ptr(), st.nbytes(), str(value.device), value.data_ptr() - st.data_ptr(),
                    tuple(value.shape), tuple(value.stride()), value.element_size(), str(value.dtype))
    base = getattr(value, "base", None)  # triton.runtime.jit.TensorWrapper (triton.reinterpret)
    if type(value).__name__ == "TensorWrapper" and base is not None:
        v = view_of(base)
        v.framework_dtype = f"{v.framework_dtype} as {value.dtype}"
        return v
    raise NotATensor(f"a {type(value).__module__}.{type(value).__name__} (capture copies torch tensors and "
                     "tri.triton.HostTensor; see docs/import.md)")


def snapshot(handle: Any) -> Any:
    """A copy of a whole storage (View.handle) as uint8: a NumPy array for host memory, a torch
    tensor on the storage's device for torch storages."""
    if isinstance(handle, np.ndarray):
        return np.frombuffer(handle.tobytes(order="A"), np.uint8).copy()
    import torch
    u8 = torch.empty(0, dtype=torch.uint8, device=handle.device)
    u8.set_(handle, 0, (handle.nbytes(),), (1,))
    return u8.clone()


def synchronize(handles: Sequence[Any]) -> None:
    """Waits for the GPU work queued on the devices of these storages (snapshots are taken in
    order with the launch whatever stream it used)."""
    import sys
    torch = sys.modules.get("torch")
    if torch is None:
        return
    devices = {h.device for h in handles if not isinstance(h, np.ndarray) and h.device.type == "cuda"}
    for d in devices:
        torch.cuda.synchronize(d)
