"""python3 -m tri.triton converts each export on its own (issue 30): `-k` picks an export even
when another one is bad, a run without -k converts the good ones and names the bad ones, a
misspelled Triton type lists the types there are, `--help` works without libtri, and kernels
with block pointers (tl.make_block_ptr, which Triton's TTIR stage rewrites into pointer blocks
with masks) convert and run."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from test_tool import SRC, VADD, VADD_SIG, needs_triton, tool, write

import tri

TWO = f"""

TRI_EXPORTS = {{
    "good": dict(kernel=add_kernel, signature={VADD_SIG}, constexprs={{"BLOCK": 64}}),
    "bad": dict(kernel=add_kernel, signature={{"x_ptr": "*float32", "y_ptr": "*fp32", "out_ptr": "*fp32",
                                               "n": "i32"}}, constexprs={{"BLOCK": 64}}),
}}
"""


@needs_triton
def test_k_selects_an_export_when_another_is_bad(tmp_path):
    write(tmp_path, "k.py", VADD, TWO)
    r = tool("k.py", "-k", "good", "-o", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "good.tri").exists() and not (tmp_path / "out" / "bad.tri").exists()
    assert "bad" not in r.stderr


@needs_triton
def test_every_good_export_converts_and_the_bad_one_is_named(tmp_path):
    write(tmp_path, "k.py", VADD, TWO)
    r = tool("k.py", "-o", "out", cwd=tmp_path)
    assert r.returncode == 1
    assert (tmp_path / "out" / "good.tri").exists()
    assert "export 'bad': signature['x_ptr'] is '*float32', which is not a Triton type (did you mean '*fp32'?): " \
           "the types are i1, i8, i16, i32, i64" in r.stderr, r.stderr
    assert "1 of 2 export(s) failed" in r.stderr
    r = tool("k.py", "-k", "bad", "-o", "out2", cwd=tmp_path)
    assert r.returncode == 1 and "'*float32'" in r.stderr and not (tmp_path / "out2").exists()


def test_help_needs_no_libtri(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("TRI_LIBRARY", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(SRC)
    r = subprocess.run([sys.executable, "-m", "tri.triton", "--help"], cwd=tmp_path, env=env, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "usage: python3 -m tri.triton" in r.stdout and "TRI_EXPORTS" in r.stdout
    # The library is needed only once something uses it, and then the message says what was tried.
    r = subprocess.run([sys.executable, "-c", "import tri; tri.Context()"], cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert r.returncode != 0 and "libtri could not be loaded" in r.stderr, r.stderr


BLOCK_PTR = """
    @triton.jit
    def scale_rows(x_ptr, y_ptr, M, N, stride_m, BM: tl.constexpr, BN: tl.constexpr):
        pid = tl.program_id(0)
        src = tl.make_block_ptr(x_ptr, shape=(M, N), strides=(stride_m, 1), offsets=(pid * BM, 0),
                                block_shape=(BM, BN), order=(1, 0))
        dst = tl.make_block_ptr(y_ptr, shape=(M, N), strides=(stride_m, 1), offsets=(pid * BM, 0),
                                block_shape=(BM, BN), order=(1, 0))
        v = tl.load(src, boundary_check=(0, 1), padding_option="zero")
        tl.store(dst, v * 2.0, boundary_check=(0, 1))


    TRI_EXPORTS = {"scale_rows": dict(kernel=scale_rows, signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32",
                                                                    "N": "i32", "stride_m": "i32"},
                                      constexprs={"BM": 16, "BN": 16})}
    """


@needs_triton
def test_block_pointers_convert_and_run(tmp_path):
    write(tmp_path, "k.py", BLOCK_PTR)
    r = tool("k.py", "-o", "out", "--check", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    m, n = 20, 12  # the second program's rows and every row's columns are partly out of bounds
    x = np.arange(m * n, dtype=np.float32).reshape(m, n)
    y = np.full((m, n), -1.0, np.float32)
    with tri.Context() as ctx:
        k = ctx.load(tmp_path / "out" / "scale_rows.tri").compile("scale_rows", target="cpu")
        k[2](x, y, m, n, n)
    np.testing.assert_array_equal(y, 2 * x)
