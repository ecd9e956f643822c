#!/usr/bin/env bash
# Installs what building and testing Tri needs, from Debian 12's own packages (nothing else is
# downloaded). Packages already installed are left alone; apt-get runs only when one is missing.
#
#   cmake make g++ pkg-config      the build
#   llvm-19-dev                    LLVM, linked statically into libtri.so; its static libraries
#   zlib1g-dev libzstd-dev           also need what `llvm-config-19 --link-static --system-libs`
#   libxml2-dev libz3-dev            names: -lz -lzstd -lxml2 and libz3.so
#   libzstd-dev libxxhash-dev      the kernel cache (compression, keys)
#   libsodium-dev                  the kernel cache's MAC and bundle signatures (BLAKE2b, Ed25519)
#   libcmocka-dev                  unit tests
#   libbenchmark-dev               benchmarks
#   clang-19                       the GPU math library (src/codegen/mathlib, built to NVPTX
#                                    bitcode; cmake/mathlib.cmake); fuzzers
#   libclang-rt-19-dev             fuzzers (libFuzzer), scripts/fuzz.sh
#   cargo rustc golang-go          the Rust and Go bindings' tests (bindings/, tests/bindings.cmake)
#   python3-numpy python3-pytest   the Python bindings' tests, and python3 for the binding checks;
#   python3-pip python3-setuptools   building and installing the Python package's wheel offline
#   python3-dev                      the Python package's compiled launch path (tri/_launch.c)
set -euo pipefail

packages=(
  cmake make g++ pkg-config
  llvm-19-dev zlib1g-dev libzstd-dev libxml2-dev libz3-dev
  libxxhash-dev libsodium-dev libcmocka-dev libbenchmark-dev
  clang-19 libclang-rt-19-dev
  cargo rustc golang-go python3-numpy python3-pytest python3-pip python3-setuptools python3-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed'; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages are installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root (or install sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
