// A pointer argument that breaks the alignment its kernel was compiled for ({align=16} in the IR,
// or an ArgAlign promise) is refused before the launch, on every target: the host targets would
// read it without complaint, a GPU would fault or read wrong data.
package tri_test

import (
	"path/filepath"
	"testing"

	tri "github.com/tri-jit/tri/bindings/go"
)

func TestAMisalignedPointerIsRefusedOnEveryTarget(t *testing.T) {
	ctx := newContext(t, tri.WithCacheDir(""))
	// @copy(%x: ptr<f32> {align=16}, %out: ptr<f32>, %n: i32)
	m, err := ctx.LoadModule(filepath.Join("..", "..", "tests", "run", "copy_aligned.tri"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	buf := make([]float32, 256)
	for i := range buf {
		buf[i] = float32(i)
	}
	for _, target := range []string{"interp", "cpu"} {
		k, err := m.Compile("copy", &tri.CompileOptions{Target: target})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float32, 16)
		if err := k.Launch(tri.Grid1(1), aligned(buf, 0)[:16], out, 16); err != nil {
			t.Fatal(target, err)
		}
		err = k.Launch(tri.Grid1(1), aligned(buf, 1)[:16], out, 16)
		wantError(t, err, tri.CodeLaunchArgs, "argument 0 (%x) of kernel @copy is ptr<f32> with {align=16}")
		wantError(t, err, tri.CodeLaunchArgs, "is not a multiple of 16")
		k.Close()
	}
	k, err := m.Compile("copy", &tri.CompileOptions{ArgAlign: map[int]uint32{1: 32}})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	err = k.Launch(tri.Grid1(1), aligned(buf, 0)[:16], aligned(buf, 4)[:16], 16)
	wantError(t, err, tri.CodeLaunchArgs, "argument 1 (%out) of kernel @copy is ptr<f32> with {align=32}")
	// On the GPU target the check runs before a driver is needed.
	g, err := m.Compile("copy", &tri.CompileOptions{Target: "cuda", Arch: "sm_90"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	err = g.Launch(tri.Grid1(1), tri.DevicePtr{Ptr: 0x7f0000001004, Bytes: 64, DType: tri.F32},
		tri.DevicePtr{Ptr: 0x7f0000002000, Bytes: 64, DType: tri.F32}, 16)
	wantError(t, err, tri.CodeLaunchArgs, "0x7f0000001004")
}
