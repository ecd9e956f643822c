// Host cost of one launch from Go (bench/launch/run.py runs it next to the other languages): a
// 4-argument vector add of 1024 elements on one program (examples/vector_add.tri), in batches of
// -batch launches, the methods taking turns for -rounds rounds, each reporting its median round
// per launch. On "cuda" the GPU drains between batches, untimed.
//
// Methods: k.LaunchOn(stream, grid, x, y, out, n) as a program writes it (each argument boxed
// into an interface{} at the call), the same with the arguments boxed once, plan.Launch(), and
// the floors under the package: tri_launch through cgo with its arguments in C memory built once,
// an empty cgo call (cgo's own cost) and tri_version through cgo, and on "cuda" a raw
// cuLaunchKernel of the kernel's own PTX through cgo (the driver resolved with dlopen: TRI_LIBCUDA,
// as libtri finds it, else libcuda.so.1; tests/target/cuda/fake_libcuda.c stands in without a GPU).
//
// usage: tri-launch-bench-go [-target cuda|cpu] [-kernel examples/vector_add.tri] [-batch 1000] [-rounds 31]
// Prints one JSON object {"language": "go", "target": ..., "rows": [...]}.
package main

/*
#cgo pkg-config: tri
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tri/tri.h>

static int (*p_cuCtxSynchronize)(void);
static int (*p_cuMemAlloc)(uint64_t*, size_t);
static int (*p_cuModuleLoadDataEx)(void**, const void*, unsigned, void*, void*);
static int (*p_cuModuleGetFunction)(void**, void*, const char*);
static int (*p_cuLaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                               void**, void**);

// 0: device 0's primary context is current; -1: no driver or no device.
static int bench_cuda_open(const char* name) {
  void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h) return -1;
  int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
  int (*device_get)(int*, int) = (int (*)(int*, int))dlsym(h, "cuDeviceGet");
  int (*retain)(void**, int) = (int (*)(void**, int))dlsym(h, "cuDevicePrimaryCtxRetain");
  int (*set_current)(void*) = (int (*)(void*))dlsym(h, "cuCtxSetCurrent");
  *(void**)&p_cuCtxSynchronize = dlsym(h, "cuCtxSynchronize");
  *(void**)&p_cuMemAlloc = dlsym(h, "cuMemAlloc_v2");
  *(void**)&p_cuModuleLoadDataEx = dlsym(h, "cuModuleLoadDataEx");
  *(void**)&p_cuModuleGetFunction = dlsym(h, "cuModuleGetFunction");
  *(void**)&p_cuLaunchKernel = dlsym(h, "cuLaunchKernel");
  int dev = 0;
  void* ctx = NULL;
  if (!init || init(0) || device_get(&dev, 0) || retain(&ctx, dev) || set_current(ctx)) return -1;
  return 0;
}

static uint64_t bench_alloc(size_t n) { uint64_t p = 0; return p_cuMemAlloc(&p, n) ? 0 : p; }
static void bench_sync(void) { if (p_cuCtxSynchronize) p_cuCtxSynchronize(); }

// The raw launch's state, in C memory: the function and its parameters, built once.
static void* g_fn;
static uint64_t g_bits[4];
static void* g_params[4];
static unsigned g_block;

static int bench_raw_setup(const char* ptx, uint64_t x, uint64_t y, uint64_t o, uint32_t n, unsigned block) {
  void* mod;
  if (p_cuModuleLoadDataEx(&mod, ptx, 0, NULL, NULL) || p_cuModuleGetFunction(&g_fn, mod, "vector_add")) return -1;
  g_bits[0] = x; g_bits[1] = y; g_bits[2] = o; g_bits[3] = n;
  for (int i = 0; i < 4; ++i) g_params[i] = &g_bits[i];
  g_block = block;
  return 0;
}
static int bench_raw(void) { return p_cuLaunchKernel(g_fn, 1, 1, 1, g_block, 1, 1, 0, NULL, g_params, NULL); }

// tri_launch with arguments in C memory built once (the floor under the package).
static tri_arg g_args[4];
static void bench_floor_setup(uint64_t x, uint64_t y, uint64_t o, uint64_t bytes, int32_t n) {
  uint64_t p[3] = {x, y, o};
  memset(g_args, 0, sizeof g_args);
  for (int i = 0; i < 3; ++i) {
    g_args[i].kind = TRI_TYPE_POINTER;
    g_args[i].dtype = TRI_DTYPE_F32;
    g_args[i].value.p = (const void*)(uintptr_t)p[i];
    g_args[i].extent = bytes;
  }
  g_args[3].kind = TRI_TYPE_SCALAR;
  g_args[3].dtype = TRI_DTYPE_I32;
  g_args[3].value.i = n;
}
static tri_kernel* g_kernel;
// The floor's own kernel, compiled through the C API as the package compiles it (the package
// does not hand out its handle): 0 on success.
static int bench_floor_compile(const char* text, size_t len, const char* target) {
  tri_context* ctx;
  tri_module* mod;
  tri_compile_options* o;
  if (tri_context_create(NULL, TRI_VERSION_NUMBER, &ctx) || tri_module_create(ctx, text, len, "vector_add.tri", &mod) ||
      tri_compile_options_create(&o) || tri_compile_options_set_target(o, target) ||
      tri_compile_options_set_constexpr_int(o, "BLOCK", 1024))
    return -1;
  return tri_kernel_compile(mod, "vector_add", o, &g_kernel);
}
static int bench_floor(void) { return tri_launch(g_kernel, 1, 1, 1, NULL, g_args, 4); }
static void bench_nop(void) {}
*/
import "C"

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"time"
	"unsafe"

	tri "github.com/tri-jit/tri/bindings/go"
)

