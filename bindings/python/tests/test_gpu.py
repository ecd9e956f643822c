"""The "cuda" target on torch tensors, where a CUDA device and PyTorch are present (each test
skips with "skipped: no CUDA device" elsewhere): vector add and softmax on a non-default
torch.cuda.Stream checked against torch, prepared launches, the stream a launch runs on and the
streams it waits for (__cuda_array_interface__ v3, DLPack), device queries against torch's.

The stream tests queue a long sleep (torch.cuda._sleep) ahead of the inputs on the producer's
stream: a kernel not ordered after that work reads inputs that are not written yet, and a
kernel queued on the wrong stream leaves that stream busy or idle where it should not be. While
the sleep is pending, nothing may load a GPU module (the driver makes a module load wait for the
device): every kernel is launched once beforehand (warm), the inputs are written by a copy, and
tensors are allocated before the sleep.

    TRI_LIBRARY=build/src/libtri.so PYTHONPATH=bindings/python/src python3 -m pytest -q bindings/python/tests/test_gpu.py
"""

import os
import re
import subprocess
import sys

import pytest

import tri
from conftest import EXAMPLES, HERE

SLEEP_CYCLES = 400_000_000  # ~0.2 s on a 2 GHz GPU: far longer than any launch here


@pytest.fixture(scope="module")
def torch():
    try:
        import torch
    except ImportError:
        pytest.skip("skipped: no CUDA device")
    if not torch.cuda.is_available():
        pytest.skip("skipped: no CUDA device")
    with tri.Context(cache_dir="") as ctx:
        try:
            if ctx.device_count() == 0:
                pytest.skip("skipped: no CUDA device")
        except tri.TriError:
            pytest.skip("skipped: no CUDA device")
    torch.cuda.init()
    return torch


@pytest.fixture
def gpu(torch, tmp_path):
    with tri.Context(cache_dir=tmp_path) as ctx:
        yield ctx


def vector_add(ctx, **options):
    return ctx.load(EXAMPLES / "vector_add.tri").compile("vector_add", target="cuda", **options)


class CAIv3:
    """A torch tensor seen through __cuda_array_interface__ version 3, naming `stream` as the one
    its producer works on (as CuPy and Numba describe their arrays)."""

    def __init__(self, t, stream):
        cai = dict(t.__cuda_array_interface__)
        cai.update(version=3, stream=stream.cuda_stream)
        self.__cuda_array_interface__ = cai
        self.tensor = t


class DLPackOnly:
    def __init__(self, t):
        self.tensor = t
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.tensor.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


def warm(kernel, grid, *args):
    """Launches once and waits: a kernel's first launch in a context (and each new launch-time
    variant's) loads its module, which the driver makes wait for work already on the device; the
    stream checks below need launches that queue and return at once."""
    kernel[grid](*args)
    import torch
    torch.cuda.synchronize()


