"""The committed capture (tests/triton/capture/, made by a dry run of capture_program.py: see its
manifest's note) replayed without Triton or a GPU: `python3 -m tri.triton.replay` runs every
launch on Tri's cpu and interp targets from the saved .tri files and input bytes and compares with
the saved outputs; a wrong output, a write outside a tensor's view, a missing kernel file and a
broken manifest are failed rows or messages, and the replay goes on. The manifest alone is enough
to launch each kernel through the C API (here through the Python binding, without replay.py), as
a C host would. The replay next to Triton, which runs on a GPU, runs here on host memory with Tri's
interpreter standing in for Triton's compiled kernel. Needs NumPy and pytest, never Triton."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SRC = ROOT / "bindings" / "python" / "src"
CAPTURE = HERE / "capture"
sys.path.insert(0, str(SRC))

import tri  # noqa: E402

KERNELS = ["add_kernel", "softmax_kernel", "matmul_kernel", "histogram_kernel", "axpy_kernel"]


def replay(*args, cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC)] + os.environ.get("PYTHONPATH", "").split(os.pathsep)),
               PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "tri.triton.replay", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def rows(stdout):
    """The table's rows as lists of cells."""
    out = []
    for line in stdout.splitlines():
        if line.startswith("| ") and not line.startswith("| kernel"):
            out.append([c.strip() for c in line.strip("|").split(" | ")])
    return out


@pytest.fixture
def copy(tmp_path):
    dst = tmp_path / "capture"
    shutil.copytree(CAPTURE, dst)
    return dst


def manifest(folder):
    return json.loads((folder / "manifest.json").read_text())


