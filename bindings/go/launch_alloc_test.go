// Launches allocate nothing on the Go side once their arguments are boxed: a direct launch
// reuses a pooled argument buffer, a plan's launch is one locked cgo call. (The boxing of each
// argument into an interface{} is the caller's, and happens once here, as a hot loop would do.)
package tri_test

import (
	"testing"

	tri "github.com/tri-jit/tri/bindings/go"
)

func TestLaunchesAllocateNothing(t *testing.T) {
	ctx := newContext(t)
	k := vectorAdd(t, ctx, nil)
	x := make([]float32, 1000)
	for i := range x {
		x[i] = float32(i)
	}
	out := make([]float32, len(x))
	args := []interface{}{x, x, out, len(x)}
	if err := k.Launch(tri.Grid1(1), args...); err != nil {
		t.Fatal(err)
	}
	if out[999] != 1998 {
		t.Fatalf("out[999] = %v, want 1998", out[999])
	}
	if n := testing.AllocsPerRun(200, func() { _ = k.Launch(tri.Grid1(1), args...) }); n != 0 {
		t.Errorf("a direct launch allocated %v times", n)
	}
	mem, _ := hostMemory(t, len(x))
	p, err := k.Plan(tri.Grid1(1), mem, mem, mem, len(x))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if n := testing.AllocsPerRun(200, func() { _ = p.Launch() }); n != 0 {
		t.Errorf("a plan's launch allocated %v times", n)
	}
	// A refused argument still says which and why.
	err = k.Launch(tri.Grid1(1), x, x, out, "n")
	wantError(t, err, tri.CodeLaunchArgs, "argument 3 (%n) of kernel @vector_add is i32, so it takes an integer, but a string was given")
}
