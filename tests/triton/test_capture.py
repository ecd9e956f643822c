"""The capture of Triton launches on a machine without a GPU: capture_program.py runs under
tri.triton.capture(dry_run=True), through Triton's own runtime (its binder, specialization,
autotuner, heuristics and compiler; only the CUDA launcher is replaced by Tri's interpreter),
and the hook on CompiledKernel's launcher records each launch: kernel and source line, TTIR,
constexprs (the autotuner's and heuristics' choices too), the parameters Triton fixed because they
were 1, divisibility, num_warps/num_stages, the grid, and the arguments (shapes, strides,
storages, aliasing); launches alike are counted once. The dry run saves exactly the committed
capture (tests/triton/capture/), Triton's state is restored after the block, and the command
(`python3 -m tri.triton.capture --dry-run`) captures, replays on the cpu target and prints the
table, with a failed row for a kernel Tri cannot import. Needs Triton (pip install triton); without
it the tests print "skipped: triton not installed". torch CPU tensors are tested where PyTorch is
installed."""

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SRC = ROOT / "bindings" / "python" / "src"
sys.path.insert(0, str(SRC))
sys.path.insert(0, str(HERE))

try:
    import triton
except ImportError:
    triton = None

needs_triton = pytest.mark.skipif(triton is None, reason="skipped: triton not installed")
try:
    import torch
except ImportError:
    torch = None

PROGRAM = HERE / "capture_program.py"


