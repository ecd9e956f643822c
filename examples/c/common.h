/* Shared helpers for the example host programs: load a kernel file, compile it for the best
 * target present, launch it a few times and report the median time. They use only the public
 * C API (tri/tri.h), the way an application embedding Tri would.
 *
 * Environment: TRI_TARGET picks the target ("cpu" by default; "cuda" runs on the GPU, "interp"
 * runs the reference interpreter); TRI_EXAMPLES_DIR says where the .tri files are (default: the
 * source tree); TRI_NUM_STAGES, when set, is passed to tri_compile_options_set_num_stages (the
 * tests run matmul and attention with 1 and 2 on every target). TRI_PACKAGE_DIR, when set, makes
 * the kernels come from packages instead (<dir>/<example>.tripkg, made by `tri aot`:
 * scripts/aot-examples.sh) through tri_module_load_package and tri_module_kernel, compiling
 * nothing; built with TRI_RUNTIME_ONLY defined (against libtri_rt, which has no compiler),
 * that is the only way they get kernels.
 *
 * On "cuda" the buffers are CUDA managed memory, reachable from the host (which fills and checks
 * them) and the device: the examples stay one program for every target. The CUDA driver is
 * loaded at run time, as libtri does, so the examples build without CUDA. */
#ifndef TRI_EXAMPLES_COMMON_H_
#define TRI_EXAMPLES_COMMON_H_

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dlfcn.h>

#include "tri/tri.h"

#ifndef TRI_EXAMPLES_DIR
#define TRI_EXAMPLES_DIR "examples"
#endif

static inline void ex_fail(const char* what, tri_result r) {
  char msg[4096];
  tri_last_error_message(msg, sizeof msg);
  fprintf(stderr, "%s failed: %s\n%s\n", what, tri_result_name(r), msg);
  exit(1);
}

