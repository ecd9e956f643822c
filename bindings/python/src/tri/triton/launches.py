"""What a capture knows about one Triton launch, wherever its data lives: the kernel and the
specialization Triton compiled, the launch configuration and grid, and every parameter by name,
tensors as views into storages so that aliasing is explicit. capture.py fills these in from
Triton's runtime, saved.py writes them as a manifest and reads them back, replay.py and dry.py run
them through Tri. The steps Tri takes for a launch (its module from the TTIR, the compile options,
the argument list tri_launch takes) are here, once. Nothing here needs Triton or PyTorch.
"""

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import Buffer, CompileOptions, Context, DevicePtr, FunctionKind, Kernel, Module, TriError, TypeKind

# Triton's element type names (its signature's "*fp32" without the "*") -> (bytes, Tri's dtype, or
# None where Tri has no such type). Triton's integers are signed or not; Tri's are signless.
TRITON_DTYPES: Dict[str, Tuple[int, Optional[str]]] = {
    "u1": (1, "i1"), "i1": (1, "i1"),
    "i8": (1, "i8"), "u8": (1, "i8"), "i16": (2, "i16"), "u16": (2, "i16"),
    "i32": (4, "i32"), "u32": (4, "i32"), "i64": (8, "i64"), "u64": (8, "i64"),
    "fp16": (2, "f16"), "bf16": (2, "bf16"), "fp32": (4, "f32"), "fp64": (8, "f64"),
    "fp8e4nv": (1, "f8e4m3"), "fp8e5": (1, "f8e5m2"),
    "fp8e4b15": (1, None), "fp8e4b8": (1, None), "fp8e5b16": (1, None),
}

# Launch kinds of parameters.
TENSOR, SCALAR, CONSTEXPR, SPECIALIZED, UNSUPPORTED = "tensor", "scalar", "constexpr", "specialized", "unsupported"
DESCRIPTOR = "descriptor"
VIEWS = (TENSOR, DESCRIPTOR)  # the kinds that view a storage


def pointee(triton_type: str) -> str:
    """The element type of a Triton pointer type: "*fp32" and "*kfp32" (const) -> "fp32"."""
    t = triton_type[1:]
    return t[1:] if t.startswith("k") and t[1:] in TRITON_DTYPES else t


def itemsize(dtype: str) -> int:
    return TRITON_DTYPES[dtype][0] if dtype in TRITON_DTYPES else 1


def descriptor_dtype(triton_type: str) -> str:
    """The element type of a Triton descriptor type: "tensordesc<fp16[128, 64]>" -> "fp16"."""
    return triton_type[len("tensordesc<"):].split("[", 1)[0]


def tri_dtype(dtype: str) -> Optional[str]:
    """Tri's name of a Triton element type ("fp32" -> "f32"), None if Tri has none."""
    return TRITON_DTYPES[dtype][1] if dtype in TRITON_DTYPES else None


@dataclass
class Arg:
    """One parameter of the Triton kernel at one launch. kind: TENSOR (a view of storage
    `storage`: shape and strides in elements of `dtype`, the first element at `byte_offset`),
    DESCRIPTOR (a host-side TensorDescriptor: its base is a view of `storage` at `byte_offset`,
    its `shape`, `strides`, `block_shape` and `padding` are the descriptor's; Tri takes it as
    the base pointer, then the shape and strides, docs/import.md), SCALAR (`value`), CONSTEXPR (a
    tl.constexpr parameter: `value`), SPECIALIZED (a runtime parameter Triton compiled as a
    constant, such as an int equal to 1 or None: `value`) or UNSUPPORTED (`note` says why).
    `type` is Triton's ("*fp32", "tensordesc<fp16[128, 64]>", "i32", "fp32", "constexpr")."""
    name: str
    kind: str
    type: str
    value: Any = None
    dtype: str = ""
    shape: Tuple[int, ...] = ()
    strides: Tuple[int, ...] = ()
    byte_offset: int = 0
    storage: int = -1
    block_shape: Tuple[int, ...] = ()
    padding: str = "zero"
    framework_dtype: str = ""  # what the program passed, e.g. "torch.bfloat16"
    note: str = ""
    raw: Any = None  # the live value (in-process only), for launching Triton again

    @property
    def is_runtime(self) -> bool:
        """Whether the TTIR (and so Tri's kernel) has this parameter."""
        return self.kind in (TENSOR, DESCRIPTOR, SCALAR, UNSUPPORTED)

    @property
    def storage_offset(self) -> int:
        return self.byte_offset // itemsize(self.dtype)

    def describe(self) -> str:
        if self.kind == TENSOR:
            return f"{self.dtype}[{','.join(map(str, self.shape))}]"
        if self.kind == DESCRIPTOR:
            return f"{self.dtype}[{','.join(map(str, self.shape))}]/[{','.join(map(str, self.block_shape))}]"
        return f"{self.name}={self.value!r}"


