"""Triton kernels from libraries nobody here wrote, launched the way those libraries launch them:
liger-kernel (LLM training ops: norms, gated activations, rotary embeddings, cross entropy,
divergences; forward and backward), flash-linear-attention (chunked linear attention, gated
delta rule, causal depthwise conv1d, fused norms) and FlagGems (PyTorch operators), at LLM sizes
in bf16/f16/f32 as each op is used.

The program only calls the libraries; it measures nothing itself. Run it under Tri's capture, which
records every Triton launch and then replays each one through Tri on the same tensors next to
Triton's own launch (outputs compared, both timed):

    TRI_LIBRARY=build/src/libtri.so.0 PYTHONPATH=bindings/python/src \\
        python3 -m tri.triton.capture --json out.json bench/libraries/library_ops.py [liger] [fla] [flag_gems] \
            [--small] [--all-configs]

Each op runs in its own try block: a library that is missing, or an op whose signature changed
between versions, prints one line and the rest go on. The libraries travel to the GPU machine as
wheels (docs/testing.md says how); this file needs only torch and whichever of them is installed.
"""

import sys
import traceback

import torch

SMALL = "--small" in sys.argv
if "--all-configs" not in sys.argv:
    # Autotuned kernels keep their first config only: fla's chunked kernels autotune dozens of
    # configs per kernel at first use (minutes of compiling before one op has run). Tri and Triton
    # then run that same config; --all-configs lets every library tune as it would.
    import triton.runtime.autotuner as _at

    _init = _at.Autotuner.__init__

    def _first_config_only(self, *args, **kwargs):
        _init(self, *args, **kwargs)
        self.configs = self.configs[:1]

    _at.Autotuner.__init__ = _first_config_only
WANT = [a for a in sys.argv[1:] if not a.startswith("--")] or ["liger", "fla", "flag_gems"]
DEV = "cuda"
# LLM-ish sizes: 4096 tokens of a 4096-wide model (a 7B layer), a 32k vocabulary.
TOK, HID, VOCAB = (256, 512, 4096) if SMALL else (4096, 4096, 32000)
torch.manual_seed(0)
failed = []


