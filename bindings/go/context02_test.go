// The 0.2 context and kernel on the CPU: Cancel, the interpreter's memory budget, the in-memory
// kernel cache's capacity, the disk cache in a temporary folder, module text with comments, GPU
// compile options and the code they make (PTX for a named architecture needs no GPU), and
// launch-time variants on the CPU.
package tri_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	tri "github.com/tri-jit/tri/bindings/go"
)

const spin = `
// while (i >= 0) i += n: never ends for n = 0.
kernel @spin(%out: ptr<i32>, %n: i32) {
  %c0 = const[value=0] : i32
  %w = while %c0 {
  ^(%i: i32):
    %more = cmp[pred=sge] %i, %c0 : i1
    condition %more, %i
  } {
  ^(%i2: i32):
    %next = add %i2, %n : i32
    yield %next
  } : i32
  store %out, %w
  return
}
`

func TestCancelStopsALaunchThatNeverEnds(t *testing.T) {
	for _, target := range []string{"cpu", "interp"} {
		ctx := newContext(t, tri.WithCacheDir(""))
		m, err := ctx.NewModule([]byte(spin), "spin.tri")
		if err != nil {
			t.Fatal(err)
		}
		k, err := m.Compile("spin", &tri.CompileOptions{Target: target})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- k.Launch(tri.Grid1(4), make([]int32, 1), 0) }()
		select {
		case err := <-done:
			t.Fatalf("%s: the launch ended by itself: %v", target, err)
		case <-time.After(300 * time.Millisecond):
		}
		if err := ctx.Cancel(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			te := wantError(t, err, tri.CodeCancelled, "cancel")
			if !errors.Is(err, tri.ErrCancelled) || te.Code.String() != "TRI_ERROR_CANCELLED" {
				t.Fatal(err)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: Cancel did not stop the launch", target)
		}
		out := make([]int32, 1)
		if err := k.Launch(tri.Grid1(1), out, -1); err != nil || out[0] != -1 { // later launches run
			t.Fatal(out, err)
		}
	}
}

