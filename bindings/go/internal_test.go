// Checks that need the package's insides: a kernel of a target other than the host ones is
// not launched with slices. No GPU target can be compiled with this header, so the test
// relabels a CPU kernel to reach the check.
package tri

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestOtherTargetsAreNotLaunched(t *testing.T) {
	ctx, err := NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "vector_add.tri"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ctx.NewModule(src, "vector_add.tri")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	k, err := m.Compile("vector_add", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	k.target = "cuda"
	x := make([]float32, 4)
	err = k.Launch(Grid1(1), x, x, x, 4)
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("want ErrUnsupported, got %v", err)
	}
}
