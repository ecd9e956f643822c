"""The package installs with pip: a wheel built from a copy of bindings/python (offline, with
the system's setuptools, which compiles the launch path tri/_launch.c) installs into a fresh
folder, and the installed package finds libtri through TRI_LIBRARY, loads its own compiled launch
path and runs a kernel."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import tri
from conftest import EXAMPLES, HERE


def test_the_wheel_installs_and_runs(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(HERE.parent, src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index",
                    "-w", str(wheels), str(src)], check=True, capture_output=True)
    (wheel,) = wheels.glob("tri-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "tri/__init__.py" in names and "tri/_capi.py" in names and "tri/py.typed" in names
    assert "tri/triton/__init__.py" in names and "tri/triton/capture.py" in names
    assert any(n.startswith("tri/_launch") and n.endswith(".so") for n in names), names
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target", str(target),
                    str(wheel)], check=True, capture_output=True)
    program = (
        "import numpy as np, tri\n"
        f"ctx = tri.Context(); k = ctx.load({str(EXAMPLES / 'vector_add.tri')!r}).compile('vector_add')\n"
        "x = np.arange(7, dtype=np.float32); out = np.zeros_like(x); k[1](x, x, out, 7)\n"
        "assert (out == 2 * x).all(), out\n"
        "assert tri.launch_path() == 'extension'\n"
        "print(tri.__file__)\n"
        "print(tri._fast.__file__)\n"
    )
    # The installed package's own extension, required.
    env = {k: v for k, v in os.environ.items() if k != "TRI_PYTHON_EXTENSION_PATH"}
    env.update(PYTHONPATH=str(target), TRI_PYTHON_EXTENSION="1")
    run = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    package, extension = run.stdout.split()
    assert Path(package).is_relative_to(target) and Path(extension).is_relative_to(target)


def test_libtri_is_found_in_the_package_folder_or_named_by_the_environment(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(HERE.parent / "src" / "tri", site / "tri", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(tri._capi.lib._name, site / "tri" / "libtri.so")  # the library these tests use
    env = {k: v for k, v in os.environ.items() if k not in ("TRI_LIBRARY", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(site)
    program = "import tri; print(tri._capi.lib._name); print(tri.version())"
    run = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == str(site / "tri" / "libtri.so")
    # An explicit TRI_LIBRARY that cannot be loaded is an error, not a reason to take another.
    env["TRI_LIBRARY"] = str(tmp_path / "missing" / "libtri.so")
    run = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True)
    assert run.returncode != 0
    assert "TRI_LIBRARY names" in run.stderr and "cannot be loaded" in run.stderr
