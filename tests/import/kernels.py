# Triton kernels whose TTIR the importer is tested on (python3 -m tri.triton compiles them, see
# TRI_EXPORTS at the end; tests/import/test_ttir_run.cpp checks them against C references).
# Most follow Triton's tutorials (vector add, fused softmax, matmul with grouped ordering, layer
# norm forward, fused attention forward), written for small blocks so that the CPU tests are fast.
# Line numbers here are what the imported IR's locations point at: keep edits at the end.
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols, BLOCK: tl.constexpr):
    # Each program handles rows pid, pid + num_programs, ... (the tutorial's persistent loop).
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in range(row_start, n_rows, row_step):
        row_ptr = in_ptr + row_idx * in_row_stride
        offs = tl.arange(0, BLOCK)
        mask = offs < n_cols
        row = tl.load(row_ptr + offs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        num = tl.exp(row_minus_max)
        den = tl.sum(num, axis=0)
        out = num / den
        tl.store(out_ptr + row_idx * out_row_stride + offs, out, mask=mask)


@triton.jit
def layer_norm_fwd_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
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
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  ACTIVATION: tl.constexpr):
    # The tutorial's grouped ordering of the output tiles, for L2 reuse.
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
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def gelu_kernel(x_ptr, y_ptr, y_tanh_ptr, n, BLOCK: tl.constexpr):
    # The exact GeLU (math.erf) and the tanh approximation (libdevice's tanh, an extern call).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y, mask=mask)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    y_tanh = 0.5 * x * (1.0 + libdevice.tanh(inner))
    tl.store(y_tanh_ptr + offs, y_tanh, mask=mask)


@triton.jit
def _argmax_combine(a, ai, b, bi):
    take_a = (a > b) | ((a == b) & (ai < bi))
    return tl.where(take_a, a, b), tl.where(take_a, ai, bi)


@triton.jit
def _mul_combine(a, b):
    return a * b


@triton.jit
def reduce_scan_kernel(x_ptr, sum_ptr, max_ptr, argmax_ptr, cumsum_ptr, cumprod_ptr, icum_ptr, n_cols, stride,
                       BLOCK: tl.constexpr):
    # One row per program: builtin reductions, a custom (value, index) argmax, scans.
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=0.0)
    tl.store(sum_ptr + row, tl.sum(x, axis=0))
    xm = tl.where(mask, x, -float("inf"))
    tl.store(max_ptr + row, tl.max(xm, axis=0))
    _, idx = tl.reduce((xm, offs), 0, _argmax_combine)
    tl.store(argmax_ptr + row, idx)
    tl.store(cumsum_ptr + row * stride + offs, tl.cumsum(x, axis=0), mask=mask)
    xp = tl.where(mask, x, 1.0)
    tl.store(cumprod_ptr + row * stride + offs, tl.associative_scan(xp, 0, _mul_combine), mask=mask)
    ones = mask.to(tl.int32)
    tl.store(icum_ptr + row * stride + offs, tl.cumsum(ones, axis=0, reverse=True), mask=mask)


@triton.jit
def atomics_kernel(x_ptr, bins_ptr, max_ptr, flag_ptr, n, BLOCK: tl.constexpr):
    # A histogram (atomic_add on gathered addresses), a global max (scalar atomic_max) and a
    # claim flag (atomic_cas: the first program to arrive writes its id + 1).
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(bins_ptr + x, 1, mask=mask)
    tl.atomic_max(max_ptr, tl.max(tl.where(mask, x, -1), axis=0))
    tl.atomic_cas(flag_ptr, 0, pid + 1)


