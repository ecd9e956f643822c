"""The corpus's exports of FlagGems (pip package flag-gems, version in load.VERSION), as FlagGems
launches its kernels on an H100 for the PyTorch operator named in each export: the kernel (its
own @triton.jit function, or for pointwise operators the kernel FlagGems' code generator writes
for the task's rank), the constexprs and num_warps its launcher computes (its heuristics, or a
configuration of its tuning list for autotuned kernels; make_fixtures.py checks both against
FlagGems itself), and the arguments its wrapper passes. Sizes: "test" (small, not multiples of
the blocks, for interp and cpu against NumPy) and "bench" (LLM-ish shapes: 4096 x 4096 bf16
activations, 32000-entry vocabularies, and so on). Integers that are multiples of 16 at the bench
size stay multiples of 16 at the test size: the fixture states what Triton's launcher finds at
the bench size."""

import math

import numpy as np

from corpus.common import (arr, attention_reference, bools, case, cdiv, close, Desc, EXACT, expect, full, H100_SMS,
                           integers, next_pow2, normal, out, philox, Registry, round_to, size_is_real, T, Tol,
                           uint_to_uniform_float, uniform)

REGISTRY = Registry("flaggems")
export = REGISTRY.export


def warps_for_tile(tile: int) -> int:
    """FlagGems' heuristics_for_num_warps (and softmax_heur_num_warps_inner) on NVIDIA."""
    return 4 if tile < 2048 else 8 if tile < 4096 else 16


# ---------------------------------------------------------------- pointwise (generated kernels)

# FlagGems' code generator (utils/pointwise_dynamic.py) on NVIDIA: block pointers, nd tiles of
# at most 256 elements (its max_tile_size of 512, halved by its all-complex check, which holds
# for operators whose inputs have no declared dtype), at most 65536 programs in a grid-stride
# loop, num_warps from the tile size. make_fixtures.py checks the 256 in the generated wrapper.
PW_MAX_TILE = 256
PW_MAX_CTAS = 65536


def pw_tiles(shape):
    """FlagGems' heuristics_for_tile_size(PW_MAX_TILE, *shape)."""
    tiles, budget = [0] * len(shape), PW_MAX_TILE
    for i in reversed(range(len(shape))):
        tiles[i] = min(budget, next_pow2(shape[i]))
        budget = max(1, budget // tiles[i])
    return tiles


def _strides(op_shape, task_shape):
    """The strides FlagGems passes for an operand of op_shape broadcast to task_shape."""
    op_shape = (1,) * (len(task_shape) - len(op_shape)) + tuple(op_shape)
    contiguous, s = [], 1
    for d in reversed(op_shape):
        contiguous.insert(0, s)
        s *= d
    return [0 if o == 1 and t != 1 else c for o, c, t in zip(op_shape, contiguous, task_shape)]


def _order(strides):
    return sorted(range(len(strides)), key=lambda i: abs(strides[i]))


def pointwise(name, fn, source, bench_shapes, test_shapes, dtypes, scalars, ref, tol, what, out_dtype=None,
              ctas_test=None):
    """An export of FlagGems' generated kernel for pointwise function `fn` of flag_gems/`source`.
    bench_shapes/test_shapes: the shape of each tensor operand (the task is their broadcast);
    dtypes: each tensor operand's element type; scalars: the non-tensor operands, by position
    in fn's parameters (index -> value); ref(values...) -> the result from the operands'
    values. Operands of one shape that is the task's are collapsed to rank 1, as FlagGems does
    for contiguous same-shape operands."""
    nin = len(bench_shapes) + len(scalars)
    out_dtype = out_dtype or dtypes[0]

    def task(shapes):
        task_shape = np.broadcast_shapes(*[tuple(s) for s in shapes])
        if all(tuple(s) == task_shape for s in shapes):
            return (int(np.prod(task_shape)),), [(int(np.prod(task_shape)),)] * len(shapes)
        return tuple(task_shape), [tuple(s) for s in shapes]

    bench_task, bench_ops = task(bench_shapes)
    rank = len(bench_task)
    tiles = pw_tiles(bench_task)
    num_tiles = math.prod(cdiv(s, t) for s, t in zip(bench_task, tiles))
    one_tile = cdiv(num_tiles, min(PW_MAX_CTAS, num_tiles)) == 1
    constexprs = {}
    for i, op in enumerate(bench_ops):
        for j, o in enumerate(_order(_strides(op, bench_task)) if rank > 1 else [0]):
            constexprs[f"in{i}_stride_order{j}"] = o
    for j, o in enumerate(_order(_strides(bench_task, bench_task)) if rank > 1 else [0]):
        constexprs[f"out0_stride_order{j}"] = o
    for j, t in enumerate(tiles):
        constexprs[f"tile_size{j}"] = t
    constexprs["one_tile_per_cta"] = one_tile
    kernel = f"{fn}_kernel_rank_{rank}"

    def build(size):
        shapes = T(size, test_shapes, bench_shapes)
        task_shape, ops = task(shapes)
        assert len(task_shape) == rank, f"{name}: the test shapes make a task of another rank"
        args, tensors, k, v = {}, [], 0, 0
        for pos in range(nin):
            if pos in scalars:
                args[f"val{v}"] = scalars[pos]
                v += 1
                continue
            a = normal(100 + 7 * k, int(np.prod(shapes[k])), 1.0, dtypes[k]) if dtypes[k] not in ("i1",) else \
                bools(100 + 7 * k, int(np.prod(shapes[k])), 0.5)
            args[f"in{k}_ptr"] = a
            tensors.append((a, shapes[k]))
            k += 1
        numel = int(np.prod(task_shape))
        o = out(numel, out_dtype)
        args["out0_ptr"] = o
        for i, op in enumerate(ops):
            for j, s in enumerate(_strides(op, task_shape)):
                args[f"in{i}_stride{j}"] = s
        for j, s in enumerate(_strides(task_shape, task_shape)):
            args[f"out0_stride{j}"] = s
        for j, s in enumerate(task_shape):
            args[f"s{j}"] = s
        n_tiles = math.prod(cdiv(s, t) for s, t in zip(task_shape, tiles))
        ctas = T(size, ctas_test, None) or min(PW_MAX_CTAS, n_tiles)
        args["num_tasks"] = numel
        args["tiles_per_cta"] = cdiv(n_tiles, ctas)

        def reference():
            vals = []
            k2 = 0
            for pos in range(nin):
                if pos in scalars:
                    vals.append(scalars[pos])
                else:
                    a, shp = tensors[k2]
                    vals.append(np.broadcast_to(a.values().reshape(shp), task_shape))
                    k2 += 1
            return {"out0_ptr": expect(o, ref(*vals))}

        label = " op ".join("x".join(map(str, s)) for s in shapes) + f" {dtypes[0]}"
        return case(label, ctas, args, {"out0_ptr": tol}, reference, check_ref_on_gpu=False)

    export(name, kernel, source, constexprs, num_warps=warps_for_tile(math.prod(tiles)), what=what)(build)


def _r(dtype):
    return lambda v: round_to(v, dtype)


BF = "bf16"
ROW = [(4096, 4096), (4096,)]  # an activation and a row vector (bias) broadcast over it

pointwise("add_bias", "add_func", "ops/add.py", ROW, [(16, 3008), (3008,)], [BF, BF], {2: 1},
          lambda x, y, a: x + y * a, close(0, 0, ulp=1), "add: x + bias * alpha, the bias broadcast over rows")
pointwise("mul", "mul_func", "runtime/backend/_nvidia/hopper/ops/mul.py", [(4096, 4096)] * 2, [(3008,)] * 2, [BF, BF],
          {}, lambda x, y: x * y, close(0, 0, ulp=1), "mul (FlagGems' Hopper override)")
pointwise("sub", "sub_func", "ops/sub.py", [(4096, 4096)] * 2, [(3008,)] * 2, ["f32", "f32"], {2: 2},
          lambda x, y, a: (x.astype(np.float32) - (y * a).astype(np.float32)).astype(np.float32), EXACT,
          "sub: x - y * alpha, f32")
pointwise("div_col", "true_div_func", "ops/div.py", [(4096, 4096), (4096, 1)], [(16, 3008), (16, 1)], ["f32", "f32"],
          {}, lambda x, y: (x.astype(np.float32) / y.astype(np.float32)).astype(np.float32), EXACT,
          "true_divide by a column broadcast over columns, f32")
pointwise("where", "where_inner", "ops/where.py", [(4096, 4096)] * 3, [(3008,)] * 3, ["i1", BF, BF], {},
          lambda c, x, y: np.where(c, x, y), EXACT, "where(cond, x, y)", out_dtype=BF)
pointwise("gelu", "gelu_none", "ops/gelu.py", [(4096, 4096)], [(3008,)], [BF], {},
          lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x * 0.7071067811)), close(1e-6, 0, ulp=2), "gelu (erf)")
