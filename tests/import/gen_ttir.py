#!/usr/bin/env python3
# Writes tests/import/ttir/*.ttir: the TTIR that Triton prints after its `ttir` stage for the
# kernels of tests/import/kernels.py, compiled for an explicit target (sm_90) so that no GPU is
# needed. Run it from the repository root with a Python that has `triton` (3.x) installed:
#   python3 tests/import/gen_ttir.py
# Locations in the output name the kernels' file relative to the repository root
# (tests/import/kernels.py) instead of its absolute path, so the fixtures do not depend on where
# the tree was checked out, and Triton's own files (code inlined from triton.language) relative to
# its package ("triton/language/standard.py"). Nothing else is changed.
import os
import sys

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "0")

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import kernels as K  # noqa: E402

DIV16 = [["tt.divisibility", 16]]


def ptrs_div16(sig):
    # tt.divisibility=16 on every pointer argument, as Triton's launcher specializes 16-byte
    # aligned tensors.
    names = list(sig)
    return {(names.index(k), ): DIV16 for k, v in sig.items() if v.startswith("*")}


FIXTURES = [
    ("vadd", K.add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 64}, {}),
    ("softmax", K.softmax_kernel, {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_row_stride": "i32",
                                   "out_row_stride": "i32", "n_rows": "i32", "n_cols": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 128}, {}),
    ("layer_norm_fwd", K.layer_norm_fwd_kernel, {"X": "*fp32", "Y": "*fp32", "W": "*fp32", "B": "*fp32",
                                                 "Mean": "*fp32", "Rstd": "*fp32", "stride": "i32", "N": "i32",
                                                 "eps": "fp32", "BLOCK": "constexpr"}, {"BLOCK": 32}, {}),
    ("matmul", K.matmul_kernel, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
                                 "K": "i32", "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32",
                                 "stride_bn": "i32", "stride_cm": "i32", "stride_cn": "i32",
                                 "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr",
                                 "GROUP_M": "constexpr", "ACTIVATION": "constexpr"},
     {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2, "ACTIVATION": "leaky_relu"}, {}),
    # The same kernel on f32 inputs, where tl.dot's default input precision is tf32.
    ("matmul_tf32", K.matmul_kernel, {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp16", "M": "i32", "N": "i32",
                                      "K": "i32", "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32",
                                      "stride_bn": "i32", "stride_cm": "i32", "stride_cn": "i32",
                                      "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr",
                                      "GROUP_M": "constexpr", "ACTIVATION": "constexpr"},
     {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2, "ACTIVATION": ""}, {}),
    ("gelu", K.gelu_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "y_tanh_ptr": "*fp32", "n": "i32",
                             "BLOCK": "constexpr"}, {"BLOCK": 64}, {}),
    ("reduce_scan", K.reduce_scan_kernel, {"x_ptr": "*fp32", "sum_ptr": "*fp32", "max_ptr": "*fp32",
                                           "argmax_ptr": "*i32", "cumsum_ptr": "*fp32", "cumprod_ptr": "*fp32",
                                           "icum_ptr": "*i32", "n_cols": "i32", "stride": "i32",
                                           "BLOCK": "constexpr"}, {"BLOCK": 64}, {}),
    ("atomics", K.atomics_kernel, {"x_ptr": "*i32", "bins_ptr": "*i32", "max_ptr": "*i32", "flag_ptr": "*i32",
                                   "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 32}, {}),
    ("attn_fwd", K.attn_fwd_kernel, {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32",
                                     "seq_len": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
                                     "HEAD_DIM": "constexpr"}, {"BLOCK_M": 16, "BLOCK_N": 16, "HEAD_DIM": 16}, {}),
    ("checked_sqrt", K.checked_sqrt_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 32}, {"debug": True}),
    ("dropout", K.seeded_dropout_kernel, {"x_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32", "p": "fp32",
                                          "seed": "i32", "BLOCK_SIZE": "constexpr"}, {"BLOCK_SIZE": 64}, {}),
    ("layer_norm_bwd_dx", K.layer_norm_bwd_dx_kernel,
     {"DX": "*fp32", "DY": "*fp32", "DW": "*fp32", "DB": "*fp32", "X": "*fp32", "W": "*fp32", "Mean": "*fp32",
      "Rstd": "*fp32", "Lock": "*i32", "stride": "i32", "N": "i32", "GROUP_SIZE_M": "constexpr",
      "BLOCK_SIZE_N": "constexpr"}, {"GROUP_SIZE_M": 4, "BLOCK_SIZE_N": 128}, {}),
    ("layer_norm_bwd_dwdb", K.layer_norm_bwd_dwdb_kernel,
     {"DW": "*fp32", "DB": "*fp32", "FINAL_DW": "*fp32", "FINAL_DB": "*fp32", "M": "i32", "N": "i32",
      "BLOCK_SIZE_M": "constexpr", "BLOCK_SIZE_N": "constexpr"}, {"BLOCK_SIZE_M": 4, "BLOCK_SIZE_N": 32}, {}),
    ("control", K.control_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "steps_ptr": "*i32", "n": "i32",
                                   "BLOCK": "constexpr"}, {"BLOCK": 16}, {}),
]


def main():
    out_dir = os.path.join(HERE, "ttir")
    os.makedirs(out_dir, exist_ok=True)
    target = GPUTarget("cuda", 90, 32)
    kernels_abs = os.path.join(HERE, "kernels.py")
    triton_dir = os.path.dirname(os.path.abspath(triton.__file__))
    for name, fn, sig, constexprs, options in FIXTURES:
        src = triton.compiler.ASTSource(fn, sig, constexprs, ptrs_div16(sig))
        compiled = triton.compile(src, target=target, options=options or None)
        text = compiled.asm["ttir"]
        text = text.replace('"' + kernels_abs + '"', '"tests/import/kernels.py"')
        text = text.replace('"' + triton_dir + '/', '"triton/')
        header = "// TTIR of kernels.py:%s, printed by Triton %s for cuda sm_90 (tests/import/gen_ttir.py)\n" % (
            fn.__name__, triton.__version__)
        with open(os.path.join(out_dir, name + ".ttir"), "w") as f:
            f.write(header + text)
        print("wrote", os.path.relpath(os.path.join(out_dir, name + ".ttir"), ROOT))


if __name__ == "__main__":
    main()