@triton.jit
def attn_fwd_kernel(Q, K, V, Out, sm_scale, seq_len, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    HEAD_DIM: tl.constexpr):
    # The fused attention forward of the tutorial (non-causal, one head per program along axis 1),
    # with the online softmax in base 2.
    start_m = tl.program_id(0)
    off_h = tl.program_id(1)
    base = off_h * seq_len * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=offs_m[:, None] < seq_len, other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, seq_len, BLOCK_N):
        cols = start_n + offs_n
        kv_mask = cols[:, None] < seq_len
        k = tl.load(K + base + cols[:, None] * HEAD_DIM + offs_d[None, :], mask=kv_mask, other=0.0)
        qk = tl.dot(q, tl.trans(k))
        qk = tl.where(cols[None, :] < seq_len, qk * qk_scale, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        qk = qk - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + base + cols[:, None] * HEAD_DIM + offs_d[None, :], mask=kv_mask, other=0.0)
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / (l_i - 1.0 + 1.0)[:, None]
    tl.store(Out + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(tl.float16),
             mask=offs_m[:, None] < seq_len)


@triton.jit(noinline=True)
def scale_shift(v, a, b):
    return v * a + b


@triton.jit
def control_kernel(x_ptr, out_ptr, steps_ptr, n, BLOCK: tl.constexpr):
    # A device-function call (not inlined), an if with results, a while loop, and the shape ops
    # reshape / split / join / cat / trans.
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    if pid % 2 == 0:
        a = scale_shift(pid.to(tl.float32), 2.0, 1.0)
    else:
        a = scale_shift(pid.to(tl.float32), -1.0, 0.5)
    y = x * a
    pairs = tl.reshape(y, (BLOCK // 2, 2))
    lo, hi = tl.split(pairs)
    swapped = tl.reshape(tl.join(hi, lo), (BLOCK,))
    tl.store(out_ptr + offs, swapped, mask=mask)
    both = tl.cat(lo, hi)
    i = 0
    v = tl.sum(both, axis=0) + tl.sum(tl.trans(pairs), axis=1).to(tl.float32).reshape(2).sum(axis=0) * 0.0
    while v < 1000.0 and i < 64:
        v = v * 2.0 + 1.0
        i += 1
    tl.store(steps_ptr + pid, i)


@triton.jit
def checked_sqrt_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Compiled with debug=True: the device_assert stays, and Triton adds its own overflow checks.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.device_assert(x >= 0, "negative input")
    tl.store(out_ptr + offs, tl.sqrt(x), mask=mask)


@triton.jit
def seeded_dropout_kernel(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    # The tutorial's low-memory dropout: the keep mask comes from Philox (tl.rand), not memory.
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    random = tl.rand(seed, offsets)
    x_keep = random > p
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


@triton.jit
def layer_norm_bwd_dx_kernel(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N, GROUP_SIZE_M: tl.constexpr,
                             BLOCK_SIZE_N: tl.constexpr):
    # The tutorial's backward pass, first stage: dx per row, and dw/db partial sums accumulated
    # per group of rows under a spin lock (atomic_cas / atomic_xchg).
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@triton.jit
def layer_norm_bwd_dwdb_kernel(DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_SIZE_M: tl.constexpr,
                               BLOCK_SIZE_N: tl.constexpr):
    # Second stage: sums the partial dw/db rows.
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


@triton.jit
def _scale_or_shift(x, mode):
    # Two returns: MLIR's inliner joins them in a block whose argument is the returned value.
    if mode > 0:
        return x * 2.0
    return x - 1.0


@triton.jit
def early_exit_kernel(x_ptr, y_ptr, flags_ptr, n_rows, n_cols, stride, BLOCK: tl.constexpr):
    # Early returns as Triton libraries write them (liger-kernel's `if row_idx >= n_rows:
    # return`): Triton's frontend makes each `if` that returns into cf.cond_br between blocks.
    row = tl.program_id(0)
    if row >= n_rows:
        return
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=0.0)
    flag = tl.load(flags_ptr + row)
    if flag < 0:
        tl.store(y_ptr + row * stride + offs, -x, mask=mask)
        return
    y = _scale_or_shift(x, flag)
    if flag >= 2:
        if tl.sum(y, axis=0) > 0:
            return
        y = y + 100.0
    tl.store(y_ptr + row * stride + offs, y, mask=mask)


@triton.jit(noinline=True)
def _clip_index(i, n):
    # A device function with three returns (it stays a function: noinline).
    if i < 0:
        return 0
    if i >= n:
        return n - 1
    return i


@triton.jit
def clipped_window_kernel(x_ptr, out_ptr, n, WINDOW: tl.constexpr):
    # out[i] = sum of x over i-2 .. i+WINDOW-3, the indices clipped into [0, n).
    i = tl.program_id(0)
    acc = 0.0
    for k in range(WINDOW):
        j = _clip_index(i + k - 2, n)
        acc += tl.load(x_ptr + j)
    tl.store(out_ptr + i, acc)


@triton.jit
def descriptor_kernel(x_ptr, y_ptr, M, N, stride, shift, BM: tl.constexpr, BN: tl.constexpr):
    # Tensor descriptors made on the device: the block at (pid_m * BM - shift, pid_n * BN - shift)
    # of x, 2x + 1, stored to the same place of y. Blocks past any edge of the M x N tensor (or
    # before its start, where shift makes offsets negative) read zeros and store nothing there.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[stride, 1], block_shape=[BM, BN])
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[stride, 1], block_shape=[BM, BN])
    v = xd.load([pid_m * BM - shift, pid_n * BN - shift])
    yd.store([pid_m * BM - shift, pid_n * BN - shift], v * 2.0 + 1.0)


@triton.jit
def descriptor_gather_kernel(x_ptr, rows_ptr, y_ptr, z_ptr, sums_ptr, M, N, R: tl.constexpr, BN: tl.constexpr):
    # desc.gather of R rows (some past the end: they read zeros), desc.scatter of them to y in
    # reverse order, a NaN-padded load of the block at (M - 2, N - 8) kept whole in z, and
    # desc.atomic_add of the gathered rows into one block of sums.
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[1, BN])
    rows = tl.load(rows_ptr + tl.arange(0, R))
    g = xd.gather(rows, 0)
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[1, BN])
    yd.scatter(g, M - 1 - rows, 0)
    nd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[4, 16], padding_option="nan")
    b = nd.load([M - 2, N - 8])
    tl.store(z_ptr + tl.arange(0, 4)[:, None] * 16 + tl.arange(0, 16)[None, :], b)
    sd = tl.make_tensor_descriptor(sums_ptr, shape=[R, BN], strides=[BN, 1], block_shape=[R, BN])
    sd.atomic_add([0, 0], g)


