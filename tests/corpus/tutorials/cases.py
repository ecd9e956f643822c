"""The corpus's exports of Triton's own tutorials (python/tutorials of Triton 3.6), as the
tutorials launch them on an H100: each export names the @triton.jit function and its file, the
constexprs the tutorial's launcher computes (or, for autotuned kernels, a configuration of its
autotune list that an H100 typically picks at that size), num_warps and num_stages; its builder
makes the launch at two sizes: "test" (small, not multiples of the blocks, for interp and cpu
against NumPy) and "bench" (LLM-ish sizes for the GPU benchmark against Triton). Integer
arguments that are multiples of 16 at the bench size are multiples of 16 at the test size too,
so one fixture serves both (the fixture states what Triton's launcher finds at the bench size).

Kernels that take host-side tensor descriptors (TMA) get Desc arguments: a tensor with the
shape, strides and block shape the tutorial's launcher gives its TensorDescriptor (Tri takes the
tensor's base, shape and strides; Triton on the GPU a TensorDescriptor). At the test size their
shapes are not multiples of the blocks where the kernel allows it, so the descriptors' zero
reads and dropped stores out of bounds are part of what is compared.

Exports whose builder returns a case without outputs are import-only: the test checks that they
keep failing to import as tests/corpus/expected_failures.json says."""

import math

import numpy as np

from corpus.common import (Addrs, arr, attention_reference, case, cdiv, close, Desc, EXACT, expect, full, H100_SMS,
                           integers, normal, out, philox_uniform, Registry, round_to, size_is_real, T, Tol, uniform, zeros)

REGISTRY = Registry("tutorials")
export = REGISTRY.export


# ---------------------------------------------------------------- 01 vector add

@export("vector_add", "add_kernel", "01-vector-add.py", dict(BLOCK_SIZE=1024), what="x + y, f32")
def _vector_add(size):
    n = T(size, 3008, 1 << 26)
    x, y = uniform(1, n, -10, 10), uniform(2, n, -10, 10)
    o = out(n)
    return case(f"n={n} f32", cdiv(n, 1024), dict(x_ptr=x, y_ptr=y, output_ptr=o, n_elements=n),
                {"output_ptr": EXACT},
                lambda: {"output_ptr": expect(o, x.values().astype(np.float32) + y.values().astype(np.float32))})


# ---------------------------------------------------------------- 02 fused softmax

def _softmax(size, n_cols, rows_test, rows_bench, programs_bench):
    # The tutorial: BLOCK_SIZE = next_power_of_2(n_cols), 8 warps, num_stages 4 where shared
    # memory exceeds 200 KB (H100), and NUM_SM x occupancy programs (occupancy from the compiled
    # kernel's registers; the bench takes what that gives on an H100) looping over the rows.
    rows = T(size, rows_test, rows_bench)
    cols = T(size, n_cols[0], n_cols[1])
    programs = T(size, 3, programs_bench)
    x = normal(3, rows * cols, 2.0)
    o = out(rows * cols)

    def ref():
        v = x.values().reshape(rows, cols)
        e = np.exp(v - v.max(axis=1, keepdims=True))
        return {"output_ptr": expect(o, e / e.sum(axis=1, keepdims=True))}

    return case(f"{rows}x{cols} f32, {programs} programs", min(programs, rows),
                dict(output_ptr=o, input_ptr=x, input_row_stride=cols, output_row_stride=cols, n_rows=rows,
                     n_cols=cols), {"output_ptr": close(1e-8, 1e-5)}, ref)


@export("softmax_1000", "softmax_kernel", "02-fused-softmax.py", dict(BLOCK_SIZE=1024, num_stages=4), num_warps=8,
        num_stages=4, what="rows of 1000 in a 1024 block, a persistent loop over rows")
def _softmax_1000(size):
    return _softmax(size, (1000, 1000), 16, 16384, H100_SMS * 10)