def produce(torch, stream, n, seed):
    """Inputs written on `stream` behind a long sleep: ready only when the sleep is over."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    base = torch.rand(n, device="cuda", generator=g) * 16 - 8
    with torch.cuda.stream(stream):
        x = torch.empty_like(base)
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        torch.cuda._sleep(SLEEP_CYCLES)
        x.copy_(base)  # written on `stream` after the sleep (a copy: no kernel module to load)
    return base, x


def test_devices_match_torch(gpu, torch):
    devices = gpu.devices()
    assert len(devices) == torch.cuda.device_count()
    for d in devices:
        props = torch.cuda.get_device_properties(d.index)
        assert d.name == torch.cuda.get_device_name(d.index)
        assert d.compute_capability == torch.cuda.get_device_capability(d.index)
        assert d.sm_count == props.multi_processor_count and d.warp_size == 32
        assert d.driver_version >= 11040 and d.max_ptx_version >= 70
        assert d.shared_per_block == 48 * 1024 and d.shared_per_block_optin >= d.shared_per_block


def test_vector_add_on_a_non_default_stream(gpu, torch):
    kernel = vector_add(gpu, num_warps=4)
    # The device's own architecture (sm_90a where the device has the Hopper-only features).
    assert kernel.metadata()["arch"].startswith(gpu.device(torch.cuda.current_device()).arch)
    s = torch.cuda.Stream()
    n = 1_000_003
    t = torch.empty(n, device="cuda")
    warm(kernel, (n + 1023) // 1024, t, t, t, n)
    with torch.cuda.stream(s):
        y = torch.full((n,), 0.25, device="cuda")
        out = torch.full((n,), -1.0, device="cuda")
    base, x = produce(torch, s, n, 1)
    kernel[(n + 1023) // 1024](x, y, out, n, stream=s)
    # Queued behind the sleep on s: the legacy default stream has nothing of it.
    assert not s.query() and torch.cuda.default_stream().query()
    s.synchronize()
    torch.testing.assert_close(out, base + 0.25, rtol=0, atol=0)


def test_softmax_on_a_non_default_stream(gpu, torch):
    kernel = gpu.load(EXAMPLES / "softmax.tri").compile("softmax", target="cuda", num_warps=8,
                                                        constexprs={"BLOCK": 1024})
    s = torch.cuda.Stream()
    rows, cols = 300, 1000
    t = torch.empty(rows, cols, device="cuda")
    warm(kernel, rows, t, t, cols, cols, cols)
    with torch.cuda.stream(s):
        out = torch.zeros(rows, cols, device="cuda")
    base, x = produce(torch, s, rows * cols, 2)
    kernel[rows](out, x.view(rows, cols), cols, cols, cols, stream=s)
    assert not s.query()
    s.synchronize()
    want = torch.softmax(base.view(rows, cols).double(), dim=1).float()
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-6)


def test_a_prepared_launch_on_the_gpu(gpu, torch):
    kernel = vector_add(gpu)
    s = torch.cuda.Stream()
    n = 4096
    with torch.cuda.stream(s):
        x = torch.arange(n, dtype=torch.float32, device="cuda")
        y = torch.ones(n, device="cuda")
        out = torch.zeros(n, device="cuda")
        out2 = torch.zeros(n, device="cuda")
    plan = kernel.plan(n // 1024, x, y, out, n, stream=s.cuda_stream)
    for _ in range(3):
        plan.launch()
    plan.set_arg(2, out2)
    plan.set_arg(1, x)
    plan.set_grid(n // 2048)  # the first half
    plan.launch()
    s.synchronize()
    torch.testing.assert_close(out, x + 1, rtol=0, atol=0)
    torch.testing.assert_close(out2[: n // 2], 2 * x[: n // 2], rtol=0, atol=0)
    assert (out2[n // 2:] == 0).all()
    # A device pointer from anywhere passes as tri.DevicePtr.
    ptr = tri.DevicePtr(out2.data_ptr(), out2.numel() * 4, tri.DType.F32)
    plan.set_arg(2, ptr)
    plan.set_stream(None)
    plan.set_grid(n // 1024)
    plan.launch()
    torch.cuda.synchronize()
    torch.testing.assert_close(out2, 2 * x, rtol=0, atol=0)
    # Launch-time specialization is on for "cuda": torch's allocations are aligned to 16.
    (variant,) = kernel.variants()["variants"]
    assert {c["name"] for c in variant["classes"]} == {"x", "y", "out", "n"}


def test_cai_v3_stream_is_the_default_launch_stream(gpu, torch):
    kernel = vector_add(gpu)
    s = torch.cuda.Stream()
    n = 100_000
    t = torch.empty(n, device="cuda")
    warm(kernel, (n + 1023) // 1024, t, t, t, n)
    with torch.cuda.stream(s):
        out = torch.zeros(n, device="cuda")
    base, x = produce(torch, s, n, 3)
    kernel[(n + 1023) // 1024](CAIv3(x, s), CAIv3(x, s), CAIv3(out, s), n)  # no stream given
    assert not s.query() and torch.cuda.default_stream().query()
    s.synchronize()
    torch.testing.assert_close(out, 2 * base, rtol=0, atol=0)


def test_a_launch_waits_for_the_stream_a_cai_v3_array_names(gpu, torch):
    kernel = vector_add(gpu)
    producer, consumer = torch.cuda.Stream(), torch.cuda.Stream()
    n = 100_000
    t = torch.empty(n, device="cuda")
    warm(kernel, (n + 1023) // 1024, t, t, t, n)
    with torch.cuda.stream(consumer):
        out = torch.zeros(n, device="cuda")
    base, x = produce(torch, producer, n, 4)
    plan = kernel.plan((n + 1023) // 1024, CAIv3(x, producer), CAIv3(x, producer), out, n, stream=consumer)
    kernel[(n + 1023) // 1024](CAIv3(x, producer), CAIv3(x, producer), out, n, stream=consumer)
    assert not consumer.query()  # waiting for the producer's sleep
    consumer.synchronize()
    torch.testing.assert_close(out, 2 * base, rtol=0, atol=0)
    # A plan waits at every launch: new work on the producer, then the plan.
    base_plus_one = base + 1
    torch.cuda.synchronize()
    with torch.cuda.stream(producer):
        torch.cuda._sleep(SLEEP_CYCLES)
        x.copy_(base_plus_one)
    plan.launch()
    assert not consumer.query()
    consumer.synchronize()
    torch.testing.assert_close(out, 2 * (base + 1), rtol=0, atol=0)


def test_dlpack_arrays_are_made_ready_on_the_launch_stream(gpu, torch):
    kernel = vector_add(gpu)
    producer, consumer = torch.cuda.Stream(), torch.cuda.Stream()
    n = 100_000
    t = torch.empty(n, device="cuda")
    warm(kernel, (n + 1023) // 1024, t, t, t, n)
    with torch.cuda.stream(producer):
        out = torch.zeros(n, device="cuda")
    base, x = produce(torch, producer, n, 5)
    with torch.cuda.stream(producer):
        src = DLPackOnly(x)
        # torch's __dlpack__(stream) orders that stream after torch's current one (the producer).
        kernel[(n + 1023) // 1024](src, DLPackOnly(x), DLPackOnly(out), n, stream=consumer)
    assert src.streams == [consumer.cuda_stream]
    assert not consumer.query()
    consumer.synchronize()
    torch.testing.assert_close(out, 2 * base, rtol=0, atol=0)


def test_wrong_tensors_are_refused_with_the_argument_named(gpu, torch):
    kernel = vector_add(gpu)
    x = torch.ones(64, device="cuda")
    cases = [
        (torch.ones(64, device="cuda", dtype=torch.float64), "an array of float64"),
        (torch.ones(64, 2, device="cuda")[:, 0], "not contiguous"),
        (torch.ones(64), "host memory (DLPack (CPU)) was given and kernel @vector_add runs on the GPU"),
        (torch.ones(64, device="cuda", dtype=torch.bfloat16), "bfloat16"),
    ]
    for value, fragment in cases:
        with pytest.raises(tri.TriError) as e:
            kernel[1](value, x, x, 64)
        assert e.value.code == tri.ErrorCode.LAUNCH_ARGS, e.value
        assert "argument 0 (%x) of kernel @vector_add is ptr<f32>" in e.value.message
        assert fragment in e.value.message, e.value.message
    # A CPU torch tensor is host memory: the host targets take it (through DLPack).
    cpu = gpu.load(EXAMPLES / "vector_add.tri").compile("vector_add")
    a, out = torch.arange(3000, dtype=torch.float32), torch.zeros(3000)
    cpu[3](a, a, out, 3000)
    assert torch.equal(out, 2 * a)
    with pytest.raises(tri.TriError) as e:
        cpu[1](x, x, out, 64)
    assert e.value.code == tri.ErrorCode.LAUNCH_ARGS and "device memory" in e.value.message


def test_bf16_tensors_go_through_dlpack(gpu, torch):
    # torch's __cuda_array_interface__ calls bf16 "|V2"; DLPack names it, so a bf16 kernel takes it.
    text = (EXAMPLES / "vector_add.tri").read_text().replace("f32", "bf16")
    kernel = gpu.module(text, "vector_add_bf16.tri").compile("vector_add", target="cuda")
    x = torch.randn(5000, device="cuda").to(torch.bfloat16)
    y = torch.randn(5000, device="cuda").to(torch.bfloat16)
    out = torch.empty_like(x)
    kernel[5](x, y, out, 5000)
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)
    with pytest.raises(tri.TriError) as e:
        kernel[5](x.float(), y, out, 5000)
    assert e.value.code == tri.ErrorCode.LAUNCH_ARGS and "takes an array of bf16, but an array of float32" in e.value.message


def test_the_readme_gpu_program_runs(torch):
    text = (HERE.parent / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    program = next(b for b in blocks if "torch" in b)
    path = os.pathsep.join(filter(None, [str(HERE.parent / "src"), os.environ.get("PYTHONPATH")]))
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=path), cwd=HERE.parents[2])
    assert run.returncode == 0, run.stderr
    assert "match torch" in run.stdout, run.stdout
