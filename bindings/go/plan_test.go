// Prepared launches on the host targets: a plan launches what Launch launches, arguments, grid
// and stream are replaced in place, bad replacements are refused while the plan keeps its
// previous arguments, Go slices are refused (the plan keeps their addresses in C memory), and
// the plan keeps its kernel alive.
package tri_test

import (
	"strings"
	"testing"

	tri "github.com/tri-jit/tri/bindings/go"
)

const scale = `
kernel @scale(%x: ptr<f32>, %out: ptr<f32>, %n: i32, %s: f32) constexpr(BLOCK: i32 = 16) {
  %pid = program_id[axis=0] : i32
  %bs = const[value=BLOCK] : i32
  %start = mul %pid, %bs : i32
  %r = arange[start=0, end=BLOCK] : <BLOCK x i32>
  %sv = splat %start : <BLOCK x i32>
  %offs = add %sv, %r : <BLOCK x i32>
  %nv = splat %n : <BLOCK x i32>
  %mask = cmp[pred=slt] %offs, %nv : <BLOCK x i1>
  %xb = splat %x : <BLOCK x ptr<f32>>
  %xp = addptr %xb, %offs : <BLOCK x ptr<f32>>
  %v = load %xp, mask=%mask : <BLOCK x f32>
  %ss = splat %s : <BLOCK x f32>
  %w = mul %v, %ss : <BLOCK x f32>
  %ob = splat %out : <BLOCK x ptr<f32>>
  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>
  store %op, %w, mask=%mask
  return
}
`

func hostMemory(t *testing.T, n int) (*tri.HostMemory, []float32) {
	t.Helper()
	m, err := tri.AllocHost(tri.F32, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Free)
	return m, tri.HostSlice[float32](m)
}