pointwise("gelu_tanh", "gelu_tanh", "ops/gelu.py", [(4096, 4096)], [(3008,)], ["f32"], {},
          lambda x: 0.5 * x * (1 + np.tanh(x * 0.79788456 * (1 + 0.044715 * x * x))), close(1e-6, 1e-5),
          "gelu (tanh approximation, libdevice tanh and pow), f32")
pointwise("silu", "silu_forward", "ops/silu.py", [(8192, 8192)], [(3008,)], [BF], {},
          lambda x: x / (1 + np.exp(-x)), close(1e-6, 0, ulp=1), "silu; 2^26 elements: the grid-stride loop",
          ctas_test=5)
pointwise("relu", "relu_forward", "ops/relu.py", [(4096, 4096)], [(3008,)], ["f16"], {},
          lambda x: np.where(x > 0, x, 0), EXACT, "relu, f16")
pointwise("sigmoid", "sigmoid_forward", "ops/sigmoid.py", [(4096, 4096)], [(3008,)], [BF], {},
          lambda x: 1 / (1 + np.exp(-x)), close(1e-6, 0, ulp=1), "sigmoid through exp2")
pointwise("exp", "exp_func", "ops/exp.py", [(4096, 4096)], [(3008,)], ["f32"], {},
          np.exp, close(0, 4e-7), "exp, f32")
pointwise("tanh", "tanh_kernel", "ops/tanh.py", [(4096, 4096)], [(3008,)], ["f32"], {},
          np.tanh, close(1e-7, 4e-7), "tanh (libdevice), f32")
pointwise("abs", "abs_func", "ops/abs.py", [(4096, 4096)], [(3008,)], ["f16"], {}, np.abs, EXACT, "abs, f16")
pointwise("neg", "neg_func", "ops/neg.py", [(4096, 4096)], [(3008,)], [BF], {}, np.negative, EXACT, "neg")
pointwise("rsqrt", "rsqrt_func", "ops/rsqrt.py", [(4096, 4096)], [(3008,)], ["f32"], {},
          lambda x: 1 / np.sqrt(x), close(0, 3e-7), "rsqrt (1 / sqrt), f32; NaN for negatives")
pointwise("clamp", "clamp_func", "ops/clamp.py", [(4096, 4096)], [(3008,)], [BF], {1: -0.5, 2: 0.75},
          lambda x, lo, hi: np.minimum(hi, np.maximum(lo, x)), EXACT, "clamp(x, -0.5, 0.75)")
pointwise("masked_fill", "masked_fill_kernel", "ops/masked_fill.py", [(16, 2048, 2048), (2048, 2048)],
          [(16, 48, 176), (48, 176)], ["f32", "i1"], {2: -1e4},
          lambda x, m, v: np.where(m, np.float32(v), x), EXACT,
          "masked_fill of attention scores with a mask broadcast over the batch (rank 3)")


# ---------------------------------------------------------------- reductions along rows and columns

def _rows(size, test, bench):
    """(rows, cols) of a row-major matrix at the size."""
    return T(size, test, bench)


def softmax_heur_tile_k(M, K, sms=H100_SMS):
    """FlagGems' softmax_heur_tile_k (the non-inner reductions' tile along K)."""
    tile_k, upper = 1, min(K, 8192)
    while tile_k <= upper:
        if M * cdiv(K, tile_k) / sms > 1 and tile_k * 2 <= upper:
            tile_k *= 2
        else:
            break
    return tile_k


def _inner(name, kernel, source, dtype, test, bench, ref, tol, what, out_dtype=None):
    """A reduction (or softmax) of each row, one row per program, FlagGems' softmax_inner
    heuristics: TILE_N = next_power_of_2(N) up to 32K, one tile per program, num_warps by tile."""
    N = bench[1]
    tile = next_pow2(N) if N <= 32 * 1024 else 4096

    def build(size):
        M, n = T(size, test, bench)
        x = normal(200, M * n, 1.5, dtype)
        reduce_rows = out_dtype is not None
        o = out(M if reduce_rows else M * n, out_dtype or dtype)

        def reference():
            return {"output_ptr": expect(o, ref(x.values().reshape(M, n)))}

        return case(f"{M}x{n} {dtype}", (M, 1, 1), dict(output_ptr=o, input_ptr=x, M=M, N=n),
                    {"output_ptr": tol}, reference)

    export(name, kernel, source, dict(TILE_N=tile, ONE_TILE_PER_CTA=tile >= N), num_warps=warps_for_tile(tile),
           what=what)(build)


