"""The wheel stands on its own (issue 30): built from a copy of bindings/python with
TRI_LIBRARY naming this build's libtri.so, it carries the library; installed with pip into a
fresh virtual environment, offline, it imports and runs a kernel with no TRI_LIBRARY and no
LD_LIBRARY_PATH, loading the libtri.so inside the environment. The environment sees the system's
packages for NumPy, the one dependency (no index is reachable here)."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import tri
from conftest import EXAMPLES, HERE


def can_build_wheels_offline():
    """setuptools 70.1 and later build wheels alone; earlier ones need the `wheel` package."""
    try:
        import setuptools.command.bdist_wheel  # noqa: F401
        return True
    except ImportError:
        try:
            import wheel  # noqa: F401
            return True
        except ImportError:
            return False


def test_a_wheel_with_libtri_installs_offline_into_a_fresh_venv(tmp_path):
    assert can_build_wheels_offline(), (
        f"{sys.executable} cannot build a wheel offline: its setuptools is older than 70.1 and it has no `wheel` "
        "package (pip install wheel; Debian: python3-wheel, which python3-pip brings)")
    lib = Path(tri._capi.lib._name).resolve()  # the library these tests use
    src = tmp_path / "src"
    shutil.copytree(HERE.parent, src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info", "libtri.so*"))
    wheels = tmp_path / "wheels"
    env = dict(os.environ, TRI_LIBRARY=str(lib))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index",
                            "-w", str(wheels), str(src)], env=env, capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = wheels.glob("tri-*.whl")
    assert wheel.name.endswith(("-py3-none-linux_x86_64.whl", "-py3-none-linux_aarch64.whl")) or "-cp3" in wheel.name, \
        wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    assert "tri/libtri.so" in names and "tri/__init__.py" in names
    assert zipfile.ZipFile(wheel).getinfo("tri/libtri.so").file_size == lib.stat().st_size

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    clean = {k: v for k, v in os.environ.items() if k not in ("TRI_LIBRARY", "LD_LIBRARY_PATH", "PYTHONPATH")}
    install = subprocess.run([str(py), "-m", "pip", "install", "--no-index", str(wheel)], env=clean,
                             capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    program = (
        "import numpy as np, tri\n"
        f"k = tri.Context().load({str(EXAMPLES / 'vector_add.tri')!r}).compile('vector_add')\n"
        "x = np.arange(7, dtype=np.float32); out = np.zeros_like(x); k[1](x, x, out, 7)\n"
        "assert (out == 2 * x).all(), out\n"
        "print(tri._capi.lib._name)\n"
    )
    run = subprocess.run([str(py), "-c", program], env=clean, cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert Path(run.stdout.strip()).is_relative_to(venv), run.stdout
