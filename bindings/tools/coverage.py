#!/usr/bin/env python3
"""Checks that every function include/tri/tri.h declares is bound in every language binding, or
listed in that binding's UNBOUND.txt with the reason it is left out. Run by CTest as
bindings/coverage; it reads the header at test time, so a function added to tri.h shows up here
by name until it is bound or listed.

"Bound" means the binding's own library code calls the function (tests do not count):
  rust    bindings/rust/tri/src/*.rs     sys::NAME(            (tri-sys declares all; the safe crate must use it)
  go      bindings/go/*.go (no _test)    NAME(                 (C.NAME from Go, or in a cgo preamble helper)
  python  bindings/python/src/tri/*.py   _lib.NAME             (called or passed on; pytest checks the prototype)
  julia   bindings/julia/src/*.jl        ccall((:NAME, libtri)  (each ccall is checked by check_ccalls.py)

UNBOUND.txt: one `NAME: reason` per line; `#` starts a comment. A listed function that is bound,
or that tri.h no longer declares, is an error too, so the lists stay true.
"""

import glob
import os
import re
import sys
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import triheader  # noqa: E402

BINDINGS = os.path.abspath(os.path.join(HERE, ".."))

LANGUAGES = {
    "rust": (["rust/tri/src/*.rs"], r"\bsys::{name}\s*\("),
    "go": (["go/*.go"], r"\b{name}\s*\("),
    "python": (["python/src/tri/*.py"], r"\b_lib\.{name}\b"),
    "julia": (["julia/src/*.jl"], r"ccall\(\(\s*:{name}\s*,\s*libtri\s*\)"),
}


def sources(lang: str) -> str:
    texts = []
    for pattern in LANGUAGES[lang][0]:
        for path in sorted(glob.glob(os.path.join(BINDINGS, pattern))):
            if path.endswith("_test.go"):
                continue
            with open(path, encoding="utf-8") as f:
                texts.append(f.read())
    return "\n".join(texts)


def read_unbound(lang: str, problems: List[str]) -> Dict[str, str]:
    path = os.path.join(BINDINGS, lang, "UNBOUND.txt")
    out: Dict[str, str] = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"(tri_\w+)\s*:\s*(.*)", line)
            if not m or not m.group(2).strip():
                problems.append(f"bindings/{lang}/UNBOUND.txt:{lineno}: write `tri_name: the reason it is not bound`")
                continue
            out[m.group(1)] = m.group(2).strip()
    return out


def main() -> int:
    header_path = sys.argv[1] if len(sys.argv) > 1 else triheader.DEFAULT_HEADER
    try:
        header = triheader.parse(header_path)
    except triheader.HeaderError as e:
        print(f"coverage: {e}", file=sys.stderr)
        return 1
    names = list(header.functions)
    problems: List[str] = []
    for lang, (_, pattern) in LANGUAGES.items():
        text = sources(lang)
        if not text:
            problems.append(f"bindings/{lang}: no source files found")
            continue
        unbound = read_unbound(lang, problems)
        bound = [n for n in names if re.search(pattern.format(name=re.escape(n)), text)]
        for n in names:
            if n not in bound and n not in unbound:
                problems.append(f"bindings/{lang}: {n} is declared in tri.h but not bound; bind it (bindings/README.md, "
                                f"\"Adding a function\") or add `{n}: <why not>` to bindings/{lang}/UNBOUND.txt")
        for n in unbound:
            if n not in header.functions:
                problems.append(f"bindings/{lang}/UNBOUND.txt lists {n}, which tri.h does not declare; remove the line")
            elif n in bound:
                problems.append(f"bindings/{lang}/UNBOUND.txt lists {n}, but the binding calls it; remove the line")
        print(f"coverage: {lang:6} binds {len(bound)} of {len(names)} functions"
              + (f"; deliberately unbound: {', '.join(sorted(unbound))}" if unbound else ""))
    if problems:
        print("\n".join(problems), file=sys.stderr)
        print(f"coverage: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
