"""Kernels written in Triton, turned into Tri IR on a machine without a GPU.

    python3 -m tri.triton kernels.py -o out/ [--ttir] [--check]

`kernels.py` is an ordinary Python file of `@triton.jit` kernels that also says, in a
module-level dict named TRI_EXPORTS, which specializations to make:

    TRI_EXPORTS = {
        # output name: what Triton's launcher would have been given
        "vadd": dict(kernel=add_kernel,
                     signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                     constexprs={"BLOCK": 1024}),
    }

Each entry names the kernel (a JITFunction, or an autotuned/heuristics wrapper of one), the
Triton type of every runtime parameter (`signature`) and the value of every constexpr
(`constexprs`; a constexpr with a default may be left out). Optional keys: `divisibility`, a
dict of runtime parameter -> N stating `tt.divisibility = N` (default: 16 on every pointer
parameter, which is what Triton's launcher finds for PyTorch's allocations; `{}` for none), and
`options`, passed to Triton as compile options (`debug=True` keeps `tl.device_assert`).

For each entry Triton's own frontend runs up to its `ttir` stage for an explicit target
(`cuda`, sm_90 unless --arch says otherwise), so no GPU, driver or PyTorch is involved; Tri
imports the TTIR (tri_module_create reads it) and `out/NAME.tri` gets the module's canonical
text. Locations keep pointing at the Python lines, with absolute paths made relative to the
current directory (--relative-to) and Triton's own files to "triton/...", so the output does not
depend on where the tree is.

The functions below are the same steps for use from Python: load_exports(path), ttir(export),
and to_module(context, ttir_text, name).

The submodules capture a running program's launches instead (docs/import.md, "Capture and
replay"): `with tri.triton.capture() as rec: ...` records every Triton launch, `rec.replay()`
runs each through Triton and Tri and compares them, `rec.save(DIR)` writes .tri files and a
manifest; `python3 -m tri.triton.capture script.py` and `python3 -m tri.triton.replay DIR` are
the same as commands. They are imported when first used (capture, replay, saved, HostTensor).
"""

import argparse
import importlib.util
import inspect
import os
import re
import sys
import traceback
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

from .. import Context, FunctionKind, Module, TriError

__all__ = ["AuthoringError", "Export", "load_exports", "parse_export", "ttir", "to_module", "main",
           "TESTED_TRITON_VERSIONS", "DEFAULT_ARCH", "capture", "replay", "saved", "HostTensor"]

# Triton versions whose output this module was checked against (docs/import.md), and the oldest
# it accepts: 3.3 dropped AttrsDescriptor for the (index,) -> [[attr, value]] form used here.
TESTED_TRITON_VERSIONS = ("3.6.0", "3.9.0")
_MIN_TRITON = (3, 3)
DEFAULT_ARCH = 90
_EXPORT_KEYS = ("kernel", "signature", "constexprs", "divisibility", "options")
PROG = "python3 -m tri.triton"


class AuthoringError(Exception):
    """What went wrong, in words meant for the person running the tool."""


@dataclass(frozen=True)
class Export:
    """One specialization of one kernel: `name` is the output file's stem."""
    name: str
    kernel: Any
    signature: Mapping[str, str]
    constexprs: Mapping[str, Any] = field(default_factory=dict)
    divisibility: Optional[Mapping[str, int]] = None  # None: 16 on every pointer parameter
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def kernel_name(self) -> str:
        return _jit_function(self.kernel).__name__

    @property
    def source_file(self) -> str:
        fn = _jit_function(self.kernel)
        return inspect.getsourcefile(fn.fn) or "<unknown>"


# ---------------------------------------------------------------- Triton