@export("softmax_4096", "softmax_kernel", "02-fused-softmax.py", dict(BLOCK_SIZE=4096, num_stages=4), num_warps=8,
        num_stages=4, what="rows of 4096 in one block")
def _softmax_4096(size):
    return _softmax(size, (2512, 4096), 16, 4096, H100_SMS * 6)


# ---------------------------------------------------------------- 03 matrix multiplication

MM_CFG = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8)  # autotune list, entry 1


def _matmul(size, dtype, activation, b_transposed=False):
    M, N, K = T(size, (144, 272, 80), (4096, 4096, 4096))
    a = uniform(7, M * K, -1, 1, dtype)
    b = uniform(8, K * N, -1, 1, dtype)  # N x K when transposed (the fp8 path passes b.T)
    c = out(M * N, "f16")

    def ref():
        a64 = a.values().reshape(M, K)
        b64 = b.values().reshape(N, K).T if b_transposed else b.values().reshape(K, N)
        s = a64 @ b64
        if activation == "leaky_relu":
            s = np.where(s >= 0, s, 0.01 * s)
        return {"c_ptr": expect(c, s)}

    stride_bk, stride_bn = (1, K) if b_transposed else (N, 1)
    return case(f"{M}x{N}x{K} {dtype}" + (f", {activation}" if activation else ""),
                cdiv(M, 128) * cdiv(N, 256),
                dict(a_ptr=a, b_ptr=b, c_ptr=c, M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=stride_bk,
                     stride_bn=stride_bn, stride_cm=N, stride_cn=1),
                {"c_ptr": close(2e-3, 1e-3, ulp=1)},
                # f8: Triton's outputs are no reference at full size (Hopper's f8 wgmma sums with
                # fewer bits than f32: 0.3 off on outputs near 3 at K 4096), NumPy's float64 is.
                T(size, ref, ref if dtype.startswith("f8") else None))


@export("matmul_f16", "matmul_kernel", "03-matrix-multiplication.py", dict(MM_CFG, ACTIVATION=""), num_warps=8,
        num_stages=3, what="grouped-order matmul, % M wraps, K masked")
def _matmul_f16(size):
    return _matmul(size, "f16", "")


@export("matmul_f16_leaky_relu", "matmul_kernel", "03-matrix-multiplication.py",
        dict(MM_CFG, ACTIVATION="leaky_relu"), num_warps=8, num_stages=3, what="the same with a leaky-ReLU epilogue")
def _matmul_leaky(size):
    return _matmul(size, "f16", "leaky_relu")


@export("matmul_fp8", "matmul_kernel", "03-matrix-multiplication.py",
        dict(MM_CFG, BLOCK_SIZE_K=128, ACTIVATION=""), num_warps=8, num_stages=3,
        what="f8e5m2 inputs, B transposed (its K stride 1), f16 out (the autotune list's fp8 entry)")
def _matmul_fp8(size):
    return _matmul(size, "f8e5m2", "", b_transposed=True)


# ---------------------------------------------------------------- 04 low-memory dropout

@export("dropout", "_dropout", "04-low-memory-dropout.py", dict(BLOCK_SIZE=1024), what="dropout with a keep mask")
def _dropout(size):
    n, p = T(size, 3008, 1 << 26), 0.4
    x = normal(10, n)
    keep = integers(11, n, 0, 2, "i32")
    o = out(n)

    def ref():
        xv = x.values().astype(np.float32)
        return {"output_ptr": expect(o, np.where(keep.data != 0, xv / (np.float32(1) - np.float32(p)), 0))}

    return case(f"n={n} f32", cdiv(n, 1024), dict(x_ptr=x, x_keep_ptr=keep, output_ptr=o, n_elements=n, p=p),
                {"output_ptr": Tol("close", 0, 1e-6, ref_exact=True)}, ref)


@export("seeded_dropout", "_seeded_dropout", "04-low-memory-dropout.py", dict(BLOCK_SIZE=1024),
        what="dropout with a Philox mask (tl.rand)")
