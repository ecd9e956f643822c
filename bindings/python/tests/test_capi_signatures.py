"""Every ctypes prototype in tri/_capi.py matches include/tri/tri.h (result type, argument count
and each argument's C type), tri_arg has the header's layout, and every constant the package
defines has the header's value. The header is read by bindings/tools/triheader.py."""

import ctypes
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bindings" / "tools"))
import triheader  # noqa: E402

from tri import _capi  # noqa: E402

HEADER = triheader.parse(str(ROOT / "include" / "tri" / "tri.h"))

SCALARS = {
    "int32_t": ctypes.c_int32, "uint32_t": ctypes.c_uint32, "int64_t": ctypes.c_int64,
    "uint64_t": ctypes.c_uint64, "size_t": ctypes.c_size_t, "double": ctypes.c_double,
}


def expected(ctype: str):
    """The ctypes types that faithfully pass a value of C type `ctype`."""
    c = HEADER.resolve(ctype)
    base, const, stars = triheader.split_type(c)
    if stars == 0:
        if base == "void":
            return {None}
        if base in HEADER.fnptrs:
            return {{"tri_log_fn": _capi.LOG_FN, "tri_tune_progress_fn": _capi.TUNE_PROGRESS_FN,
                     "tri_tune_grid_fn": _capi.TUNE_GRID_FN, "tri_tune_stage_fn": _capi.TUNE_STAGE_FN}.get(base)} - {None}
        return {SCALARS[base]}
    if stars == 1 and base == "char":
        return {ctypes.c_char_p}
    if stars == 1 and (base == "void" or base in HEADER.opaque):
        return {ctypes.c_void_p}
    if stars == 1 and base == "tri_arg":
        return {ctypes.POINTER(_capi.Arg)}
    if stars == 1 and base in SCALARS:
        return {ctypes.POINTER(SCALARS[base])}
    if stars == 2 and base == "char":
        return {ctypes.POINTER(ctypes.c_char_p)}
    if stars == 2 and base in SCALARS:  # an array of arrays (tri_tune_space_add_product's values)
        return {ctypes.POINTER(ctypes.POINTER(SCALARS[base]))}
    if stars == 2 and base == "void":  # a pointer out (tri_team_ptr)
        return {ctypes.POINTER(ctypes.c_void_p)}
    if stars == 2 and base in HEADER.opaque:
        return {ctypes.POINTER(ctypes.c_void_p)}
    return set()


@pytest.mark.parametrize("name", sorted(_capi.PROTOTYPES))
def test_prototype_matches_the_header(name):
    assert name in HEADER.functions, f"{name} is bound in _capi.PROTOTYPES but tri.h does not declare it"
    fn = HEADER.functions[name]
    res, args = _capi.PROTOTYPES[name]
    assert res in expected(fn.ret), f"{name}: result {res} for C {fn.ret}"
    assert len(args) == len(fn.params), f"{name}: {len(args)} arguments in ctypes, {len(fn.params)} in tri.h"
    for a, p in zip(args, fn.params):
        assert a in expected(p.ctype), f"{name}: argument {p.name} is {a} in ctypes, {p.ctype} in tri.h"


def test_the_log_callback_matches_the_header():
    fp = HEADER.fnptrs["tri_log_fn"]
    assert _capi.LOG_FN._restype_ is None and fp.ret == "void"
    assert list(_capi.LOG_FN._argtypes_) == [ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p]
    assert [p.ctype for p in fp.params] == ["void*", "int32_t", "const char*"]


def test_the_tune_callbacks_match_the_header():
    for name, fn in (("tri_tune_progress_fn", _capi.TUNE_PROGRESS_FN), ("tri_tune_grid_fn", _capi.TUNE_GRID_FN),
                     ("tri_tune_stage_fn", _capi.TUNE_STAGE_FN)):
        fp = HEADER.fnptrs[name]
        assert fn._restype_ is None and fp.ret == "void"
        assert len(fn._argtypes_) == len(fp.params)
        for a, p in zip(fn._argtypes_, fp.params):
            assert a in expected(p.ctype), f"{name}: {p.name} is {a} in ctypes, {p.ctype} in tri.h"


def test_tri_arg_layout():
    fields = HEADER.structs["tri_arg"].fields
    assert [f.name for f in fields] == [n for n, _ in _capi.Arg._fields_]
    assert [m.name for m in fields[0].members] == [n for n, _ in _capi.ArgValue._fields_]
    assert ctypes.sizeof(_capi.Arg) == 24


def test_constants_match_the_header():
    defined = {k: v for k, v in vars(_capi).items() if k.startswith("TRI_")}
    assert len(defined) > 30
    for name, value in defined.items():
        if name in ("TRI_VERSION_MINOR", "TRI_VERSION_PATCH", "TRI_VERSION_NUMBER"):
            continue  # the header the package was written for; a newer minor is compatible
        assert HEADER.constants.get(name) == value, f"{name} is {value} here, {HEADER.constants.get(name)} in tri.h"
    assert _capi.TRI_VERSION_NUMBER <= HEADER.constants["TRI_VERSION_NUMBER"]
    for prefix in ("TRI_ERROR_", "TRI_DTYPE_", "TRI_TYPE_", "TRI_LOG_", "TRI_CACHE_STAT_", "TRI_DEVICE_ATTR_",
                   "TRI_TEAM_"):
        missing = [n for n in HEADER.constants if n.startswith(prefix) and n not in defined]
        assert not missing, f"constants of tri.h missing from tri/_capi.py: {missing}"


def test_the_enums_cover_the_header():
    import tri
    for enum_type, prefix in ((tri.ErrorCode, "TRI_ERROR_"), (tri.CacheStat, "TRI_CACHE_STAT_"),
                              (tri.DeviceAttr, "TRI_DEVICE_ATTR_"), (tri.DType, "TRI_DTYPE_"),
                              (tri.LogLevel, "TRI_LOG_")):
        want = {k[len(prefix):]: v for k, v in HEADER.constants.items() if k.startswith(prefix)}
        assert {m.name: int(m) for m in enum_type} == want, enum_type.__name__
