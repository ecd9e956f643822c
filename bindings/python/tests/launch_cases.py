"""Launches of every kind of argument, run by test_launch_path.py once on the compiled launch path
and once on the pure-Python one (TRI_PYTHON_EXTENSION=1 / 0, each in its own process), which then
compares what each case did: the outputs a launch wrote (or the values and stream the fake CUDA
driver was handed), or the exception's type, code and message. It prints one JSON object per
case. With the extension, it also says how many of the case's launches the compiled path made
itself and how many it handed to the Python path.

"cuda" cases run on tests/target/cuda/fake_libcuda.c (TRI_LIBCUDA), whose cuLaunchKernel records what it
was given; a fake `torch` module (a Tensor whose __cuda_array_interface__ is written as torch's
is: version 2, AttributeError off the GPU, RuntimeError when it requires grad, KeyError for
bfloat16) stands in for PyTorch."""

import ctypes
import json
import os
import sys
import types

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
import tri  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
EXAMPLES = os.path.join(ROOT, "examples")

# Every scalar type a launch takes, each stored where the host can see what the kernel got.
SCALARS = """
kernel @scalars(%p: ptr<i64>, %q: ptr<f64>, %a: i8, %b: i1, %c: i64, %d: f32, %e: f64, %f: i32, %g: i16) {
  %i0 = const[value=0] : i32
  %i1 = const[value=1] : i32
  %i2 = const[value=2] : i32
  %i3 = const[value=3] : i32
  %i4 = const[value=4] : i32
  %av = sext %a : i64
  %p0 = addptr %p, %i0 : ptr<i64>
  store %p0, %av
  %bv = zext %b : i64
  %p1 = addptr %p, %i1 : ptr<i64>
  store %p1, %bv
  %p2 = addptr %p, %i2 : ptr<i64>
  store %p2, %c
  %fv = sext %f : i64
  %p3 = addptr %p, %i3 : ptr<i64>
  store %p3, %fv
  %gv = sext %g : i64
  %p4 = addptr %p, %i4 : ptr<i64>
  store %p4, %gv
  %dv = fpext %d : f64
  %q0 = addptr %q, %i0 : ptr<f64>
  store %q0, %dv
  %q1 = addptr %q, %i1 : ptr<f64>
  store %q1, %e
  return
}
"""

fast = tri._fast  # None on the Python path


def counters():
    return dict(fast.counters()) if fast is not None else {"fast": 0, "fallback": 0}


def outcome(fn):
    """What calling fn did: ("ok", its result) or ("raised", type, code, message)."""
    try:
        return ["ok", fn()]
    except tri.TriError as e:
        return ["raised", "TriError", int(e.code), e.message]
    except Exception as e:  # noqa: BLE001 - the point is to compare whatever it is
        return ["raised", type(e).__name__, None, str(e)]


PROBES = {}


def emit(name, fn, path=None):
    """Runs one case and prints it; `path` is the launch path expected of it with the extension
    ("fast": every launch of it by the compiled path; "python": handed to the Python path).
    "probes" counts what the registered probes saw happen during it."""
    before, seen_before = counters(), {k: f() for k, f in PROBES.items()}
    result = outcome(fn)
    after = counters()
    print(json.dumps({"case": name, "result": result, "path": path,
                      "fast": after["fast"] - before["fast"], "fallback": after["fallback"] - before["fallback"],
                      "probes": {k: f() - seen_before[k] for k, f in PROBES.items()}}), flush=True)


class Sub(np.ndarray):
    pass


class DLPackOnly:
    def __init__(self, a, device=(1, 0)):
        self._a, self._device = a, device

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._device


