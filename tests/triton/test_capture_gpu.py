"""Capture and replay on a GPU, next to Triton: bench/gpu/capture_demo.py (the kernels of
capture_program.py and a bf16 RMS norm on CUDA tensors) under `python3 -m tri.triton.capture`,
each kind of launch replayed through Triton and Tri (cuda) on its captured inputs, compared and
timed, the JSON in PERF.md's shape, the saved capture replayed again on cpu and cuda by
`python3 -m tri.triton.replay` against Triton's outputs; the context manager in-process; a launch
on host-side TensorDescriptors replayed next to Triton; and a kernel Tri cannot import as a failed
row with the importer's message while the others go on.
Needs PyTorch with a CUDA device and Triton; otherwise every test prints "skipped: no CUDA
device"."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SRC = ROOT / "bindings" / "python" / "src"
DEMO = ROOT / "bench" / "gpu" / "capture_demo.py"
sys.path.insert(0, str(SRC))
sys.path.insert(0, str(HERE))


def _why_not() -> str:
    try:
        import torch
    except ImportError:
        return "skipped: no CUDA device (PyTorch is not installed)"
    if not torch.cuda.is_available():
        return "skipped: no CUDA device"
    try:
        import triton  # noqa: F401
    except ImportError:
        return "skipped: no CUDA device to compare with Triton (Triton is not installed)"
    return ""


pytestmark = pytest.mark.skipif(bool(_why_not()), reason=_why_not() or "-")
KERNELS = ["add_kernel", "softmax_kernel", "matmul_kernel", "histogram_kernel", "axpy_kernel", "rms_norm_kernel"]
QUICK = ["--warmup", "5", "--rep", "20"]


def command(module, *args, cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC)] + os.environ.get("PYTHONPATH", "").split(os.pathsep)),
               PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


def table_rows(stdout):
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in stdout.splitlines()
            if line.startswith("| ") and not line.startswith("| kernel")]


def test_the_demo_is_captured_replayed_next_to_triton_and_saved(tmp_path):
    out, saved = tmp_path / "demo.json", tmp_path / "saved"
    r = command("tri.triton.capture", "--json", out, "--save", saved, "--save-data", *QUICK, DEMO, "test")
    print(r.stdout, r.stderr)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "capture_demo: all results match (test sizes)" in r.stdout
    table = table_rows(r.stdout)
    assert [c[0] for c in table] == KERNELS
    assert [c[2] for c in table] == ["1", "1", "1", "2", "1", "3"]
    result = json.loads(out.read_text())
    assert result["gpu"] and result["triton"] and result["torch"] and result["geomean_speed"] > 0
    for row in result["rows"]:
        assert row["workload"].startswith(f"triton corpus {row['kernel']} ")
        assert (row["unit"], row["higher_is_better"], row["failed"], row["target"]) == ("ms", False, False, "cuda")
        assert row["tri"] > 0 and row["triton"] > 0 and row["speed"] == pytest.approx(row["triton"] / row["tri"])
        assert row["compile_ms"] > 0 and "passes" in row["compile_stages"] and "opt+ptx" in row["compile_stages"]
    assert "geometric mean of Tri speed / Triton speed:" in r.stdout
    m = json.loads((saved / "manifest.json").read_text())
    assert m["note"].startswith("captured on a GPU")
    assert {l["outputs_from"] for l in m["launches"]} == {"triton"}
    assert {s["device"] for l in m["launches"] for s in l["storages"]} == {"cuda:0"}
    # Saved, it replays without the program: on the CPU and on the GPU, against Triton's outputs.
    r = command("tri.triton.replay", saved, "--target", "cpu", "--target", "cuda")
    print(r.stdout, r.stderr)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{2 * len(KERNELS)} of {2 * len(KERNELS)} rows ok." in r.stdout


def test_the_context_manager_in_process():
    import torch
    import triton
    import triton.language as tl
    from triton.compiler.compiler import CompiledKernel

    import tri.triton

    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, alpha * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    run = CompiledKernel.__dict__["run"]
    x = torch.randn(5000, device="cuda")
    y = torch.empty_like(x)
    with tri.triton.capture() as rec:
        for n in (5000, 5000, 3000):
            scale_kernel[(triton.cdiv(n, 256),)](x, y, n, 2.0, BLOCK=256)
    assert CompiledKernel.__dict__["run"] is run
    assert [(l.count, l.grid) for l in rec] == [(2, (20, 1, 1)), (1, (12, 1, 1))]
    assert rec.launches[0].storages[0].before.is_cuda
    report = rec.replay(warmup=5, rep=20)
    print(report.table())
    assert [r.status for r in report.rows] == ["ok (exact)", "ok (exact)"]
    assert all(r.speed and r.compile_ms for r in report.rows)


def test_tensor_descriptor_arguments_next_to_triton():
    """A launch on host-side TensorDescriptors (TMA on Triton's side): captured as descriptors,
    replayed through Triton (TensorDescriptors on the replay's copies) and Tri (base, shape,
    strides), compared bit for bit, stores past the edges dropped on both."""
    import torch
    import triton
    import triton.language as tl
    from triton.tools.tensor_descriptor import TensorDescriptor

    import tri.triton

    @triton.jit
    def affine_kernel(x_desc, y_desc, a, BM: tl.constexpr, BN: tl.constexpr):
        m = tl.program_id(0) * BM
        n = tl.program_id(1) * BN
        y_desc.store([m, n], x_desc.load([m, n]) * a + 1)

    M, N = 200, 244  # not multiples of the 8 x 16 blocks
    x = torch.randn(M * N, device="cuda")
    y = torch.full((M * N + 8,), -1.0, device="cuda")
    with tri.triton.capture() as rec:
        affine_kernel[(triton.cdiv(M, 8), triton.cdiv(N, 16))](
            TensorDescriptor(x, [M, N], [N, 1], [8, 16]), TensorDescriptor.from_tensor(y[:M * N].view(M, N), [8, 16]),
            2.0, BM=8, BN=16)
    torch.cuda.synchronize()
    assert torch.equal(y[:M * N], x * 2 + 1) and bool((y[M * N:] == -1).all())
    (launch,) = rec.launches
    assert [a.kind for a in launch.args[:2]] == ["descriptor", "descriptor"]
    assert launch.args[1].block_shape == (8, 16) and launch.args[1].shape == (M, N)
    report = rec.replay(warmup=5, rep=20)
    print(report.table())
    assert [r.status for r in report.rows] == ["ok (exact)"]
    assert report.rows[0].speed and report.rows[0].triton_ms


def test_a_kernel_tri_cannot_import_is_a_row_and_the_others_go_on(tmp_path):
    from test_capture import failing_program
    program = tmp_path / "prog.py"
    program.write_text(failing_program("import numpy as np\nimport torch\n\n\ndef tensor(a):\n"
                                       "    return torch.from_numpy(a).cuda()\n"))
    r = command("tri.triton.capture", *QUICK, program, cwd=tmp_path)
    print(r.stdout, r.stderr)
    assert r.returncode == 1
    hist, copy = table_rows(r.stdout)
    assert hist[0] == "hist_kernel" and hist[3].startswith("FAIL (import: ") and "tt.histogram" in hist[3]
    assert copy[0] == "copy_kernel" and copy[3] == "ok (exact)"
