/* Host cost of one launch from C, the floor the bindings' launch benchmarks are read against
 * (bench/launch/run.py runs it next to them): a 4-argument vector add of 1024 elements on one
 * program (examples/vector_add.tri), in batches of 1000 launches, the methods taking turns for 31
 * rounds, each reporting its median round per launch. On "cuda" the GPU drains between batches,
 * untimed. Methods: a raw cuLaunchKernel of the kernel's own PTX ("cuda" only; the driver is
 * TRI_LIBCUDA, as libtri finds it, else libcuda.so.1, so tests/target/cuda/fake_libcuda.c stands in
 * without a GPU), tri_launch, and tri_launch_plan_launch.
 *
 * usage: tri-bench-launch-c [--target cuda|cpu] [--kernel examples/vector_add.tri]
 *                           [--package vector_add.tripkg] [--batch 1000] [--rounds 31]
 * With --package the kernel comes from a package (tri aot, docs/aot.md: @vector_add with
 * BLOCK=1024) instead of being compiled. Built with TRI_RUNTIME_ONLY (against libtri_rt, as
 * tri-bench-launch-c-rt: bench/launch/build.sh) that is the only way, and there is no raw row (the
 * PTX comes from tri_kernel_code, a compiler function).
 * Prints one JSON object {"language": "c", "library": "libtri" or "libtri_rt", "target": ...,
 * "rows": [...]} (rows as PERF.md says). */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tri/tri.h>

enum { N = 1024, MAX_METHODS = 4 };

static struct {
  int (*Init)(unsigned);
  int (*DeviceGet)(int*, int);
  int (*DevicePrimaryCtxRetain)(void**, int);
  int (*CtxSetCurrent)(void*);
  int (*CtxSynchronize)(void);
  int (*MemAlloc)(uint64_t*, size_t);
  int (*ModuleLoadDataEx)(void**, const void*, unsigned, void*, void*);
  int (*ModuleGetFunction)(void**, void*, const char*);
  int (*LaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                      void**);
} cu;

static void die(const char* what) {
  char msg[4096] = {0};
  tri_last_error_message(msg, sizeof msg);
  fprintf(stderr, "tri-bench-launch-c: %s failed: %s\n", what, msg);
  exit(1);
}
#define TRY(call) \
  if ((call) != 0) die(#call)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* The state every method launches with. */
static tri_kernel* g_kernel;
static tri_launch_plan* g_plan;
static tri_arg g_args[4];
static uint64_t g_bits[4];

#ifndef TRI_RUNTIME_ONLY
static void* g_fn;
static void* g_params[4];
static unsigned g_block;
static void m_raw(void) { cu.LaunchKernel(g_fn, 1, 1, 1, g_block, 1, 1, 0, NULL, g_params, NULL); }
#endif
static void m_call(void) { tri_launch(g_kernel, 1, 1, 1, NULL, g_args, 4); }
static void m_plan(void) { tri_launch_plan_launch(g_plan); }

static void sync_device(void) {
  if (cu.CtxSynchronize) cu.CtxSynchronize();
}

static void measure(void (*methods[])(void), int n, int batch, int rounds, double* out) {
  double* t = calloc((size_t)(n * rounds), sizeof(double));
  for (int m = 0; m < n; ++m)
    for (int i = 0; i < batch; ++i) methods[m]();
  sync_device();
  for (int r = 0; r < rounds; ++r)
    for (int m = 0; m < n; ++m) {
      double t0 = now_us();
      for (int i = 0; i < batch; ++i) methods[m]();
      double t1 = now_us();
      sync_device();
      t[m * rounds + r] = (t1 - t0) / batch;
    }
  for (int m = 0; m < n; ++m) {
    qsort(t + m * rounds, (size_t)rounds, sizeof(double), cmp);
    out[m] = t[m * rounds + rounds / 2];
  }
  free(t);
}

static char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "tri-bench-launch-c: cannot read %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* buf = malloc((size_t)n + 1);
  *size = fread(buf, 1, (size_t)n, f);
  buf[*size] = 0;
  fclose(f);
  return buf;
}

/* 0: loaded, -1: no driver. */
static int load_cuda(void) {
  const char* name = getenv("TRI_LIBCUDA");
  void* h = dlopen(name && *name ? name : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return -1;
#define SYM(f, s) *(void**)&cu.f = dlsym(h, s)
  SYM(Init, "cuInit");
  SYM(DeviceGet, "cuDeviceGet");
  SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  SYM(CtxSetCurrent, "cuCtxSetCurrent");
  SYM(CtxSynchronize, "cuCtxSynchronize");
  SYM(MemAlloc, "cuMemAlloc_v2");
  SYM(ModuleLoadDataEx, "cuModuleLoadDataEx");
  SYM(ModuleGetFunction, "cuModuleGetFunction");
  SYM(LaunchKernel, "cuLaunchKernel");
#undef SYM
  int dev = 0;
  void* ctx = NULL;
  if (cu.Init(0) || cu.DeviceGet(&dev, 0) || cu.DevicePrimaryCtxRetain(&ctx, dev) || cu.CtxSetCurrent(ctx)) return -1;
  return 0;
}

static tri_arg ptr_arg(uint64_t p, uint64_t extent) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.kind = TRI_TYPE_POINTER;
  a.dtype = TRI_DTYPE_F32;
  a.value.p = (const void*)(uintptr_t)p;
  a.extent = extent;
  return a;
}

