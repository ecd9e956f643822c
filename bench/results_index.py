#!/usr/bin/env python3
"""Writes bench/results/README.md: an index of the dated result tables in bench/results, and an
SVG chart per family of tables (gpu, matmul, attention, dist, ...) of Tri's ratio to each anchor
(Triton, torch, cuBLAS, SDPA, PyTorch+NCCL) for every workload, across the runs in date order:
one small panel per workload, a line per anchor, the 1.0 line where Tri equals the anchor.

Ratios are read from the tables' columns headed `Tri/ANCHOR` or `Tri speed / ANCHOR speed` (and
`speedup N`, next to a column `ANCHOR run N`); a table without such a column is indexed but not
charted. A table is named FAMILY-YYYY-MM-DD[-TAG].md (TAG: the commit, then any words, as in
`triton-libraries-2026-11-28-daf2b92-fla.md`); a Markdown file named otherwise is an error, so no
table goes unindexed. Hand-written SVG: no
library, no network. Run it after adding a result (the test command checks that the committed
index is current: `bench/results_index.py --check`).

    python3 bench/results_index.py [--check]
"""

import argparse
import os
import re
import sys
from collections import OrderedDict
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
NAME = re.compile(r"^(?P<family>[a-z][a-z-]*?)-(?P<date>\d{4}-\d{2}-\d{2})(?:-(?P<tag>[0-9a-z]+(?:-[0-9a-z]+)*))?\.md$")
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def runs():
    """(family, date, tag, file name) of every dated table, in date order, then name order."""
    out, odd = [], []
    for f in sorted(os.listdir(RESULTS)):
        m = NAME.match(f)
        if m:
            out.append((m.group("family"), m.group("date"), m.group("tag") or "", f))
        elif f.endswith(".md") and f != "README.md":
            odd.append(f)
    if odd:
        raise SystemExit("bench/results: " + ", ".join(odd) + ": not named FAMILY-YYYY-MM-DD[-TAG].md, so the index "
                         "would leave them out; rename them")
    # Tables of one day are ordered by the commit they measured, where their tag starts with one
    # that git knows (oldest first), else by name: by name alone 978cfc7 came after cd28460.
    order = commit_order()

    def key(r):
        head = r[2].split("-")[0]
        return (r[1], order.get(head[:7], -1) if re.fullmatch(r"[0-9a-f]{7,40}", head) else -1, r[3])
    return sorted(out, key=key)