def host_cases(ctx):
    va = ctx.load(os.path.join(EXAMPLES, "vector_add.tri")).compile("vector_add", target="cpu")
    x = np.arange(3000, dtype=np.float32)

    def run(*args, grid=3, form="item", **kw):
        out = np.zeros(3000, np.float32)
        args = tuple(out if a is OUT else a for a in args)
        if form == "item":
            va[grid](*args, **kw)
        elif form == "launch":
            va.launch(grid, *args, **kw)
        else:
            p = va.plan(grid, *args, **kw)
            p.launch()
            p()
        return out.tolist()

    ro = x.copy()
    ro.flags.writeable = False
    f64 = x.astype(np.float64)
    emit("numpy arrays", lambda: run(x, x, OUT, 3000), "fast")
    emit("numpy arrays, launch()", lambda: run(x, x, OUT, 3000, form="launch"), "fast")
    emit("numpy arrays, plan", lambda: run(x, x, OUT, 3000, form="plan"), "fast")
    emit("read-only input", lambda: run(ro, ro, OUT, 2999), "fast")
    emit("2-d contiguous input", lambda: run(x.reshape(30, 100), x, OUT, 3000), "fast")
    emit("empty arrays", lambda: run(x[:0], x[:0], OUT, 0, grid=1), "fast")
    emit("grid tuple", lambda: run(x, x, OUT, 3000, grid=(3,)), "fast")
    emit("grid list of 3", lambda: run(x, x, OUT, 3000, grid=[3, 1, 1]), "fast")
    emit("empty grid", lambda: run(x, x, OUT, 3000, grid=0), "fast")
    emit("grid of numpy ints", lambda: run(x, x, OUT, 3000, grid=np.int64(3)), "python")
    emit("grid of 4", lambda: run(x, x, OUT, 3000, grid=(1, 1, 1, 1)), "python")
    emit("negative grid", lambda: run(x, x, OUT, 3000, grid=-1), "python")
    emit("grid past 32 bits", lambda: run(x, x, OUT, 3000, grid=1 << 32), "python")
    emit("float grid", lambda: run(x, x, OUT, 3000, grid=1.0), "python")
    emit("bool grid", lambda: run(x, x, OUT, 3000, grid=True), "python")
    emit("float64 array", lambda: run(f64, x, OUT, 3000), "python")
    emit("int32 array", lambda: run(x.view(np.int32), x, OUT, 3000), "python")
    emit("byte-swapped array", lambda: run(x.astype(">f4"), x, OUT, 3000), "python")
    emit("strided array", lambda: run(np.repeat(x, 2)[::2], x, OUT, 3000), "python")
    emit("transposed array", lambda: run(x.reshape(30, 100).T, x, OUT, 3000), "python")
    emit("ndarray subclass", lambda: run(x.view(Sub), x, OUT, 3000), "python")
    emit("DLPack host array", lambda: run(DLPackOnly(x), x, OUT, 3000), "python")
    emit("DLPack on another device", lambda: run(DLPackOnly(x, (8, 0)), x, OUT, 3000), "python")
    emit("a list", lambda: run([1.0] * 3000, x, OUT, 3000), "python")
    emit("None for a pointer", lambda: run(None, x, OUT, 3000), "python")
    buf = tri.Buffer(x.__array_interface__["data"][0], x.nbytes, tri.DType.F32)
    emit("Buffer", lambda: run(buf, x, OUT, 3000), "fast")
    emit("Buffer with an int dtype", lambda: run(tri.Buffer(buf.address, buf.nbytes, 7), x, OUT, 3000), "fast")
    emit("Buffer of f16", lambda: run(tri.Buffer(buf.address, buf.nbytes, tri.DType.F16), x, OUT, 3000), "python")
    emit("DevicePtr on the host", lambda: run(tri.DevicePtr(0, 4, tri.DType.F32), x, OUT, 3000), "python")
    emit("three arguments", lambda: run(x, x, OUT), "python")
    emit("five arguments", lambda: run(x, x, OUT, 3000, 1), "python")
    emit("n as numpy int", lambda: run(x, x, OUT, np.int32(3000)), "python")
    emit("n as bool", lambda: run(x, x, OUT, True), "python")
    emit("n as float", lambda: run(x, x, OUT, 3000.0), "python")
    emit("n past i32", lambda: run(x, x, OUT, 1 << 32), "python")
    emit("n at the top of i32's unsigned range", lambda: run(x, x, OUT, (1 << 32) - 1, grid=0), "fast")
    emit("n below i32", lambda: run(x, x, OUT, -(1 << 31) - 1), "python")
    emit("stream on the host", lambda: run(x, x, OUT, 3000, stream=5), "fast")
    emit("stream of the wrong kind", lambda: run(x, x, OUT, 3000, stream="s"), "python")
    emit("bool stream", lambda: run(x, x, OUT, 3000, stream=True), "python")
    emit("negative stream", lambda: run(x, x, OUT, 3000, stream=-1), "python")
    emit("unknown keyword", lambda: run(x, x, OUT, 3000, strem=0), "python")
    emit("unknown keyword, launch()", lambda: run(x, x, OUT, 3000, form="launch", strem=0), "python")
    emit("launch() without a grid", lambda: va.launch(), "python")

    sk = ctx.module(SCALARS).compile("scalars", target="cpu")

    def scal(a=-5, b=1, c=-(1 << 40), d=1.5, e=2.25, f=-7, g=300, form="item"):
        p = np.zeros(5, np.int64)
        q = np.zeros(2, np.float64)
        if form == "item":
            sk[1](p, q, a, b, c, d, e, f, g)
        else:
            plan = sk.plan(1, p, q, a, b, c, d, e, f, g)
            plan.launch()
        return [p.tolist(), q.tolist()]

    emit("scalars", scal, "fast")
    emit("scalars, plan", lambda: scal(form="plan"), "fast")
    emit("i8 at 255", lambda: scal(a=255), "fast")
    emit("i8 at -128", lambda: scal(a=-128), "fast")
    emit("i8 at 256", lambda: scal(a=256), "python")
    emit("i8 at -129", lambda: scal(a=-129), "python")
    emit("i1 as True", lambda: scal(b=True), "python")
    emit("i1 at 2", lambda: scal(b=2), "python")
    emit("i64 at 2^63", lambda: scal(c=1 << 63), "python")
    emit("i64 at 2^64 - 1", lambda: scal(c=(1 << 64) - 1), "python")
    emit("i64 at 2^64", lambda: scal(c=1 << 64), "python")
    emit("i64 at -2^63", lambda: scal(c=-(1 << 63)), "fast")
    emit("i64 at -2^63 - 1", lambda: scal(c=-(1 << 63) - 1), "python")
    emit("f32 from an int", lambda: scal(d=3), "fast")
    emit("f32 from a huge int", lambda: scal(d=1 << 2000), "python")
    emit("f32 from a bool", lambda: scal(d=True), "python")
    emit("f32 from numpy", lambda: scal(d=np.float32(0.1)), "python")
    emit("f32 from a string", lambda: scal(d="1"), "python")
    emit("f64 nan", lambda: scal(e=float("nan")), "fast")
    emit("i16 from numpy", lambda: scal(g=np.int16(-3)), "python")
    def spellings():
        out = []
        for t in ("l", "q"):  # two NumPy type objects of int64
            p = np.zeros(5, dtype=t)
            sk[1](p, np.zeros(2), 1, 1, 9, 1.0, 1.0, 1, 1)
            out.append(p.tolist())
        return out

    emit("i64 pointer from an 'l' array and a 'q' array", spellings, "fast")

    # Closed handles: the kernel's and a plan's.
    k2 = ctx.load(os.path.join(EXAMPLES, "vector_add.tri")).compile("vector_add", target="cpu")
    out = np.zeros(3000, np.float32)
    plan = k2.plan(3, x, x, out, 3000)
    plan.close()
    emit("closed plan", lambda: plan.launch(), "python")
    k2.close()
    emit("closed kernel", lambda: k2[3](x, x, out, 3000), "python")
    emit("closed kernel, launch()", lambda: k2.launch(3, x, x, out, 3000), "python")

    # A target the package does not know: the kernel is relabelled to reach the check.
    k3 = ctx.load(os.path.join(EXAMPLES, "vector_add.tri")).compile("vector_add", target="cpu")
    k3._target = "tpu"
    emit("kernel of an unknown target", lambda: k3[3](x, x, out, 3000), "python")
    k3._target = "cpu"
    emit("kernel of an unknown target, relabelled back", lambda: k3[3](x, x, out, 3000), "fast")

    # Plans: set_arg and set_grid between launches; a refused set_arg changes nothing.
    def plan_updates():
        o = np.zeros(3000, np.float32)
        p = va.plan(1, x, x, o, 3000)
        p.launch()
        p.set_grid(3)
        p.launch()
        y = np.ones(3000, np.float32)
        p.set_arg(1, y)
        p.launch()
        try:
            p.set_arg(1, f64)
        except tri.TriError:
            pass
        p()
        return o.tolist()

    emit("plan updates", plan_updates, "fast")


