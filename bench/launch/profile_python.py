"""Where the host time of one Python launch goes, on a machine without a GPU: the "cpu" target on
NumPy arrays, and the "cuda" target through tests/target/cuda/fake_libcuda.c (a fake driver whose
cuLaunchKernel returns at once) on stand-ins for the device arrays libraries hand over: a
__cuda_array_interface__ v2 object (what a torch tensor gives), a v3 one naming the launch's
stream (CuPy), a DLPack-only one, and tri.DevicePtr. For each: the median host time of the
direct call `k[1](x, y, out, n)` and of a prepared `plan.launch()`, then cProfile's functions by
self time (per launch, with the profiler's own overhead in them), so the note can say which part
of the binding the time is spent in. It uses the public API only, so it profiles any version of
the binding, and says which launch path is active (tri.launch_path(), where it exists).

usage: python3 bench/launch/profile_python.py [--lib build/src/libtri.so]
                                               [--fake-libcuda build/tests/libfake_libcuda.so]
                                               [--package DIR] [--top 12] [--json FILE]
--package: the folder holding the `tri` package to profile (default bindings/python/src; an
older one from `git archive COMMIT bindings/python/src | tar -x -C DIR` profiles that commit's).
Prints Markdown."""
import argparse
import cProfile
import json
import os
import pstats
import statistics
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def per_launch_us(fn, batch=2000, rounds=15):
    for _ in range(200):
        fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        times.append((time.perf_counter() - t0) / batch * 1e6)
    return statistics.median(times)


def profile(fn, n, top):
    """cProfile's view of n calls of fn: (function, calls per launch, self us per launch)."""
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        fn()
    prof.disable()
    st = pstats.Stats(prof)
    rows = []
    for (path, line, name), (cc, nc, tt, ct, callers) in st.stats.items():
        if path == "~":
            where = name  # a builtin: "<method 'get' of 'dict' objects>"
        else:
            where = f"{os.path.relpath(path, ROOT) if path.startswith(ROOT) else os.path.basename(path)}:{line}({name})"
        rows.append((where, nc / n, tt / n * 1e6))
    rows.sort(key=lambda r: -r[2])
    total = sum(r[2] for r in rows)
    return rows[:top], total


class CAI:
    """Device memory as __cuda_array_interface__ describes it (the fake driver never reads it)."""

    def __init__(self, address, n, version, stream=None):
        d = {"typestr": "<f4", "shape": (n,), "strides": None, "data": (address, False), "version": version}
        if version >= 3:
            d["stream"] = stream
        self.__cuda_array_interface__ = d


class DLPackCuda:
    """A DLPack-only array on "CUDA" (NumPy's capsule behind a CUDA device type)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return (2, 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=os.environ.get("TRI_LIBRARY", os.path.join(ROOT, "build/src/libtri.so")))
    ap.add_argument("--fake-libcuda", default=os.path.join(ROOT, "build/tests/libfake_libcuda.so"))
    ap.add_argument("--package", default=os.path.join(ROOT, "bindings", "python", "src"))
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--json")
    a = ap.parse_args()
    os.environ["TRI_LIBRARY"] = os.path.abspath(a.lib)
    fake = os.path.exists(a.fake_libcuda)
    if fake:
        os.environ["TRI_LIBCUDA"] = os.path.abspath(a.fake_libcuda)
    sys.path.insert(0, os.path.abspath(a.package))
    import numpy as np
    import tri

    path = tri.launch_path() if hasattr(tri, "launch_path") else "python (before tri.launch_path existed)"
    ctx = tri.Context(cache_dir="")
    module = ctx.load(os.path.join(ROOT, "examples", "vector_add.tri"))
    n = 1024
    x, y, o = (np.ones(n, np.float32) for _ in range(3))
    cases = [("cpu, NumPy arrays", module.compile("vector_add", target="cpu"), (x, y, o, n), {})]
    if fake:
        k = module.compile("vector_add", target="cuda")
        base = 0x7f0000000000
        s = 0  # the default stream: the fake driver has no other without a context of its own
        dev = [base + i * 4096 for i in range(3)]
        cases += [
            ("cuda (fake driver), __cuda_array_interface__ v2 (torch)", k,
             tuple(CAI(p, n, 2) for p in dev) + (n,), {"stream": s}),
            ("cuda (fake driver), __cuda_array_interface__ v3 on the launch's stream (CuPy)", k,
             tuple(CAI(p, n, 3, 1) for p in dev) + (n,), {"stream": s}),
            ("cuda (fake driver), DLPack only", k, (DLPackCuda(x), DLPackCuda(y), DLPackCuda(o), n), {"stream": s}),
            ("cuda (fake driver), tri.DevicePtr", k,
             tuple(tri.DevicePtr(p, 4 * n, tri.DType.F32) for p in dev) + (n,), {"stream": s}),
        ]
    out = {"launch_path": path, "fake_driver": fake, "cases": []}
    print(f"# Python launch profile (launch path: {path})\n")
    print("vector_add, 4 arguments, grid 1; medians of 15 batches of 2000 launches; cProfile's self time per "
          "launch (inflated by the profiler) below each.\n")
    for name, kernel, args, kw in cases:
        # The call as a program writes it (a call through *args, **kw costs Python more).
        a0, a1, a2, a3 = args
        if kw:
            s = kw["stream"]

            def launch():
                kernel[1](a0, a1, a2, a3, stream=s)
        else:
            def launch():
                kernel[1](a0, a1, a2, a3)
        call = per_launch_us(launch)
        plan = kernel.plan(1, *args, **kw)
        planned = per_launch_us(plan.launch)
        rows, total = profile(launch, 2000, a.top)
        print(f"## {name}\n\ncall {call:.2f} us, plan {planned:.2f} us (cProfile total {total:.1f} us per call)\n")
        print("| function | calls per launch | self us per launch |\n|---|---|---|")
        for where, calls, us in rows:
            print(f"| `{where}` | {calls:g} | {us:.2f} |")
        print()
        out["cases"].append({"case": name, "call_us": round(call, 3), "plan_us": round(planned, 3),
                             "profile": [{"function": w, "calls": c, "self_us": round(u, 3)} for w, c, u in rows]})
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
