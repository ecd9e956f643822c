"""Host cost of one launch from Python (bench/launch/run.py runs it next to the other languages).

A 4-argument vector add of 1024 elements on one program (examples/vector_add.tri), launched in
batches of --batch; the methods take turns batch by batch for --rounds rounds and each reports
its median round, per launch. On "cuda" the GPU drains between batches, untimed.

--target cuda (a GPU, PyTorch): Tri's `k[1](x, y, o, n, stream=s)` and `plan.launch()` on torch
tensors, on CuPy arrays (when CuPy is installed) and on tri.DevicePtr (plain ints); the floor,
a raw cuLaunchKernel of the kernel's own PTX called from Python through ctypes; Triton's
`add_kernel[(1,)](x, y, o, n, BLOCK=1024)` on the same tensors; and CUDA graphs captured from
200 launches of each (Tri's through the binding), replayed and timed with CUDA events, per kernel.
With TRI_LIBCUDA naming tests/target/cuda/fake_libcuda.c the same runs without a GPU (no torch, no
Triton: DevicePtr and __cuda_array_interface__ objects), which measures the binding alone.

--target cpu: NumPy arrays; the floor is tri_launch called through ctypes with the arguments
encoded once.

Prints one JSON object: {"rows": [...]} with rows as PERF.md describes ("launch python call",
...), and "launch_path" (tri.launch_path()). Through ctypes the floors cost more than the
binding's own launch (its compiled path does not use ctypes), so they are reported as
`raw_ctypes` and `floor_ctypes`; bench/launch/run.py sets `raw` to the C floor measured in the
same run (a raw cuLaunchKernel from C on "cuda", tri_launch from C on "cpu") and the targets.

usage: python3 bench/launch/python_launch.py [--target cuda|cpu] [--batch 1000] [--rounds 31]
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bindings", "python", "src"))

import numpy as np  # noqa: E402

import tri  # noqa: E402
from tri import _capi  # noqa: E402

N = 1024


def per_launch_us(methods, batch, rounds, sync):
    """{name: median us per launch}: batches of `batch` launches, the methods taking turns."""
    for fn in methods.values():
        for _ in range(batch):
            fn()
    sync()
    times = {name: [] for name in methods}
    for _ in range(rounds):
        for name, fn in methods.items():
            t0 = time.perf_counter()
            for _ in range(batch):
                fn()
            t1 = time.perf_counter()
            sync()
            times[name].append((t1 - t0) / batch * 1e6)
    return {name: statistics.median(v) for name, v in times.items()}


class Driver:
    """The CUDA driver calls the floor and the graphs need, through ctypes (TRI_LIBCUDA, as libtri
    itself finds the driver, else libcuda.so.1)."""

    def __init__(self):
        self.lib = ctypes.CDLL(os.environ.get("TRI_LIBCUDA") or "libcuda.so.1")
        vp = ctypes.c_void_p
        for name, args in {
            "cuInit": [ctypes.c_uint], "cuDeviceGet": [ctypes.POINTER(ctypes.c_int), ctypes.c_int],
            "cuDevicePrimaryCtxRetain": [ctypes.POINTER(vp), ctypes.c_int], "cuCtxSetCurrent": [vp],
            "cuCtxSynchronize": [], "cuMemAlloc_v2": [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t],
            "cuModuleLoadDataEx": [ctypes.POINTER(vp), ctypes.c_char_p, ctypes.c_uint, vp, vp],
            "cuModuleGetFunction": [ctypes.POINTER(vp), vp, ctypes.c_char_p],
            "cuLaunchKernel": [vp, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                               ctypes.c_uint, ctypes.c_uint, vp, ctypes.POINTER(vp), ctypes.POINTER(vp)],
            "cuStreamCreate": [ctypes.POINTER(vp), ctypes.c_uint],
            "cuStreamBeginCapture_v2": [vp, ctypes.c_int], "cuStreamEndCapture": [vp, ctypes.POINTER(vp)],
            "cuGraphInstantiateWithFlags": [ctypes.POINTER(vp), vp, ctypes.c_ulonglong],
            "cuGraphLaunch": [vp, vp], "cuStreamSynchronize": [vp],
            "cuEventCreate": [ctypes.POINTER(vp), ctypes.c_uint], "cuEventRecord": [vp, vp],
            "cuEventSynchronize": [vp], "cuEventElapsedTime": [ctypes.POINTER(ctypes.c_float), vp, vp],
        }.items():
            f = getattr(self.lib, name)
            f.restype, f.argtypes = ctypes.c_int, args

    def __call__(self, name, *args):
        r = getattr(self.lib, name)(*args)
        if r != 0:
            raise RuntimeError(f"{name} failed with CUDA error {r}")

    def primary_context(self):
        dev, ctx = ctypes.c_int(), ctypes.c_void_p()
        self("cuInit", 0)
        self("cuDeviceGet", ctypes.byref(dev), 0)
        self("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
        self("cuCtxSetCurrent", ctx)

    def alloc(self, nbytes):
        p = ctypes.c_uint64()
        self("cuMemAlloc_v2", ctypes.byref(p), nbytes)
        return p.value

    def stream(self):
        s = ctypes.c_void_p()
        self("cuStreamCreate", ctypes.byref(s), 1)  # non-blocking
        return s.value

    def raw_launcher(self, kernel, ptrs, n, stream):
        """A raw cuLaunchKernel of `kernel`'s PTX (loaded here) with arguments built once."""
        ptx = kernel.code("ptx").encode() + b"\0"
        meta = kernel.metadata()
        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
        self("cuModuleLoadDataEx", ctypes.byref(mod), ptx, 0, None, None)
        self("cuModuleGetFunction", ctypes.byref(fn), mod, meta["entry"].encode())
        cells = [ctypes.c_uint64(p) for p in ptrs] + [ctypes.c_int32(n)]
        params = (ctypes.c_void_p * len(cells))(*(ctypes.cast(ctypes.byref(c), ctypes.c_void_p) for c in cells))
        block = meta["block"][0] if isinstance(meta.get("block"), list) else 32 * int(meta.get("num_warps", 4))
        shared = int(meta.get("shared_bytes", 0))
        launch, f, s = self.lib.cuLaunchKernel, fn, ctypes.c_void_p(stream)

        def raw():
            launch(f, 1, 1, 1, block, 1, 1, shared, s, params, None)
        raw.keep = (cells, params, mod)
        return raw

    def graph_us_per_kernel(self, launch_on, stream, kernels=200, replays=20):
        """Captures `kernels` launches made by launch_on(stream) into a graph, replays it, and
        returns the GPU time per kernel (CUDA events around the replays)."""
        s = ctypes.c_void_p(stream)
        self("cuStreamBeginCapture_v2", s, 2)  # relaxed: other threads may use the driver
        try:
            for _ in range(kernels):
                launch_on(stream)
        finally:
            graph = ctypes.c_void_p()
            self("cuStreamEndCapture", s, ctypes.byref(graph))
        exe = ctypes.c_void_p()
        self("cuGraphInstantiateWithFlags", ctypes.byref(exe), graph, 0)
        for _ in range(3):
            self("cuGraphLaunch", exe, s)
        self("cuStreamSynchronize", s)
        start, stop = ctypes.c_void_p(), ctypes.c_void_p()
        self("cuEventCreate", ctypes.byref(start), 0)
        self("cuEventCreate", ctypes.byref(stop), 0)
        self("cuEventRecord", start, s)
        for _ in range(replays):
            self("cuGraphLaunch", exe, s)
        self("cuEventRecord", stop, s)
        self("cuEventSynchronize", stop)
        ms = ctypes.c_float()
        self("cuEventElapsedTime", ctypes.byref(ms), start, stop)
        return ms.value * 1000.0 / (kernels * replays)


