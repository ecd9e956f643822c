"""The launch benchmarks of every language in one run, and the table (issue 26): the host cost of
one launch of a 4-argument vector add (1024 elements, one program) from C, Python, Rust, Go and
Julia (where `julia` is on PATH), each as a direct call and as a prepared plan, next to the floor
measured from the same language (a raw cuLaunchKernel of the same PTX through that language's
FFI on "cuda"; tri_launch called straight through its FFI, arguments built once, on "cpu"),
Triton's launch in the Python process, and on "cuda" a CUDA graph captured from binding launches.

Every benchmark times batches of 1000 launches, the methods taking turns for 31 rounds, and
reports its median round per launch (the GPU drains between batches, untimed). The Python rows
take `raw` from the C benchmark of the same run (their ctypes floors are slower than the
binding's compiled path, and stay in the row as raw_ctypes / floor_ctypes); the Python package is
run twice, on its compiled launch path and on its pure-Python one (TRI_PYTHON_EXTENSION=0).

Targets (issue 26; `target` in us, `met` says whether `tri` is within it):
- Python: a direct call <= 4 us on "cuda" (raw + 1 us on "cpu"), a plan <= raw + 1 us;
- Rust, Go, Julia: a direct call <= raw + 2 us, a plan <= raw + 1 us (raw from the same language);
- C: tri_launch <= 1.1x raw, a plan <= raw + 0.3 us (PERF.md); a graph replay <= 1.0 us per kernel.
With --target cpu and a fake driver (--fake-libcuda, default build/tests/libfake_libcuda.so) the
"cuda" path of every language runs too, on tests/target/cuda/fake_libcuda.c, whose cuLaunchKernel
returns at once: rows "..., fake cuda driver", the bindings' own cost on that path.

usage: python3 bench/launch/run.py [--target cuda|cpu] [--lib build/src/libtri.so]
           [--bin build/launch-bench] [--fake-libcuda PATH|none] [--out bench/results] [--commit SHA]
           [--batch 1000] [--rounds 31]
Builds nothing: bench/launch/build.sh makes the binaries (and the Python extension) in --bin.
Writes OUT/launch-bindings-<target>-<date>-<commit>.md and .json and prints the Markdown."""
import argparse
import datetime
import glob
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))


def run_json(cmd, env, what):
    """Runs one benchmark; its JSON object, or None (with the reason printed) when it skipped or
    failed."""
    try:
        p = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"run.py: {what}: {e}", file=sys.stderr)
        return None
    if p.returncode != 0:
        print(f"run.py: {what} failed ({p.returncode}):\n{p.stderr[-3000:]}", file=sys.stderr)
        return None
    out = p.stdout.strip()
    if out.startswith("skipped"):
        print(f"run.py: {what}: {out}", file=sys.stderr)
        return None
    if p.stderr.strip():
        print(f"run.py: {what}: {p.stderr.strip()[-2000:]}", file=sys.stderr)
    return json.loads(out[out.index("{"):])


def python_extension(bin_dir, env):
    """The compiled launch path for this python3: TRI_PYTHON_EXTENSION_PATH, else build.sh's copy
    when its ABI is this interpreter's, else one built now into a temporary folder (needs a C
    compiler and Python's headers); None and why, otherwise."""
    if env.get("TRI_PYTHON_EXTENSION_PATH"):
        return env["TRI_PYTHON_EXTENSION_PATH"], ""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    made = os.path.join(bin_dir, "python", "tri", "_launch" + suffix)
    if os.path.exists(made):
        return made, ""
    tmp = tempfile.mkdtemp(prefix="tri-launch-ext-")
    p = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", tmp, "--build-temp",
                        os.path.join(tmp, "tmp")], cwd=os.path.join(ROOT, "bindings", "python"), capture_output=True,
                       text=True)
    found = glob.glob(os.path.join(tmp, "tri", "_launch*.so"))
    if found:
        return found[0], ""
    # Without setuptools: the compiler and Python's headers directly (what Triton's launcher stubs need too).
    out = os.path.join(tmp, "_launch" + suffix)
    cc = [os.environ.get("CC", "cc"), "-O2", "-std=c11", "-shared", "-fPIC",
          "-I" + sysconfig.get_paths()["include"], os.path.join(ROOT, "bindings", "python", "src", "tri", "_launch.c"),
          "-o", out]
    q = subprocess.run(cc, capture_output=True, text=True)
    if q.returncode == 0:
        return out, ""
    return None, (f"no {made}, and it could not be built here: setup.py said {(p.stderr or p.stdout).strip()[-300:]}; "
                  f"{' '.join(cc)} said {q.stderr.strip()[-300:]}")


