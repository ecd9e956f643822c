// A complete program on the tri package: vector add and a fused row softmax compiled for the
// CPU (or the interpreter: TRI_TARGET=interp), each checked against plain Go, then the errors a
// user gets for a wrong argument and, in checked mode, for a slice that is too short.
//
//	cd bindings/go && PKG_CONFIG_PATH=../../build go run ./examples/vector_add_softmax
//
// The kernels are the repository's examples/*.tri (TRI_EXAMPLES_DIR names another folder).
// main_test.go runs these functions under go test.
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

func vectorAdd(ctx *tri.Context, target string, n int) error {
	module, err := ctx.LoadModule(filepath.Join(examplesDir(), "vector_add.tri"))
	if err != nil {
		return err
	}
	defer module.Close()
	kernel, err := module.Compile("vector_add", &tri.CompileOptions{Target: target,
		Constexprs: map[string]interface{}{"BLOCK": 1024}})
	if err != nil {
		return err
	}
	defer kernel.Close()
	x, y := inputs(n, 1), inputs(n, 2)
	out := make([]float32, n)
	if err := kernel.Launch(tri.Grid1((n+1023)/1024), x, y, out, n); err != nil {
		return err
	}
	for i := range out {
		if out[i] != x[i]+y[i] {
			return fmt.Errorf("vector_add: out[%d] = %v, expected %v", i, out[i], x[i]+y[i])
		}
	}
	fmt.Printf("vector_add (%s): %d elements match Go\n", target, n)
	return nil
}

func softmax(ctx *tri.Context, target string, rows, cols int) error {
	module, err := ctx.LoadModule(filepath.Join(examplesDir(), "softmax.tri"))
	if err != nil {
		return err
	}
	kernel, err := module.Compile("softmax", &tri.CompileOptions{Target: target,
		Constexprs: map[string]interface{}{"BLOCK": 1024}})
	module.Close() // the kernel keeps what it needs
	if err != nil {
		return err
	}
	defer kernel.Close()
	x := inputs(rows*cols, 3)
	out := make([]float32, rows*cols)
	// One program per row; the strides are in elements.
	if err := kernel.Launch(tri.Grid1(rows), out, x, cols, cols, cols); err != nil {
		return err
	}
	for r := 0; r < rows; r++ {
		row := x[r*cols : (r+1)*cols]
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
			got := float64(out[r*cols+c])
			if math.Abs(got-want) > 1e-6+1e-5*want {
				return fmt.Errorf("softmax: out[%d][%d] = %v, expected %v", r, c, got, want)
			}
		}
	}
	fmt.Printf("softmax (%s): %d x %d matches Go\n", target, rows, cols)
	return nil
}

// wrongArgument passes an []int32 where vector_add takes f32: refused before the call.
func wrongArgument(ctx *tri.Context) (*tri.Error, error) {
	module, err := ctx.LoadModule(filepath.Join(examplesDir(), "vector_add.tri"))
	if err != nil {
		return nil, err
	}
	defer module.Close()
	kernel, err := module.Compile("vector_add", nil)
	if err != nil {
		return nil, err
	}
	defer kernel.Close()
	x := make([]int32, 16)
	y, out := make([]float32, 16), make([]float32, 16)
	err = kernel.Launch(tri.Grid1(1), x, y, out, 16)
	var te *tri.Error
	if !errors.As(err, &te) || !errors.Is(err, tri.ErrLaunchArgs) {
		return nil, fmt.Errorf("an []int32 for %%x must be refused with ErrLaunchArgs, got %v", err)
	}
	return te, nil
}

// tooShort gives a 50-element %x for n = 64: the interpreter's checked mode stops at the first
// load past its end, naming the op and the address.
func tooShort(ctx *tri.Context) (*tri.Error, error) {
	module, err := ctx.LoadModule(filepath.Join(examplesDir(), "vector_add.tri"))
	if err != nil {
		return nil, err
	}
	defer module.Close()
	kernel, err := module.Compile("vector_add", &tri.CompileOptions{Target: "interp", Checked: true,
		Constexprs: map[string]interface{}{"BLOCK": 64}})
	if err != nil {
		return nil, err
	}
	defer kernel.Close()
	x, y, out := make([]float32, 50), make([]float32, 64), make([]float32, 64)
	err = kernel.Launch(tri.Grid1(1), x, y, out, 64)
	var te *tri.Error
	if !errors.As(err, &te) || te.Code != tri.CodeRuntime {
		return nil, fmt.Errorf("a 50-element %%x for n = 64 must be reported as TRI_ERROR_RUNTIME, got %v", err)
	}
	return te, nil
}

func run() error {
	target := os.Getenv("TRI_TARGET")
	if target == "" {
		target = "cpu"
	}
	small := target == "interp"
	ctx, err := tri.NewContext()
	if err != nil {
		return err
	}
	defer ctx.Close()
	n, rows := 1000000, 256
	if small {
		n, rows = 3000, 4
	}
	if err := vectorAdd(ctx, target, n); err != nil {
		return err
	}
	if err := softmax(ctx, target, rows, 1000); err != nil {
		return err
	}
	wrong, err := wrongArgument(ctx)
	if err != nil {
		return err
	}
	fmt.Println("wrong argument ->", wrong)
	short, err := tooShort(ctx)
	if err != nil {
		return err
	}
	fmt.Println("slice too short (checked mode) ->", short)
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
