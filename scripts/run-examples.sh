#!/usr/bin/env bash
# The main command of README.md: builds the library and the `tri` tool (Release, in build/) and
# runs every examples/*.tri through them: `tri check` (parse and verify) and `tri info` (the
# kernels and their signatures), then prints one line per example.
#
# Executing the examples comes with the executing backends (the interpreter, CPU and CUDA), which
# are not part of the public API yet; this script will run them when they are.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs=${JOBS:-$(nproc)}
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTRI_STATIC_LLVM=ON -DTRI_SANITIZE=OFF >/dev/null
cmake --build build -j "$jobs" --target tri-tool
tri=build/tools/tri

shopt -s nullglob
examples=(examples/*.tri)
if [[ ${#examples[@]} -eq 0 ]]; then
  echo "run-examples: no examples/*.tri" >&2
  exit 1
fi

bad=0
rows=()
for f in "${examples[@]}"; do
  name=$(basename "$f" .tri)
  if err=$("$tri" check "$f" 2>&1); then
    info=$("$tri" info "$f")
    kernels=$(grep -c '^kernel @' <<<"$info" || true)
    funcs=$(grep -c '^func @' <<<"$info" || true)
    names=$(grep -E '^kernel @' <<<"$info" | sed 's/^kernel //' | paste -sd ' ' -)
    rows+=("$(printf '%-24s %-6s %7s %9s  %s' "$name" ok "$kernels" "$funcs" "$names")")
  else
    bad=$((bad + 1))
    rows+=("$(printf '%-24s %-6s %7s %9s  %s' "$name" FAILED - - "$(head -n1 <<<"$err")")")
  fi
done

echo
printf '%-24s %-6s %7s %9s  %s\n' example check kernels functions "kernel names"
printf '%s\n' "${rows[@]}"
echo
echo "${#examples[@]} examples, $((${#examples[@]} - bad)) verified, $bad failed"
[[ $bad -eq 0 ]]
