/* tri_tune on the "cuda" target with the machine's driver (capi/test_tune_cuda: skipped where
 * there is no GPU) and with tests/target/cuda/fake_libcuda.c (capi/test_tune_cuda_fake, which runs
 * kernels named add_u32 on the host): the GPU timing path (CUDA events, the L2 flush, written
 * buffers saved and restored with device copies), pruning before compiling with the device's
 * limits, a result keyed by the GPU's name, and the chosen kernel handed over with the launch
 * variant its trials ran, so that its first launch compiles nothing. Only tri.h is used; device
 * memory comes from the driver directly (dlopen, as Tri itself loads it). */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tri/tri.h"

/* data[i] += k for i < n, the block carried once through a loop (so the loop carries BLOCK
 * values: at BLOCK 65536 and 1 warp, 2048 registers per thread, which no GPU has). */
static const char kAdd[] =
    "kernel @add_u32(%data: ptr<i32>, %n: i32, %k: i32) constexpr(BLOCK: i32 = 128) {\n"
    "  %pid = program_id[axis=0] : i32\n"
    "  %bs = const[value=BLOCK] : i32\n"
    "  %start = mul %pid, %bs : i32\n"
    "  %r = arange[start=0, end=BLOCK] : <BLOCK x i32>\n"
    "  %sv = splat %start : <BLOCK x i32>\n"
    "  %offs = add %sv, %r : <BLOCK x i32>\n"
    "  %nv = splat %n : <BLOCK x i32>\n"
    "  %mask = cmp[pred=slt] %offs, %nv : <BLOCK x i1>\n"
    "  %db = splat %data : <BLOCK x ptr<i32>>\n"
    "  %p = addptr %db, %offs : <BLOCK x ptr<i32>>\n"
    "  %x = load %p, mask=%mask : <BLOCK x i32>\n"
    "  %kv = splat %k : <BLOCK x i32>\n"
    "  %zero = const[value=0] : i32\n"
    "  %one = const[value=1] : i32\n"
    "  %y = for %zero, %one, %one, %x {\n"
    "  ^(%i: i32, %acc: <BLOCK x i32>):\n"
    "    %next = add %acc, %kv : <BLOCK x i32>\n"
    "    yield %next\n"
    "  } : <BLOCK x i32>\n"
    "  store %p, %y, mask=%mask\n"
    "  return\n"
    "}\n";

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_device_get_fn)(int*, int);
typedef int (*cu_retain_fn)(void**, int);
typedef int (*cu_set_fn)(void*);
typedef int (*cu_alloc_fn)(unsigned long long*, size_t);
typedef int (*cu_free_fn)(unsigned long long);
typedef int (*cu_htod_fn)(unsigned long long, const void*, size_t);
typedef int (*cu_dtoh_fn)(void*, unsigned long long, size_t);

static struct {
  cu_alloc_fn alloc;
  cu_free_fn free;
  cu_htod_fn htod;
  cu_dtoh_fn dtoh;
} cu;
static tri_context* g_context;

/* The driver Tri uses, with device 0's primary context current; 0 when there is none. */
static int open_driver(void) {
  uint32_t count = 0;
  if (tri_device_count(g_context, &count) != TRI_OK || count == 0) return 0;
  const char* path = getenv("TRI_LIBCUDA");
  void* h = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return 0;
  cu_init_fn init = (cu_init_fn)dlsym(h, "cuInit");
  cu_device_get_fn get = (cu_device_get_fn)dlsym(h, "cuDeviceGet");
  cu_retain_fn retain = (cu_retain_fn)dlsym(h, "cuDevicePrimaryCtxRetain");
  cu_set_fn set = (cu_set_fn)dlsym(h, "cuCtxSetCurrent");
  cu.alloc = (cu_alloc_fn)dlsym(h, "cuMemAlloc_v2");
  cu.free = (cu_free_fn)dlsym(h, "cuMemFree_v2");
  cu.htod = (cu_htod_fn)dlsym(h, "cuMemcpyHtoD_v2");
  cu.dtoh = (cu_dtoh_fn)dlsym(h, "cuMemcpyDtoH_v2");
  assert_true(init && get && retain && set && cu.alloc && cu.free && cu.htod && cu.dtoh);
  int dev = 0;
  void* ctx = NULL;
  assert_int_equal(init(0), 0);
  assert_int_equal(get(&dev, 0), 0);
  assert_int_equal(retain(&ctx, dev), 0);
  assert_int_equal(set(ctx), 0);
  return 1;
}

#define N 1000
static const int64_t kBlocks[] = {128, 65536, 256};
static const int32_t kWarps[] = {4, 1, 8};
static void grid_fn(void* user, uint32_t config, uint32_t* grid) {
  (void)user;
  grid[0] = (uint32_t)((N + kBlocks[config] - 1) / kBlocks[config]);
}

