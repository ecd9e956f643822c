"""The 0.2 context: cancel, the interpreter's memory budget, the in-memory kernel cache's
capacity, the disk cache (dir, stats, list, prune, export, import) in a temporary folder, module
text with its comments, and CUDA device queries where no driver can be loaded."""

import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import tri
from conftest import EXAMPLES, HERE

SPIN = """
// while (i >= 0) i += n: never ends for n = 0.
kernel @spin(%out: ptr<i32>, %n: i32) {
  %c0 = const[value=0] : i32
  %w = while %c0 {
  ^(%i: i32):
    %more = cmp[pred=sge] %i, %c0 : i1
    condition %more, %i
  } {
  ^(%i2: i32):
    %next = add %i2, %n : i32
    yield %next
  } : i32
  store %out, %w
  return
}
"""


@pytest.mark.parametrize("target", ["cpu", "interp"])
def test_cancel_stops_a_launch_that_never_ends(target):
    with tri.Context(cache_dir="") as ctx:
        kernel = ctx.module(SPIN, "spin.tri").compile("spin", target=target)
        out = np.zeros(1, np.int32)
        result = []

        def run():
            try:
                kernel[4](out, 0)
                result.append("finished")
            except tri.TriError as e:
                result.append(e)

        th = threading.Thread(target=run, daemon=True)  # a launch cancel failed to stop must not hold up exit
        th.start()
        time.sleep(0.3)
        assert th.is_alive(), "the launch ended by itself"
        ctx.cancel()
        th.join(60)
        assert not th.is_alive(), "cancel did not stop the launch"
        (e,) = result
        assert isinstance(e, tri.TriError) and e.code == tri.ErrorCode.CANCELLED, e
        assert e.name == "TRI_ERROR_CANCELLED" and "cancel" in e.message
        # Launches after the cancel run normally.
        kernel[1](out, -1)
        assert out[0] == -1


def test_the_interpreter_keeps_to_its_memory_budget():
    x = np.ones(4096, np.float32)
    out = np.zeros_like(x)
    with tri.Context(cache_dir="", interp_memory_limit=1000) as ctx:
        module = ctx.load(EXAMPLES / "vector_add.tri")
        interp = module.compile("vector_add", target="interp")
        with pytest.raises(tri.TriError) as e:
            interp[4](x, x, out, 4096)
        assert e.value.code == tri.ErrorCode.LIMIT_EXCEEDED and "1000" in e.value.message
        assert (out == 0).all()  # refused before running
        module.compile("vector_add")[4](x, x, out, 4096)  # other targets ignore it
        assert (out == 2).all()
    with tri.Context(cache_dir="", interp_memory_limit=0) as ctx:
        ctx.load(EXAMPLES / "vector_add.tri").compile("vector_add", target="interp")[4](x, x, out, 4096)
    with pytest.raises(tri.TriError) as e:
        tri.Context(interp_memory_limit=-1)
    assert e.value.code == tri.ErrorCode.INVALID_ARGUMENT


def _compile_twice(tmp_path, **options):
    """Compiles vector_add, drops it, compiles it again; the disk cache's hits tell whether the
    second compile found the module's in-memory copy (no disk read) or had to go to the disk."""
    with tri.Context(cache_dir=tmp_path, **options) as ctx:
        module = ctx.load(EXAMPLES / "vector_add.tri")
        module.compile("vector_add").close()
        module.compile("vector_add").close()
        return ctx.cache.stats()


def test_the_kernel_cache_capacity_decides_what_a_module_keeps(tmp_path):
    kept = _compile_twice(tmp_path / "a")
    assert (kept.misses, kept.stores, kept.hits) == (1, 1, 0), kept
    dropped = _compile_twice(tmp_path / "b", kernel_cache_capacity=0)
    assert (dropped.misses, dropped.stores, dropped.hits) == (1, 1, 1), dropped
    with pytest.raises(tri.TriError):
        tri.Context(kernel_cache_capacity=1 << 32)


def test_the_disk_cache_round_trip(tmp_path):
    folder, bundle = tmp_path / "cache", tmp_path / "warm.tribundle"
    x = np.arange(3000, dtype=np.float32)
    out = np.zeros_like(x)
    with tri.Context(cache_dir=folder, cache_max_bytes=1 << 30) as ctx:
        assert ctx.cache.dir == str(folder) and ctx.cache.enabled
        kernel = ctx.load(EXAMPLES / "vector_add.tri").compile("vector_add")
        kernel[3](x, x, out, 3000)
        s = ctx.cache.stats()
        assert (s.misses, s.stores, s.hits, s.entries, s.max_bytes) == (1, 1, 0, 1, 1 << 30), s
        assert s.bytes > 0 and s.bytes_written == s.bytes and ctx.cache.stat(tri.CacheStat.ENTRIES) == 1
        (entry,) = ctx.cache.list()
        assert entry.ok and entry.status == "ok" and len(entry.key) == 32
        assert (entry.kind, entry.target, entry.kernel, entry.nbytes) == ("obj", "cpu", "vector_add", s.bytes)
        assert abs(entry.last_use - time.time()) < 3600 and entry.made_for
        assert entry.specialized == "-"  # the defaults: no constexpr set, no facts
        assert ctx.cache.list(verify=True) == [entry]
        assert ctx.cache.export_bundle(bundle) == 1 and bundle.stat().st_size > 0
        assert ctx.cache.prune() == 0  # within the bound
        assert ctx.cache.prune(0) == 1  # 0 empties it
        assert ctx.cache.list() == [] and ctx.cache.stats().evictions == 1
        assert ctx.cache.import_bundle(bundle) == 1
        assert [e.key for e in ctx.cache.list()] == [entry.key]
    # A new context (as a new process would) finds the imported entry: a hit, nothing compiled.
    with tri.Context(cache_dir=folder) as ctx:
        kernel = ctx.load(EXAMPLES / "vector_add.tri").compile("vector_add")
        out[:] = 0
        kernel[3](x, x, out, 3000)
        assert (out == 2 * x).all()
        s = ctx.cache.stats()
        assert (s.hits, s.misses, s.bytes_read) == (1, 0, entry.nbytes), s
        with pytest.raises(tri.TriError) as e:
            ctx.cache.import_bundle(tmp_path / "missing.tribundle")
        assert e.value.code == tri.ErrorCode.IO
        (tmp_path / "junk").write_bytes(b"not a bundle at all")
        with pytest.raises(tri.TriError) as e:
            ctx.cache.import_bundle(tmp_path / "junk")
        assert e.value.code == tri.ErrorCode.CORRUPT_BINARY


