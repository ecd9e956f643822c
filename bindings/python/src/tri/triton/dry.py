"""Dry runs: Triton's runtime with no GPU, for capture(dry_run=True). Triton's active driver
becomes DryDriver, which names an explicit target (cuda sm_ARCH) and a device number no GPU has, and answers the
autotuner's benchmarks with one launch each and equal times (so it takes the first config), and each compiled kernel
is given DryLauncher instead of the CUDA launcher: Triton's own binder, specialization and
compiler (ptxas included) run as they do on a GPU, and each launch runs on Tri's reference
interpreter in checked mode on host memory (tri.triton.HostTensor, torch CPU tensors), from the
TTIR Triton compiled. The program's later kernels see those results, and a capture keeps them as
each launch's expected outputs ("tri interp (dry run)" in the manifest). Everything is undone
when the capture ends: the driver, the kernels' launchers, the JIT functions' caches.
"""

from typing import Any, Callable, Dict, List, Sequence

from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase
from triton.compiler.compiler import CompiledKernel
from triton.runtime.driver import driver

from .. import Context, TriError
from .capture import DryLaunchError, describe
from .launches import Failure, Launch, compile_kernel, tri_arguments, tri_module

# The device number DryDriver reports: not one a GPU has, so that the JIT functions' caches
# (keyed by device) keep the dry run's binders and kernels apart from any made for a real GPU
# in the same process.
DRY_DEVICE = 1 << 16
# What DryDriver says of its device (an H100's numbers; only Triton's heuristics read them).
_PROPERTIES = {"max_shared_mem": 232448, "multiprocessor_count": 132, "max_num_regs": 65536, "warpSize": 32,
               "max_threads_per_block": 1024, "sm_clock_rate": 1980000, "mem_clock_rate": 2619000,
               "mem_bus_width": 5120}


class _Utils:
    def get_device_properties(self, device: int) -> Dict[str, int]:
        return dict(_PROPERTIES)

    def load_binary(self, name, kernel, shared, device):
        raise DryLaunchError("a dry run loads no binary")


def _no_timing(fn: Callable, quantiles: Sequence[float] = (), **kwargs: Any):
    """The autotuner's benchmark in a dry run: one launch (on the interpreter, as a GPU's
    benchmark launches run), and every config takes 1 ms, so the first is chosen."""
    fn()
    return [1.0] * len(quantiles) if quantiles else 1.0


class DryDriver(DriverBase):
    """Triton's driver interface for a GPU that is not there."""

    def __init__(self, arch: int):
        self.arch = arch
        self.utils = _Utils()
        self.launcher_cls = None

    @staticmethod
    def is_active() -> bool:
        return False

    def get_current_target(self) -> GPUTarget:
        return GPUTarget("cuda", self.arch, 32)

    def get_current_device(self) -> int:
        return DRY_DEVICE

    def set_current_device(self, device: int) -> None:
        pass

    def get_current_stream(self, device: int = DRY_DEVICE) -> int:
        return 0

    def get_device_capability(self, device: int = DRY_DEVICE):
        return (self.arch // 10, self.arch % 10)

    def get_active_torch_device(self):
        raise DryLaunchError("a dry run has no torch device")

    def get_device_interface(self):
        raise DryLaunchError("a dry run has no device interface")

    def map_python_to_cpp_type(self, ty: str) -> str:
        return ty

    def get_benchmarker(self):
        return _no_timing

    def get_empty_cache_for_benchmark(self):
        return None

    def clear_cache(self, cache) -> None:
        pass


class DryLauncher:
    """Stands in for Triton's CUDA launcher of one compiled kernel: runs the launch on Tri's
    interpreter (checked), or raises DryLaunchError saying why it cannot."""

    def __init__(self, compiled: Any, context: Context):
        self.compiled = compiled
        self.context = context
        self.kernel = None

    def __call__(self, *call: Any) -> None:
        try:
            launch, views = describe(self.compiled, call)
            if launch.error:
                raise DryLaunchError(launch.error)
            if self.kernel is None:
                self.kernel = compile_kernel(tri_module(self.context, launch), launch, "interp")
            args = tri_arguments(self.kernel, launch, [v.base for v in views], device=False)
            self.kernel.launch(launch.grid, *args)
        except Failure as e:
            raise DryLaunchError(f"Tri's interpreter cannot run it ({e.stage}): {e.message}") from None
        except TriError as e:
            raise DryLaunchError(f"Tri's interpreter failed: {e.message}") from None


def is_active() -> bool:
    """Whether Triton's runtime is dry now (a dry-run capture is running)."""
    return isinstance(driver._active, DryDriver)


def install(arch: int) -> Callable[[List[Launch]], None]:
    """Makes Triton's runtime dry; returns what undoes it, given the launches recorded (whose
    kernels and JIT functions get their GPU state back)."""
    context = Context(cache_dir="")
    previous = driver._active
    init_handles = CompiledKernel.__dict__["_init_handles"]
    touched: List[Any] = []

    def dry_init_handles(self):
        if self.module is not None:
            return
        self.module = "dry run"
        self.function = None
        self._run = DryLauncher(self, context)
        touched.append(self)

    driver.set_active(DryDriver(arch))
    CompiledKernel._init_handles = dry_init_handles

    def undo(launches: List[Launch]) -> None:
        CompiledKernel._init_handles = init_handles
        driver._active = previous
        for compiled in touched:
            compiled.module = compiled.function = compiled._run = None
            fn = getattr(compiled.src, "fn", None)
            if fn is not None:
                fn.device_caches.pop(DRY_DEVICE, None)  # binders and kernels made for the dry target
        for launch in launches:
            launch.compiled = None  # no GPU can run these
        context.close()
    return undo
