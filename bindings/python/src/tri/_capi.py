"""The C API through ctypes: finding libtri, the constants of tri.h and the prototype of every
function this package calls. tests/test_capi_signatures.py checks each prototype and constant
against include/tri/tri.h, so a change to the header shows up there before it shows up as a
crash.

libtri is looked for, in order: the file named by the TRI_LIBRARY environment variable; a
libtri.so placed in this package's folder (a wheel that bundles it); the system's library path.
When none loads, the package still imports and the first call into the library raises the
ImportError naming what was tried. TRI_LIBRARY may name libtri_rt.so, the runtime without a
compiler (docs/aot.md): the functions it lacks (tri.h's TRI_COMPILER ones) then raise
TriError(UNSUPPORTED) naming the function, and packages load and launch as with libtri.
"""

import ctypes
import ctypes.util
import os
from typing import List

# The header version this package was written against (tri_context_create checks it).
TRI_VERSION_MAJOR = 0
TRI_VERSION_MINOR = 2
TRI_VERSION_PATCH = 0
TRI_VERSION_NUMBER = TRI_VERSION_MAJOR * 10000 + TRI_VERSION_MINOR * 100 + TRI_VERSION_PATCH

TRI_OK = 0
TRI_ERROR_INVALID_ARGUMENT = 1
TRI_ERROR_PARSE = 2
TRI_ERROR_VERIFY = 3
TRI_ERROR_CORRUPT_BINARY = 4
TRI_ERROR_UNSUPPORTED_VERSION = 5
TRI_ERROR_NOT_FOUND = 6
TRI_ERROR_LIMIT_EXCEEDED = 7
TRI_ERROR_OUT_OF_MEMORY = 8
TRI_ERROR_SPECIALIZE = 9
TRI_ERROR_LAUNCH_ARGS = 10
TRI_ERROR_UNSUPPORTED = 11
TRI_ERROR_COMPILE = 12
TRI_ERROR_RUNTIME = 13
TRI_ERROR_IO = 14
TRI_ERROR_INTERNAL = 15
TRI_ERROR_CANCELLED = 16
TRI_ERROR_UNTRUSTED = 17

TRI_LOG_ERROR = 0
TRI_LOG_WARNING = 1
TRI_LOG_INFO = 2
TRI_LOG_DEBUG = 3

TRI_FUNCTION_KERNEL = 0
TRI_FUNCTION_DEVICE = 1
TRI_PARAM_VALUE = 0
TRI_PARAM_CONSTEXPR = 1
TRI_TYPE_SCALAR = 0
TRI_TYPE_POINTER = 1
TRI_TYPE_BLOCK = 2

TRI_DTYPE_I1 = 0
TRI_DTYPE_I8 = 1
TRI_DTYPE_I16 = 2
TRI_DTYPE_I32 = 3
TRI_DTYPE_I64 = 4
TRI_DTYPE_F16 = 5
TRI_DTYPE_BF16 = 6
TRI_DTYPE_F32 = 7
TRI_DTYPE_F64 = 8
TRI_DTYPE_F8E4M3 = 9
TRI_DTYPE_F8E5M2 = 10

TRI_CACHE_STAT_HITS = 0
TRI_CACHE_STAT_MISSES = 1
TRI_CACHE_STAT_STORES = 2
TRI_CACHE_STAT_BYTES_READ = 3
TRI_CACHE_STAT_BYTES_WRITTEN = 4
TRI_CACHE_STAT_EVICTIONS = 5
TRI_CACHE_STAT_CORRUPT = 6
TRI_CACHE_STAT_WRITE_FAILURES = 7
TRI_CACHE_STAT_LOCK_WAITS = 8
TRI_CACHE_STAT_ENTRIES = 9
TRI_CACHE_STAT_BYTES = 10
TRI_CACHE_STAT_MAX_BYTES = 11
TRI_CACHE_STAT_ENABLED = 12
TRI_TUNE_STAGE_COMPILE = 0
TRI_TUNE_STAGE_BENCHMARK = 1
TRI_TUNE_FROZEN = 1
TRI_TUNE_RETUNE = 2
TRI_TUNE_USE_OTHER_DEVICE = 4
TRI_TUNE_STAT_TRIALS = 0
TRI_TUNE_STAT_STORED = 1
TRI_TUNE_STAT_DEFAULTS = 2
TRI_TUNE_STAT_PRUNED = 3
TRI_TUNE_STAT_OTHER_DEVICE = 4

TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MAJOR = 0
TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MINOR = 1
TRI_DEVICE_ATTR_SM_COUNT = 2
TRI_DEVICE_ATTR_SHARED_PER_BLOCK = 3
TRI_DEVICE_ATTR_SHARED_PER_BLOCK_OPTIN = 4
TRI_DEVICE_ATTR_SHARED_PER_SM = 5
TRI_DEVICE_ATTR_L2_SIZE = 6
TRI_DEVICE_ATTR_MAX_THREADS_PER_BLOCK = 7
TRI_DEVICE_ATTR_WARP_SIZE = 8
TRI_DEVICE_ATTR_DRIVER_VERSION = 9
TRI_DEVICE_ATTR_MAX_PTX_VERSION = 10

TRI_TEAM_ID_BYTES = 128


class ArgValue(ctypes.Union):
    _fields_ = [("i", ctypes.c_int64), ("f", ctypes.c_double), ("p", ctypes.c_void_p)]


class Arg(ctypes.Structure):
    """tri_arg: 24 bytes, frozen for the 0.x ABI."""
    _fields_ = [("value", ArgValue), ("extent", ctypes.c_uint64), ("kind", ctypes.c_int32), ("dtype", ctypes.c_int32)]


LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p)
TUNE_PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_int32,
                                    ctypes.c_double)
TUNE_GRID_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32))
TUNE_STAGE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_uint32, ctypes.c_uint32,
                                 ctypes.c_uint32, ctypes.c_int32, ctypes.c_double)

_p = ctypes.POINTER
_handle = ctypes.c_void_p
_out_handle = _p(ctypes.c_void_p)
_str = ctypes.c_char_p
_u32, _i32, _i64, _u64, _size = ctypes.c_uint32, ctypes.c_int32, ctypes.c_int64, ctypes.c_uint64, ctypes.c_size_t
_result = ctypes.c_int32

