"""Why three flash-linear-attention kernels differ between Tri and Triton: each kernel launched
through Triton and through Tri on the same inputs, and both compared with references computed
here in torch: the exact result (float64 throughout) and, for the kernels whose `tl.dot` is tf32
on f32 operands, the result with those operands rounded to tf32 to nearest even (what Tri does,
docs/import.md) and truncated to tf32 (what the tensor core does with the raw f32 bits Triton's
PTX hands it: Triton emits no cvt.rna.tf32.f32).

    TRI_LIBRARY=build/src/libtri.so.0 PYTHONPATH=bindings/python/src \\
        python3 bench/libraries/fla_precision.py [--small] [--cpu DIR [--ieee] [--tri-only]] [--emulate]

On a GPU (the default) the kernels run at the sizes of bench/libraries/library_ops.py (B 2, T
2048, H 16, K = V 128; --small: B 1, T 256); Triton compiles them and Tri imports the TTIR Triton
made, with Triton's num_warps and num_stages. Elsewhere:
- `--cpu DIR`: Triton's interpreter (which computes tf32 dots exactly in f32) against Tri's "cpu"
  target (or `--target interp`) on the TTIR captured on a GPU in DIR (files `NNN_<kernel>.ttir`,
  as the capture of library_ops.py wrote them; their H, K, BT and BK are the capture's, B and T
  shrink: `--seq T`). `--ieee` makes the TTIR's tf32 dots ieee, so that both compute the same
  thing and must agree within f32 rounding (no references then: T need not be a multiple of 64,
  which takes the kernels' early returns); `--tri-only` skips Triton's interpreter (slow).
- `--emulate`: launches nothing and compares the two emulations with each other at the library's
  sizes: what the replay of Tri against Triton should find if rounding is all there is.

The kernels and what the references show (bench/results/fla-precision-2026-11-28-67db82d.md):
- chunk_gla_fwd_A_kernel_intra_sub_inter (A) and chunk_gla_bwd_kernel_intra (dq, dk): the dot's
  operands are full f32 values (q * exp2(g - gn) * scale, dA), so the tf32 rounding mode shows in
  the result. Tri's results are within f32 rounding of the nearest-even emulation, which is the
  closer of the two to the exact result; on the GPU, Triton's should be within f32 rounding of
  the truncating one.
- fused_recurrent_bwd_kernel (dgk): a running sum over T of q dq - k dk whose exact value is
  often small (exactly 0 at t = 0); both results carry the f32 rounding of 2T terms of order 1,
  and the elements outside the replay's tolerance are small ones.

Needs torch, Triton and fla-core (flash-linear-attention) 0.6; prints one table per kernel.
"""

import argparse
import os
import sys

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--cpu", metavar="DIR",
                help="run on the host: Triton's interpreter and Tri on the TTIR captured in DIR")
ap.add_argument("--target", default="cpu", choices=["cpu", "interp"], help="Tri's host target with --cpu")
ap.add_argument("--small", action="store_true", help="B 1, T 256 on the GPU")
ap.add_argument("--emulate", action="store_true",
                help="launch nothing: compare the two tf32 emulations with each other (on the GPU if there is one)")
ap.add_argument("--tri-only", action="store_true", help="with --cpu: launch Tri only (Triton's interpreter is slow)")
ap.add_argument("--ieee", action="store_true", help="with --cpu: Tri's dots exact in f32, as in Triton's interpreter "
                "(the TTIR's tf32 made ieee); no references: Tri and Triton should agree within f32 rounding")
ap.add_argument("--seq", type=int, help="T (default: 2048 on the GPU, 128 and 32 with --cpu); the references need "
                "a multiple of 64")
ap.add_argument("-k", dest="only", help="only kernels whose name contains this")
opts = ap.parse_args()
if opts.cpu:
    os.environ["TRITON_INTERPRET"] = "1"  # before Triton is imported

import glob  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tri  # noqa: E402
from tri.triton.compare import DEFAULT_TOLERANCE  # noqa: E402

DEV = "cpu" if opts.cpu or (opts.emulate and not torch.cuda.is_available()) else "cuda"
if DEV == "cuda" and not torch.cuda.is_available():
    print("skipped: no CUDA device (run with --cpu DIR to compare on the host)")
    sys.exit(0)
if opts.cpu:
    # Triton 3.6's interpreter cannot use a scalar it holds as a 1-element array as a range()
    # bound (chunk_gla_bwd_kernel_intra's `range(i_i + 1, min(NC, tl.cdiv(...)))`).
    import triton.runtime.interpreter as _ti

    _patch_lang_tensor = _ti._patch_lang_tensor

    def _patch(tensor, scope):
        _patch_lang_tensor(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(np.asarray(self.handle.data).reshape(-1)[0]))
    _ti._patch_lang_tensor = _patch