@dataclass
class Storage:
    """The memory behind one or more tensor arguments of a launch: `nbytes` bytes on `device`.
    `before` and `after` are copies of all of it before and after Triton's launch (a NumPy uint8
    array, a torch uint8 tensor on the device, or a Path to a .npy file), or None when not kept."""
    nbytes: int
    device: str
    before: Any = None
    after: Any = None


@dataclass
class Launch:
    """One launch (the first of `count` alike: same kernel, specialization, grid and tensor
    shapes). `ttir` is the TTIR Triton compiled, or `ir_path` the file it was saved as (.tri;
    .ttir where Tri could not import it).
    `outputs_from` says who computed Storage.after: "triton" (the program's own launch) or
    "tri interp" (a dry run, docs/import.md). `error` says why the capture could not record it."""
    kernel: str
    source: str
    grid: Tuple[int, int, int]
    args: List[Arg]
    storages: List[Storage] = field(default_factory=list)
    num_warps: int = 4
    num_stages: int = 3
    num_ctas: int = 1
    options: Dict[str, Any] = field(default_factory=dict)
    target: Dict[str, Any] = field(default_factory=dict)
    divisibility: List[str] = field(default_factory=list)
    ttir: Optional[str] = None
    ir_path: Optional[Path] = None
    triton_version: str = ""
    count: int = 1
    outputs_from: Optional[str] = None
    error: Optional[str] = None
    compiled: Any = None  # Triton's CompiledKernel (in-process only)
    digest: Optional[str] = None  # what identifies the compiled kernel (Triton's hash of it)

    def by_name(self) -> Dict[str, Arg]:
        return {a.name: a for a in self.args}

    @property
    def constexprs(self) -> Dict[str, Any]:
        return {a.name: a.value for a in self.args if a.kind == CONSTEXPR}

    @property
    def specialized(self) -> Dict[str, Any]:
        return {a.name: a.value for a in self.args if a.kind == SPECIALIZED}

    @property
    def runtime_args(self) -> List[Arg]:
        return [a for a in self.args if a.is_runtime]

    def label(self) -> str:
        """The tensors' types and shapes, each different one once: "bf16[4096,4096] fp32[4096]";
        the scalars when there is no tensor."""
        seen: List[str] = []
        for a in self.args:
            if a.kind in VIEWS and a.describe() not in seen:
                seen.append(a.describe())
        if not seen:
            seen = [a.describe() for a in self.args if a.kind == SCALAR]
        return " ".join(seen) or "-"

    def key(self) -> Tuple:
        """What makes two launches alike: the compiled kernel, the grid, each tensor's (and
        descriptor's) type, shape, strides, storage (aliasing) and 16-byte alignment."""
        tensors = tuple((a.name, a.dtype, a.shape, a.strides, a.storage, a.byte_offset % 16, a.block_shape)
                        for a in self.args if a.kind in VIEWS)
        consts = tuple((a.name, repr(a.value)) for a in self.args if a.kind in (CONSTEXPR, SPECIALIZED))
        return (self.kernel, self.source, self.ir_digest(), self.grid, tensors, consts, self.num_warps,
                self.num_stages, self.num_ctas)

    def ir_digest(self) -> str:
        if self.digest is not None:
            return self.digest
        if self.ttir is not None:
            return hashlib.sha256(self.ttir.encode()).hexdigest()[:16]
        return str(self.ir_path)


# ---------------------------------------------------------------- Tri's side of a launch

class Failure(Exception):
    """A step of a replay that failed: `stage` ("import", "compile", "launch", "compare", ...)
    and `message` (for Tri's errors, the library's message, which names the place)."""

    def __init__(self, stage: str, message: str):
        self.stage, self.message = stage, message
        super().__init__(f"{stage}: {message}")


def tri_module(ctx: Context, launch: Launch, name: Optional[str] = None) -> Module:
    """Tri's module of the launch's kernel: its TTIR imported, or its saved .tri read."""
    try:
        if launch.ir_path is not None:
            return ctx.load(launch.ir_path)
        if launch.ttir is None:
            raise Failure("import", "the launch has neither TTIR nor a .tri file")
        return ctx.module(launch.ttir, name or f"{launch.kernel}.ttir")
    except TriError as e:
        raise Failure("import", e.message) from None


def kernel_name(module: Module, launch: Launch) -> str:
    """The kernel of the module that Triton launched (its TTIR's public function)."""
    kernels = [f.name for f in module.functions if f.kind == FunctionKind.KERNEL]
    if launch.kernel in kernels:
        return launch.kernel
    if len(kernels) == 1:
        return kernels[0]
    raise Failure("import", f"the module has kernels {', '.join(kernels) or 'none'}, none named {launch.kernel}")


def compile_options(launch: Launch, target: str) -> CompileOptions:
    """Triton's launch configuration as Tri's options: num_warps and num_stages on "cuda";
    checked mode on "interp" (out-of-bounds lanes and broken argument facts are errors)."""
    if target == "cuda":
        return CompileOptions(target="cuda", num_warps=launch.num_warps, num_stages=launch.num_stages)
    return CompileOptions(target=target, checked=target == "interp")