def _triton():
    """The triton module, or an AuthoringError saying how to get it."""
    try:
        import triton  # noqa: F401
        import triton.compiler  # noqa: F401
        from triton.backends.compiler import GPUTarget  # noqa: F401
    except ImportError as e:
        raise AuthoringError(
            f"Triton is not installed for {sys.executable} ({e}); install it with "
            f"`{sys.executable} -m pip install triton` (Triton 3.x from PyPI: no GPU, CUDA driver or "
            "PyTorch is needed to print TTIR)") from e
    version = _version_tuple(triton.__version__)
    if version < _MIN_TRITON:
        raise AuthoringError(f"Triton {triton.__version__} is too old: {PROG} needs Triton "
                             f"{_MIN_TRITON[0]}.{_MIN_TRITON[1]} or newer (tested: "
                             f"{', '.join(TESTED_TRITON_VERSIONS)})")
    return triton


def _version_tuple(v: str):
    parts = []
    for p in v.split(".")[:3]:
        m = re.match(r"\d+", p)
        parts.append(int(m.group()) if m else 0)
    return tuple(parts)


def _jit_function(obj):
    """The JITFunction behind obj (autotune and heuristics wrappers keep it in .fn)."""
    from triton.runtime.jit import JITFunction
    seen = 0
    while not isinstance(obj, JITFunction) and hasattr(obj, "fn") and seen < 8:
        obj, seen = obj.fn, seen + 1
    if not isinstance(obj, JITFunction):
        raise AuthoringError(f"{obj!r} is not a @triton.jit function")
    return obj


# ---------------------------------------------------------------- TRI_EXPORTS

def load_exports(path: str, errors: Optional[Dict[str, "AuthoringError"]] = None) -> Dict[str, Export]:
    """Runs the Python file `path` (its folder first on sys.path, so it may import its
    neighbours) and returns its TRI_EXPORTS, checked. Each export is checked on its own: with
    `errors` (a dict), a bad one goes there by name, with what is wrong, and the others are
    returned; without, the first bad one raises."""
    _triton()  # a clear message before the file's own `import triton` fails
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise AuthoringError(f"{path}: no such file")
    stem = os.path.splitext(os.path.basename(path))[0]
    name = stem if stem.isidentifier() and stem not in sys.modules else f"_tri_triton_{abs(hash(path))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AuthoringError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        sys.modules.pop(name, None)
        raise AuthoringError(f"cannot load {_display(path)}:\n{_user_traceback(e, path)}") from e
    exports = getattr(module, "TRI_EXPORTS", None)
    if exports is None:
        raise AuthoringError(
            f"{_display(path)} defines no TRI_EXPORTS: add a module-level dict such as\n"
            "  TRI_EXPORTS = {\"vadd\": dict(kernel=add_kernel, signature={\"x_ptr\": \"*fp32\", \"n\": \"i32\"},\n"
            "                                constexprs={\"BLOCK\": 1024})}\n"
            f"(`{PROG} --help` describes the keys)")
    if not isinstance(exports, Mapping):
        raise AuthoringError(f"{_display(path)}: TRI_EXPORTS is a {type(exports).__name__}; it must be a dict "
                             "of output name -> dict(kernel=..., signature=..., constexprs=...)")
    out: Dict[str, Export] = {}
    for k, v in exports.items():
        try:
            out[str(k)] = parse_export(str(k), v, _display(path))
        except AuthoringError as e:
            if errors is None:
                raise
            errors[str(k)] = e
    return out


def _user_traceback(e: BaseException, path: str) -> str:
    """The exception with the frames from the user's file on, not the loader's."""
    frames = traceback.extract_tb(e.__traceback__)
    for i, f in enumerate(frames):
        if os.path.abspath(f.filename) == path:
            frames = frames[i:]
            break
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(e), e)
    return "".join(lines).rstrip()


