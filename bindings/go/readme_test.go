// The README's program builds and runs as written: the first go block of README.md becomes a
// program in a temporary module that uses this package through a replace directive. The second
// (the GPU function, which needs device memory to run) and the third (the team function) are
// built in the same module.
package tri_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestReadmeProgram(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllSubmatch(readme, -1)
	if len(blocks) != 3 {
		t.Fatalf("README.md has %d go blocks; want the program, the GPU function and the team function", len(blocks))
	}
	m := blocks[0]
	here, _ := os.Getwd()
	dir := t.TempDir()
	const path = "github.com/tri-jit/tri/bindings/go"
	gomod := "module readme\n\ngo 1.19\n\nrequire " + path + " v0.0.0\n\nreplace " + path + " => " + here + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), m[1], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "gpu"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gpu", "gpu.go"), blocks[1][1], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "teams"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "teams", "teams.go"), blocks[2][1], 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "vet", "./gpu", "./teams")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go vet ./gpu ./teams (the README's GPU and team blocks): %v\n%s", err, out)
	}
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "run", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "TRI_ERROR_LAUNCH_ARGS: argument 0 (%x) of kernel @vector_add is ptr<f32>") {
		t.Fatalf("output: %s", out)
	}
}
