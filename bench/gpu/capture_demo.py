"""A small PyTorch program of Triton kernels, to try the capture and replay of Triton launches on
a GPU (docs/import.md, "Capture and replay"). From the repository root:

    TRI_LIBRARY=build/src/libtri.so.0 PYTHONPATH=bindings/python/src python3 -m tri.triton.capture \\
        --json capture-demo.json --save /tmp/capture-demo --save-data bench/gpu/capture_demo.py [test|bench]
    TRI_LIBRARY=build/src/libtri.so.0 PYTHONPATH=bindings/python/src python3 -m tri.triton.replay \\
        /tmp/capture-demo --target cpu --target cuda

It runs the kernels of tests/triton/capture_program.py on CUDA tensors (a vector add whose block
a heuristic picks, an autotuned row softmax, a masked f16 matmul with B transposed, an atomic
histogram launched twice, an in-place update through two views of one tensor), then a bf16 RMS
norm, each checked against NumPy or PyTorch. "bench" (the default) runs realistic sizes, "test"
the small ones of the committed capture. Run by itself it needs no Tri at all.
"""

import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "triton"))
import capture_program  # noqa: E402


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, out_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * stride + cols, (x * rstd * w).to(tl.bfloat16), mask=mask)


def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    out = torch.empty_like(x)
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    rms_norm_kernel[(rows,)](x, w, out, x.stride(0), cols, eps, BLOCK=block, num_warps=8 if block >= 2048 else 4)
    return out


def main(argv):
    size = argv[1] if len(argv) > 1 else "bench"
    if not torch.cuda.is_available():
        raise SystemExit("capture_demo.py needs a CUDA device (PyTorch sees none)")
    capture_program.run(capture_program.TorchArrays("cuda"), size)
    rows, cols = (4096, 4096) if size == "bench" else (7, 300)
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16, generator=g)
    w = torch.rand(cols, device="cuda", dtype=torch.bfloat16, generator=g) + 0.5
    for _ in range(3):  # the same launch three times: one row, count 3
        y = rms_norm(x, w)
    xf = x.float()
    want = (xf * torch.rsqrt(xf.pow(2).mean(dim=1, keepdim=True) + 1e-6) * w.float()).to(torch.bfloat16)
    torch.testing.assert_close(y, want, rtol=1.6e-2, atol=1e-2)
    print(f"capture_demo: all results match ({size} sizes)")


if __name__ == "__main__":
    main(sys.argv)
