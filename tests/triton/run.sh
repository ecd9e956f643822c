#!/usr/bin/env bash
# Runs the Triton corpus's pytest files against the libtri.so of a build tree, for CTest
# (tests/triton.cmake):
#   corpus  test_corpus.py: the committed TTIR fixtures on interp and cpu against NumPy. Needs
#           NumPy and pytest (Debian's python3-numpy, python3-pytest), never Triton, never skips.
#   tool    test_tool.py, test_tool_exports.py: python3 -m tri.triton on the corpus and on broken
#           inputs (each export on its own, type checks, --help without libtri). Needs Triton
#           (pip install triton) as well; without it those tests print "skipped: triton not
#           installed" and CTest reports the test as skipped.
#   replay  test_replay.py: the committed capture (tests/triton/capture/) replayed on cpu and
#           interp by python3 -m tri.triton.replay. NumPy and pytest only, like corpus.
#   capture test_capture.py: tri.triton.capture's dry run of capture_program.py through Triton's
#           runtime (no GPU). Needs Triton; skipped like tool without it.
#   capture_gpu  test_capture_gpu.py: capture and replay on a GPU next to Triton. Needs Triton,
#           PyTorch and a CUDA device; without them it prints "skipped: no CUDA device".
#   tutorials, flaggems
#           tests/corpus/test_corpus.py for one corpus of kernels written elsewhere (Triton's
#           tutorials, FlagGems' operators; tests/corpus.cmake): NumPy and pytest, never Triton.
#   descriptors  tests/corpus/test_descriptors.py: host-side TensorDescriptor arguments as the GPU
#           benchmark passes them to Tri and to Triton. Its Triton tests are skipped like tool's.
# Environment: TRI_SOURCE_DIR, TRI_BUILD_DIR (set by CTest); TRI_LIB (default
# $TRI_BUILD_DIR/src/libtri.so); PYTHON, a python3 to use before the ones found on PATH.
set -euo pipefail

what=${1:?usage: run.sh corpus|tool|replay|capture|capture_gpu|tutorials|flaggems|descriptors}
src=${TRI_SOURCE_DIR:?TRI_SOURCE_DIR must name the source tree}
lib=${TRI_LIB:-${TRI_BUILD_DIR:?TRI_BUILD_DIR must name the build tree}/src/libtri.so}
fail() { echo "triton/$what: $*" >&2; exit 1; }
[[ -f $lib ]] || fail "no libtri.so at $lib (build the 'tri' target first)"

# The first python3 that has the modules; Debian's has NumPy and pytest, a venv may add Triton.
python_with() {
  local mods=$1 p
  for p in ${PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c "import $mods" >/dev/null 2>&1; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

case $what in
  corpus | replay | capture | capture_gpu) files=(tests/triton/test_$what.py) ;;
  tool) files=(tests/triton/test_tool.py tests/triton/test_tool_exports.py) ;;
  tutorials | flaggems) files=(tests/corpus/test_corpus.py) && export TRI_CORPUS=$what ;;
  descriptors) files=(tests/corpus/test_descriptors.py) ;;
  *) fail "unknown part '$what' (corpus, tool, replay, capture, capture_gpu, tutorials, flaggems or descriptors)" ;;
esac
py=$(python_with "numpy, pytest") ||
  fail "no python3 with numpy and pytest: install Debian's python3-numpy and python3-pytest" \
    "(bash scripts/install-deps.sh)"
if [[ $what == capture_gpu ]]; then
  py=$(python_with "numpy, pytest, triton, torch") || py=$(python_with "numpy, pytest")
elif [[ $what == tool || $what == capture || $what == descriptors ]]; then
  py=$(python_with "numpy, pytest, triton") || py=$(python_with "numpy, pytest")
fi
echo "triton/$what: $("$py" --version), numpy $("$py" -c 'import numpy; print(numpy.__version__)')," \
  "triton $("$py" -c 'import triton; print(triton.__version__)' 2>/dev/null || echo 'not installed')"
cd "$src"
export TRI_LIBRARY=$lib PYTHONPATH=$src/bindings/python/src${PYTHONPATH:+:$PYTHONPATH} PYTHONDONTWRITEBYTECODE=1
exec "$py" -m pytest -q -rs -p no:cacheprovider "${files[@]}"
