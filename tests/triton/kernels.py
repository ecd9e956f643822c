# The Triton corpus's own kernels, next to the ones of tests/import/kernels.py (vector add, fused
# softmax, matmul with a leaky-ReLU epilogue, low-memory dropout, layer norm forward and backward,
# fused attention forward, ...). These are the multi-block forms: a row longer than one block is
# scanned, reduced or normalized in a loop that carries its state from block to block.
# `python3 -m tri.triton tests/triton/kernels.py --ttir-only -o tests/triton/ttir` (from the
# repository root) writes their TTIR; tests/triton/test_corpus.py runs it on interp and cpu.
# Line numbers here are what the imported IR's locations point at: keep edits at the end.
import triton
import triton.language as tl


@triton.jit
def histogram_kernel(x_ptr, bins_ptr, n, lo, inv_width, NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    # Values binned as floor((x - lo) / width), clamped to the first and last bin, and counted
    # with atomic_add on the gathered bin addresses (many lanes hit the same bin).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.floor((x - lo) * inv_width).to(tl.int32)
    b = tl.minimum(tl.maximum(b, 0), NUM_BINS - 1)
    tl.atomic_add(bins_ptr + b, 1, mask=mask)


@triton.jit
def _max_with_index(a, ai, b, bi):
    # A combine function of two (value, index) pairs: the larger value, the smaller index on a tie.
    take_a = (a > b) | ((a == b) & (ai < bi))
    return tl.where(take_a, a, b), tl.where(take_a, ai, bi)


@triton.jit
def argmax_kernel(x_ptr, max_ptr, idx_ptr, n_cols, stride, BLOCK: tl.constexpr):
    # One row per program, BLOCK columns at a time: tl.reduce with the custom combine function
    # gives each block's (max, first index), and the loop keeps the best pair so far.
    row = tl.program_id(0)
    best = -float("inf")
    best_idx = 0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
        m, i = tl.reduce((x, cols), 0, _max_with_index)
        better = m > best
        best_idx = tl.where(better, i, best_idx)
        best = tl.where(better, m, best)
    tl.store(max_ptr + row, best)
    tl.store(idx_ptr + row, best_idx)


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    # An inclusive prefix sum of each row: tl.cumsum within a block, plus the running total of the
    # blocks before it.
    row = tl.program_id(0)
    carry = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
        tl.store(out_ptr + row * stride + cols, tl.cumsum(x, axis=0) + carry, mask=mask)
        carry += tl.sum(x, axis=0)


@triton.jit(noinline=True)
def _mean_square(row_ptr, n_cols, BLOCK: tl.constexpr):
    # A device function (not inlined: a `call` in Tri) that reads memory through a pointer
    # argument and loops.
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(row_ptr + cols, mask=cols < n_cols, other=0.0)
        acc += x * x
    return tl.sum(acc, axis=0) / n_cols


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, out_ptr, rstd_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    # RMS norm: y = x / sqrt(mean(x^2) + eps) * w, the mean square from the device function.
    row = tl.program_id(0)
    rstd = 1.0 / tl.sqrt(_mean_square(x_ptr + row * stride, n_cols, BLOCK) + eps)
    tl.store(rstd_ptr + row, rstd)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        tl.store(out_ptr + row * stride + cols, x * rstd * w, mask=mask)


@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # out (N x M) = x (M x N) transposed, one 2-D tile per program, masked on both axes.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tile = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N))
    tl.store(out_ptr + rn[:, None] * M + rm[None, :], tl.trans(tile), mask=(rn[:, None] < N) & (rm[None, :] < M))


F32 = "*fp32"
TRI_EXPORTS = {
    "histogram": dict(kernel=histogram_kernel,
                      signature={"x_ptr": F32, "bins_ptr": "*i32", "n": "i32", "lo": "fp32", "inv_width": "fp32"},
                      constexprs={"NUM_BINS": 16, "BLOCK": 64}),
    "argmax": dict(kernel=argmax_kernel,
                   signature={"x_ptr": F32, "max_ptr": F32, "idx_ptr": "*i32", "n_cols": "i32", "stride": "i32"},
                   constexprs={"BLOCK": 32}),
    "cumsum": dict(kernel=cumsum_kernel, signature={"x_ptr": F32, "out_ptr": F32, "n_cols": "i32", "stride": "i32"},
                   constexprs={"BLOCK": 32}),
    "rms_norm": dict(kernel=rms_norm_kernel,
                     signature={"x_ptr": F32, "w_ptr": F32, "out_ptr": F32, "rstd_ptr": F32, "n_cols": "i32",
                                "stride": "i32", "eps": "fp32"},
                     constexprs={"BLOCK": 32}),
    "transpose": dict(kernel=transpose_kernel, signature={"x_ptr": F32, "out_ptr": F32, "M": "i32", "N": "i32"},
                      constexprs={"BLOCK_M": 16, "BLOCK_N": 8}),
}