def _seeded_dropout(size):
    n, p, seed = T(size, 3008, 1 << 26), 0.5, 123
    x = normal(12, n)
    o = out(n)

    def ref():
        keep = philox_uniform(np.arange(n), seed) > np.float32(p)
        xv = x.values().astype(np.float32)
        return {"output_ptr": expect(o, np.where(keep, xv / (np.float32(1) - np.float32(p)), 0))}

    return case(f"n={n} f32", cdiv(n, 1024), dict(x_ptr=x, output_ptr=o, n_elements=n, p=p, seed=seed),
                {"output_ptr": Tol("close", 0, 1e-6, ref_exact=True)}, ref)


# ---------------------------------------------------------------- 05 layer norm

def _ln_inputs(rows, n, dtype="f16"):
    x = normal(20, rows * n, 1.0, dtype, mean=0.5)
    w, b = uniform(21, n, 0.5, 1.5, dtype), uniform(22, n, -1, 1, dtype)
    return x, w, b


def _ln_stats(x, rows, n, eps):
    v = x.values().reshape(rows, n)
    mean = v.mean(axis=1)
    rstd = 1 / np.sqrt(((v - mean[:, None]) ** 2).mean(axis=1) + eps)
    return v, mean, rstd


# The tutorial's forward for N = 4096 in f16: BLOCK_SIZE = min(65536 // 2, next_power_of_2(N)),
# num_warps = min(max(BLOCK_SIZE // 256, 1), 8).
@export("layer_norm_fwd", "_layer_norm_fwd_fused", "05-layer-norm.py", dict(BLOCK_SIZE=4096), num_warps=8,
        what="f16, three passes over the row, mean and rstd out")
def _layer_norm_fwd(size):
    rows, n, eps = T(size, 5, 4096), T(size, 3008, 4096), 1e-5
    x, w, b = _ln_inputs(rows, n)
    y, mean, rstd = out(rows * n, "f16"), out(rows), out(rows)

    def ref():
        v, m, r = _ln_stats(x, rows, n, eps)
        return {"Y": expect(y, (v - m[:, None]) * r[:, None] * w.values() + b.values()),
                "Mean": expect(mean, m), "Rstd": expect(rstd, r)}

    return case(f"{rows}x{n} f16", rows, dict(X=x, Y=y, W=w, B=b, Mean=mean, Rstd=rstd, stride=n, N=n, eps=eps),
                {"Y": close(2e-3, 2e-3, ulp=1), "Mean": close(1e-6, 1e-5), "Rstd": close(1e-6, 1e-5)}, ref)


# Backward: GROUP_SIZE_M = 128 for N <= 4096, BLOCK_SIZE_N as the forward's, its num_warps.
LN_GROUPS = 128


@export("layer_norm_bwd_dx", "_layer_norm_bwd_dx_fused", "05-layer-norm.py",
        dict(GROUP_SIZE_M=LN_GROUPS, BLOCK_SIZE_N=4096), num_warps=8,
        what="dx, and dw/db partial sums in 128 groups under a spin lock (atomic_cas/atomic_xchg)")
