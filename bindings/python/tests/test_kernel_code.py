"""The 0.2 compile options and what a kernel tells about itself: warps and architecture (PTX is
made for a named architecture on any machine, no GPU needed), the code a target made, and the
variants launch-time specialization made on the CPU."""

import numpy as np
import pytest

import tri
from conftest import EXAMPLES


@pytest.fixture
def module(ctx):
    return ctx.load(EXAMPLES / "vector_add.tri")


def test_cuda_code_for_a_named_architecture_needs_no_gpu(module):
    kernel = module.compile("vector_add", target="cuda", arch="sm_90", num_warps=8, constexprs={"BLOCK": 1024})
    assert kernel.target == "cuda"
    ptx = kernel.code("ptx")
    assert ".target sm_90" in ptx and ".entry vector_add(" in ptx
    meta = kernel.metadata()
    assert meta["entry"] == "vector_add" and meta["arch"] == "sm_90"
    assert meta["num_warps"] == 8 and meta["block"] == [256, 1, 1]
    assert [p["name"] for p in meta["params"]] == ["x", "y", "out", "n"]
    assert "nvptx64-nvidia-cuda" in kernel.code("llvm")
    four = module.compile("vector_add", target="cuda", arch="sm_80")
    assert four.metadata()["num_warps"] == 4 and ".target sm_80" in four.code("ptx")
    with pytest.raises(tri.TriError) as e:
        kernel.code("cubin-of-the-future")
    assert e.value.code == tri.ErrorCode.NOT_FOUND and "cubin-of-the-future" in e.value.message


def test_the_cpu_target_shows_llvm_ir_and_assembly_on_request(module):
    kernel = module.compile("vector_add", constexprs={"BLOCK": 256})
    llvm = kernel.code("llvm")
    assert "define " in llvm and "target triple" in llvm and "fadd" in llvm
    asm = kernel.code("asm")
    assert ".text" in asm and "tri.vector_add" in asm
    assert kernel.code("asm") == asm  # made once, then kept
    with pytest.raises(tri.TriError) as e:
        kernel.code("ptx")
    assert e.value.code == tri.ErrorCode.NOT_FOUND and 'target "cpu"' in e.value.message
    assert "it makes: llvm" in e.value.message and "asm" in e.value.message
    with pytest.raises(tri.TriError) as e:
        module.compile("vector_add", target="interp").code("llvm")
    assert e.value.code == tri.ErrorCode.NOT_FOUND and "none to show" in e.value.message


def test_bad_gpu_options_are_refused(module):
    cases = [
        (dict(target="cuda", arch="sm_90", num_warps=3), "3 warps"),
        (dict(target="cuda", arch="sm_1"), "sm_1"),
        (dict(launch_specialization=True, max_variants=17), "at most 16"),
        (dict(arg_specialization={32: False}), "parameter 32"),
    ]
    for kwargs, fragment in cases:
        with pytest.raises(tri.TriError) as e:
            module.compile("vector_add", **kwargs)
        assert e.value.code == tri.ErrorCode.INVALID_ARGUMENT and fragment in e.value.message, kwargs


def _aligned(n, offset):
    """n float32s starting `offset` elements after a 64-byte boundary."""
    raw = np.zeros(n + offset + 16, np.float32)
    skip = (-raw.ctypes.data % 64) // 4
    return raw[skip + offset:skip + offset + n]


def test_variants_of_launch_time_specialization_on_the_cpu(module):
    # Off by default on the CPU: no variant, whatever the arguments.
    plain = module.compile("vector_add", constexprs={"BLOCK": 64})
    x, out = _aligned(256, 0), _aligned(256, 0)
    x[:] = np.arange(256)
    plain[4](x, x, out, 160)
    assert plain.variants() == {"schema": 1, "max_variants": 8, "variants": []}

    kernel = module.compile("vector_add", constexprs={"BLOCK": 64}, launch_specialization=True, max_variants=2)
    for xoff, n in [(0, 160), (0, 160), (1, 160), (1, 37)]:
        xs, ys, outs = _aligned(200, xoff), _aligned(200, 0), _aligned(200, 0)
        xs[:], ys[:] = np.arange(200), 1.5
        kernel[4](xs, ys, outs, n)
        np.testing.assert_array_equal(outs[:n], xs[:n] + 1.5)
    v = kernel.variants()
    assert v["schema"] == 1 and v["max_variants"] == 2
    assert len(v["variants"]) == 2
    # Listed by key; each with the classes it was made for and why.
    by_classes = {tuple(sorted(c["name"] for c in var["classes"])): var for var in v["variants"]}
    assert set(by_classes) == {("n", "out", "x", "y"), ("n", "out", "y")}, v
    everything, later = by_classes[("n", "out", "x", "y")], by_classes[("n", "out", "y")]
    assert {c["name"]: c["class"] for c in everything["classes"]}["n"] == "divisible by 16"
    assert "argument 3 (%n) changed class: not divisible by 16 -> divisible by 16" in everything["reason"]
    assert "argument 0 (%x) changed class: aligned to 16 -> not aligned to 16 (from the variant for" in later["reason"]

    # %x and %n out of the classing: only %y's and %out's classes select a variant.
    opted = module.compile("vector_add", constexprs={"BLOCK": 64}, launch_specialization=True,
                           arg_specialization={0: False, 3: False})
    for xoff, n in [(0, 160), (1, 37), (3, 48)]:
        xs, outs = _aligned(200, xoff), _aligned(200, 0)
        opted[4](xs, _aligned(200, 0), outs, n)
    v = opted.variants()
    assert len(v["variants"]) == 1
    names = {c["name"] for c in v["variants"][0]["classes"]}
    assert names == {"y", "out"}, v


def test_num_stages(ctx):
    """Loads of dot-feeding loops run num_stages - 1 iterations ahead: the results are the same
    (the matmul example on the CPU at 1, 3 and 5 stages), and more than 8 stages is refused."""
    import numpy as np
    mm = ctx.load(EXAMPLES / "matmul_leaky_relu.tri")
    M, N, K = 40, 24, 70
    rng = np.random.default_rng(1)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    outs = []
    for stages in (1, 3, 5):
        k = mm.compile("matmul_leaky_relu", target="cpu", num_stages=stages,
                       constexprs={"BM": 16, "BN": 16, "BK": 16, "GROUP_M": 2})
        c = np.zeros((M, N), np.float16)
        grid = ((M + 15) // 16) * ((N + 15) // 16)
        k.launch((grid,), a, b, c, M, N, K, K, 1, N, 1, N, 1)
        outs.append(c)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    ref = np.where(ref >= 0, ref, 0.01 * ref)
    assert np.allclose(outs[0].astype(np.float32), ref, rtol=2e-2, atol=2e-2)
    assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], outs[2])
    with pytest.raises(tri.TriError) as e:
        mm.compile("matmul_leaky_relu", target="cpu", num_stages=9)
    assert e.value.code == tri.ErrorCode.INVALID_ARGUMENT and "9 stages" in e.value.message