def _softmax_ref(v):
    e = np.exp(v - v.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


_inner("softmax", "softmax_kernel_inner", "ops/softmax.py", BF, (16, 3008), (4096, 4096), _softmax_ref,
       close(1e-6, 0, ulp=1), "softmax over the last dim, a 4096 tile on 16 warps")
_inner("softmax_vocab", "softmax_kernel_inner", "ops/softmax.py", "f32", (16, 31008), (4096, 32000), _softmax_ref,
       close(1e-9, 1e-5), "softmax over a 32000-entry vocabulary: one 32768 tile per row")
_inner("sum_rows", "sum_dim_kernel_inner", "ops/sum.py", BF, (16, 3008), (4096, 4096),
       lambda v: v.sum(axis=1), close(1e-3, 0, ulp=1), "sum over the last dim", out_dtype=BF)
_inner("mean_rows", "mean_dim_kernel_inner", "ops/mean.py", "f32", (16, 3008), (4096, 4096),
       lambda v: v.mean(axis=1), close(1e-6, 1e-5), "mean over the last dim", out_dtype="f32")


def _non_inner(name, kernel, source, heuristic, test, bench, ref, tol, what, out_shape_fn, dtype="f32"):
    """A reduction (or softmax) along the middle dim of M x N x K, FlagGems' softmax_non_inner
    (or mean_non_inner) heuristics."""
    Mb, Nb, Kb = bench
    tile_k = softmax_heur_tile_k(Mb, Kb)
    tile_n = cdiv(8192, tile_k)

    def build(size):
        M, N, K = T(size, test, bench)
        x = normal(210, M * N * K, 1.5, dtype)
        o = out(out_shape_fn(M, N, K), dtype)

        def reference():
            return {"output_ptr": expect(o, ref(x.values().reshape(M, N, K)))}

        return case(f"{M}x{N}x{K} {dtype}, reduce dim 1", (M, cdiv(K, tile_k), 1),
                    dict(output_ptr=o, input_ptr=x, M=M, N=N, K=K), {"output_ptr": tol}, reference)

    export(name, kernel, source, dict(TILE_K=tile_k, TILE_N=tile_n, ONE_TILE_PER_CTA=tile_n >= Nb),
           num_warps=4 if tile_n * tile_k < 2048 else 8 if tile_n * tile_k < 4096 else 16, what=what)(build)


_non_inner("softmax_dim0", "softmax_kernel_non_inner", "ops/softmax.py", "softmax_non_inner", (1, 608, 208),
           (1, 4096, 4096),
           lambda v: np.exp(v - v.max(axis=1, keepdims=True)) / np.exp(v - v.max(axis=1, keepdims=True)).sum(
               axis=1, keepdims=True), close(1e-9, 1e-5), "softmax over dim 0 of a matrix (columns)",
           lambda M, N, K: M * N * K)
_non_inner("sum_dim0", "sum_dim_kernel_non_inner", "ops/sum.py", "softmax_non_inner", (1, 608, 208), (1, 4096, 4096),
           lambda v: v.sum(axis=1), close(1e-4, 1e-5), "sum over dim 0 of a matrix", lambda M, N, K: M * K)


@export("log_softmax", "log_softmax_kernel", "ops/log_softmax.py", dict(BLOCK_M=8, BLOCK_N=256), num_warps=8,
        what="log_softmax over a vocabulary, 8 rows x 256 columns a step")
def _log_softmax(size):
    M, N = T(size, (16, 3008), (4096, 32000))
    x = normal(220, M * N, 2.0, BF)
    o = out(M * N, BF)

    def reference():
        v = x.values().reshape(M, N)
        m = v.max(axis=1, keepdims=True)
        return {"output_ptr": expect(o, v - m - np.log(np.exp(v - m).sum(axis=1, keepdims=True)))}

    return case(f"{M}x{N} bf16", (cdiv(M, 8), 1), dict(output_ptr=o, input_ptr=x, M=M, N=N, K=1),
                {"output_ptr": close(2e-3, 0, ulp=1)}, reference)


@export("amax_rows", "amax_kernel", "ops/amax.py", dict(BLOCK_M=4, BLOCK_N=1024), num_stages=2,
        what="amax over the last dim")
def _amax(size):
    M, N = T(size, (16, 3008), (4096, 4096))
    x = normal(230, M * N, 1.0, BF)
    o = out(M, BF)
    return case(f"{M}x{N} bf16", cdiv(M, 4), dict(inp=x, out=o, M=M, N=N), {"out": EXACT},
                lambda: {"out": expect(o, x.values().reshape(M, N).max(axis=1))})


@export("argmax_vocab", "argmax_kernel_inner", "ops/argmax.py", dict(TILE_N=32768, ONE_TILE_PER_CTA=True),
        num_warps=16, what="argmax over a 32000-entry vocabulary (greedy decoding)")
def _argmax(size):
    M, N = T(size, (16, 31008), (4096, 32000))
    x = normal(240, M * N, 1.0, BF)
    o = out(M, "i64")
    return case(f"{M}x{N} bf16", (M, 1, 1), dict(inp=x, out_index=o, M=M, N=N), {"out_index": EXACT},
                lambda: {"out_index": expect(o, np.argmax(x.values().reshape(M, N), axis=1))})


@export("var_mean", "var_mean_welford_kernel", "ops/var_mean.py", dict(BLOCK_M=1, BLOCK_N=2048), num_warps=8,
        num_stages=2,
        what="var_mean over the last dim (Welford, a tl.reduce of three values)")
def _var_mean(size):
    M, N = T(size, (16, 5008), (4096, 4096))
    x = normal(250, M * N, 2.0, "f32", mean=1.0)
    var, mean = out(M), out(M)

    def reference():
        v = x.values().reshape(M, N)
        return {"Var": expect(var, v.var(axis=1, ddof=1)), "Mean": expect(mean, v.mean(axis=1))}

    return case(f"{M}x{N} f32", cdiv(M, 1), dict(X=x, Var=var, Mean=mean, M=M, N=N, correction=1),
                {"Var": close(1e-5, 1e-5), "Mean": close(1e-6, 1e-5)}, reference)


# ---------------------------------------------------------------- norms

def _ln_ref(x, w, b, M, N, eps):
    v = x.values().reshape(M, N)
    mean = v.mean(axis=1)
    rstd = 1 / np.sqrt(((v - mean[:, None]) ** 2).mean(axis=1) + eps)
    return v, mean, rstd, (v - mean[:, None]) * rstd[:, None] * w.values() + b.values()


def _layer_norm(size, test, bench, what_kernel):
    M, N = T(size, test, bench)
    eps = 1e-5
    x = normal(300, M * N, 1.0, BF, mean=0.3)
    w, b = uniform(301, N, 0.5, 1.5, BF), uniform(302, N, -0.5, 0.5, BF)
    y, mean, rstd = out(M * N, BF), out(M, BF), out(M, BF)

    def reference():
        _, m, r, want = _ln_ref(x, w, b, M, N, eps)
        return {"out_ptr": expect(y, want), "out_mean_ptr": expect(mean, m), "out_rstd_ptr": expect(rstd, r)}

    return case(f"{M}x{N} bf16", (M, 1, 1),
                dict(in_ptr=x, out_ptr=y, weight_ptr=w, bias_ptr=b, out_mean_ptr=mean, out_rstd_ptr=rstd, M=M, N=N,
                     eps=eps),
                {"out_ptr": close(1e-2, 0, ulp=2), "out_mean_ptr": close(1e-3, 0, ulp=1),
                 "out_rstd_ptr": close(1e-3, 0, ulp=1)}, reference)


@export("layer_norm", "layer_norm_persistent_kernel", "ops/layernorm.py", dict(TILE_N=4096), num_warps=8, num_stages=2,
        what="layer norm, the row in one 4096 tile (mean and rstd in bf16, as FlagGems stores them)")
def _layer_norm_persistent(size):
    return _layer_norm(size, (16, 3008), (4096, 4096), "persistent")


@export("layer_norm_loop", "layer_norm_loop_kernel", "ops/layernorm.py", dict(TILE_N=4096), num_warps=8, num_stages=2,
        what="layer norm of 8192 wide rows: a Welford loop over 4096 tiles, the last masked")
def _layer_norm_loop(size):
    return _layer_norm(size, (16, 6000), (4096, 8192), "loop")


def _ln_bwd_inputs(M, N, eps=1e-5):
    x = normal(310, M * N, 1.0, BF, mean=0.3)
    w = uniform(311, N, 0.5, 1.5, BF)
    dy = normal(312, M * N, 1.0, BF)
    mean, rstd = full(M, 0, BF), full(M, 0, BF)
    if size_is_real():
        v = x.values().reshape(M, N)
        m = v.mean(axis=1)
        mean.data[:] = arr(m, BF).data
        rstd.data[:] = arr(1 / np.sqrt(((v - m[:, None]) ** 2).mean(axis=1) + eps), BF).data
    return x, w, dy, mean, rstd


@export("layer_norm_backward", "layer_norm_backward_kernel", "ops/layernorm.py",
        dict(BLOCK_ROW_SIZE=4, BLOCK_COL_SIZE=2048), num_warps=8, num_stages=2,
        what="layer norm backward: dx, 4 rows a program")
def _layer_norm_bwd(size):
    M, N = T(size, (16, 3008), (4096, 4096))
    x, w, dy, mean, rstd = _ln_bwd_inputs(M, N)
    dx = out(M * N, BF)

    def reference():
        v = x.values().reshape(M, N)
        xhat = (v - mean.values()[:, None]) * rstd.values()[:, None]
        dxhat = dy.values().reshape(M, N) * w.values()
        c2 = dxhat.sum(axis=1, keepdims=True)
        c3 = (dxhat * xhat).sum(axis=1, keepdims=True)
        return {"dX": expect(dx, rstd.values()[:, None] * (dxhat - (c2 + xhat * c3) / N))}

    return case(f"{M}x{N} bf16", cdiv(M, 4), dict(dY=dy, X=x, W=w, Mean=mean, Rstd=rstd, dX=dx, M=M, N=N),
                {"dX": close(2e-2, 0, ulp=2)}, reference)


@export("layer_norm_weight_bias_backward", "weight_bias_backward_kernel", "ops/layernorm.py",
        dict(BLOCK_ROW_SIZE=128, BLOCK_COL_SIZE=8), num_warps=4, num_stages=2,
        what="layer norm backward: dw and db, columns summed over all rows")
def _layer_norm_wb_bwd(size):
    M, N = T(size, (208, 3008), (4096, 4096))
    x, _, dy, mean, rstd = _ln_bwd_inputs(M, N)
    dw, db = out(N, BF), out(N, BF)

    def reference():
        v = x.values().reshape(M, N)
        xhat = (v - mean.values()[:, None]) * rstd.values()[:, None]
        d = dy.values().reshape(M, N)
        return {"dW": expect(dw, (d * xhat).sum(axis=0)), "dB": expect(db, d.sum(axis=0))}

    return case(f"{M}x{N} bf16", cdiv(N, 8), dict(dY=dy, X=x, Mean=mean, Rstd=rstd, dW=dw, dB=db, M=M, N=N),
                {"dW": close(2e-2, 0, ulp=2), "dB": close(2e-2, 0, ulp=2)}, reference)


@export("rms_norm", "rms_norm_kernel", "ops/rms_norm.py", dict(BLOCK_SIZE=4096), num_warps=4,
        what="RMS norm, the row in one 4096 block on FlagGems' default 4 warps")
def _rms_norm(size):
    M, N = T(size, (7, 3008), (4096, 4096))
    eps = 1e-6
    x = normal(320, M * N, 1.0, BF)
    w = uniform(321, N, 0.5, 1.5, BF)
    y, inv = out(M * N, BF), out(M, "f32")

    def reference():
        v = x.values().reshape(M, N)
        r = 1 / np.sqrt((v * v).mean(axis=1) + eps)
        return {"out_ptr": expect(y, v * r[:, None] * w.values()), "INV_RMS": expect(inv, r)}

    return case(f"{M}x{N} bf16", (M,), dict(out_ptr=y, INV_RMS=inv, in_ptr=x, w_ptr=w, y_stride_r=N, y_stride_c=1,
                                            x_stride_r=N, x_stride_c=1, N=N, eps=eps),
                {"out_ptr": close(1e-2, 0, ulp=2), "INV_RMS": close(1e-6, 1e-5)}, reference)


@export("group_norm", "group_norm_kernel", "ops/groupnorm.py", dict(BLOCK_GROUP_SIZE=16, BLOCK_HW_SIZE=4096),
        num_warps=4, what="group norm as in a diffusion U-Net: a 16 x 4096 block (65536 elements) on 4 warps")
def _group_norm(size):
    Nb, C, HW, G = T(size, (1, 256, 3008, 16), (16, 512, 4096, 32))
    gs = C // G
    eps = 1e-5
    x = normal(330, Nb * C * HW, 1.0, BF, mean=0.2)
    w, b = uniform(331, C, 0.5, 1.5, BF), uniform(332, C, -0.5, 0.5, BF)
    y, mean, rstd = out(Nb * C * HW, BF), out(Nb * G, BF), out(Nb * G, BF)

    def reference():
        v = x.values().reshape(Nb, G, gs * HW)
        m = v.mean(axis=2)
        r = 1 / np.sqrt(((v - m[..., None]) ** 2).mean(axis=2) + eps)
        xh = ((v - m[..., None]) * r[..., None]).reshape(Nb, C, HW)
        return {"Y": expect(y, xh * w.values()[None, :, None] + b.values()[None, :, None]),
                "Mean": expect(mean, m), "Rstd": expect(rstd, r)}

    return case(f"N{Nb} C{C} HW{HW} G{G} bf16", (Nb * G,),
                dict(X=x, Y=y, W=w, B=b, Mean=mean, Rstd=rstd, group_size=gs, C=C, HW=HW, num_groups=G, eps=eps),
                {"Y": close(1e-2, 0, ulp=2), "Mean": close(1e-3, 0, ulp=1), "Rstd": close(1e-3, 0, ulp=1)}, reference)


# ---------------------------------------------------------------- cross entropy

@export("cross_entropy", "celoss_indices_kernel", "fused/cross_entropy_loss.py", dict(BLOCK_C=1024, BLOCK_D=1),
        num_stages=2,
        what="cross entropy with class indices over a 32000-entry vocabulary (ignore_index -100)")
def _cross_entropy(size):
    N, C = T(size, (16, 3008), (4096, 32000))
    inp = normal(340, N * C, 2.0, BF)
    tgt = integers(341, N, 0, C, "i64")
    if size == "test":
        tgt.data[3] = -100  # ignored: loss 0, weight 0
    o, wt = out(N), out(N)

    def reference():
        v = inp.values().reshape(N, C)
        m = v.max(axis=1)
        lse = m + np.log(np.exp(v - m[:, None]).sum(axis=1))
        t = tgt.data
        keep = t != -100
        picked = v[np.arange(N), np.where(keep, t, 0)]
        return {"out_ptr": expect(o, np.where(keep, lse - picked, 0)), "w_tgt_ptr": expect(wt, keep.astype(float))}

    return case(f"{N}x{C} bf16", (1, N), dict(inp_ptr=inp, tgt_ptr=tgt, w_ptr=None, out_ptr=o, w_tgt_ptr=wt,
                                              ignore_index=-100, C=C, D=1),
                {"out_ptr": close(1e-4, 1e-5), "w_tgt_ptr": EXACT}, reference)


@export("cross_entropy_mean", "sum_and_scale", "fused/cross_entropy_loss.py", dict(scalebyw=True, BLOCK_N=128),
        what="cross entropy's mean: the losses and the target weights summed, then divided")
def _ce_mean(size):
    N = T(size, 3008, 4096)
    loss = uniform(350, N, 0, 10, "f32")
    w = full(N, 1.0, "f32")
    if size == "test":
        w.data[::7] = 0.0
    o, wsum = out(1, BF), out(1, "f32")

    def reference():
        return {"out_ptr": expect(o, [loss.values().sum() / w.values().sum()]),
                "mean_num": expect(wsum, [w.values().sum()])}

    return case(f"n={N} f32", (1,), dict(inp_ptr=loss, out_ptr=o, N=N, scale=w, mean_num=wsum),
                {"out_ptr": close(0, 0, ulp=1), "mean_num": close(0, 1e-6)}, reference)


# ---------------------------------------------------------------- scans

@export("cumsum", "reduce_then_scan_root_scan_kernel_row", "ops/cumsum.py", dict(TILE_SIZE=4096), num_warps=8,
        what="cumsum along rows of 4096: one tile, tl.cumsum")
def _cumsum(size):
    M, N = T(size, (6, 3008), (4096, 4096))
    x = uniform(360, M * N, -1, 1, "f32")
    o = out(M * N)
    return case(f"{M}x{N} f32", (M, 1, 1), dict(in_ptr=x, out_ptr=o, N=N), {"out_ptr": close(1e-4, 1e-5)},
                lambda: {"out_ptr": expect(o, np.cumsum(x.values().reshape(M, N), axis=1))})


@export("cumsum_long_rows", "reduce_then_scan_block_scan_kernel_row", "ops/cumsum.py", dict(TILE_SIZE=4096),
        num_warps=8, what="cumsum along rows of 262144: the block scan of the reduce-then-scan path")
def _cumsum_long(size):
    M, N = T(size, (2, 64000), (16, 262144))
    tiles = cdiv(N, 4096)
    ctas = min(tiles, H100_SMS * 4)
    per = cdiv(tiles, ctas)
    x = uniform(361, M * N, -1, 1, "f32")
    prefix = full(M * ctas, 0, "f32")
    if size_is_real():
        v = x.values().reshape(M, N)
        sums = np.stack([v[:, c * per * 4096:(c + 1) * per * 4096].sum(axis=1) for c in range(ctas)], axis=1)
        prefix.data[:] = np.cumsum(sums, axis=1).ravel().astype(np.float32)
    o = out(M * N)
    return case(f"{M}x{N} f32", (M, ctas, 1), dict(in_ptr=x, previous_sum_ptr=prefix, out_ptr=o, N=N,
                                                   num_tiles_n=ctas, tiles_per_cta=per),
                {"out_ptr": close(1e-3, 1e-5)},
                lambda: {"out_ptr": expect(o, np.cumsum(x.values().reshape(M, N), axis=1))})


@export("cummax", "scan_part_max_kernel", "ops/cummax.py",
        dict(BLOCK_SIZE=1024, NEED_PARTIAL=True, USE_OUT_INDICES=False), what="cummax of a vector: the block scans "
        "(values and indices) and each block's max")
def _cummax(size):
    n = T(size, 3008, 1 << 24)
    parts = cdiv(n, 1024)
    x = integers(370, n, -1000, 1000, "i32")
    x = arr(x.data.astype(np.float32) / 8, "f32")  # ties, so the index rule shows
    o, oi = out(n), out(n, "i64")
    pm, pmi = out(parts), out(parts, "i64")

    def reference():
        v = x.values()
        blocks = [v[i * 1024:(i + 1) * 1024] for i in range(parts)]
        vals, idx = [], []
        for bi, b in enumerate(blocks):
            run = np.maximum.accumulate(b)
            # the index of the last occurrence of the running max (ties go right)
            last = np.zeros(len(b), np.int64)
            best = 0
            for i in range(len(b)):
                if b[i] >= b[best]:
                    best = i
                last[i] = best
            vals.append(run)
            idx.append(last + bi * 1024)
        bmax = np.array([b.max() for b in blocks])
        bidx = np.array([bi * 1024 + len(b) - 1 - np.argmax(b[::-1]) for bi, b in enumerate(blocks)])
        return {"out": expect(o, np.concatenate(vals)), "out_indices": expect(oi, np.concatenate(idx)),
                "partial_max": expect(pm, bmax), "partial_max_indices": expect(pmi, bidx)}

    return case(f"n={n} f32", (parts,), dict(inp=x, out=o, in_indices=oi, out_indices=oi, partial_max=pm,
                                             partial_max_indices=pmi, n_elements=n),
                {"out": EXACT, "out_indices": EXACT, "partial_max": EXACT, "partial_max_indices": EXACT},
                reference)


# ---------------------------------------------------------------- sort and top-k

def _order_key(values_f32: np.ndarray, descending: bool) -> np.ndarray:
    """FlagGems' convert_to_uint_preverse_order for float32."""
    u = values_f32.astype(np.float32).view(np.uint32)
    mask = np.where(u >> np.uint32(31) == 1, np.uint32(0xFFFFFFFF), np.uint32(0x80000000))
    return (u ^ (~mask if descending else mask)).astype(np.uint32)


SORT_BITS, SORT_PASSES = 4, 8  # radix_sort: 4 bits a pass over f32 keys


def _digit_histogram(x, m, n):
    """Per row and pass, how many keys (descending order) have each 4-bit digit."""
    key = _order_key(x.values().reshape(m, n), True)
    hist = np.zeros((m, SORT_PASSES, 16), np.int64)
    for p in range(SORT_PASSES):
        digit = (key >> np.uint32(p * SORT_BITS)) & np.uint32(15)
        for r in range(m):
            hist[r, p] = np.bincount(digit[r], minlength=16)
    return hist


@export("sort_histogram", "compute_global_hist_kernel", "ops/sort.py",
        dict(TILE_N=1024, TILE_R=16, num_bits_per_pass=SORT_BITS, descending=True),
        what="sort (radix): every pass's digit histogram per row, counted with atomic_add")
def _sort_hist(size):
    m, n = T(size, (2, 5000), (200, 50257))
    x = normal(400, m * n, 1.0, "f32")
    hist = full(m * SORT_PASSES * 16, 0, "i32")
    grid_n = cdiv(n, 8 * 1024)

    def reference():
        return {"out_ptr": _digit_histogram(x, m, n).ravel()}

    return case(f"{m}x{n} f32 descending", (m * grid_n, 1, 1),
                dict(arr_ptr=x, out_ptr=hist, num_passes=SORT_PASSES, m=m, n=n, tiles_n_per_cta=8),
                {"out_ptr": EXACT}, reference)


@export("sort_sweep", "sweep", "ops/sort.py", dict(TILE_N=2048, TILE_R=8, k_bits=SORT_BITS, descending=True),
        what="sort / argsort (radix): one pass scattering keys and indices by digit, decoupled look-back "
             "between programs through a status array")
def _sort_sweep(size):
    m, n = T(size, (2, 5000), (200, 50257))
    x = normal(401, m * n, 1.0, "f32")
    idx = full(m * n, 0, "i64")
    grid_n = cdiv(n, 2048)
    excl = full(m * SORT_PASSES * 16, 0, "u32")
    if size_is_real():
        idx.data[:] = np.tile(np.arange(n), m)
        hist = _digit_histogram(x, m, n)
        excl.data[:] = (np.cumsum(hist, axis=2) - hist).ravel().astype(np.uint32)
    xo, io = out(m * n), out(m * n, "i64")
    status = full(m * 16 * grid_n, 0, "u32")

    def reference():
        v = x.values().reshape(m, n)
        digit = _order_key(v, True) & np.uint32(15)  # pass 0
        order = np.argsort(digit, axis=1, kind="stable")
        return {"out_ptr": expect(xo, np.take_along_axis(v, order, axis=1)), "associate_out_ptr": expect(io, order)}

    return case(f"{m}x{n} f32 descending, pass 0", (m * grid_n, 2),
                dict(arr_ptr=x, associate_arr_ptr=idx, out_ptr=xo, associate_out_ptr=io, excumsum_bins_ptr=excl,
                     status_ptr=status, n_passes=SORT_PASSES, pass_id=0, bit_offset=0, m=m, N=n, OUT_N=grid_n),
                {"out_ptr": EXACT, "associate_out_ptr": EXACT, "status_ptr": Tol("skip")}, reference)


def _distinct_bf16(seed, rows, n):
    """rows x n distinct positive bf16 values per row (distinct bit patterns): top-k has no ties."""
    from corpus.common import Arr
    from corpus import common
    if common.LAZY:
        return full(rows * n, 0, BF)
    g = np.random.default_rng(seed)
    data = np.concatenate([g.permutation(np.arange(0x0100, 0x0100 + n, dtype=np.uint16)) for _ in range(rows)])
    return Arr(data, BF)


TOPK_K = 8


@export("topk_stage1", "topk_stage1_kernel", "ops/topk.py", dict(N=32000, CHUNK_SIZE=1024, DESCENDING=True),
        what="top-k over a vocabulary, stage 1: each 1024 chunk's k largest by repeated max / argmax")
def _topk1(size):
    B = T(size, 2, 4096)
    N, chunks = 32000, cdiv(32000, 1024)
    x = _distinct_bf16(410, B, N)
    y, yi = out(B * chunks * TOPK_K, BF), out(B * chunks * TOPK_K, "i64")

    def reference():
        v = x.values().reshape(B, N)
        vals, idx = [], []
        for r in range(B):
            for c in range(chunks):
                seg = v[r, c * 1024:(c + 1) * 1024]
                top = np.argsort(-seg, kind="stable")[:TOPK_K]
                vals.append(seg[top])
                idx.append(top + c * 1024)
        return {"y_ptr": expect(y, np.concatenate(vals)), "index_ptr": expect(yi, np.concatenate(idx))}

    return case(f"{B}x{N} bf16, k={TOPK_K}", (B, chunks), dict(y_ptr=y, index_ptr=yi, x_ptr=x, k=TOPK_K),
                {"y_ptr": EXACT, "index_ptr": EXACT}, reference)


@export("topk_stage2", "topk_stage2_kernel", "ops/topk.py",
        dict(sort_dim=1, k=TOPK_K, N=32 * TOPK_K, BLOCK_SIZE=256, DESCENDING=True),
        what="top-k stage 2: the chunks' candidates sorted by a bitonic argsort")
def _topk2(size):
    B, n = T(size, 3, 4096), 32 * TOPK_K
    cx = _distinct_bf16(420, B, n)
    ci = integers(421, B * n, 0, 32000, "i64")
    y, yi = out(B * TOPK_K, BF), out(B * TOPK_K, "i64")

    def reference():
        v = cx.values().reshape(B, n)
        order = np.argsort(-v, axis=1, kind="stable")[:, :TOPK_K]
        return {"y_ptr": expect(y, np.take_along_axis(v, order, axis=1)),
                "index_ptr": expect(yi, np.take_along_axis(ci.data.reshape(B, n), order, axis=1))}

    return case(f"{B} rows of {n} candidates bf16", (B,), dict(y_ptr=y, index_ptr=yi, chunk_x=cx, chunk_index=ci),
                {"y_ptr": EXACT, "index_ptr": EXACT}, reference)


# ---------------------------------------------------------------- gather, scatter, index_select, embedding

@export("gather", "_gather_flaggems_jit_function", "ops/gather.py#rank2", dict(BLOCK_SIZE_N=512),
        what="gather(logprobs, 1, ids): 8 entries of each 32000-entry row (FlagGems' generated rank-2 kernel)")
def _gather(size):
    M, V, k = T(size, (16, 320, 8), (4096, 32000, 8))
    inp = normal(430, M * V, 1.0, "f32")
    index = integers(431, M * k, 0, V, "i64")
    o = out(M * k)

    def reference():
        return {"out": expect(o, np.take_along_axis(inp.values().reshape(M, V), index.data.reshape(M, k), axis=1))}

    N = M * k
    return case(f"{M}x{V} f32, {k} ids a row", (cdiv(N, 512),),
                dict(inp=inp, index=index, out=o, inp_shape0=M, inp_shape1=k, index_shape0=M, index_shape1=k,
                     out_shape0=M, out_shape1=k, inp_stride0=V, inp_stride1=0, index_stride0=k, index_stride1=1,
                     out_stride0=k, out_stride1=1, dim=1, dim_stride=1, N=N),
                {"out": EXACT}, reference)


def _scatter(size, add):
    # scatter(inp, 0, index, src) on rows: each column's index is a permutation (no two writes to
    # one place) for the plain scatter; scatter_add sums small integers (exact in any order).
    R, C, S = T(size, (40, 48, 24), (8192, 1024, 4096))
    inp = integers(440, R * C, -8, 8, "i32")
    inp = arr(inp.data.astype(np.float32), "f32")
    src = arr(integers(441, S * C, -8, 8, "i32").data.astype(np.float32), "f32")
    index = full(S * C, 0, "i64")
    if size_is_real():
        g = np.random.default_rng(442)
        cols = [g.permutation(R)[:S] if not add else g.integers(0, R, S) for _ in range(C)]
        index.data[:] = np.stack(cols, axis=1).ravel()
    o = inp.copy()

    def reference():
        want = inp.values().reshape(R, C).copy()
        ix = index.data.reshape(S, C)
        sv = src.values().reshape(S, C)
        for j in range(C):
            if add:
                np.add.at(want[:, j], ix[:, j], sv[:, j])
            else:
                want[ix[:, j], j] = sv[:, j]
        return {"out": want.ravel()}

    N = S * C
    return case(f"{R}x{C} f32 <- {S}x{C}" + (" (add)" if add else ""), (cdiv(N, 128 * 4),),
                dict(src_strided=src, index=index, inp=inp, out=o, inp_stride_0=0, inp_stride_1=1, index_stride_0=C,
                     index_stride_1=1, src_stride_0=C, src_stride_1=1, shape_0=S, shape_1=C, inp_size_dim=R,
                     stride_dim=C, N=N),
                {"out": EXACT}, reference)


@export("scatter", "_scatter_jit_function", "ops/scatter.py#rank2",
        dict(IS_ADD=False, IS_MUL=False, BLOCK=128, LOOP=4, INT32_OFFSET=True),
        what="scatter(inp, 0, index, src) (FlagGems' generated rank-2 kernel)")
def _scatter_plain(size):
    return _scatter(size, False)


@export("scatter_add", "_scatter_jit_function", "ops/scatter.py#rank2",
        dict(IS_ADD=True, IS_MUL=False, BLOCK=128, LOOP=4, INT32_OFFSET=True),
        what="scatter_add: the same with atomic_add (relaxed)")
def _scatter_add(size):
    return _scatter(size, True)


@export("index_select", "index_select_kernel", "ops/index_select.py", dict(BLOCK_M=1, BLOCK_N=256),
        what="index_select of 1024 columns of each row")
def _index_select(size):
    M, N, L = T(size, (16, 208, 48), (4096, 4096, 1024))
    inp = normal(450, M * N, 1.0, BF)
    index = integers(451, L, 0, N, "i64")
    o = out(M * L, BF)
    return case(f"{M}x{N} bf16, {L} indices", (cdiv(M, 1), cdiv(L, 256)),
                dict(inp=inp, out=o, M=M, N=N, index=index, index_len=L), {"out": EXACT},
                lambda: {"out": expect(o, inp.values().reshape(M, N)[:, index.data])})


@export("embedding", "embedding_kernel", "ops/embedding.py", dict(N=4096, BLOCK_SIZE=4096),
        what="embedding lookup: a 4096-wide row per token")
def _embedding(size):
    V, T_ = T(size, (100, 7), (32000, 16384))
    w = normal(460, V * 4096, 1.0, BF)
    ids = integers(461, T_, 0, V, "i64")
    o = out(T_ * 4096, BF)
    return case(f"{T_} tokens of a {V}x4096 bf16 table", (T_,), dict(out_ptr=o, in_ptr=ids, weight_ptr=w),
                {"out_ptr": EXACT}, lambda: {"out_ptr": expect(o, w.values().reshape(V, 4096)[ids.data])})


# ---------------------------------------------------------------- dropout

@export("dropout", "dropout_forward_kernel", "ops/dropout.py", dict(BLOCK=1024), num_warps=16,
        what="dropout: Philox (tl.philox, four outputs per counter), 4 x 1024 elements a program, the mask out")
def _dropout(size):
    n, p, seed, offset = T(size, 9008, 1 << 24), 0.1, 1234, 4096
    x = normal(470, n, 1.0, BF)
    y, mask = out(n, BF), out(n, "i1", fill=False)
    programs = cdiv(n, 4096)

    def reference():
        i4 = (np.arange(programs * 1024) + (offset & 0xFFFFFFFF)).astype(np.uint64)
        rs = [uint_to_uniform_float(r) for r in philox(seed, i4, offset >> 32, 0, 0)]
        keep = np.zeros(programs * 4096, bool)
        for pid in range(programs):
            for u in range(4):
                keep[pid * 4096 + u * 1024:pid * 4096 + (u + 1) * 1024] = rs[u][pid * 1024:(pid + 1) * 1024] > \
                    np.float32(p)
        keep = keep[:n]
        scale = np.float32(1) / (np.float32(1) - np.float32(p))
        return {"Y": expect(y, x.values().astype(np.float32) * scale * keep), "dropout_mask": expect(mask, keep)}

    return case(f"n={n} bf16, p={p}", (programs,), dict(X=x, Y=y, dropout_mask=mask, N=n, p=p, philox_seed=seed,
                                                        philox_offset=offset),
                {"Y": close(0, 0, ulp=1), "dropout_mask": EXACT}, reference)


# ---------------------------------------------------------------- matmul

def _mm_case(size, dtype, extra_args=None):
    M, N, K = T(size, (144, 272, 80), (4096, 4096, 4096))
    a, b = uniform(480, M * K, -1, 1, dtype), uniform(481, K * N, -1, 1, dtype)
    c = out(M * N, dtype)
    return M, N, K, a, b, c


MM_CFG = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8)  # FlagGems' mm list (NVIDIA and Hopper)