def languages(bin_dir, target, env, batch, rounds):
    """(name, command, extra environment) of every benchmark there is to run."""
    common = ["--target", target, "--batch", str(batch), "--rounds", str(rounds)]
    out = []
    for name, exe in (("c", "tri-bench-launch-c"), ("rust", "tri-launch-bench-rust")):
        path = os.path.join(bin_dir, exe)
        if os.path.exists(path):
            out.append((name, [path] + common, {}))
        else:
            print(f"run.py: no {path} (bash bench/launch/build.sh builds it): no {name} rows", file=sys.stderr)
    go = os.path.join(bin_dir, "tri-launch-bench-go")
    if os.path.exists(go):
        out.append(("go", [go, "-target", target, "-batch", str(batch), "-rounds", str(rounds)], {}))
    else:
        print(f"run.py: no {go} (bash bench/launch/build.sh builds it): no go rows", file=sys.stderr)
    julia = shutil.which("julia")
    if julia:
        out.append(("julia", [julia, "--project=" + os.path.join(ROOT, "bindings", "julia"),
                              os.path.join(HERE, "julia", "launch.jl")] + common, {}))
    else:
        print("run.py: julia is not on PATH: no julia rows", file=sys.stderr)
    py = [sys.executable, os.path.join(HERE, "python_launch.py")] + common
    ext, why = python_extension(bin_dir, env)
    if ext:
        out.append(("python", py, {"TRI_PYTHON_EXTENSION": "1", "TRI_PYTHON_EXTENSION_PATH": ext}))
    else:
        print(f"run.py: the Python rows run on the pure-Python path only: {why}", file=sys.stderr)
    out.append(("python", py + (["--no-graphs"] if ext else []), {"TRI_PYTHON_EXTENSION": "0"}))
    return out


def run_all(bin_dir, target, env, batch, rounds, label=""):
    rows, floors = [], {}
    for name, cmd, extra in languages(bin_dir, target, env, batch, rounds):
        got = run_json(cmd, dict(env, **extra), f"{name} ({target}{label})")
        if got is None:
            continue
        for r in got["rows"]:
            r["language"] = name
            if "launch_path" in got:
                r["launch_path"] = got["launch_path"]
            if label:
                r["workload"] += label
            rows.append(r)
    c = {r["workload"]: r for r in rows if r["language"] == "c"}
    c_call, c_plan = c.get("launch c call" + label), c.get("launch c plan" + label)
    # The C floor of the Python rows, and every row's target.
    for r in rows:
        lang, kind = r["language"], ("plan" if " plan" in r["workload"] else "call")
        if "graph" in r["workload"]:
            r["target"] = 1.0
        elif lang == "c":
            # PERF.md's targets hold against a real driver; the fake one's launch costs nothing.
            if "raw" in r and not label:
                r["target"] = round(r["raw"] * 1.1 if kind == "call" else r["raw"] + 0.3, 3)
        elif lang == "python":
            if c_call is not None:
                r["raw"] = c_call["raw"] if "raw" in c_call else c_call["tri"]
                r["raw_from"] = "C, raw cuLaunchKernel" if "raw" in c_call else "C, tri_launch"
                r["target"] = round(4.0 if (kind == "call" and target == "cuda" and not label) else r["raw"] + 1.0, 3)
        elif "raw" in r:
            r["target"] = round(r["raw"] + (2.0 if kind == "call" else 1.0), 3)
        if "target" in r:
            r["met"] = r["tri"] <= r["target"]
    return rows


