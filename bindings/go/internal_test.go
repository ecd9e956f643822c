// Checks that need the package's insides: a kernel of a target newer than the package is not
// launched. No such target exists, so the test relabels a CPU kernel to reach the check.
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
	k.target = "tpu"
	x := make([]float32, 4)
	err = k.Launch(Grid1(1), x, x, x, 4)
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("want ErrUnsupported, got %v", err)
	}
	if _, err = k.Plan(Grid1(1), x, x, x, 4); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("want ErrUnsupported from Plan, got %v", err)
	}
}