def parse_export(name: str, spec: Any, where: str = "TRI_EXPORTS") -> Export:
    """An Export from one TRI_EXPORTS entry, with every parameter of the kernel accounted for."""
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", name):
        raise AuthoringError(f"{where}: export name {name!r} is not usable as a file name "
                             "(letters, digits, '_', '.', '-')")
    here = f"{where}: export '{name}'"
    if not isinstance(spec, Mapping):
        raise AuthoringError(f"{here} is a {type(spec).__name__}; give dict(kernel=..., signature=..., "
                             "constexprs=...)")
    unknown = sorted(set(spec) - set(_EXPORT_KEYS))
    if unknown:
        raise AuthoringError(f"{here} has unknown key(s) {', '.join(map(repr, unknown))}; the keys are "
                             f"{', '.join(_EXPORT_KEYS)}")
    if "kernel" not in spec:
        raise AuthoringError(f"{here} has no 'kernel'")
    try:
        fn = _jit_function(spec["kernel"])
    except AuthoringError as e:
        raise AuthoringError(f"{here}: 'kernel' is {e}") from None
    signature = dict(spec.get("signature") or {})
    constexprs = dict(spec.get("constexprs") or {})
    divisibility = spec.get("divisibility")
    options = dict(spec.get("options") or {})
    params = fn.arg_names
    kname = fn.__name__
    for what, d in (("signature", signature), ("constexprs", constexprs)):
        extra = [k for k in d if k not in params]
        if extra:
            raise AuthoringError(f"{here}: {what} names {', '.join(map(repr, extra))}, which {kname} does not have "
                                 f"(its parameters: {', '.join(params)})")
    both = [k for k in signature if k in constexprs]
    if both:
        raise AuthoringError(f"{here}: {', '.join(map(repr, both))} is in both signature and constexprs")
    for k, v in signature.items():
        if not isinstance(v, str) or v == "constexpr":
            raise AuthoringError(f"{here}: signature[{k!r}] is {v!r}; give a Triton type such as '*fp32', 'i32' or "
                                 "'fp32' (constexpr values go in 'constexprs')")
        bad = _type_problem(v)
        if bad:
            raise AuthoringError(f"{here}: signature[{k!r}] is {v!r}, {bad}")
    for p in fn.params:
        if p.name in signature or p.name in constexprs:
            continue
        if p.is_constexpr and p.has_default:
            continue
        if p.is_constexpr:
            raise AuthoringError(f"{here}: constexpr '{p.name}' of {kname} has no value in 'constexprs'")
        raise AuthoringError(f"{here}: parameter '{p.name}' of {kname} has no type in 'signature' (e.g. '*fp32', "
                             "'i32') and no value in 'constexprs'")
    if divisibility is not None:
        if not isinstance(divisibility, Mapping):
            raise AuthoringError(f"{here}: 'divisibility' must be a dict of runtime parameter -> N")
        for k, v in divisibility.items():
            if k not in signature:
                raise AuthoringError(f"{here}: divisibility names {k!r}, which is not a runtime parameter "
                                     f"(the signature has {', '.join(signature) or 'none'})")
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise AuthoringError(f"{here}: divisibility[{k!r}] is {v!r}; give a positive int (16)")
        divisibility = dict(divisibility)
    return Export(name, fn, signature, constexprs, divisibility, options)


# The type names Triton's launcher signature takes (triton/compiler/code_generator.py's str_to_ty,
# 3.3 to 3.9), a pointer being '*' (or '*k', const) before one; and what people write instead.
_TRITON_TYPES = ("i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64", "fp16", "bf16", "fp32", "fp64",
                 "fp8e4nv", "fp8e4b8", "fp8e4b15", "fp8e5", "fp8e5b16")
_TYPE_ALIASES = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32",
                 "float64": "fp64", "double": "fp64", "int8": "i8", "int16": "i16", "int32": "i32", "int": "i32",
                 "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "i1",
                 "f16": "fp16", "f32": "fp32", "f64": "fp64", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5"}


def _type_problem(name: str) -> Optional[str]:
    """Why `name` is not a Triton signature type (None when it is), with the types there are."""
    stem = name[1:] if name.startswith("*") else name
    if name.startswith("*") and stem.startswith("k") and stem[1:] in _TRITON_TYPES:
        stem = stem[1:]
    if stem in _TRITON_TYPES or stem.startswith("tensordesc"):
        return None
    hint = ""
    if stem in _TYPE_ALIASES:
        hint = f" (did you mean {name[:len(name) - len(stem)] + _TYPE_ALIASES[stem]!r}?)"
    return (f"which is not a Triton type{hint}: the types are {', '.join(_TRITON_TYPES)}, and a pointer is '*' "
            "before one ('*fp32')")