def _layer_norm_bwd_dx(size):
    # At the test size every row has a group of its own (10 rows, 128 groups): the partial sums
    # are then one product each, independent of the order rows take the locks.
    rows, n, eps = T(size, 10, 4096), T(size, 3008, 4096), 1e-5
    x, w, _ = _ln_inputs(rows, n)
    dy = normal(23, rows * n, 1.0, "f16")
    v, m, r = _ln_stats(x, rows, n, eps)
    mean, rstd = full(rows, 0, "f32"), full(rows, 0, "f32")
    mean.data[:], rstd.data[:] = m, r
    dx = out(rows * n, "f16")
    dw, db = full(LN_GROUPS * n, 0, "f16"), full(LN_GROUPS * n, 0, "f16")
    lock = full(2 * LN_GROUPS, 0, "i32")

    def ref():
        mf, rf = mean.values(), rstd.values()
        xhat = (v - mf[:, None]) * rf[:, None]
        wdy = w.values() * dy.values().reshape(rows, n)
        c1 = (xhat * wdy).sum(axis=1, keepdims=True) / n
        c2 = wdy.sum(axis=1, keepdims=True) / n
        want_dw = np.zeros((LN_GROUPS, n))
        want_db = np.zeros((LN_GROUPS, n))
        dyv = dy.values().reshape(rows, n)
        for row in range(rows):
            want_dw[row % LN_GROUPS] += round_to(dyv[row] * round_to(xhat[row], "f32"), "f16")
            want_db[row % LN_GROUPS] += dyv[row]
        counts = np.array([0] * LN_GROUPS + [1 if g < rows else 0 for g in range(LN_GROUPS)])
        return {"DX": expect(dx, (wdy - (xhat * c1 + c2)) * rf[:, None]), "DW": want_dw.ravel(),
                "DB": want_db.ravel(), "Lock": counts}

    partial = T(size, close(1e-3, 2e-3, ulp=1), close(0.1, 1e-2))  # bench: 32 f16 sums in any order
    return case(f"{rows}x{n} f16, {LN_GROUPS} groups", rows,
                dict(DX=dx, DY=dy, DW=dw, DB=db, X=x, W=w, Mean=mean, Rstd=rstd, Lock=lock, stride=n, N=n),
                {"DX": close(2e-3, 2e-3, ulp=2), "DW": partial, "DB": partial, "Lock": EXACT}, T(size, ref, None))


@export("layer_norm_bwd_dwdb", "_layer_norm_bwd_dwdb", "05-layer-norm.py", dict(BLOCK_SIZE_M=32, BLOCK_SIZE_N=128),
        what="the partial sums of dw/db summed by column blocks")
def _layer_norm_bwd_dwdb(size):
    m, n = T(size, 48, 128), T(size, 3008, 4096)  # m = min(GROUP_SIZE_M, rows)
    dw, db = uniform(24, m * n, -1, 1, "f16"), uniform(25, m * n, -1, 1, "f16")
    fdw, fdb = out(n, "f16"), out(n, "f16")

    def ref():
        return {"FINAL_DW": expect(fdw, dw.values().reshape(m, n).sum(axis=0)),
                "FINAL_DB": expect(fdb, db.values().reshape(m, n).sum(axis=0))}

    tol = close(2e-3, 1e-3, ulp=1)
    return case(f"{m}x{n} f16", cdiv(n, 128), dict(DW=dw, DB=db, FINAL_DW=fdw, FINAL_DB=fdb, M=m, N=n),
                {"FINAL_DW": tol, "FINAL_DB": tol}, ref)


# ---------------------------------------------------------------- 06 fused attention

RCP_LN2 = 1.4426950408889634


