#!/usr/bin/env bash
# Runs one language binding's tests against the libtri.so of a build tree, for CTest
# (tests/bindings.cmake). Each toolchain comes from Debian's packages (scripts/install-deps.sh);
# a missing one fails the test with the package to install, never skips it.
#
# usage: tests/bindings/run.sh rust|rust-sys|rust-package|rust-rt|go|go-rt|go-module|python|python-pure|python-rt|
#        julia|coverage|tools|launch-bench
# (python: the package with its compiled launch path, tri/_launch.c, built here into the build
# tree; python-pure: the same tests on the pure-Python path, TRI_PYTHON_EXTENSION=0; the -rt ones:
# each binding's package tests against libtri_rt, the runtime without a compiler, docs/aot.md)
# Environment: TRI_SOURCE_DIR, TRI_BUILD_DIR (set by CTest); TRI_LIB (the library file, default
# $TRI_BUILD_DIR/src/libtri.so); CARGO, GO, PYTHON override the tools found.
set -euo pipefail

what=${1:?usage: run.sh rust|rust-sys|rust-package|rust-rt|go|go-rt|go-module|python|python-pure|python-rt|julia|coverage|tools|launch-bench}
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the source tree
src=${TRI_SOURCE_DIR:?TRI_SOURCE_DIR must name the source tree}
build=${TRI_BUILD_DIR:?TRI_BUILD_DIR must name the build tree}
lib=${TRI_LIB:-$build/src/libtri.so}
libdir=$(dirname "$lib")
work=$build/bindings
mkdir -p "$work"

fail() { echo "bindings/$what: $*" >&2; exit 1; }

[[ -f $lib ]] || fail "no libtri.so at $lib (build the 'tri' target first)"
# The package tests make their packages with the build's `tri aot`; the -rt runs load libtri_rt.
export TRI_TOOL=${TRI_TOOL:-$build/tools/tri}
if [[ $what == *-rt ]]; then
  lib=$libdir/libtri_rt.so
  [[ -f $lib ]] || fail "no libtri_rt.so at $lib (build the 'tri_rt' target first)"
fi

