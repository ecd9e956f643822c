"""Autotuning from Python (Module.tune over tri_tune, docs/tune.md) on the CPU target: a failing
config is skipped and reported, the chosen kernel computes the right result, buffers the kernel
writes come back as they were, a second call reuses the stored result without benchmarking, and a
result exported from one context is used by another in frozen mode."""

import json

import numpy as np
import pytest

import tri
from conftest import EXAMPLES

N = 5000
CONFIGS = [{"BLOCK": 256, "num_warps": 4}, {"BLOCK": 100}, {"BLOCK": 1024, "num_stages": 1}]


def grid_of(cfg):
    return (N + cfg["BLOCK"] - 1) // cfg["BLOCK"]


def inputs():
    rng = np.random.default_rng(3)
    return rng.standard_normal(N).astype(np.float32), np.arange(N, dtype=np.float32), np.full(N, 7.0, np.float32)


def test_tune_chooses_stores_and_exports(tmp_path):
    x, y, out = inputs()
    with tri.Context(cache_dir=tmp_path / "cache") as ctx:
        m = ctx.load(EXAMPLES / "vector_add.tri")
        k, res = m.tune("vector_add", CONFIGS, x, y, out, N, grid=grid_of, options=tri.CompileOptions(target="cpu"),
                        key=["n"], repetitions=3)
        assert res["source"] == "benchmark"
        assert res["best"] in (0, 2)
        failed = [c for c in res["configs"] if c["index"] == 1][0]
        assert failed["status"] != 0 and failed["error"]
        assert np.all(out == 7.0), "tune must leave the written buffer as it found it"
        k.launch(grid_of(CONFIGS[res["best"]]), x, y, out, N)
        np.testing.assert_array_equal(out, x + y)
        assert ctx.tune_stat()["trials"] == 2
        # The same call again: the stored result, nothing benchmarked.
        _, again = m.tune("vector_add", CONFIGS, x, y, out, N, grid=grid_of, options=tri.CompileOptions(target="cpu"),
                          key=["n"], repetitions=3)
        assert again["source"] == "stored" and again["best"] == res["best"]
        assert ctx.tune_stat() == {"trials": 2, "stored": 1, "defaults": 0, "pruned": 0, "other_device": 0}
        assert ctx.tune_export(tmp_path / "tuned.json") == 1
    # Another context with no cache: frozen, from the exported file.
    with tri.Context(cache_dir="") as ctx2:
        m2 = ctx2.load(EXAMPLES / "vector_add.tri")
        _, none = m2.tune("vector_add", CONFIGS, x, y, out, N, grid=grid_of, options=tri.CompileOptions(target="cpu"),
                          key=["n"], frozen=True)
        assert none["source"] == "default" and ctx2.tune_stat()["defaults"] == 1
        assert ctx2.tune_import(tmp_path / "tuned.json") == 1
        k2, imported = m2.tune("vector_add", CONFIGS, x, y, out, N, grid=grid_of,
                               options=tri.CompileOptions(target="cpu"), key=["n"], frozen=True)
        assert imported["source"] == "imported" and imported["best"] == res["best"]
        assert ctx2.tune_stat()["trials"] == 0
        out[:] = 0
        k2.launch(grid_of(CONFIGS[imported["best"]]), x, y, out, N)
        np.testing.assert_array_equal(out, x + y)


def test_tune_errors(ctx):
    m = ctx.load(EXAMPLES / "vector_add.tri")
    x, y, out = inputs()
    with pytest.raises(tri.TriError) as e:
        m.tune("vector_add", [], x, y, out, N, grid=1, options=tri.CompileOptions(target="cpu"))
    assert e.value.code == tri.ErrorCode.INVALID_ARGUMENT
    with pytest.raises(tri.TriError) as e:
        m.tune("vector_add", CONFIGS, x, y, out, N, grid=1, options=tri.CompileOptions(target="cpu"), key=["nope"])
    assert "no runtime parameter %nope" in e.value.message
    with pytest.raises(tri.TriError) as e:
        m.tune("vector_add", CONFIGS, x, y, N, grid=1, options=tri.CompileOptions(target="cpu"))
    assert e.value.code == tri.ErrorCode.LAUNCH_ARGS


