"""A pointer argument that breaks the alignment its kernel was compiled for ({align=16} in the
IR, or an arg_align promise) is refused before the launch, on every target: the interpreter and
the cpu target would read it without complaint, a GPU would fault or read wrong data."""

import numpy as np
import pytest

import tri
from conftest import ROOT

ALIGNED = ROOT / "tests" / "run" / "copy_aligned.tri"  # @copy(%x: ptr<f32> {align=16}, %out, %n)


def _at(offset_bytes):
    """16 float32s starting `offset_bytes` after a 64-byte boundary (a view into a bigger array)."""
    raw = np.arange(64, dtype=np.float32)
    skip = (-raw.ctypes.data % 64) // 4
    start = skip + offset_bytes // 4
    return raw[start:start + 16]


@pytest.mark.parametrize("target", ["interp", "cpu"])
def test_a_misaligned_pointer_is_refused_on_the_host_targets(ctx, target):
    k = ctx.load(ALIGNED).compile("copy", target=target)
    out = np.zeros(16, np.float32)
    k[1](_at(0), out, 16)  # aligned: runs
    assert (out == _at(0)).all()
    with pytest.raises(tri.TriError) as e:
        k[1](_at(4), out, 16)
    assert e.value.code == tri.ErrorCode.LAUNCH_ARGS
    assert "argument 0 (%x) of kernel @copy is ptr<f32> with {align=16}" in e.value.message
    assert "is not a multiple of 16" in e.value.message
    with pytest.raises(tri.TriError):
        k.plan(1, _at(8), out, 16)


def test_an_arg_align_promise_is_checked_too(ctx):
    k = ctx.load(ALIGNED).compile("copy", target="cpu", arg_align={1: 32})
    with pytest.raises(tri.TriError) as e:
        k[1](_at(0), _at(16), 16)
    assert "argument 1 (%out)" in e.value.message and "{align=32}" in e.value.message


def test_a_misaligned_device_pointer_is_refused_before_the_gpu_sees_it(ctx):
    # Compiled for a named architecture (no GPU needed): the check runs before the launch would
    # need a driver.
    k = ctx.load(ALIGNED).compile("copy", target="cuda", arch="sm_90")
    with pytest.raises(tri.TriError) as e:
        k[1](tri.DevicePtr(0x7f0000001004, 64, tri.DType.F32), tri.DevicePtr(0x7f0000002000, 64, tri.DType.F32), 16)
    assert e.value.code == tri.ErrorCode.LAUNCH_ARGS and "0x7f0000001004" in e.value.message