# ---------------------------------------------------------------- TTIR

def _triton_arguments(e: Export):
    """ASTSource's signature, constants and attrs for export `e`."""
    fn = _jit_function(e.kernel)
    signature, constants = {}, {}
    for i, p in enumerate(fn.params):
        if p.name in e.signature:
            signature[p.name] = e.signature[p.name]
        else:
            signature[p.name] = "constexpr"
            constants[(i, )] = e.constexprs[p.name] if p.name in e.constexprs else p.default
    if e.divisibility is None:
        div = {k: 16 for k, v in e.signature.items() if v.startswith("*")}
    else:
        div = dict(e.divisibility)
    attrs = {(fn.arg_names.index(k), ): [["tt.divisibility", v]] for k, v in div.items()}
    return fn, signature, constants, attrs


def _stops_at_ttir(backend, src) -> bool:
    """Whether this Triton has the stage API that _ttir_only uses (3.3 to 3.9 do)."""
    try:
        stages = list(inspect.signature(backend.add_stages).parameters)
        make_ir = list(inspect.signature(src.make_ir).parameters)
    except (TypeError, ValueError):
        return False
    return stages == ["stages", "options", "language"] and make_ir == [
        "target", "options", "codegen_fns", "module_map", "context"]


def _ttir_only(triton, src, target, options: Mapping[str, Any]) -> str:
    """Triton's frontend and its `ttir` stage, and nothing after (no ptxas, no cache). Falls
    back to triton.compile(...).asm["ttir"] (every stage) where the stage API differs."""
    from triton.compiler.compiler import make_backend
    # FP fusion happens after TTIR; saying so explicitly silences Triton 3.9's warning about
    # its default changing.
    options = dict(options)
    options.setdefault("enable_fp_fusion", False)
    backend = make_backend(target)
    if not _stops_at_ttir(backend, src):
        return triton.compile(src, target=target, options=options).asm["ttir"]
    from triton._C.libtriton import ir
    opts = backend.parse_options(options)
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    module = src.make_ir(target, opts, backend.get_codegen_implementation(opts), backend.get_module_map(), context)
    stages: Dict[str, Any] = {}
    backend.add_stages(stages, opts, src.language)
    return str(stages["ttir"](module, {}))


_LOC_FILE = re.compile(r'loc\("((?:[^"\\]|\\.)*)":(\d+)')


def relative_locations(text: str, relative_to: Optional[str], triton_dir: Optional[str]) -> str:
    """Absolute file names in `loc("FILE":line:col)` made relative: under `relative_to` to it,
    under Triton's package folder to "triton/..."; others are left as they are."""
    roots = []
    if triton_dir:
        roots.append((os.path.realpath(triton_dir), "triton"))
    if relative_to:
        roots.append((os.path.realpath(relative_to), ""))

    def fix(m):
        path = m.group(1)
        if not os.path.isabs(path):
            return m.group(0)
        real = os.path.realpath(path)
        for root, prefix in roots:
            if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
                rel = os.path.relpath(real, root).replace(os.sep, "/")
                rel = f"{prefix}/{rel}" if prefix else rel
                return f'loc("{rel}":{m.group(2)}'
        return m.group(0)

    return _LOC_FILE.sub(fix, text)


def _describe(e: Export) -> str:
    cx = ", ".join(f"{k}={v!r}" for k, v in e.constexprs.items())
    return f"{os.path.basename(e.source_file)}:{e.kernel_name}" + (f" ({cx})" if cx else "")


def ttir(e: Export, arch: int = DEFAULT_ARCH, relative_to: Optional[str] = None, header: bool = True) -> str:
    """The TTIR of export `e`, printed by Triton for cuda sm_`arch` without a GPU. Locations are
    made relative to `relative_to` (default: the current directory)."""
    triton = _triton()
    from triton.backends.compiler import GPUTarget
    fn, signature, constants, attrs = _triton_arguments(e)
    try:
        src = triton.compiler.ASTSource(fn, signature, constants, attrs)
        text = _ttir_only(triton, src, GPUTarget("cuda", arch, 32), e.options)
    except Exception as err:  # CompilationError names the Python line; others are Triton's words
        kind = type(err).__name__
        raise AuthoringError(f"export '{e.name}' ({_describe(e)}): Triton could not make TTIR ({kind}):\n"
                             f"{str(err).strip()}") from err
    text = relative_locations(text, relative_to if relative_to is not None else os.getcwd(),
                              os.path.dirname(os.path.abspath(triton.__file__)))
    if header:
        text = (f"// TTIR of {_describe(e)}, printed by Triton {triton.__version__} for cuda sm_{arch} "
                f"({PROG})\n") + text
    return text


