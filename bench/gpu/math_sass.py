#!/usr/bin/env python3
"""SASS instruction counts of each f32 math function: Tri's against Triton's (libdevice and tl.*).

No GPU needed. For each function, a kernel that applies it to one loaded f32 block (one element
per thread: BLOCK = 128, 4 warps) is compiled by Tri (`tri compile --target sm_90`, then ptxas)
and by Triton (triton.compile of a @triton.jit kernel calling libdevice's function, and tl.*'s
where Triton has its own); cuobjdump disassembles both. Each count is the kernel's SASS
instructions (NOPs and the closing self-branch left out) less those of the same kernel with x + x
in place of the function (each adds y to the result, so both inputs stay live), so it is the
function's own cost less one instruction: "all" counts every
instruction, cold paths included (division and sqrt slow paths, Tri's f64 fallbacks of sin and
cos for huge arguments), "main" those before the kernel's first unconditional EXIT, which is
what a thread with an ordinary argument runs through. "f64" counts double-precision
instructions, "mufu" the special-function unit's (ex2, rcp, rsq, lg2, sin, cos).

usage: python3 bench/gpu/math_sass.py [--tri build/tools/tri] [--only asin,log] [--no-triton]
prints a markdown table (docs/codegen.md, "The math library", has one).
"""
import argparse
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

TRI_KERNEL = """kernel @k(%x: ptr<f32>, %y: ptr<f32>, %out: ptr<f32>, %n: i32, %ni: i32) constexpr(BLOCK: i32 = 128) {
  %pid = program_id[axis=0] : i32
  %bs = const[value=BLOCK] : i32
  %start = mul %pid, %bs : i32
  %range = arange[start=0, end=BLOCK] : <BLOCK x i32>
  %startv = splat %start : <BLOCK x i32>
  %offs = add %startv, %range : <BLOCK x i32>
  %nv = splat %n : <BLOCK x i32>
  %mask = cmp[pred=slt] %offs, %nv : <BLOCK x i1>
  %xb = splat %x : <BLOCK x ptr<f32>>
  %xp = addptr %xb, %offs : <BLOCK x ptr<f32>>
  %yb = splat %y : <BLOCK x ptr<f32>>
  %yp = addptr %yb, %offs : <BLOCK x ptr<f32>>
  %xv = load %xp, mask=%mask : <BLOCK x f32>
  %yv = load %yp, mask=%mask : <BLOCK x f32>
  %three = const[value=3.0] : <BLOCK x f32>
  %nis = splat %ni : <BLOCK x i32>
  %nf = sitofp %nis : <BLOCK x f32>
  EXPR
  %r = add %f, %yv : <BLOCK x f32>
  %ob = splat %out : <BLOCK x ptr<f32>>
  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>
  store %op, %r, mask=%mask
  return
}
"""

TRITON_KERNEL = """import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def k(x_ptr, y_ptr, o_ptr, n, ni, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    r = EXPR
    tl.store(o_ptr + offs, r, mask=m)
"""