from fla.ops.common.fused_recurrent import fused_recurrent_bwd_kernel  # noqa: E402
from fla.ops.gla.chunk import chunk_gla_bwd_kernel_intra, chunk_gla_fwd_A_kernel_intra_sub_inter  # noqa: E402

H, K, V, BT, BC, NC = 16, 128, 128, 64, 16, 4
if opts.cpu:
    B, T, T_RECURRENT = 1, 128, 32
elif opts.small:
    B, T, T_RECURRENT = 1, 256, 256
else:
    B, T, T_RECURRENT = 2, 2048, 2048
if opts.seq:
    T = T_RECURRENT = opts.seq
NT = -(-T // BT)  # chunks; the references need whole ones (T a multiple of BT)
TP = NT * BT
SCALE = K ** -0.5
ATOL, RTOL = DEFAULT_TOLERANCE["fp32"]
torch.manual_seed(0)


def jit_function(kernel):
    """The JIT function under fla's heuristics and autotuner (the test picks the config)."""
    while type(kernel).__name__ not in ("JITFunction", "InterpretedFunction"):
        kernel = kernel.fn
    return kernel


# ---------------------------------------------------------------- tf32 operands

def tf32_nearest(x):
    """f32 values rounded to tf32 (10 mantissa bits) to nearest even, as Tri rounds dot operands."""
    b = x.contiguous().view(torch.int32).to(torch.int64)
    r = (b + 0xFFF + ((b >> 13) & 1)) & ~0x1FFF
    r = torch.where((b & 0x7F800000) == 0x7F800000, b, r)  # inf and NaN as they are
    r = torch.where(r >= 2 ** 31, r - 2 ** 32, r)
    return r.to(torch.int32).view(torch.float32)


def tf32_truncated(x):
    """f32 values with their low 13 mantissa bits dropped: what mma.tf32 makes of raw f32 bits."""
    return (x.contiguous().view(torch.int32) & ~0x1FFF).view(torch.float32)


ROUNDINGS = {"exact (f64)": None, "tf32 nearest": tf32_nearest, "tf32 truncated": tf32_truncated}


def operand(x32, x64, rnd):
    """A dot operand in f64: computed in f64 (exact reference) or in f32 as the kernel computes it,
    then rounded to tf32."""
    return x64 if rnd is None else rnd(x32).double()


# ---------------------------------------------------------------- the kernels

def gates():
    """Gates as chunk_gla makes them: chunk-local cumsums of log-sigmoids, in log2 units."""
    g = F.logsigmoid(torch.randn(B, TP, H, K, device=DEV))
    return (g.view(B, NT, BT, H, K).cumsum(2) / 0.6931471805599453).view(B, TP, H, K)[:, :T].contiguous()


def bf16(*shape):
    return torch.randn(*shape, device=DEV).bfloat16()


def case_fwd_A():
    q, k, g = bf16(B, T, H, K), bf16(B, T, H, K), gates()
    inputs = dict(q=q, k=k, g=g, scale=SCALE, T=T)
    outputs = dict(A=torch.zeros(B, T, H, BT, device=DEV))
    consts = dict(cu_seqlens=None, chunk_indices=None, H=H, K=K, BT=BT, BC=BC, BK=32, NC=NC, IS_VARLEN=False)

    def reference(rnd):
        s = lambda x: x.view(B, NT, NC, BC, H, K)  # noqa: E731
        q32, k32, g32 = s(q.float()), s(k.float()), s(g)
        A = torch.zeros(B, NT, NC, BC, H, NC, BC, dtype=torch.float64, device=DEV)
        for i in range(NC):
            gn32, gn64 = g32[:, :, i, :1], g32[:, :, i, :1].double()
            qg = operand(q32[:, :, i] * torch.exp2(g32[:, :, i] - gn32) * SCALE,
                         q32[:, :, i].double() * torch.exp2(g32[:, :, i].double() - gn64) * SCALE, rnd)
            for j in range(i):
                kg = operand(k32[:, :, j] * torch.exp2(gn32 - g32[:, :, j]),
                             k32[:, :, j].double() * torch.exp2(gn64 - g32[:, :, j].double()), rnd)
                A[:, :, i, :, :, j, :] = torch.einsum("bnrhk,bnshk->bnrhs", qg, kg)
        A = A.view(B, T, H, BT)
        return dict(A=A if rnd is None else A.float().double())
    return dict(kernel=chunk_gla_fwd_A_kernel_intra_sub_inter, grid=(NT, NC * NC, B * H), num_warps=1,
                num_stages=2, inputs=inputs, outputs=outputs, consts=consts, reference=reference if T == TP else None)


def case_bwd_intra():
    q, k, g = bf16(B, T, H, K), bf16(B, T, H, K), gates()
    do, v = bf16(B, TP, H, V).float(), bf16(B, TP, H, V).float()
    # dA as chunk_gla's backward feeds it: do v^T * scale, causal within each chunk.
    dA = torch.einsum("bnthv,bnshv->bnths", do.view(B, NT, BT, H, V), v.view(B, NT, BT, H, V)) * SCALE
    dA = (dA * torch.tril(torch.ones(BT, BT, device=DEV))[:, None, :]).reshape(B, TP, H, BT)[:, :T].contiguous()
    inputs = dict(q=q, k=k, g=g, dA=dA, T=T)
    outputs = dict(dq=torch.zeros(B, T, H, K, device=DEV), dk=torch.zeros(B, T, H, K, device=DEV))
    consts = dict(cu_seqlens=None, chunk_indices=None, H=H, K=K, BT=BT, BC=BC, BK=64, NC=NC, IS_VARLEN=False)

    def reference(rnd):
        s = lambda x: x.view(B, NT, NC, BC, H, K)  # noqa: E731
        q32, k32, g32 = s(q.float()), s(k.float()), s(g)
        q64, k64, g64 = q32.double(), k32.double(), g32.double()
        dA6 = dA.view(B, NT, NC, BC, H, NC, BC)  # [b, n, i, r, h, j, s]: row i*BC+r, column j*BC+s
        causal = torch.tril(torch.ones(BC, BC, dtype=torch.float64, device=DEV))
        dq = torch.zeros(B, NT, NC, BC, H, K, dtype=torch.float64, device=DEV)
        dk = torch.zeros_like(dq)
        for i in range(NC):
            # dq: the dots over the earlier sub-chunks j, scaled by exp2(g - gn) in f32
            gn32 = g32[:, :, i, :1]
            acc = torch.zeros(B, NT, BC, H, K, dtype=torch.float64, device=DEV)
            for j in range(i):
                kg = operand(k32[:, :, j] * torch.exp2(gn32 - g32[:, :, j]),
                             k64[:, :, j] * torch.exp2(gn32.double() - g64[:, :, j]), rnd)
                a = operand(dA6[:, :, i, :, :, j, :], dA6[:, :, i, :, :, j, :].double(), rnd)
                acc += torch.einsum("bnrhs,bnshk->bnrhk", a, kg)
            if rnd is None:
                dq[:, :, i] = acc * torch.exp2(g64[:, :, i] - gn32.double())
            else:
                dq[:, :, i] = (acc.float() * torch.exp2(g32[:, :, i] - gn32)).double()
            # dk: the dots over the later sub-chunks j (dA transposed), scaled by exp2(gn - g)
            gn32 = g32[:, :, i, BC - 1:]
            acc = torch.zeros(B, NT, BC, H, K, dtype=torch.float64, device=DEV)
            for j in range(i + 1, NC):
                qg = operand(q32[:, :, j] * torch.exp2(g32[:, :, j] - gn32),
                             q64[:, :, j] * torch.exp2(g64[:, :, j] - gn32.double()), rnd)
                a = operand(dA6[:, :, j, :, :, i, :], dA6[:, :, j, :, :, i, :].double(), rnd)
                acc += torch.einsum("bnshr,bnshk->bnrhk", a, qg)
            if rnd is None:
                dk[:, :, i] = acc * torch.exp2(gn32.double() - g64[:, :, i])
            else:
                dk[:, :, i] = (acc.float() * torch.exp2(gn32 - g32[:, :, i])).double()
            # within the sub-chunk (no dot: f64 in every reference)
            a = dA6[:, :, i, :, :, i, :].double() * causal[None, None, :, None, :]  # [b n r h s], s <= r
            e = torch.exp2(g64[:, :, i][:, :, :, None] - g64[:, :, i][:, :, None, :])  # [b n r s h k]
            dq[:, :, i] += torch.einsum("bnrhs,bnrshk,bnshk->bnrhk", a, e, k64[:, :, i])
            dk[:, :, i] += torch.einsum("bnrhs,bnrshk,bnrhk->bnshk", a, e, q64[:, :, i])
        return dict(dq=dq.view(B, T, H, K), dk=dk.view(B, T, H, K))
    return dict(kernel=chunk_gla_bwd_kernel_intra, grid=((K // 64) * NC * NT, B * H), num_warps=1, num_stages=2,
                inputs=inputs, outputs=outputs, consts=consts, reference=reference if T == TP else None)


def case_recurrent_bwd():
    t, BK, BV = T_RECURRENT, 64, 64
    NK, NV = K // BK, V // BV
    q, k, v, do = bf16(B, t, H, K), bf16(B, t, H, K), bf16(B, t, H, V), bf16(B, t, H, V)
    gk = F.logsigmoid(torch.randn(B, t, H, K, device=DEV))
    inputs = dict(q=q, k=k, v=v, gk=gk, o=torch.zeros(B, t, H, V, device=DEV), do=do, scale=SCALE, B=B, T=t)
    z = lambda n, d: torch.zeros(n, B, t, H, d, device=DEV)  # noqa: E731
    outputs = dict(dq=z(NV, K), dk=z(NV, K), dv=z(NK, V), dgk=z(NV, K))
    consts = dict(g=None, g_gamma=None, gv=None, h0=None, dg=None, dgv=None, dht=None, dh0=None, cu_seqlens=None,
                  H=H, K=K, V=V, BK=BK, BV=BV, REVERSE=False, USE_G=False, USE_G_GAMMA=False, USE_GK=True,
                  USE_GV=False, USE_INITIAL_STATE=False, STORE_INITIAL_STATE_GRADIENT=False,
                  USE_FINAL_STATE_GRADIENT=False, IS_VARLEN=False, STATE_V_FIRST=False)

    def reference(rnd):
        # The kernel's two passes, each value split by V blocks as its programs split it.
        qd, kd, gd = q.double(), k.double(), gk.double()
        vd = v.double().view(B, t, H, NV, BV).permute(3, 0, 1, 2, 4)  # [iv, b, t, h, v]
        dod = do.double().view(B, t, H, NV, BV).permute(3, 0, 1, 2, 4)
        out = {n: torch.zeros_like(x, dtype=torch.float64) for n, x in outputs.items()}
        h = torch.zeros(NV, B, H, K, BV, dtype=torch.float64, device=DEV)
        for s in range(t):
            h = h * torch.exp(gd[:, s])[None, ..., None] + kd[:, s][None, ..., None] * vd[:, :, s][:, :, :, None, :]
            out["dq"][:, :, s] = (h * dod[:, :, s][:, :, :, None, :]).sum(-1) * SCALE
        dh = torch.zeros_like(h)
        dgk = torch.zeros(NV, B, H, K, dtype=torch.float64, device=DEV)
        for s in reversed(range(t)):
            dh = dh + (qd[:, s] * SCALE)[None, ..., None] * dod[:, :, s][:, :, :, None, :]
            dk = (dh * vd[:, :, s][:, :, :, None, :]).sum(-1)
            out["dk"][:, :, s] = dk
            dv = (dh.view(NV, B, H, NK, BK, BV) * kd[:, s].view(B, H, NK, BK)[None, ..., None]).sum(-2)
            out["dv"][:, :, s] = dv.permute(3, 1, 2, 0, 4).reshape(NK, B, H, V)
            dgk = dgk + qd[:, s][None] * out["dq"][:, :, s] - kd[:, s][None] * dk
            dh = dh * torch.exp(gd[:, s])[None, ..., None]
            out["dgk"][:, :, s] = dgk
        return out
    return dict(kernel=fused_recurrent_bwd_kernel, grid=(NV * NK * B * H,), num_warps=4, num_stages=3,
                inputs=inputs, outputs=outputs, consts=consts, reference=reference, exact_only=True)


CASES = {"chunk_gla_fwd_A_kernel_intra_sub_inter": case_fwd_A, "chunk_gla_bwd_kernel_intra": case_bwd_intra,
         "fused_recurrent_bwd_kernel": case_recurrent_bwd}

# ---------------------------------------------------------------- launches

_DTYPES = {torch.bfloat16: tri.DType.BF16, torch.float32: tri.DType.F32}
CONTEXT = tri.Context()


def run_triton(case):
    out = {n: x.clone() for n, x in case["outputs"].items()}
    compiled = jit_function(case["kernel"])[case["grid"]](
        **case["inputs"], **out, **case["consts"], num_warps=case["num_warps"], num_stages=case["num_stages"])
    return out, None if opts.cpu else compiled.asm["ttir"]


def run_tri(case, name, ttir):
    if opts.cpu:
        options = tri.CompileOptions(target=opts.target, checked=opts.target == "interp")
    else:
        options = tri.CompileOptions(target="cuda", num_warps=case["num_warps"], num_stages=case["num_stages"])
    kernel = CONTEXT.module(ttir, f"{name}.ttir").compile(name, options)
    out = {n: x.clone() for n, x in case["outputs"].items()}
    named = {**case["inputs"], **out}
    pointer = tri.Buffer if opts.cpu else tri.DevicePtr
    args = [pointer(x.data_ptr(), x.numel() * x.element_size(), _DTYPES[x.dtype]) if isinstance(x, torch.Tensor)
            else x for x in (named[p.name] for p in kernel.params)]
    kernel.launch(case["grid"], *args)
    if not opts.cpu:
        torch.cuda.synchronize()
    return out


def off(got, want):
    """Elements outside the replay's f32 tolerance (atol + rtol |want|), as compare.py counts them."""
    return ~((got - want).abs() <= ATOL + RTOL * want.abs())


def table(name, t, results, refs):
    """One kernel's table: each output of each launch (results: {label: {output: tensor}}, Tri's
    first, Triton's second) against each reference, and the replay's comparison of the two."""
    rows = ["| output | launch | " + " | ".join(f"max / mean vs {r}" for r in refs) + " |",
            "|:---|:---|" + "---:|" * len(refs)]
    labels = list(results)
    for out in results[labels[0]]:
        for who, res in results.items():
            x = res[out].double()
            cells = [f"{(x - ref[out]).abs().max().item():.3g} / {(x - ref[out]).abs().mean().item():.3g}"
                     for ref in refs.values()]
            rows.append(f"| {out} | {who} | " + " | ".join(cells) + " |")
    where = f"host, Tri's {opts.target} target" if opts.cpu else DEV
    print(f"\n### {name} (B {B}, T {t}, H {H}, K {K}; {where}{'; tf32 dots made ieee' if opts.ieee else ''})\n")
    if refs:
        print("\n".join(rows))
    exact = refs.get("exact (f64)")
    for out in results[labels[0]]:
        parts = []
        if len(labels) == 2:
            a, b = results[labels[0]][out].double(), results[labels[1]][out].double()
            bad = off(a, b)
            parts.append(f"{labels[0]} vs {labels[1]}: {int(bad.sum())} of {bad.numel()} off by more than atol "
                         f"{ATOL:g} + rtol {RTOL:g} x |{labels[1]}| (max |diff| {(a - b).abs().max().item():.3g})"
                         + (f", |exact value| of those at most {exact[out][bad].abs().max().item():.3g}"
                            if bad.any() and exact is not None else ""))
        for who, res in results.items() if exact is not None else ():
            bad = off(res[out].double(), exact[out])
            parts.append(f"{who} vs exact: {int(bad.sum())} off" +
                         (f" (|exact value| at most {exact[out][bad].abs().max().item():.3g})" if bad.any() else ""))
        print(f"- {out}: " + "; ".join(parts))


def main():
    for name, make in CASES.items():
        if opts.only and opts.only not in name:
            continue
        case = make()
        if opts.emulate:
            if case.get("exact_only"):
                continue
            if case["reference"] is None:
                sys.exit(f"fla_precision.py: --emulate needs T a multiple of {BT}")
            refs = {r: case["reference"](fn) for r, fn in ROUNDINGS.items()}
            table(name, case["inputs"]["T"], {"tf32 nearest (Tri)": refs["tf32 nearest"],
                                              "tf32 truncated (Triton)": refs["tf32 truncated"]},
                  {"exact (f64)": refs["exact (f64)"]})
            continue
        triton_out, ttir = (None, None) if opts.tri_only else run_triton(case)
        if opts.cpu:
            paths = sorted(glob.glob(os.path.join(opts.cpu, f"*_{name}.ttir")))
            if not paths:
                sys.exit(f"fla_precision.py: no *_{name}.ttir in {opts.cpu}")
            ttir = open(paths[0]).read()
            if opts.ieee:
                ttir = ttir.replace("inputPrecision = tf32", "inputPrecision = ieee")
        tri_out = run_tri(case, name, ttir)
        refs = {} if opts.ieee or case["reference"] is None else \
            {r: case["reference"](fn) for r, fn in ROUNDINGS.items() if fn is None or not case.get("exact_only")}
        table(name, case["inputs"]["T"], {"Tri": tri_out, **({} if opts.tri_only else {"Triton": triton_out})}, refs)


if __name__ == "__main__":
    main()