def _attn_fwd(size, D, causal, host_desc=False):
    # _attn_fwd with device-side descriptors (the tutorial's path on Hopper without host
    # descriptors, and what its pointer arguments become): BLOCK_M 128 and BLOCK_N 64 (D 64) or
    # 128 (D 128) of its autotune list; N_CTX a multiple of BLOCK_M, as the tutorial requires.
    # With host_desc, the tutorial's TensorDescriptor arguments: each of q, k, v, o viewed as
    # (Z H N_CTX) x D, in blocks of BLOCK_M (q, o) or BLOCK_N (k, v) rows, as its pre-hook sets
    # them; H 32 at the bench size makes the fixture state H divisible by 16, so the test's is 16.
    Z, H, S = T(size, (1, 16 if host_desc else 2, 256), (4, 32 if host_desc else 40, 4096))
    sm_scale = 0.5 / math.sqrt(D)
    q, k, v = (normal(seed, Z * H * S * D, 0.5, "f16") for seed in (30, 31, 32))
    o, m = out(Z * H * S * D, "f16"), out(Z * H * S)
    args = dict(sm_scale=sm_scale, M=m, Z=Z, H=H, desc_q=q, desc_k=k, desc_v=v, desc_o=o, N_CTX=S)
    if host_desc:
        rows, bn = Z * H * S, 64 if D == 64 else 128
        args.update(desc_q=Desc(q, (rows, D), (D, 1), (128, D)), desc_k=Desc(k, (rows, D), (D, 1), (bn, D)),
                    desc_v=Desc(v, (rows, D), (D, 1), (bn, D)), desc_o=Desc(o, (rows, D), (D, 1), (128, D)))

    def ref():
        o64, lse2, _ = attention_reference(q, k, v, Z * H, S, D, sm_scale, causal)
        return {"desc_o": expect(o, o64), "M": expect(m, lse2)}

    return case(f"Z{Z} H{H} S{S} D{D} f16" + (" causal" if causal else ""), (cdiv(S, 128), Z * H, 1), args,
                {"desc_o": close(2e-3, 1e-2), "M": close(1e-4, 1e-4)}, T(size, ref, None))


def _attn_fwd_export(D, causal):
    name = f"attn_fwd_d{D}" + ("_causal" if causal else "")
    cfg = dict(HEAD_DIM=D, BLOCK_M=128, BLOCK_N=64 if D == 64 else 128, FP8_OUTPUT=False, STAGE=3 if causal else 1,
               warp_specialize=False, IS_HOPPER=True)
    export(name, "_attn_fwd", "06-fused-attention.py", cfg, num_warps=4 if D == 64 else 8, num_stages=3, slow=True,
           what=f"flash attention forward, D {D}" + (", causal" if causal else ""))(
        lambda size: _attn_fwd(size, D, causal))


for _D in (64, 128):
    for _causal in (False, True):
        _attn_fwd_export(_D, _causal)


