"""A small program of Triton kernels of different kinds, the subject of the capture tests and of
the committed capture in tests/triton/capture/: elementwise (a vector add whose block a
heuristic picks), a reduction (row softmax, autotuned over num_warps, its block from a
heuristic, its column stride 1 so Triton specializes it), a dot (a masked f16 matmul with f32
accumulation, B given as a transposed view), an atomic histogram launched twice into the same
bins, and an in-place update of one array through two views of it (aliasing, storage offsets).
Each result is checked against NumPy.

Run by itself it needs a GPU and PyTorch; under the dry run of the capture (no GPU) it runs on
NumPy through tri.triton.HostTensor:

    python3 -m tri.triton.capture --dry-run tests/triton/capture_program.py
    python3 -m tri.triton.capture --dry-run --no-replay --save tests/triton/capture --save-data \\
        tests/triton/capture_program.py             # how tests/triton/capture/ was made

bench/gpu/capture_demo.py runs the same kernels on CUDA tensors at larger sizes.
"""

import sys

import numpy as np
import triton
import triton.language as tl


@triton.heuristics({"BLOCK": lambda args: 64 if args["n"] <= 4096 else 1024})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.autotune(configs=[triton.Config({}, num_warps=2), triton.Config({}, num_warps=4)], key=["n_cols"])
@triton.heuristics({"BLOCK_N": lambda args: triton.next_power_of_2(args["n_cols"])})
@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, in_col_stride, out_row_stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols * in_col_stride, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def histogram_kernel(x_ptr, bins_ptr, n, NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(bins_ptr + x % NUM_BINS, 1, mask=mask)


@triton.jit
def axpy_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    """x = alpha * x + y, in place."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, alpha * x + tl.load(y_ptr + offs, mask=mask), mask=mask)


SIZES = {
    # n (add), rows x cols (softmax), M x N x K (matmul), n and bins (histogram), n (axpy)
    "test": dict(n=300, rows=5, cols=50, M=40, N=24, K=40, blocks=(16, 16, 16), hist=500, bins=16, axpy=200),
    "bench": dict(n=(1 << 24) + 3, rows=8192, cols=1000, M=2048, N=2048, K=2048, blocks=(64, 64, 32),
                  hist=(1 << 22) + 1, bins=64, axpy=(1 << 24) + 5),
}


def cdiv(a, b):
    return (a + b - 1) // b


class HostArrays:
    """Arrays for a dry run: NumPy under tri.triton.HostTensor."""

    def __init__(self):
        from tri.triton import HostTensor
        self.HostTensor = HostTensor

    def tensor(self, a):
        return self.HostTensor(np.array(a))

    def numpy(self, t):
        return t.numpy().copy()


class TorchArrays:
    """Arrays on a GPU through PyTorch."""

    def __init__(self, device="cuda"):
        import torch
        self.torch, self.device = torch, device

    def tensor(self, a):
        return self.torch.from_numpy(np.array(a)).to(self.device)

    def numpy(self, t):
        return t.cpu().numpy()


def run(xp, size="test"):
    s = SIZES[size]
    rng = np.random.default_rng(2024)

    n = s["n"]
    x, y = rng.uniform(-1, 1, n).astype(np.float32), rng.uniform(-1, 1, n).astype(np.float32)
    tx, ty, tout = xp.tensor(x), xp.tensor(y), xp.tensor(np.zeros(n, np.float32))
    add_kernel[lambda meta: (cdiv(n, meta["BLOCK"]),)](tx, ty, tout, n)
    np.testing.assert_array_equal(xp.numpy(tout), x + y)

    rows, cols = s["rows"], s["cols"]
    stride = cols + 14  # padded rows
    a = rng.uniform(-4, 4, (rows, stride)).astype(np.float32)
    ta, tsm = xp.tensor(a), xp.tensor(np.zeros((rows, cols), np.float32))
    softmax_kernel[(rows,)](tsm, ta, stride, 1, cols, cols)
    e = np.exp(a[:, :cols].astype(np.float64) - a[:, :cols].max(axis=1, keepdims=True))
    np.testing.assert_allclose(xp.numpy(tsm), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)

    M, N, K = s["M"], s["N"], s["K"]
    am = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    bt = rng.uniform(-1, 1, (N, K)).astype(np.float16)  # B is bt.T: a transposed view
    tam, tbt, tc = xp.tensor(am), xp.tensor(bt), xp.tensor(np.zeros((M, N), np.float32))
    tb = tbt.T
    BM, BN, BK = s["blocks"]
    matmul_kernel[(cdiv(M, BM), cdiv(N, BN))](tam, tb, tc, M, N, K, *tam.stride(), *tb.stride(), *tc.stride(),
                                              BM=BM, BN=BN, BK=BK)
    want = am.astype(np.float64) @ bt.T.astype(np.float64)
    np.testing.assert_allclose(xp.numpy(tc), want, rtol=1e-3, atol=1e-3 * K ** 0.5)

    nh, bins = s["hist"], s["bins"]
    h = rng.integers(0, 1000, nh).astype(np.int32)
    th, tbins = xp.tensor(h), xp.tensor(np.zeros(bins, np.int32))
    for _ in range(2):  # accumulates: the second launch starts from the first's counts
        histogram_kernel[(cdiv(nh, 128),)](th, tbins, nh, NUM_BINS=bins, BLOCK=128)
    np.testing.assert_array_equal(xp.numpy(tbins), 2 * np.bincount(h % bins, minlength=bins))

    na = s["axpy"]
    buf = rng.uniform(-1, 1, 2 * na + 64).astype(np.float32)
    tbuf = xp.tensor(buf)
    tx2, ty2 = tbuf[8:8 + na], tbuf[na + 64:]  # two views of one array
    axpy_kernel[(cdiv(na, 128),)](tx2, ty2, na, 0.5, BLOCK=128)
    want = buf.copy()
    want[8:8 + na] = np.float32(0.5) * buf[8:8 + na] + buf[na + 64:]
    np.testing.assert_allclose(xp.numpy(tbuf), want, rtol=1e-6, atol=1e-7)


def main(argv):
    """capture_program.py [test|bench] [torch-cpu]: the sizes, and for a dry run torch CPU
    tensors instead of HostTensor."""
    size = argv[1] if len(argv) > 1 else "test"
    dry = sys.modules.get("tri.triton.dry")
    if "torch-cpu" in argv[2:]:
        xp = TorchArrays("cpu")
    else:
        xp = HostArrays() if dry is not None and dry.is_active() else TorchArrays()
    run(xp, size)
    print(f"capture_program: all results match NumPy ({size} sizes, {type(xp).__name__})")


if __name__ == "__main__":
    main(sys.argv)