def compile_kernel(module: Module, launch: Launch, target: str) -> Kernel:
    name = kernel_name(module, launch)
    try:
        kernel = module.compile(name, compile_options(launch, target))
    except TriError as e:
        raise Failure("compile", e.message) from None
    check_parameters(kernel, launch)
    return kernel


def tri_slots(launch: Launch) -> List[Tuple[Arg, Optional[Tuple[str, int]]]]:
    """Tri's parameters for the launch's runtime parameters, in order: (arg, None) for each, and
    after a DESCRIPTOR (arg, ("shape", d)) and (arg, ("stride", d)) for each dimension d, the
    parameters its shape and strides are passed in (docs/import.md, "Tensor descriptors")."""
    out: List[Tuple[Arg, Optional[Tuple[str, int]]]] = []
    for a in launch.runtime_args:
        out.append((a, None))
        if a.kind == DESCRIPTOR:
            out += [(a, ("shape", d)) for d in range(len(a.shape))] + [(a, ("stride", d)) for d in range(len(a.shape))]
    return out


def slot_value(a: Arg, part: Optional[Tuple[str, int]]) -> int:
    """A descriptor's shape or stride that Tri takes in the slot `part` of tri_slots."""
    return (a.shape if part[0] == "shape" else a.strides)[part[1]]


def check_parameters(kernel: Kernel, launch: Launch) -> None:
    """Tri's kernel takes the launch's runtime parameters, by name and in order (a descriptor's
    shape and strides in the parameters after it, whose names Triton derives from its own)."""
    have = [p.name for p in kernel.params]
    slots = tri_slots(launch)
    ok = len(have) == len(slots) and all(h == a.name if part is None else h.startswith(a.name)
                                         for h, (a, part) in zip(have, slots))
    if not ok:
        want = [a.name if part is None else f"{a.name}.{part[0]}.{part[1]}" for a, part in slots]
        raise Failure("compile", f"Tri's kernel @{kernel.name} takes ({', '.join(have)}); the launch's runtime "
                                 f"parameters are ({', '.join(want)})")


def tri_arguments(kernel: Kernel, launch: Launch, bases: Sequence[int], device: bool) -> List[Any]:
    """What kernel.launch takes for the launch, with storage i at address bases[i]: each pointer
    (a tensor, or a descriptor's base) as a tri.Buffer (host) or tri.DevicePtr (device) of the
    parameter's type, its extent the rest of its storage; each scalar as its value; a
    descriptor's shape and strides after its base."""
    out: List[Any] = []
    for p, (a, part) in zip(kernel.params, tri_slots(launch)):
        if a.kind == UNSUPPORTED:
            raise Failure("arguments", f"%{p.name}: {a.note}")
        if part is not None:
            if p.type_kind == TypeKind.POINTER:
                raise Failure("arguments", f"%{p.name} is {p.type_text} in Tri's kernel, but the launch passes the "
                                           f"{part[0]} {part[1]} of descriptor '{a.name}' there")
            out.append(slot_value(a, part))
        elif p.type_kind == TypeKind.POINTER:
            if a.kind not in VIEWS:
                raise Failure("arguments", f"%{p.name} is {p.type_text} in Tri's kernel, but the launch passed "
                                           f"{a.type} {a.value!r}")
            s = launch.storages[a.storage]
            ptr = (DevicePtr if device else Buffer)(bases[a.storage] + a.byte_offset, s.nbytes - a.byte_offset,
                                                    p.dtype)
            out.append(ptr)
        else:
            if a.kind != SCALAR:
                raise Failure("arguments", f"%{p.name} is {p.type_text} in Tri's kernel, but the launch passed a "
                                           f"{a.kind} ({a.type})")
            out.append(a.value)
    return out


def aligned_copy(data: np.ndarray, align: int = 64) -> np.ndarray:
    """A copy of the bytes of `data` at an address that is a multiple of `align`, so that the
    alignment facts Triton found (16-byte pointers) hold for the copy too."""
    raw = np.empty(data.nbytes + align, np.uint8)
    start = (-raw.ctypes.data) % align
    out = raw[start:start + data.nbytes]
    out[:] = np.frombuffer(np.ascontiguousarray(data).data, np.uint8) if data.nbytes else out
    return out


def host_bytes(x: Any) -> Optional[np.ndarray]:
    """Storage bytes as a NumPy uint8 array: a NumPy array as is, a torch tensor copied to the
    host, a .npy file read."""
    if x is None:
        return None
    if isinstance(x, np.ndarray):
        return x.reshape(-1).view(np.uint8)
    if isinstance(x, (str, os.PathLike)):
        return np.load(x).reshape(-1).view(np.uint8)
    return x.detach().cpu().numpy().reshape(-1).view(np.uint8)  # torch