def test_the_committed_capture_replays_on_cpu_and_interp(tmp_path):
    r = replay(CAPTURE.relative_to(ROOT), "--target", "cpu", "--target", "interp", "--json", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    table = rows(r.stdout)
    assert [(c[0], c[2]) for c in table] == [(k, t) for k in KERNELS for t in ("cpu", "interp")]
    for c in table:
        assert c[4].startswith("ok"), c
    assert "10 of 10 rows ok." in r.stdout
    assert r.stdout.rstrip().endswith("10 of 10 rows ok.")  # the table comes last
    assert "expected outputs from tri interp (dry run)" in r.stdout
    # The histogram was launched twice into the same bins: one row with count 2, whose saved
    # input is the first launch's (zeros), and whose output counts each element once.
    hist = next(c for c in table if c[0] == "histogram_kernel")
    assert hist[3] == "2"
    result = json.loads((tmp_path / "r.json").read_text())
    row = result["rows"][0]
    assert row["workload"] == "triton corpus add_kernel fp32[300]"
    assert (row["unit"], row["higher_is_better"], row["triton"], row["failed"]) == ("ms", False, None, False)
    assert row["tri"] > 0 and row["compile_ms"] > 0 and row["outputs"] == {"out_ptr": "exact"}
    assert {r["target"] for r in result["rows"]} == {"cpu", "interp"}


def test_the_committed_capture_is_small_and_says_where_its_outputs_came_from():
    size = sum(p.stat().st_size for p in CAPTURE.rglob("*") if p.is_file())
    assert size < 64 * 1024, size
    m = manifest(CAPTURE)
    assert "dry run without a GPU" in m["note"] and "interpreter" in m["note"]
    assert {l["outputs_from"] for l in m["launches"]} == {"tri interp (dry run)"}
    text = (CAPTURE / "manifest.json").read_text() + "".join(p.read_text() for p in (CAPTURE / "kernels").iterdir())
    assert '"/' not in text and str(ROOT) not in text  # no absolute paths


def edit_output(folder, kernel, arg, dtype, edit):
    """Changes the saved output of the storage of argument `arg` of `kernel`'s launch: edit(elements)."""
    launch = next(l for l in manifest(folder)["launches"] if l["kernel"] == kernel)
    a = next(a for a in launch["args"] if a["name"] == arg)
    path = folder / launch["storages"][a["storage"]]["output"]
    data = np.load(path)
    edit(data.view(dtype))
    np.save(path, data)


def test_a_wrong_output_is_a_failed_row_and_the_others_still_run(copy):
    edit_output(copy, "add_kernel", "out_ptr", np.float32, lambda v: v.__setitem__(7, v[7] + 1))
    r = replay(copy)
    assert r.returncode == 1
    table = rows(r.stdout)
    assert table[0][0] == "add_kernel" and table[0][3].startswith("FAIL (compare: out_ptr: 1 of 300 fp32 elements "
                                                                  "off by more than atol 1e-05"), table[0]
    assert "element [7] is" in table[0][3]
    assert all(c[3].startswith("ok") for c in table[1:]), table
    assert "4 of 5 rows ok." in r.stdout


def test_integers_are_compared_bit_for_bit(copy):
    edit_output(copy, "histogram_kernel", "bins_ptr", np.int32, lambda v: v.__setitem__(3, v[3] + 1))
    r = replay(copy, "-k", "histogram_kernel")
    assert r.returncode == 1
    (row,) = rows(r.stdout)
    assert "FAIL (compare: bins_ptr: 1 of 16 i32 elements differ (compared bit for bit); element [3] is" in row[3]


def test_a_write_outside_every_view_is_caught(copy):
    # axpy's storage: x views elements 8..207, y 264..463; bytes 0..31 belong to neither.
    axpy = next(l for l in manifest(copy)["launches"] if l["kernel"] == "axpy_kernel")
    assert [a["byte_offset"] for a in axpy["args"] if a["kind"] == "tensor"] == [32, 1056]
    edit_output(copy, "axpy_kernel", "x_ptr", np.uint8, lambda v: v.__setitem__(5, v[5] ^ 0xFF))
    r = replay(copy, "-k", "axpy_kernel")
    assert r.returncode == 1
    (row,) = rows(r.stdout)
    assert "storage of x_ptr, y_ptr: byte 5 of 1856, outside every argument's view, differs" in row[3], row


def test_a_missing_kernel_file_is_a_row_with_the_library_message(copy):
    (copy / "kernels" / "matmul_kernel.tri").unlink()
    r = replay(copy)
    assert r.returncode == 1
    table = rows(r.stdout)
    mm = next(c for c in table if c[0] == "matmul_kernel")
    assert mm[3].startswith("FAIL (import: cannot read ") and "matmul_kernel.tri" in mm[3], mm
    assert sum(c[3].startswith("ok") for c in table) == 4


def test_without_saved_data_the_kernels_still_compile(copy):
    m = manifest(copy)
    for launch in m["launches"]:
        for s in launch["storages"]:
            s.pop("input", None)
            s.pop("output", None)
    (copy / "manifest.json").write_text(json.dumps(m))
    r = replay(copy)
    assert r.returncode == 0, r.stderr
    assert all(c[3] == "compiled (no input data saved)" for c in rows(r.stdout))


@pytest.mark.parametrize("text, message", [
    ("{", "manifest.json:1:2: not JSON"),
    ('{"format": "other", "version": 1, "launches": []}', "not a capture manifest of format tri-triton-capture"),
    ('{"format": "tri-triton-capture", "version": 1, "launches": [{"kernel": "k"}]}', "launch 0: no 'signature'"),
])
def test_a_broken_manifest_is_a_message(copy, text, message):
    (copy / "manifest.json").write_text(text)
    r = replay(copy)
    assert r.returncode == 1
    assert "python3 -m tri.triton.replay: error:" in r.stderr and message in r.stderr, r.stderr


def test_usage(copy):
    assert replay(copy, "--target", "gpu").returncode == 2
    r = replay(copy, "-k", "nope")
    assert r.returncode == 1 and "no launch of nope" in r.stderr and "add_kernel" in r.stderr


# ---------------------------------------------------------------- as a C host would

def test_the_manifest_is_enough_to_launch_each_kernel():
    """Each launch from manifest.json alone, through the C API (the binding's Module, Kernel,
    Buffer): the .tri file, the kernel name, the grid, the arguments in order with their dtype,
    storage, byte offset and extent. Outputs match the saved ones."""
    m = manifest(CAPTURE)
    with tri.Context(cache_dir="") as ctx:
        for launch in m["launches"]:
            kernel = ctx.load(CAPTURE / launch["tri"]).compile(launch["kernel"], target="cpu")
            assert [p.name for p in kernel.params] == [a["name"] for a in launch["args"]]
            storages = []
            for s in launch["storages"]:
                raw = np.load(CAPTURE / s["input"])
                assert raw.dtype == np.uint8 and raw.size == s["nbytes"]
                storages.append(raw.copy())
            values = []
            for a in launch["args"]:
                if a["kind"] == "tensor":
                    buf = storages[a["storage"]]
                    assert a["extent_bytes"] == buf.size - a["byte_offset"]
                    values.append(tri.Buffer(buf.ctypes.data + a["byte_offset"], a["extent_bytes"],
                                             tri.DType[a["dtype"].upper()]))
                else:
                    values.append(a["value"])
            kernel.launch(tuple(launch["grid"]), *values)
            for s, got in zip(launch["storages"], storages):
                want = np.load(CAPTURE / s["output"])
                if launch["kernel"] == "softmax_kernel":  # exp and division: cpu and interp may differ in the last bit
                    np.testing.assert_allclose(got.view(np.float32), want.view(np.float32), rtol=1e-6)
                else:
                    np.testing.assert_array_equal(got, want, err_msg=launch["kernel"])


# ---------------------------------------------------------------- the replay next to Triton

class InterpAsTriton:
    """Stands in for Triton's CompiledKernel on a machine without a GPU: kernel[grid](*args)
    takes every parameter's value as Triton's launcher does (pointers as addresses) and runs
    the kernel on Tri's interpreter, then `skew` on the storages it wrote."""

    def __init__(self, ctx, launch, skew=None):
        from tri.triton.launches import compile_kernel, tri_module
        self.launch, self.skew = launch, skew
        self.kernel = compile_kernel(tri_module(ctx, launch), launch, "interp")

    def __getitem__(self, grid):
        def run(*values):
            given = dict(zip([a.name for a in self.launch.args], values))
            args = []
            for p in self.kernel.params:
                a = self.launch.by_name()[p.name]
                if a.kind == "tensor":
                    extent = self.launch.storages[a.storage].nbytes - a.byte_offset
                    args.append(tri.Buffer(given[p.name], extent, p.dtype))
                else:
                    args.append(given[p.name])
            self.kernel.launch(grid, *args)
            if self.skew:
                self.skew(given)
        return run


def test_the_replay_next_to_triton_restores_compares_and_times_both():
    """replay(against_triton=True), which the GPU replay runs, on host memory: each launch's
    reference is the stand-in's launch on the captured inputs, Tri's starts from the same
    inputs (the histogram accumulates, the axpy works in place), both are timed, and a reference
    that differs fails the row in Triton's name."""
    import ctypes

    from tri.triton.replay import replay
    from tri.triton.saved import load
    launches = load(CAPTURE)
    with tri.Context(cache_dir="") as ctx:
        for launch in launches:
            for a in launch.args:
                a.raw = a.value  # the live values a capture keeps for constexprs and scalars
            skew = None
            if launch.kernel == "histogram_kernel":
                def skew(given):  # the reference counts one more in bin 0
                    ctypes.c_int32.from_address(given["bins_ptr"]).value += 1
            launch.compiled = InterpAsTriton(ctx, launch, skew)
        report = replay(launches, ("cpu",), against_triton=True, repeat=2)
    table = report.table()
    assert "| Triton ms | Tri speed / Triton speed |" in table
    status = {r.kernel: r.status for r in report.rows}
    m = re.fullmatch(r"FAIL \(compare: bins_ptr: 1 of 16 i32 elements differ \(compared bit for bit\); element \[0\] "
                     r"is (\d+), Triton's (\d+)\)", status["histogram_kernel"])
    assert m and int(m.group(2)) == int(m.group(1)) + 1, status["histogram_kernel"]
    assert all(s.startswith("ok") for k, s in status.items() if k != "histogram_kernel"), status
    assert all(r.tri_ms > 0 and r.triton_ms > 0 and r.speed > 0 for r in report.rows)
    assert "geometric mean of Tri speed / Triton speed:" in table and "over the 4 rows whose outputs matched" in table
