"""The package's contract: every C error arrives as a TriError with its code and message,
arguments are checked against the kernel's signature, closed objects refuse use, handles close
in any order, the log sink hears failures, and kernels run from several threads at once."""

import gc
import threading

import numpy as np
import pytest

import tri
from conftest import EXAMPLES


def add(kernel, x, y):
    out = np.zeros_like(x)
    kernel[(len(x) + 1023) // 1024](x, y, out, len(x))
    return out


def test_version_matches_the_package():
    major, minor, _ = tri.version()
    assert major == tri._capi.TRI_VERSION_MAJOR
    assert minor >= tri._capi.TRI_VERSION_MINOR


def test_parse_errors_carry_code_place_and_message(ctx):
    with pytest.raises(tri.TriError) as e:
        ctx.module("kernel @k() {\n  bogus\n}\n", "bad.tri")
    assert e.value.code == tri.ErrorCode.PARSE
    assert e.value.name == "TRI_ERROR_PARSE"
    assert e.value.message.startswith("bad.tri:2:")
    assert tri.last_error_message() == e.value.message
    with pytest.raises(tri.TriError) as e:
        ctx.module(b"")
    assert e.value.code == tri.ErrorCode.INVALID_ARGUMENT
    with pytest.raises(tri.TriError) as e:
        ctx.load("/nonexistent/k.tri")
    assert e.value.code == tri.ErrorCode.IO and "/nonexistent/k.tri" in e.value.message


def test_reflection_reports_the_signature(ctx):
    module = ctx.load(EXAMPLES / "softmax.tri")
    (f,) = module.functions
    assert f == module.function("softmax")
    assert f.kind == tri.FunctionKind.KERNEL
    assert [p.name for p in f.params] == ["out", "in", "in_row_stride", "out_row_stride", "n_cols", "BLOCK"]
    assert (f.params[0].type_kind, f.params[0].dtype, f.params[0].type_text) == (tri.TypeKind.POINTER, tri.DType.F32,
                                                                                  "ptr<f32>")
    assert (f.params[2].type_kind, f.params[2].dtype) == (tri.TypeKind.SCALAR, tri.DType.I32)
    assert f.params[5].kind == tri.ParamKind.CONSTEXPR and f.params[5].default == "1024"
    assert f.params[0].default is None
    assert len(f.runtime_params) == 5
    with pytest.raises(tri.TriError) as e:
        module.function("nope")
    assert e.value.code == tri.ErrorCode.NOT_FOUND


def test_text_and_binary_round_trip(ctx):
    module = ctx.load(EXAMPLES / "vector_add.tri")
    text, binary = module.to_text(), module.to_binary()
    assert "kernel @vector_add" in text
    module.close()
    again = ctx.module(binary, "vector_add.trib")
    assert again.to_text() == text and again.to_binary() == binary


def test_compile_errors(ctx):
    module = ctx.load(EXAMPLES / "vector_add.tri")
    cases = [
        (dict(target="tpu"), tri.ErrorCode.INVALID_ARGUMENT),
        (dict(constexprs={"BLOCK": 24}), tri.ErrorCode.SPECIALIZE),
        (dict(constexprs={"BLOCK": 0.5}), tri.ErrorCode.SPECIALIZE),
        (dict(constexprs={"BLOCK": "64"}), tri.ErrorCode.INVALID_ARGUMENT),
        (dict(target="cpu", checked=True), tri.ErrorCode.UNSUPPORTED),
    ]
    for kwargs, code in cases:
        with pytest.raises(tri.TriError) as e:
            module.compile("vector_add", **kwargs)
        assert e.value.code == code, kwargs
    with pytest.raises(tri.TriError) as e:
        module.compile("vector_sub")
    assert e.value.code == tri.ErrorCode.NOT_FOUND


def test_the_kernel_text_is_specialized(ctx):
    opts = tri.CompileOptions(constexprs={"BLOCK": 256}, arg_align={0: 16}, arg_divisible={3: 16})
    kernel = ctx.load(EXAMPLES / "vector_add.tri").compile("vector_add", opts)
    assert kernel.arg_count == 4 and "256" in kernel.to_text()


def test_arguments_are_checked_against_the_signature(vector_add):
    x = np.ones(8, np.float32)
    out = np.zeros(8, np.float32)
    bad = [
        ((x, x, out), "takes 4 arguments (%x: ptr<f32>, %y: ptr<f32>, %out: ptr<f32>, %n: i32), but 3 were given"),
        ((x, x, out, 8.5), "argument 3 (%n) of kernel @vector_add is i32, so it takes an int, but float was given"),
        ((x, x, out, 1 << 40), "argument 3 (%n) of kernel @vector_add is i32, and 1099511627776 does not fit"),
        ((x.astype(np.float64), x, out, 8), "takes an array of f32, but an array of float64 was given"),
        ((x, [1.0] * 8, out, 8), "argument 1 (%y) of kernel @vector_add is ptr<f32>, so it takes a NumPy array"),
        ((np.ones((8, 2), np.float32)[:, 0], x, out, 8), "is not contiguous"),
    ]
    for args, message in bad:
        with pytest.raises(tri.TriError) as e:
            vector_add.launch(1, *args)
        assert e.value.code == tri.ErrorCode.LAUNCH_ARGS
        assert message in e.value.message
    # The library's own checks come through with its message: a grid past its limits.
    with pytest.raises(tri.TriError) as e:
        vector_add.launch((1, 65536), x, x, out, 8)
    assert e.value.code == tri.ErrorCode.INVALID_ARGUMENT and e.value.message
    with pytest.raises(tri.TriError) as e:
        vector_add.launch((1, 2, 3, 4), x, x, out, 8)
    assert e.value.code == tri.ErrorCode.INVALID_ARGUMENT and "grid" in e.value.message
    np.testing.assert_array_equal(add(vector_add, x, x), 2 * x)


class FakeDeviceArray:
    __cuda_array_interface__ = {"shape": (8,), "typestr": "<f4", "data": (0, False), "version": 3}


def test_device_arrays_are_refused_by_host_kernels(vector_add):
    x = np.ones(8, np.float32)
    for bad in (FakeDeviceArray(), tri.DevicePtr(0, 32, tri.DType.F32)):
        with pytest.raises(tri.TriError) as e:
            vector_add[1](bad, x, x, 8)
        assert e.value.code == tri.ErrorCode.LAUNCH_ARGS, e.value
        assert 'argument 0 (%x)' in e.value.message and 'runs on the host ("cpu")' in e.value.message


def test_buffers_reach_the_kernel(vector_add):
    x = np.full(100, 1.5, np.float32)
    out = np.zeros(100, np.float32)
    vector_add[1](x, x, tri.Buffer(out.ctypes.data, out.nbytes, tri.DType.F32), 100)
    assert (out == 3.0).all()
    with pytest.raises(tri.TriError):
        vector_add[1](x, x, tri.Buffer(out.ctypes.data, out.nbytes, tri.DType.F16), 100)


def test_closed_objects_refuse_use(ctx):
    module = ctx.load(EXAMPLES / "vector_add.tri")
    kernel = module.compile("vector_add")
    kernel.close()
    kernel.close()  # idempotent
    assert kernel.closed
    x = np.ones(4, np.float32)
    with pytest.raises(tri.TriError) as e:
        kernel[1](x, x, x, 4)
    assert e.value.code == tri.ErrorCode.INVALID_ARGUMENT and "kernel @vector_add is closed" in e.value.message
    with module:
        pass
    with pytest.raises(tri.TriError) as e:
        module.compile("vector_add")
    assert "module is closed" in e.value.message
    ctx.close()
    with pytest.raises(tri.TriError) as e:
        ctx.module("kernel @k() {\n  return\n}\n")
    assert "context is closed" in e.value.message


def test_handles_close_in_any_order():
    ctx = tri.Context()
    module = ctx.load(EXAMPLES / "vector_add.tri")
    kernel = module.compile("vector_add")
    ctx.close()
    module.close()
    x = np.arange(10, dtype=np.float32)
    np.testing.assert_array_equal(add(kernel, x, x), 2 * x)
    del kernel, module, ctx
    gc.collect()


def test_the_log_sink_hears_failures(tmp_path):
    heard = []
    with tri.Context(log=lambda level, msg: heard.append((level, msg)), log_level=tri.LogLevel.DEBUG,
                     cache_dir=tmp_path) as ctx:
        with pytest.raises(tri.TriError):
            ctx.module("kernel @k(", "broken.tri")
    assert any(level == tri.LogLevel.ERROR and "broken.tri:1:" in msg for level, msg in heard), heard


def test_a_raising_log_sink_does_not_break_the_call():
    def sink(level, msg):
        raise ValueError("sink failed")
    with tri.Context(log=sink) as ctx:
        with pytest.raises(tri.TriError) as e:
            ctx.module("kernel @k(", "broken.tri")
    assert e.value.code == tri.ErrorCode.PARSE


def test_kernels_run_from_several_threads(ctx):
    module = ctx.load(EXAMPLES / "vector_add.tri")
    errors = []

    def work(t):
        try:
            kernel = module.compile("vector_add")  # one specialization, compiled once
            for r in range(5):
                x = np.arange(5000, dtype=np.float32) * (t + 1) + r
                np.testing.assert_array_equal(add(kernel, x, x), 2 * x)
            # Errors are per thread: this thread's failure is its own message.
            try:
                module.function(f"missing{t}")
            except tri.TriError as e:
                assert f"missing{t}" in e.message
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors


def test_closing_while_another_thread_launches_is_safe(ctx):
    kernel = ctx.load(EXAMPLES / "vector_add.tri").compile("vector_add")
    x = np.ones(1 << 20, np.float32)
    outcomes = []

    def launcher():
        for _ in range(50):
            try:
                add(kernel, x, x)
                outcomes.append("ran")
            except tri.TriError as e:
                assert "closed" in e.message
                outcomes.append("closed")

    th = threading.Thread(target=launcher)
    th.start()
    kernel.close()
    th.join()
    assert outcomes[-1] == "closed"


def test_kernels_of_targets_newer_than_the_package_are_not_launched(vector_add):
    # No such target exists yet; the kernel is relabelled to reach the check.
    vector_add._target = "tpu"
    x = np.ones(4, np.float32)
    with pytest.raises(tri.TriError) as e:
        vector_add[1](x, x, x, 4)
    assert e.value.code == tri.ErrorCode.UNSUPPORTED and 'target "tpu"' in e.value.message
    with pytest.raises(tri.TriError) as e:
        vector_add.plan(1, x, x, x, 4)
    assert e.value.code == tri.ErrorCode.UNSUPPORTED
