"""Host-side TensorDescriptor arguments of the corpus (tests/corpus/common.py's Desc) as each side
of bench/gpu/triton_corpus.py passes them, checked without a GPU: Tri's argument list (the
tensor's base, then its shape and strides, docs/import.md), Triton's TensorDescriptor objects, and
the signature Triton's launcher gets for a descriptor kernel compiled from its TTIR fixture, whose
parameters must match the PTX Triton makes of that fixture one for one.

The launch_args and specialization tests need NumPy only; the Triton ones (pip install triton)
print "skipped: triton not installed" without it."""

import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from corpus import common, runner  # noqa: E402
from corpus.common import Desc, arr, launch_args, out  # noqa: E402

sys.path.insert(0, str(common.ROOT / "bench" / "gpu"))
import triton_corpus_elsewhere as elsewhere  # noqa: E402

try:
    import triton
except ImportError:
    triton = None
needs_triton = pytest.mark.skipif(triton is None, reason="skipped: triton not installed")

# The fixtures whose kernels take host-side descriptors: (corpus, export).
DESCRIPTOR_EXPORTS = [(c, name) for c in ("tutorials", "flaggems")
                      for name, entry in common.load_manifest(runner.CORPUS_DIRS[c])["exports"].items()
                      if any(t.startswith("tensordesc") for t in entry["signature"].values())
                      and name != "block_scaled_matmul"]  # rank 5: Tri does not import it yet


def _matrix_desc(rows=3, cols=8, block=(2, 8)):
    return Desc(arr(np.arange(rows * cols), "f16"), (rows, cols), (cols, 1), block)


def test_the_descriptor_exports_are_found():
    assert sorted(DESCRIPTOR_EXPORTS) == [("flaggems", "mm_hopper_host_tma"), ("tutorials", "attn_fwd_host_desc"),
                                          ("tutorials", "matmul_tma"), ("tutorials", "matmul_tma_persistent")]


@pytest.mark.parametrize("names", [["x_0", "x_1", "x_2", "x_3"],  # Triton 3.6's TTIR
                                   ["x.shape.0", "x.shape.1", "x.stride.0", "x.stride.1"]])  # 3.9's
def test_launch_args_pass_base_shape_strides(names):
    d = _matrix_desc()
    got = launch_args(["n", "x"] + names + ["m"], {"n": 5, "x": d, "m": 7},
                      lambda name, v: ("base", name) if isinstance(v, Desc) else v)
    assert got == [5, ("base", "x"), 3, 8, 8, 1, 7]


def test_launch_args_refuse_a_kernel_without_the_shape_after_a_descriptor():
    d = _matrix_desc()
    with pytest.raises(TypeError, match="descriptor 'x' of rank 2 needs its shape and strides"):
        launch_args(["x", "x_0", "x_1", "x_2"], {"x": d})
    with pytest.raises(TypeError, match="descriptor 'x' of rank 2"):
        launch_args(["x", "x_0", "m", "x_2", "x_3"], {"x": d, "m": 1})


def test_a_desc_must_fit_its_tensor():
    with pytest.raises(AssertionError, match="reaches element"):
        Desc(arr(np.zeros(23), "f16"), (3, 8), (8, 1), (2, 8))
    with pytest.raises(AssertionError, match="last stride"):
        Desc(arr(np.zeros(24), "f16"), (3, 8), (1, 3), (2, 8))


def test_specialization_checks_a_descriptors_type():
    entry = {"signature": {"x": "tensordesc<fp16[2, 8]>"}, "specialized": {}, "divisibility": {}}
    ok = common.case("", 1, {"x": _matrix_desc()}, {})
    assert common.check_specialization(entry, ok) == []
    for bad, why in [(_matrix_desc(block=(4, 8)), "takes a tensordesc<fp16[2, 8]>"),
                     (Desc(arr(np.zeros(15), "f16"), (3, 5), (5, 1), (2, 8)), "16-byte multiples"),
                     (Desc(arr(np.zeros(24), "f32"), (3, 8), (8, 1), (2, 8)), "takes a tensordesc")]:
        problems = common.check_specialization(entry, common.case("", 1, {"x": bad}, {}))
        assert len(problems) == 1 and why in problems[0], problems