def _attn_bwd_pre(size, D):
    Z, H, S = T(size, (1, 2, 256), (4, 40, 4096))
    o, do = normal(33, Z * H * S * D, 0.5, "f16"), normal(34, Z * H * S * D, 0.5, "f16")
    delta = out(Z * H * S)

    def ref():
        return {"Delta": expect(delta, (o.values() * do.values()).reshape(-1, D).sum(axis=1))}

    return case(f"Z{Z} H{H} S{S} D{D} f16", (S // 128, Z * H), dict(O=o, DO=do, Delta=delta, Z=Z, H=H, N_CTX=S),
                {"Delta": close(1e-5, 1e-5)}, ref)


def _attn_bwd(size, D, causal):
    # The tutorial's backward launch: BLOCK_M1 32, BLOCK_N1 128, BLOCK_M2 128, BLOCK_N2 32,
    # BLK_SLICE_FACTOR 2, 4 warps, 5 stages; K is passed pre-scaled by sm_scale / ln 2.
    Z, H, S = T(size, (1, 2, 256), (4, 40, 4096))
    sm_scale = 0.5 / math.sqrt(D)
    q, k, v, do = (normal(seed, Z * H * S * D, 0.5, "f16") for seed in (35, 36, 37, 38))
    arg_k = full(Z * H * S * D, 0, "f16")
    mm, delta = full(Z * H * S, 0, "f32"), full(Z * H * S, 0, "f32")
    dq, dk, dv = (out(Z * H * S * D, "f16") for _ in range(3))
    refs = {}
    if size_is_real():
        arg_k.data[:] = arr(k.values() * (sm_scale * RCP_LN2), "f16").data
    if size == "test":
        o64, lse2, p = attention_reference(q, k, v, Z * H, S, D, sm_scale, causal)
        o16 = round_to(o64, "f16")
        mm.data[:] = lse2.ravel()
        delta.data[:] = (o16.reshape(-1, D) * do.values().reshape(-1, D)).sum(axis=1)
        refs["p"] = p
    elif size_is_real():
        # The bench size has no reference (compared with Triton); M is what the scores give
        # here, about log2 of the keys each query sees (they are near 0), so exp2 stays finite.
        keys = np.arange(1, S + 1) if causal else np.full(S, S)
        mm.data[:] = np.tile(np.log2(keys), Z * H).astype(np.float32)

    def ref():
        p = refs["p"]
        q64, k64, v64, do64 = (a.values().reshape(Z * H, S, D) for a in (q, k, v, do))
        dp = do64 @ v64.transpose(0, 2, 1)
        ds = p * (dp - delta.values().reshape(Z * H, S, 1))
        return {"DQ": expect(dq, ds @ k64 * sm_scale), "DK": expect(dk, ds.transpose(0, 2, 1) @ q64 * sm_scale),
                "DV": expect(dv, p.transpose(0, 2, 1) @ do64)}

    sd = S * D
    return case(f"Z{Z} H{H} S{S} D{D} f16" + (" causal" if causal else ""), (S // 128, 1, Z * H),
                dict(Q=q, K=arg_k, V=v, sm_scale=sm_scale, DO=do, DQ=dq, DK=dk, DV=dv, M=mm, D=delta,
                     stride_z=H * sd, stride_h=sd, stride_tok=D, stride_d=1, H=H, N_CTX=S),
                {"DQ": close(1e-2, 2e-2), "DK": close(1e-2, 2e-2), "DV": close(1e-2, 2e-2)}, T(size, ref, None))


for _D in (64, 128):
    export(f"attn_bwd_preprocess_d{_D}", "_attn_bwd_preprocess", "06-fused-attention.py",
           dict(BLOCK_M=128, HEAD_DIM=_D), what=f"attention backward: delta = rowsum(o * do), D {_D}")(
        lambda size, D=_D: _attn_bwd_pre(size, D))
    for _causal in (False, True):
        export(f"attn_bwd_d{_D}" + ("_causal" if _causal else ""), "_attn_bwd", "06-fused-attention.py",
               dict(BLOCK_M1=32, BLOCK_N1=128, BLOCK_M2=128, BLOCK_N2=32, BLK_SLICE_FACTOR=2, HEAD_DIM=_D,
                    CAUSAL=_causal), num_warps=4, num_stages=5, slow=True,
               what=f"attention backward: dk/dv and dq loops, D {_D}" + (", causal" if _causal else ""))(
            lambda size, D=_D, causal=_causal: _attn_bwd(size, D, causal))


@export("attn_fwd_host_desc", "_attn_fwd", "06-fused-attention.py",
        dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, FP8_OUTPUT=False, STAGE=3, warp_specialize=False, IS_HOPPER=True),
        num_warps=4, num_stages=3, slow=True,
        what="the causal forward, D 64, on host-side TensorDescriptor arguments (the tutorial's path on Hopper)")
def _attn_fwd_host(size):
    return _attn_fwd(size, 64, True, host_desc=True)


# ---------------------------------------------------------------- 07 libdevice

@export("asin", "asin_kernel", "07-extern-functions.py", dict(BLOCK_SIZE=1024), what="libdevice.asin")
def _asin(size):
    n = T(size, 3008, 1 << 26)
    x = uniform(40, n, -1, 1)
    y = out(n)
    return case(f"n={n} f32", cdiv(n, 1024), dict(x_ptr=x, y_ptr=y, n_elements=n), {"y_ptr": close(1e-7, 1e-6)},
                lambda: {"y_ptr": expect(y, np.arcsin(x.values()))})


# ---------------------------------------------------------------- 08 grouped GEMM

def _grouped(size, b_transposed):
    # Full tiles only, as the tutorial assumes; NUM_SM programs walk the tiles of every problem.
    shapes = T(size, [(128, 128, 64), (256, 128, 128)], [(4096, 4096, 4096)] * 2 + [(2048, 2048, 2048)] * 2)
    args, outs, mats = {}, {}, []
    for g, (M, N, K) in enumerate(shapes):
        a, b = uniform(50 + g, M * K, -1, 1, "f16"), uniform(60 + g, K * N, -1, 1, "f16")
        c = full(M * N, -777, "f16")
        args[f"@a{g}"], args[f"@b{g}"], args[f"@c{g}"] = a, b, c
        outs[f"@c{g}"] = close(2e-3, 1e-3, ulp=1)
        mats.append((a, b, c, M, N, K))
    G = len(shapes)
    sizes = full(3 * G, 0, "i32")
    lds = full(3 * G, 0, "i32")
    for g, (M, N, K) in enumerate(shapes):
        sizes.data[3 * g:3 * g + 3] = (M, N, K)
        lds.data[3 * g:3 * g + 3] = (K, K if b_transposed else N, N)

    def ref():
        want = {}
        for g, (a, b, c, M, N, K) in enumerate(mats):
            b64 = b.values().reshape(N, K).T if b_transposed else b.values().reshape(K, N)
            want[f"@c{g}"] = a.values().reshape(M, K) @ b64
        return want

    args.update(group_a_ptrs=Addrs(tuple(f"@a{g}" for g in range(G))),
                group_b_ptrs=Addrs(tuple(f"@b{g}" for g in range(G))),
                group_c_ptrs=Addrs(tuple(f"@c{g}" for g in range(G))), group_gemm_sizes=sizes, g_lds=lds,
                group_size=G)
    label = " + ".join(f"{M}x{N}x{K}" for M, N, K in shapes) + " f16"
    return case(label, H100_SMS, args, outs, T(size, ref, None))


@export("grouped_matmul", "grouped_matmul_kernel", "08-grouped-gemm.py",
        dict(NUM_SM=H100_SMS, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64), slow=True,
        what="a group of GEMMs whose pointers are loaded from an int64 table")
def _grouped_matmul(size):
    return _grouped(size, False)


@export("grouped_matmul_tma", "grouped_matmul_tma_kernel", "08-grouped-gemm.py",
        dict(NUM_SM=H100_SMS, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, FP8=False), num_stages=3,
        slow=True, what="the same through device-side tensor descriptors, B transposed")
def _grouped_matmul_tma(size):
    return _grouped(size, True)


# ---------------------------------------------------------------- 09 persistent matmul

MM9 = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8)


