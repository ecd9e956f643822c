"""Memory from other libraries, checked on the CPU: DLPack host arrays launch on the host targets
(NumPy's own __dlpack__ stands in for a CPU torch tensor); __cuda_array_interface__ and DLPack
descriptions are read and refused with the argument named when a kernel cannot take them; streams
are accepted in the forms torch, CuPy and the CUDA Python protocol use; and a launch picks and
orders its stream as documented (checked in a process whose CUDA driver cannot load, where the
launch stops at the driver)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tri
from tri import _device
from conftest import EXAMPLES, HERE


class DLPackOnly:
    """An array that offers DLPack and nothing else (as a JAX or CPU torch tensor would)."""

    def __init__(self, a, device=(1, 0)):
        self._a, self._device = a, device
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._device


class CAI:
    """A __cuda_array_interface__ description with no memory behind it (nothing is launched)."""

    def __init__(self, **fields):
        self.__cuda_array_interface__ = dict({"shape": (8,), "typestr": "<f4", "data": (0, False), "version": 3},
                                             **fields)


@pytest.fixture
def gpu_kernel(ctx):
    # PTX for a named architecture: no GPU or driver is needed until the launch.
    return ctx.load(EXAMPLES / "vector_add.tri").compile("vector_add", target="cuda", arch="sm_90")


def test_dlpack_host_arrays_launch_on_the_host_targets(ctx):
    module = ctx.load(EXAMPLES / "vector_add.tri")
    x = np.arange(3000, dtype=np.float32)
    for target in ("cpu", "interp"):
        out = np.zeros_like(x)
        src = DLPackOnly(x)
        module.compile("vector_add", target=target)[3](src, DLPackOnly(x), DLPackOnly(out), 3000)
        np.testing.assert_array_equal(out, 2 * x)
        assert src.streams == [None]  # host memory: no stream asked for
    kernel = module.compile("vector_add")
    out = np.zeros_like(x)
    plan = kernel.plan(3, DLPackOnly(x.copy()), DLPackOnly(x.copy()), DLPackOnly(out), 3000)  # plan keeps capsules
    plan.launch()
    np.testing.assert_array_equal(out, 2 * x)
    cases = [
        (DLPackOnly(x.astype(np.float64)), "so it takes an array of f32, but an array of float64 was given"),
        (DLPackOnly(np.ones((8, 2), np.float32)[:, 0]), "not contiguous"),
        (DLPackOnly(x, device=(2, 0)), "device memory (DLPack (CUDA)) was given"),
        (DLPackOnly(x, device=(8, 0)), "memory (DLPack (Metal)) was given"),
        (object(), "so it takes a NumPy array (or tri.Buffer), but object was given"),
    ]
    for value, fragment in cases:
        with pytest.raises(tri.TriError) as e:
            kernel[1](value, x, out, 8)
        assert e.value.code == tri.ErrorCode.LAUNCH_ARGS, e.value
        assert "argument 0 (%x) of kernel @vector_add is ptr<f32>" in e.value.message
        assert fragment in e.value.message, e.value.message
    # A device description is refused before anything asks the producer for a capsule.
    on_gpu = DLPackOnly(x, device=(2, 0))
    with pytest.raises(tri.TriError):
        kernel[1](on_gpu, x, out, 8)
    assert on_gpu.streams == []


MASKED_COPY = """
kernel @masked_copy(%m: ptr<i1>, %x: ptr<f32>, %o: ptr<f32>) {
  %r = arange[start=0, end=64] : <64 x i32>
  %mb = splat %m : <64 x ptr<i1>>
  %mp = addptr %mb, %r : <64 x ptr<i1>>
  %keep = load %mp : <64 x i1>
  %xb = splat %x : <64 x ptr<f32>>
  %xp = addptr %xb, %r : <64 x ptr<f32>>
  %v = load %xp : <64 x f32>
  %z = const[value=0.0] : <64 x f32>
  %w = select %keep, %v, %z : <64 x f32>
  %ob = splat %o : <64 x ptr<f32>>
  %op = addptr %ob, %r : <64 x ptr<f32>>
  store %op, %w
  return
}
"""


def test_bool_arrays_are_i1(ctx):
    # An i1 element is one byte, 0 or 1, in memory: NumPy's (and torch's, CuPy's) bool. Triton
    # passes bool tensors to *i1 parameters (FlagGems' where and masked_fill do), so Tri takes them,
    # directly and through DLPack (whose bool is type code 6).
    kernel = ctx.module(MASKED_COPY, "masked_copy.tri").compile("masked_copy", target="cpu")
    rng = np.random.default_rng(3)
    m, x = rng.random(64) < 0.5, rng.standard_normal(64).astype(np.float32)
    masks = [m]
    try:
        m.__dlpack__()
        masks.append(DLPackOnly(m))
    except BufferError:  # NumPy before 1.25 exports no bool through DLPack
        pass
    for mask in masks:
        out = np.full(64, -1.0, np.float32)
        kernel[1](mask, x, out)
        np.testing.assert_array_equal(out, np.where(m, x, 0.0))
    with pytest.raises(tri.TriError) as e:
        kernel[1](m.astype(np.int32), x, np.zeros(64, np.float32))
    assert "so it takes an array of i1, but an array of int32 was given" in e.value.message


def test_device_descriptions_are_checked_before_the_launch(gpu_kernel):
    d = tri.DevicePtr(0, 32, tri.DType.F32)
    cases = [
        (CAI(typestr="<f8"), "so it takes an array of f32, but an array of float64 was given"),
        (CAI(shape=(4, 2), strides=(4, 16)), "not contiguous"),
        (CAI(mask=CAI()), "masked array"),
        (CAI(stream=0), "names stream 0"),
        (CAI(data="nope"), "malformed"),
        (tri.DevicePtr(0, 32, tri.DType.F16), "a DevicePtr of f16 was given"),
        (np.zeros(8, np.float32), "a host array was given and kernel @vector_add runs on the GPU"),
        (tri.Buffer(0, 32, tri.DType.F32), "a host Buffer was given"),
        (DLPackOnly(np.zeros(8, np.float32)), "host memory (DLPack (CPU)) was given"),
        ([0.0] * 8, "so it takes a device array (__cuda_array_interface__ or DLPack) or tri.DevicePtr"),
    ]
    for value, fragment in cases:
        with pytest.raises(tri.TriError) as e:
            gpu_kernel[1](value, d, d, 8)
        assert e.value.code == tri.ErrorCode.LAUNCH_ARGS, e.value
        assert fragment in e.value.message, e.value.message
    # Strides that are C order (or describe size-1 dimensions) are contiguous.
    assert _device.from_cai(CAI(shape=(2, 1, 4), strides=(16, 999, 4))).nbytes == 32


def test_streams_in_the_forms_libraries_use():
    class Torch:
        cuda_stream = 0x7f00

    class CuPy:
        ptr = 0x7f10

    class CudaCore:
        def __cuda_stream__(self):
            return (0, 0x7f20)

    assert [_device.stream_handle(s) for s in (None, 0, 5, Torch(), CuPy(), CudaCore())] == \
        [0, 0, 5, 0x7f00, 0x7f10, 0x7f20]
    for bad in (True, -1, "stream", 1.5):
        with pytest.raises(TypeError):
            _device.stream_handle(bad)
    assert _device.same_stream(0, 1) and _device.same_stream(7, 7) and not _device.same_stream(0, 2)


def _run_without_driver(program: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TRI_LIBCUDA="/nonexistent/libcuda.so.1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(HERE.parent / "src"), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(program)], env=env, capture_output=True, text=True)


def test_a_launch_runs_on_the_producers_stream_or_waits_for_it():
    run = _run_without_driver(f"""
        import tri
        class CAI:
            def __init__(self, stream):
                self.__cuda_array_interface__ = {{"shape": (8,), "typestr": "<f4", "data": (0, False),
                                                  "version": 3, "stream": stream}}
        ctx = tri.Context(cache_dir="")
        k = ctx.load({str(EXAMPLES / 'vector_add.tri')!r}).compile("vector_add", target="cuda", arch="sm_90")
        def outcome(*args, **kw):
            try:
                k.launch(1, *args, 8, **kw)
            except tri.TriError as e:
                return e
        # No stream given: the launch goes to the stream the array names, so nothing waits and it
        # stops at the driver (which cannot load here).
        for args, kw in [((CAI(0x55), CAI(None), CAI(0x55)), {{}}), ((CAI(1), CAI(1), CAI(1)), {{"stream": 0}}),
                         ((CAI(0x55), CAI(0x55), CAI(0x55)), {{"stream": 0x55}})]:
            e = outcome(*args, **kw)
            assert e.code == tri.ErrorCode.UNSUPPORTED and "no CUDA driver" in e.message, e
        # Another stream than the array's: the launch's stream must wait for it, through the driver.
        for args, kw, streams in [((CAI(0x55), CAI(None), CAI(None)), {{"stream": 0x77}}, "0x55"),
                                  ((CAI(0x55), CAI(0x66), CAI(0x55)), {{}}, "0x66")]:
            e = outcome(*args, **kw)
            assert e.code == tri.ErrorCode.RUNTIME and "could not order stream" in e.message, e
            assert f"after the arrays' streams {{streams}}:" in e.message and "/nonexistent" in e.message, e
        print("streams as documented")
    """)
    assert run.returncode == 0, run.stderr
    assert "streams as documented" in run.stdout