def test_fresh_outputs_copy_a_descriptors_tensor_once():
    c_arr = out(24, "f16")
    d = Desc(c_arr, (3, 8), (8, 1), (2, 8))
    x = _matrix_desc()
    c = common.case("", 1, {"x": x, "y": d, "z": c_arr}, {"y": common.EXACT})
    bufs = runner.fresh_outputs(c)
    assert bufs["x"] is x  # inputs are not copied
    assert bufs["y"].tensor is not c_arr and bufs["y"].tensor is bufs["z"]  # one copy for both names
    assert (bufs["y"].shape, bufs["y"].strides, bufs["y"].block_shape) == (d.shape, d.strides, d.block_shape)


class _DeviceTensor:
    """What TensorDescriptor reads of a torch tensor: its address and element size."""

    def __init__(self, address, itemsize):
        self.address, self.dtype = address, np.dtype(f"f{itemsize}")

    def data_ptr(self):
        return self.address


@needs_triton
def test_each_side_gets_its_arguments():
    d = _matrix_desc()
    args = {"x": d, "n": 3}
    values = {"x": _DeviceTensor(1 << 20, 2), "n": 3}
    tt = elsewhere.triton_arguments(args, values)
    from triton.tools.tensor_descriptor import TensorDescriptor
    assert isinstance(tt["x"], TensorDescriptor) and tt["n"] == 3
    assert (tt["x"].base, tt["x"].shape, tt["x"].strides, tt["x"].block_shape) == (values["x"], [3, 8], [8, 1],
                                                                                   [2, 8])
    assert elsewhere.tri_arguments(["x", "x_0", "x_1", "x_2", "x_3", "n"], args, values) == [values["x"], 3, 8, 8,
                                                                                             1, 3]


def _ptx_params(ptx: str) -> int:
    m = re.search(r"\.entry\s+\w+\s*\(([^)]*)\)", ptx, re.S)
    return len([p for p in m.group(1).split(",") if p.strip()])


@needs_triton
@pytest.mark.parametrize("corpus,name", DESCRIPTOR_EXPORTS)
def test_launcher_signature_matches_the_kernel(corpus, name, tmp_path, monkeypatch):
    """Triton compiling the fixture: the launcher made from launcher_signature passes exactly
    the PTX kernel's parameters (each descriptor a CUtensorMap, then its shape and strides, then
    Triton's two scratch pointers), and its descriptor types are those of the manifest (what
    Triton's launcher specialized the @triton.jit function on)."""
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.driver import make_launcher
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    entry = common.load_manifest(runner.CORPUS_DIRS[corpus])["exports"][name]
    path = common.fixture_path(runner.CORPUS_DIRS[corpus], name)
    ck = triton.compile(str(path), target=GPUTarget("cuda", 90, 32),
                        options=dict(num_warps=entry["num_warps"], num_stages=entry["num_stages"]))
    meta = ck.metadata.tensordesc_meta
    sig = elsewhere.launcher_signature(ck.src.signature)
    # One entry per parameter of the @triton.jit function (scalars keep their MLIR names, f32 or i1,
    # which Triton's launcher takes), descriptors typed as Triton types them.
    assert len(sig) == len(entry["signature"])
    assert [t for t in sig.values() if t.startswith("tensordesc")] == \
        [t for t in entry["signature"].values() if t.startswith("tensordesc")]
    with pytest.raises(Exception):  # what launcher_signature is for: Triton's launcher fails on the MLIR types
        make_launcher({}, ck.src.signature, meta)
    src = make_launcher({}, sig, meta)
    params = re.search(r"void \*params\[\] = \{([^}]*)\}", src).group(1).split(",")
    assert len(params) == _ptx_params(ck.asm["ptx"])
    assert len(meta) == sum(t.startswith("tensordesc") for t in sig.values())


def test_launcher_signature_refuses_a_descriptor_without_its_shape():
    with pytest.raises(ValueError, match="not followed by its shape"):
        elsewhere.launcher_signature({0: "!tt.tensordesc<tensor<8x16xf32>>", 1: "i32", 2: "i64"})
    assert elsewhere.launcher_signature({0: "*fp32", 1: "!tt.tensordesc<tensor<8x16xbf16>>", 2: "i32", 3: "i32",
                                         4: "i64", 5: "i64", 6: "i32"}) == \
        {0: "*fp32", 1: "tensordesc<bf16[8, 16]>", 2: "i32"}


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-rs"]))
