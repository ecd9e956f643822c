#!/usr/bin/env bash
# `tri tune --plot` (drawn by tri_tune_plot): a heatmap over two values that vary (BLOCK x warps:
# 6 cells, one outlined, the failed BLOCK=100 config shown as such, an empty cell where no config
# has BLOCK=100 and warps=1), bars over one (BLOCK), each a well-formed SVG naming its winner.
# Run by CTest (tests/tool_run.cmake).
set -euo pipefail
tri=${TRI_TOOL:?TRI_TOOL is the tri binary}
src=${TRI_SOURCE_DIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(--kernel vadd --arg x=rand:f32[4096] --arg y=iota:f32[4096] --arg out=zeros:f32[4096] --arg n=4096
      --grid 4096/BLOCK --repeat 2 --cache-dir "$tmp/cache" --retune)
"$tri" tune "$src/tests/run/vadd.tri" "${args[@]}" --values BLOCK=64,256 --warps 1,4 --config BLOCK=100,warps=4 \
  --plot "$tmp/heat.svg" 2>/dev/null | grep -q "^plot: $tmp/heat.svg$"
"$tri" tune "$src/tests/run/vadd.tri" "${args[@]}" --values BLOCK=64,128,256 --plot "$tmp/bars.svg" >/dev/null 2>&1
python3 - "$tmp/heat.svg" "$tmp/bars.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
def load(p):
    root = ET.parse(p).getroot()
    return root, [t.text for t in root.iter(ns + "text")], list(root.iter(ns + "rect"))
root, texts, rects = load(sys.argv[1])
def cls(r):
    return r.get("class", "").split()
cells = [r for r in rects if "cell" in cls(r)]
assert len(cells) == 6, len(cells)                       # BLOCK 64, 100, 256 x warps 1, 4
assert sum("winner" in cls(r) for r in cells) == 1, "one winner outlined"
assert sum("empty" in cls(r) for r in cells) == 1, "BLOCK=100 was tried at warps=4 only"
assert "BLOCK" in texts and "warps" in texts and texts.count("failed") == 1, texts
assert sum(t.endswith(" us") and not t.startswith("winner") for t in texts) == 4, texts
assert sum(t.startswith("winner: config ") for t in texts) == 1, texts
root, texts, rects = load(sys.argv[2])
bars = [r for r in rects if "bar" in cls(r)]
assert len(bars) == 3 and sum("winner" in cls(r) for r in bars) == 1, len(bars)
assert "BLOCK" in texts and "64" in texts and "256" in texts, texts
print("tri tune --plot: heatmap and bars ok")
PY