def test_tune_product_space(tmp_path):
    """A tri.Product: the library expands and filters it; the grid function sees each config
    the filter kept, and the chosen config comes back as a mapping."""
    x, y, out = inputs()
    seen = []

    def grid(cfg):
        seen.append(dict(cfg))
        return grid_of(cfg)

    space = tri.Product({"BLOCK": [128, 256, 512, 1024]}, warps=[1, 4], filter="BLOCK >= 256 && warps * 128 <= BLOCK")
    with tri.Context(cache_dir=tmp_path / "cache") as ctx:
        m = ctx.load(EXAMPLES / "vector_add.tri")
        k, res = m.tune("vector_add", space, x, y, out, N, grid=grid, options=tri.CompileOptions(target="cpu"),
                        repetitions=2)
        assert [(c["BLOCK"], c["num_warps"]) for c in seen] == [(256, 1), (512, 1), (512, 4), (1024, 1), (1024, 4)]
        assert [c["config"] for c in res["configs"]][0] == "BLOCK=256,warps=1,stages=0"
        assert ctx.tune_stat()["trials"] == 5
        k.launch(grid_of(seen[res["best"]]), x, y, out, N)
        np.testing.assert_array_equal(out, x + y)
        with pytest.raises(tri.TriError, match="no value is named 'WARPS'"):
            m.tune("vector_add", tri.Product({"BLOCK": [256]}, filter="WARPS > 1"), x, y, out, N, grid=grid,
                   options=tri.CompileOptions(target="cpu"))


def test_progress_reports_every_compile_and_benchmark(tmp_path, capsys):
    x, y, out = inputs()
    seen = []
    with tri.Context(cache_dir=tmp_path / "cache") as ctx:
        m = ctx.load(EXAMPLES / "vector_add.tri")
        m.tune("vector_add", CONFIGS, x, y, out, N, grid=grid_of, repetitions=2, progress=seen.append)
        compiles = [p for p in seen if p.stage == "compile"]
        benches = [p for p in seen if p.stage == "benchmark"]
        # Compiles finish in any order (they run at once), each config once; benchmarks in order.
        assert sorted(p.index for p in compiles) == [0, 1, 2] and [p.done for p in compiles] == [1, 2, 3]
        assert [p.index for p in benches] == [0, 1, 2] and all(p.count == 3 for p in seen)
        assert seen.index(compiles[-1]) < seen.index(benches[0]), "every compile is reported before a benchmark"
        bad = [p for p in compiles if p.index == 1][0]
        assert bad.config == {"BLOCK": 100} and bad.error == tri.ErrorCode.SPECIALIZE
        assert benches[0].median_us > 0 and benches[0].error is None and benches[1].median_us is None
        # progress=True off a terminal: one line per config and stage, on stderr.
        m.tune("vector_add", CONFIGS, x, y, out, N, grid=grid_of, repetitions=2, retune=True, progress=True)
        err = capsys.readouterr().err.splitlines()
        assert sum(line.startswith("  compiled ") for line in err) == 3, err
        assert "  benchmarked 2/3  config 1 (BLOCK=100): skipped (SPECIALIZE)" in err, err
        assert any(line.startswith("  benchmarked 3/3  config 2 (BLOCK=1024,num_stages=1): ") for line in err), err

        # An exception in the function comes back once tri_tune returns.
        def boom(p):
            raise KeyboardInterrupt("stop")
        with pytest.raises(KeyboardInterrupt):
            m.tune("vector_add", CONFIGS, x, y, out, N, grid=grid_of, repetitions=2, retune=True, progress=boom)