#define EX_CHECK(call)                      \
  do {                                      \
    tri_result ex_r_ = (call);              \
    if (ex_r_ != TRI_OK) ex_fail(#call, ex_r_); \
  } while (0)

static inline const char* ex_target(void) {
  const char* t = getenv("TRI_TARGET");
  return t && *t ? t : "cpu";
}

/* ---- buffers: host memory, or CUDA managed memory on the "cuda" target */
static struct {
  int (*alloc_managed)(uint64_t*, size_t, unsigned);
  int (*free)(uint64_t);
  int (*sync)(void);
  int (*htod)(uint64_t, const void*, size_t);
  int (*dtoh)(void*, uint64_t, size_t);
  int (*stream_create)(void**, unsigned);
  int (*stream_sync)(void*);
  int (*begin_capture)(void*, int);
  int (*end_capture)(void*, void**);
  int (*graph_instantiate)(void**, void*, unsigned long long);
  int (*graph_launch)(void*, void*);
  int (*graph_exec_destroy)(void*);
  int (*graph_destroy)(void*);
  int (*ctx_create)(void**, unsigned, int);
  int (*ctx_get_current)(void**);
  int device; /* the GPU this process uses (team.h: a rank's own) */
  int cu_device;
} ex_cu;

static inline int ex_gpu(void) { return strcmp(ex_target(), "cuda") == 0; }

static inline void ex_cuda_init(void) {
  if (ex_cu.sync) return;
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  int (*init)(unsigned);
  int (*device_get)(int*, int);
  int (*retain)(void**, int);
  int (*set_current)(void*);
  int dev = 0;
  void* ctx = NULL;
  if (!h) {
    /* exit code 77: tests/examples.cmake counts the run as skipped */
    printf("skipped: no CUDA device (TRI_TARGET=cuda needs the CUDA driver, libcuda.so.1: %s)\n", dlerror());
    exit(77);
  }
  *(void**)&init = dlsym(h, "cuInit");
  *(void**)&device_get = dlsym(h, "cuDeviceGet");
  *(void**)&retain = dlsym(h, "cuDevicePrimaryCtxRetain");
  *(void**)&set_current = dlsym(h, "cuCtxSetCurrent");
  *(void**)&ex_cu.alloc_managed = dlsym(h, "cuMemAllocManaged");
  *(void**)&ex_cu.free = dlsym(h, "cuMemFree_v2");
  *(void**)&ex_cu.sync = dlsym(h, "cuCtxSynchronize");
  *(void**)&ex_cu.htod = dlsym(h, "cuMemcpyHtoD_v2");
  *(void**)&ex_cu.dtoh = dlsym(h, "cuMemcpyDtoH_v2");
  *(void**)&ex_cu.stream_create = dlsym(h, "cuStreamCreate");
  *(void**)&ex_cu.stream_sync = dlsym(h, "cuStreamSynchronize");
  *(void**)&ex_cu.begin_capture = dlsym(h, "cuStreamBeginCapture_v2");
  *(void**)&ex_cu.end_capture = dlsym(h, "cuStreamEndCapture");
  *(void**)&ex_cu.graph_instantiate = dlsym(h, "cuGraphInstantiateWithFlags");
  *(void**)&ex_cu.graph_launch = dlsym(h, "cuGraphLaunch");
  *(void**)&ex_cu.graph_exec_destroy = dlsym(h, "cuGraphExecDestroy");
  *(void**)&ex_cu.graph_destroy = dlsym(h, "cuGraphDestroy");
  *(void**)&ex_cu.ctx_create = dlsym(h, "cuCtxCreate_v2");
  *(void**)&ex_cu.ctx_get_current = dlsym(h, "cuCtxGetCurrent");
  if (!init || init(0) || device_get(&dev, ex_cu.device) || retain(&ctx, dev) || set_current(ctx)) {
    printf("skipped: no CUDA device (TRI_TARGET=cuda found the driver but no usable GPU)\n");
    exit(77);
  }
  ex_cu.cu_device = dev;
}

static inline void* ex_malloc(size_t bytes) {
  uint64_t p = 0;
  if (!ex_gpu()) return malloc(bytes);
  ex_cuda_init();
  if (ex_cu.alloc_managed(&p, bytes ? bytes : 1, 1 /* CU_MEM_ATTACH_GLOBAL */)) {
    fprintf(stderr, "cuMemAllocManaged of %zu bytes failed\n", bytes);
    exit(1);
  }
  return (void*)(uintptr_t)p;
}

static inline void* ex_calloc(size_t count, size_t size) {
  void* p = ex_malloc(count * size);
  memset(p, 0, count * size);
  return p;
}

static inline void ex_free(void* p) {
  if (!ex_gpu()) free(p);
  else ex_cu.free((uint64_t)(uintptr_t)p);
}

/* Waits for the GPU (launches there are asynchronous); nothing on the host targets. */
static inline void ex_sync(void) {
  if (ex_gpu()) ex_cu.sync();
}

/* ---- how launches reach the GPU. TRI_EXAMPLE_LAUNCH (tests/examples.cmake runs each):
 *   unset      the default stream of the current context;
 *   "stream"   a non-blocking stream of the program's own;
 *   "graph"    each launch captured into a CUDA graph on that stream and the graph launched. The
 *              first launch of a kernel loads its module, which a capture must not see, so it
 *              runs once uncaptured first; the buffers it changed are then put back as they were,
 *              and the results the program checks come from the graph;
 *   "context"  a context the program creates and makes current after allocating its buffers
 *              (managed memory: every context of the process reaches it): Tri loads the kernel
 *              there and must leave it current.
 * The times the programs print include, in "graph" mode, the copies and the capture. */
static inline const char* ex_launch_mode(void) {
  const char* m = getenv("TRI_EXAMPLE_LAUNCH");
  return ex_gpu() && m ? m : "";
}

static inline void* ex_stream(void) {
  static void* stream;
  if (!stream && ex_cu.stream_create(&stream, 1 /* CU_STREAM_NON_BLOCKING */)) {
    fprintf(stderr, "cuStreamCreate failed\n");
    exit(1);
  }
  return stream;
}

static inline void ex_cu_check(int r, const char* what) {
  if (r) {
    fprintf(stderr, "%s failed: CUresult %d\n", what, r);
    exit(1);
  }
}

static inline tri_result ex_launch(tri_kernel* k, uint32_t gx, uint32_t gy, uint32_t gz, void* stream,
                                   const tri_arg* args, uint32_t nargs) {
  const char* mode = ex_launch_mode();
  tri_result r;
  if (!strcmp(mode, "context")) {
    static void* ctx;
    void* now = NULL;
    if (!ctx) ex_cu_check(ex_cu.ctx_create(&ctx, 0, ex_cu.cu_device), "cuCtxCreate");  /* now current */
    r = tri_launch(k, gx, gy, gz, stream, args, nargs);
    ex_cu_check(ex_cu.ctx_get_current(&now), "cuCtxGetCurrent");
    if (now != ctx) {
      fprintf(stderr, "tri_launch changed the current context\n");
      exit(1);
    }
    return r;
  }
  if (!strcmp(mode, "stream")) {
    r = tri_launch(k, gx, gy, gz, ex_stream(), args, nargs);
    if (r == TRI_OK) ex_cu_check(ex_cu.stream_sync(ex_stream()), "cuStreamSynchronize");
    return r;
  }
  if (!strcmp(mode, "graph")) {
    void* s = ex_stream();
    void *graph = NULL, *exec = NULL;
    void* saved[32] = {0};
    for (uint32_t i = 0; i < nargs && i < 32; ++i)
      if (args[i].kind == TRI_TYPE_POINTER && args[i].value.p && args[i].extent) {
        saved[i] = malloc(args[i].extent);
        memcpy(saved[i], args[i].value.p, args[i].extent);
      }
    if ((r = tri_launch(k, gx, gy, gz, s, args, nargs)) != TRI_OK) return r;
    ex_cu_check(ex_cu.stream_sync(s), "cuStreamSynchronize");
    for (uint32_t i = 0; i < nargs && i < 32; ++i)
      if (saved[i]) {
        memcpy((void*)(uintptr_t)args[i].value.p, saved[i], args[i].extent); /* managed memory */
        free(saved[i]);
      }
    ex_cu_check(ex_cu.begin_capture(s, 0 /* CU_STREAM_CAPTURE_MODE_GLOBAL */), "cuStreamBeginCapture");
    r = tri_launch(k, gx, gy, gz, s, args, nargs);
    ex_cu_check(ex_cu.end_capture(s, &graph), "cuStreamEndCapture");
    if (r != TRI_OK) return r;
    ex_cu_check(ex_cu.graph_instantiate(&exec, graph, 0), "cuGraphInstantiate");
    ex_cu_check(ex_cu.graph_launch(exec, s), "cuGraphLaunch");
    ex_cu_check(ex_cu.stream_sync(s), "cuStreamSynchronize");
    ex_cu.graph_exec_destroy(exec);
    ex_cu.graph_destroy(graph);
    return r;
  }
  return tri_launch(k, gx, gy, gz, stream, args, nargs);
}

/* Launches and waits, so the host can read the results. */
#define EX_LAUNCH(...)                     \
  do {                                     \
    EX_CHECK(ex_launch(__VA_ARGS__));      \
    ex_sync();                             \
  } while (0)

/* The reference interpreter is exact but slow: the programs use smaller problems on it. */
static inline int ex_small(void) { return strcmp(ex_target(), "interp") == 0; }

static inline char* ex_read_path(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s (TRI_EXAMPLES_DIR names the folder of the .tri files, TRI_PACKAGE_DIR that of "
                    "the packages)\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* buf = (char*)malloc((size_t)n + 1);
  if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(1);
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static inline char* ex_read_file(const char* name, size_t* size) {
  const char* dir = getenv("TRI_EXAMPLES_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : TRI_EXAMPLES_DIR, name);
  return ex_read_path(path, size);
}

typedef struct {
  const char* name;
  int64_t value;
} ex_const;

/* Compiles kernel `kernel` of file `file` with integer constexprs, or (TRI_PACKAGE_DIR) gets it
 * from the file's package. */
static inline tri_kernel* ex_compile(const char* file, const char* kernel, const ex_const* consts, int nconsts) {
  tri_context* ctx;
  tri_module* mod;
  tri_compile_options* opts;
  tri_kernel* k;
  size_t size;
  const char* packages = getenv("TRI_PACKAGE_DIR");
  EX_CHECK(tri_context_create(NULL, TRI_VERSION_NUMBER, &ctx));
  if (packages && *packages) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%.*s.tripkg", packages, (int)(strlen(file) - 4), file);
    char* bytes = ex_read_path(path, &size);
    EX_CHECK(tri_module_load_package(ctx, bytes, size, path, &mod));
    free(bytes);
  } else {
#ifdef TRI_RUNTIME_ONLY
    fprintf(stderr, "built against libtri_rt: set TRI_PACKAGE_DIR to a folder of packages (scripts/aot-examples.sh)\n");
    exit(1);
#else
    char* text = ex_read_file(file, &size);
    EX_CHECK(tri_module_create(ctx, text, size, file, &mod));
    free(text);
#endif
  }
  EX_CHECK(tri_compile_options_create(&opts));
  EX_CHECK(tri_compile_options_set_target(opts, ex_target()));
  for (int i = 0; i < nconsts; ++i) EX_CHECK(tri_compile_options_set_constexpr_int(opts, consts[i].name, consts[i].value));
  const char* stages = getenv("TRI_NUM_STAGES");
  if (stages && *stages) EX_CHECK(tri_compile_options_set_num_stages(opts, atoi(stages)));
  const char* warps = getenv("TRI_NUM_WARPS");
  if (warps && *warps) EX_CHECK(tri_compile_options_set_num_warps(opts, atoi(warps)));
  if (packages && *packages)
    EX_CHECK(tri_module_kernel(mod, kernel, opts, &k));
  else
#ifdef TRI_RUNTIME_ONLY
    exit(1);
#else
    EX_CHECK(tri_kernel_compile(mod, kernel, opts, &k));
#endif
  tri_compile_options_destroy(opts);
  /* The kernel keeps the module and the context alive. */
  tri_module_destroy(mod);
  tri_context_destroy(ctx);
  return k;
}

static inline tri_arg ex_ptr(const void* p, size_t bytes, int32_t dtype) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.value.p = p;
  a.extent = bytes;
  a.kind = TRI_TYPE_POINTER;
  a.dtype = dtype;
  return a;
}

static inline tri_arg ex_i32(int64_t v) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.value.i = v;
  a.kind = TRI_TYPE_SCALAR;
  a.dtype = TRI_DTYPE_I32;
  return a;
}

static inline tri_arg ex_f32(double v) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.value.f = v;
  a.kind = TRI_TYPE_SCALAR;
  a.dtype = TRI_DTYPE_F32;
  return a;
}