def _mm(size, hopper=False):
    M, N, K, a, b, c = _mm_case(size, BF)
    return case(f"{M}x{N}x{K} bf16", (cdiv(M, 128) * cdiv(N, 256),),
                dict(A=a, B=b, C=c, M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=N, stride_bn=1, stride_cm=N,
                     stride_cn=1),
                {"C": close(1e-2, 0, ulp=1)},
                T(size, lambda: {"C": expect(c, a.values().reshape(M, K) @ b.values().reshape(K, N))}, None))


@export("mm", "mm_kernel_general", "ops/mm.py", MM_CFG, num_warps=8, num_stages=3,
        what="mm: grouped order, % M / % N wraps, an unmasked K loop and a masked last step")
def _mm_general(size):
    return _mm(size)


@export("mm_hopper", "mm_kernel_general", "runtime/backend/_nvidia/hopper/ops/mm.py", MM_CFG, num_warps=8,
        num_stages=3, what="mm as FlagGems launches it on Hopper without host descriptors: device-side tensor "
                           "descriptors when the blocks divide the shape, pointers otherwise")
def _mm_hopper(size):
    return _mm(size, hopper=True)


@export("mm_hopper_host_tma", "mm_kernel_general_host_tma", "runtime/backend/_nvidia/hopper/ops/mm.py",
        dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, A_ROW_MAJOR=True, B_ROW_MAJOR=True, dtype="bfloat16"),
        num_warps=8, num_stages=3, what="mm on host-side TensorDescriptor arguments (FlagGems' Hopper path for "
                                        "row-major operands)")
