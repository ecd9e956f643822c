"""GPU benchmarks: each memory-bound workload run through Tri (examples/*.tri, launched with
tri_launch on the current torch stream), Triton 3.x (bench/gpu/anchors.py) and PyTorch, in one
process on one GPU. Every output of Tri is checked against PyTorch before anything is timed.
Times are medians of triton.testing.do_bench (CUDA events, L2 flushed between repetitions).

usage: python3 bench/gpu/run.py [--out DIR] [--only NAME] [--commit SHA]
Writes DIR/gpu-bench.json (the shape of ../shared/design/PERF.md) and DIR/gpu-bench.md, and
prints the table last."""
import argparse
import datetime
import json
import math
import os
import sys
import time

import torch
import triton
from triton.testing import do_bench

sys.path.insert(0, os.path.dirname(__file__))
import anchors  # noqa: E402
from tri_ctypes import STAGES, Tri, stage_times  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def example(name):
    with open(os.path.join(ROOT, "examples", name + ".tri")) as f:
        return f.read()


# argmax with the builtin reduce kind (examples/argmax.tri has a combine region instead).
ARGMAX_BUILTIN = """
kernel @argmax(%in: ptr<f32>, %out: ptr<i32>, %row_stride: i32, %n_cols: i32) constexpr(BLOCK: i32 = 1024) {
  %row = program_id[axis=0] : i32
  %row_off = mul %row, %row_stride : i32
  %in_row = addptr %in, %row_off : ptr<f32>
  %cols = arange[start=0, end=BLOCK] : <BLOCK x i32>
  %nv = splat %n_cols : <BLOCK x i32>
  %mask = cmp[pred=slt] %cols, %nv : <BLOCK x i1>
  %in_rowv = splat %in_row : <BLOCK x ptr<f32>>
  %ptrs = addptr %in_rowv, %cols : <BLOCK x ptr<f32>>
  %ninf = const[value=-inf] : <BLOCK x f32>
  %x = load %ptrs, mask=%mask, other=%ninf : <BLOCK x f32>
  %idx = reduce[axis=0, kind=argmax] %x : i32
  %out_p = addptr %out, %row : ptr<i32>
  store %out_p, %idx
  return
}
"""


def bench(fn):
    return do_bench(fn, warmup=25, rep=200, return_mode="median")


def close(a, b, rtol, atol, what):
    if not torch.allclose(a.float(), b.float(), rtol=rtol, atol=atol, equal_nan=True):
        d = (a.float() - b.float()).abs().max().item()
        raise AssertionError(f"{what}: Tri differs from torch (max abs diff {d})")


