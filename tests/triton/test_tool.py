"""python3 -m tri.triton (bindings/python/src/tri/triton.py): the corpus's committed TTIR is what
the tool prints now, its .tri output loads and runs, and every failure (no Triton, no
TRI_EXPORTS, a wrong export, a kernel file that raises, a Triton compile error, an op Tri cannot
import, an unknown -k name) is a clear message and exit status 1. Most tests need Triton
(pip install triton) and are skipped without it; the ones that do not, run always."""

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

import tri  # noqa: E402
import tri.triton as tt  # noqa: E402

try:
    import triton
except ImportError:
    triton = None

needs_triton = pytest.mark.skipif(triton is None, reason="skipped: triton not installed")
CORPORA = {"import": ROOT / "tests" / "import", "triton": HERE}


def tool(*args, cwd, prelude=""):
    """Runs python3 -m tri.triton ARGS in `cwd`; `prelude` is Python run first in that process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC)] + os.environ.get("PYTHONPATH", "").split(os.pathsep)),
               PYTHONDONTWRITEBYTECODE="1")
    code = f"{prelude}\nimport runpy, sys\nsys.argv = ['tri.triton'] + {list(map(str, args))!r}\n" \
           "runpy.run_module('tri.triton', run_name='__main__', alter_sys=True)\n"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def write(folder, name, *parts):
    """A kernel file of `parts`, each dedented by itself."""
    path = Path(folder) / name
    path.write_text("import triton\nimport triton.language as tl\n\n\n" + "".join(textwrap.dedent(p) for p in parts))
    return path


VADD = """
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
    """
VADD_SIG = '{"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}'


# ---------------------------------------------------------------- without Triton

def test_without_triton_the_message_says_how_to_install_it(tmp_path):
    # sys.modules["triton"] = None makes `import triton` fail as if it were not installed.
    r = tool(HERE / "kernels.py", "-o", tmp_path, cwd=ROOT, prelude="import sys; sys.modules['triton'] = None")
    assert r.returncode == 1, r.stderr
    assert "python3 -m tri.triton: error: Triton is not installed" in r.stderr
    assert "-m pip install triton" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_usage_errors_exit_2(tmp_path):
    assert tool(cwd=tmp_path).returncode == 2
    r = tool(HERE / "kernels.py", "--ttir", "--ttir-only", cwd=tmp_path)
    assert r.returncode == 2 and "not allowed with" in r.stderr


def test_absolute_locations_become_relative():
    text = ('#loc = loc("/src/proj/k/kernels.py":12:1)\n#loc1 = loc("x_ptr"(#loc))\n'
            '#loc2 = loc("/opt/py/triton/language/standard.py":290:36)\n#loc3 = loc("/elsewhere/a.py":3:4)\n'
            '#loc4 = loc("rel/b.py":5:6)\n')
    got = tt.relative_locations(text, "/src/proj", "/opt/py/triton")
    assert got == ('#loc = loc("k/kernels.py":12:1)\n#loc1 = loc("x_ptr"(#loc))\n'
                   '#loc2 = loc("triton/language/standard.py":290:36)\n#loc3 = loc("/elsewhere/a.py":3:4)\n'
                   '#loc4 = loc("rel/b.py":5:6)\n')


# ---------------------------------------------------------------- with Triton

def header_version(path):
    m = re.match(r"// TTIR of .*, printed by Triton (\S+) for cuda sm_90 \(python3 -m tri\.triton\)\n",
                 path.read_text())
    assert m, f"{path}: no header line from python3 -m tri.triton"
    return m.group(1)


@needs_triton
@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_the_committed_ttir_is_what_the_tool_prints(corpus, tmp_path):
    folder = CORPORA[corpus]
    committed = sorted((folder / "ttir").glob("*.ttir"))
    versions = {header_version(p) for p in committed}
    if versions != {triton.__version__}:
        pytest.skip(f"the fixtures were printed by Triton {', '.join(sorted(versions))}; this is {triton.__version__}")
    r = tool(folder / "kernels.py", "--ttir-only", "-o", tmp_path, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    written = sorted(tmp_path.glob("*.ttir"))
    assert [p.name for p in written] == [p.name for p in committed]
    for new, old in zip(written, committed):
        assert new.read_text() == old.read_text(), \
            f"{old.relative_to(ROOT)} differs from what the tool prints: python3 -m tri.triton " \
            f"tests/{corpus}/kernels.py --ttir-only -o tests/{corpus}/ttir"
        assert '"/' not in new.read_text(), f"{new.name}: an absolute path is left in a location"


@needs_triton
def test_tri_output_loads_compiles_and_runs(tmp_path):
    r = tool(HERE / "kernels.py", "--ttir", "--check", "-o", tmp_path / "out", cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "out/rms_norm.tri: kernels.py:rms_norm_kernel (BLOCK=32) -> @rms_norm_kernel and 1 device function(s), " \
           "compiles for cpu" in r.stdout
    names = sorted(p.stem for p in (tmp_path / "out").glob("*.tri"))
    assert names == sorted(p.stem for p in (HERE / "ttir").glob("*.ttir"))
    with tri.Context() as ctx:
        for name in names:
            tri_text = (tmp_path / "out" / f"{name}.tri").read_text()
            assert tri_text.startswith("// kernels.py:") and "imported by python3 -m tri.triton" in tri_text
            # The .tri is the canonical text of what the .ttir imports to, and reads back as itself.
            from_ttir = ctx.load(tmp_path / "out" / f"{name}.ttir").to_text()
            assert tri_text.split("\n", 1)[1] == from_ttir
            assert ctx.module(tri_text, f"{name}.tri").to_text() == from_ttir
        # The shipped form runs: the transpose from its .tri, on the CPU.
        kernel = ctx.load(tmp_path / "out" / "transpose.tri").compile("transpose_kernel", target="cpu")
        M, N = 19, 13
        x = np.arange(M * N, dtype=np.float32)
        out = np.zeros(M * N, np.float32)
        kernel[(2, 2)](x, out, M, N)
        np.testing.assert_array_equal(out, x.reshape(M, N).T.ravel())


@needs_triton
def test_binary_output_and_selection(tmp_path):
    r = tool(HERE / "kernels.py", "--binary", "-k", "cumsum", "-k", "rms_norm_kernel", "-o", tmp_path, "-q", cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cumsum.trib", "rms_norm.trib"]
    with tri.Context() as ctx:
        m = ctx.load(tmp_path / "rms_norm.trib")
        assert [f.name for f in m.functions if f.kind == tri.FunctionKind.KERNEL] == ["rms_norm_kernel"]
        assert len(m.functions) == 2  # and the device function


@needs_triton
def test_list(tmp_path):
    r = tool(HERE / "kernels.py", "--list", cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "histogram: kernels.py:histogram_kernel (NUM_BINS=16, BLOCK=64) (x_ptr: *fp32, bins_ptr: *i32, n: i32, " \
           "lo: fp32, inv_width: fp32)" in r.stdout


@needs_triton
def test_an_unknown_kernel_name_lists_the_exports(tmp_path):
    r = tool(HERE / "kernels.py", "-k", "nope", "-o", tmp_path, cwd=ROOT)
    assert r.returncode == 1
    assert "no export or kernel named 'nope' in tests/triton/kernels.py (TRI_EXPORTS has: histogram " \
           "(histogram_kernel), argmax (argmax_kernel)" in r.stderr
    assert list(tmp_path.iterdir()) == []


@needs_triton
@pytest.mark.parametrize("exports, message", [
    (None, "k.py defines no TRI_EXPORTS: add a module-level dict"),
    ("[add_kernel]", "TRI_EXPORTS is a list; it must be a dict"),
    ('{"v": dict(kernel=add_kernel, signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32"}, '
     'constexprs={"BLOCK": 64})}', "export 'v': parameter 'n' of add_kernel has no type in 'signature'"),
    (f'{{"v": dict(kernel=add_kernel, signature={VADD_SIG})}}',
     "export 'v': constexpr 'BLOCK' of add_kernel has no value in 'constexprs'"),
    (f'{{"v": dict(kernel=add_kernel, signature={VADD_SIG}, constexprs={{"BLOCK": 64, "WIDTH": 2}})}}',
     "export 'v': constexprs names 'WIDTH', which add_kernel does not have (its parameters: x_ptr, y_ptr, out_ptr, "
     "n, BLOCK)"),
    (f'{{"v": dict(kernel=add_kernel, signature={VADD_SIG}, constexpr={{"BLOCK": 64}})}}',
     "export 'v' has unknown key(s) 'constexpr'; the keys are kernel, signature, constexprs, divisibility, options"),
    (f'{{"v": dict(kernel=len, signature={VADD_SIG}, constexprs={{"BLOCK": 64}})}}',
     "export 'v': 'kernel' is <built-in function len> is not a @triton.jit function"),
    (f'{{"v": dict(kernel=add_kernel, signature={VADD_SIG}, constexprs={{"BLOCK": 64}}, '
     'divisibility={"BLOCK": 16})}',
     "export 'v': divisibility names 'BLOCK', which is not a runtime parameter"),
    (f'{{"a/b": dict(kernel=add_kernel, signature={VADD_SIG}, constexprs={{"BLOCK": 64}})}}',
     "export name 'a/b' is not usable as a file name"),
])
def test_a_wrong_export_is_named(tmp_path, exports, message):
    write(tmp_path, "k.py", VADD, "" if exports is None else f"\n\nTRI_EXPORTS = {exports}\n")
    r = tool("k.py", "-o", "out", cwd=tmp_path)
    assert r.returncode == 1
    assert message in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


@needs_triton
def test_a_kernel_file_that_raises_shows_its_line(tmp_path):
    path = write(tmp_path, "k.py", VADD, "\n\nLIMIT = 1 // 0\n")
    r = tool("k.py", cwd=tmp_path)
    assert r.returncode == 1
    assert "python3 -m tri.triton: error: cannot load k.py:" in r.stderr
    line = path.read_text().split("\n").index("LIMIT = 1 // 0") + 1
    assert f'k.py", line {line}, in <module>' in r.stderr and "ZeroDivisionError" in r.stderr, r.stderr
    assert "importlib" not in r.stderr  # the loader's frames are left out


@needs_triton
def test_a_triton_compile_error_names_the_python_line(tmp_path):
    write(tmp_path, "k.py", """
        @triton.jit
        def odd_kernel(x_ptr, n):
            offs = tl.arange(0, 10)
            tl.store(x_ptr + offs, offs, mask=offs < n)


        TRI_EXPORTS = {"odd": dict(kernel=odd_kernel, signature={"x_ptr": "*i32", "n": "i32"})}
        """)
    r = tool("k.py", "-o", "out", cwd=tmp_path)
    assert r.returncode == 1
    assert "error: export 'odd' (k.py:odd_kernel): Triton could not make TTIR (CompilationError):" in r.stderr
    assert "offs = tl.arange(0, 10)" in r.stderr and "power of 2" in r.stderr, r.stderr
    assert "1 of 1 export(s) failed" in r.stderr


@needs_triton
def test_an_op_tri_cannot_import_is_located_and_the_others_still_convert(tmp_path):
    path = write(tmp_path, "k.py", VADD, """

        @triton.jit
        def hist_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n, other=0)
            tl.store(out_ptr + tl.arange(0, 8), tl.histogram(x, 8))


        TRI_EXPORTS = {
            "hist": dict(kernel=hist_kernel, signature={"x_ptr": "*i32", "out_ptr": "*i32", "n": "i32"},
                         constexprs={"BLOCK": 64}),
            "vadd": dict(kernel=add_kernel, signature=%s, constexprs={"BLOCK": 64}),
        }
        """ % VADD_SIG)
    r = tool("k.py", "-o", "out", cwd=tmp_path)
    assert r.returncode == 1
    # The importer's message: the TTIR line and column, and the Python line of tl.histogram.
    py_line = next(i for i, t in enumerate(path.read_text().split("\n"), 1) if "tl.histogram" in t)
    m = re.search(r"^out/hist\.ttir:(\d+):(\d+): error: op 'tt\.histogram' is not supported by the TTIR importer.*"
                  rf"\(from k\.py:{py_line}:\d+\)$", r.stderr, re.M)
    assert m, r.stderr
    assert "error: Tri cannot import export 'hist' (k.py:hist_kernel (BLOCK=64)); the TTIR is in out/hist.ttir " \
           "(TRI_ERROR_UNSUPPORTED)" in r.stderr
    # The TTIR is kept for the message's line:col, which points at the op.
    line = (tmp_path / "out" / "hist.ttir").read_text().split("\n")[int(m.group(1)) - 1]
    assert line[int(m.group(2)) - 1:].startswith("%"), line
    assert "tt.histogram" in line
    assert not (tmp_path / "out" / "hist.tri").exists()
    assert (tmp_path / "out" / "vadd.tri").exists() and not (tmp_path / "out" / "vadd.ttir").exists()
    assert "1 of 2 export(s) failed" in r.stderr


@needs_triton
def test_divisibility_and_options_reach_the_ttir(tmp_path):
    write(tmp_path, "k.py", VADD, """

        @triton.jit
        def check_kernel(x_ptr, n, BLOCK: tl.constexpr = 16):
            offs = tl.arange(0, BLOCK)
            tl.device_assert(offs < n, "too short")
            tl.store(x_ptr + offs, offs)


        TRI_EXPORTS = {
            "plain": dict(kernel=add_kernel, signature=%s, constexprs={"BLOCK": 64}, divisibility={}),
            "div": dict(kernel=add_kernel, signature=%s, constexprs={"BLOCK": 64}, divisibility={"x_ptr": 16, "n": 8}),
            "debug": dict(kernel=check_kernel, signature={"x_ptr": "*i32", "n": "i32"}, constexprs={"BLOCK": 16},
                          options={"debug": True}),
            "nodebug": dict(kernel=check_kernel, signature={"x_ptr": "*i32", "n": "i32"}),  # BLOCK's default
            "block8": dict(kernel=check_kernel, signature={"x_ptr": "*i32", "n": "i32"}, constexprs={"BLOCK": 8}),
        }
        """ % (VADD_SIG, VADD_SIG))
    r = tool("k.py", "-o", "out", "--ttir", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    assert "kernel @add_kernel(%x_ptr: ptr<f32>, %y_ptr: ptr<f32>, %out_ptr: ptr<f32>, %n: i32)" in \
        (out / "plain.tri").read_text()
    assert "kernel @add_kernel(%x_ptr: ptr<f32> {align=16}, %y_ptr: ptr<f32>, %out_ptr: ptr<f32>, " \
           "%n: i32 {divisible=8})" in " ".join((out / "div.tri").read_text().split())  # wrapped at 100 columns
    assert "assert" in (out / "debug.tri").read_text() and "assert" not in (out / "nodebug.tri").read_text()
    assert "arange[start=0, end=16]" in (out / "nodebug.tri").read_text()
    assert "arange[start=0, end=8]" in (out / "block8.tri").read_text()


@needs_triton
def test_the_same_steps_from_python():
    exports = tt.load_exports(str(HERE / "kernels.py"))
    assert sorted(exports) == sorted(p.stem for p in (HERE / "ttir").glob("*.ttir"))
    text = tt.ttir(exports["cumsum"], relative_to=str(ROOT))
    committed = (HERE / "ttir" / "cumsum.ttir").read_text()
    if header_version(HERE / "ttir" / "cumsum.ttir") == triton.__version__:
        assert text == committed
    with tri.Context() as ctx, tt.to_module(ctx, text, "cumsum.ttir") as m:
        assert [f.name for f in m.functions] == ["cumsum_kernel"]
        assert m.to_text() == ctx.module(committed, "committed.ttir").to_text()
