#!/usr/bin/env bash
# `tri tune --plot`: a heatmap over two values that vary (BLOCK x warps: 4 cells, one outlined,
# the failed BLOCK=100 row shown as such), bars over one (BLOCK), each a well-formed SVG.
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
cells = [r for r in rects if r.get("width") == "84.0"]
assert len(cells) == 6, len(cells)                       # BLOCK 64, 100, 256 x warps 1, 4
assert sum(r.get("stroke-width") == "3" for r in cells) == 1, "one winner outlined"
assert "BLOCK" in texts and "warps" in texts and texts.count("failed") == 1, texts
assert sum(t.endswith(" us") for t in texts) == 4, texts
root, texts, rects = load(sys.argv[2])
bars = [r for r in rects if r.get("width") == "44.0"]
assert len(bars) == 3 and sum(r.get("stroke-width") == "3" for r in bars) == 1, len(bars)
assert "BLOCK" in texts and "64" in texts and "256" in texts, texts
print("tri tune --plot: heatmap and bars ok")
PY