int main(int argc, char** argv) {
  const char* target = "cuda";
  const char* kernel_path = "examples/vector_add.tri";
  const char* package = NULL;
  int batch = 1000, rounds = 31;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--target")) target = argv[i + 1];
    else if (!strcmp(argv[i], "--kernel")) kernel_path = argv[i + 1];
    else if (!strcmp(argv[i], "--package")) package = argv[i + 1];
    else if (!strcmp(argv[i], "--batch")) batch = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
  }
  int cuda = !strcmp(target, "cuda");
  if (cuda && load_cuda() != 0) {
    printf("skipped: no CUDA device\n");
    return 0;
  }
  size_t size;
  tri_context* ctx;
  tri_module* mod;
  tri_compile_options* o;
  TRY(tri_context_create(NULL, TRI_VERSION_NUMBER, &ctx));
  TRY(tri_compile_options_create(&o));
  TRY(tri_compile_options_set_target(o, target));
  TRY(tri_compile_options_set_constexpr_int(o, "BLOCK", N));
  char* text = read_file(package ? package : kernel_path, &size);
  if (package) {
    TRY(tri_module_load_package(ctx, text, size, package, &mod));
    TRY(tri_module_kernel(mod, "vector_add", o, &g_kernel));
  } else {
#ifdef TRI_RUNTIME_ONLY
    fprintf(stderr, "tri-bench-launch-c-rt: built against libtri_rt, it runs packages only (--package)\n");
    return 2;
#else
    TRY(tri_module_create(ctx, text, size, kernel_path, &mod));
    TRY(tri_kernel_compile(mod, "vector_add", o, &g_kernel));
#endif
  }
  static float host[3][N];
  uint64_t base = 0;
  if (cuda) {
    TRY(cu.MemAlloc(&base, 3 * 4 * N));
  } else {
    for (int i = 0; i < N; ++i) host[0][i] = host[1][i] = 1.0f;
  }
  for (int i = 0; i < 3; ++i) {
    uint64_t p = cuda ? base + (uint64_t)(i * 4 * N) : (uint64_t)(uintptr_t)host[i];
    g_args[i] = ptr_arg(p, 4 * N);
    g_bits[i] = p;
  }
  memset(&g_args[3], 0, sizeof g_args[3]);
  g_args[3].kind = TRI_TYPE_SCALAR;
  g_args[3].dtype = TRI_DTYPE_I32;
  g_args[3].value.i = N;
  g_bits[3] = N;
  TRY(tri_launch(g_kernel, 1, 1, 1, NULL, g_args, 4));
  if (!cuda && host[2][N - 1] != 2.0f) {
    fprintf(stderr, "tri-bench-launch-c: vector_add gave %g, not 2\n", host[2][N - 1]);
    return 1;
  }
  TRY(tri_launch_plan_create(g_kernel, 1, 1, 1, NULL, g_args, 4, &g_plan));
  void (*methods[MAX_METHODS])(void);
  int n = 0;
#ifdef TRI_RUNTIME_ONLY
  const int raw_row = 0;
#else
  const int raw_row = cuda;
  if (raw_row) {
    tri_blob* ptx;
    TRY(tri_kernel_code(g_kernel, "ptx", &ptx));
    size_t len = tri_blob_size(ptx);
    char* image = malloc(len + 1);
    memcpy(image, tri_blob_data(ptx), len);
    image[len] = 0;
    void* cmod;
    TRY(cu.ModuleLoadDataEx(&cmod, image, 0, NULL, NULL));
    TRY(cu.ModuleGetFunction(&g_fn, cmod, "vector_add"));
    for (int i = 0; i < 4; ++i) g_params[i] = &g_bits[i];
    tri_blob* meta;
    TRY(tri_kernel_code(g_kernel, "metadata", &meta));
    char* json = calloc(1, tri_blob_size(meta) + 1);
    memcpy(json, tri_blob_data(meta), tri_blob_size(meta));
    const char* block = strstr(json, "\"block\":");
    if (!block || sscanf(block, "\"block\": [%u", &g_block) != 1) {
      fprintf(stderr, "tri-bench-launch-c: no block size in the launch descriptor: %s\n", json);
      return 1;
    }
    free(json);
    tri_blob_destroy(meta);
    tri_blob_destroy(ptx);
    methods[n++] = m_raw;
  }
#endif
  methods[n++] = m_call;
  methods[n++] = m_plan;
  double t[MAX_METHODS];
  measure(methods, n, batch, rounds, t);
  double raw = raw_row ? t[0] : 0, call = t[n - 2], plan = t[n - 1];
#ifdef TRI_RUNTIME_ONLY
  const char* library = "libtri_rt";
#else
  const char* library = "libtri";
#endif
  printf("{\"language\": \"c\", \"library\": \"%s\", \"target\": \"%s\", \"rows\": [\n", library, target);
  if (raw_row) {
    printf(" {\"workload\": \"launch c call\", \"unit\": \"us\", \"higher_is_better\": false, \"tri\": %.3f, "
           "\"raw\": %.3f},\n", call, raw);
    printf(" {\"workload\": \"launch c plan\", \"unit\": \"us\", \"higher_is_better\": false, \"tri\": %.3f, "
           "\"raw\": %.3f}\n]}\n", plan, raw);
  } else {
    printf(" {\"workload\": \"launch c call\", \"unit\": \"us\", \"higher_is_better\": false, \"tri\": %.3f},\n", call);
    printf(" {\"workload\": \"launch c plan\", \"unit\": \"us\", \"higher_is_better\": false, \"tri\": %.3f}\n]}\n",
           plan);
  }
  tri_launch_plan_destroy(g_plan);
  tri_kernel_destroy(g_kernel);
  tri_compile_options_destroy(o);
  tri_module_destroy(mod);
  tri_context_destroy(ctx);
  free(text);
  return 0;
}