def _matmul9(size, persistent, b_transposed=False, c_block_n=None):
    # With c_block_n, the TMA kernels' host-side descriptors: A (M x K), B transposed (N x K, as
    # their launch makes it), C (M x N) stored in blocks of 128 x c_block_n (halves of BLOCK_N
    # with EPILOGUE_SUBTILE), blocks as the tutorial's pre-hook sets them. At the test size every
    # edge is out of bounds somewhere: the K loop's last step reads zeros past K, the last
    # tiles' stores drop past M and N.
    M, N, K = T(size, (144, 272, 80), (4096, 4096, 4096))
    a = uniform(70, M * K, -1, 1, "f16")
    b = uniform(71, K * N, -1, 1, "f16")
    c = out(M * N, "f16")
    tiles = cdiv(M, 128) * cdiv(N, 256)
    b_transposed = b_transposed or c_block_n is not None
    c_name = "c_desc" if c_block_n else "c_ptr"

    def ref():
        b64 = b.values().reshape(N, K).T if b_transposed else b.values().reshape(K, N)
        return {c_name: expect(c, a.values().reshape(M, K) @ b64)}

    if c_block_n:
        args = dict(a_desc=Desc(a, (M, K), (K, 1), (128, 64)), b_desc=Desc(b, (N, K), (K, 1), (256, 64)),
                    c_desc=Desc(c, (M, N), (N, 1), (128, c_block_n)), M=M, N=N, K=K)
    else:
        args = dict(a_ptr=a, b_ptr=b, c_ptr=c, M=M, N=N, K=K)
    if not b_transposed:
        args.update(stride_am=K, stride_ak=1, stride_bk=N, stride_bn=1, stride_cm=N, stride_cn=1)
    return case(f"{M}x{N}x{K} f16", min(H100_SMS, tiles) if persistent else tiles, args,
                {c_name: close(2e-3, 1e-3, ulp=1)}, T(size, ref, None))


