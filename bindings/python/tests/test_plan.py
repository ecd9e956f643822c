"""Prepared launches (Kernel.plan) on the host targets: a plan launches what launch() launches,
arguments, grid and stream are replaced in place, bad replacements are refused while the plan
keeps its previous arguments, and the plan keeps its kernel and arrays alive."""

import gc
import threading

import numpy as np
import pytest

import tri

SCALE = """
kernel @scale(%x: ptr<f32>, %out: ptr<f32>, %n: i32, %s: f32) constexpr(BLOCK: i32 = 16) {
  %pid = program_id[axis=0] : i32
  %bs = const[value=BLOCK] : i32
  %start = mul %pid, %bs : i32
  %r = arange[start=0, end=BLOCK] : <BLOCK x i32>
  %sv = splat %start : <BLOCK x i32>
  %offs = add %sv, %r : <BLOCK x i32>
  %nv = splat %n : <BLOCK x i32>
  %mask = cmp[pred=slt] %offs, %nv : <BLOCK x i1>
  %xb = splat %x : <BLOCK x ptr<f32>>
  %xp = addptr %xb, %offs : <BLOCK x ptr<f32>>
  %v = load %xp, mask=%mask : <BLOCK x f32>
  %ss = splat %s : <BLOCK x f32>
  %w = mul %v, %ss : <BLOCK x f32>
  %ob = splat %out : <BLOCK x ptr<f32>>
  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>
  store %op, %w, mask=%mask
  return
}
"""


@pytest.mark.parametrize("target", ["cpu", "interp"])
def test_a_plan_launches_and_takes_replacements(ctx, target):
    kernel = ctx.module(SCALE, "scale.tri").compile("scale", target=target)
    x = np.arange(40, dtype=np.float32)
    y = 100 - np.arange(40, dtype=np.float32)
    out = np.full(40, -1.0, np.float32)
    with kernel.plan(3, x, out, 37, 2.0) as plan:
        plan.launch()
        np.testing.assert_array_equal(out, np.where(np.arange(40) < 37, 2 * x, -1))
        # Replace the input and the scale in place, then launch again (a plan is callable too).
        plan.set_arg(0, y)
        plan.set_arg(3, 0.5)
        plan()
        np.testing.assert_array_equal(out[:37], 0.5 * y[:37])
        # Bad replacements are refused, by the package or the library, and change nothing.
        bad = [
            (lambda: plan.set_arg(0, 1.0), tri.ErrorCode.LAUNCH_ARGS, "argument 0 (%x) of kernel @scale is ptr<f32>"),
            (lambda: plan.set_arg(0, x.astype(np.float64)), tri.ErrorCode.LAUNCH_ARGS, "an array of float64"),
            (lambda: plan.set_arg(4, 0.5), tri.ErrorCode.LAUNCH_ARGS, "there is no argument 4"),
            (lambda: plan.set_grid(1 << 31), tri.ErrorCode.INVALID_ARGUMENT, ""),
            (lambda: plan.set_grid((1, 2, 3, 4)), tri.ErrorCode.INVALID_ARGUMENT, "grid"),
            (lambda: plan.set_stream(12345), tri.ErrorCode.INVALID_ARGUMENT, "stream"),
            (lambda: plan.set_stream("s"), tri.ErrorCode.INVALID_ARGUMENT, "str is not a stream"),
        ]
        for call, code, fragment in bad:
            with pytest.raises(tri.TriError) as e:
                call()
            assert e.value.code == code and fragment in e.value.message, e.value
        # A smaller grid leaves the last program's elements alone.
        out[:] = -1
        plan.set_grid((2, 1, 1))
        plan.launch()
        np.testing.assert_array_equal(out, np.where(np.arange(40) < 32, 0.5 * y, -1))
        # The default stream is the only one a host target takes.
        plan.set_stream(None)
        plan.launch()
    assert plan.closed
    with pytest.raises(tri.TriError) as e:
        plan.launch()
    assert e.value.code == tri.ErrorCode.INVALID_ARGUMENT and "closed" in e.value.message


def test_plan_creation_checks_like_launch(ctx):
    kernel = ctx.module(SCALE, "scale.tri").compile("scale")
    x = np.ones(16, np.float32)
    with pytest.raises(tri.TriError) as e:
        kernel.plan(1, x, x, 16)
    assert e.value.code == tri.ErrorCode.LAUNCH_ARGS and "takes 4 arguments" in e.value.message
    with pytest.raises(tri.TriError) as e:
        kernel.plan((1, 65536), x, x, 16, 1.0)
    assert e.value.code == tri.ErrorCode.INVALID_ARGUMENT
    with pytest.raises(tri.TriError) as e:
        kernel.plan(1, x, x, 16, 1.0, stream=7)
    assert e.value.code == tri.ErrorCode.INVALID_ARGUMENT and "runs on the host" in e.value.message


def test_a_plan_keeps_its_kernel_and_arrays_alive(ctx):
    module = ctx.module(SCALE, "scale.tri")
    kernel = module.compile("scale")
    out = np.zeros(64, np.float32)
    plan = kernel.plan(4, np.arange(64, dtype=np.float32), out, 64, 3.0)  # the input has no other owner
    kernel.close()
    module.close()
    ctx.close()
    for _ in range(3):
        gc.collect()
        np.ones(1 << 16, np.float32)  # reuse of freed memory would show in the result
    plan.launch()
    np.testing.assert_array_equal(out, 3 * np.arange(64, dtype=np.float32))


def test_one_plan_is_safe_to_share_between_threads(ctx):
    kernel = ctx.module(SCALE, "scale.tri").compile("scale")
    x = np.arange(4096, dtype=np.float32)
    outs = [np.zeros(4096, np.float32) for _ in range(4)]
    plan = kernel.plan(256, x, outs[0], 4096, 1.0)
    errors = []

    def work(t):
        try:
            for r in range(20):
                # The plan serializes its calls, but set_arg + launch is two calls: check only
                # that every launch wrote one whole, correct result somewhere.
                plan.set_arg(1, outs[t])
                plan.launch()
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert any((o == x).all() for o in outs)
    assert all((o == x).all() or (o == 0).all() for o in outs)
