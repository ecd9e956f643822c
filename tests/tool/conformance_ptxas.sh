#!/usr/bin/env bash
# Every conformance kernel compiled for sm_80 and sm_90 and checked by NVIDIA's assembler: the
# conformance suite writes each group's IR (TRI_CONF_DUMP, running only the interpreter), `tri
# compile` makes the PTX, ptxas must accept it. A kernel the GPU backend refuses with
# TRI_ERROR_UNSUPPORTED (a math function it does not have yet) is counted apart; any other
# compile error, or a PTX that ptxas rejects, fails the test. Without ptxas it prints
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
ok=0 refused=0 bad=0
for f in "$tmp"/ir/*.tri; do
  for sm in sm_80 sm_90; do
    if "$tri" compile "$f" --target "$sm" -o "$tmp/k.ptx" 2>"$tmp/err"; then
      if "$ptxas" -arch="$sm" -o /dev/null "$tmp/k.ptx" 2>"$tmp/ptxas.err"; then
        ok=$((ok + 1))
      else
        bad=$((bad + 1))
        echo "FAIL: ptxas -arch=$sm rejected $(basename "$f"): $(head -3 "$tmp/ptxas.err")"
      fi
    elif grep -q "has no implementation of" "$tmp/err"; then
      refused=$((refused + 1))
    else
      bad=$((bad + 1))
      echo "FAIL: $(basename "$f") for $sm: $(head -3 "$tmp/err")"
    fi
  done
done
echo "conformance kernels through ptxas: $ok assembled, $refused refused (GPU math not there yet), $bad failed"
[[ $bad -eq 0 ]]
