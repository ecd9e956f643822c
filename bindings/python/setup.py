"""Builds the package pyproject.toml describes: tri._launch, the compiled launch hot path
(src/tri/_launch.c), optional (where no C compiler or Python headers exist the package installs
without it and launches through its pure-Python path; tri.launch_path() says which one is active;
it does not link libtri: the package hands it the entry points of the libtri it loaded through
ctypes); and, with TRI_LIBRARY naming a built libtri.so
(`TRI_LIBRARY=build/src/libtri.so pip wheel bindings/python`, or `cmake --build build --target
python-wheel`), the wheel carries that library in the package, where src/tri/_capi.py looks
first, and is tagged for this platform: `pip install tri-*.whl` then `import tri` works with
nothing else installed or set. Without TRI_LIBRARY the wheel is pure Python and finds libtri on
the system (or through TRI_LIBRARY at run time)."""
import os
import shutil

from setuptools import Distribution, Extension, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel  # setuptools 70.1 and later
except ImportError:
    from wheel.bdist_wheel import bdist_wheel  # the `wheel` package pyproject.toml requires

LIBRARY = os.environ.get("TRI_LIBRARY", "")


class BuildPyWithLibtri(build_py):
    """Copies TRI_LIBRARY (the file a symlink names) into the package as tri/libtri.so."""

    def run(self):
        super().run()
        if not LIBRARY:
            return
        if not os.path.isfile(LIBRARY):
            raise SystemExit(f"TRI_LIBRARY names {LIBRARY}, which is not a file: build the 'tri' target first, or "
                             "leave TRI_LIBRARY unset for a wheel without the library")
        shutil.copyfile(os.path.realpath(LIBRARY), os.path.join(self.build_lib, "tri", "libtri.so"))


class WithLibtri(Distribution):
    """A distribution that carries libtri.so is not pure Python: its wheel is for this platform."""

    def has_ext_modules(self):
        return bool(LIBRARY) or super().has_ext_modules()


class BdistWheelForPlatform(bdist_wheel):
    """With libtri.so and no compiled extension, the wheel is for any Python 3 (ctypes loads the
    library) on this platform."""

    def get_tag(self):
        python, abi, platform = super().get_tag()
        if LIBRARY and not self.distribution.ext_modules:
            return "py3", "none", platform
        return python, abi, platform


setup(ext_modules=[Extension("tri._launch", ["src/tri/_launch.c"], optional=True,
                             extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wno-missing-field-initializers"])],
      distclass=WithLibtri, cmdclass={"build_py": BuildPyWithLibtri, "bdist_wheel": BdistWheelForPlatform})
