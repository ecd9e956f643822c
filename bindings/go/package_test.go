// Packages (docs/aot.md) from Go: a package made by `tri aot` in the test (the tool named by
// TRI_TOOL, which tests/bindings/run.sh sets to the build's), loaded with LoadPackageFile and
// launched on the "cpu" target, its outputs checked. CTest runs it against libtri (bindings/go)
// and, with the build tag tri_rt, against libtri_rt (bindings/go-rt).
package tri_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	tri "github.com/tri-jit/tri/bindings/go"
)

func makePackage(t *testing.T) string {
	t.Helper()
	tool := os.Getenv("TRI_TOOL")
	if tool == "" {
		t.Fatal("set TRI_TOOL to the build's tri tool (BUILD/tools/tri)")
	}
	out := filepath.Join(t.TempDir(), "vector_add.tripkg")
	cmd := exec.Command(tool, "aot", filepath.Join("..", "..", "examples", "vector_add.tri"), "-o", out,
		"--target", "cpu", "--kernel", "vector_add:BLOCK=256", "--kernel", "vector_add:BLOCK=1024")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tri aot: %v\n%s", err, msg)
	}
	return out
}

func packageContext(t *testing.T) *tri.Context {
	t.Helper()
	ctx, err := tri.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

func blockOptions(block int) *tri.CompileOptions {
	return &tri.CompileOptions{Target: "cpu", Constexprs: map[string]interface{}{"BLOCK": block}}
}

func TestPackageLoadsAndLaunches(t *testing.T) {
	ctx := packageContext(t)
	m, err := ctx.LoadPackageFile(makePackage(t))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, block := range []int{256, 1024} {
		k, err := m.Kernel("vector_add", blockOptions(block))
		if err != nil {
			t.Fatal(err)
		}
		n := 3001
		x, y, out := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(i)*0.5, 3-float32(i)
		}
		if err := k.Launch(tri.Grid1((n+block-1)/block), x, y, out, n); err != nil {
			t.Fatal(err)
		}
		for i := range out {
			if out[i] != x[i]+y[i] {
				t.Fatalf("BLOCK=%d: out[%d] = %v, want %v", block, i, out[i], x[i]+y[i])
			}
		}
		k.Close()
	}
	info, err := m.PackageInfo()
	if err != nil || !strings.HasPrefix(info, `{"schema": 1`) || !strings.Contains(info, `"name": "vector_add"`) {
		t.Fatalf("PackageInfo: %v %s", err, info)
	}
}

func TestPackageErrors(t *testing.T) {
	ctx := packageContext(t)
	data, err := os.ReadFile(makePackage(t))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ctx.LoadPackage(data, "vector_add.tripkg")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var te *tri.Error
	_, err = m.Kernel("vector_add", blockOptions(512))
	if !errors.As(err, &te) || te.Code != tri.CodeNotFound || !strings.Contains(te.Message, "BLOCK=256") {
		t.Fatalf("BLOCK=512 (not in the package): %v", err)
	}
	data[len(data)/2] ^= 0x40
	_, err = ctx.LoadPackage(data, "damaged.tripkg")
	if !errors.As(err, &te) || te.Code != tri.CodeCorruptBinary {
		t.Fatalf("a damaged package: %v", err)
	}
}