def row(workload, tri_us, raw=None, **extra):
    r = {"workload": workload, "unit": "us", "higher_is_better": False, "tri": round(tri_us, 3)}
    if raw is not None:
        r["raw"] = round(raw, 3)
    r.update({k: (round(v, 3) if isinstance(v, float) else v) for k, v in extra.items()})
    return r


def ffi_call_us(batch, rounds):
    """An empty call through ctypes (tri_version): the FFI's own cost."""
    v = _capi.lib.tri_version
    return per_launch_us({"ffi": v}, batch, rounds, lambda: None)["ffi"]


def ctypes_floor(kernel, args, stream):
    """tri_launch called through ctypes with the arguments encoded once (the binding bypassed)."""
    encoded = kernel._encode_all(args, stream or 0)
    raw = (_capi.Arg * len(encoded))(*(e.arg for e in encoded))
    h = kernel._h.acquire()  # held for the benchmark's life
    fn, n = _capi.lib.tri_launch, len(encoded)

    def floor():
        fn(h, 1, 1, 1, stream or None, raw, n)
    floor.keep = encoded
    return floor


def run_cpu(batch, rounds):
    ctx = tri.Context(cache_dir="")
    k = ctx.load(os.path.join(ROOT, "examples", "vector_add.tri")).compile("vector_add", target="cpu")
    x, y, o = (np.ones(N, np.float32) for _ in range(3))
    k[1](x, y, o, N)
    assert (o == 2).all()
    plan = k.plan(1, x, y, o, N)
    floor = ctypes_floor(k, (x, y, o, N), None)
    t = per_launch_us({"call": lambda: k[1](x, y, o, N), "launch": lambda: k.launch(1, x, y, o, N),
                       "plan": plan.launch, "floor": floor}, batch, rounds, lambda: None)
    ffi = ffi_call_us(batch, rounds)
    path = tri.launch_path()
    suffix = "" if path == "extension" else ", pure-Python path"
    return [row(f"launch python call{suffix}", t["call"], floor_ctypes=t["floor"], launch_method=t["launch"],
                ffi_call=ffi, arrays="numpy"),
            row(f"launch python plan{suffix}", t["plan"], floor_ctypes=t["floor"], ffi_call=ffi, arrays="numpy")]