def command(module, *args, cwd=ROOT, python=sys.executable):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC)] + os.environ.get("PYTHONPATH", "").split(os.pathsep)),
               PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([python, "-m", module, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def table_rows(stdout):
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in stdout.splitlines()
            if line.startswith("| ") and not line.startswith("| kernel")]


def program():
    """capture_program, as a fresh process has it: its autotuner has tuned nothing (so the
    softmax's benchmark launches run before the one recorded, and write its output)."""
    import capture_program
    capture_program.softmax_kernel.cache.clear()
    return capture_program


def failing_program(tensors: str) -> str:
    """A program of two kernels, the first of which Tri cannot import (tl.histogram); `tensors`
    defines tensor(numpy_array), which makes the arrays it launches them on."""
    return tensors + textwrap.dedent("""\
        import numpy as np
        import triton
        import triton.language as tl


        @triton.jit
        def hist_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n, other=0)
            tl.store(out_ptr + tl.arange(0, 8), tl.histogram(x, 8))


        @triton.jit
        def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


        x = tensor(np.arange(64, dtype=np.int32) % 8)
        hist_kernel[(1,)](x, tensor(np.zeros(8, np.int32)), 64, BLOCK=64)
        out = tensor(np.zeros(64, np.int32))
        copy_kernel[(1,)](x, out, 64, BLOCK=64)
        """)


def line_of(path, text):
    return next(i for i, line in enumerate(Path(path).read_text().split("\n"), 1) if text in line)


@pytest.fixture
def recorded():
    import tri.triton
    p = program()
    with tri.triton.capture(dry_run=True, relative_to=str(ROOT)) as rec:
        p.run(p.HostArrays())
    return rec


@needs_triton
def test_every_launch_is_recorded_with_its_specialization(recorded):
    rec = recorded
    assert [l.kernel for l in rec.launches] == ["add_kernel", "softmax_kernel", "matmul_kernel", "histogram_kernel",
                                                "axpy_kernel"]
    assert (rec.total, rec.tuning, rec.skipped) == (6, 2, 0)
    assert rec.summary() == "6 launches of 5 kernels captured, 5 different; 2 autotuner benchmark launches not recorded"
    add, softmax, mm, hist, axpy = rec.launches
    lines = PROGRAM.read_text().split("\n")
    for l in rec.launches:
        path, line = l.source.rsplit(":", 1)
        assert path == "tests/triton/capture_program.py"
        assert lines[int(line) - 1].startswith(f"def {l.kernel}("), l.source
        assert l.ttir.lstrip().startswith("#loc") and f"tt.func public @{l.kernel}(" in l.ttir
        assert l.target == {"backend": "cuda", "arch": 90, "warp_size": 32}
    # A heuristic chose the block; the grid was a function of it, resolved.
    assert add.constexprs == {"BLOCK": 64} and add.grid == (5, 1, 1) and add.num_warps == 4
    assert add.divisibility == ["x_ptr", "y_ptr", "out_ptr"]  # n = 300 is not a multiple of 16
    # The autotuner's config (the first, in a dry run) and the heuristic under it; a stride of
    # 1 became a constant; a row stride of 64 is divisible by 16.
    assert softmax.num_warps == 2 and softmax.constexprs == {"BLOCK_N": 64}
    assert softmax.specialized == {"in_col_stride": 1}
    assert softmax.divisibility == ["out_ptr", "in_ptr", "in_row_stride"]
    assert [a.name for a in softmax.runtime_args] == ["out_ptr", "in_ptr", "in_row_stride", "out_row_stride", "n_cols"]
    # A transposed view: strides (1, K); three strides equal to 1.
    b = mm.by_name()["b_ptr"]
    assert (b.dtype, b.shape, b.strides, b.byte_offset) == ("fp16", (40, 24), (1, 40), 0)
    assert mm.specialized == {"stride_ak": 1, "stride_bk": 1, "stride_cn": 1}
    assert mm.constexprs == {"BM": 16, "BN": 16, "BK": 16} and mm.grid == (3, 2, 1)
    # Launched twice: counted, with the first launch's inputs (the bins were zero) and outputs.
    assert hist.count == 2
    bins = hist.by_name()["bins_ptr"]
    assert not hist.storages[bins.storage].before.any()
    assert hist.storages[bins.storage].after.view(np.int32).sum() == 500
    # Two views of one array: one storage, their offsets, the scalar by value.
    x, y = axpy.by_name()["x_ptr"], axpy.by_name()["y_ptr"]
    assert x.storage == y.storage == 0 and len(axpy.storages) == 1
    assert (x.storage_offset, y.storage_offset, axpy.storages[0].nbytes) == (8, 264, 464 * 4)
    assert axpy.by_name()["alpha"].value == 0.5 and axpy.by_name()["alpha"].type == "fp32"
    assert all(l.outputs_from == "tri interp (dry run)" and l.error is None for l in rec.launches)


@needs_triton
def test_the_dry_run_saves_the_committed_capture(recorded, tmp_path):
    committed = json.loads((HERE / "capture" / "manifest.json").read_text())
    versions = {l["triton"] for l in committed["launches"]}
    if versions != {triton.__version__}:
        pytest.skip(f"the committed capture was made with Triton {', '.join(sorted(versions))}; this is "
                    f"{triton.__version__}")
    recorded.save(str(tmp_path), data=True, relative_to=str(ROOT))
    how = ("python3 -m tri.triton.capture --dry-run --no-replay --save tests/triton/capture --save-data "
           "tests/triton/capture_program.py")
    assert json.loads((tmp_path / "manifest.json").read_text()) == committed, f"remake it: {how}"
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    have = sorted(p.relative_to(HERE / "capture") for p in (HERE / "capture").rglob("*") if p.is_file())
    assert made == have
    for p in made:
        assert (tmp_path / p).read_bytes() == (HERE / "capture" / p).read_bytes(), f"{p} differs; remake it: {how}"


@needs_triton
def test_triton_is_restored_after_the_block_even_when_it_raises():
    import tri.triton
    from triton.compiler.compiler import CompiledKernel
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.driver import driver
    before = (CompiledKernel.__dict__["run"], CompiledKernel.__dict__["_init_handles"], Autotuner.__dict__["_bench"],
              driver._active)
    with pytest.raises(ZeroDivisionError):
        with tri.triton.capture(dry_run=True) as rec:
            assert CompiledKernel.__dict__["run"] is not before[0]
            with pytest.raises(RuntimeError, match="captures do not nest"):
                with tri.triton.capture():
                    pass
            1 // 0
    after = (CompiledKernel.__dict__["run"], CompiledKernel.__dict__["_init_handles"], Autotuner.__dict__["_bench"],
             driver._active)
    assert after == before
    assert len(rec) == 0
    # Both spellings: the module is callable, and has the function.
    assert tri.triton.capture.capture is not tri.triton.capture


@needs_triton
def test_only_the_kernels_asked_for(tmp_path):
    import tri.triton
    p = program()
    with tri.triton.capture(dry_run=True, kernels=["axpy_kernel", "add_kernel"]) as rec:
        p.run(p.HostArrays())
    assert [l.kernel for l in rec] == ["add_kernel", "axpy_kernel"]
    assert (rec.total, rec.skipped) == (2, 4)
    report = rec.replay()
    assert [r.status for r in report.rows] == ["ok (exact)", "ok (exact)"]


@needs_triton
def test_the_command_captures_replays_and_prints_the_table(tmp_path):
    r = command("tri.triton.capture", "--dry-run", "--json", tmp_path / "out.json", "--save", tmp_path / "saved",
                PROGRAM.relative_to(ROOT))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "capture_program: all results match NumPy (test sizes, HostArrays)" in r.stdout
    assert "tests/triton/capture_program.py: 6 launches of 5 kernels captured, 5 different; 2 autotuner " \
           "benchmark launches not recorded" in r.stderr
    table = r.stdout[r.stdout.index("| kernel"):]
    assert [c[0] for c in table_rows(table)] == ["add_kernel", "softmax_kernel", "matmul_kernel", "histogram_kernel",
                                                 "axpy_kernel"]
    assert all(c[3].startswith("ok") for c in table_rows(table))
    assert table.rstrip().endswith("5 of 5 rows ok.")
    result = json.loads((tmp_path / "out.json").read_text())
    assert [row["workload"] for row in result["rows"]][:2] == ["triton corpus add_kernel fp32[300]",
                                                              "triton corpus softmax_kernel fp32[5,50] fp32[5,64]"]
    assert result["command"].startswith("python3 -m tri.triton.capture --dry-run")
    # Saved without data: the kernels and the manifest, which the replay compiles.
    assert sorted(p.name for p in (tmp_path / "saved" / "kernels").iterdir()) == \
        ["add_kernel.tri", "axpy_kernel.tri", "histogram_kernel.tri", "matmul_kernel.tri", "softmax_kernel.tri"]
    r = command("tri.triton.replay", tmp_path / "saved")
    assert r.returncode == 0, r.stderr
    assert all(c[3] == "compiled (no input data saved)" for c in table_rows(r.stdout))


@needs_triton
def test_a_kernel_tri_cannot_import_is_a_row_and_the_others_go_on(tmp_path):
    program = tmp_path / "prog.py"
    program.write_text(failing_program("import numpy as np\nfrom tri.triton import HostTensor as tensor\n"))
    def_line, hist_line = (line_of(program, text) for text in ("def hist_kernel(", "tl.histogram("))
    r = command("tri.triton.capture", "--dry-run", "--save", tmp_path / "saved", "--save-data", program, cwd=tmp_path)
    assert r.returncode == 1
    assert f"warning: hist_kernel (prog.py:{def_line}) did not run: Tri's interpreter cannot run it (import): " \
        in r.stderr
    hist, copy = table_rows(r.stdout)
    assert hist[0] == "hist_kernel" and hist[3].startswith("FAIL (capture: dry run: Tri's interpreter cannot run it "
                                                           "(import): hist_kernel.ttir:")
    assert re.search(rf"error: op 'tt\.histogram' is not supported by the TTIR importer.*\(from .*prog\.py:{hist_line}:"
                     r"\d+\)", hist[3]), hist[3]
    assert copy[0] == "copy_kernel" and copy[3] == "ok (exact)"
    # Saved: its TTIR, and the importer's message in the manifest.
    m = json.loads((tmp_path / "saved" / "manifest.json").read_text())
    entry = m["launches"][0]
    assert entry["ttir"] == "kernels/hist_kernel.ttir" and "tri" not in entry
    assert entry["import_error"].startswith("kernels/hist_kernel.ttir:") and "tt.histogram" in entry["import_error"]
    assert (tmp_path / "saved" / entry["ttir"]).read_text().count("tt.histogram") >= 1
    assert entry["source"] == f"prog.py:{def_line}"


@needs_triton
def test_a_program_that_fails_still_has_its_launches_replayed(tmp_path):
    program = tmp_path / "fails.py"
    program.write_text(PROGRAM.read_text() + "\nraise SystemExit('stopping here')\n")
    r = command("tri.triton.capture", "--dry-run", "-k", "add_kernel", program, cwd=tmp_path)
    assert r.returncode == 1
    assert "stopping here" in r.stderr and "the program failed (exit status 1)" in r.stderr
    (row,) = table_rows(r.stdout)
    assert row[0] == "add_kernel" and row[3] == "ok (exact)"


@needs_triton
def test_usage_errors(tmp_path):
    r = command("tri.triton.capture", "--save-data", PROGRAM)
    assert r.returncode == 2 and "--save-data needs --save DIR" in r.stderr
    r = command("tri.triton.capture", tmp_path / "nope.py")
    assert r.returncode == 1 and "nope.py: no such file" in r.stderr
    r = command("tri.triton.capture", "--dry-run", "-k", "nope", PROGRAM)
    assert r.returncode == 0 and "6 launches of other kernels skipped" in r.stderr
    assert "nothing to replay: " in r.stderr and "launched no Triton kernel named nope" in r.stderr


@needs_triton
@pytest.mark.skipif(torch is None, reason="skipped: PyTorch not installed")
def test_torch_cpu_tensors_are_captured_like_host_tensors(recorded):
    import tri.triton
    p = program()
    with tri.triton.capture(dry_run=True, relative_to=str(ROOT)) as rec:
        p.run(p.TorchArrays("cpu"))
    for mine, theirs in zip(rec.launches, recorded.launches):
        assert mine.key() == theirs.key()
        assert [a.framework_dtype for a in mine.args if a.kind == "tensor"][0].startswith("torch.")
        for s, t in zip(mine.storages, theirs.storages):
            assert isinstance(s.before, torch.Tensor)
            np.testing.assert_array_equal(s.before.numpy(), t.before)
            np.testing.assert_array_equal(s.after.numpy(), t.after)


DESCRIPTOR_PROGRAM = textwrap.dedent("""\
    import numpy as np
    import triton
    import triton.language as tl
    from triton.tools.tensor_descriptor import TensorDescriptor
    from tri.triton import HostTensor


    @triton.jit
    def affine_kernel(x_desc, y_desc, a, BM: tl.constexpr, BN: tl.constexpr):
        m = tl.program_id(0) * BM
        n = tl.program_id(1) * BN
        y_desc.store([m, n], x_desc.load([m, n]) * a + 1)


    M, N = 20, 24  # blocks of 8 x 16: the last ones reach past M and N
    x = np.arange(M * N, dtype=np.float32)
    y = np.full(M * N + 8, -1, np.float32)  # 8 guard elements past the view
    xd = TensorDescriptor(HostTensor(x), [M, N], [N, 1], [8, 16])
    yd = TensorDescriptor.from_tensor(HostTensor(y[:M * N].reshape(M, N)), [8, 16])
    affine_kernel[(triton.cdiv(M, 8), triton.cdiv(N, 16))](xd, yd, 2.0, BM=8, BN=16)
    assert np.array_equal(y[:M * N], x * 2 + 1) and (y[M * N:] == -1).all(), y
    print("affine: matches NumPy")
    """)


@needs_triton
def test_tensor_descriptor_arguments_are_captured_and_replayed(tmp_path):
    """A kernel launched on host-side TensorDescriptors: the dry run records each as a descriptor
    (its base's storage and offset, its own shape, strides, block shape and padding), runs it on
    the interpreter (the program checks the result, stores past the edges dropped), saves it with
    the shape and strides as the scalars Tri's kernel takes after the base, and replays it on cpu
    and interp, from the manifest alone too; Triton's side of a replay gets TensorDescriptors."""
    import tri
    from tri.triton.launches import DESCRIPTOR
    from tri.triton.replay import triton_arguments
    from tri.triton.saved import load
    program = tmp_path / "desc.py"
    program.write_text(DESCRIPTOR_PROGRAM)
    r = command("tri.triton.capture", "--dry-run", "--save", tmp_path / "saved", "--save-data", program, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "affine: matches NumPy" in r.stdout
    (row,) = table_rows(r.stdout)
    assert row[:4] == ["affine_kernel", "fp32[20,24]/[8,16]", "1", "ok (exact)"], row
    entry = json.loads((tmp_path / "saved" / "manifest.json").read_text())["launches"][0]
    assert entry["signature"] == {"x_desc": "tensordesc<fp32[8, 16]>", "y_desc": "tensordesc<fp32[8, 16]>",
                                  "a": "fp32", "BM": "constexpr", "BN": "constexpr"}
    args = entry["args"]
    assert [(a["kind"], a.get("descriptor"), a.get("value")) for a in args] == \
        [("descriptor", None, None)] + [("scalar", "x_desc", v) for v in (20, 24, 24, 1)] + \
        [("descriptor", None, None)] + [("scalar", "y_desc", v) for v in (20, 24, 24, 1)] + [("scalar", None, 2.0)]
    assert [a["dtype"] for a in args[1:5]] == ["i32", "i32", "i64", "i64"]
    assert {k: args[5][k] for k in ("dtype", "shape", "strides", "block_shape", "padding", "storage", "extent_bytes")} \
        == {"dtype": "f32", "shape": [20, 24], "strides": [24, 1], "block_shape": [8, 16], "padding": "zero",
            "storage": 1, "extent_bytes": (20 * 24 + 8) * 4}
    # As a C host would: one tri_arg per entry, in order.
    with tri.Context(cache_dir="") as ctx:
        kernel = ctx.load(tmp_path / "saved" / entry["tri"]).compile("affine_kernel", target="cpu")
        assert [p.name for p in kernel.params] == [a["name"] for a in args]
        storages = [np.load(tmp_path / "saved" / s["input"]).copy() for s in entry["storages"]]
        values = [tri.Buffer(storages[a["storage"]].ctypes.data + a["byte_offset"], a["extent_bytes"],
                             tri.DType[a["dtype"].upper()]) if a["kind"] == "descriptor" else a["value"] for a in args]
        kernel.launch(tuple(entry["grid"]), *values)
        for s, got in zip(entry["storages"], storages):
            np.testing.assert_array_equal(got, np.load(tmp_path / "saved" / s["output"]))
    r = command("tri.triton.replay", tmp_path / "saved", "--target", "interp")
    assert r.returncode == 0 and table_rows(r.stdout)[0][3] == "ok (exact)", r.stdout + r.stderr
    (launch,) = load(tmp_path / "saved")
    x, y = (a for a in launch.args if a.kind == DESCRIPTOR)
    assert (y.shape, y.strides, y.block_shape, y.storage) == ((20, 24), (24, 1), (8, 16), 1)
    tt = triton_arguments(launch, [1 << 20, 1 << 21])
    assert [type(v).__name__ for v in tt[:2]] == ["TensorDescriptor"] * 2
    assert (tt[1].base.data_ptr(), tt[1].shape, tt[1].strides, tt[1].block_shape) == (1 << 21, [20, 24], [24, 1],
                                                                                       [8, 16])
