#!/usr/bin/env bash
# The house's shape as docs describe it (docs/architecture.md): README's layout block names every
# folder of src/ (src/X literally; a folder below one as src/X/Y or as "Y/" in X's entry), every
# target has a folder behind src/target/ that docs/architecture.md names, and the C API reaches
# targets only through target/target.h (no driver's name in src/capi).
set -euo pipefail
cd "${TRI_SOURCE_DIR:?}"
layout=$(sed -n '/^## Layout/,/^## /p' README.md)
fail=0
for d in src/*/ src/*/*/; do
  d=${d%/}
  case $d in
    src/*/*)
      parent=${d%/*} name=${d##*/}
      if ! grep -q "^$d\b" <<<"$layout" && ! grep -A3 "^$parent\b" <<<"$layout" | grep -q "\b$name/"; then
        echo "README.md's layout does not name $d (as $d, or as $name/ under $parent)"
        fail=1
      fi
      ;;
    *)
      if ! grep -q "^$d\b" <<<"$layout"; then
        echo "README.md's layout does not name $d"
        fail=1
      fi
      ;;
  esac
done
for t in src/target/*/; do
  t=${t%/}
  grep -q "\`${t#src/}/\`" docs/architecture.md || { echo "docs/architecture.md does not name the target folder ${t#src/}/"; fail=1; }
done
if grep -n 'cuda::\|#include "target/[a-z]*/' src/capi/*.cpp src/capi/*.h; then
  echo "src/capi reaches a target or a driver directly (above); go through target/target.h"
  fail=1
fi
[[ $fail -eq 0 ]] && echo "layout ok: $(ls -d src/*/ src/*/*/ | wc -l) folders named, capi reaches targets through target.h"
exit $fail