@export("matmul_09", "matmul_kernel", "09-persistent-matmul.py", MM9, num_warps=8, num_stages=3,
        what="the naive matmul of the persistent tutorial (tl.where clamps, max_contiguous hints)")
def _matmul_09(size):
    return _matmul9(size, False)


@export("matmul_persistent", "matmul_kernel_persistent", "09-persistent-matmul.py", dict(MM9, NUM_SMS=H100_SMS),
        num_warps=8, num_stages=3, what="persistent matmul: NUM_SMS programs over the tiles (tl.range flatten)")
def _matmul_persistent(size):
    return _matmul9(size, True)


@export("matmul_descriptor_persistent", "matmul_kernel_descriptor_persistent", "09-persistent-matmul.py",
        dict(MM9, EPILOGUE_SUBTILE=True, NUM_SMS=H100_SMS, WARP_SPECIALIZE=False, FLATTEN=True), num_warps=8,
        num_stages=3, what="persistent matmul through device-side tensor descriptors, split epilogue")
def _matmul_descriptor_persistent(size):
    return _matmul9(size, True, b_transposed=True)


@export("matmul_tma", "matmul_kernel_tma", "09-persistent-matmul.py",
        dict(MM9, FP8_OUTPUT=False, WARP_SPECIALIZE=False), num_warps=8, num_stages=3,
        what="matmul on host-side TensorDescriptor arguments, B transposed")
def _matmul_tma(size):
    return _matmul9(size, False, c_block_n=256)


@export("matmul_tma_persistent", "matmul_kernel_tma_persistent", "09-persistent-matmul.py",
        dict(MM9, FP8_OUTPUT=False, EPILOGUE_SUBTILE=True, NUM_SMS=H100_SMS, WARP_SPECIALIZE=False), num_warps=8,
        num_stages=3, what="persistent matmul on host-side TensorDescriptor arguments, split epilogue")
def _matmul_tma_persistent(size):
    return _matmul9(size, True, c_block_n=128)


# ---------------------------------------------------------------- 10 block-scaled matmul

@export("block_scaled_matmul", "block_scaled_matmul_kernel", "10-block-scaled-matmul.py",
        dict(M=8192, N=8192, K=8192, output_type=1, ELEM_PER_BYTE_A=1, ELEM_PER_BYTE_B=1, VEC_SIZE=32, BLOCK_M=128,
             BLOCK_N=256, BLOCK_K=128, rep_m=1, rep_n=2, rep_k=1, NUM_STAGES=4), num_warps=4, num_stages=4,
        what="mxfp8 tl.dot_scaled on host-side descriptors (Blackwell's path): import only")
def _block_scaled(size):
    M = N = K = 8192
    return case("8192^3 mxfp8", cdiv(M, 128) * cdiv(N, 256),
                dict(a_desc=Desc(zeros(M * K, "f8e4m3"), (M, K), (K, 1), (128, 128)),
                     a_scale_desc=Desc(zeros(M * K // 32, "u8"), (1, M // 128, K // 128, 2, 256),
                                       (M * K // 32, K // 128 * 512, 512, 256, 1), (1, 1, 1, 2, 256)),
                     b_desc=Desc(zeros(N * K, "f8e4m3"), (N, K), (K, 1), (256, 128)),
                     b_scale_desc=Desc(zeros(N * K // 32, "u8"), (1, N // 128, K // 128, 2, 256),
                                       (N * K // 32, K // 128 * 512, 512, 256, 1), (1, 2, 1, 2, 256)),
                     c_desc=Desc(zeros(M * N, "f16"), (M, N), (N, 1), (128, 256))), {})
