#!/usr/bin/env python3
"""Turns what bench/aot/run.sh measured into one results table (PERF.md's JSON shape, and the
same numbers as Markdown): start to first completed launch from a package (1 kernel, and 20
distinct kernels: the time per kernel), through libtri_rt and libtri, medians of the runs; and the
launch cost of a package's kernel through each library (tri-bench-launch-c built against each).

    python3 bench/aot/table.py OUT_DIR TARGET COMMAND [--gpu NAME] [--json FILE] [--md FILE]

OUT_DIR holds first_launch.jsonl (first_launch.c's lines) and launch-rt.json, launch-full.json
(c_launch.c's objects). Goals (issue 27): 1 ms per kernel; libtri_rt's launch equal to libtri's.
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys


def median(values):
    return round(statistics.median(values), 3) if values else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("target")
    ap.add_argument("command")
    ap.add_argument("--gpu", default="none (CPU)")
    ap.add_argument("--json")
    ap.add_argument("--md")
    a = ap.parse_args()
    runs = [json.loads(line) for line in open(os.path.join(a.out, "first_launch.jsonl")) if line.startswith("{")]
    if not runs:
        print("table.py: no first-launch runs in " + a.out, file=sys.stderr)
        return 1
    launch = {}
    for flavor, lib in (("rt", "libtri_rt"), ("full", "libtri")):
        data = json.load(open(os.path.join(a.out, f"launch-{flavor}.json")))
        for r in data["rows"]:
            launch[(lib, r["workload"])] = r["tri"]
    rows = []
    for n in sorted({r["kernels"] for r in runs}):
        got = {lib: [r for r in runs if r["kernels"] == n and r["library"] == lib] for lib in ("libtri_rt", "libtri")}
        for field, what in (("main_to_first_ms", "main to first launch end"), ("per_kernel_ms", "per kernel")):
            if n == 1 and field == "per_kernel_ms":
                continue
            rt = median([r[field] for r in got["libtri_rt"]])
            full = median([r[field] for r in got["libtri"]])
            rows.append({"workload": f"first launch from a package, {n} kernel{'s' if n > 1 else ''}: {what}",
                         "unit": "ms", "higher_is_better": False, "tri": rt, "libtri": full,
                         "target": 1.0 if field == "per_kernel_ms" or n == 1 else None,
                         "runs": len(got["libtri_rt"]), "all_kernels_ms_rt": median([r["all_kernels_ms"] for r in got["libtri_rt"]]),
                         "all_kernels_ms_libtri": median([r["all_kernels_ms"] for r in got["libtri"]])})
    for kind in ("call", "plan"):
        w = f"launch c {kind}"
        rows.append({"workload": f"launch from a package ({'tri_launch' if kind == 'call' else 'prepared launch'}), "
                                 "vector_add 1024 f32", "unit": "us", "higher_is_better": False,
                     "tri": launch.get(("libtri_rt", w)), "libtri": launch.get(("libtri", w)),
                     "target": launch.get(("libtri", w))})
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    doc = {"date": datetime.date.today().isoformat(), "gpu": a.gpu, "target": a.target, "commit": commit,
           "command": a.command, "rows": rows,
           "note": "tri: through libtri_rt; libtri: the same through libtri; target: the goal (1 ms per kernel; "
                   "libtri's launch cost)"}
    text = json.dumps(doc, indent=1)
    md = [f"| workload ({a.target}) | unit | libtri_rt | libtri | goal |", "|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['workload']} | {r['unit']} | {r['tri']} | {r['libtri']} | "
                  f"{'' if r['target'] is None else ('<= %s' % r['target'])} |")
    print(text)
    print("\n".join(md))
    if a.json:
        open(a.json, "w").write(text + "\n")
    if a.md:
        open(a.md, "w").write("\n".join(md) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
