// Tri's "cuda" target from Go: device memory from the CUDA driver (libcuda.so.1, opened with
// dlopen: no CUDA toolkit at build time), vector add and a fused row softmax queued on a
// non-blocking stream with device pointers, a prepared launch, each result copied back and
// checked against plain Go. Without a driver or a device it prints "skipped: no CUDA device".
//
//	cd bindings/go && PKG_CONFIG_PATH=../../build go run ./examples/cuda_vector_add
//
// main_test.go runs it under go test (and skips it there without a GPU).
package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"

	tri "github.com/tri-jit/tri/bindings/go"
)

// errNoDevice is what run returns where there is no CUDA driver or device.
var errNoDevice = errors.New("skipped: no CUDA device")

func examplesDir() string {
	if d := os.Getenv("TRI_EXAMPLES_DIR"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "examples")
}

func inputs(n int, seed int64) []float32 {
	r := rand.New(rand.NewSource(seed))
	x := make([]float32, n)
	for i := range x {
		x[i] = r.Float32()*16 - 8
	}
	return x
}

func compile(ctx *tri.Context, file, kernel string, opts *tri.CompileOptions) (*tri.Kernel, error) {
	m, err := ctx.LoadModule(filepath.Join(examplesDir(), file))
	if err != nil {
		return nil, err
	}
	defer m.Close()
	return m.Compile(kernel, opts)
}

func run() error {
	ctx, err := tri.NewContext()
	if err != nil {
		return err
	}
	defer ctx.Close()
	if n, err := ctx.DeviceCount(); err != nil || n == 0 {
		return errNoDevice
	}
	g, err := openGPU()
	if err != nil {
		return err
	}
	if g == nil {
		return errNoDevice
	}
	defer g.close()
	d, err := ctx.Device(0)
	if err != nil {
		return err
	}
	fmt.Printf("device 0: %s (%s, %d SMs)\n", d.Name, d.Arch(), d.SMCount)

	// Vector add; the architecture is the current device's when none is named.
	add, err := compile(ctx, "vector_add.tri", "vector_add", &tri.CompileOptions{Target: "cuda", NumWarps: 4})
	if err != nil {
		return err
	}
	defer add.Close()
	stream, err := g.stream()
	if err != nil {
		return err
	}
	defer g.destroyStream(stream)
	n := 1000003
	x, y := inputs(n, 1), inputs(n, 2)
	var bufs [4]uint64
	for i := range bufs {
		if bufs[i], err = g.alloc(n * 4); err != nil {
			return err
		}
		defer g.free(bufs[i])
	}
	dev := func(p uint64, n int) tri.DevicePtr {
		return tri.DevicePtr{Ptr: p, Bytes: uint64(n) * 4, DType: tri.F32}
	}
	dx, dy, dout, dout2 := dev(bufs[0], n), dev(bufs[1], n), dev(bufs[2], n), dev(bufs[3], n)
	if err := g.upload(dx.Ptr, x, stream); err != nil {
		return err
	}
	if err := g.upload(dy.Ptr, y, stream); err != nil {
		return err
	}
	grid := tri.Grid1((n + 1023) / 1024)
	if err := add.LaunchOn(tri.Stream(stream), grid, dx, dy, dout, n); err != nil {
		return err
	}
	// A prepared launch: x + x into the second output.
	plan, err := add.PlanOn(tri.Stream(stream), grid, dx, dx, dout2, n)
	if err != nil {
		return err
	}
	defer plan.Close()
	if err := plan.Launch(); err != nil {
		return err
	}
	out, out2 := make([]float32, n), make([]float32, n)
	if err := g.download(out, dout.Ptr, stream); err != nil {
		return err
	}
	if err := g.download(out2, dout2.Ptr, stream); err != nil {
		return err
	}
	if err := g.sync(stream); err != nil {
		return err
	}
	for i := range out {
		if out[i] != x[i]+y[i] || out2[i] != x[i]+x[i] {
			return fmt.Errorf("vector_add: out[%d] = %v / %v, expected %v / %v", i, out[i], out2[i], x[i]+y[i], x[i]+x[i])
		}
	}
	fmt.Printf("vector_add (cuda): %d elements match Go, launched and through a plan\n", n)

	// Softmax: one program per row of 1000 columns.
	softmax, err := compile(ctx, "softmax.tri", "softmax", &tri.CompileOptions{Target: "cuda", NumWarps: 8,
		Constexprs: map[string]interface{}{"BLOCK": 1024}})
	if err != nil {
		return err
	}
	defer softmax.Close()
	rows, cols := 300, 1000
	xs := inputs(rows*cols, 3)
	in, err := g.alloc(rows * cols * 4)
	if err != nil {
		return err
	}
	defer g.free(in)
	probs, err := g.alloc(rows * cols * 4)
	if err != nil {
		return err
	}
	defer g.free(probs)
	if err := g.upload(in, xs, stream); err != nil {
		return err
	}
	if err := softmax.LaunchOn(tri.Stream(stream), tri.Grid1(rows), dev(probs, rows*cols), dev(in, rows*cols), cols, cols,
		cols); err != nil {
		return err
	}
	got := make([]float32, rows*cols)
	if err := g.download(got, probs, stream); err != nil {
		return err
	}
	if err := g.sync(stream); err != nil {
		return err
	}
	for r := 0; r < rows; r++ {
		row := xs[r*cols : (r+1)*cols]
		max := math.Inf(-1)
		for _, v := range row {
			max = math.Max(max, float64(v))
		}
		sum := 0.0
		for _, v := range row {
			sum += math.Exp(float64(v) - max)
		}
		for c, v := range row {
			want := math.Exp(float64(v)-max) / sum
			if math.Abs(float64(got[r*cols+c])-want) > 1e-6+1e-5*want {
				return fmt.Errorf("softmax: out[%d][%d] = %v, expected %v", r, c, got[r*cols+c], want)
			}
		}
	}
	fmt.Printf("softmax (cuda): %d x %d matches Go\n", rows, cols)
	v, err := add.Variants()
	if err != nil {
		return err
	}
	fmt.Printf("launch-time variants of vector_add: %d\n", len(v.Variants))
	return nil
}

func main() {
	if err := run(); errors.Is(err, errNoDevice) {
		fmt.Println(err)
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
