// CUDA device queries and "cuda" launches where no driver can be loaded: the test binary runs
// itself again with TRI_LIBCUDA naming a missing file, so the result is the same on machines
// with and without a GPU. And the device queries against whatever driver is here.
package tri_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	tri "github.com/tri-jit/tri/bindings/go"
)

// inChildWithoutDriver runs test again in a child process whose CUDA driver cannot load and
// reports whether this is that child.
func inChildWithoutDriver(t *testing.T) bool {
	t.Helper()
	if os.Getenv("TRI_TEST_CHILD") != "" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "TRI_LIBCUDA=/nonexistent/libcuda.so.1", "TRI_TEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("child: %v\n%s", err, out)
	}
	return false
}

func TestDeviceQueriesWithoutADriverSayWhy(t *testing.T) {
	if !inChildWithoutDriver(t) {
		return
	}
	ctx := newContext(t, tri.WithCacheDir(""))
	_, e1 := ctx.DeviceCount()
	_, e2 := ctx.Devices()
	_, e3 := ctx.DeviceName(0)
	_, e4 := ctx.DeviceAttribute(0, tri.AttrSMCount)
	for _, err := range []error{e1, e2, e3, e4} {
		te := wantError(t, err, tri.CodeUnsupported, "no CUDA driver")
		if !strings.Contains(te.Message, "/nonexistent/libcuda.so.1") {
			t.Fatal(te)
		}
	}
}

func TestDeviceQueriesWithWhateverDriverIsHere(t *testing.T) {
	ctx := newContext(t, tri.WithCacheDir(""))
	n, err := ctx.DeviceCount()
	if err != nil {
		wantError(t, err, tri.CodeUnsupported, "no CUDA driver")
		return
	}
	devices, err := ctx.Devices()
	if err != nil || len(devices) != n {
		t.Fatal(devices, err)
	}
	for _, d := range devices {
		if d.Name == "" || d.WarpSize != 32 || d.ComputeCapability[0] < 3 || !strings.HasPrefix(d.Arch(), "sm_") ||
			d.SharedPerBlockOptin < d.SharedPerBlock {
			t.Fatalf("%+v", d)
		}
	}
	_, err = ctx.DeviceName(n)
	wantError(t, err, tri.CodeInvalidArgument, "")
}

func TestCudaLaunchesReachTheLibraryWithoutADriver(t *testing.T) {
	if !inChildWithoutDriver(t) {
		return
	}
	ctx := newContext(t, tri.WithCacheDir(""))
	k, err := load(t, ctx, "vector_add.tri").Compile("vector_add", &tri.CompileOptions{Target: "cuda", Arch: "sm_90"})
	if err != nil {
		t.Fatal(err)
	}
	d := tri.DevicePtr{DType: tri.F32}
	if err := k.Launch(tri.Grid1(0), d, d, d, 0); err != nil { // an empty grid makes no driver call
		t.Fatal(err)
	}
	plan, err := k.PlanOn(tri.Stream(0x1234), tri.Grid1(1), d, d, d, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	for _, err := range []error{k.Launch(tri.Grid1(1), d, d, d, 0), k.LaunchOn(tri.Stream(0x1234), tri.Grid1(1), d, d, d, 0),
		plan.Launch()} {
		wantError(t, err, tri.CodeUnsupported, "no CUDA driver")
	}
	// Host memory is refused by a "cuda" kernel before the call.
	wantError(t, k.Launch(tri.Grid1(1), make([]float32, 4), d, d, 4), tri.CodeLaunchArgs,
		"so it takes a DevicePtr of f32 (the kernel runs on the GPU), but a []float32 was given")
	wantError(t, k.Launch(tri.Grid1(1), tri.DevicePtr{DType: tri.F16}, d, d, 4), tri.CodeLaunchArgs,
		"but a DevicePtr of f16 was given")
	// And device memory by a host kernel.
	cpu := vectorAdd(t, ctx, nil)
	wantError(t, cpu.Launch(tri.Grid1(1), d, d, d, 0), tri.CodeLaunchArgs, "but a DevicePtr of f32 was given")
}
