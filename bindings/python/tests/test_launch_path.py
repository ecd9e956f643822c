"""The compiled launch path (tri/_launch.c) and the pure-Python one do the same thing: every case
of launch_cases.py (NumPy arrays, Buffers, scalars at the edges of their ranges, grids, streams,
closed handles, plans; on the "cuda" target, through the fake driver, DevicePtr,
__cuda_array_interface__ v2 and v3 with their streams, DLPack and torch tensors) gives the same
outputs, or the same exception with the same message, on both; the plain cases are launched by the
compiled path itself and the others handed to the Python path. tests/bindings/run.sh builds the
extension and names it (TRI_PYTHON_EXTENSION_PATH); TRI_TEST_FAKE_LIBCUDA names the fake driver."""

import json
import os
import subprocess
import sys

import pytest

import tri
from conftest import HERE

FAKE = os.environ.get("TRI_TEST_FAKE_LIBCUDA")
needs_extension = pytest.mark.skipif(
    tri.launch_path() != "extension" and os.environ.get("TRI_PYTHON_EXTENSION") != "1",
    reason="the compiled launch path is not built here (tests/bindings/run.sh builds it)")


def run_cases(extension: bool):
    env = dict(os.environ, TRI_PYTHON_EXTENSION="1" if extension else "0")
    if FAKE:
        env["TRI_LIBCUDA"] = FAKE
    else:
        env.pop("TRI_LIBCUDA", None)
    run = subprocess.run([sys.executable, str(HERE / "launch_cases.py")], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert lines[0]["launch_path"] == ("extension" if extension else "python")
    return {c["case"]: c for c in lines[1:]}


@needs_extension
def test_both_paths_do_the_same():
    compiled, python = run_cases(True), run_cases(False)
    assert list(compiled) == list(python)
    if FAKE:
        assert any(name.startswith("torch:") for name in compiled), "the cuda cases did not run"
    for name, c in compiled.items():
        assert c["result"] == python[name]["result"], f"{name}: compiled {c['result']} != python {python[name]['result']}"
        if c["path"] == "fast":
            assert c["fallback"] == 0 and c["fast"] > 0, f"{name}: expected the compiled path to launch it: {c}"
        else:
            assert c["fallback"] > 0, f"{name}: expected the Python path to take it: {c}"
    # Once a torch dtype is known, tensors are read without torch building their interface.
    if FAKE:
        assert compiled["torch: first tensor"]["probes"]["torch interface reads"] > 0
        assert compiled["torch: tensors"]["probes"]["torch interface reads"] == 0
        assert python["torch: tensors"]["probes"]["torch interface reads"] > 0
    # The cases are not vacuous: both kinds of outcome are there.
    kinds = {c["result"][0] for c in compiled.values()}
    assert kinds == {"ok", "raised"}


def test_the_python_path_when_the_extension_is_turned_off():
    program = "import tri; print(tri.launch_path())"
    env = dict(os.environ, TRI_PYTHON_EXTENSION="0")
    run = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "python"


def test_an_extension_that_cannot_load_is_an_error_only_when_required(tmp_path):
    bogus = tmp_path / "_launch.so"
    bogus.write_bytes(b"not a shared object")
    program = "import tri; print(tri.launch_path())"
    env = dict(os.environ, TRI_PYTHON_EXTENSION_PATH=str(bogus), TRI_PYTHON_EXTENSION="auto")
    run = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "python", run.stderr
    env["TRI_PYTHON_EXTENSION"] = "1"
    run = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True)
    assert run.returncode != 0
    assert "TRI_PYTHON_EXTENSION=1" in run.stderr and "cannot be loaded" in run.stderr