def to_module(context: Context, ttir_text: str, name: str) -> Module:
    """Tri's module for TTIR text (TriError, with the TTIR line and column, if it cannot be)."""
    return context.module(ttir_text, name)


# ---------------------------------------------------------------- the command

_EPILOG = """\
TRI_EXPORTS, a module-level dict of KERNELS.py, says what to make:
  TRI_EXPORTS = {
      "vadd": dict(kernel=add_kernel,                  # a @triton.jit function
                   signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                   constexprs={"BLOCK": 1024},          # every constexpr without a default
                   divisibility={"x_ptr": 16},          # optional; default 16 on every pointer
                   options={"debug": True}),            # optional; Triton's compile options
  }
Each entry becomes OUT/NAME.tri (and OUT/NAME.ttir with --ttir). Exit status: 0 when every
selected export converted (and compiled, with --check), 1 otherwise, 2 for usage errors.
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_EPILOG,
        description="Turn @triton.jit kernels into Tri IR without a GPU: Triton's frontend prints TTIR\n"
                    "for an explicit target (cuda sm_90), Tri imports it and writes its canonical text.")
    p.add_argument("file", metavar="KERNELS.py", help="a Python file of @triton.jit kernels with TRI_EXPORTS")
    p.add_argument("-o", "--out-dir", default=".", metavar="DIR", help="where the files go (default: .)")
    p.add_argument("-k", "--kernel", action="append", default=[], metavar="NAME",
                   help="only this export (its TRI_EXPORTS name or its Triton function's name); repeatable")
    emit = p.add_mutually_exclusive_group()
    emit.add_argument("--ttir", action="store_true", help="also write NAME.ttir, the TTIR Tri read")
    emit.add_argument("--ttir-only", action="store_true", help="write NAME.ttir only; Tri does not read it")
    p.add_argument("--binary", action="store_true", help="write binary IR (NAME.trib) instead of NAME.tri")
    p.add_argument("--check", action="store_true", help="also compile every kernel for Tri's cpu target")
    p.add_argument("--arch", type=int, default=DEFAULT_ARCH, metavar="N",
                   help=f"the CUDA compute capability Triton prints for (default: {DEFAULT_ARCH})")
    p.add_argument("--relative-to", metavar="DIR", default=None,
                   help="write Python file names in locations relative to DIR (default: the current directory)")
    p.add_argument("--list", action="store_true", help="list the exports and exit")
    p.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    return p


def _display(path: str) -> str:
    """`path` relative to the current directory when it is under it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _select(exports: Dict[str, Export], wanted: Sequence[str], where: str) -> List[Export]:
    if not wanted:
        return list(exports.values())
    chosen: List[Export] = []
    for w in wanted:
        hits = [e for e in exports.values() if w in (e.name, e.kernel_name)]
        if not hits:
            have = ", ".join(f"{e.name} ({e.kernel_name})" for e in exports.values()) or "none"
            raise AuthoringError(f"no export or kernel named '{w}' in {where} (TRI_EXPORTS has: {have})")
        chosen += [e for e in hits if e not in chosen]
    return chosen


def _write(path: str, data) -> None:
    mode = "wb" if isinstance(data, bytes) else "w"
    tmp = path + ".tmp"
    with open(tmp, mode) as f:
        f.write(data)
    os.replace(tmp, path)