class Suite:
    def __init__(self, tri, log):
        self.tri = tri
        self.log = log
        self.rows = []
        self.compile_ms = {}
        self.compile_stages = {}
        self.mods = {}

    def kernel(self, name, consts, num_warps=4, args=(), text=None, key=None):
        """Compiles kernel `name` of an example (or of `text`, a module kept under `key`);
        tri_launch specializes it on its arguments' classes (alignment, divisibility by 16) as
        Triton's launcher does."""
        key = key or name
        if key not in self.mods:
            self.mods[key] = self.tri.module(text or example(name), key + ".tri")
        mod = self.mods[key]
        self.log.clear()
        t0 = time.perf_counter()
        k = self.tri.compile(mod, name, consts, num_warps=num_warps)
        if key not in self.compile_ms:
            self.compile_ms[key] = (time.perf_counter() - t0) * 1e3
            self.compile_stages[key] = stage_times(self.log)
        # The first launch compiles the variant for these arguments' classes: not timed.
        return k

    def row(self, workload, nbytes, tri_fn, triton_fn, torch_fn, copy_gbs):
        r = {"workload": workload, "unit": "GB/s", "higher_is_better": True}
        for key, fn in (("tri", tri_fn), ("triton", triton_fn), ("torch", torch_fn)):
            if fn is None:
                continue
            ms = bench(fn)
            r[key] = nbytes / ms / 1e6
        r["target"] = r.get("triton", r.get("torch"))
        r["copy"] = copy_gbs
        self.rows.append(r)
        print(f"  {workload}: " + ", ".join(f"{k} {r[k]:.0f}" for k in ("tri", "triton", "torch") if k in r),
              flush=True)
        return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--only", default="")
    ap.add_argument("--commit", default="")
    a = ap.parse_args()
    # Compile times below are cold: a fresh disk cache, so no kernel is read back from an
    # earlier run (warm starts are tri-bench-warm's business).
    import tempfile
    os.environ["TRI_CACHE_DIR"] = tempfile.mkdtemp(prefix="tri-bench-cache-")
    torch.manual_seed(0)
    dev = torch.device("cuda")
    stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    log = []
    tri = Tri(log=lambda level, msg: log.append(msg))
    s = Suite(tri, log)
    want = lambda n: not a.only or a.only in n  # noqa: E731

    # The memory ceiling of this run: a device-to-device copy, bytes read plus written.
    n = 1 << 28
    x = torch.randn(n, device=dev)
    y = torch.empty_like(x)
    copy_gbs = 2 * 4 * n / bench(lambda: y.copy_(x)) / 1e6
    print(f"copy 2^28 f32: {copy_gbs:.0f} GB/s", flush=True)

    if want("vector add"):
        y2 = torch.randn(n, device=dev)
        out = torch.empty_like(x)
        launch_args = (x, y2, out, ("i32", n),)
        k = s.kernel("vector_add", {"BLOCK": 1024}, args=launch_args)
        args = k.args(*launch_args)
        grid = (triton.cdiv(n, 1024),)
        f = lambda: k.launch(grid, args, stream())  # noqa: E731
        f()
        close(out, x + y2, 0, 0, "vector add")
        s.row("vector add f32 2^28", 3 * 4 * n, f, lambda: anchors.triton_add(x, y2, out), lambda: torch.add(x, y2, out=out),
              copy_gbs)
        del y2, out

    if want("gelu"):
        out = torch.empty_like(x)
        launch_args = (x, out, ("i32", n),)
        k = s.kernel("gelu", {"BLOCK": 1024}, args=launch_args)
        args = k.args(*launch_args)
        grid = (triton.cdiv(n, 1024),)
        f = lambda: k.launch(grid, args, stream())  # noqa: E731
        f()
        close(out, torch.nn.functional.gelu(x, approximate="tanh"), 1e-5, 1e-6, "gelu")
        s.row("gelu tanh f32 2^28", 2 * 4 * n, f, lambda: anchors.triton_gelu(x, out),
              lambda: torch.nn.functional.gelu(x, approximate="tanh"), copy_gbs)
        del out
    del x, y

    if want("softmax"):
        for cols in (256, 1024, 4096, 16384):
            rows = 16384
            xs = torch.randn(rows, cols, device=dev)
            out = torch.empty_like(xs)
            block = triton.next_power_of_2(cols)
            launch_args = (out, xs, ("i32", xs.stride(0)), ("i32", out.stride(0)), ("i32", cols),)
            k = s.kernel("softmax", {"BLOCK": block}, num_warps=anchors.softmax_warps(block), args=launch_args)
            args = k.args(*launch_args)
            f = lambda: k.launch((rows,), args, stream())  # noqa: E731
            f()
            close(out, torch.softmax(xs, dim=1), 1e-5, 1e-6, f"softmax {cols}")
            s.row(f"softmax f32 {rows}x{cols}", 2 * 4 * rows * cols, f, lambda: anchors.triton_softmax(xs, out),
                  lambda: torch.softmax(xs, dim=1), copy_gbs)
            del xs, out

    if want("layer norm"):
        for cols in [int(c) for c in os.environ.get("TRI_BENCH_LN_COLS", "1024,4096,16384").split(",")]:
            rows = 4096
            xs = torch.randn(rows, cols, device=dev, dtype=torch.float16)
            w = torch.rand(cols, device=dev, dtype=torch.float16)
            b = torch.rand(cols, device=dev, dtype=torch.float16)
            ys = torch.empty_like(xs)
            mean = torch.empty(rows, device=dev)
            rstd = torch.empty(rows, device=dev)
            block, warps = anchors.layernorm_config(cols)
            launch_args = (xs, ys, w, b, mean, rstd, ("i32", xs.stride(0)), ("i32", cols), ("f32", 1e-5),)
            k = s.kernel("layernorm", {"BLOCK": block}, num_warps=warps, args=launch_args)
            args = k.args(*launch_args)
            f = lambda: k.launch((rows,), args, stream())  # noqa: E731
            f()
            ref = torch.nn.functional.layer_norm(xs.float(), (cols,), w.float(), b.float(), 1e-5)
            close(ys, ref, 1e-2, 1e-2, f"layer norm {cols}")
            s.row(f"layer norm f16 {rows}x{cols}", 2 * 2 * rows * cols, f,
                  lambda: anchors.triton_layernorm(xs, w, b, ys, mean, rstd),
                  lambda: torch.nn.functional.layer_norm(xs, (cols,), w, b, 1e-5), copy_gbs)
            del xs, ys

    if want("cumsum"):
        rows, cols = 16384, 1024
        xs = torch.randn(rows, cols, device=dev)
        out = torch.empty_like(xs)
        launch_args = (out, xs, ("i32", xs.stride(0)), ("i32", out.stride(0)), ("i32", cols),)
        k = s.kernel("cumsum", {"BLOCK": 1024}, args=launch_args)
        args = k.args(*launch_args)
        f = lambda: k.launch((rows,), args, stream())  # noqa: E731
        f()
        close(out, torch.cumsum(xs, dim=1), 1e-4, 1e-3, "cumsum")
        s.row(f"cumsum f32 {rows}x{cols}", 2 * 4 * rows * cols, f, lambda: anchors.triton_cumsum(xs, out),
              lambda: torch.cumsum(xs, dim=1), copy_gbs)

    if want("argmax"):
        rows, cols = 16384, 1000
        xs = torch.randn(rows, cols, device=dev)
        out = torch.empty(rows, device=dev, dtype=torch.int32)
        launch_args = (xs, out, ("i32", xs.stride(0)), ("i32", cols),)
        k = s.kernel("argmax", {"BLOCK": 1024}, args=launch_args)
        args = k.args(*launch_args)
        f = lambda: k.launch((rows,), args, stream())  # noqa: E731
        f()
        assert torch.equal(out.long(), torch.argmax(xs, dim=1)), "argmax differs from torch"
        s.row(f"argmax f32 {rows}x{cols}", 4 * rows * cols, f, lambda: anchors.triton_argmax(xs, out),
              lambda: torch.argmax(xs, dim=1), copy_gbs)
        # The same with the builtin reduce kind, whose comparison is Triton's tl.argmax's (ties to
        # the first index, NaN not ordered) where the example's combine region also ranks NaN
        # above every number, as torch.argmax does.
        kb = s.kernel("argmax", {"BLOCK": 1024}, args=launch_args, text=ARGMAX_BUILTIN, key="argmax_builtin")
        argsb = kb.args(*launch_args)
        fb = lambda: kb.launch((rows,), argsb, stream())  # noqa: E731
        out.zero_()
        fb()
        assert torch.equal(out.long(), torch.argmax(xs, dim=1)), "argmax (kind=argmax) differs from torch"
        s.row(f"argmax f32 {rows}x{cols}, reduce kind=argmax", 4 * rows * cols, fb,
              lambda: anchors.triton_argmax(xs, out), lambda: torch.argmax(xs, dim=1), copy_gbs)

    if want("histogram"):
        n, nb = 1 << 26, 64
        v = torch.randint(0, nb, (n,), device=dev, dtype=torch.int32)
        bins = torch.zeros(nb, device=dev, dtype=torch.int32)
        launch_args = (v, bins, ("i32", n),)
        k = s.kernel("histogram", {"BLOCK": 1024, "NUM_BINS": nb}, args=launch_args)
        args = k.args(*launch_args)
        f = lambda: k.launch((triton.cdiv(n, 1024),), args, stream())  # noqa: E731
        f()
        assert torch.equal(bins.long(), torch.bincount(v, minlength=nb)), "histogram differs from torch"
        s.row(f"histogram i32 2^26 into {nb} bins", 4 * n, f, lambda: anchors.triton_histogram(v, bins),
              lambda: torch.bincount(v, minlength=nb), copy_gbs)
        # The same kernel with more elements per program: the shared-memory table is set up and
        # flushed once per 8192 elements instead of per 1024 (Triton's version gains nothing
        # from it: its atomics all go to global memory).
        hb = int(os.environ.get("TRI_BENCH_HIST_BLOCK", "8192"))
        hw = int(os.environ.get("TRI_BENCH_HIST_WARPS", "4"))
        k8 = s.kernel("histogram", {"BLOCK": hb, "NUM_BINS": nb}, num_warps=hw, args=launch_args)
        args8 = k8.args(*launch_args)
        f8 = lambda: k8.launch((triton.cdiv(n, hb),), args8, stream())  # noqa: E731
        bins.zero_()
        f8()
        assert torch.equal(bins.long(), torch.bincount(v, minlength=nb)), "histogram (BLOCK 8192) differs from torch"
        s.row(f"histogram i32 2^26 into {nb} bins, BLOCK {hb}" + (f", {hw} warps" if hw != 4 else ""), 4 * n, f8, lambda: anchors.triton_histogram(v, bins),
              lambda: torch.bincount(v, minlength=nb), copy_gbs)

    res = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(), "commit": a.commit,
           "command": "python3 bench/gpu/run.py", "triton": triton.__version__, "torch": torch.__version__,
           "copy_gbs": copy_gbs, "compile_ms": s.compile_ms, "compile_stages_ms": s.compile_stages, "rows": s.rows}
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "gpu-bench.json"), "w") as f:
        json.dump(res, f, indent=1)
    lines = [f"GPU: {res['gpu']}, Triton {triton.__version__}, torch {torch.__version__}, commit {a.commit}, "
             f"copy {copy_gbs:.0f} GB/s", "",
             "| workload | Tri GB/s | Triton | torch | Tri/Triton | Tri/torch | % of copy |",
             "|---|---|---|---|---|---|---|"]
    for r in s.rows:
        t, tr, to = r.get("tri", math.nan), r.get("triton", math.nan), r.get("torch", math.nan)
        lines.append(f"| {r['workload']} | {t:.0f} | {tr:.0f} | {to:.0f} | {t / tr:.2f} | {t / to:.2f} | "
                     f"{100 * t / copy_gbs:.0f}% |")
    lines += ["", "cold compile (ms, in-process, first compile of each example, fresh disk cache; the stages as "
              "Tri's log reports them):", "",
              "| example | total | " + " | ".join(STAGES) + " |", "|---|---|" + "---|" * len(STAGES)]
    for k, v in s.compile_ms.items():
        st = s.compile_stages.get(k, {})
        lines.append(f"| {k} | {v:.1f} | " + " | ".join(f"{st[x]:.1f}" if x in st else "-" for x in STAGES) + " |")
    text = "\n".join(lines)
    with open(os.path.join(a.out, "gpu-bench.md"), "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