def test_progress_true_on_a_terminal_draws_bars(tmp_path, monkeypatch):
    import io

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    monkeypatch.setattr("sys.stderr", term)
    x, y, out = inputs()
    with tri.Context(cache_dir=tmp_path / "cache") as ctx:
        m = ctx.load(EXAMPLES / "vector_add.tri")
        m.tune("vector_add", CONFIGS, x, y, out, N, grid=grid_of, repetitions=2, progress=True)
    text = term.getvalue()
    frames = [f.rstrip() for f in text.split("\r") if f.strip()]
    # Redrawn in place (no line per config), the compiles first, and wiped at the end.
    assert "\n" not in text and "compiled" not in text, text
    assert frames[0].startswith("  compile [") and frames[0].endswith("benchmark [....................] 0/3"), frames
    assert frames[-1] == "  compile [####################] 3/3  benchmark [####################] 3/3", frames
    assert text.endswith("\r" + " " * 80 + "\r")


def test_the_tuning_space_as_a_picture(tmp_path):
    # tri.plot calls the library's renderer (tri_tune_plot); the file it writes parses as SVG.
    import xml.etree.ElementTree as ET

    import tri.plot
    x, y, out = inputs()
    with tri.Context(cache_dir=tmp_path / "cache") as ctx:
        m = ctx.load(EXAMPLES / "vector_add.tri")
        _, res = m.tune("vector_add", tri.Product({"BLOCK": [64, 256]}, warps=[1, 4]), x, y, out, N,
                        grid=grid_of, repetitions=2)
    tri.plot.save_tune_svg(res, tmp_path / "space.svg")
    ns = "{http://www.w3.org/2000/svg}"
    root = ET.parse(tmp_path / "space.svg").getroot()
    assert root.tag == ns + "svg"
    cells = [r for r in root.iter(ns + "rect") if "cell" in r.get("class", "").split()]
    assert len(cells) == 4 and sum("winner" in r.get("class").split() for r in cells) == 1
    texts = [t.text for t in root.iter(ns + "text")]
    assert "BLOCK" in texts and "warps" in texts and texts[0] == "@vector_add on cpu"
    assert any(t.startswith(f"winner: config {res['best']} (BLOCK=") for t in texts), texts
    # The JSON text draws the same picture as the dict, and a title is the caller's.
    assert tri.plot.tune_svg(json.dumps(res)) == (tmp_path / "space.svg").read_text()
    assert ET.fromstring(tri.plot.tune_svg(res, title="vadd <sweep>")).find(ns + "title").text == "vadd <sweep>"
    # One value that varies: bars.
    kept = [dict(c, index=i) for i, c in enumerate(c for c in res["configs"] if c["num_warps"] == 4)]
    bars = ET.fromstring(tri.plot.tune_svg({**res, "configs": kept, "best": 0}))
    assert len([r for r in bars.iter(ns + "rect") if "bar" in r.get("class", "").split()]) == 2
    # What is not a tuning result is refused by the library, not drawn.
    with pytest.raises(tri.TriError) as e:
        tri.plot.tune_svg({"configs": []})
    assert e.value.code == tri.ErrorCode.CORRUPT_BINARY and "tri_tune_plot" in str(e.value)


def test_debug_log_lines_of_a_compile_name_the_config(tmp_path):
    heard = []
    with tri.Context(cache_dir="", log=lambda level, msg: heard.append(msg), log_level=tri.LogLevel.DEBUG) as ctx:
        m = ctx.load(EXAMPLES / "vector_add.tri")
        x, y, out = inputs()
        m.tune("vector_add", [{"BLOCK": 256}, {"BLOCK": 1024}], x, y, out, N, grid=grid_of, repetitions=1)
    passes = [h for h in heard if ": passes " in h]
    assert any(h.endswith("[BLOCK=256]") for h in passes) and any(h.endswith("[BLOCK=1024]") for h in passes), heard
    assert any(h.startswith('compiled kernel @vector_add for target "cpu" [BLOCK=1024]') for h in heard), heard