OPS = {"exp", "exp2", "log", "log2", "sin", "cos", "tanh", "erf"}
# name: (Tri expression, Triton libdevice expression, Triton tl.* expression or None)
FUNCS = {
    "identity": ("%f = add %xv, %xv : <BLOCK x f32>", "x + x + y", None),
}
for f in ["exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
          "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "lgamma", "tgamma", "cbrt"]:
    tri = ("%f = " + f if f in OPS else '%f = math_call[name="' + f + '"]') + " %xv : <BLOCK x f32>"
    tl_fn = "tl.%s(x) + y" % f if f in {"exp", "exp2", "log", "log2", "sin", "cos", "erf"} else None
    FUNCS[f] = (tri, "libdevice.%s(x) + y" % f, tl_fn)
FUNCS["pow"] = ("%f = pow %xv, %yv : <BLOCK x f32>", "libdevice.pow(x, y) + y", None)
for f in ["atan2", "hypot"]:
    FUNCS[f] = ('%f = math_call[name="' + f + '"] %xv, %yv : <BLOCK x f32>', "libdevice.%s(x, y) + y" % f, None)
# x^3 with a constant exponent (libdevice's __nv_powif with a constant int) and x^n with a runtime n
FUNCS["powi3"] = ("%f = pow %xv, %three : <BLOCK x f32>", "libdevice.pow(x, 3) + y", None)
FUNCS["powi_n"] = ("%f = pow %xv, %nf : <BLOCK x f32>", "libdevice.pow(x, ni) + y", None)


def tool(name):
    import triton
    p = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin", name)
    return p if os.path.exists(p) else name


def count(cubin):
    sass = subprocess.run([tool("cuobjdump"), "-sass", cubin], check=True, capture_output=True, text=True).stdout
    ins = []
    for line in sass.splitlines():
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", line)
        if m:
            ins.append(m.group(1))
    while ins and (ins[-1].startswith("NOP") or re.match(r"BRA (0x[0-9a-f]+|`\(\.L_x_\d+\))$", ins[-1])):
        ins.pop()
    ins = [i for i in ins if not i.startswith("NOP")]
    main = len(ins)
    for j, i in enumerate(ins):
        if i == "EXIT":
            main = j + 1
            break

    def op(i):
        return re.sub(r"^@!?U?P\w+\s+", "", i).split()[0]

    def is_f64(o):  # double-precision arithmetic, or a conversion to or from f64
        return o.split(".")[0] in ("DFMA", "DADD", "DMUL", "DSETP", "DMNMX", "DSET", "DMMA") or \
            (o.split(".")[0] in ("F2F", "F2I", "I2F", "FRND") and ".F64" in o)

    f64 = sum(1 for i in ins if is_f64(op(i)))
    mufu = sum(1 for i in ins if op(i).startswith("MUFU"))
    return {"all": len(ins), "main": main, "f64": f64, "mufu": mufu}


def tri_counts(tri, expr, work):
    src = os.path.join(work, "k.tri")
    open(src, "w").write(TRI_KERNEL.replace("EXPR", expr))
    ptx, cubin = os.path.join(work, "k.ptx"), os.path.join(work, "k.cubin")
    subprocess.run([tri, "compile", src, "--target", "sm_90", "--num-warps", "4", "-o", ptx], check=True)
    subprocess.run([tool("ptxas"), "-arch=sm_90", ptx, "-o", cubin], check=True)
    return count(cubin)


def triton_counts(expr, work, tag):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    path = os.path.join(work, "tk_%s.py" % tag)
    open(path, "w").write(TRITON_KERNEL.replace("EXPR", expr))
    spec = importlib.util.spec_from_file_location("tk_%s" % tag, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "o_ptr": "*fp32", "n": "i32", "ni": "i32", "BLOCK": "constexpr"}
    src = ASTSource(fn=mod.k, signature=sig, constexprs={(5,): 128})
    ck = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(num_warps=4))
    cubin = os.path.join(work, "tk_%s.cubin" % tag)
    open(cubin, "wb").write(ck.asm["cubin"])
    return count(cubin)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tri", default=os.path.join(ROOT, "build/tools/tri"))
    ap.add_argument("--only", default="")
    ap.add_argument("--no-triton", action="store_true")
    args = ap.parse_args()
    names = [n for n in FUNCS if n != "identity"]
    if args.only:
        names = args.only.split(",")
    with tempfile.TemporaryDirectory() as work:
        base_tri = tri_counts(args.tri, FUNCS["identity"][0], work)
        base_tt = None if args.no_triton else triton_counts(FUNCS["identity"][1], work, "identity")

        def fmt(c, base):
            if c is None:
                return "-"
            s = "%d / %d" % (c["all"] - base["all"], c["main"] - base["main"])
            extra = []
            if c["mufu"] - base["mufu"]:
                extra.append("%d mufu" % (c["mufu"] - base["mufu"]))
            if c["f64"] - base["f64"]:
                extra.append("%d f64" % (c["f64"] - base["f64"]))
            return s + (" (" + ", ".join(extra) + ")" if extra else "")

        print("| function | Tri: all / main | Triton libdevice: all / main | Triton tl.*: all / main |")
        print("| --- | --- | --- | --- |")
        for name in names:
            tri_e, ld_e, tl_e = FUNCS[name]
            t = tri_counts(args.tri, tri_e, work)
            ld = tl = None
            if not args.no_triton:
                ld = triton_counts(ld_e, work, name + "_ld")
                if tl_e:
                    tl = triton_counts(tl_e, work, name + "_tl")
            print("| `%s` | %s | %s | %s |" % (name, fmt(t, base_tri), fmt(ld, base_tt), fmt(tl, base_tt)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
