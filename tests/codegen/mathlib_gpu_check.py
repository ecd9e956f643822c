#!/usr/bin/env python3
"""The GPU math library on a real GPU, bit for bit against its host build (not run by CTest:
CI has no GPU). Two steps:

  python3 tests/codegen/mathlib_gpu_check.py prepare DIR [--tri build-dev/tools/tri]
      on the build machine: one kernel per math op / math_call name and float type
      (out[i] = f(x[i]) or f(x[i], y[i])), compiled by `tri compile --target sm_90` to PTX and a
      launch descriptor in DIR, with a copy of src/codegen/mathlib and this script;
  python3 DIR/mathlib_gpu_check.py run
      on a machine with a GPU, numpy, CuPy and gcc: builds the library for the host
      (-ffp-contract=off), runs every kernel on 2^18 inputs (random bit patterns over every
      exponent, specials, uniform in [-10, 10]) and prints, per function, how many results differ
      from the host build and by how many ulp. NaN matches NaN (payloads are unspecified).

f32 exp, exp2, log, log2 and tanh are emitted inline (codegen/vec_math.h), not by the library:
they are expected to differ from the library's f32 functions by up to an ulp or two."""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

KERNEL = """kernel @k(%x: ptr<T>, %y: ptr<T>, %out: ptr<T>, %n: i32) constexpr(BLOCK: i32 = 256) {
  %pid = program_id[axis=0] : i32
  %bs = const[value=BLOCK] : i32
  %start = mul %pid, %bs : i32
  %range = arange[start=0, end=BLOCK] : <BLOCK x i32>
  %startv = splat %start : <BLOCK x i32>
  %offs = add %startv, %range : <BLOCK x i32>
  %nv = splat %n : <BLOCK x i32>
  %mask = cmp[pred=slt] %offs, %nv : <BLOCK x i1>
  %xb = splat %x : <BLOCK x ptr<T>>
  %xp = addptr %xb, %offs : <BLOCK x ptr<T>>
  %yb = splat %y : <BLOCK x ptr<T>>
  %yp = addptr %yb, %offs : <BLOCK x ptr<T>>
  %xv = load %xp, mask=%mask : <BLOCK x T>
  %yv = load %yp, mask=%mask : <BLOCK x T>
  %r = EXPR : <BLOCK x T>
  %ob = splat %out : <BLOCK x ptr<T>>
  %op = addptr %ob, %offs : <BLOCK x ptr<T>>
  store %op, %r, mask=%mask
  return
}
"""

DRIVER = r"""#include <string.h>
#include "tri_mathlib.h"
typedef double (*u64)(double); typedef float (*u32)(float);
typedef double (*b64)(double, double); typedef float (*b32)(float, float);
#define U(n) {#n, __tri_##n, __tri_##n##f, 0, 0},
#define B(n) {#n, 0, 0, __tri_##n, __tri_##n##f},
static const struct { const char* name; u64 f; u32 g; b64 h; b32 k; } T[] = {
  TRI_MATHLIB_UNARY(U) TRI_MATHLIB_BINARY(B) {"frem", 0, 0, __tri_fmod, __tri_fmodf}
};
int run(const char* name, int f32, const void* x, const void* y, void* out, int n) {
  for (unsigned i = 0; i < sizeof T / sizeof T[0]; ++i) {
    if (strcmp(T[i].name, name)) continue;
    for (int j = 0; j < n; ++j) {
      if (f32) ((float*)out)[j] = T[i].g ? T[i].g(((const float*)x)[j]) : T[i].k(((const float*)x)[j], ((const float*)y)[j]);
      else ((double*)out)[j] = T[i].f ? T[i].f(((const double*)x)[j]) : T[i].h(((const double*)x)[j], ((const double*)y)[j]);
    }
    return 0;
  }
  return -1;
}
"""


def functions(root):
    ops = [(o, 1, "op") for o in ["exp", "exp2", "log", "log2", "sin", "cos", "tanh", "erf"]]
    ops += [("pow", 2, "op"), ("frem", 2, "op")]
    for line in open(os.path.join(root, "src/ir/math_fns.def")):
        if line.startswith("TRI_MATH_FN("):
            name, arity = line[len("TRI_MATH_FN("):].split(")")[0].split(", ")
            ops.append((name, int(arity), "call"))
    return ops