@triton.jit
def descriptor_arg_kernel(xd, yd, BM: tl.constexpr, BN: tl.constexpr):
    # TensorDescriptor arguments (made on the host): each is a base pointer, its shape and strides.
    pid = tl.program_id(0)
    v = xd.load([pid * BM, 0])
    yd.store([pid * BM, 0], v - 3.0)


@triton.jit
def gather_clamp_kernel(x_ptr, idx_ptr, out_ptr, lo, hi, BLOCK: tl.constexpr):
    # tl.gather along either axis, tl.clamp with and without NaN propagation, tl.exp2 (which
    # flushes subnormal results on NVIDIA GPUs), and an `if` on a one-element tensor (tt.unsplat).
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    idx = tl.load(idx_ptr + offs)
    tl.store(out_ptr + offs, tl.gather(x, idx, 0))
    x2 = tl.reshape(x, (BLOCK // 8, 8))
    i2 = tl.reshape(idx, (BLOCK // 8, 8)) % 8
    tl.store(out_ptr + BLOCK + offs, tl.reshape(tl.gather(x2, i2, 1), (BLOCK, )))
    tl.store(out_ptr + 2 * BLOCK + offs, tl.clamp(x, lo, hi))
    tl.store(out_ptr + 3 * BLOCK + offs, tl.clamp(x, lo, hi, propagate_nan=tl.PropagateNan.ALL))
    tl.store(out_ptr + 4 * BLOCK + offs, tl.exp2(x))
    first = tl.load(x_ptr + tl.arange(0, 1))
    y = x
    if first > 0:
        y = x * 0.5
    tl.store(out_ptr + 5 * BLOCK + offs, y)


@triton.jit
def libdevice_kernel(x_ptr, i_ptr, fout_ptr, iout_ptr, BLOCK: tl.constexpr):
    # libdevice functions the importer builds from Tri ops, with libdevice's exact results.
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    i = tl.load(i_ptr + offs)
    tl.store(fout_ptr + offs, libdevice.rint(x))
    tl.store(fout_ptr + BLOCK + offs, libdevice.fdim(x, 0.5))
    tl.store(fout_ptr + 2 * BLOCK + offs, libdevice.saturatef(x))
    tl.store(fout_ptr + 3 * BLOCK + offs, libdevice.exp2(x))
    tl.store(iout_ptr + offs, libdevice.isnan(x) + 2 * libdevice.isinf(x) + 4 * libdevice.signbit(x) +
             8 * libdevice.finitef(x))
    tl.store(iout_ptr + BLOCK + offs, libdevice.float2int_rn(x))
    tl.store(iout_ptr + 2 * BLOCK + offs, libdevice.float2int_rd(x))
    tl.store(iout_ptr + 3 * BLOCK + offs, libdevice.popc(i) + 64 * libdevice.clz(i))
    tl.store(iout_ptr + 4 * BLOCK + offs, libdevice.ffs(i))
    tl.store(iout_ptr + 5 * BLOCK + offs, libdevice.brev(i))
    tl.store(iout_ptr + 6 * BLOCK + offs, libdevice.mulhi(i, i * 7 + 3))
    tl.store(iout_ptr + 7 * BLOCK + offs, libdevice.hadd(i, i * 3) ^ libdevice.rhadd(i, 5))
    tl.store(iout_ptr + 8 * BLOCK + offs, libdevice.float_as_int(x))

# What `python3 -m tri.triton tests/import/kernels.py --ttir-only -o tests/import/ttir` writes (run
# from the repository root, so that locations name tests/import/kernels.py): one TTIR fixture per
# entry, for cuda sm_90, with tt.divisibility = 16 on every pointer as Triton's launcher finds it.
F32 = "*fp32"
TRI_EXPORTS = {
    "vadd": dict(kernel=add_kernel, signature={"x_ptr": F32, "y_ptr": F32, "out_ptr": F32, "n": "i32"},
                 constexprs={"BLOCK": 64}),
    "softmax": dict(kernel=softmax_kernel,
                    signature={"out_ptr": F32, "in_ptr": F32, "in_row_stride": "i32", "out_row_stride": "i32",
                               "n_rows": "i32", "n_cols": "i32"},
                    constexprs={"BLOCK": 128}),
    "layer_norm_fwd": dict(kernel=layer_norm_fwd_kernel,
                           signature={"X": F32, "Y": F32, "W": F32, "B": F32, "Mean": F32, "Rstd": F32,
                                      "stride": "i32", "N": "i32", "eps": "fp32"},
                           constexprs={"BLOCK": 32}),
    "matmul": dict(kernel=matmul_kernel,
                   signature={"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
                              "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32",
                              "stride_cm": "i32", "stride_cn": "i32"},
                   constexprs={"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2, "ACTIVATION": "leaky_relu"}),
    # The same kernel on f32 inputs, where tl.dot's default input precision is tf32.
    "matmul_tf32": dict(kernel=matmul_kernel,
                        signature={"a_ptr": F32, "b_ptr": F32, "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
                                   "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32",
                                   "stride_cm": "i32", "stride_cn": "i32"},
                        constexprs={"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2, "ACTIVATION": ""}),
    "gelu": dict(kernel=gelu_kernel, signature={"x_ptr": F32, "y_ptr": F32, "y_tanh_ptr": F32, "n": "i32"},
                 constexprs={"BLOCK": 64}),
    "reduce_scan": dict(kernel=reduce_scan_kernel,
                        signature={"x_ptr": F32, "sum_ptr": F32, "max_ptr": F32, "argmax_ptr": "*i32",
                                   "cumsum_ptr": F32, "cumprod_ptr": F32, "icum_ptr": "*i32", "n_cols": "i32",
                                   "stride": "i32"},
                        constexprs={"BLOCK": 64}),
    "atomics": dict(kernel=atomics_kernel,
                    signature={"x_ptr": "*i32", "bins_ptr": "*i32", "max_ptr": "*i32", "flag_ptr": "*i32", "n": "i32"},
                    constexprs={"BLOCK": 32}),
    "attn_fwd": dict(kernel=attn_fwd_kernel,
                     signature={"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32",
                                "seq_len": "i32"},
                     constexprs={"BLOCK_M": 16, "BLOCK_N": 16, "HEAD_DIM": 16}),
    "checked_sqrt": dict(kernel=checked_sqrt_kernel, signature={"x_ptr": F32, "out_ptr": F32, "n": "i32"},
                         constexprs={"BLOCK": 32}, options={"debug": True}),
    "dropout": dict(kernel=seeded_dropout_kernel,
                    signature={"x_ptr": F32, "output_ptr": F32, "n_elements": "i32", "p": "fp32", "seed": "i32"},
                    constexprs={"BLOCK_SIZE": 64}),
    "layer_norm_bwd_dx": dict(kernel=layer_norm_bwd_dx_kernel,
                              signature={"DX": F32, "DY": F32, "DW": F32, "DB": F32, "X": F32, "W": F32, "Mean": F32,
                                         "Rstd": F32, "Lock": "*i32", "stride": "i32", "N": "i32"},
                              constexprs={"GROUP_SIZE_M": 4, "BLOCK_SIZE_N": 128}),
    "layer_norm_bwd_dwdb": dict(kernel=layer_norm_bwd_dwdb_kernel,
                                signature={"DW": F32, "DB": F32, "FINAL_DW": F32, "FINAL_DB": F32, "M": "i32",
                                           "N": "i32"},
                                constexprs={"BLOCK_SIZE_M": 4, "BLOCK_SIZE_N": 32}),
    "control": dict(kernel=control_kernel, signature={"x_ptr": F32, "out_ptr": F32, "steps_ptr": "*i32", "n": "i32"},
                    constexprs={"BLOCK": 16}),
    "early_exit": dict(kernel=early_exit_kernel,
                       signature={"x_ptr": F32, "y_ptr": F32, "flags_ptr": "*i32", "n_rows": "i32", "n_cols": "i32",
                                  "stride": "i32"},
                       constexprs={"BLOCK": 64}),
    "clipped_window": dict(kernel=clipped_window_kernel, signature={"x_ptr": F32, "out_ptr": F32, "n": "i32"},
                           constexprs={"WINDOW": 5}),
    "descriptor": dict(kernel=descriptor_kernel,
                       signature={"x_ptr": F32, "y_ptr": F32, "M": "i32", "N": "i32", "stride": "i32", "shift": "i32"},
                       constexprs={"BM": 8, "BN": 16}),
    "descriptor_gather": dict(kernel=descriptor_gather_kernel,
                              signature={"x_ptr": F32, "rows_ptr": "*i32", "y_ptr": F32, "z_ptr": F32, "sums_ptr": F32,
                                         "M": "i32", "N": "i32"},
                              constexprs={"R": 8, "BN": 32}),
    "descriptor_arg": dict(kernel=descriptor_arg_kernel,
                           signature={"xd": "tensordesc<fp32[8, 16]>", "yd": "tensordesc<fp32[8, 16]>"},
                           constexprs={"BM": 8, "BN": 16}),
    "gather_clamp": dict(kernel=gather_clamp_kernel,
                         signature={"x_ptr": F32, "idx_ptr": "*i32", "out_ptr": F32, "lo": "fp32", "hi": "fp32"},
                         constexprs={"BLOCK": 64}),
    "libdevice": dict(kernel=libdevice_kernel,
                      signature={"x_ptr": F32, "i_ptr": "*i32", "fout_ptr": F32, "iout_ptr": "*i32"},
                      constexprs={"BLOCK": 64}),
}
