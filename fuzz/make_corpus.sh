#!/usr/bin/env bash
# Seeds the fuzz corpora in a fuzz build dir (never in the source tree):
#   BUILD/corpus/text    examples/*.tri, tests/golden/*/*.tri (must-fail inputs included: near
#                        misses are good seeds), tests/golden/binary/v*/*.tri
#   BUILD/corpus/binary  the binary forms of those that parse, and tests/golden/binary/v*/*.trib
#   BUILD/text.dict      keywords, op, slot, attribute and enum names (from the op table)
#   BUILD/corpus/ttir    tests/import/ttir/*.ttir (Triton's TTIR, for fuzz_ttir) and the snippets of
#                        tests/import/snippets (early returns as cf branches, Triton 3.6's and
#                        3.9's spellings of descriptors and atomics)
#   BUILD/corpus/cache   an entry, a shortcut and a bundle (for fuzz_cache)
#   BUILD/corpus/package a package file and a package body (for fuzz_package)
#   BUILD/corpus/tune    tests/golden/plot/*.json, each behind a 0 byte (a single result, for
#                        fuzz_tune; a first byte with its low bit set reads an export file)
# Existing corpus files are kept: the corpora grow across runs.
# usage: fuzz/make_corpus.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: fuzz/make_corpus.sh BUILD_DIR}
seeds="$build/fuzz/tri_fuzz_seeds"
mkdir -p "$build/corpus/text" "$build/corpus/binary" "$build/corpus/ttir" "$build/corpus/cache" "$build/corpus/package" \
  "$build/corpus/tune"

shopt -s nullglob
texts=("$root"/examples/*.tri "$root"/tests/golden/*/*.tri "$root"/tests/golden/binary/v*/*.tri)
for f in "${texts[@]}"; do
  # golden files of different folders may share a name: prefix the folder
  rel=${f#"$root"/}
  cp -n "$f" "$build/corpus/text/${rel//\//_}" 2>/dev/null || true
done
if [ ${#texts[@]} -gt 0 ]; then
  tmp=$(mktemp -d)
  for f in "${texts[@]}"; do
    rel=${f#"$root"/}
    cp "$f" "$tmp/${rel//\//_}"
  done
  "$seeds" binary "$build/corpus/binary" "$tmp"/*.tri
  rm -rf "$tmp"
fi
for f in "$root"/tests/golden/binary/v*/*.trib; do
  rel=${f#"$root"/}
  cp -n "$f" "$build/corpus/binary/${rel//\//_}" 2>/dev/null || true
done
"$seeds" dict "$build/text.dict"
"$seeds" cache "$build/corpus/cache"
"$seeds" package "$build/corpus/package"
for f in "$root"/tests/golden/plot/*.json; do
  [ -e "$build/corpus/tune/$(basename "$f")" ] || { printf '\0'; cat "$f"; } >"$build/corpus/tune/$(basename "$f")"
done
for f in "$root"/tests/import/ttir/*.ttir "$root"/tests/import/snippets/*.ttir; do
  cp -n "$f" "$build/corpus/ttir/" 2>/dev/null || true
done
echo "corpus: ${#texts[@]} text seeds; $(ls "$build/corpus/text" | wc -l) text, $(ls "$build/corpus/binary" | wc -l) binary inputs in $build/corpus"
