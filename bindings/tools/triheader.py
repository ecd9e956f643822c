"""Reads include/tri/tri.h into a small model (functions, constants, opaque handles, function
pointer types, structs) for the tools that keep the bindings honest: the tri-sys generator, the
coverage check and the Julia ccall check. It understands exactly the C that tri.h is written in
and refuses anything else with the line it could not read, so a new kind of declaration in the
header stops the checks instead of slipping past them.

Types are normalized to strings such as "int32_t", "const char*", "tri_context**",
"const tri_arg*": the base type, `const` when the pointee is const, then one `*` per level.
"""

import os
import re
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

SOURCE_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_HEADER = os.path.join(SOURCE_ROOT, "include", "tri", "tri.h")

# The scalar types tri.h may use, and how wide they are (the generators map them per language).
SCALARS = {"void", "char", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t",
           "int64_t", "uint64_t", "size_t", "float", "double", "int"}


class HeaderError(Exception):
    pass


@dataclass
class Param:
    ctype: str
    name: str


@dataclass
class Function:
    name: str
    ret: str
    params: List[Param]
    line: int
    compiler: bool = False  # declared TRI_API TRI_COMPILER: in libtri only, not in libtri_rt


@dataclass
class FnPointer:
    name: str
    ret: str
    params: List[Param]


@dataclass
class Field:
    ctype: str  # for a union, "union"
    name: str
    members: List["Field"] = field(default_factory=list)


@dataclass
class Struct:
    name: str
    fields: List[Field]


@dataclass
class Header:
    path: str
    functions: Dict[str, Function] = field(default_factory=dict)
    constants: Dict[str, int] = field(default_factory=dict)
    opaque: List[str] = field(default_factory=list)
    aliases: Dict[str, str] = field(default_factory=dict)  # typedef int32_t tri_result
    fnptrs: Dict[str, FnPointer] = field(default_factory=dict)
    structs: Dict[str, Struct] = field(default_factory=dict)

    def resolve(self, ctype: str) -> str:
        """The type with aliases replaced by what they stand for (tri_result -> int32_t)."""
        base, const, stars = split_type(ctype)
        if base in self.aliases:
            base = self.aliases[base]
        return join_type(base, const, stars)


def split_type(ctype: str) -> Tuple[str, bool, int]:
    stars = ctype.count("*")
    rest = ctype.replace("*", " ").split()
    const = "const" in rest
    rest = [t for t in rest if t != "const"]
    if len(rest) != 1:
        raise HeaderError(f"cannot read the type '{ctype}'")
    return rest[0], const, stars


def join_type(base: str, const: bool, stars: int) -> str:
    return ("const " if const else "") + base + "*" * stars