func TestPlanLaunchesAndTakesReplacements(t *testing.T) {
	for _, target := range []string{"cpu", "interp"} {
		ctx := newContext(t, tri.WithCacheDir(""))
		m, err := ctx.NewModule([]byte(scale), "scale.tri")
		if err != nil {
			t.Fatal(err)
		}
		k, err := m.Compile("scale", &tri.CompileOptions{Target: target})
		if err != nil {
			t.Fatal(err)
		}
		xm, x := hostMemory(t, 40)
		ym, y := hostMemory(t, 40)
		om, out := hostMemory(t, 40)
		for i := range x {
			x[i], y[i], out[i] = float32(i), float32(100-i), -1
		}
		plan, err := k.Plan(tri.Grid1(3), xm, om, 37, float32(2))
		if err != nil {
			t.Fatal(err)
		}
		k.Close() // the plan keeps it alive
		m.Close()
		if err := plan.Launch(); err != nil {
			t.Fatal(err)
		}
		for i := range out {
			want := float32(-1)
			if i < 37 {
				want = 2 * x[i]
			}
			if out[i] != want {
				t.Fatalf("%s: out[%d] = %v, want %v", target, i, out[i], want)
			}
		}
		if err := plan.SetArg(0, ym); err != nil {
			t.Fatal(err)
		}
		if err := plan.SetArg(3, 0.5); err != nil {
			t.Fatal(err)
		}
		if err := plan.Launch(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 37; i++ {
			if out[i] != 0.5*y[i] {
				t.Fatalf("%s: out[%d] = %v", target, i, out[i])
			}
		}
		// Bad replacements are refused (by the package or the library) and change nothing.
		wantError(t, plan.SetArg(0, 1.0), tri.CodeLaunchArgs, "argument 0 (%x) of kernel @scale is ptr<f32>")
		wantError(t, plan.SetArg(4, 1.0), tri.CodeLaunchArgs, "there is no argument 4")
		wantError(t, plan.SetArg(0, x), tri.CodeLaunchArgs, "a slice can only be passed to Launch")
		wantError(t, plan.SetArg(0, tri.DevicePtr{Ptr: 0x1000, Bytes: 160, DType: tri.F32}), tri.CodeLaunchArgs,
			"but a DevicePtr of f32 was given")
		wantError(t, plan.SetGrid(tri.Grid{X: 1 << 31, Y: 1, Z: 1}), tri.CodeInvalidArgument, "")
		wantError(t, plan.SetStream(tri.Stream(0x1234)), tri.CodeInvalidArgument, "")
		// A smaller grid leaves the last program's elements alone.
		for i := range out {
			out[i] = -1
		}
		if err := plan.SetGrid(tri.Grid{X: 2, Y: 1, Z: 1}); err != nil {
			t.Fatal(err)
		}
		if err := plan.SetStream(0); err != nil {
			t.Fatal(err)
		}
		if err := plan.Launch(); err != nil {
			t.Fatal(err)
		}
		for i := range out {
			want := float32(-1)
			if i < 32 {
				want = 0.5 * y[i]
			}
			if out[i] != want {
				t.Fatalf("%s: out[%d] = %v, want %v", target, i, out[i], want)
			}
		}
		plan.Close()
		plan.Close() // idempotent
		wantError(t, plan.Launch(), tri.CodeInvalidArgument, "closed")
	}
}

func TestPlanCreationChecksLikeLaunch(t *testing.T) {
	ctx := newContext(t, tri.WithCacheDir(""))
	m, err := ctx.NewModule([]byte(scale), "scale.tri")
	if err != nil {
		t.Fatal(err)
	}
	k, err := m.Compile("scale", nil)
	if err != nil {
		t.Fatal(err)
	}
	xm, x := hostMemory(t, 16)
	_, err = k.Plan(tri.Grid1(1), xm, xm, 16)
	wantError(t, err, tri.CodeLaunchArgs, "takes 4 arguments")
	_, err = k.Plan(tri.Grid1(1), x, xm, 16, 1.0)
	te := wantError(t, err, tri.CodeLaunchArgs, "so it takes a HostMemory or Buffer of f32")
	if !strings.Contains(te.Message, "but a []float32 was given") {
		t.Fatal(te)
	}
	_, err = k.Plan(tri.Grid{X: 1, Y: 65536, Z: 1}, xm, xm, 16, 1.0)
	wantError(t, err, tri.CodeInvalidArgument, "")
	_, err = k.PlanOn(tri.Stream(0x1234), tri.Grid1(1), xm, xm, 16, 1.0)
	wantError(t, err, tri.CodeInvalidArgument, "runs on the host")
	// A Buffer of C memory is taken too, and HostMemory of another type is not.
	im, err := tri.AllocHost(tri.I32, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer im.Free()
	_, err = k.Plan(tri.Grid1(1), im, xm, 16, 1.0)
	wantError(t, err, tri.CodeLaunchArgs, "but a HostMemory of i32 was given")
	p, err := k.Plan(tri.Grid1(1), tri.Buffer{Ptr: nil, Bytes: 0, DType: tri.F32}, xm, 0, 1.0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Launch(); err != nil { // n = 0: the null input is never read
		t.Fatal(err)
	}
	p.Close()
	// Launch takes HostMemory as well as slices.
	for i := range x {
		x[i] = float32(i)
	}
	out := make([]float32, 16)
	if err := k.Launch(tri.Grid1(1), xm, out, 16, float32(3)); err != nil {
		t.Fatal(err)
	}
	if out[15] != 45 {
		t.Fatal(out)
	}
}

func TestHostMemory(t *testing.T) {
	m, err := tri.AllocHost(tri.F64, 5)
	if err != nil {
		t.Fatal(err)
	}
	if m.Bytes() != 40 || m.DType() != tri.F64 || len(tri.HostSlice[float64](m)) != 5 {
		t.Fatal(m.Bytes(), m.DType())
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("a []float32 view of f64 memory must panic")
			}
		}()
		tri.HostSlice[float32](m)
	}()
	m.Free()
	m.Free()
	if len(tri.HostSlice[float64](m)) != 0 {
		t.Fatal("a freed HostMemory still has a view")
	}
	_, err = tri.AllocHost(tri.F32, -1)
	wantError(t, err, tri.CodeInvalidArgument, "")
}
