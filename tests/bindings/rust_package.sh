#!/usr/bin/env bash
# The Rust crates stand on their own (issue 30): `cargo package` makes tri-sys and tri, and the
# packaged `tri`, unpacked in a folder outside the repository, passes its tests with nothing
# from the repository but the library, found through pkg-config (the build tree's
# tri-uninstalled.pc). Until tri-sys is on crates.io, cargo finds it in a local "directory
# source" made of its own .crate (CARGO_HOME's config.toml), offline, with Debian's cargo. A
# tri-sys build that finds no libtri stops with a message that names the variables to set.
#
# usage: rust_package.sh CARGO BUILD_DIR   (run by tests/bindings/run.sh rust-package)
set -euo pipefail
cargo=${1:?cargo}
build=${2:?build dir}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tri-rust-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "bindings/rust-package: $*" >&2; exit 1; }

export CARGO_TARGET_DIR=$work/target CARGO_HOME=$work/cargo-home
mkdir -p "$CARGO_HOME" "$work/vendor"
[[ -f $build/tri-uninstalled.pc ]] || fail "no $build/tri-uninstalled.pc (re-run cmake)"
export PKG_CONFIG_PATH=$build
unset TRI_LIB_DIR

cd "$src/bindings/rust"
echo "== cargo package -p tri-sys (verified: it builds from the package)"
"$cargo" package --offline --allow-dirty -p tri-sys -q
crate=$CARGO_TARGET_DIR/package/tri-sys-0.2.0.crate
tar xzf "$crate" -C "$work/vendor"
printf '{"files":{},"package":"%s"}\n' "$(sha256sum "$crate" | cut -d' ' -f1)" \
  >"$work/vendor/tri-sys-0.2.0/.cargo-checksum.json"
cat >"$CARGO_HOME/config.toml" <<TOML
[source.crates-io]
replace-with = "vendored"
[source.vendored]
directory = "$work/vendor"
TOML

echo "== cargo package -p tri (verified against the packaged tri-sys)"
"$cargo" package --offline --allow-dirty -p tri -q
mkdir -p "$work/outside"
tar xzf "$CARGO_TARGET_DIR/package/tri-0.2.0.crate" -C "$work/outside"
for f in README.md kernels/vector_add.tri kernels/softmax.tri kernels/vadd.tri; do
  [[ -f $work/outside/tri-0.2.0/$f && ! -L $work/outside/tri-0.2.0/$f ]] || fail "the package lacks $f as a file"
done
if grep -rn '\.\./\.\./' "$work/outside/tri-0.2.0/src" "$work/outside/tri-0.2.0/tests" \
     "$work/outside/tri-0.2.0/examples"; then
  fail "the package reaches out of itself"
fi

echo "== cargo test in the unpacked crate, outside the repository"
cd "$work/outside/tri-0.2.0"
LD_LIBRARY_PATH=$(pkg-config --variable=libdir tri) "$cargo" test --offline -q 2>&1 | tail -n 25

echo "== tri-sys without a libtri it can find"
rm -rf "$CARGO_TARGET_DIR"
cd "$work/vendor/tri-sys-0.2.0"
out=$(PKG_CONFIG_PATH=/nonexistent "$cargo" build --offline 2>&1) && fail "tri-sys built without libtri"
if ls /usr/lib/libtri.so /usr/local/lib/libtri.so /usr/lib/*-linux-gnu/libtri.so >/dev/null 2>&1; then
  echo "(a system libtri.so exists: the message check does not apply)"
else
  grep -q "libtri.so was not found: set TRI_LIB_DIR" <<<"$out" || fail "message: $out"
fi
echo "rust-package: passed"
