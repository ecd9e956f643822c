"""Builds tri._launch, the compiled launch hot path (src/tri/_launch.c), next to the package that
pyproject.toml describes. The extension is optional: where no C compiler or Python headers exist
the package installs without it and launches through its pure-Python path (tri.launch_path() says
which one is active). It does not link libtri: the package hands it the entry points of the
libtri it loaded through ctypes."""
from setuptools import Extension, setup

setup(ext_modules=[Extension("tri._launch", ["src/tri/_launch.c"], optional=True,
                             extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wno-missing-field-initializers"])])