def _mm_host_tma(size):
    # FlagGems' launch: TensorDescriptor(x, x.shape, x.stride(), ...) on A (M x K), B (K x N) and
    # C (M x N), blocks as its pre-hook sets them; at the test size the last K step and the
    # last tiles along M and N reach past the tensors (zeros read, stores dropped).
    M, N, K, a, b, c = _mm_case(size, BF)
    return case(f"{M}x{N}x{K} bf16", (cdiv(M, 128) * cdiv(N, 128),),
                dict(a_desc=Desc(a, (M, K), (K, 1), (128, 64)), b_desc=Desc(b, (K, N), (N, 1), (64, 128)),
                     c_desc=Desc(c, (M, N), (N, 1), (128, 128)), M=M, N=N, K=K, stride_am=K, stride_ak=1,
                     stride_bk=N, stride_bn=1, stride_cm=N, stride_cn=1, enable_warp_specialization=True),
                {"c_desc": close(1e-2, 0, ulp=1)},
                T(size, lambda: {"c_desc": expect(c, a.values().reshape(M, K) @ b.values().reshape(K, N))}, None))


@export("bmm", "bmm_kernel", "ops/bmm.py",
        dict(TILE_M=128, TILE_N=128, TILE_K=32, GROUP_M=2, DIVISIBLE_M=True, DIVISIBLE_N=True, DIVISIBLE_K=True),
        num_warps=4, num_stages=3, slow=True, what="bmm of attention-sized blocks, tiles that divide the shape "
                                                   "(no masks)")
