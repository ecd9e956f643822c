"""The anchors of the GPU benchmarks: each workload written in Triton (the tutorials' kernels
where there is one) and in PyTorch, run side by side with Tri's kernel in bench/gpu/run.py."""
import os

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def triton_add(x, y, out):
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    # tanh(u) = 2 / (1 + exp(-2u)) - 1 (Triton 3.6 has no tl.tanh)
    t = 2.0 / (1.0 + tl.exp(-2.0 * inner)) - 1.0
    tl.store(out_ptr + offs, 0.5 * x * (1.0 + t), mask=mask)


def triton_gelu(x, out):
    n = x.numel()
    gelu_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=mask)


def softmax_warps(block):
    return 4 if block < 2048 else 8 if block < 4096 else 16


def triton_softmax(x, out):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK=block, num_warps=softmax_warps(block))


@triton.jit
def layernorm_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    mean = 0
    _mean = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(Y + cols, y, mask=mask)


def layernorm_config(n):
    block = min(65536 // 2, triton.next_power_of_2(n))
    return block, min(max(block // 256, 1), 8)


def triton_layernorm(x, w, b, y, mean, rstd, eps=1e-5):
    rows, n = x.shape
    block, warps = layernorm_config(n)
    layernorm_kernel[(rows,)](x, y, w, b, mean, rstd, x.stride(0), n, eps, BLOCK=block, num_warps=warps)


@triton.jit
def cumsum_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * out_stride + cols, tl.cumsum(x, axis=0), mask=mask)


def triton_cumsum(x, out):
    rows, cols = x.shape
    cumsum_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK=triton.next_power_of_2(cols))


@triton.jit
def argmax_kernel(in_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    tl.store(out_ptr + row, tl.argmax(x, axis=0))


def triton_argmax(x, out):
    rows, cols = x.shape
    argmax_kernel[(rows,)](x, out, x.stride(0), cols, BLOCK=triton.next_power_of_2(cols))


@triton.jit
def histogram_kernel(values_ptr, bins_ptr, n, NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(values_ptr + offs, mask=m, other=-1)
    ok = m & (v >= 0) & (v < NUM_BINS)
    tl.atomic_add(bins_ptr + v, 1, mask=ok, sem="relaxed")


def triton_histogram(values, bins):
    n = values.numel()
    histogram_kernel[(triton.cdiv(n, 1024),)](values, bins, n, NUM_BINS=bins.numel(), BLOCK=1024)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  LEAKY: tl.constexpr = True):
    # Triton's tutorial matmul (grouped ordering) with the leaky-ReLU epilogue of
    # examples/matmul_leaky_relu.tri.
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    if LEAKY:
        acc = tl.where(acc >= 0, acc, 0.01 * acc)
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


# The tutorial's H100 configurations for f16 (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, warps, stages); the
# fastest on the shape is used (picked once per shape, like the tutorial's autotuner).
MATMUL_CONFIGS = [(128, 256, 64, 8, 8, 3), (128, 128, 64, 8, 4, 4), (64, 256, 32, 8, 4, 4), (128, 128, 32, 8, 4, 4)]
_matmul_best = {}


def triton_matmul(a, b, c, leaky=True):
    """c = a @ b, with the leaky-ReLU epilogue unless `leaky` is False."""
    M, K = a.shape
    N = b.shape[1]

    def run(cfg):
        bm, bn, bk, gm, nw, ns = cfg
        matmul_kernel[(triton.cdiv(M, bm) * triton.cdiv(N, bn),)](
            a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, LEAKY=leaky, num_warps=nw, num_stages=ns)

    key = (M, N, K, a.dtype, leaky)
    fixed = os.environ.get("TRI_BENCH_TRITON_MM_CONFIG")  # "128,256,64,8,8,3": no search (for ncu)
    if fixed:
        _matmul_best[key] = tuple(int(v) for v in fixed.split(","))
    if key not in _matmul_best:
        from triton.testing import do_bench
        _matmul_best[key] = min(MATMUL_CONFIGS, key=lambda cfg: do_bench(lambda: run(cfg), warmup=10, rep=50))
    run(_matmul_best[key])


@triton.jit
def attention_kernel(Q, K, V, O, sm_scale, stride_z, stride_h, stride_s, stride_d, H, N_CTX,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr):
    # The algorithm of examples/flash_attention.tri (FlashAttention forward with the online softmax
    # in base 2), written the way Triton's tutorial writes its simple version.
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off = (off_hz // H).to(tl.int64) * stride_z + (off_hz % H).to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + off + offs_m[:, None] * stride_s + offs_d[None, :] * stride_d, mask=offs_m[:, None] < N_CTX,
                other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX) if CAUSAL else N_CTX
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        kt = tl.load(K + off + cols[None, :] * stride_s + offs_d[:, None] * stride_d, mask=cols[None, :] < N_CTX,
                     other=0.0)
        qk = tl.dot(q, kt) * qk_scale
        valid = cols[None, :] < N_CTX
        if CAUSAL:
            valid = valid & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(valid, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + off + cols[:, None] * stride_s + offs_d[None, :] * stride_d, mask=cols[:, None] < N_CTX,
                    other=0.0)
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(O + off + offs_m[:, None] * stride_s + offs_d[None, :] * stride_d, out.to(tl.float16),
             mask=offs_m[:, None] < N_CTX)


def triton_attention(q, k, v, o, causal, block_m=128, block_n=64, warps=8, stages=3):
    Z, H, N, D = q.shape
    attention_kernel[(triton.cdiv(N, block_m), Z * H)](
        q, k, v, o, 1.0 / D ** 0.5, q.stride(0), q.stride(1), q.stride(2), q.stride(3), H, N,
        BLOCK_M=block_m, BLOCK_N=block_n, HEAD_DIM=D, CAUSAL=causal, num_warps=warps, num_stages=stages)