class FakeTorch:
    """A stand-in for the parts of torch the launch path reads."""

    @staticmethod
    def module():
        torch = types.ModuleType("torch")

        class dtype:  # noqa: N801 - torch's spelling
            def __init__(self, name, typestr, itemsize):
                self.name, self.typestr, self.itemsize = name, typestr, itemsize

            def __repr__(self):
                return f"torch.{self.name}"

        torch.dtype = dtype
        for name, typestr, size in (("float32", "<f4", 4), ("float16", "<f2", 2), ("int32", "<i4", 4),
                                    ("uint8", "|u1", 1), ("bfloat16", None, 2)):
            setattr(torch, name, dtype(name, typestr, size))

        class Tensor:
            def __init__(self, address, shape, dtype, cuda=True, requires_grad=False, strides=None):
                self._address, self.shape, self.dtype = address, tuple(shape), dtype
                self.is_cuda, self.requires_grad = cuda, requires_grad
                n = 1
                for d in self.shape:
                    n *= d
                self._numel = n
                self._strides = strides  # in elements; None: contiguous

            def data_ptr(self):
                return self._address

            def numel(self):
                return self._numel

            def element_size(self):
                return self.dtype.itemsize

            @property
            def nbytes(self):
                return self._numel * self.dtype.itemsize

            def stride(self):
                if self._strides is not None:
                    return self._strides
                out, acc = [], 1
                for d in reversed(self.shape):
                    out.append(acc)
                    acc *= d
                return tuple(reversed(out))

            def is_contiguous(self):
                return self._strides is None

            interface_reads = 0

            @property
            def __cuda_array_interface__(self):
                # As torch/_tensor.py writes it.
                Tensor.interface_reads += 1
                if not self.is_cuda:
                    raise AttributeError("Can't get __cuda_array_interface__ on non-CUDA tensor type")
                if self.requires_grad:
                    raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad.")
                typestr = {d.name: d.typestr for d in (torch.float32, torch.float16, torch.int32, torch.uint8)}[
                    self.dtype.name]
                itemsize = self.element_size()
                strides = None if self.is_contiguous() else tuple(s * itemsize for s in self.stride())
                data_ptr = self.data_ptr() if self.numel() > 0 else 0
                return dict(typestr=typestr, shape=self.shape, strides=strides, data=(data_ptr, False), version=2)

        Tensor.__module__ = "torch"
        torch.Tensor = Tensor
        return torch