class CAI:
    """Device memory as __cuda_array_interface__ v2 describes it (for the fake driver)."""

    def __init__(self, address):
        self.__cuda_array_interface__ = {"typestr": "<f4", "shape": (N,), "data": (address, False), "version": 2}


def run_cuda(batch, rounds, graphs):
    cu = Driver()
    fake = "fake" in os.path.basename(os.environ.get("TRI_LIBCUDA", ""))
    try:
        import torch
        has_torch = torch.cuda.is_available() and not fake
    except ImportError:
        has_torch = False
    if not has_torch:
        cu.primary_context()
    ctx = tri.Context(cache_dir="")
    k = ctx.load(os.path.join(ROOT, "examples", "vector_add.tri")).compile(
        "vector_add", target="cuda", constexprs={"BLOCK": 1024})
    if has_torch:
        x, y, o = (torch.ones(N, device="cuda") for _ in range(3))
        stream = torch.cuda.current_stream()
        handle = stream.cuda_stream
        sync = torch.cuda.synchronize
    else:
        base = cu.alloc(3 * 4 * N)
        x, y, o = CAI(base), CAI(base + 4 * N), CAI(base + 8 * N)
        stream, handle = 0, 0
        sync = lambda: cu("cuCtxSynchronize")  # noqa: E731
    ptrs = [int(a.__cuda_array_interface__["data"][0]) for a in (x, y, o)]
    dev = [tri.DevicePtr(p, 4 * N, tri.DType.F32) for p in ptrs]
    k[1](x, y, o, N, stream=stream)
    if has_torch:
        torch.testing.assert_close(o, x + y)
    raw = cu.raw_launcher(k, ptrs, N, handle)
    floor = ctypes_floor(k, (x, y, o, N), handle)
    methods = {
        "raw": raw, "floor": floor,
        "call": lambda: k[1](x, y, o, N, stream=stream),
        "plan": k.plan(1, x, y, o, N, stream=stream).launch,
        "call dev": lambda: k[1](dev[0], dev[1], dev[2], N, stream=handle),
        "plan dev": k.plan(1, dev[0], dev[1], dev[2], N, stream=handle).launch,
    }
    arrays = "torch" if has_torch else "__cuda_array_interface__ (fake driver)"
    cupy_arrays = None
    if has_torch:
        try:
            import cupy
            cupy_arrays = [cupy.ones(N, dtype=cupy.float32) for _ in range(3)]
        except ImportError:
            pass
    if cupy_arrays is not None:
        cx, cy, co = cupy_arrays
        cstream = cupy.cuda.get_current_stream()
        methods["call cupy"] = lambda: k[1](cx, cy, co, N, stream=cstream)
        methods["plan cupy"] = k.plan(1, cx, cy, co, N, stream=cstream).launch
    triton_add = None
    if has_torch:
        try:
            sys.path.insert(0, os.path.join(ROOT, "bench", "gpu"))
            from anchors import add_kernel
            add_kernel[(1,)](x, y, o, N, BLOCK=1024)
            triton_add = lambda: add_kernel[(1,)](x, y, o, N, BLOCK=1024)  # noqa: E731
            methods["triton"] = triton_add
        except Exception as e:  # noqa: BLE001 - reported in the row
            print(f"python_launch: Triton's launch not measured: {e}", file=sys.stderr)
    t = per_launch_us(methods, batch, rounds, sync)
    ffi = ffi_call_us(batch, rounds)
    triton_us = t.get("triton")
    extra = {"triton": triton_us} if triton_us is not None else {}
    path = tri.launch_path()
    suffix = "" if path == "extension" else ", pure-Python path"
    common = {"raw_ctypes": t["raw"], "floor_ctypes": t["floor"]}
    rows = [
        row(f"launch python call{suffix}", t["call"], ffi_call=ffi, arrays=arrays, **common, **extra),
        row(f"launch python plan{suffix}", t["plan"], ffi_call=ffi, arrays=arrays, **common, **extra),
        row(f"launch python call, DevicePtr{suffix}", t["call dev"], arrays="tri.DevicePtr", **common),
        row(f"launch python plan, DevicePtr{suffix}", t["plan dev"], arrays="tri.DevicePtr", **common),
    ]
    if "call cupy" in t:
        rows += [row(f"launch python call, CuPy{suffix}", t["call cupy"], arrays="cupy", **common),
                 row(f"launch python plan, CuPy{suffix}", t["plan cupy"], arrays="cupy", **common)]
    if graphs:
        # Launches through the binding captured into a graph on a stream of its own. (The fake
        # driver captures and replays too, but its event times are made up: no row then.)
        s = cu.stream()
        tri_graph = cu.graph_us_per_kernel(lambda st: k[1](dev[0], dev[1], dev[2], N, stream=st), s)
        raw_on_s = cu.raw_launcher(k, ptrs, N, s)
        raw_graph = cu.graph_us_per_kernel(lambda st: raw_on_s(), s)
        extra = {}
        if triton_add is not None:
            extra["triton"] = graph_triton(torch, triton_add)
        if not fake:
            rows.append(row(f"launch python graph replay per kernel{suffix}", tri_graph, raw_graph, **extra))
    return rows


def graph_triton(torch, launch, kernels=200, replays=20):
    """Triton's launches captured by torch.cuda.graph, replayed, per kernel (CUDA events)."""
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        launch()
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for _ in range(kernels):
            launch()
    g.replay()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(replays):
        g.replay()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) * 1000.0 / (kernels * replays)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=31)
    ap.add_argument("--no-graphs", action="store_true")
    a = ap.parse_args()
    if a.target == "cpu":
        rows = run_cpu(a.batch, a.rounds)
    else:
        try:
            rows = run_cuda(a.batch, a.rounds, not a.no_graphs)
        except OSError as e:
            print(f"skipped: no CUDA device ({e})")
            return
    print(json.dumps({"language": "python", "target": a.target, "launch_path": tri.launch_path(),
                      "launch_path_note": tri._fast_missing, "python": sys.version.split()[0], "rows": rows},
                     indent=1))


if __name__ == "__main__":
    main()
