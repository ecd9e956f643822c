"""A minimal ctypes view of libtri for the GPU benchmarks: load IR, compile for "cuda", launch on
a torch stream with torch tensors as device buffers. (bindings/python is the full binding; this
file keeps the benchmark independent of it.)"""
import ctypes
import os
import re


class TriArg(ctypes.Structure):
    class _V(ctypes.Union):
        _fields_ = [("i", ctypes.c_int64), ("f", ctypes.c_double), ("p", ctypes.c_void_p)]

    _fields_ = [("value", _V), ("extent", ctypes.c_uint64), ("kind", ctypes.c_int32), ("dtype", ctypes.c_int32)]


DTYPES = {"i1": 0, "i8": 1, "i16": 2, "i32": 3, "i64": 4, "f16": 5, "bf16": 6, "f32": 7, "f64": 8}
TORCH_DTYPES = {"torch.float32": "f32", "torch.float16": "f16", "torch.bfloat16": "bf16", "torch.int32": "i32",
                "torch.int64": "i64", "torch.int8": "i8", "torch.bool": "i1", "torch.float64": "f64"}


# The stages of a compile that Tri's TRI_LOG_DEBUG timing lines report (docs/capi.md).
STAGES = ("passes", "lower", "O3", "print", "NVPTX codegen", "driver jit", "disk cache store")


def stage_times(lines):
    """The per-stage milliseconds of one compile, from Tri's TRI_LOG_DEBUG timing lines."""
    out = {}
    for line in lines:
        for st in STAGES:
            for m in re.finditer(r"(?:^|[ (,:])" + re.escape(st) + r" ([0-9.]+)(?: ms)?", line):
                out[st] = out.get(st, 0.0) + float(m.group(1))
    return out


class Tri:
    LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p)

    def __init__(self, path=None, log=None, cache_dir=None):
        """log: None, or a function of (level, message) that receives every message up to
        TRI_LOG_DEBUG (the per-stage compile times among them). cache_dir: the disk cache's
        directory ("" turns it off; None: Tri's default)."""
        path = path or os.environ.get("TRI_LIB", "build/src/libtri.so")
        self.lib = ctypes.CDLL(os.path.abspath(path))
        L = self.lib
        L.tri_version.restype = ctypes.c_uint32
        L.tri_last_error_message.restype = ctypes.c_size_t
        L.tri_last_error_message.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        L.tri_blob_data.restype = ctypes.c_void_p
        L.tri_blob_size.restype = ctypes.c_size_t
        L.tri_launch.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p,
                                 ctypes.POINTER(TriArg), ctypes.c_uint32]
        ver = L.tri_version()
        self.ctx = ctypes.c_void_p()
        opts = None
        if log or cache_dir is not None:
            opts = ctypes.c_void_p()
            self._check(L.tri_context_options_create(ctypes.byref(opts)))
        if log:
            self._sink = Tri.LOG_FN(lambda user, level, msg: log(level, msg.decode()))
            self._check(L.tri_context_options_set_log(opts, self._sink, None, ctypes.c_int32(3)))
        if cache_dir is not None:
            self._check(L.tri_context_options_set_cache_dir(opts, cache_dir.encode()))
        self._check(L.tri_context_create(opts, ctypes.c_uint32(ver), ctypes.byref(self.ctx)))
        if opts:
            L.tri_context_options_destroy(opts)

    def _check(self, rc):
        if rc != 0:
            n = self.lib.tri_last_error_message(None, 0)
            buf = ctypes.create_string_buffer(n)
            self.lib.tri_last_error_message(buf, n)
            raise RuntimeError(buf.value.decode())

    def module(self, text, name="kernel.tri"):
        m = ctypes.c_void_p()
        data = text.encode() if isinstance(text, str) else text
        self._check(self.lib.tri_module_create(self.ctx, data, ctypes.c_size_t(len(data)), name.encode(),
                                               ctypes.byref(m)))
        return m

    def compile(self, module, kernel, consts=None, num_warps=4, target="cuda", arch=None, facts=(), num_stages=0):
        L = self.lib
        o = ctypes.c_void_p()
        self._check(L.tri_compile_options_create(ctypes.byref(o)))
        self._check(L.tri_compile_options_set_target(o, target.encode()))
        self._check(L.tri_compile_options_set_num_warps(o, ctypes.c_int32(num_warps)))
        self._check(L.tri_compile_options_set_num_stages(o, ctypes.c_int32(num_stages)))
        if arch:
            self._check(L.tri_compile_options_set_arch(o, arch.encode()))
        for k, v in (consts or {}).items():
            self._check(L.tri_compile_options_set_constexpr_int(o, k.encode(), ctypes.c_int64(v)))
        for param, align, divisible in facts:
            if align:
                self._check(L.tri_compile_options_set_arg_align(o, ctypes.c_uint32(param), ctypes.c_uint32(align)))
            if divisible:
                self._check(L.tri_compile_options_set_arg_divisible(o, ctypes.c_uint32(param), ctypes.c_uint32(divisible)))
        k = ctypes.c_void_p()
        try:
            self._check(L.tri_kernel_compile(module, kernel.encode(), o, ctypes.byref(k)))
        finally:
            L.tri_compile_options_destroy(o)
        return Kernel(self, k)


class Kernel:
    def __init__(self, tri, handle):
        self.tri, self.k = tri, handle

    def code(self, kind):
        b = ctypes.c_void_p()
        self.tri._check(self.tri.lib.tri_kernel_code(self.k, kind.encode(), ctypes.byref(b)))
        L = self.tri.lib
        data = ctypes.string_at(L.tri_blob_data(b), L.tri_blob_size(b))
        L.tri_blob_destroy(b)
        return data.decode()

    def args(self, *values):
        """Arguments from torch tensors (device pointers) and (dtype, value) scalar pairs."""
        arr = (TriArg * len(values))()
        for i, v in enumerate(values):
            a = arr[i]
            if hasattr(v, "data_ptr"):
                a.kind = 1
                a.dtype = DTYPES[TORCH_DTYPES[str(v.dtype)]]
                a.value.p = v.data_ptr()
                a.extent = v.numel() * v.element_size()
            else:
                dt, x = v
                a.kind = 0
                a.dtype = DTYPES[dt]
                if dt.startswith("f"):
                    a.value.f = float(x)
                else:
                    a.value.i = int(x)
        return arr

    def launch(self, grid, args, stream=0):
        g = tuple(grid) + (1,) * (3 - len(grid))
        self.tri._check(self.tri.lib.tri_launch(self.k, g[0], g[1], g[2], ctypes.c_void_p(stream), args, len(args)))

