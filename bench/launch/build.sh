#!/usr/bin/env bash
# Builds the compiled launch benchmarks of bench/launch into BUILD/launch-bench (BUILD: the build
# tree whose src/libtri.so they link; default build), so that a machine without the Rust and Go
# toolchains (the GPU machine) can run them: copy that folder and BUILD/src/libtri.so* there and run
# bench/launch/run.py. Also builds the Python package's compiled launch path into
# BUILD/launch-bench/python (run.py loads it with TRI_PYTHON_EXTENSION_PATH when no installed one
# is found), with the python3 given by PYTHON (default python3: the one that will run the bench).
#
#   tri-bench-launch-c       (cc)      the C floor: raw cuLaunchKernel, tri_launch, a plan
#   tri-launch-bench-rust    (cargo)   bench/launch/rust
#   tri-launch-bench-go      (go)      bench/launch/go
#
# usage: bash bench/launch/build.sh [BUILD]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
out=$build/launch-bench
lib=$build/src
[[ -f $lib/libtri.so ]] || { echo "build.sh: no $lib/libtri.so (build the 'tri' target first)" >&2; exit 1; }
mkdir -p "$out"

${CC:-cc} -O2 -std=c11 -Wall -Wextra -I"$root/include" "$root/bench/launch/c_launch.c" -L"$lib" -ltri -ldl \
  -o "$out/tri-bench-launch-c"
echo "build.sh: $out/tri-bench-launch-c"
# The same against libtri_rt, which runs packages only (--package; docs/aot.md).
if [[ -f $lib/libtri_rt.so ]]; then
  ${CC:-cc} -O2 -std=c11 -Wall -Wextra -DTRI_RUNTIME_ONLY -I"$root/include" "$root/bench/launch/c_launch.c" \
    -L"$lib" -ltri_rt -ldl -o "$out/tri-bench-launch-c-rt"
  echo "build.sh: $out/tri-bench-launch-c-rt"
fi

cargo=${CARGO:-$( [[ -x /usr/bin/cargo ]] && echo /usr/bin/cargo || command -v cargo )}
( cd "$root/bench/launch/rust" &&
  TRI_LIB_DIR=$lib CARGO_TARGET_DIR=$build/bindings/rust-bench-target "$cargo" build --release --offline -q )
cp "$build/bindings/rust-bench-target/release/tri-launch-bench-rust" "$out/"
echo "build.sh: $out/tri-launch-bench-rust"

( cd "$root/bench/launch/go" &&
  CGO_ENABLED=1 PKG_CONFIG_PATH="$build" GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local \
  GOCACHE=${GOCACHE:-$build/bindings/go-cache} GOPATH=${GOPATH:-$build/bindings/go-path} \
  go build -o "$out/tri-launch-bench-go" . )
echo "build.sh: $out/tri-launch-bench-go"

py=${PYTHON:-python3}
( cd "$root/bindings/python" &&
  "$py" setup.py -q build_ext --build-lib "$out/python" --build-temp "$build/bindings/python-ext-bench-tmp" ) \
  >"$out/python-ext.log" 2>&1 || { echo "build.sh: tri/_launch.c did not build (see $out/python-ext.log)" >&2; exit 1; }
echo "build.sh: $(ls "$out"/python/tri/_launch*.so)"