def _bmm(size):
    Bt, M, N, K = T(size, (2, 256, 128, 96), (64, 1024, 1024, 128))
    a, b = uniform(490, Bt * M * K, -1, 1, "f16"), uniform(491, Bt * K * N, -1, 1, "f16")
    o = out(Bt * M * N, "f16")
    return case(f"{Bt}x{M}x{N}x{K} f16", (cdiv(M, 128), cdiv(N, 128), Bt),
                dict(A=a, B=b, O=o, M=M, N=N, K=K, stride_ab=M * K, stride_am=K, stride_ak=1, stride_bb=K * N,
                     stride_bk=N, stride_bn=1, stride_ob=M * N, stride_om=N, stride_on=1),
                {"O": close(2e-3, 0, ulp=1)},
                T(size, lambda: {"O": expect(o, a.values().reshape(Bt, M, K) @ b.values().reshape(Bt, K, N))}, None))


@export("addmm", "addmm_kernel", "ops/addmm.py", dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64),
        num_warps=8, num_stages=3, what="addmm (a linear layer): a bias row broadcast (stride 0), alpha and beta")
def _addmm(size):
    M, N, K, a, b, c = _mm_case(size, BF)
    bias = uniform(482, N, -1, 1, BF)
    ref = lambda: {"c_ptr": expect(c, a.values().reshape(M, K) @ b.values().reshape(K, N) + bias.values())}  # noqa
    return case(f"{M}x{N}x{K} bf16 + bias", (cdiv(M, 128), cdiv(N, 256)),
                dict(a_ptr=a, b_ptr=b, i_ptr=bias, c_ptr=c, alpha=1, beta=1, M=M, N=N, K=K, stride_am=K, stride_ak=1,
                     stride_bk=N, stride_bn=1, stride_im=0, stride_in=1, stride_cm=N, stride_cn=1),
                {"c_ptr": close(1e-2, 0, ulp=1)}, T(size, ref, None))