static inline double ex_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int ex_cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* Launches `reps` times (after the one launch whose result was checked) and returns the median
 * seconds of one launch. */
static inline double ex_time(tri_kernel* k, uint32_t gx, uint32_t gy, const tri_arg* args, uint32_t nargs, int reps) {
  double t[64];
  if (reps > 64) reps = 64;
  if (ex_small()) reps = 1;
  for (int i = 0; i < reps; ++i) {
    double t0 = ex_now();
    EX_LAUNCH(k, gx, gy, 1, NULL, args, nargs);
    t[i] = ex_now() - t0;
  }
  qsort(t, (size_t)reps, sizeof t[0], ex_cmp_double);
  return t[reps / 2];
}

/* Deterministic pseudo-random floats in [lo, hi). */
static uint64_t ex_rng = 0x9e3779b97f4a7c15ull;
static inline float ex_rand(float lo, float hi) {
  ex_rng ^= ex_rng << 13;
  ex_rng ^= ex_rng >> 7;
  ex_rng ^= ex_rng << 17;
  return lo + (hi - lo) * (float)((ex_rng >> 40) * (1.0 / 16777216.0));
}

/* IEEE half <-> float, for the f16 examples' host side (round to nearest even). */
static inline float ex_half_to_float(uint16_t h) {
  uint32_t s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), (int)e - 25);
  return s ? -v : v;
}

static inline uint16_t ex_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t s = (x >> 16) & 0x8000;
  float a = fabsf(f);
  if (a != a) return (uint16_t)(s | 0x7e00);
  if (a >= 65520.0f) return (uint16_t)(s | 0x7c00);
  if (a < 6.103515625e-05f) return (uint16_t)(s | (uint16_t)nearbyintf(a * 16777216.0f));
  int e;
  frexpf(a, &e);
  float scaled = ldexpf(a, 11 - e); /* in [1024, 2048) */
  uint32_t q = (uint32_t)nearbyintf(scaled);
  if (q == 2048) {
    q = 1024;
    ++e;
  }
  return (uint16_t)(s | (uint32_t)(e + 14) << 10 | (q & 1023));
}

/* Prints the one-line result every example ends with. */
static inline void ex_report(const char* name, int ok, double seconds, double bytes, double flops) {
  printf("%-18s %-6s %-4s %9.3f ms", name, ex_target(), ok ? "ok" : "FAIL", seconds * 1e3);
  if (bytes > 0) printf("  %8.2f GB/s", bytes / seconds / 1e9);
  if (flops > 0) printf("  %8.2f GFLOP/s", flops / seconds / 1e9);
  printf("\n");
}

#endif