# name: (result type, argument types), in tri.h's order.
PROTOTYPES = {
    "tri_version": (_u32, []),
    "tri_result_name": (_str, [_result]),
    "tri_last_error_message": (_size, [ctypes.c_char_p, _size]),
    "tri_context_options_create": (_result, [_out_handle]),
    "tri_context_options_destroy": (None, [_handle]),
    "tri_context_options_set_log": (_result, [_handle, LOG_FN, ctypes.c_void_p, _i32]),
    "tri_context_options_set_cache_dir": (_result, [_handle, _str]),
    "tri_context_options_set_cache_max_bytes": (_result, [_handle, _u64]),
    "tri_context_options_set_interp_memory_limit": (_result, [_handle, _u64]),
    "tri_context_options_set_kernel_cache_capacity": (_result, [_handle, _u32]),
    "tri_context_create": (_result, [_handle, _u32, _out_handle]),
    "tri_context_destroy": (None, [_handle]),
    "tri_context_cancel": (_result, [_handle]),
    "tri_module_create": (_result, [_handle, ctypes.c_void_p, _size, _str, _out_handle]),
    "tri_module_destroy": (None, [_handle]),
    "tri_blob_data": (ctypes.c_void_p, [_handle]),
    "tri_blob_size": (_size, [_handle]),
    "tri_blob_destroy": (None, [_handle]),
    "tri_module_to_text": (_result, [_handle, _out_handle]),
    "tri_module_to_text_with_comments": (_result, [_handle, _out_handle]),
    "tri_module_to_binary": (_result, [_handle, _out_handle]),
    "tri_module_function_count": (_result, [_handle, _p(_u32)]),
    "tri_module_find_function": (_result, [_handle, _str, _p(_u32)]),
    "tri_module_function_name": (_result, [_handle, _u32, _p(_str)]),
    "tri_module_function_kind": (_result, [_handle, _u32, _p(_i32)]),
    "tri_module_param_count": (_result, [_handle, _u32, _p(_u32)]),
    "tri_module_param_name": (_result, [_handle, _u32, _u32, _p(_str)]),
    "tri_module_param_kind": (_result, [_handle, _u32, _u32, _p(_i32)]),
    "tri_module_param_type": (_result, [_handle, _u32, _u32, _p(_i32), _p(_i32), _p(_str)]),
    "tri_module_param_facts": (_result, [_handle, _u32, _u32, _p(_u32), _p(_u32), _p(_i32)]),
    "tri_module_param_default": (_result, [_handle, _u32, _u32, _p(_str)]),
    "tri_compile_options_create": (_result, [_out_handle]),
    "tri_compile_options_destroy": (None, [_handle]),
    "tri_compile_options_set_target": (_result, [_handle, _str]),
    "tri_compile_options_set_checked": (_result, [_handle, _i32]),
    "tri_compile_options_set_constexpr_int": (_result, [_handle, _str, _i64]),
    "tri_compile_options_set_constexpr_float": (_result, [_handle, _str, ctypes.c_double]),
    "tri_compile_options_set_num_warps": (_result, [_handle, _i32]),
    "tri_compile_options_set_num_stages": (_result, [_handle, _i32]),
    "tri_compile_options_set_launch_specialization": (_result, [_handle, _i32, _u32]),
    "tri_compile_options_set_arg_specialization": (_result, [_handle, _u32, _i32]),
    "tri_compile_options_set_arch": (_result, [_handle, _str]),
    "tri_compile_options_set_arg_align": (_result, [_handle, _u32, _u32]),
    "tri_compile_options_set_arg_divisible": (_result, [_handle, _u32, _u32]),
    "tri_kernel_compile": (_result, [_handle, _str, _handle, _out_handle]),
    "tri_kernel_destroy": (None, [_handle]),
    "tri_kernel_to_text": (_result, [_handle, _out_handle]),
    "tri_kernel_code": (_result, [_handle, _str, _out_handle]),
    "tri_kernel_variants": (_result, [_handle, _out_handle]),
    "tri_module_load_package": (_result, [_handle, ctypes.c_void_p, _size, _str, _out_handle]),
    "tri_module_kernel": (_result, [_handle, _str, _handle, _out_handle]),
    "tri_module_package_info": (_result, [_handle, _out_handle]),
    "tri_kernel_arg_count": (_result, [_handle, _p(_u32)]),
    "tri_launch": (_result, [_handle, _u32, _u32, _u32, ctypes.c_void_p, _p(Arg), _u32]),
    "tri_launch_plan_create": (_result, [_handle, _u32, _u32, _u32, ctypes.c_void_p, _p(Arg), _u32, _out_handle]),
    "tri_launch_plan_set_arg": (_result, [_handle, _u32, _p(Arg)]),
    "tri_launch_plan_set_grid": (_result, [_handle, _u32, _u32, _u32]),
    "tri_launch_plan_set_stream": (_result, [_handle, ctypes.c_void_p]),
    "tri_launch_plan_launch": (_result, [_handle]),
    "tri_launch_plan_destroy": (None, [_handle]),
    "tri_team_create": (_result, [_handle, _u32, _u64, _out_handle]),
    "tri_team_destroy": (None, [_handle]),
    "tri_team_alloc": (_result, [_handle, _u64, _p(_u64)]),
    "tri_team_free": (_result, [_handle, _u64]),
    "tri_team_ptr": (_result, [_handle, _u32, _u64, _p(ctypes.c_void_p)]),
    "tri_team_set_wait_timeout": (_result, [_handle, _u64]),
    "tri_team_launch": (_result, [_handle, _handle, _u32, _u32, _u32, _p(Arg), _u32]),
    "tri_team_make_id": (_result, [_handle, ctypes.c_void_p, _size]),
    "tri_team_join": (_result, [_handle, ctypes.c_void_p, _size, _u32, _u32, _u32, _u64, _out_handle]),
    "tri_team_rank": (_result, [_handle, _p(_u32), _p(_u32)]),
    "tri_team_barrier": (_result, [_handle]),
    "tri_team_launch_async": (_result, [_handle, _handle, _u32, _u32, _u32, _p(Arg), _u32, ctypes.c_void_p]),
    "tri_cache_dir": (_result, [_handle, _p(_str)]),
    "tri_cache_stat": (_result, [_handle, _i32, _p(_u64)]),
    "tri_cache_list": (_result, [_handle, _i32, _out_handle]),
    "tri_cache_prune": (_result, [_handle, _u64, _p(_u64)]),
    "tri_cache_export": (_result, [_handle, _str, _p(_u32)]),
    "tri_cache_import": (_result, [_handle, _str, _p(_u32)]),
    "tri_tune_space_create": (_result, [_out_handle]),
    "tri_tune_space_destroy": (None, [_handle]),
    "tri_tune_space_add_config": (_result, [_handle, _p(_str), _p(_i64), _u32, _i32, _i32, _p(_u32)]),
    "tri_tune_space_add_product": (_result, [_handle, _p(_str), _p(_p(_i64)), _p(_u32), _u32, _p(_i32), _u32,
                                             _p(_i32), _u32, _str, _p(_u32)]),
    "tri_tune_space_count": (_result, [_handle, _p(_u32)]),
    "tri_tune_space_value": (_result, [_handle, _u32, _str, _p(_i64)]),
    "tri_tune_space_set_key": (_result, [_handle, _p(_u32), _u32, _i32]),
    "tri_tune_space_set_progress": (_result, [_handle, TUNE_STAGE_FN, ctypes.c_void_p]),
    "tri_tune_space_set_repetitions": (_result, [_handle, _u32]),
    "tri_tune": (_result, [_handle, _str, _handle, _handle, _u32, _u32, _u32, ctypes.c_void_p, _p(Arg), _u32, _u32,
                           TUNE_PROGRESS_FN, TUNE_GRID_FN, ctypes.c_void_p, _out_handle, _out_handle]),
    "tri_tune_export": (_result, [_handle, _str, _p(_u32)]),
    "tri_tune_import": (_result, [_handle, _str, _p(_u32)]),
    "tri_tune_stat": (_result, [_handle, _i32, _p(_u64)]),
    "tri_tune_plot": (_result, [ctypes.c_void_p, _size, _str, _out_handle]),
    "tri_device_count": (_result, [_handle, _p(_u32)]),
    "tri_device_attribute": (_result, [_handle, _u32, _i32, _p(_i64)]),
    "tri_device_name": (_result, [_handle, _u32, ctypes.c_char_p, _size, _p(_size)]),
}


