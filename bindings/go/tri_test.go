// The package's contract: every C error arrives as an *Error with its code and message,
// arguments are checked against the kernel's signature, closed objects refuse use, handles
// close in any order, the log sink hears failures, and kernels run from many goroutines.
package tri_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	tri "github.com/tri-jit/tri/bindings/go"
)

var examples = filepath.Join("..", "..", "examples")

func newContext(t *testing.T, opts ...tri.ContextOption) *tri.Context {
	t.Helper()
	ctx, err := tri.NewContext(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

func load(t *testing.T, ctx *tri.Context, name string) *tri.Module {
	t.Helper()
	m, err := ctx.LoadModule(filepath.Join(examples, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func vectorAdd(t *testing.T, ctx *tri.Context, opts *tri.CompileOptions) *tri.Kernel {
	t.Helper()
	k, err := load(t, ctx, "vector_add.tri").Compile("vector_add", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

func add(k *tri.Kernel, x, y []float32) ([]float32, error) {
	out := make([]float32, len(x))
	return out, k.Launch(tri.Grid1((len(x)+1023)/1024), x, y, out, len(x))
}

func wantError(t *testing.T, err error, code tri.Code, fragment string) *tri.Error {
	t.Helper()
	var te *tri.Error
	if !errors.As(err, &te) {
		t.Fatalf("want a *tri.Error with %v, got %v", code, err)
	}
	if te.Code != code || !strings.Contains(te.Message, fragment) {
		t.Fatalf("want %v containing %q, got %v", code, fragment, te)
	}
	return te
}

func TestVersion(t *testing.T) {
	major, minor, _ := tri.Version()
	if major != tri.HeaderVersion/10000 || minor < tri.HeaderVersion/100%100 {
		t.Fatalf("library %d.%d, header %d", major, minor, tri.HeaderVersion)
	}
}

func TestParseErrors(t *testing.T) {
	ctx := newContext(t)
	_, err := ctx.NewModule([]byte("kernel @k() {\n  bogus\n}\n"), "bad.tri")
	te := wantError(t, err, tri.CodeParse, "bad.tri:2:")
	if !errors.Is(err, tri.ErrParse) || errors.Is(err, tri.ErrVerify) {
		t.Fatal("errors.Is must match by code")
	}
	if !strings.HasPrefix(te.Error(), "TRI_ERROR_PARSE: bad.tri:2:") {
		t.Fatalf("Error(): %s", te.Error())
	}
	_, err = ctx.NewModule(nil, "empty.tri")
	wantError(t, err, tri.CodeInvalidArgument, "empty")
	_, err = ctx.LoadModule("/nonexistent/k.tri")
	wantError(t, err, tri.CodeIO, "/nonexistent/k.tri")
}

func TestReflection(t *testing.T) {
	ctx := newContext(t)
	m := load(t, ctx, "softmax.tri")
	fs, err := m.Functions()
	if err != nil || len(fs) != 1 {
		t.Fatal(fs, err)
	}
	f, err := m.Function("softmax")
	if err != nil || f.Name != "softmax" || f.Device {
		t.Fatal(f, err)
	}
	var names []string
	for _, p := range f.Params {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "out,in,in_row_stride,out_row_stride,n_cols,BLOCK" {
		t.Fatal(names)
	}
	p0, p2, p5 := f.Params[0], f.Params[2], f.Params[5]
	if p0.Kind != tri.Pointer || p0.DType != tri.F32 || p0.TypeText != "ptr<f32>" || p0.Default != nil {
		t.Fatalf("%+v", p0)
	}
	if p2.Kind != tri.Scalar || p2.DType != tri.I32 || p2.Constexpr {
		t.Fatalf("%+v", p2)
	}
	if !p5.Constexpr || p5.Default == nil || *p5.Default != "1024" {
		t.Fatalf("%+v", p5)
	}
	if len(f.RuntimeParams()) != 5 {
		t.Fatal(f.RuntimeParams())
	}
	_, err = m.Function("nope")
	if !errors.Is(err, tri.ErrNotFound) {
		t.Fatal(err)
	}
}

func TestTextAndBinaryRoundTrip(t *testing.T) {
	ctx := newContext(t)
	m := load(t, ctx, "vector_add.tri")
	text, err := m.Text()
	if err != nil || !strings.Contains(text, "kernel @vector_add") {
		t.Fatal(text, err)
	}
	bin, err := m.Binary()
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	again, err := ctx.NewModule(bin, "vector_add.trib")
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	text2, _ := again.Text()
	bin2, _ := again.Binary()
	if text2 != text || string(bin2) != string(bin) {
		t.Fatal("the round trip changed the module")
	}
}

func TestCompileErrors(t *testing.T) {
	ctx := newContext(t)
	m := load(t, ctx, "vector_add.tri")
	cases := []struct {
		opts tri.CompileOptions
		code tri.Code
	}{
		{tri.CompileOptions{Target: "tpu"}, tri.CodeInvalidArgument},
		{tri.CompileOptions{Constexprs: map[string]interface{}{"BLOCK": 24}}, tri.CodeSpecialize},
		{tri.CompileOptions{Constexprs: map[string]interface{}{"BLOCK": 0.5}}, tri.CodeSpecialize},
		{tri.CompileOptions{Constexprs: map[string]interface{}{"BLOCK": "64"}}, tri.CodeInvalidArgument},
		{tri.CompileOptions{Target: "cpu", Checked: true}, tri.CodeUnsupported},
	}
	for _, c := range cases {
		c := c
		_, err := m.Compile("vector_add", &c.opts)
		wantError(t, err, c.code, "")
	}
	_, err := m.Compile("vector_sub", nil)
	wantError(t, err, tri.CodeNotFound, "")
}

func TestKernelTextIsSpecialized(t *testing.T) {
	ctx := newContext(t)
	k := vectorAdd(t, ctx, &tri.CompileOptions{Constexprs: map[string]interface{}{"BLOCK": int64(256)},
		ArgAlign: map[int]uint32{0: 16}, ArgDivisible: map[int]uint32{3: 16}})
	text, err := k.Text()
	if err != nil || !strings.Contains(text, "256") || len(k.Params()) != 4 || k.Name() != "vector_add" {
		t.Fatal(text, err)
	}
}

func TestArgumentsAreChecked(t *testing.T) {
	ctx := newContext(t)
	k := vectorAdd(t, ctx, nil)
	x, out := make([]float32, 8), make([]float32, 8)
	cases := []struct {
		args     []interface{}
		fragment string
	}{
		{[]interface{}{x, x, out}, "takes 4 arguments (%x: ptr<f32>, %y: ptr<f32>, %out: ptr<f32>, %n: i32), but 3 were given"},
		{[]interface{}{x, x, out, 8.5}, "argument 3 (%n) of kernel @vector_add is i32, so it takes an integer, but a float64 was given"},
		{[]interface{}{x, x, out, int64(1) << 40}, "argument 3 (%n) of kernel @vector_add is i32, and 1099511627776 does not fit"},
		{[]interface{}{make([]float64, 8), x, out, 8}, "so it takes a slice of f32 (or a Buffer or HostMemory), but a []float64 was given"},
		{[]interface{}{x, 1.0, out, 8}, "argument 1 (%y) of kernel @vector_add is ptr<f32>"},
	}
	for _, c := range cases {
		err := k.Launch(tri.Grid1(1), c.args...)
		wantError(t, err, tri.CodeLaunchArgs, c.fragment)
	}
	// The library's own checks come through with its message: a grid past its limits.
	err := k.Launch(tri.Grid{1, 65536, 1}, x, x, out, 8)
	te := wantError(t, err, tri.CodeInvalidArgument, "")
	if te.Message == "" {
		t.Fatal("no message from the library")
	}
	for i := range x {
		x[i] = float32(i)
	}
	got, err := add(k, x, x)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != 2*x[i] {
			t.Fatal(got)
		}
	}
}

func TestBuffersAndEmptySlices(t *testing.T) {
	ctx := newContext(t)
	k := vectorAdd(t, ctx, nil)
	x := []float32{1.5, 1.5, 1.5}
	out := make([]float32, 3)
	buf := tri.Buffer{Ptr: unsafe.Pointer(&out[0]), Bytes: 12, DType: tri.F32}
	if err := k.Launch(tri.Grid1(1), x, x, buf, 3); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(out)
	if out[0] != 3 || out[2] != 3 {
		t.Fatal(out)
	}
	// An empty slice passes a null pointer; nothing is read when n = 0.
	var empty []float32
	if err := k.Launch(tri.Grid1(1), empty, empty, empty, 0); err != nil {
		t.Fatal(err)
	}
	err := k.Launch(tri.Grid1(1), x, x, tri.Buffer{Ptr: unsafe.Pointer(&out[0]), Bytes: 12, DType: tri.F16}, 3)
	wantError(t, err, tri.CodeLaunchArgs, "a Buffer of f16")
}

func TestClosedObjectsRefuseUse(t *testing.T) {
	ctx := newContext(t)
	m := load(t, ctx, "vector_add.tri")
	k, err := m.Compile("vector_add", nil)
	if err != nil {
		t.Fatal(err)
	}
	k.Close()
	k.Close() // idempotent
	x := make([]float32, 4)
	wantError(t, k.Launch(tri.Grid1(1), x, x, x, 4), tri.CodeInvalidArgument, "kernel @vector_add is closed")
	_, err = k.Text()
	wantError(t, err, tri.CodeInvalidArgument, "closed")
	m.Close()
	_, err = m.Compile("vector_add", nil)
	wantError(t, err, tri.CodeInvalidArgument, "the module is closed")
	ctx.Close()
	_, err = ctx.NewModule([]byte("kernel @k() {\n  return\n}\n"), "k.tri")
	wantError(t, err, tri.CodeInvalidArgument, "the context is closed")
}

func TestHandlesCloseInAnyOrder(t *testing.T) {
	ctx, _ := tri.NewContext()
	m, _ := ctx.LoadModule(filepath.Join(examples, "vector_add.tri"))
	k, err := m.Compile("vector_add", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx.Close()
	m.Close()
	got, err := add(k, []float32{1, 2}, []float32{3, 4})
	if err != nil || got[0] != 4 || got[1] != 6 {
		t.Fatal(got, err)
	}
	k.Close()
}

func TestForgottenHandlesAreFinalized(t *testing.T) {
	for i := 0; i < 20; i++ {
		ctx, _ := tri.NewContext(tri.WithLog(tri.LogError, func(tri.LogLevel, string) {}))
		m, _ := ctx.LoadModule(filepath.Join(examples, "vector_add.tri"))
		if _, err := m.Compile("vector_add", nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
}

func TestLogSinkHearsFailures(t *testing.T) {
	var mu sync.Mutex
	var heard []string
	ctx := newContext(t, tri.WithLog(tri.LogDebug, func(level tri.LogLevel, msg string) {
		mu.Lock()
		defer mu.Unlock()
		heard = append(heard, fmt.Sprintf("%d %s", level, msg))
	}), tri.WithCacheDir(t.TempDir()))
	if _, err := ctx.NewModule([]byte("kernel @k("), "broken.tri"); err == nil {
		t.Fatal("broken IR was accepted")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range heard {
		if strings.HasPrefix(h, "0 broken.tri:1:") {
			return
		}
	}
	t.Fatalf("the sink heard %q", heard)
}

func TestKernelsRunFromManyGoroutines(t *testing.T) {
	ctx := newContext(t)
	m := load(t, ctx, "vector_add.tri")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			k, err := m.Compile("vector_add", nil) // one specialization, compiled once
			if err != nil {
				errs <- err
				return
			}
			defer k.Close()
			for r := 0; r < 5; r++ {
				x := make([]float32, 5000)
				for i := range x {
					x[i] = float32(i*(g+1) + r)
				}
				out, err := add(k, x, x)
				if err != nil {
					errs <- err
					return
				}
				for i := range out {
					if out[i] != 2*x[i] {
						errs <- fmt.Errorf("goroutine %d: out[%d] = %v", g, i, out[i])
						return
					}
				}
			}
			// Each failure carries its own message, whatever thread the goroutine is on.
			_, err = m.Function(fmt.Sprintf("missing%d", g))
			var te *tri.Error
			if !errors.As(err, &te) || !strings.Contains(te.Message, fmt.Sprintf("missing%d", g)) {
				errs <- fmt.Errorf("goroutine %d: %v", g, err)
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCloseWhileLaunching(t *testing.T) {
	ctx := newContext(t)
	k, err := load(t, ctx, "vector_add.tri").Compile("vector_add", nil)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 1<<20)
	done := make(chan error)
	go func() {
		var last error
		for i := 0; i < 50; i++ {
			_, last = add(k, x, x)
			if last != nil && !errors.Is(last, tri.ErrInvalidArgument) {
				done <- last
				return
			}
		}
		done <- last
	}()
	k.Close()
	if err := <-done; !errors.Is(err, tri.ErrInvalidArgument) {
		t.Fatalf("launches after Close must fail with ErrInvalidArgument, the last gave %v", err)
	}
}
