#!/usr/bin/env python3
"""Checks the Julia bindings against include/tri/tri.h without a Julia toolchain: every
`ccall((:sym, libtri), Ret, (ArgTypes...), args...)` in src/Tri.jl must name a function the
header declares, pass as many arguments as it takes, and use Julia types that carry each C type
(the table TYPES below); the `const TRI_*` values, the DType enum and the TriArg struct must
match the header's constants and tri_arg. Run by CTest as bindings/julia.

    python3 bindings/julia/check_ccalls.py [--header include/tri/tri.h] [--source src/Tri.jl]
"""

import argparse
import os
import re
import sys
from typing import List, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import triheader  # noqa: E402

# Julia types that pass a C scalar of each type unchanged.
SCALAR = {
    "int8_t": {"Int8"}, "uint8_t": {"UInt8"}, "int16_t": {"Int16"}, "uint16_t": {"UInt16"},
    "int32_t": {"Int32", "Cint"}, "uint32_t": {"UInt32", "Cuint"},
    "int64_t": {"Int64", "Clonglong"}, "uint64_t": {"UInt64", "Culonglong"},
    "size_t": {"Csize_t", "UInt"}, "double": {"Float64", "Cdouble"}, "float": {"Float32", "Cfloat"},
}
# How the Julia code spells tri_arg.
STRUCTS = {"tri_arg": "TriArg"}


def allowed(h: triheader.Header, ctype: str, result: bool) -> Set[str]:
    """The Julia ccall types that carry C type `ctype` (as an argument, or as the result)."""
    base, const, stars = triheader.split_type(h.resolve(ctype))
    if stars == 0:
        if base == "void":
            return {"Cvoid", "Nothing"} if result else set()
        if base in h.fnptrs:
            return {"Ptr{Cvoid}"}
        return SCALAR.get(base, set())
    if stars == 1:
        if base == "char":
            # A C string: Cstring converts a Julia String in and reads one out; Ptr{UInt8} is raw.
            return {"Cstring", "Ptr{UInt8}", "Ptr{Cchar}"} if const or result else {"Ptr{UInt8}", "Ptr{Cchar}"}
        if base == "void":
            return {"Ptr{Cvoid}", "Ptr{UInt8}"}
        if base in h.opaque:
            return {"Ptr{Cvoid}"}
        if base in STRUCTS:
            # Ref{NTuple{N,T}}: an array of N structs passed from an isbits tuple.
            return {f"Ptr{{{STRUCTS[base]}}}", f"Ref{{{STRUCTS[base]}}}", f"Ref{{NTuple{{N,{STRUCTS[base]}}}}}"}
        if base in SCALAR and not result:
            return {f"{w}{{{t}}}" for t in SCALAR[base] for w in ("Ref", "Ptr")}
        return set()
    if stars == 2 and not result:
        if base == "char":
            return {"Ref{Ptr{UInt8}}", "Ref{Cstring}", "Ptr{Ptr{UInt8}}"}
        if base in h.opaque:
            return {"Ref{Ptr{Cvoid}}", "Ptr{Ptr{Cvoid}}"}
        if base == "void" and not const:
            # An address the call writes (tri_team_ptr's out_ptr).
            return {"Ref{Ptr{Cvoid}}", "Ptr{Ptr{Cvoid}}"}
        if base in SCALAR:
            # An array of arrays (tri_tune_space_add_product's value lists).
            return {f"Ptr{{Ptr{{{t}}}}}" for t in SCALAR[base]}
    return set()


def strip_comments(src: str) -> str:
    """Blanks `#` comments (and #= =# blocks), keeping strings and line numbers intact."""
    out: List[str] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith('"""', i):
            j = src.find('"""', i + 3)
            j = n if j < 0 else j + 3
            out.append(src[i:j])
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append(src[i:j + 1])
            i = j + 1
        elif src.startswith("#=", i):
            j = src.find("=#", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * src.count("\n", i, j))
            i = j
        elif c == "#":
            j = src.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_top(text: str) -> List[str]:
    """Splits on commas outside brackets and strings."""
    parts, depth, cur, i = [], 0, [], 0
    while i < len(text):
        c = text[i]
        if c == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            cur.append(text[i:j + 1])
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def ccalls(src: str) -> List[Tuple[int, str]]:
    """(line, inner text) of every ccall(...)."""
    out = []
    for m in re.finditer(r"\bccall\(", src):
        start = m.end()
        depth, i = 1, start
        while depth and i < len(src):
            if src[i] == '"':
                i += 1
                while i < len(src) and src[i] != '"':
                    i += 2 if src[i] == "\\" else 1
            elif src[i] == "(":
                depth += 1
            elif src[i] == ")":
                depth -= 1
            i += 1
        out.append((src.count("\n", 0, m.start()) + 1, src[start:i - 1]))
    return out


def norm(t: str) -> str:
    return re.sub(r"\s+", "", t)