def test_a_context_without_a_disk_cache(tmp_path):
    with tri.Context(cache_dir="") as ctx:
        assert ctx.cache.dir == "" and not ctx.cache.enabled
        ctx.load(EXAMPLES / "vector_add.tri").compile("vector_add")
        assert ctx.cache.stats().stores == 0
        for call in (ctx.cache.list, lambda: ctx.cache.export_bundle(tmp_path / "b"),
                     lambda: ctx.cache.import_bundle(tmp_path / "b")):
            with pytest.raises(tri.TriError) as e:
                call()
            assert e.value.code == tri.ErrorCode.UNSUPPORTED
        with pytest.raises(tri.TriError) as e:
            ctx.cache.stat(99)
        assert e.value.code == tri.ErrorCode.INVALID_ARGUMENT
    with pytest.raises(tri.TriError) as e:
        ctx.cache.stats()
    assert "context is closed" in e.value.message


def test_module_text_with_its_comments(ctx):
    source = "// Spins until cancelled.\n" + SPIN
    module = ctx.module(source, "spin.tri")
    plain, commented = module.to_text(), module.to_text_with_comments()
    assert "//" not in plain
    assert "// Spins until cancelled." in commented and "// while (i >= 0) i += n" in commented
    assert ctx.module(commented, "again.tri").to_text_with_comments() == commented
    # Binary IR keeps no comments: both texts are the canonical one.
    binary = ctx.module(module.to_binary(), "spin.trib")
    assert binary.to_text_with_comments() == plain


def _run_without_driver(program: str) -> subprocess.CompletedProcess:
    """Runs `program` in a process whose CUDA driver cannot be loaded (TRI_LIBCUDA names a
    missing file), so the result is the same on machines with and without a GPU."""
    env = dict(os.environ, TRI_LIBCUDA="/nonexistent/libcuda.so.1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(HERE.parent / "src"), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(program)], env=env, capture_output=True, text=True)


def test_device_queries_without_a_driver_say_why():
    run = _run_without_driver("""
        import tri
        ctx = tri.Context(cache_dir="")
        for call in (ctx.device_count, ctx.devices, lambda: ctx.device_name(0),
                     lambda: ctx.device_attribute(0, tri.DeviceAttr.SM_COUNT)):
            try:
                call()
                raise SystemExit("a device query worked without a driver")
            except tri.TriError as e:
                assert e.code == tri.ErrorCode.UNSUPPORTED, e
                assert "no CUDA driver" in e.message and "/nonexistent/libcuda.so.1" in e.message, e.message
        print("unsupported as documented")
    """)
    assert run.returncode == 0, run.stderr
    assert "unsupported as documented" in run.stdout


def test_device_queries_with_whatever_driver_is_here(ctx):
    try:
        n = ctx.device_count()
    except tri.TriError as e:
        assert e.code == tri.ErrorCode.UNSUPPORTED and "no CUDA driver" in e.message
        return
    # A driver: as many devices as it sees (0 without a GPU), each with a name and attributes.
    devices = ctx.devices()
    assert len(devices) == n
    for d in devices:
        assert d.name and d.compute_capability[0] >= 3 and d.warp_size == 32 and d.arch.startswith("sm_")
    with pytest.raises(tri.TriError) as e:
        ctx.device_name(n)
    assert e.value.code == tri.ErrorCode.INVALID_ARGUMENT


def test_cuda_launches_reach_the_library_without_a_driver():
    # The arguments are checked and encoded here; the launch itself needs the driver.
    run = _run_without_driver(f"""
        import numpy as np, tri
        ctx = tri.Context(cache_dir="")
        k = ctx.load({str(EXAMPLES / 'vector_add.tri')!r}).compile("vector_add", target="cuda", arch="sm_90")
        d = tri.DevicePtr(0, 0, tri.DType.F32)
        k.launch(0, d, d, d, 0)  # an empty grid makes no driver call
        for launch in (lambda: k.launch(1, d, d, d, 0), lambda: k.launch(1, d, d, d, 0, stream=1234),
                       lambda: k.plan(1, d, d, d, 0).launch()):
            try:
                launch()
                raise SystemExit("a cuda launch worked without a driver")
            except tri.TriError as e:
                assert e.code == tri.ErrorCode.UNSUPPORTED and "no CUDA driver" in e.message, e
        try:
            k.launch(1, np.zeros(4, np.float32), d, d, 0)
            raise SystemExit("a host array was passed to a cuda kernel")
        except tri.TriError as e:
            assert e.code == tri.ErrorCode.LAUNCH_ARGS and "a host array was given" in e.message, e
        print("launched as far as the driver")
    """)
    assert run.returncode == 0, run.stderr
    assert "launched as far as the driver" in run.stdout