def commit_order():
    """Abbreviated commit -> position in history (0: the first commit); empty without git."""
    try:
        import subprocess
        text = subprocess.run(["git", "-C", HERE, "log", "--reverse", "--format=%h", "--abbrev=7"],
                              capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {h[:7]: i for i, h in enumerate(text.split())}


def number(cell):
    m = re.search(r"-?\d+(?:\.\d+)?", cell.replace("**", ""))
    return float(m.group()) if m else None


def ratios(path):
    """{(workload, anchor): ratio} of the file's tables; the first value where a row repeats."""
    out = OrderedDict()
    header = None
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue
        for i, h in enumerate(header[:len(cells)]):
            anchor = None
            m = re.fullmatch(r"Tri(?: speed)?\s*/\s*(.+?)(?: speed)?", h)
            if m:
                anchor = m.group(1)
            m = re.fullmatch(r"speedup (\d+)", h)
            if m and i > 0:
                anchor = re.sub(r"\s+run\s+\d+$", "", header[i - 1])
            if anchor is None or anchor == "anchor":
                continue
            v = number(cells[i])
            if v is not None and v > 0:
                out.setdefault((cells[0], anchor), v)
    return out


def chart(family, series, labels):
    """An SVG of small panels, one per workload: a line per anchor over the runs (x: run index)."""
    workloads = list(OrderedDict((w, None) for w, _ in series))
    anchors = list(OrderedDict((a, None) for _, a in series))
    pw, ph, cols = 300, 150, 3
    rows = (len(workloads) + cols - 1) // cols
    width, height = pw * cols + 20, ph * rows + 70
    n = len(labels)
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif">',
         '<rect width="100%" height="100%" fill="white"/>',
         f'<text x="10" y="22" font-size="15" font-weight="bold">{escape(family)}: Tri / anchor per workload, '
         f'{n} runs ({escape(labels[0])} .. {escape(labels[-1])})</text>']
    for k, a in enumerate(anchors):
        x = 10 + 150 * k
        s.append(f'<line x1="{x}" y1="40" x2="{x + 24}" y2="40" stroke="{COLORS[k % len(COLORS)]}" stroke-width="2"/>')
        s.append(f'<text x="{x + 30}" y="44" font-size="12">Tri/{escape(a)}</text>')
    for p, w in enumerate(workloads):
        ox, oy = 10 + (p % cols) * pw, 56 + (p // cols) * ph
        vals = [v for (ww, _), pts in series.items() if ww == w for _, v in pts]
        lo, hi = min(vals + [1.0]), max(vals + [1.0])
        if hi - lo < 0.1:
            lo, hi = lo - 0.05, hi + 0.05
        x0, x1, y0, y1 = ox + 34, ox + pw - 14, oy + 22, oy + ph - 22

        def X(i):
            return x0 + (x1 - x0) * (i / (n - 1) if n > 1 else 0.5)

        def Y(v):
            return y1 - (y1 - y0) * (v - lo) / (hi - lo)

        title = w if len(w) <= 44 else w[:43] + "…"
        s.append(f'<text x="{ox + 34}" y="{oy + 14}" font-size="11">{escape(title)}</text>')
        s.append(f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="none" stroke="#cccccc"/>')
        s.append(f'<line x1="{x0}" y1="{Y(1.0):.1f}" x2="{x1}" y2="{Y(1.0):.1f}" stroke="#888888" '
                 'stroke-dasharray="3,3"/>')
        for v in (lo, hi):
            s.append(f'<text x="{x0 - 4}" y="{Y(v) + 4:.1f}" font-size="9" text-anchor="end">{v:.2f}</text>')
        for k, a in enumerate(anchors):
            pts = series.get((w, a))
            if not pts:
                continue
            color = COLORS[k % len(COLORS)]
            path = " ".join(f"{X(i):.1f},{Y(v):.1f}" for i, v in pts)
            if len(pts) > 1:
                s.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.5"/>')
            for i, v in pts:
                s.append(f'<circle cx="{X(i):.1f}" cy="{Y(v):.1f}" r="2.2" fill="{color}"/>')
            i, v = pts[-1]
            s.append(f'<text x="{X(i) + 3:.1f}" y="{Y(v) - 4:.1f}" font-size="9" fill="{color}">{v:.2f}</text>')
    s.append("</svg>")
    return "\n".join(s) + "\n"


def build():
    """{relative path: text} of everything the index consists of."""
    all_runs = runs()
    families = OrderedDict()
    for family, date, tag, f in all_runs:
        families.setdefault(family, []).append((date, tag, f))
    files = OrderedDict()
    md = ["# Benchmark results", "",
          "Generated by `python3 bench/results_index.py` from the dated tables in this folder (run it after adding",
          "one; the test command checks that this page is current). Each chart has a panel per workload: Tri's",
          "ratio to each anchor over the runs of that table family, oldest left, the dashed line at 1.0 (above it",
          "Tri is faster, for throughputs and speedups). The runs differ in commit and sometimes in machine: the",
          "tables say which.", ""]
    md += ["| family | runs | latest | chart |", "|---|---|---|---|"]
    charted = {}
    for family, items in families.items():
        series = OrderedDict()
        labels = []
        for date, tag, f in items:
            r = ratios(os.path.join(RESULTS, f))
            if not r:
                continue
            labels.append(f"{date}{' ' + tag if tag else ''}")
            for key, v in r.items():
                series.setdefault(key, []).append((len(labels) - 1, v))
        if series:
            name = f"charts/{family}.svg"
            files[name] = chart(family, series, labels)
            charted[family] = name
        latest = items[-1][2]
        md.append(f"| {family} | {len(items)} | [{latest}]({latest}) | "
                  + (f"[{family}.svg]({charted[family]})" if family in charted else "no ratio columns") + " |")
    for family, name in charted.items():
        md += ["", f"## {family}", "", f"![{family}: Tri / anchor per workload]({name})"]
    md += ["", "## Every table", ""]
    for family, date, tag, f in reversed(all_runs):
        md.append(f"- {date} [{f}]({f})")
    files["README.md"] = "\n".join(md) + "\n"
    return files


def main(argv):
    ap = argparse.ArgumentParser(description="Write (or --check) bench/results/README.md and its charts.")
    ap.add_argument("--check", action="store_true", help="exit 1 when the committed index is not what this writes")
    args = ap.parse_args(argv)
    files = build()
    stale = []
    for rel, text in files.items():
        path = os.path.join(RESULTS, rel)
        if args.check:
            try:
                same = open(path, encoding="utf-8").read() == text
            except OSError:
                same = False
            if not same:
                stale.append(rel)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    if args.check:
        if stale:
            print("bench/results index is not current (run python3 bench/results_index.py): " + ", ".join(stale))
            return 1
        print(f"bench/results index: current ({len(files)} files)")
        return 0
    print(f"wrote bench/results/README.md and {len(files) - 1} charts")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