# ---------------------------------------------------------------- attention

def _sdpa(size, D, causal):
    Z, H, S = T(size, (1, 2, 208), (4, 40, 4096))
    sm_scale = 1 / math.sqrt(D)
    q, k, v = (normal(500 + i, Z * H * S * D, 0.5, BF) for i in range(3))
    o, m = out(Z * H * S * D, BF), out(Z * H * S)
    sd = S * D

    def reference():
        o64, lse2, _ = attention_reference(q, k, v, Z * H, S, D, sm_scale, causal)
        return {"Out": expect(o, o64), "M": expect(m, lse2)}

    strides = dict(zip(("batch", "head", "seqlen", "headsize"), (H * sd, sd, D, 1)))
    args = dict(Q=q, K=k, V=v, attn_mask=None, sm_scale=sm_scale, M=m, Out=o)
    for t in ("q", "k", "v"):
        args.update({f"stride_{t}_{n}": s for n, s in strides.items()})
    args.update(stride_attn_mask_batch=1, stride_attn_mask_head=1, stride_attn_mask_q_seqlen=1,
                stride_attn_mask_kv_seqlen=1)
    args.update({f"stride_o_{n}": s for n, s in strides.items()})
    args.update(Z=Z, q_head_num=H, kv_head_num=H, Q_CTX=S, KV_CTX=S)
    return case(f"Z{Z} H{H} S{S} D{D} bf16" + (" causal" if causal else ""), (cdiv(S, 128), Z * H, 1), args,
                {"Out": close(1e-2, 0, ulp=2), "M": close(1e-3, 1e-4)}, T(size, reference, None))


for _D, _causal in ((128, True), (64, False)):
    export(f"attention_d{_D}" + ("_causal" if _causal else ""), "_attn_fwd", "ops/attention.py",
           dict(GROUP_HEAD=1, HEAD_DIM=_D, BLOCK_M=128, BLOCK_N=64, STAGE=3 if _causal else 1, HAS_ATTN_MASK=False,
                PRE_LOAD_V=False), num_warps=8 if _D == 128 else 4, num_stages=3, slow=True,
           what=f"scaled_dot_product_attention forward, D {_D}" + (", causal" if _causal else "") +
                ", masked ends (sequence lengths need not divide the blocks)")(
        lambda size, D=_D, causal=_causal: _sdpa(size, D, causal))