def loadavg():
    """The 1, 5 and 15 minute load averages (a shared machine's measurements depend on them)."""
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def machine(target):
    if target == "cuda":
        try:
            return subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                                  text=True).stdout.splitlines()[0].strip()
        except (OSError, IndexError):
            return "a CUDA device"
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    return f"{model or platform.processor()} ({os.cpu_count()} cores)"


NOTES = ("launch_path", "arrays", "raw_from", "floor", "floor_ctypes", "raw_ctypes", "ffi_call", "cgo_call",
         "args_boxed_once", "launch_method", "triton")


def markdown(doc):
    out = [f"# Launch cost from every language, {doc['target']} — {doc['date']}, {doc['gpu']}, commit {doc['commit']}",
           "", f"`{doc['command']}`. Host time per launch of a 4-argument vector add (1024 elements, one program), "
           "median of 31 rounds of 1000 launches, the methods taking turns; `raw` is the floor from the same "
           f"language (Python: from C, see bench/launch/run.py); targets from issue 26. Load average: "
           f"{doc['load_average']}.", "",
           "| workload | tri (us) | raw (us) | target (us) | met | notes |", "|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        notes = ", ".join(f"{k} {r[k]}" for k in NOTES if k in r and k != "launch_path")
        met = "" if "met" not in r else ("yes" if r["met"] else "**no**")
        out.append(f"| {r['workload']} | {r['tri']:.3f} | {r.get('raw', '')} | {r.get('target', '')} | {met} | "
                   f"{notes} |")
    out += ["", "Fields: `floor` = tri_launch called straight through the language's FFI with its arguments "
            "built once; `ffi_call` = an empty call through that FFI (tri_version), `cgo_call` = an empty cgo "
            "call (Go's own cost); `floor_ctypes` / `raw_ctypes` = Python's floors through ctypes; "
            "`args_boxed_once` = Go's direct call with its interface{} arguments made once; `triton` = Triton "
            "3.x `add_kernel[(1,)](...)` in the same Python process (graph row: Triton's launches captured by "
            "torch.cuda.graph)."]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--lib", default=os.path.join(ROOT, "build", "src", "libtri.so"))
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "launch-bench"))
    ap.add_argument("--fake-libcuda", default=os.path.join(ROOT, "build", "tests", "libfake_libcuda.so"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--commit")
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=31)
    a = ap.parse_args()
    lib = os.path.abspath(a.lib)
    env = dict(os.environ, TRI_LIBRARY=lib, TRI_SOURCE_DIR=ROOT,
               LD_LIBRARY_PATH=os.pathsep.join(filter(None, [os.path.dirname(lib), os.environ.get("LD_LIBRARY_PATH")])))
    env.pop("TRI_LIBCUDA", None)
    load_before = loadavg()
    rows = run_all(a.bin, a.target, env, a.batch, a.rounds)
    if a.target == "cpu" and a.fake_libcuda != "none" and os.path.exists(a.fake_libcuda):
        fake_env = dict(env, TRI_LIBCUDA=os.path.abspath(a.fake_libcuda))
        rows += run_all(a.bin, "cuda", fake_env, a.batch, a.rounds, label=", fake cuda driver")
    commit = a.commit or subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                        text=True).stdout.strip() or "unknown"
    date = datetime.date.today().isoformat()
    cmd = "python3 bench/launch/run.py " + " ".join(sys.argv[1:])
    doc = {"date": date, "gpu": machine(a.target), "commit": commit, "command": cmd.strip(), "target": a.target,
           "load_average": f"{load_before} before, {loadavg()} after", "rows": rows}
    os.makedirs(a.out, exist_ok=True)
    stem = os.path.join(a.out, f"launch-bindings-{a.target}-{date}-{commit}")
    with open(stem + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    md = markdown(doc)
    with open(stem + ".md", "w") as f:
        f.write(md)
    print(md)
    print(f"run.py: wrote {stem}.md and .json", file=sys.stderr)


if __name__ == "__main__":
    main()