# Debian's python3 carries python3-numpy and python3-pytest; a python3 earlier in PATH (a venv,
# pyenv) may not, so the first one that has what is needed wins.
python_with() {
  local mods=$1 p
  for p in ${PYTHON:-} /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c "import $mods" >/dev/null 2>&1; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

case $what in
  rust | rust-sys | rust-package | rust-rt)
    # Debian's cargo (rustc 1.63) is the one the bindings promise to build with.
    cargo=${CARGO:-}
    if [[ -z $cargo ]]; then
      if [[ -x /usr/bin/cargo ]]; then cargo=/usr/bin/cargo; else cargo=$(command -v cargo || true); fi
    fi
    [[ -n $cargo ]] && command -v "$cargo" >/dev/null ||
      fail "cargo not found${cargo:+ at $cargo}: install Debian's cargo and rustc (bash scripts/install-deps.sh)"
    if [[ $what == rust-sys ]]; then
      py=$(python_with sys) || fail "python3 not found (apt-get install python3)"
      exec "$py" "$src/bindings/rust/tri-sys/generate.py" --check
    fi
    if [[ $what == rust-package ]]; then
      exec bash "$src/tests/bindings/rust_package.sh" "$cargo" "$build"
    fi
    echo "bindings/rust: $("$cargo" --version)"
    cd "$src/bindings/rust"
    # The build tree keeps the artifacts; the source tree stays clean.
    export CARGO_TARGET_DIR=$work/rust-target TRI_LIB_DIR=$libdir
    export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    if [[ $what == rust-rt ]]; then
      # The package tests, built with the feature runtime-only: linked with libtri_rt alone.
      exec "$cargo" test --offline --locked -p tri --features runtime-only --test package
    fi
    exec "$cargo" test --offline --locked
    ;;
  go)
    go=${GO:-$(command -v go || true)}
    [[ -n $go ]] && command -v "$go" >/dev/null ||
      fail "go not found${go:+ at $go}: install Debian's golang-go (bash scripts/install-deps.sh)"
    echo "bindings/go: $("$go" version)"
    cd "$src/bindings/go"
    # cgo finds tri.h and libtri through pkg-config: the build tree's tri-uninstalled.pc.
    [[ -f $build/tri-uninstalled.pc ]] || fail "no $build/tri-uninstalled.pc (re-run cmake)"
    export CGO_ENABLED=1 PKG_CONFIG_PATH=$build${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
    export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export GOFLAGS=-mod=mod GOCACHE=${GOCACHE:-$work/go-cache} GOPATH=${GOPATH:-$work/go-path} GOTOOLCHAIN=local
    # cgocheck=2 checks every pointer the package hands to C against the cgo rules.
    export GOPROXY=off GODEBUG=cgocheck=2
    "$go" vet ./...
    exec "$go" test -count=1 ./...
    ;;
  go-module)
    go=${GO:-$(command -v go || true)}
    [[ -n $go ]] && command -v "$go" >/dev/null ||
      fail "go not found${go:+ at $go}: install Debian's golang-go (bash scripts/install-deps.sh)"
    exec bash "$src/tests/bindings/go_module.sh" "$go" "$build"
    ;;
  python | python-pure | python-rt)
    py=$(python_with "numpy, pytest") ||
      fail "no python3 with numpy and pytest: install Debian's python3-numpy and python3-pytest (bash scripts/install-deps.sh)"
    echo "bindings/$what: $("$py" --version), numpy $("$py" -c 'import numpy; print(numpy.__version__)')"
    cd "$src/bindings/python"
    export TRI_LIBRARY=$lib PYTHONPATH=$src/bindings/python/src${PYTHONPATH:+:$PYTHONPATH} PYTHONDONTWRITEBYTECODE=1
    # The fake CUDA driver (tests/target/cuda/fake_libcuda.c) lets the launch-path tests run "cuda" launches.
    fake=$build/tests/libfake_libcuda.so
    [[ -f $fake ]] || fail "no fake CUDA driver at $fake (build the fake_libcuda target)"
    export TRI_TEST_FAKE_LIBCUDA=$fake
    if [[ $what == python-pure ]]; then
      export TRI_PYTHON_EXTENSION=0
    else
      # The compiled launch path, built by setup.py (as a wheel builds it) into the build tree.
      ext=$work/python-ext
      "$py" setup.py -q build_ext --build-lib "$ext/lib" --build-temp "$ext/tmp" >"$ext.log" 2>&1 ||
        fail "building tri/_launch.c failed (a C compiler and Debian's python3-dev are needed): $(tail -5 "$ext.log")"
      so=$(ls "$ext"/lib/tri/_launch*.so 2>/dev/null | head -1)
      [[ -n $so ]] || fail "setup.py build_ext made no tri/_launch*.so (install Debian's python3-dev): $(tail -5 "$ext.log")"
      export TRI_PYTHON_EXTENSION=1 TRI_PYTHON_EXTENSION_PATH=$so
    fi
    if [[ $what == python-rt ]]; then
      exec "$py" -m pytest -q -p no:cacheprovider tests/test_package.py
    fi
    exec "$py" -m pytest -q -p no:cacheprovider tests
    ;;
  julia)
    py=$(python_with sys) || fail "python3 not found (apt-get install python3)"
    "$py" "$src/bindings/julia/check_ccalls.py"
    exec "$py" "$src/bindings/julia/check_exports.py"
    ;;
  coverage)
    py=$(python_with sys) || fail "python3 not found (apt-get install python3)"
    exec "$py" "$src/bindings/tools/coverage.py"
    ;;
  tools)
    py=$(python_with sys) || fail "python3 not found (apt-get install python3)"
    exec "$py" "$src/bindings/tools/test_tools.py"
    ;;
  launch-bench)
    # bench/launch builds and runs (a few launches per method): every language's benchmark on the
    # "cpu" target and, through the fake driver, on "cuda", each giving its call and plan rows.
    py=$(python_with "numpy") || fail "no python3 with numpy (bash scripts/install-deps.sh)"
    [[ -z ${CARGO:-} && -x /usr/bin/cargo ]] && export CARGO=/usr/bin/cargo
    PYTHON=$py bash "$src/bench/launch/build.sh" "$build"
    out=$work/launch-results
    rm -rf "$out"
    "$py" "$src/bench/launch/run.py" --target cpu --lib "$lib" --bin "$build/launch-bench" \
      --fake-libcuda "$build/tests/libfake_libcuda.so" --out "$out" --batch 20 --rounds 3 >/dev/null
    exec "$py" - "$out" <<'CHECK'
import glob, json, sys
(path,) = glob.glob(sys.argv[1] + "/launch-bindings-cpu-*.json")
rows = {r["workload"]: r for r in json.load(open(path))["rows"]}
for lang in ("c", "rust", "go", "python"):
    for kind in ("call", "plan"):
        for label in ("", ", fake cuda driver"):
            name = f"launch {lang} {kind}{label}"
            assert name in rows and rows[name]["tri"] > 0, f"no {name!r} row in {path}: {sorted(rows)}"
assert rows["launch python call"]["launch_path"] == "extension", rows["launch python call"]
assert "launch python call, pure-Python path" in rows
print(f"bench/launch: {len(rows)} rows")
CHECK
    ;;
  *) fail "unknown binding '$what'" ;;
esac