def _strip_comments(text: str) -> str:
    # Keep the newlines so that line numbers survive.
    def blank(m: re.Match) -> str:
        return "\n" * m.group(0).count("\n")
    text = re.sub(r"/\*.*?\*/", blank, text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


_INT_EXPR = re.compile(r"^[\sA-Za-z0-9_()+*\-]+$")


def _eval_constant(expr: str, known: Dict[str, int], where: str) -> int:
    if not _INT_EXPR.match(expr):
        raise HeaderError(f"{where}: cannot read the value '{expr}' of a #define")
    names = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", expr)
    for n in names:
        if n not in known:
            raise HeaderError(f"{where}: the #define uses '{n}', which is not a known constant")
    return int(eval(expr, {"__builtins__": {}}, dict(known)))  # only integers and + - * ( )


def _parse_decl(text: str, where: str) -> Tuple[str, str]:
    """'const char* name' -> ('const char*', 'name')."""
    m = re.match(r"^(.*?)([A-Za-z_][A-Za-z0-9_]*)\s*$", text.strip(), re.S)
    if not m or not m.group(1).strip():
        raise HeaderError(f"{where}: cannot read the declaration '{text.strip()}'")
    ctype = normalize_type(m.group(1), where)
    return ctype, m.group(2)


def normalize_type(text: str, where: str) -> str:
    tokens = text.replace("*", " * ").split()
    stars = tokens.count("*")
    words = [t for t in tokens if t != "*"]
    const = "const" in words
    words = [w for w in words if w != "const"]
    if len(words) != 1:
        raise HeaderError(f"{where}: cannot read the type '{text.strip()}'")
    # `const` after the first `*` (a const pointer) is not used by tri.h; refuse it.
    if "*" in tokens and "const" in tokens and tokens.index("const") > tokens.index("*"):
        raise HeaderError(f"{where}: const pointers are not supported in '{text.strip()}'")
    return join_type(words[0], const, stars)


def _parse_params(text: str, where: str) -> List[Param]:
    text = text.strip()
    if text == "void":
        return []
    if not text:
        raise HeaderError(f"{where}: an empty parameter list must be written (void)")
    out = []
    for piece in text.split(","):
        ctype, name = _parse_decl(piece, where)
        out.append(Param(ctype, name))
    return out


def _parse_fields(body: str, where: str) -> List[Field]:
    fields: List[Field] = []
    pos = 0
    body = body.strip()
    while pos < len(body):
        m = re.match(r"\s*union\s*\{", body[pos:])
        if m:
            start = pos + m.end()
            end = body.index("}", start)
            members = _parse_fields(body[start:end], where)
            m2 = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*;", body[end + 1:])
            if not m2:
                raise HeaderError(f"{where}: a union field must be named")
            fields.append(Field("union", m2.group(1), members))
            pos = end + 1 + m2.end()
            continue
        semi = body.find(";", pos)
        if semi < 0:
            if body[pos:].strip():
                raise HeaderError(f"{where}: a field without ';': '{body[pos:].strip()}'")
            break
        decl = body[pos:semi]
        if "[" in decl or "(" in decl:
            raise HeaderError(f"{where}: array and function fields are not supported: '{decl.strip()}'")
        ctype, name = _parse_decl(decl, where)
        fields.append(Field(ctype, name))
        pos = semi + 1
    return fields


def parse(path: str = DEFAULT_HEADER) -> Header:
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    text = _strip_comments(raw)
    header = Header(path=path)
    name = os.path.basename(path)

    # Preprocessor: constants from #define; every #if block but the include guard is dropped
    # (it holds TRI_API's definition and the C++ extern "C" braces).
    body_lines: List[Tuple[int, str]] = []
    depth = 0  # nesting of dropped conditional blocks
    guard_seen = False
    for lineno, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        where = f"{name}:{lineno}"
        if s.startswith("#"):
            directive = s[1:].strip()
            if directive.startswith(("if", "ifdef", "ifndef")):
                if not guard_seen and directive.startswith("ifndef"):
                    guard_seen = True
                    continue
                depth += 1
            elif directive.startswith("endif"):
                if depth > 0:
                    depth -= 1
            elif directive.startswith(("else", "elif")):
                pass
            elif depth == 0 and directive.startswith("define"):
                m = re.match(r"define\s+([A-Za-z_][A-Za-z0-9_]*)\s*(.*)$", directive)
                if not m:
                    raise HeaderError(f"{where}: cannot read '{s}'")
                cname, value = m.group(1), m.group(2).strip()
                if cname.endswith("_H_") and not value:
                    continue  # the include guard
                header.constants[cname] = _eval_constant(value, header.constants, where)
            elif depth == 0 and directive.startswith("include"):
                pass
            elif depth == 0:
                raise HeaderError(f"{where}: unexpected preprocessor line '{s}'")
            continue
        if depth == 0:
            body_lines.append((lineno, line))

    # Statements: split on ';' outside braces, remembering where each starts.
    stmts: List[Tuple[int, str]] = []
    cur, start, braces = [], None, 0
    for lineno, line in body_lines:
        for ch in line + "\n":
            if start is None and not ch.isspace():
                start = lineno
            if ch == "{":
                braces += 1
            elif ch == "}":
                braces -= 1
            if ch == ";" and braces == 0:
                stmts.append((start, " ".join("".join(cur).split())))
                cur, start = [], None
            else:
                cur.append(ch)
    if "".join(cur).strip():
        raise HeaderError(f"{name}:{start}: a declaration without ';' at the end of the header")

    for lineno, s in stmts:
        where = f"{name}:{lineno}"
        m = re.match(r"^typedef struct ([A-Za-z_]\w*) ([A-Za-z_]\w*)$", s)
        if m:
            if m.group(1) != m.group(2):
                raise HeaderError(f"{where}: an opaque struct must be typedef'd to its own name")
            header.opaque.append(m.group(1))
            continue
        m = re.match(r"^typedef struct ([A-Za-z_]\w*) \{(.*)\} ([A-Za-z_]\w*)$", s)
        if m:
            if m.group(1) != m.group(3):
                raise HeaderError(f"{where}: a struct must be typedef'd to its own name")
            header.structs[m.group(1)] = Struct(m.group(1), _parse_fields(m.group(2), where))
            continue
        m = re.match(r"^typedef (.+?)\(\s*\*\s*([A-Za-z_]\w*)\s*\)\s*\((.*)\)$", s)
        if m:
            header.fnptrs[m.group(2)] = FnPointer(m.group(2), normalize_type(m.group(1), where),
                                                  _parse_params(m.group(3), where))
            continue
        m = re.match(r"^typedef ([A-Za-z_][\w ]*?) ([A-Za-z_]\w*)$", s)
        if m and m.group(1).strip() in SCALARS:
            header.aliases[m.group(2)] = m.group(1).strip()
            continue
        m = re.match(r"^TRI_API (TRI_COMPILER )?(.+?)\b([A-Za-z_]\w*)\s*\((.*)\)$", s)
        if m:
            fname = m.group(3)
            if fname in header.functions:
                raise HeaderError(f"{where}: {fname} is declared twice")
            header.functions[fname] = Function(fname, normalize_type(m.group(2), where),
                                               _parse_params(m.group(4), where), lineno, bool(m.group(1)))
            continue
        raise HeaderError(f"{where}: cannot read this declaration (teach bindings/tools/triheader.py): {s}")

    known = set(SCALARS) | set(header.aliases) | set(header.opaque) | set(header.fnptrs) | set(header.structs)
    def check_type(ctype: str, where: str) -> None:
        base, _, _ = split_type(ctype)
        if base not in known:
            raise HeaderError(f"{where}: unknown type '{base}'")
    for fn in header.functions.values():
        for t in [fn.ret] + [p.ctype for p in fn.params]:
            check_type(t, f"{name}:{fn.line} ({fn.name})")
    if not header.functions:
        raise HeaderError(f"{path}: no TRI_API function found")
    return header


if __name__ == "__main__":
    h = parse(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_HEADER)
    for fn in h.functions.values():
        print(f"{fn.ret} {fn.name}({', '.join(p.ctype + ' ' + p.name for p in fn.params)})")
    print(f"{len(h.functions)} functions, {len(h.constants)} constants, opaque {h.opaque}, "
          f"fnptrs {list(h.fnptrs)}, structs {list(h.structs)}, aliases {h.aliases}")