func TestInterpreterMemoryBudget(t *testing.T) {
	ctx := newContext(t, tri.WithCacheDir(""), tri.WithInterpMemoryLimit(1000))
	m := load(t, ctx, "vector_add.tri")
	interp, err := m.Compile("vector_add", &tri.CompileOptions{Target: "interp"})
	if err != nil {
		t.Fatal(err)
	}
	x, out := make([]float32, 4096), make([]float32, 4096)
	for i := range x {
		x[i] = 1
	}
	wantError(t, interp.Launch(tri.Grid1(4), x, x, out, 4096), tri.CodeLimitExceeded, "1000")
	if out[0] != 0 {
		t.Fatal("the refused launch ran")
	}
	cpu, err := m.Compile("vector_add", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cpu.Launch(tri.Grid1(4), x, x, out, 4096); err != nil || out[4095] != 2 { // other targets ignore it
		t.Fatal(err)
	}
}

// compileTwice compiles vector_add, drops it and compiles it again: the disk cache's counters
// tell whether the second compile found the module's in-memory copy or went to the disk.
func compileTwice(t *testing.T, opts ...tri.ContextOption) tri.CacheStats {
	ctx := newContext(t, append([]tri.ContextOption{tri.WithCacheDir(t.TempDir())}, opts...)...)
	m := load(t, ctx, "vector_add.tri")
	for i := 0; i < 2; i++ {
		k, err := m.Compile("vector_add", nil)
		if err != nil {
			t.Fatal(err)
		}
		k.Close()
	}
	s, err := ctx.CacheStats()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestKernelCacheCapacity(t *testing.T) {
	if s := compileTwice(t); s.Misses != 1 || s.Stores != 1 || s.Hits != 0 {
		t.Fatalf("default capacity: %+v", s)
	}
	if s := compileTwice(t, tri.WithKernelCacheCapacity(0)); s.Misses != 1 || s.Stores != 1 || s.Hits != 1 {
		t.Fatalf("capacity 0: %+v", s)
	}
}

func TestDiskCacheRoundTrip(t *testing.T) {
	dir := t.TempDir()
	folder, bundle := filepath.Join(dir, "cache"), filepath.Join(dir, "warm.tribundle")
	ctx := newContext(t, tri.WithCacheDir(folder), tri.WithCacheMaxBytes(1<<30))
	if d, err := ctx.CacheDir(); err != nil || d != folder {
		t.Fatal(d, err)
	}
	k := vectorAdd(t, ctx, nil)
	x := make([]float32, 3000)
	for i := range x {
		x[i] = float32(i)
	}
	if _, err := add(k, x, x); err != nil {
		t.Fatal(err)
	}
	s, err := ctx.CacheStats()
	if err != nil || s.Misses != 1 || s.Stores != 1 || s.Hits != 0 || s.Entries != 1 || s.MaxBytes != 1<<30 ||
		!s.Enabled || s.Bytes == 0 || s.BytesWritten != s.Bytes {
		t.Fatalf("%+v %v", s, err)
	}
	if n, err := ctx.CacheStat(tri.StatEntries); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	entries, err := ctx.CacheList(false)
	if err != nil || len(entries) != 1 {
		t.Fatal(entries, err)
	}
	e := entries[0]
	if !e.OK() || e.Status != "ok" || len(e.Key) != 32 || e.Kind != "obj" || e.Target != "cpu" || e.Kernel != "vector_add" ||
		e.Bytes != s.Bytes || e.MadeFor == "" || e.Specialized != "-" {
		t.Fatalf("%+v", e)
	}
	if d := time.Since(time.Unix(e.LastUse, 0)); d < -time.Hour || d > time.Hour {
		t.Fatalf("last use %v", e.LastUse)
	}
	if again, err := ctx.CacheList(true); err != nil || len(again) != 1 || again[0] != e {
		t.Fatal(again, err)
	}
	if n, err := ctx.CacheExport(bundle); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	if n, err := ctx.CachePrune(tri.CacheBound); err != nil || n != 0 { // within the bound
		t.Fatal(n, err)
	}
	if n, err := ctx.CachePrune(0); err != nil || n != 1 { // 0 empties it
		t.Fatal(n, err)
	}
	if l, err := ctx.CacheList(false); err != nil || len(l) != 0 {
		t.Fatal(l, err)
	}
	if n, err := ctx.CacheImport(bundle); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	// A new context (as a new process would) finds the imported entry: a hit, nothing compiled.
	again := newContext(t, tri.WithCacheDir(folder))
	k2 := vectorAdd(t, again, nil)
	if out, err := add(k2, x, x); err != nil || out[2999] != 2*2999 {
		t.Fatal(err)
	}
	if s, err := again.CacheStats(); err != nil || s.Hits != 1 || s.Misses != 0 || s.BytesRead != e.Bytes {
		t.Fatalf("%+v %v", s, err)
	}
	_, err = again.CacheImport(filepath.Join(dir, "missing"))
	wantError(t, err, tri.CodeIO, "")
	if err := os.WriteFile(filepath.Join(dir, "junk"), []byte("not a bundle at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = again.CacheImport(filepath.Join(dir, "junk"))
	wantError(t, err, tri.CodeCorruptBinary, "")
}

func TestContextWithoutDiskCache(t *testing.T) {
	ctx := newContext(t, tri.WithCacheDir(""))
	vectorAdd(t, ctx, nil)
	if d, err := ctx.CacheDir(); err != nil || d != "" {
		t.Fatal(d, err)
	}
	if s, err := ctx.CacheStats(); err != nil || s.Enabled || s.Stores != 0 {
		t.Fatalf("%+v %v", s, err)
	}
	_, err := ctx.CacheList(false)
	wantError(t, err, tri.CodeUnsupported, "")
	_, err = ctx.CacheExport(filepath.Join(t.TempDir(), "b"))
	wantError(t, err, tri.CodeUnsupported, "")
	_, err = ctx.CacheStat(99)
	wantError(t, err, tri.CodeInvalidArgument, "")
	ctx.Close()
	_, err = ctx.CacheStats()
	wantError(t, err, tri.CodeInvalidArgument, "the context is closed")
}

func TestModuleTextWithComments(t *testing.T) {
	ctx := newContext(t, tri.WithCacheDir(""))
	m, err := ctx.NewModule([]byte("// Spins until cancelled.\n"+spin), "spin.tri")
	if err != nil {
		t.Fatal(err)
	}
	plain, err1 := m.Text()
	commented, err2 := m.TextWithComments()
	if err1 != nil || err2 != nil || strings.Contains(plain, "//") ||
		!strings.Contains(commented, "// Spins until cancelled.") || !strings.Contains(commented, "// while (i >= 0)") {
		t.Fatal(plain, commented, err1, err2)
	}
	bin, _ := m.Binary()
	b, err := ctx.NewModule(bin, "spin.trib")
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := b.TextWithComments(); text != plain {
		t.Fatal(text)
	}
}

func TestCudaCodeForANamedArchitectureNeedsNoGPU(t *testing.T) {
	ctx := newContext(t, tri.WithCacheDir(""))
	m := load(t, ctx, "vector_add.tri")
	k, err := m.Compile("vector_add", &tri.CompileOptions{Target: "cuda", Arch: "sm_90", NumWarps: 8})
	if err != nil {
		t.Fatal(err)
	}
	if k.Target() != "cuda" {
		t.Fatal(k.Target())
	}
	ptx, err := k.Code("ptx")
	if err != nil || !strings.Contains(ptx, ".target sm_90") || !strings.Contains(ptx, ".entry vector_add(") {
		t.Fatal(ptx, err)
	}
	meta, err := k.Code("metadata")
	if err != nil || !strings.Contains(meta, `"num_warps": 8`) || !strings.Contains(meta, `"block": [256, 1, 1]`) {
		t.Fatal(meta, err)
	}
	if llvm, err := k.Code("llvm"); err != nil || !strings.Contains(llvm, "nvptx64-nvidia-cuda") {
		t.Fatal(err)
	}
	_, err = k.Code("cubin-of-the-future")
	wantError(t, err, tri.CodeNotFound, "cubin-of-the-future")
	// The CPU shows its LLVM IR and assembly on request; a kind it does not make is named.
	cpu := vectorAdd(t, ctx, nil)
	if llvm, err := cpu.Code("llvm"); err != nil || !strings.Contains(llvm, "target triple") {
		t.Fatal(llvm, err)
	}
	if asm, err := cpu.Code("asm"); err != nil || !strings.Contains(asm, "tri.vector_add") {
		t.Fatal(asm, err)
	}
	_, err = cpu.Code("ptx")
	wantError(t, err, tri.CodeNotFound, `target "cpu" made no code of kind 'ptx' for this kernel (it makes: llvm`)
	for _, c := range []struct {
		opts     tri.CompileOptions
		fragment string
	}{
		{tri.CompileOptions{Target: "cuda", Arch: "sm_90", NumWarps: 3}, "3 warps"},
		{tri.CompileOptions{NumStages: 9}, "9 stages"},
		{tri.CompileOptions{Target: "cuda", Arch: "sm_1"}, "sm_1"},
		{tri.CompileOptions{LaunchSpecialization: &tri.Specialization{On: true, MaxVariants: 17}}, "at most 16"},
		{tri.CompileOptions{ArgSpecialization: map[int]bool{32: false}}, "parameter 32"},
	} {
		c := c
		_, err := m.Compile("vector_add", &c.opts)
		wantError(t, err, tri.CodeInvalidArgument, c.fragment)
	}
}

// aligned is 200 f32s starting offset elements after a 64-byte boundary of buf (256 long).
func aligned(buf []float32, offset int) []float32 {
	skip := int((64 - uintptr(unsafe.Pointer(&buf[0]))%64) % 64 / 4)
	return buf[skip+offset : skip+offset+200]
}

func TestVariantsOfLaunchTimeSpecializationOnTheCPU(t *testing.T) {
	ctx := newContext(t, tri.WithCacheDir(""))
	m := load(t, ctx, "vector_add.tri")
	block := map[string]interface{}{"BLOCK": 64}
	plain, err := m.Compile("vector_add", &tri.CompileOptions{Constexprs: block})
	if err != nil {
		t.Fatal(err)
	}
	k, err := m.Compile("vector_add", &tri.CompileOptions{Constexprs: block,
		LaunchSpecialization: &tri.Specialization{On: true, MaxVariants: 2}})
	if err != nil {
		t.Fatal(err)
	}
	xb, yb, ob := make([]float32, 256), make([]float32, 256), make([]float32, 256)
	for _, c := range []struct{ xoff, n int }{{0, 160}, {0, 160}, {1, 160}, {1, 37}} {
		for _, kernel := range []*tri.Kernel{plain, k} {
			x, y, out := aligned(xb, c.xoff), aligned(yb, 0), aligned(ob, 0)
			for i := range x {
				x[i], y[i] = float32(i), 1.5
			}
			if err := kernel.Launch(tri.Grid1(4), x, y, out, c.n); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < c.n; i++ {
				if out[i] != x[i]+1.5 {
					t.Fatalf("out[%d] = %v", i, out[i])
				}
			}
		}
	}
	if v, err := plain.Variants(); err != nil || v.Schema != 1 || v.MaxVariants != 8 || len(v.Variants) != 0 {
		t.Fatalf("%+v %v", v, err)
	}
	v, err := k.Variants()
	if err != nil || v.MaxVariants != 2 || len(v.Variants) != 2 {
		t.Fatalf("%+v %v", v, err)
	}
	var reasons []string
	for _, variant := range v.Variants {
		reasons = append(reasons, variant.Reason)
		if len(variant.Key) != 16 || len(variant.Classes) == 0 {
			t.Fatalf("%+v", variant)
		}
	}
	all := strings.Join(reasons, "\n")
	for _, want := range []string{"argument 3 (%n) changed class: not divisible by 16 -> divisible by 16",
		"argument 0 (%x) changed class: aligned to 16 -> not aligned to 16 (from the variant for"} {
		if !strings.Contains(all, want) {
			t.Fatalf("no %q in %s", want, all)
		}
	}
}