def run(name, fn):
    try:
        fn()
        torch.cuda.synchronize()
        print(f"ran {name}", flush=True)
    except Exception as e:  # noqa: BLE001 - one op's failure must not stop the others
        failed.append(name)
        print(f"skipped {name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)
        if "-v" in sys.argv:
            traceback.print_exc()


def rand(*shape, dtype=torch.bfloat16, grad=False, scale=1.0):
    t = (torch.randn(*shape, device=DEV, dtype=torch.float32) * scale).to(dtype)
    return t.requires_grad_(grad)


def fwd_bwd(out):
    out = out[0] if isinstance(out, (tuple, list)) else out
    out.backward(torch.randn_like(out))


# ---------------------------------------------------------------- liger-kernel

def liger_ops():
    from liger_kernel import ops as L

    x = lambda: rand(TOK, HID, grad=True)  # noqa: E731
    run("liger rms_norm", lambda: fwd_bwd(L.LigerRMSNormFunction.apply(x(), rand(HID, grad=True), 1e-6)))
    run("liger layer_norm",
        lambda: fwd_bwd(L.LigerLayerNormFunction.apply(x(), rand(HID, grad=True), rand(HID, grad=True), 1e-6)))
    run("liger fused_add_rms_norm",
        lambda: fwd_bwd(L.LigerFusedAddRMSNormFunction.apply(x(), x(), rand(HID, grad=True), 1e-6)))
    run("liger swiglu", lambda: fwd_bwd(L.LigerSiLUMulFunction.apply(rand(TOK, 2 * HID, grad=True),
                                                                       rand(TOK, 2 * HID, grad=True))))
    run("liger geglu", lambda: fwd_bwd(L.LigerGELUMulFunction.apply(rand(TOK, 2 * HID, grad=True),
                                                                      rand(TOK, 2 * HID, grad=True))))
    b, h, s, d = (1, 8, 256, 64) if SMALL else (2, 32, 2048, 128)

    def rope():
        q, k = rand(b, h, s, d, grad=True), rand(b, h // 4, s, d, grad=True)
        pos = torch.arange(s, device=DEV, dtype=torch.float32)[:, None] * torch.arange(d // 2, device=DEV)[None, :]
        emb = torch.cat([pos, pos], dim=-1)[None]
        q2, k2 = L.LigerRopeFunction.apply(q, k, emb.cos().bfloat16(), emb.sin().bfloat16())
        (q2.float().sum() + k2.float().sum()).backward()
    run("liger rope", rope)
    run("liger cross_entropy", lambda: fwd_bwd(L.LigerCrossEntropyFunction.apply(
        rand(TOK, VOCAB, grad=True), torch.randint(0, VOCAB, (TOK,), device=DEV), None)))
    run("liger fused_linear_cross_entropy", lambda: fwd_bwd(L.LigerFusedLinearCrossEntropyFunction.apply(
        rand(TOK, HID, grad=True), rand(VOCAB, HID, grad=True, scale=0.02),
        torch.randint(0, VOCAB, (TOK,), device=DEV))))
    logp = lambda: torch.log_softmax(rand(TOK // 4, VOCAB, dtype=torch.float32), -1).requires_grad_(True)  # noqa: E731
    run("liger kl_div", lambda: fwd_bwd(L.LigerKLDivLossFunction.apply(logp(), logp().detach(), "batchmean", True)))
    run("liger jsd", lambda: fwd_bwd(L.LigerJSDFunction.apply(logp(), logp().detach(), None, 0.5, -100)))
    run("liger softmax", lambda: fwd_bwd(L.LigerSoftmaxFunction.apply(rand(TOK, VOCAB // 4, grad=True))))
    run("liger dyt", lambda: fwd_bwd(L.LigerDyTFunction.apply(x(), rand(1, grad=True), rand(HID, grad=True),
                                                              rand(HID, grad=True))))
    nb, ch, hw = (4, 32, 256) if SMALL else (32, 64, 4096)
    run("liger group_norm", lambda: fwd_bwd(L.LigerGroupNormFunction.apply(
        rand(nb, ch, hw, dtype=torch.float32, grad=True), rand(ch, dtype=torch.float32, grad=True),
        rand(ch, dtype=torch.float32, grad=True), ch, 8, 1e-6)))
    run("liger tvd", lambda: fwd_bwd(L.LigerTVDLossFunction.apply(
        torch.softmax(rand(TOK // 4, VOCAB, dtype=torch.float32), -1).requires_grad_(True),
        torch.softmax(rand(TOK // 4, VOCAB, dtype=torch.float32), -1))))
    run("liger sparsemax", lambda: fwd_bwd(L.LigerSparsemaxFunction.apply(rand(TOK, 1024, dtype=torch.float32,
                                                                               grad=True), -1)))


# ---------------------------------------------------------------- flash-linear-attention

def fla_ops():
    import torch.nn.functional as F
    from fla import ops as O

    B, T, H, K, V = (1, 256, 2, 64, 64) if SMALL else (2, 2048, 16, 128, 128)
    q = lambda: rand(B, T, H, K, grad=True)  # noqa: E731
    v = lambda: rand(B, T, H, V, grad=True)  # noqa: E731
    gate = lambda: F.logsigmoid(rand(B, T, H, K, dtype=torch.float32)).requires_grad_(True)  # noqa: E731
    beta = lambda: torch.rand(B, T, H, device=DEV, dtype=torch.bfloat16).requires_grad_(True)  # noqa: E731
    run("fla chunk_gla", lambda: fwd_bwd(O.chunk_gla(q(), q(), v(), gate())))
    run("fla fused_recurrent_gla", lambda: fwd_bwd(O.fused_recurrent_gla(q(), q(), v(), gate())))
    run("fla chunk_simple_gla", lambda: fwd_bwd(O.chunk_simple_gla(
        q(), q(), v(), F.logsigmoid(rand(B, T, H, dtype=torch.float32)).requires_grad_(True))))
    nq = lambda: F.normalize(rand(B, T, H, K, dtype=torch.float32), dim=-1).bfloat16().requires_grad_(True)  # noqa: E731
    run("fla chunk_delta_rule", lambda: fwd_bwd(O.chunk_delta_rule(nq(), nq(), v(), beta())))
    run("fla chunk_gated_delta_rule", lambda: fwd_bwd(O.chunk_gated_delta_rule(
        nq(), nq(), v(), F.logsigmoid(rand(B, T, H, dtype=torch.float32)).requires_grad_(True), beta())))
    run("fla chunk_linear_attn", lambda: fwd_bwd(O.chunk_linear_attn(q(), q(), v())))
    run("fla chunk_retention", lambda: fwd_bwd(O.chunk_retention(q(), q(), v())))
    D, W = (256, 4) if SMALL else (4096, 4)

    def conv():
        from fla.modules.causal_conv1d import causal_conv1d
        y = causal_conv1d(rand(B, T, D, grad=True), rand(D, W, grad=True), rand(D, grad=True), activation="silu")
        fwd_bwd(y)
    run("fla causal_conv1d", conv)

    def norms():
        from fla.modules.norm import fused_norm_gate as G
        fwd_bwd(G.rms_norm_gated(rand(B * T, HID, grad=True), rand(B * T, HID, grad=True), rand(HID, grad=True),
                                 None))
    run("fla rms_norm_gated", norms)

    def l2():
        from fla.modules.norm.l2norm import l2norm
        fwd_bwd(l2norm(rand(B, T, H, K, grad=True)))
    run("fla l2norm", l2)


# ---------------------------------------------------------------- FlagGems

def flag_gems_ops():
    import flag_gems

    n = 256 if SMALL else 4096
    a = lambda dt=torch.bfloat16: rand(n, n, dtype=dt)  # noqa: E731
    with flag_gems.use_gems():
        run("flag_gems add broadcast", lambda: a() + rand(n, dtype=torch.bfloat16))
        run("flag_gems mul", lambda: a() * a())
        run("flag_gems where", lambda: torch.where(a() > 0, a(), a()))
        run("flag_gems gelu", lambda: torch.nn.functional.gelu(a()))
        run("flag_gems silu", lambda: torch.nn.functional.silu(a()))
        run("flag_gems sum dim1", lambda: a(torch.float32).sum(dim=1))
        run("flag_gems sum dim0", lambda: a(torch.float32).sum(dim=0))
        run("flag_gems amax", lambda: a().amax(dim=-1))
        run("flag_gems argmax", lambda: a(torch.float32).argmax(dim=-1))
        run("flag_gems var_mean", lambda: torch.var_mean(a(torch.float32), dim=1))
        run("flag_gems softmax", lambda: torch.softmax(a(), dim=-1))
        run("flag_gems log_softmax", lambda: torch.log_softmax(a(torch.float32), dim=-1))
        run("flag_gems layer_norm", lambda: torch.nn.functional.layer_norm(a(), (n,), rand(n), rand(n)))
        run("flag_gems rms_norm", lambda: torch.nn.functional.rms_norm(a(), (n,), rand(n)))
        run("flag_gems group_norm", lambda: torch.nn.functional.group_norm(
            rand(32, 64, 64 if SMALL else 1024, dtype=torch.float32), 8))
        run("flag_gems cross_entropy", lambda: torch.nn.functional.cross_entropy(
            rand(n, VOCAB // 4, dtype=torch.float32), torch.randint(0, VOCAB // 4, (n,), device=DEV)))
        run("flag_gems cumsum", lambda: torch.cumsum(a(torch.float32), dim=1))
        run("flag_gems sort", lambda: torch.sort(rand(n, 1024, dtype=torch.float32), dim=-1))
        run("flag_gems topk", lambda: torch.topk(rand(n, 1024, dtype=torch.float32), 8, dim=-1))
        run("flag_gems index_select", lambda: torch.index_select(a(), 0, torch.randint(0, n, (n // 2,), device=DEV)))
        run("flag_gems gather", lambda: torch.gather(a(), 1, torch.randint(0, n, (n, 64), device=DEV)))
        run("flag_gems embedding", lambda: torch.nn.functional.embedding(
            torch.randint(0, VOCAB, (TOK,), device=DEV), rand(VOCAB, HID)))
        run("flag_gems masked_fill", lambda: a().masked_fill(a() > 0.5, 0.0))
        run("flag_gems dropout", lambda: torch.nn.functional.dropout(a(), 0.1, True))
        run("flag_gems mm", lambda: torch.mm(a(torch.float16), a(torch.float16)))
        run("flag_gems bmm", lambda: torch.bmm(rand(8, n // 2, n // 4, dtype=torch.float16),
                                               rand(8, n // 4, n // 2, dtype=torch.float16)))
        run("flag_gems addmm", lambda: torch.addmm(rand(n, dtype=torch.float16), a(torch.float16), a(torch.float16)))
        run("flag_gems sdpa", lambda: torch.nn.functional.scaled_dot_product_attention(
            rand(2, 16, 1024, 128, dtype=torch.float16), rand(2, 16, 1024, 128, dtype=torch.float16),
            rand(2, 16, 1024, 128, dtype=torch.float16), is_causal=True))


for lib, fn in (("liger", liger_ops), ("fla", fla_ops), ("flag_gems", flag_gems_ops)):
    if lib in WANT:
        run(f"import {lib}", fn)
print(f"library_ops: {len(failed)} skipped: {', '.join(failed) if failed else 'none'}")