def prepare(out, tri):
    root = os.path.dirname(os.path.dirname(HERE))
    os.makedirs(os.path.join(out, "lib"), exist_ok=True)
    fns = functions(root)
    for ty in ("f32", "f64"):
        for name, arity, kind in fns:
            expr = (name if kind == "op" else 'math_call[name="%s"]' % name) + " %xv" + (", %yv" if arity == 2 else "")
            src = os.path.join(out, "%s_%s.tri" % (name, ty))
            open(src, "w").write(KERNEL.replace("EXPR", expr).replace("<T>", "<%s>" % ty).replace(" T>", " %s>" % ty))
            base = src[:-4]
            subprocess.check_call([tri, "compile", src, "--target", "sm_90", "-o", base + ".ptx", "--meta", base + ".json"])
    json.dump([f[0] for f in fns], open(os.path.join(out, "fns.json"), "w"))
    lib = os.path.join(root, "src/codegen/mathlib")
    for f in os.listdir(lib):
        if f.endswith(".c") or f.endswith(".h"):
            shutil.copy(os.path.join(lib, f), os.path.join(out, "lib", f))
    open(os.path.join(out, "lib", "driver.c"), "w").write(DRIVER)
    shutil.copy(os.path.abspath(__file__), os.path.join(out, "mathlib_gpu_check.py"))
    print("prepared %d kernels in %s" % (2 * len(fns), out))


def run():
    import ctypes
    import numpy as np
    import cupy as cp
    so = "/tmp/tri_hostmath.so"
    libdir = os.path.join(HERE, "lib")
    srcs = [os.path.join(libdir, f) for f in os.listdir(libdir) if f.endswith(".c")]
    subprocess.check_call(["gcc", "-std=c11", "-O2", "-ffp-contract=off", "-fno-math-errno", "-shared", "-fPIC",
                           "-o", so] + srcs + ["-lm"])
    lib = ctypes.CDLL(so)
    fns = json.load(open(os.path.join(HERE, "fns.json")))
    rng = np.random.default_rng(1)
    n = 1 << 18

    def inputs(dt):
        ib = np.uint64 if dt == np.float64 else np.uint32
        a = rng.integers(0, np.iinfo(ib).max, size=n // 2, dtype=ib, endpoint=True).view(dt)
        b = (rng.random(n // 2) * 20 - 10).astype(dt)
        tiny = 1e-310 if dt == np.float64 else 1e-40
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, tiny], dtype=dt)
        x = np.concatenate([a, b])
        x[:len(specials)] = specials
        return x

    total = 0
    for ty, dt, ib in (("f32", np.float32, np.int32), ("f64", np.float64, np.int64)):
        ub = np.uint32 if dt == np.float32 else np.uint64
        for name in fns:
            x, y = inputs(dt), inputs(dt)
            host = np.empty_like(x)
            lib.run(name.encode(), ctypes.c_int(ty == "f32"), x.ctypes.data_as(ctypes.c_void_p),
                    y.ctypes.data_as(ctypes.c_void_p), host.ctypes.data_as(ctypes.c_void_p), ctypes.c_int(n))
            meta = json.load(open(os.path.join(HERE, "%s_%s.json" % (name, ty))))
            k = cp.RawModule(path=os.path.join(HERE, "%s_%s.ptx" % (name, ty))).get_function(meta["entry"])
            dx, dy = cp.asarray(x), cp.asarray(y)
            do = cp.zeros_like(dx)
            k(((n + 255) // 256,), tuple(meta["block"]), (dx, dy, do, np.int32(n)), shared_mem=meta["shared_bytes"])
            gpu = cp.asnumpy(do)
            same = (gpu.view(ub) == host.view(ub)) | (np.isnan(gpu) & np.isnan(host))

            def ordered(v):
                i = v.view(ib).astype(np.int64)
                return np.where(i < 0, np.int64(np.iinfo(ib).min) - i, i)

            d = np.where(same, 0, np.abs(ordered(gpu) - ordered(host)))
            bad = int((~same).sum())
            line = "%-9s %s: %d points, %d differ from the host build, max %d ulp" % (name, ty, n, bad, int(d.max()))
            if bad:
                j = int(np.argmax(d))
                line += " (x=%r y=%r gpu=%r host=%r)" % (x[j], y[j], gpu[j], host[j])
            print(line, flush=True)
            total += bad
    print("total differing: %d" % total)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "prepare":
        tri = sys.argv[sys.argv.index("--tri") + 1] if "--tri" in sys.argv else "build-dev/tools/tri"
        prepare(sys.argv[2], tri)
    elif len(sys.argv) == 2 and sys.argv[1] == "run":
        run()
    else:
        sys.exit(__doc__)