def check(header_path: str, source_path: str) -> List[str]:
    h = triheader.parse(header_path)
    raw = open(source_path, encoding="utf-8").read()
    src = strip_comments(raw)
    name = os.path.relpath(source_path)
    problems: List[str] = []
    calls = ccalls(src)
    if not calls:
        problems.append(f"{name}: no ccall found")
    for line, inner in calls:
        where = f"{name}:{line}"
        parts = split_top(inner)
        m = re.fullmatch(r"\(\s*:(\w+)\s*,\s*libtri\s*\)", parts[0]) if parts else None
        if not m or len(parts) < 3:
            problems.append(f"{where}: write ccall((:name, libtri), Ret, (Types...,), args...); got ccall({inner[:60]}...)")
            continue
        sym = m.group(1)
        fn = h.functions.get(sym)
        if fn is None:
            problems.append(f"{where}: {sym} is not a function of tri.h")
            continue
        ret, types_text, args = norm(parts[1]), parts[2].strip(), parts[3:]
        if not (types_text.startswith("(") and types_text.endswith(")")):
            problems.append(f"{where}: {sym}: the argument types must be a tuple, got {types_text}")
            continue
        types = [norm(t) for t in split_top(types_text[1:-1])]
        if ret not in allowed(h, fn.ret, True):
            problems.append(f"{where}: {sym} returns {fn.ret}, which {ret} does not carry "
                            f"(use one of {sorted(allowed(h, fn.ret, True))})")
        if len(types) != len(fn.params):
            problems.append(f"{where}: {sym} takes {len(fn.params)} arguments in tri.h, the ccall declares {len(types)}")
            continue
        if len(args) != len(types):
            problems.append(f"{where}: {sym}: the ccall declares {len(types)} argument types but passes {len(args)}")
        for t, p in zip(types, fn.params):
            ok = allowed(h, p.ctype, False)
            if t not in ok:
                problems.append(f"{where}: {sym}: argument {p.name} is {p.ctype} in tri.h, {t} in the ccall "
                                f"(use one of {sorted(ok)})")

    # Constants: each `const TRI_X = <int>` must be the header's value (the version the binding
    # was written for may be older than the header's within one major version).
    consts = dict((k, int(v)) for k, v in re.findall(r"^const (TRI_\w+) = (-?\d+)\s*$", src, re.M))
    if len(consts) < 30:
        problems.append(f"{name}: expected the TRI_* constants, found {len(consts)}")
    for k, v in consts.items():
        if k in ("TRI_VERSION_MINOR", "TRI_VERSION_PATCH"):
            continue
        if h.constants.get(k) != v:
            problems.append(f"{name}: {k} = {v}, but tri.h has {h.constants.get(k)}")
    for prefix in ("TRI_ERROR_", "TRI_DTYPE_", "TRI_TYPE_", "TRI_PARAM_", "TRI_FUNCTION_", "TRI_CACHE_STAT_",
                   "TRI_DEVICE_ATTR_", "TRI_TUNE_"):
        missing = [k for k in h.constants if k.startswith(prefix) and k not in consts]
        if missing:
            problems.append(f"{name}: constants of tri.h missing: {', '.join(missing)}")

    # The DType enum mirrors TRI_DTYPE_*.
    m = re.search(r"@enum DType::Int32 ([^\n]+)", src)
    enum = dict((k, int(v)) for k, v in re.findall(r"(\w+) = (\d+)", m.group(1))) if m else {}
    want = {k[len("TRI_DTYPE_"):]: v for k, v in h.constants.items() if k.startswith("TRI_DTYPE_")}
    if enum != want:
        problems.append(f"{name}: @enum DType is {enum}, tri.h's TRI_DTYPE_* are {want}")

    # TriArg mirrors tri_arg: the union as its 8 bytes, then the fields in order.
    m = re.search(r"struct TriArg\s*\n(.*?)\n\s*end", src, re.S)
    fields = re.findall(r"(\w+)::(\w+)", m.group(1)) if m else []
    c_fields = h.structs["tri_arg"].fields
    ok = len(fields) == len(c_fields)
    for (jname, jtype), f in zip(fields, c_fields):
        if f.ctype == "union":
            # Every member must be 8 bytes for the union to travel as one UInt64.
            eight = all(triheader.split_type(x.ctype)[2] or x.ctype in ("int64_t", "uint64_t", "double")
                        for x in f.members)
            ok = ok and jname == f.name and jtype == "UInt64" and eight
        else:
            ok = ok and jname == f.name and jtype in SCALAR.get(f.ctype, set())
    if not ok:
        problems.append(f"{name}: struct TriArg is {fields}, which does not match tri.h's tri_arg "
                        f"{[(f.name, f.ctype) for f in c_fields]}")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--header", default=triheader.DEFAULT_HEADER)
    ap.add_argument("--source", default=os.path.join(HERE, "src", "Tri.jl"))
    args = ap.parse_args()
    try:
        problems = check(args.header, args.source)
    except triheader.HeaderError as e:
        print(f"julia check: {e}", file=sys.stderr)
        return 1
    if problems:
        print("\n".join(problems), file=sys.stderr)
        print(f"julia check: {len(problems)} problem(s) between {os.path.relpath(args.source)} and tri.h", file=sys.stderr)
        return 1
    n = len(ccalls(strip_comments(open(args.source, encoding="utf-8").read())))
    print(f"julia check: {n} ccalls, the constants, DType and TriArg match tri.h")
    return 0


if __name__ == "__main__":
    sys.exit(main())
