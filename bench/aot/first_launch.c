/* Start to first launch from a package (docs/aot.md; bench/aot/run.sh): a program linked with
 * libtri_rt reads a package of N kernels (bench/aot/kernels.py: k0 .. k{N-1}, each its own code),
 * and for each gets the kernel (tri_module_kernel: on "cpu" a dlopen, on "cuda" a cubin chosen) and
 * launches it once, to completion. On "cuda", CUDA's own start (cuInit, the primary context, the
 * buffers) comes first and is timed apart: the goal (1 ms per kernel) is for what Tri adds.
 *
 * usage: tri-bench-first-launch PACKAGE N [cpu|cuda]
 * Prints one JSON object: {"library", "target", "kernels", "cuda_init_ms", "main_to_first_ms",
 * "first_kernel_ms", "all_kernels_ms", "per_kernel_ms", "package_bytes"}: main_to_first_ms from
 * main() to the first launch's end (CUDA's start excluded), first_kernel_ms from the package's
 * load to that end, all_kernels_ms from the load to the end of the N-th kernel's first launch;
 * and the first kernel's parts: load_ms (reading and checking the package, the module),
 * first_get_ms (tri_module_kernel) and first_launch_ms (its first launch, to completion). */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tri/tri.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

#define TRY(call)                                                  \
  do {                                                             \
    tri_result r_ = (call);                                        \
    if (r_ != TRI_OK) {                                            \
      char m_[2048];                                               \
      tri_last_error_message(m_, sizeof m_);                       \
      fprintf(stderr, "%s: %s\n%s\n", #call, tri_result_name(r_), m_); \
      return 1;                                                    \
    }                                                              \
  } while (0)

enum { ELEMENTS = 1024 };

int main(int argc, char** argv) {
  const double t_main = now_ms();
  if (argc < 3) {
    fprintf(stderr, "usage: tri-bench-first-launch PACKAGE N [cpu|cuda]\n");
    return 2;
  }
  const char* path = argv[1];
  const int n = atoi(argv[2]);
  const char* target = argc > 3 ? argv[3] : "cpu";
  const int cuda = strcmp(target, "cuda") == 0;
  /* CUDA's own start, timed apart. */
  double cuda_ms = 0;
  uint64_t dev = 0;
  int (*sync)(void) = NULL;
  static float host[3][ELEMENTS];
  if (cuda) {
    const double t0 = now_ms();
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      printf("skipped: no CUDA device\n");
      return 0;
    }
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
    int (*get)(int*, int) = (int (*)(int*, int))dlsym(h, "cuDeviceGet");
    int (*retain)(void**, int) = (int (*)(void**, int))dlsym(h, "cuDevicePrimaryCtxRetain");
    int (*set)(void*) = (int (*)(void*))dlsym(h, "cuCtxSetCurrent");
    int (*alloc)(uint64_t*, size_t) = (int (*)(uint64_t*, size_t))dlsym(h, "cuMemAlloc_v2");
    sync = (int (*)(void))dlsym(h, "cuCtxSynchronize");
    int d = 0;
    void* ctx = NULL;
    if (!init || init(0) || get(&d, 0) || retain(&ctx, d) || set(ctx) || alloc(&dev, 3 * 4 * ELEMENTS)) {
      printf("skipped: no CUDA device\n");
      return 0;
    }
    cuda_ms = now_ms() - t0;
  }
  const double t_load = now_ms();
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  const long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* bytes = malloc((size_t)size);
  if (fread(bytes, 1, (size_t)size, f) != (size_t)size) return 1;
  fclose(f);
  tri_context* ctx;
  tri_module* mod;
  tri_compile_options* o;
  TRY(tri_context_create(NULL, TRI_VERSION_NUMBER, &ctx));
  TRY(tri_module_load_package(ctx, bytes, (size_t)size, path, &mod));
  TRY(tri_compile_options_create(&o));
  TRY(tri_compile_options_set_target(o, target));
  const double t_loaded = now_ms();
  tri_arg args[4];
  memset(args, 0, sizeof args);
  for (int i = 0; i < 3; ++i) {
    args[i].kind = TRI_TYPE_POINTER;
    args[i].dtype = TRI_DTYPE_F32;
    args[i].value.p = cuda ? (void*)(uintptr_t)(dev + (uint64_t)(4 * ELEMENTS * i)) : (void*)host[i];
  }
  args[3].kind = TRI_TYPE_SCALAR;
  args[3].dtype = TRI_DTYPE_I32;
  args[3].value.i = ELEMENTS;
  double first = 0, first_got = 0;
  for (int i = 0; i < n; ++i) {
    char name[32];
    tri_kernel* k;
    snprintf(name, sizeof name, "k%d", i);
    TRY(tri_module_kernel(mod, name, o, &k));
    if (i == 0) first_got = now_ms();
    TRY(tri_launch(k, 1, 1, 1, NULL, args, 4));
    if (cuda && sync()) return 1;
    if (i == 0) first = now_ms();
    tri_kernel_destroy(k);
  }
  const double t_end = now_ms();
  printf("{\"library\": \"%s\", \"target\": \"%s\", \"kernels\": %d, \"cuda_init_ms\": %.3f, "
         "\"main_to_first_ms\": %.3f, \"first_kernel_ms\": %.3f, \"all_kernels_ms\": %.3f, \"per_kernel_ms\": %.3f, "
         "\"package_bytes\": %ld, \"load_ms\": %.3f, \"first_get_ms\": %.3f, \"first_launch_ms\": %.3f}\n",
#ifdef TRI_RUNTIME_ONLY
         "libtri_rt",
#else
         "libtri",
#endif
         target, n, cuda_ms, first - t_main - cuda_ms, first - t_load, t_end - t_load, (t_end - t_load) / n, size, t_loaded - t_load,
         first_got - t_loaded, first - first_got);
  tri_compile_options_destroy(o);
  tri_module_destroy(mod);
  tri_context_destroy(ctx);
  free(bytes);
  return 0;
}