static int has(const tri_blob* b, const char* text) {
  char* s = strndup((const char*)tri_blob_data(b), tri_blob_size(b));
  int r = strstr(s, text) != NULL;
  free(s);
  return r;
}

static void test_tune_on_gpu(void** state) {
  (void)state;
  if (!open_driver()) {
    printf("skipped: no CUDA device\n");
    skip();
  }
  int32_t host[N], back[N];
  for (int i = 0; i < N; ++i) host[i] = 3 * i - 7;
  unsigned long long d = 0;
  assert_int_equal(cu.alloc(&d, sizeof host), 0);
  assert_int_equal(cu.htod(d, host, sizeof host), 0);

  tri_module* m = NULL;
  assert_int_equal(tri_module_create(g_context, kAdd, sizeof kAdd - 1, "add_u32.tri", &m), TRI_OK);
  tri_compile_options* o = NULL;
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(o, "cuda"), TRI_OK);
  tri_tune_space* s = NULL;
  assert_int_equal(tri_tune_space_create(&s), TRI_OK);
  const char* names[] = {"BLOCK"};
  for (int i = 0; i < 3; ++i)
    assert_int_equal(tri_tune_space_add_config(s, names, &kBlocks[i], 1, kWarps[i], 0, NULL), TRI_OK);
  assert_int_equal(tri_tune_space_set_repetitions(s, 5), TRI_OK);
  tri_arg args[3];
  memset(args, 0, sizeof args);
  args[0].kind = TRI_TYPE_POINTER;
  args[0].dtype = TRI_DTYPE_I32;
  args[0].value.p = (void*)(uintptr_t)d;
  args[0].extent = sizeof host;
  args[1].kind = args[2].kind = TRI_TYPE_SCALAR;
  args[1].dtype = args[2].dtype = TRI_DTYPE_I32;
  args[1].value.i = N;
  args[2].value.i = 5;

  tri_kernel* k = NULL;
  tri_blob* result = NULL;
  assert_int_equal(tri_tune(m, "add_u32", o, s, 1, 1, 1, NULL, args, 3, TRI_TUNE_RETUNE, NULL, grid_fn, NULL, &k, &result),
                   TRI_OK);
  /* Config 1 was pruned with the reason; 0 and 2 ran; the device is named in the result. */
  assert_true(has(result, "\"source\": \"benchmark\""));
  assert_true(has(result, "pruned before compiling: needs at least 2048 registers per thread"));
  assert_true(has(result, "\"status\": 7"));
  uint64_t pruned = 0, trials = 0;
  assert_int_equal(tri_tune_stat(g_context, TRI_TUNE_STAT_PRUNED, &pruned), TRI_OK);
  assert_int_equal(tri_tune_stat(g_context, TRI_TUNE_STAT_TRIALS, &trials), TRI_OK);
  assert_int_equal(pruned, 1);
  assert_int_equal(trials, 2);
  char name[256];
  size_t size = 0;
  assert_int_equal(tri_device_name(g_context, 0, name, sizeof name, &size), TRI_OK);
  assert_true(has(result, name));
  printf("%.*s\n", (int)tri_blob_size(result), (const char*)tri_blob_data(result));

  /* The buffer is as it was: every trial's writes were undone. */
  assert_int_equal(cu.dtoh(back, d, sizeof back), 0);
  assert_memory_equal(back, host, sizeof host);

  /* The chosen kernel holds the variant its trials ran: launching it makes no new one. */
  tri_blob* v = NULL;
  assert_int_equal(tri_kernel_variants(k, &v), TRI_OK);
  assert_true(has(v, "made by tri_tune"));
  size_t before = tri_blob_size(v);
  tri_blob_destroy(v);
  uint32_t grid[3] = {1, 1, 1};
  grid_fn(NULL, strstr((const char*)tri_blob_data(result), "\"best\": 2") ? 2 : 0, grid);
  assert_int_equal(tri_launch(k, grid[0], 1, 1, NULL, args, 3), TRI_OK);
  assert_int_equal(cu.dtoh(back, d, sizeof back), 0);
  for (int i = 0; i < N; ++i) assert_int_equal(back[i], host[i] + 5);
  assert_int_equal(tri_kernel_variants(k, &v), TRI_OK);
  assert_int_equal(tri_blob_size(v), before);
  tri_blob_destroy(v);

  tri_kernel_destroy(k);
  tri_blob_destroy(result);
  tri_tune_space_destroy(s);
  tri_compile_options_destroy(o);
  tri_module_destroy(m);
  cu.free(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_tune_on_gpu)};
  tri_context_options* o = NULL;
  if (tri_context_options_create(&o) != TRI_OK || tri_context_options_set_cache_dir(o, "") != TRI_OK ||
      tri_context_create(o, TRI_VERSION_NUMBER, &g_context) != TRI_OK)
    return 1;
  tri_context_options_destroy(o);
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  tri_context_destroy(g_context);
  return failed;
}
