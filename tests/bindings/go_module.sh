#!/usr/bin/env bash
# The Go package stands on its own (issue 30): its module path is one `go get` resolves from a
# repository (bindings/go/go.mod), and the module needs nothing else of the repository. The module
# is served from a file:// module proxy (the zip `go mod download` would fetch: the files under
# bindings/go only), and a program in a fresh module outside the repository gets it with `go get`,
# builds against libtri through pkg-config (the build tree's tri-uninstalled.pc) and runs with no
# LD_LIBRARY_PATH (the rpath of the .pc's Libs), offline.
#
# usage: go_module.sh GO BUILD_DIR   (run by tests/bindings/run.sh go-module)
set -euo pipefail
go=${1:?go}
build=${2:?build dir}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tri-go-module.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "bindings/go-module: $*" >&2; exit 1; }

mod=$(sed -n 's/^module //p' "$src/bindings/go/go.mod")
[[ $mod == */* && $mod == *.*/* ]] || fail "module path '$mod' is not one go get can resolve (a host name first)"
version=v0.2.0

# The proxy: $mod/@v/{list,$version.info,$version.mod,$version.zip}, as GOPROXY=file:// reads it.
python3 - "$src/bindings/go" "$work/proxy" "$mod" "$version" <<'PY'
import json, os, sys, zipfile
root, proxy, mod, version = sys.argv[1:]
d = os.path.join(proxy, mod, "@v")
os.makedirs(d)
open(os.path.join(d, "list"), "w").write(version + "\n")
json.dump({"Version": version, "Time": "2026-11-28T00:00:00Z"}, open(os.path.join(d, version + ".info"), "w"))
open(os.path.join(d, version + ".mod"), "w").write(open(os.path.join(root, "go.mod")).read())
with zipfile.ZipFile(os.path.join(d, version + ".zip"), "w") as z:
    for folder, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        for f in files:
            path = os.path.join(folder, f)
            z.write(path, f"{mod}@{version}/" + os.path.relpath(path, root))
PY

mkdir -p "$work/app"
cat >"$work/app/main.go" <<GO
package main

import (
	"fmt"
	"log"
	"os"

	tri "$mod"
)


func main() {
	ctx, err := tri.NewContext()
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	m, err := ctx.LoadModule(os.Args[1]) // tests/run/vadd.tri: @vadd(%x, %y, %out, %n)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	k, err := m.Compile("vadd", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close()
	x, out := []float32{1, 2, 3}, make([]float32, 3)
	if err := k.Launch(tri.Grid1(1), x, x, out, 3); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
}
GO
cd "$work/app"
export GOPATH=$work/gopath GOCACHE=$work/gocache GOPROXY=file://$work/proxy GOSUMDB=off GOFLAGS=-mod=mod
export GOTOOLCHAIN=local CGO_ENABLED=1 PKG_CONFIG_PATH=$build
unset LD_LIBRARY_PATH
"$go" mod init example.com/app >/dev/null 2>&1
"$go" get "$mod@$version"
"$go" build -o app .
out=$(./app "$src/tests/run/vadd.tri")
[[ $out == "[2 4 6]" ]] || fail "the program printed '$out'"
echo "go get $mod@$version, built and ran outside the repository: $out"