def _convert(ctx: Context, e: Export, args, err) -> bool:
    """One export: TTIR, then Tri's module, then the files. Prints what failed; True if nothing."""
    base = os.path.join(args.out_dir, e.name)
    try:
        text = ttir(e, args.arch, args.relative_to)
    except AuthoringError as x:
        print(f"{PROG}: error: {x}", file=err)
        return False
    ttir_path = base + ".ttir"
    if args.ttir or args.ttir_only:
        _write(ttir_path, text)
    if args.ttir_only:
        if not args.quiet:
            print(f"{_display(ttir_path)}: TTIR of {_describe(e)}")
        return True
    try:
        module = to_module(ctx, text, _display(ttir_path))
    except TriError as x:
        if not args.ttir:
            _write(ttir_path, text)  # the message's line:col point into it
        print(x.message, file=err)
        print(f"{PROG}: error: Tri cannot import export '{e.name}' ({_describe(e)}); the TTIR is in "
              f"{_display(ttir_path)} ({x.name})", file=err)
        return False
    with module:
        functions = module.functions
        kernels = [f.name for f in functions if f.kind == FunctionKind.KERNEL]
        if args.binary:
            out_path = base + ".trib"
            _write(out_path, module.to_binary())
        else:
            out_path = base + ".tri"
            _write(out_path, f"// {_describe(e)}: imported by {PROG} from the TTIR of Triton "
                             f"{sys.modules['triton'].__version__} (cuda sm_{args.arch})\n" + module.to_text())
        ok = True
        if args.check:
            for k in kernels:
                try:
                    module.compile(k, target="cpu").close()
                except TriError as x:
                    print(x.message, file=err)
                    print(f"{PROG}: error: kernel @{k} of {_display(out_path)} does not compile for the cpu "
                          f"target ({x.name})", file=err)
                    ok = False
    if ok and not args.quiet:
        device = len(functions) - len(kernels)
        print(f"{_display(out_path)}: {_describe(e)} -> {', '.join('@' + k for k in kernels)}"
              + (f" and {device} device function(s)" if device else "")
              + (", compiles for cpu" if args.check else ""))
    return ok


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    err = sys.stderr
    bad: Dict[str, AuthoringError] = {}
    try:
        exports = load_exports(args.file, bad)
        if args.list:
            for e in exports.values():
                sig = ", ".join(f"{k}: {v}" for k, v in e.signature.items())
                print(f"{e.name}: {_describe(e)} ({sig})")
            for name, x in bad.items():
                print(f"{name}: bad export: {x}")
            return 1 if bad else 0
        # Each export converts on its own: a bad one is reported (when selected) and the others run.
        where = _display(os.path.abspath(args.file))
        wanted = [w for w in args.kernel if w not in bad]
        chosen = _select(exports, wanted, where) if wanted or not args.kernel else []
        failed_exports = [n for n in bad if not args.kernel or n in args.kernel]
        if not chosen and not failed_exports:
            raise AuthoringError(f"TRI_EXPORTS of {where} is empty")
        if chosen:
            os.makedirs(args.out_dir, exist_ok=True)
    except AuthoringError as x:
        print(f"{PROG}: error: {x}", file=err)
        return 1
    except OSError as x:
        print(f"{PROG}: error: {x}", file=err)
        return 1
    for name in failed_exports:
        print(f"{PROG}: error: {bad[name]}", file=err)
    failed = len(failed_exports)
    if not chosen:
        print(f"{PROG}: {failed} of {failed} export(s) failed", file=err)
        return 1
    with Context() as ctx:
        for e in chosen:
            try:
                ok = _convert(ctx, e, args, err)
            except OSError as x:
                print(f"{PROG}: error: export '{e.name}': {x}", file=err)
                ok = False
            failed += not ok
    if failed:
        print(f"{PROG}: {failed} of {len(chosen) + len(failed_exports)} export(s) failed", file=err)
        return 1
    return 0


def __getattr__(name: str):
    # capture, replay and saved on first use, so that `python3 -m tri.triton.capture` runs the
    # module once and `import tri.triton` stays cheap.
    if name in ("capture", "replay", "saved", "dry"):
        return importlib.import_module(f"{__name__}.{name}")
    if name == "HostTensor":
        from .arrays import HostTensor
        return HostTensor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
