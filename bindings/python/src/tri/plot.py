"""The tuning space as a picture, from Module.tune's result (the same picture `tri tune --plot`
draws, tools/tune_plot.cpp): two or more constexprs (or warps, stages) that vary give a heatmap
over the first two, each cell the fastest config with those two values; one gives bars. The
winner is outlined; configs that failed say so. Hand-written SVG: no plotting library needed.

    kernel, result = module.tune("matmul", tri.Product({"BM": [64, 128], "BN": [64, 128]}), ...)
    tri.plot.save_tune_svg(result, "matmul.svg")
"""

import math
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union
from xml.sax.saxutils import escape

__all__ = ["tune_svg", "save_tune_svg"]


def _values(cfg: Mapping[str, Any]) -> List[Tuple[str, int]]:
    """A result config's values: its constexprs, then warps and stages."""
    out = list((k, int(v)) for k, v in cfg.get("constexprs", {}).items())
    out.append(("warps", int(cfg.get("num_warps", 4))))
    out.append(("stages", int(cfg.get("num_stages", 0))))
    return out


def _color(t: float) -> str:
    t = min(max(t, 0.0), 1.0)
    r, g, b = int(35 + t * 215), int(139 + t * 101), int(69 + t * 111)
    return f"#{r:02x}{g:02x}{b:02x}"


def _us(us: float) -> str:
    return f"{us:.0f}" if us >= 1000 else f"{us:.1f}" if us >= 10 else f"{us:.2f}"


def _text(x, y, s, anchor="middle", size=12, extra=""):
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}"{extra}>{escape(str(s))}</text>\n'


def tune_svg(result: Mapping[str, Any], title: Optional[str] = None) -> str:
    """The SVG (text) of a tuning result: the dict Module.tune returns (or tri_tune's JSON, parsed)."""
    configs = result["configs"]
    best = result.get("best", -1)
    title = title or f"@{result.get('kernel', '?')} on {result.get('target', '?')}"
    rows_: List[Dict[str, Any]] = []
    for c in configs:
        ok = c.get("status", 1) == 0 and c.get("measured", False)
        rows_.append({"values": _values(c), "ok": ok, "us": c.get("median_ns", 0) / 1e3 if ok else 0.0,
                      "winner": c.get("index") == best})
    names: List[str] = []
    values: Dict[str, List[int]] = {}
    for r in rows_:
        for n, v in r["values"]:
            if n not in values:
                names.append(n)
                values[n] = []
            if v not in values[n]:
                values[n].append(v)
    axes = [n for n in names if len(values[n]) > 1]
    for n in values:
        values[n].sort()
    times = [r["us"] for r in rows_ if r["ok"]]
    lo, hi = (min(times), max(times)) if times else (1.0, 1.0)

    def shade(us):
        return (math.log(us) - math.log(lo)) / (math.log(hi) - math.log(lo)) if hi > lo else 0.0

    def value_of(r, n):
        return dict(r["values"]).get(n, 0)

    left, top = 90.0, 56.0
    body = ""
    if len(axes) >= 2:
        rows, cols = values[axes[0]], values[axes[1]]
        cw, ch = 86.0, 40.0
        width, height = left + cw * len(cols) + 30, top + ch * len(rows) + 64
        for i, rv in enumerate(rows):
            body += _text(left - 8, top + ch * i + ch / 2 + 4, rv, "end")
            for k, cv in enumerate(cols):
                cell = [r for r in rows_ if value_of(r, axes[0]) == rv and value_of(r, axes[1]) == cv]
                good = [r for r in cell if r["ok"]]
                fastest = min(good, key=lambda r: r["us"]) if good else None
                winner = any(r["winner"] for r in cell)
                x, y = left + cw * k, top + ch * i
                rect = f'<rect x="{x:.1f}" y="{y:.1f}" width="{cw - 2:.1f}" height="{ch - 2:.1f}"'
                if not cell:
                    body += rect + ' fill="#ffffff" stroke="#dddddd"/>\n'
                elif fastest is None:
                    body += rect + ' fill="#dddddd"/>\n' + _text(x + cw / 2 - 1, y + ch / 2 + 4, "failed", "middle", 11,
                                                                ' fill="#777777"')
                else:
                    outline = ' stroke="#000000" stroke-width="3"' if winner else ""
                    body += rect + f' fill="{_color(shade(fastest["us"]))}"{outline}/>\n'
                    body += _text(x + cw / 2 - 1, y + ch / 2 + 4, _us(fastest["us"]) + " us", "middle", 12,
                                  ' font-weight="bold"' if winner else "")
        for k, cv in enumerate(cols):
            body += _text(left + cw * k + cw / 2 - 1, top + ch * len(rows) + 16, cv)
        body += _text(left + cw * len(cols) / 2, top + ch * len(rows) + 36, axes[1])
        mid = top + ch * len(rows) / 2
        body += _text(18, mid, axes[0], "middle", 12, f' transform="rotate(-90 18 {mid:.1f})"')
        rest = ", ".join(axes[2:])
        body += _text(left, height - 10, "each cell: the fastest config with those values"
                      + (f" (over {rest})" if rest else "") + "; outlined: the winner", "start", 11, ' fill="#555555"')
    else:
        bw, ph = 56.0, 220.0
        width, height = left + bw * len(rows_) + 30, top + ph + 64
        scale = ph / hi if hi > 0 else 1.0
        for i, r in enumerate(rows_):
            x = left + bw * i
            label = f"#{i}" if not axes else value_of(r, axes[0])
            if r["ok"]:
                h = max(1.0, r["us"] * scale)
                outline = ' stroke="#000000" stroke-width="3"' if r["winner"] else ""
                body += (f'<rect x="{x + 6:.1f}" y="{top + ph - h:.1f}" width="{bw - 12:.1f}" height="{h:.1f}" '
                         f'fill="{_color(shade(r["us"]))}"{outline}/>\n')
                body += _text(x + bw / 2, top + ph - h - 6, _us(r["us"]), "middle", 11,
                              ' font-weight="bold"' if r["winner"] else "")
            else:
                body += _text(x + bw / 2, top + ph - 6, "failed", "middle", 11, ' fill="#777777"')
            body += _text(x + bw / 2, top + ph + 16, label)
        body += (f'<line x1="{left:.1f}" y1="{top + ph:.1f}" x2="{left + bw * len(rows_):.1f}" y2="{top + ph:.1f}" '
                 'stroke="#444444"/>\n')
        body += _text(left + bw * len(rows_) / 2, top + ph + 36, axes[0] if axes else "config")
        body += _text(left - 8, top + 10, "us", "end")
        body += _text(left, height - 10, "median per config; outlined: the winner", "start", 11, ' fill="#555555"')
    width = max(width, 420.0)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            'font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n'
            + _text(left, 24, title, "start", 15, ' font-weight="bold"')
            + _text(left, 42, "median time of each config (lower is better)", "start", 11, ' fill="#555555"')
            + body + "</svg>\n")


def save_tune_svg(result: Mapping[str, Any], path: Union[str, os.PathLike], title: Optional[str] = None) -> None:
    """Writes tune_svg(result) to `path`."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(tune_svg(result, title))