class CAI:
    def __init__(self, **fields):
        self.__cuda_array_interface__ = dict({"shape": (3000,), "typestr": "<f4", "data": (0x7000, False),
                                              "version": 2}, **fields)


def cuda_cases(ctx, fake_path):
    cu = ctypes.CDLL(fake_path)
    cu.fake_cuda_counter.restype = ctypes.c_long
    cu.fake_cuda_counter.argtypes = [ctypes.c_char_p]
    vp = ctypes.c_void_p
    assert cu.cuInit(0) == 0
    pctx = vp()
    assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(pctx), 0) == 0
    assert cu.cuCtxSetCurrent(pctx) == 0
    s1, s2 = vp(), vp()
    assert cu.cuStreamCreate(ctypes.byref(s1), 0) == 0 and cu.cuStreamCreate(ctypes.byref(s2), 0) == 0
    S1, S2 = s1.value, s2.value
    va = ctx.load(os.path.join(EXAMPLES, "vector_add.tri")).compile("vector_add", target="cuda")

    def seen(*args, grid=3, form="item", **kw):
        """What the driver got: the stream (named S1/S2/0), the first argument, the grid, and how
        many waits were put on a stream."""
        n, waits = cu.fake_cuda_counter(b"launches"), cu.fake_cuda_counter(b"stream_waits")
        if form == "item":
            va[grid](*args, **kw)
        elif form == "launch":
            va.launch(grid, *args, **kw)
        else:
            p = va.plan(grid, *args, **kw)
            p.launch()
            p()
        stream = cu.fake_cuda_counter(b"last_stream")
        name = {S1: "S1", S2: "S2", 0: "0"}.get(stream, stream)
        arg0 = cu.fake_cuda_counter(b"last_arg0")
        return [cu.fake_cuda_counter(b"launches") - n, name, HOST_ADDRESSES.get(arg0, arg0),
                cu.fake_cuda_counter(b"last_grid_x"), cu.fake_cuda_counter(b"stream_waits") - waits]

    d = tri.DevicePtr(0x9000, 12000, tri.DType.F32)
    emit("cuda: DevicePtr", lambda: seen(d, d, d, 3000), "fast")
    emit("cuda: DevicePtr, launch()", lambda: seen(d, d, d, 3000, form="launch"), "fast")
    emit("cuda: DevicePtr, plan", lambda: seen(d, d, d, 3000, form="plan"), "fast")
    emit("cuda: DevicePtr of f16", lambda: seen(tri.DevicePtr(0x9000, 8, tri.DType.F16), d, d, 3000), "python")
    emit("cuda: DevicePtr with a negative address", lambda: seen(tri.DevicePtr(-1, 8, tri.DType.F32), d, d, 3000),
         "python")
    emit("cuda: NumPy array", lambda: seen(np.zeros(8, np.float32), d, d, 3000), "python")
    emit("cuda: Buffer", lambda: seen(tri.Buffer(0x9000, 8, tri.DType.F32), d, d, 3000), "python")
    emit("cuda: int stream", lambda: seen(d, d, d, 3000, stream=S1), "fast")
    emit("cuda: torch-style stream", lambda: seen(d, d, d, 3000, stream=types.SimpleNamespace(cuda_stream=S1)), "fast")
    emit("cuda: CuPy-style stream", lambda: seen(d, d, d, 3000, stream=types.SimpleNamespace(ptr=S2)), "fast")
    emit("cuda: handle stream", lambda: seen(d, d, d, 3000, stream=types.SimpleNamespace(handle=S2)), "fast")

    class Proto:
        def __cuda_stream__(self):
            return (0, S1)

    emit("cuda: __cuda_stream__", lambda: seen(d, d, d, 3000, stream=Proto()), "fast")
    emit("cuda: not a stream", lambda: seen(d, d, d, 3000, stream=object()), "python")
    emit("cuda: stream attribute of the wrong kind",
         lambda: seen(d, d, d, 3000, stream=types.SimpleNamespace(cuda_stream="x")), "python")

    emit("cuda: CAI v2", lambda: seen(CAI(), CAI(), CAI(data=(0x8000, False)), 3000), "fast")
    emit("cuda: CAI list shape and data", lambda: seen(CAI(shape=[3000], data=[0x7000, False]), d, d, 3000), "fast")
    emit("cuda: CAI null data", lambda: seen(CAI(data=(None, False)), d, d, 3000), "fast")
    emit("cuda: CAI without version", lambda: seen(_no_version(), d, d, 3000), "fast")
    emit("cuda: CAI with CuPy's descr", lambda: seen(CAI(descr=[("", "<f4")]), d, d, 3000), "fast")
    built = {"".join(["type", "str"]): "<f4", "".join(["sha", "pe"]): (3000,), "".join(["da", "ta"]): (0x7000, False),
             "".join(["ver", "sion"]): 3, "".join(["str", "eam"]): S2}  # keys that are not interned strings
    emit("cuda: CAI with keys made at run time", lambda: seen(types.SimpleNamespace(__cuda_array_interface__=built),
                                                              d, d, 3000), "fast")
    emit("cuda: CAI with a key that is not a string", lambda: seen(_odd_key(), d, d, 3000), "python")
    emit("cuda: CAI contiguous strides", lambda: seen(CAI(shape=(30, 100), strides=(400, 4)), d, d, 3000), "fast")
    emit("cuda: CAI unit dimension with any stride", lambda: seen(CAI(shape=(1, 3000), strides=(7, 4)), d, d, 3000),
         "fast")
    emit("cuda: CAI short strides", lambda: seen(CAI(shape=(30, 100), strides=(4,)), d, d, 3000), "fast")
    emit("cuda: CAI non-contiguous", lambda: seen(CAI(shape=(30, 100), strides=(4, 120)), d, d, 3000), "python")
    emit("cuda: CAI f64", lambda: seen(CAI(typestr="<f8"), d, d, 3000), "python")
    emit("cuda: CAI void type", lambda: seen(CAI(typestr="|V4"), d, d, 3000), "python")
    emit("cuda: CAI masked", lambda: seen(CAI(mask=CAI()), d, d, 3000), "python")
    emit("cuda: CAI malformed", lambda: seen(CAI(data="nope"), d, d, 3000), "python")
    emit("cuda: CAI not a dict", lambda: seen(types.SimpleNamespace(__cuda_array_interface__=[1]), d, d, 3000),
         "python")
    emit("cuda: CAI v3, no stream given", lambda: seen(CAI(version=3, stream=S1), CAI(version=3, stream=None), d,
                                                       3000), "fast")
    emit("cuda: CAI v3, the same stream given", lambda: seen(CAI(version=3, stream=S1), d, d, 3000, stream=S1), "fast")
    emit("cuda: CAI v3, legacy stream", lambda: seen(CAI(version=3, stream=1), d, d, 3000), "fast")
    emit("cuda: CAI v3, legacy stream and stream 0", lambda: seen(CAI(version=3, stream=1), d, d, 3000, stream=0),
         "fast")
    emit("cuda: CAI v3, another stream given", lambda: seen(CAI(version=3, stream=S1), d, d, 3000, stream=S2),
         "python")
    emit("cuda: CAI v3, two streams", lambda: seen(CAI(version=3, stream=S1), CAI(version=3, stream=S2), d, 3000),
         "python")
    emit("cuda: CAI v3, stream 0", lambda: seen(CAI(version=3, stream=0), d, d, 3000), "python")
    emit("cuda: CAI v2 ignores its stream", lambda: seen(CAI(version=2, stream=S2), d, d, 3000), "fast")
    emit("cuda: CAI v3 plan on another stream",
         lambda: seen(CAI(version=3, stream=S1), d, d, 3000, stream=S2, form="plan"), "python")
    z = np.zeros(3000, np.float32)
    HOST_ADDRESSES[z.__array_interface__["data"][0]] = "a NumPy array's address"  # differs between processes
    emit("cuda: DLPack device array", lambda: seen(DLPackOnly(z, (2, 0)), d, d, 3000), "python")
    emit("cuda: DLPack host array", lambda: seen(DLPackOnly(np.zeros(3000, np.float32)), d, d, 3000), "python")

    # torch: the first launch with each dtype teaches the compiled reader; later ones are its own.
    torch = FakeTorch.module()
    sys.modules["torch"] = torch
    T = torch.Tensor
    PROBES["torch interface reads"] = lambda: T.interface_reads
    t = T(0xA000, (3000,), torch.float32)
    emit("torch: first tensor", lambda: seen(t, t, t, 3000), "fast")
    emit("torch: tensors", lambda: seen(t, T(0xB000, (30, 100), torch.float32), t, 3000), "fast")
    emit("torch: tensors, plan", lambda: seen(t, t, t, 3000, form="plan"), "fast")
    emit("torch: requires grad", lambda: seen(T(0xA000, (3000,), torch.float32, requires_grad=True), t, t, 3000),
         "python")
    emit("torch: on the host", lambda: seen(T(0xA000, (3000,), torch.float32, cuda=False), t, t, 3000), "python")
    emit("torch: non-contiguous", lambda: seen(T(0xA000, (30, 100), torch.float32, strides=(1, 30)), t, t, 3000),
         "python")
    emit("torch: contiguous with odd unit strides",
         lambda: seen(T(0xA000, (1, 3000), torch.float32, strides=(5, 1)), t, t, 3000), "python")
    emit("torch: empty", lambda: seen(T(0xA000, (0,), torch.float32), t, t, 3000), "python")
    emit("torch: f16", lambda: seen(T(0xA000, (3000,), torch.float16), t, t, 3000), "python")
    emit("torch: bf16", lambda: seen(T(0xA000, (3000,), torch.bfloat16), t, t, 3000), "python")
    emit("torch: int32, first", lambda: seen(T(0xA000, (3000,), torch.int32), t, t, 3000), "python")
    emit("torch: int32 again", lambda: seen(T(0xA000, (3000,), torch.int32), t, t, 3000), "python")

    class SubTensor(T):
        pass

    # A subclass is read through its interface, as the Python path reads it.
    emit("torch: a subclass", lambda: seen(SubTensor(0xA000, (3000,), torch.float32), t, t, 3000), "fast")


def _odd_key():
    c = CAI()
    c.__cuda_array_interface__[7] = "seven"
    return c


def _no_version():
    c = CAI()
    del c.__cuda_array_interface__["version"]
    return c


OUT = object()
HOST_ADDRESSES = {}


def main():
    ctx = tri.Context(cache_dir="")
    print(json.dumps({"launch_path": tri.launch_path()}), flush=True)
    host_cases(ctx)
    fake = os.environ.get("TRI_LIBCUDA")
    if fake:
        cuda_cases(ctx, fake)


if __name__ == "__main__":
    main()
