#!/usr/bin/env bash
# Every conformance kernel compiled for sm_80 and sm_90 and checked by NVIDIA's assembler: the
# conformance suite writes each group's IR (TRI_CONF_DUMP, running only the interpreter), `tri
# compile` makes the PTX, ptxas must accept it. Any compile error (the GPU backend has every op
# now, math included), or a PTX that ptxas rejects, fails the test. Without ptxas it prints
# "skipped: no ptxas".
set -euo pipefail
tri=${TRI_TOOL:?TRI_TOOL is the tri binary}
conf=${TRI_CONFORMANCE:?TRI_CONFORMANCE is the conformance binary}
ptxas=$(command -v ptxas || true)
[[ -z "$ptxas" && -x /usr/local/cuda/bin/ptxas ]] && ptxas=/usr/local/cuda/bin/ptxas
if [[ -z "$ptxas" ]]; then echo "skipped: no ptxas"; exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/ir"
TRI_SEED=1 TRI_CONF_TARGETS=interp TRI_CONF_DUMP="$tmp/ir" "$conf" > "$tmp/conf.log" 2>&1 || true
n=$(ls "$tmp/ir" | wc -l)
[[ $n -gt 100 ]] || { echo "FAIL: the conformance suite dumped only $n groups"; cat "$tmp/conf.log"; exit 1; }
ok=0 bad=0
# Each kernel as the "cuda" target compiles it at launch for buffers aligned to 16 bytes (the
# launch-time variant: vector accesses), sm_90 with 1 warp, next to the generic kernel for sm_80
# and sm_90 with 4 warps. The compiler runs with glibc's heap checks on.
mkdir "$tmp/aligned"
for f in "$tmp"/ir/*.tri; do
  sed -E '/^kernel @/ s/(%[A-Za-z0-9_]+: ptr<[^>]+>)([,)])/\1 {align=16}\2/g' "$f" > "$tmp/aligned/$(basename "$f")"
done
check() {  # file sm warps
  if MALLOC_CHECK_=3 MALLOC_PERTURB_=165 "$tri" compile "$1" --target "$2" --num-warps "$3" -o "$tmp/k.ptx" 2>"$tmp/err"; then
    if "$ptxas" -arch="$2" -o /dev/null "$tmp/k.ptx" 2>"$tmp/ptxas.err"; then
      ok=$((ok + 1))
    else
      bad=$((bad + 1))
      echo "FAIL: ptxas -arch=$2 rejected $(basename "$1") ($3 warps): $(head -3 "$tmp/ptxas.err")"
    fi
  else
    bad=$((bad + 1))
    echo "FAIL: $(basename "$1") for $2 with $3 warps: $(head -3 "$tmp/err")"
  fi
}
for f in "$tmp"/ir/*.tri; do
  check "$f" sm_80 4
  check "$f" sm_90 4
  check "$tmp/aligned/$(basename "$f")" sm_90 1
done
# Dots on Hopper's wgmma (sm_90a, warpgroups of 4 warps), aligned so that their tiles are copied
# with cp.async into the pipelined ring.
for f in "$tmp"/aligned/*dot*.tri; do
  check "$f" sm_90a 4
  check "$f" sm_90a 8
done
echo "conformance kernels through ptxas: $ok assembled, $bad failed"
[[ $bad -eq 0 ]]