def _candidates() -> List[str]:
    out = []
    env = os.environ.get("TRI_LIBRARY")
    if env:
        out.append(env)
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("libtri.so", "libtri.so.0", "libtri.dylib", "tri.dll"):
        path = os.path.join(here, name)
        if os.path.exists(path):
            out.append(path)
    found = ctypes.util.find_library("tri")
    if found:
        out.append(found)
    out.append("libtri.so")
    return out


def load() -> ctypes.CDLL:
    tried = []
    for cand in _candidates():
        try:
            lib = ctypes.CDLL(cand)
        except OSError as e:
            tried.append(f"{cand} ({e})")
            if cand == os.environ.get("TRI_LIBRARY"):
                # An explicit choice that fails is an error, not a reason to take another library.
                raise ImportError(f"tri: TRI_LIBRARY names {cand}, which cannot be loaded: {e}") from e
            continue
        missing = []
        for name, (res, args) in PROTOTYPES.items():
            try:
                fn = getattr(lib, name)
            except AttributeError:
                missing.append(name)
                continue
            fn.restype = res
            fn.argtypes = args
        if missing and hasattr(lib, "tri_module_load_package") and not hasattr(lib, "tri_module_create"):
            # libtri_rt: the compiler's functions are absent by design; each says so when called.
            for name in missing:
                setattr(lib, name, _compiler_only(name, cand))
        elif missing:
            raise ImportError(f"tri: {cand} lacks {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}: "
                              "it is older than this package (build or install a newer Tri)")
        lib.tri_runtime_only = bool(missing)
        return lib
    raise ImportError("tri: libtri could not be loaded; set TRI_LIBRARY to the libtri.so file, put libtri.so in "
                      "the tri package's folder, or install it on the library path. Tried: " + "; ".join(tried))


# Set by the package's __init__ to a function of (code, message) making its TriError.
make_error = None


def _compiler_only(name: str, path: str):
    """Stands in for a compiler function libtri_rt does not have."""

    def call(*_args):
        raise make_error(TRI_ERROR_UNSUPPORTED, f"{name} is libtri's only: the loaded library ({path}) is libtri_rt, "
                                                "which has no compiler; load a package (Context.load_package) or "
                                                "point TRI_LIBRARY at libtri.so")

    call.__name__ = name
    return call


class _Unloaded:
    """Stands in for libtri when it cannot be loaded: `import tri` still works (`python3 -m
    tri.triton --help` needs no library), and the first use of the library raises the
    ImportError that says what was tried."""

    def __init__(self, error: ImportError):
        self._error = error

    def __getattr__(self, name):
        raise ImportError(str(self._error))


try:
    lib = load()
except ImportError as _e:
    lib = _Unloaded(_e)
