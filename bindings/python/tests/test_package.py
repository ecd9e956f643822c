"""Packages (docs/aot.md) from Python: a package made by `tri aot` in the test, loaded with
Context.load_package and launched on the "cpu" target, its outputs checked against NumPy. The
same file runs against libtri (bindings/python) and against libtri_rt (bindings/python-rt:
TRI_LIBRARY names libtri_rt.so), where the compiler's calls must say they are libtri's only.

The `tri` tool comes from TRI_TOOL, else from the build tree next to TRI_LIBRARY (BUILD/src/ ->
BUILD/tools/tri)."""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tri

from conftest import EXAMPLES


def _tri_tool() -> str:
    tool = os.environ.get("TRI_TOOL")
    if not tool:
        lib = os.environ.get("TRI_LIBRARY", "")
        tool = str(Path(lib).resolve().parent.parent / "tools" / "tri") if lib else ""
    assert tool and os.access(tool, os.X_OK), f"no tri tool at {tool!r}: set TRI_TOOL to BUILD/tools/tri"
    return tool


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("aot") / "vector_add.tripkg"
    subprocess.run([_tri_tool(), "aot", str(EXAMPLES / "vector_add.tri"), "-o", str(out), "--target", "cpu",
                    "--kernel", "vector_add:BLOCK=256", "--kernel", "vector_add:BLOCK=1024"], check=True,
                   capture_output=True)
    return out


def _add(kernel: tri.Kernel, block: int, n: int = 3001) -> None:
    rng = np.random.default_rng(block)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    kernel.launch(((n + block - 1) // block, 1, 1), x, y, out, n)
    np.testing.assert_array_equal(out, x + y)


def test_a_package_loads_and_its_kernels_launch(ctx, package):
    m = ctx.load_package(package)
    for block in (256, 1024):
        _add(m.kernel("vector_add", target="cpu", constexprs={"BLOCK": block}), block)
    # Reflection is the package's.
    assert [p.name for p in m.function("vector_add").runtime_params] == ["x", "y", "out", "n"]
    info = m.package_info()
    assert info["schema"] == 1
    assert "vector_add" in str(info["kernels"])


def test_a_package_from_bytes(ctx, package):
    m = ctx.load_package(package.read_bytes(), name="vector_add.tripkg")
    _add(m.kernel("vector_add", tri.CompileOptions(target="cpu", constexprs={"BLOCK": 256})), 256)


def test_a_specialization_the_package_lacks_is_not_found(ctx, package):
    m = ctx.load_package(package)
    with pytest.raises(tri.TriError) as e:
        m.kernel("vector_add", target="cpu", constexprs={"BLOCK": 512})
    assert e.value.code == tri.ErrorCode.NOT_FOUND
    assert "BLOCK" in e.value.message


def test_a_damaged_package_is_refused(ctx, package):
    data = bytearray(package.read_bytes())
    data[len(data) // 2] ^= 0x40
    with pytest.raises(tri.TriError) as e:
        ctx.load_package(bytes(data), name="damaged.tripkg")
    assert e.value.code == tri.ErrorCode.CORRUPT_BINARY


def test_the_library_in_use(ctx, package):
    """libtri_rt has no compiler: its absent calls say so; libtri compiles the same kernel from
    IR and the package's launch gives the same result."""
    expect_rt = os.path.basename(os.environ.get("TRI_LIBRARY", "")).startswith("libtri_rt")
    assert tri.runtime_only() == expect_rt
    if expect_rt:
        with pytest.raises(tri.TriError) as e:
            ctx.load(EXAMPLES / "vector_add.tri")
        assert e.value.code == tri.ErrorCode.UNSUPPORTED
        assert "tri_module_create is libtri's only" in e.value.message
    else:
        _add(ctx.load(EXAMPLES / "vector_add.tri").compile("vector_add", target="cpu"), 1024)
        # libtri compiles, from a package's IR, what the package does not hold.
        _add(ctx.load_package(package).compile("vector_add", target="cpu", constexprs={"BLOCK": 128}), 128)


def test_tuned_configs_from_a_tuning_store(ctx, tmp_path):
    """`tri tune` stores its winner; `tri aot --tuned` freezes it into the package, whose kernel
    a request without constexprs then gets: BLOCK=2048 and 8 warps instead of the default 1024.
    A grid sized for 2048 leaves elements unwritten if the kernel has BLOCK=1024."""
    n = 5000
    subprocess.run([_tri_tool(), "tune", str(EXAMPLES / "vector_add.tri"), "--kernel", "vector_add", "--target", "cpu",
                    "--config", "BLOCK=2048,warps=8", "--config", "BLOCK=100", "--arg", f"x=rand:f32[{n}]",
                    "--arg", f"y=iota:f32[{n}]", "--arg", f"out=zeros:f32[{n}]", "--arg", f"n={n}", "--key", "n",
                    "--grid", f"{n}/BLOCK", "--cache-dir", str(tmp_path / "cache"), "--export",
                    str(tmp_path / "tuned.json")], check=True, capture_output=True)
    for store in (tmp_path / "tuned.json", tmp_path / "cache"):
        out = tmp_path / "tuned.tripkg"
        subprocess.run([_tri_tool(), "aot", str(EXAMPLES / "vector_add.tri"), "-o", str(out), "--target", "cpu",
                        "--kernel", "vector_add", "--tuned", str(store)], check=True, capture_output=True)
        m = ctx.load_package(out)
        entries = {(e["constexprs"]["BLOCK"], e["num_warps"], e["tuned"]) for e in m.package_info()["kernels"]}
        assert entries == {(1024, 4, False), (2048, 8, True)}, entries
        _add(m.kernel("vector_add", target="cpu"), 2048, n)
        # Named values pick the entry that has them: the defaults, named, are the untuned one.
        _add(m.kernel("vector_add", target="cpu", constexprs={"BLOCK": 1024}), 1024, n)
        _add(m.kernel("vector_add", target="cpu", num_warps=8), 2048, n)