const n = 1024

type method struct {
	name string
	fn   func()
}

func measure(methods []method, batch, rounds int) map[string]float64 {
	for _, m := range methods {
		for i := 0; i < batch; i++ {
			m.fn()
		}
	}
	C.bench_sync()
	t := make([][]float64, len(methods))
	for r := 0; r < rounds; r++ {
		for i, m := range methods {
			t0 := time.Now()
			for j := 0; j < batch; j++ {
				m.fn()
			}
			us := float64(time.Since(t0).Nanoseconds()) / 1e3 / float64(batch)
			C.bench_sync()
			t[i] = append(t[i], us)
		}
	}
	out := map[string]float64{}
	for i, m := range methods {
		sort.Float64s(t[i])
		out[m.name] = t[i][len(t[i])/2]
	}
	return out
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "tri-launch-bench-go:", err)
		os.Exit(1)
	}
}

func main() {
	target := flag.String("target", "cuda", "cuda or cpu")
	kernelPath := flag.String("kernel", "examples/vector_add.tri", "the vector add kernel")
	batch := flag.Int("batch", 1000, "launches per batch")
	rounds := flag.Int("rounds", 31, "rounds")
	flag.Parse()
	cuda := *target == "cuda"
	if cuda {
		name := os.Getenv("TRI_LIBCUDA")
		if name == "" {
			name = "libcuda.so.1"
		}
		cname := C.CString(name)
		r := C.bench_cuda_open(cname)
		C.free(unsafe.Pointer(cname))
		if r != 0 {
			fmt.Println("skipped: no CUDA device")
			return
		}
	}
	ctx, err := tri.NewContext(tri.WithCacheDir(""))
	must(err)
	m, err := ctx.LoadModule(*kernelPath)
	must(err)
	k, err := m.Compile("vector_add", &tri.CompileOptions{Target: *target, Constexprs: map[string]interface{}{"BLOCK": n}})
	must(err)

	var methods []method
	var call, boxed func()
	var plan *tri.LaunchPlan
	var x, y, o uint64
	if cuda {
		base := uint64(C.bench_alloc(C.size_t(3 * 4 * n)))
		x, y, o = base, base+4*n, base+8*n
		dx, dy, do := tri.DevicePtr{Ptr: x, Bytes: 4 * n, DType: tri.F32}, tri.DevicePtr{Ptr: y, Bytes: 4 * n, DType: tri.F32},
			tri.DevicePtr{Ptr: o, Bytes: 4 * n, DType: tri.F32}
		call = func() { _ = k.LaunchOn(0, tri.Grid1(1), dx, dy, do, n) }
		args := []interface{}{dx, dy, do, n}
		boxed = func() { _ = k.LaunchOn(0, tri.Grid1(1), args...) }
		plan, err = k.PlanOn(0, tri.Grid1(1), dx, dy, do, n)
		must(err)
		ptx, err := k.Code("ptx")
		must(err)
		meta, err := k.Code("metadata")
		must(err)
		block, err := strconv.Atoi(regexp.MustCompile(`"block": \[(\d+)`).FindStringSubmatch(meta)[1])
		must(err)
		cptx := C.CString(ptx)
		if C.bench_raw_setup(cptx, C.uint64_t(x), C.uint64_t(y), C.uint64_t(o), n, C.unsigned(block)) != 0 {
			must(fmt.Errorf("loading the kernel's PTX into the driver failed"))
		}
		methods = append(methods, method{"raw", func() { C.bench_raw() }})
	} else {
		xs, out := make([]float32, n), make([]float32, n)
		for i := range xs {
			xs[i] = 1
		}
		call = func() { _ = k.Launch(tri.Grid1(1), xs, xs, out, n) }
		args := []interface{}{xs, xs, out, n}
		boxed = func() { _ = k.Launch(tri.Grid1(1), args...) }
		call()
		if out[n-1] != 2 {
			must(fmt.Errorf("vector_add gave %v, not 2", out[n-1]))
		}
		hx, err := tri.AllocHost(tri.F32, n)
		must(err)
		ho, err := tri.AllocHost(tri.F32, n)
		must(err)
		plan, err = k.Plan(tri.Grid1(1), hx, hx, ho, n)
		must(err)
		x, y, o = uint64(uintptr(unsafe.Pointer(&tri.HostSlice[float32](hx)[0]))),
			uint64(uintptr(unsafe.Pointer(&tri.HostSlice[float32](hx)[0]))),
			uint64(uintptr(unsafe.Pointer(&tri.HostSlice[float32](ho)[0])))
	}
	C.bench_floor_setup(C.uint64_t(x), C.uint64_t(y), C.uint64_t(o), 4*n, n)
	text, err := os.ReadFile(*kernelPath)
	must(err)
	ctext, ctarget := C.CString(string(text)), C.CString(*target)
	if C.bench_floor_compile(ctext, C.size_t(len(text)), ctarget) != 0 {
		must(fmt.Errorf("compiling the floor's kernel failed: %s", tri.LastErrorMessage()))
	}
	methods = append(methods,
		method{"floor", func() { C.bench_floor() }},
		method{"call", call},
		method{"boxed", boxed},
		method{"plan", func() { _ = plan.Launch() }},
		method{"nop", func() { C.bench_nop() }},
		method{"ffi", func() { C.tri_version() }},
	)
	t := measure(methods, *batch, *rounds)
	raw := t["floor"]
	if cuda {
		raw = t["raw"]
	}
	row := func(what string, us float64, extra string) string {
		return fmt.Sprintf(`{"workload": "launch go %s", "unit": "us", "higher_is_better": false, "tri": %.3f, `+
			`"raw": %.3f, "floor": %.3f, "cgo_call": %.3f, "ffi_call": %.3f%s}`, what, us, raw, t["floor"], t["nop"],
			t["ffi"], extra)
	}
	fmt.Printf("{\"language\": \"go\", \"target\": %q, \"rows\": [\n %s,\n %s\n]}\n", *target,
		row("call", t["call"], fmt.Sprintf(`, "args_boxed_once": %.3f`, t["boxed"])), row("plan", t["plan"], ""))
}
