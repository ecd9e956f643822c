/* Autotuning through the C API on the "cpu" target: a config that fails to compile is skipped,
 * written buffers are restored between trials, results persist across contexts through the
 * cache directory, export/import, and the frozen mode that never benchmarks. (The tie rule's
 * arithmetic is tested in tests/tune/test_tune.cpp, where the timings can be chosen.) */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tri/tri.h"

/* out[i] += 2 * x[i] for i < n: it reads what it writes, so a trial that saw an earlier trial's
 * output would give another answer. */
static const char kAcc[] =
    "kernel @acc(%x: ptr<f32>, %out: ptr<f32>, %n: i32) constexpr(BLOCK: i32 = 16) {\n"
    "  %pid = program_id[axis=0] : i32\n"
    "  %bs = const[value=BLOCK] : i32\n"
    "  %start = mul %pid, %bs : i32\n"
    "  %r = arange[start=0, end=BLOCK] : <BLOCK x i32>\n"
    "  %sv = splat %start : <BLOCK x i32>\n"
    "  %offs = add %sv, %r : <BLOCK x i32>\n"
    "  %nv = splat %n : <BLOCK x i32>\n"
    "  %mask = cmp[pred=slt] %offs, %nv : <BLOCK x i1>\n"
    "  %xb = splat %x : <BLOCK x ptr<f32>>\n"
    "  %xp = addptr %xb, %offs : <BLOCK x ptr<f32>>\n"
    "  %v = load %xp, mask=%mask : <BLOCK x f32>\n"
    "  %ob = splat %out : <BLOCK x ptr<f32>>\n"
    "  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>\n"
    "  %o = load %op, mask=%mask : <BLOCK x f32>\n"
    "  %two = const[value=2.0] : f32\n"
    "  %t = splat %two : <BLOCK x f32>\n"
    "  %w = mul %v, %t : <BLOCK x f32>\n"
    "  %s = add %o, %w : <BLOCK x f32>\n"
    "  store %op, %s, mask=%mask\n"
    "  return\n"
    "}\n";

#define N 200

static tri_arg ptr(void* p, size_t bytes) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.kind = TRI_TYPE_POINTER;
  a.dtype = TRI_DTYPE_F32;
  a.value.p = p;
  a.extent = bytes;
  return a;
}

static tri_arg i32(int64_t v) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.kind = TRI_TYPE_SCALAR;
  a.dtype = TRI_DTYPE_I32;
  a.value.i = v;
  return a;
}

/* The grid covers n with the config's block: BLOCK is config 0: 16, 1: 48, 2: 64, 3: 32. */
static const int64_t kBlocks[] = {16, 48, 64, 32};
static int64_t g_n = N;
static void grid_fn(void* user, uint32_t config, uint32_t* grid) {
  (void)user;
  grid[0] = (uint32_t)((g_n + kBlocks[config] - 1) / kBlocks[config]);
}

struct progress_log {
  int calls;
  tri_result status[8];
};
static void progress_fn(void* user, uint32_t config, uint32_t count, tri_result status, double median_ns) {
  struct progress_log* p = (struct progress_log*)user;
  assert_int_equal(count, 4);
  assert_int_equal(config, (uint32_t)p->calls);
  assert_true(status == TRI_OK ? median_ns > 0 : median_ns == 0);
  p->status[p->calls++] = status;
}

static tri_tune_space* make_space(void) {
  tri_tune_space* s = NULL;
  assert_int_equal(tri_tune_space_create(&s), TRI_OK);
  const char* names[] = {"BLOCK"};
  for (int i = 0; i < 4; ++i) {
    uint32_t index = 99;
    assert_int_equal(tri_tune_space_add_config(s, names, &kBlocks[i], 1, 4, 1, &index), TRI_OK);
    assert_int_equal(index, (uint32_t)i);
  }
  uint32_t key = 2;
  assert_int_equal(tri_tune_space_set_key(s, &key, 1, 1), TRI_OK);
  assert_int_equal(tri_tune_space_set_repetitions(s, 3), TRI_OK);
  return s;
}

static tri_context* make_context(const char* cache_dir) {
  tri_context_options* o = NULL;
  tri_context* c = NULL;
  assert_int_equal(tri_context_options_create(&o), TRI_OK);
  assert_int_equal(tri_context_options_set_cache_dir(o, cache_dir), TRI_OK);
  assert_int_equal(tri_context_create(o, TRI_VERSION_NUMBER, &c), TRI_OK);
  tri_context_options_destroy(o);
  return c;
}

static uint64_t stat(tri_context* c, int32_t which) {
  uint64_t v = 0;
  assert_int_equal(tri_tune_stat(c, which, &v), TRI_OK);
  return v;
}

/* The JSON's "best" and "source" fields. */
static int best_of(const tri_blob* b) {
  char* s = strndup((const char*)tri_blob_data(b), tri_blob_size(b));
  const char* p = strstr(s, "\"best\": ");
  assert_non_null(p);
  int v = atoi(p + 8);
  free(s);
  return v;
}
static int has(const tri_blob* b, const char* text) {
  char* s = strndup((const char*)tri_blob_data(b), tri_blob_size(b));
  int r = strstr(s, text) != NULL;
  free(s);
  return r;
}

static float g_x[N], g_out[N];
static tri_arg g_args[3];
static void reset_data(void) {
  for (int i = 0; i < N; ++i) {
    g_x[i] = (float)i;
    g_out[i] = 1000.0f + (float)i;
  }
  g_args[0] = ptr(g_x, sizeof g_x);
  g_args[1] = ptr(g_out, sizeof g_out);
  g_args[2] = i32(g_n);
}

/* Tunes @acc in `c` with the 4-config space: returns the kernel and the result. */
static tri_result tune(tri_context* c, uint32_t flags, struct progress_log* log, tri_kernel** k, tri_blob** result) {
  tri_module* m = NULL;
  assert_int_equal(tri_module_create(c, kAcc, sizeof kAcc - 1, "acc.tri", &m), TRI_OK);
  tri_tune_space* s = make_space();
  tri_result rc = tri_tune(m, "acc", NULL, s, 1, 1, 1, NULL, g_args, 3, flags, log ? progress_fn : NULL, grid_fn,
                           log, k, result);
  tri_tune_space_destroy(s);
  tri_module_destroy(m);
  return rc;
}

static char g_dir[512];
static void fresh_dir(const char* tag) {
  const char* build = getenv("TRI_BUILD_DIR");
  snprintf(g_dir, sizeof g_dir, "%s/test-tune-%s-XXXXXX", build ? build : "/tmp", tag);
  assert_non_null(mkdtemp(g_dir));
}

static void test_tune_skips_failure_and_restores(void** state) {
  (void)state;
  fresh_dir("restore");
  tri_context* c = make_context(g_dir);
  g_n = N;
  reset_data();
  struct progress_log log = {0};
  tri_kernel* k = NULL;
  tri_blob* result = NULL;
  assert_int_equal(tune(c, 0, &log, &k, &result), TRI_OK);
  /* BLOCK=48 is not a power of two: skipped with its error, the others measured. */
  assert_int_equal(log.calls, 4);
  assert_int_equal(log.status[0], TRI_OK);
  assert_int_equal(log.status[1], TRI_ERROR_SPECIALIZE);
  assert_int_equal(log.status[2], TRI_OK);
  assert_int_equal(log.status[3], TRI_OK);
  assert_int_equal(stat(c, TRI_TUNE_STAT_TRIALS), 3);
  int best = best_of(result);
  assert_true(best == 0 || best == 2 || best == 3);
  assert_true(has(result, "\"source\": \"benchmark\""));
  assert_true(has(result, "\"status\": 9"));
  assert_true(has(result, "power of two"));
  assert_true(has(result, "\"key_values\": {\"n\": 256}")); /* 200 bucketed */
  /* Every trial launched 4 times (warm-up + 3) on top of the buffers as they were: the caller's
   * buffers are as they were before the call. */
  for (int i = 0; i < N; ++i) assert_true(g_out[i] == 1000.0f + (float)i);
  /* The chosen kernel, launched once, gives one launch's answer. */
  uint32_t grid[3] = {1, 1, 1};
  grid_fn(NULL, (uint32_t)best, grid);
  assert_int_equal(tri_launch(k, grid[0], 1, 1, NULL, g_args, 3), TRI_OK);
  for (int i = 0; i < N; ++i) assert_true(g_out[i] == 1000.0f + 3.0f * (float)i);
  /* The result as a picture (tri_tune_plot): SVG text naming the winner; the blob outlives the
   * context, since it belongs to none. */
  tri_blob* svg = NULL;
  assert_int_equal(tri_tune_plot(tri_blob_data(result), tri_blob_size(result), NULL, &svg), TRI_OK);
  tri_blob_destroy(result);
  tri_kernel_destroy(k);
  tri_context_destroy(c);
  char winner[64];
  snprintf(winner, sizeof winner, ">winner: config %d (BLOCK=", best);
  assert_true(tri_blob_size(svg) > 100 && memcmp(tri_blob_data(svg), "<svg xmlns=", 11) == 0);
  assert_true(has(svg, "<title>@acc on cpu</title>") && has(svg, winner) && has(svg, ">failed</text>"));
  assert_true(has(svg, "</svg>\n"));
  tri_blob_destroy(svg);
  /* What is not a tuning result is refused; so are NULLs. */
  static const char kNot[] = "{\"schema\": 1, \"configs\": []}";
  svg = NULL;
  assert_int_equal(tri_tune_plot(kNot, sizeof kNot - 1, "t", &svg), TRI_ERROR_CORRUPT_BINARY);
  assert_null(svg);
  char msg[256];
  tri_last_error_message(msg, sizeof msg);
  assert_non_null(strstr(msg, "tri_tune_plot: not a tuning result"));
  assert_int_equal(tri_tune_plot(NULL, 0, NULL, &svg), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_tune_plot(kNot, sizeof kNot - 1, NULL, NULL), TRI_ERROR_INVALID_ARGUMENT);
}

/* tri_tune_space_set_progress: every config's compile (in any order, `done` counting up), then
 * every config's benchmark in order, on the calling thread; the failing config says so at both. */
struct stage_log {
  int calls;
  int32_t stage[8];
  uint32_t config[8], done[8];
  tri_result status[8];
  pthread_t thread;
};
static void stage_fn(void* user, int32_t stage, uint32_t config, uint32_t done, uint32_t count, tri_result status,
                     double median_ns) {
  struct stage_log* p = (struct stage_log*)user;
  assert_int_equal(count, 4);
  assert_true(pthread_equal(pthread_self(), p->thread));
  assert_true(stage == TRI_TUNE_STAGE_BENCHMARK && status == TRI_OK ? median_ns > 0 : median_ns == 0);
  assert_true(p->calls < 8);
  p->stage[p->calls] = stage;
  p->config[p->calls] = config;
  p->done[p->calls] = done;
  p->status[p->calls++] = status;
}

static void test_tune_reports_compiles_and_benchmarks(void** state) {
  (void)state;
  tri_context* c = make_context("");
  g_n = N;
  reset_data();
  tri_module* m = NULL;
  assert_int_equal(tri_module_create(c, kAcc, sizeof kAcc - 1, "acc.tri", &m), TRI_OK);
  tri_tune_space* s = make_space();
  struct stage_log log = {0};
  log.thread = pthread_self();
  assert_int_equal(tri_tune_space_set_progress(s, stage_fn, &log), TRI_OK);
  tri_kernel* k = NULL;
  assert_int_equal(tri_tune(m, "acc", NULL, s, 1, 1, 1, NULL, g_args, 3, 0, NULL, grid_fn, NULL, &k, NULL), TRI_OK);
  assert_int_equal(log.calls, 8);
  unsigned seen = 0;
  for (int i = 0; i < 4; ++i) {
    assert_int_equal(log.stage[i], TRI_TUNE_STAGE_COMPILE);
    assert_int_equal(log.done[i], (uint32_t)i + 1);
    seen |= 1u << log.config[i];
    assert_int_equal(log.status[i], log.config[i] == 1 ? TRI_ERROR_SPECIALIZE : TRI_OK);
    assert_int_equal(log.stage[4 + i], TRI_TUNE_STAGE_BENCHMARK);
    assert_int_equal(log.config[4 + i], (uint32_t)i);
    assert_int_equal(log.done[4 + i], (uint32_t)i + 1);
  }
  assert_int_equal(seen, 15u);
  assert_int_equal(log.status[5], TRI_ERROR_SPECIALIZE);
  assert_int_equal(tri_tune_space_set_progress(NULL, stage_fn, NULL), TRI_ERROR_INVALID_ARGUMENT);
  tri_kernel_destroy(k);
  tri_tune_space_destroy(s);
  tri_module_destroy(m);
  tri_context_destroy(c);
}

static void test_tune_persists(void** state) {
  (void)state;
  fresh_dir("persist");
  g_n = N;
  reset_data();
  tri_kernel* k = NULL;
  tri_blob* r1 = NULL;
  tri_blob* r2 = NULL;
  tri_context* c = make_context(g_dir);
  assert_int_equal(tune(c, 0, NULL, &k, &r1), TRI_OK);
  assert_int_equal(stat(c, TRI_TUNE_STAT_TRIALS), 3);
  tri_kernel_destroy(k);
  tri_context_destroy(c);
  /* A new context on the same directory: the stored result, no benchmark. */
  c = make_context(g_dir);
  assert_int_equal(tune(c, 0, NULL, &k, &r2), TRI_OK);
  assert_int_equal(stat(c, TRI_TUNE_STAT_TRIALS), 0);
  assert_int_equal(stat(c, TRI_TUNE_STAT_STORED), 1);
  assert_int_equal(best_of(r2), best_of(r1));
  assert_true(has(r2, "\"source\": \"stored\""));
  tri_kernel_destroy(k);
  tri_blob_destroy(r2);
  /* 250 buckets to 256 as 200 did: the same result. 300 is another key: benchmarked. */
  g_n = 250;
  reset_data();
  assert_int_equal(tune(c, 0, NULL, &k, &r2), TRI_OK);
  assert_int_equal(stat(c, TRI_TUNE_STAT_TRIALS), 0);
  assert_int_equal(stat(c, TRI_TUNE_STAT_STORED), 2);
  tri_kernel_destroy(k);
  tri_blob_destroy(r2);
  g_n = 300;
  g_args[2] = i32(300);
  float big_x[300], big_out[300];
  for (int i = 0; i < 300; ++i) big_x[i] = big_out[i] = 1.0f;
  g_args[0] = ptr(big_x, sizeof big_x);
  g_args[1] = ptr(big_out, sizeof big_out);
  assert_int_equal(tune(c, 0, NULL, &k, &r2), TRI_OK);
  assert_int_equal(stat(c, TRI_TUNE_STAT_TRIALS), 3);
  assert_true(has(r2, "\"key_values\": {\"n\": 512}"));
  for (int i = 0; i < 300; ++i) assert_true(big_out[i] == 1.0f);
  tri_kernel_destroy(k);
  tri_blob_destroy(r2);
  /* TRI_TUNE_RETUNE benchmarks although a result is stored. */
  assert_int_equal(tune(c, TRI_TUNE_RETUNE, NULL, &k, &r2), TRI_OK);
  assert_int_equal(stat(c, TRI_TUNE_STAT_TRIALS), 6);
  tri_kernel_destroy(k);
  tri_blob_destroy(r2);
  tri_blob_destroy(r1);
  tri_context_destroy(c);
  g_n = N;
}

static void test_tune_export_import_frozen(void** state) {
  (void)state;
  fresh_dir("export");
  char file[600];
  snprintf(file, sizeof file, "%s/results.json", g_dir);
  g_n = N;
  reset_data();
  tri_kernel* k = NULL;
  tri_blob* r1 = NULL;
  tri_blob* r2 = NULL;
  tri_context* c = make_context(g_dir);
  assert_int_equal(tune(c, 0, NULL, &k, &r1), TRI_OK);
  tri_kernel_destroy(k);
  uint32_t count = 0;
  assert_int_equal(tri_tune_export(c, file, &count), TRI_OK);
  assert_int_equal(count, 1);
  tri_context_destroy(c);

  /* A context with no disk cache: nothing stored, so frozen mode falls back to config 0. */
  c = make_context("");
  assert_int_equal(tune(c, TRI_TUNE_FROZEN, NULL, &k, &r2), TRI_OK);
  assert_int_equal(stat(c, TRI_TUNE_STAT_DEFAULTS), 1);
  assert_int_equal(best_of(r2), 0);
  assert_true(has(r2, "\"source\": \"default\""));
  tri_kernel_destroy(k);
  tri_blob_destroy(r2);
  /* After importing, the frozen call uses the shipped result. */
  assert_int_equal(tri_tune_import(c, file, &count), TRI_OK);
  assert_int_equal(count, 1);
  assert_int_equal(tune(c, TRI_TUNE_FROZEN, NULL, &k, &r2), TRI_OK);
  assert_int_equal(best_of(r2), best_of(r1));
  assert_true(has(r2, "\"source\": \"imported\""));
  assert_int_equal(stat(c, TRI_TUNE_STAT_STORED), 1);
  tri_kernel_destroy(k);
  tri_blob_destroy(r2);
  /* Another key, frozen: config 0 again, and no benchmark was ever run in this context. */
  g_n = 5000;
  g_args[2] = i32(100);  /* the key is n's value; the buffers hold N elements */
  assert_int_equal(tune(c, TRI_TUNE_FROZEN, NULL, &k, &r2), TRI_OK);
  assert_int_equal(best_of(r2), 0);
  assert_int_equal(stat(c, TRI_TUNE_STAT_DEFAULTS), 2);
  assert_int_equal(stat(c, TRI_TUNE_STAT_TRIALS), 0);
  tri_kernel_destroy(k);
  tri_blob_destroy(r2);
  g_n = N;
  /* Export of this context: the imported result. */
  char file2[600];
  snprintf(file2, sizeof file2, "%s/again.json", g_dir);
  assert_int_equal(tri_tune_export(c, file2, &count), TRI_OK);
  assert_int_equal(count, 1);
  /* Damaged files import nothing. */
  FILE* f = fopen(file2, "wb");
  assert_non_null(f);
  fputs("{\"tri_tune\": 1, \"results\": [{\"schema\": 1}]}", f);
  fclose(f);
  assert_int_equal(tri_tune_import(c, file2, &count), TRI_ERROR_CORRUPT_BINARY);
  assert_int_equal(tri_tune_import(c, "/nonexistent/tune.json", &count), TRI_ERROR_IO);
  tri_blob_destroy(r1);
  tri_context_destroy(c);
}

/* A kernel that may run only on fresh input: it asserts that *flag is 0 and then sets it. Every
 * launch of the tuning (warm-up and repetitions of every config) must see *flag restored to 0,
 * or the launch fails and, with no config left, so does tri_tune. */
static const char kOnce[] =
    "kernel @once(%flag: ptr<i32>) constexpr(UNUSED: i32 = 1) {\n"
    "  %v = load %flag : i32\n"
    "  %zero = const[value=0] : i32\n"
    "  %fresh = cmp[pred=eq] %v, %zero : i1\n"
    "  assert[msg=\"flag already set: a trial saw another's output\"] %fresh\n"
    "  %one = const[value=1] : i32\n"
    "  store %flag, %one\n"
    "  return\n"
    "}\n";

static void test_tune_restores_before_every_launch(void** state) {
  (void)state;
  tri_context* c = make_context("");
  tri_module* m = NULL;
  assert_int_equal(tri_module_create(c, kOnce, sizeof kOnce - 1, "once.tri", &m), TRI_OK);
  tri_tune_space* s = NULL;
  assert_int_equal(tri_tune_space_create(&s), TRI_OK);
  const char* names[] = {"UNUSED"};
  int64_t v1 = 1, v2 = 2;
  assert_int_equal(tri_tune_space_add_config(s, names, &v1, 1, 4, 1, NULL), TRI_OK);
  assert_int_equal(tri_tune_space_add_config(s, names, &v2, 1, 4, 1, NULL), TRI_OK);
  assert_int_equal(tri_tune_space_set_repetitions(s, 5), TRI_OK);
  int32_t flag = 0;
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.kind = TRI_TYPE_POINTER;
  a.dtype = TRI_DTYPE_I32;
  a.value.p = &flag;
  a.extent = sizeof flag;
  tri_kernel* k = NULL;
  tri_blob* r = NULL;
  assert_int_equal(tri_tune(m, "once", NULL, s, 1, 1, 1, NULL, &a, 1, 0, NULL, NULL, NULL, &k, &r), TRI_OK);
  assert_false(has(r, "flag already set"));
  assert_int_equal(flag, 0);
  assert_int_equal(tri_launch(k, 1, 1, 1, NULL, &a, 1), TRI_OK);
  assert_int_equal(flag, 1);
  /* The kernel itself does fail on stale input: the check above can fail. */
  assert_int_equal(tri_launch(k, 1, 1, 1, NULL, &a, 1), TRI_ERROR_RUNTIME);
  tri_blob_destroy(r);
  tri_kernel_destroy(k);
  tri_tune_space_destroy(s);
  tri_module_destroy(m);
  tri_context_destroy(c);
}

/* Product spaces: the order (first name slowest, stages fastest), the filter, the getters, and
 * the errors, which append nothing. */
static void test_tune_product_space(void** state) {
  (void)state;
  tri_tune_space* s = NULL;
  assert_int_equal(tri_tune_space_create(&s), TRI_OK);
  const char* names[] = {"BM", "BN"};
  const int64_t bm[] = {32, 64, 128}, bn[] = {16, 256};
  const int64_t* values[] = {bm, bn};
  const uint32_t counts[] = {3, 2};
  const int32_t warps[] = {4, 8}, stages[] = {2, 3};
  uint32_t added = 0, n = 0;
  assert_int_equal(tri_tune_space_add_product(s, names, values, counts, 2, warps, 2, stages, 2, NULL, &added), TRI_OK);
  assert_int_equal(added, 24);
  assert_int_equal(tri_tune_space_count(s, &n), TRI_OK);
  assert_int_equal(n, 24);
  int64_t v = 0;
  /* config 5 = BM 32 (index 0), BN 256 (index 1), warps 4 (0), stages 3 (1): 0*8 + 1*4 + 0*2 + 1 */
  assert_int_equal(tri_tune_space_value(s, 5, "BM", &v), TRI_OK);
  assert_int_equal(v, 32);
  assert_int_equal(tri_tune_space_value(s, 5, "BN", &v), TRI_OK);
  assert_int_equal(v, 256);
  assert_int_equal(tri_tune_space_value(s, 5, "warps", &v), TRI_OK);
  assert_int_equal(v, 4);
  assert_int_equal(tri_tune_space_value(s, 5, "stages", &v), TRI_OK);
  assert_int_equal(v, 3);
  assert_int_equal(tri_tune_space_value(s, 23, "BM", &v), TRI_OK);
  assert_int_equal(v, 128);
  assert_int_equal(tri_tune_space_value(s, 24, "BM", &v), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_tune_space_value(s, 0, "BK", &v), TRI_ERROR_NOT_FOUND);

  /* A filter keeps what is nonzero: BM * BN <= 8192 keeps 32x16, 32x256, 64x16, 128x16, with
   * warps >= BM / 16 dropping 128x16 at 4 warps (128 / 16 = 8). Defaults: warps 4, stages 0. */
  tri_tune_space* f = NULL;
  assert_int_equal(tri_tune_space_create(&f), TRI_OK);
  assert_int_equal(tri_tune_space_add_product(f, names, values, counts, 2, warps, 2, NULL, 0,
                                              "BM * BN <= 8192 && warps >= BM / 16", &added),
                   TRI_OK);
  assert_int_equal(added, 7);  /* 32x16, 32x256, 64x16 at both warps; 128x16 at 8 only */
  assert_int_equal(tri_tune_space_value(f, 6, "BM", &v), TRI_OK);
  assert_int_equal(v, 128);
  assert_int_equal(tri_tune_space_value(f, 6, "warps", &v), TRI_OK);
  assert_int_equal(v, 8);
  assert_int_equal(tri_tune_space_value(f, 6, "stages", &v), TRI_OK);
  assert_int_equal(v, 0);
  assert_int_equal(tri_tune_space_add_product(f, names, values, counts, 2, NULL, 0, NULL, 0,
                                              "!(BM > 32) || (BN - 16) * 2 % 7 == 1 - 1", &added),
                   TRI_OK);
  assert_int_equal(added, 4);  /* BM 32 with both BN; BM 64 and 128 with BN 16 ((256 - 16) * 2 % 7 is 4) */
  /* Errors append nothing and say where. */
  assert_int_equal(tri_tune_space_count(f, &n), TRI_OK);
  assert_int_equal(tri_tune_space_add_product(f, names, values, counts, 2, NULL, 0, NULL, 0, "BM * BX > 1", &added),
                   TRI_ERROR_INVALID_ARGUMENT);
  char msg[512];
  tri_last_error_message(msg, sizeof msg);
  assert_non_null(strstr(msg, "no value is named 'BX'"));
  assert_int_equal(tri_tune_space_add_product(f, names, values, counts, 2, NULL, 0, NULL, 0, "BM < (BN", &added),
                   TRI_ERROR_INVALID_ARGUMENT);
  tri_last_error_message(msg, sizeof msg);
  assert_non_null(strstr(msg, "column 9: expected ')'"));
  assert_int_equal(tri_tune_space_add_product(f, names, values, counts, 2, NULL, 0, NULL, 0, "BM / (BN - 16)", &added),
                   TRI_ERROR_INVALID_ARGUMENT);
  const int32_t bad_warps[] = {3};
  assert_int_equal(tri_tune_space_add_product(f, names, values, counts, 2, bad_warps, 1, NULL, 0, NULL, &added),
                   TRI_ERROR_INVALID_ARGUMENT);
  int64_t many[64];
  for (int i = 0; i < 64; ++i) many[i] = i + 1;
  const int64_t* mv[] = {many, many, many};
  const uint32_t mc[] = {64, 64, 2};
  const char* mn[] = {"A", "B", "C"};
  assert_int_equal(tri_tune_space_add_product(f, mn, mv, mc, 3, NULL, 0, NULL, 0, NULL, &added),
                   TRI_ERROR_LIMIT_EXCEEDED);
  uint32_t n2 = 0;
  assert_int_equal(tri_tune_space_count(f, &n2), TRI_OK);
  assert_int_equal(n2, n);
  tri_tune_space_destroy(f);
  tri_tune_space_destroy(s);
}

/* A pinned result made on another device: reported (log and counter), not used by default
 * (tuned here instead), used with TRI_TUNE_USE_OTHER_DEVICE, and not used in frozen mode
 * without it (config 0). The other device's file is this machine's export with its device and
 * key changed, as another machine would have written it. */
struct log_capture {
  int warnings;
  char last[16384];
};
static void capture_log(void* user, int32_t level, const char* message) {
  struct log_capture* l = (struct log_capture*)user;
  if (level == TRI_LOG_WARNING && strstr(message, "made on")) {
    l->warnings++;
    snprintf(l->last, sizeof l->last, "%s", message);
  }
}

static tri_context* make_logging_context(struct log_capture* lc) {
  tri_context_options* o = NULL;
  tri_context* c = NULL;
  assert_int_equal(tri_context_options_create(&o), TRI_OK);
  assert_int_equal(tri_context_options_set_cache_dir(o, ""), TRI_OK);
  assert_int_equal(tri_context_options_set_log(o, capture_log, lc, TRI_LOG_WARNING), TRI_OK);
  assert_int_equal(tri_context_create(o, TRI_VERSION_NUMBER, &c), TRI_OK);
  tri_context_options_destroy(o);
  return c;
}

static void replace_all(char* s, const char* from, const char* to) {
  size_t lf = strlen(from), lt = strlen(to);
  assert_int_equal(lf, lt);  /* in place */
  for (char* p = strstr(s, from); p; p = strstr(p + lt, from)) memcpy(p, to, lt);
}

static void test_tune_other_device(void** state) {
  (void)state;
  fresh_dir("other");
  char file[600], other[600];
  snprintf(file, sizeof file, "%s/here.json", g_dir);
  snprintf(other, sizeof other, "%s/other.json", g_dir);
  g_n = N;
  reset_data();
  tri_kernel* k = NULL;
  tri_blob* r = NULL;
  tri_context* c = make_context("");
  assert_int_equal(tune(c, 0, NULL, &k, &r), TRI_OK);
  tri_kernel_destroy(k);
  char* json = strndup((const char*)tri_blob_data(r), tri_blob_size(r));
  tri_blob_destroy(r);
  uint32_t count = 0;
  assert_int_equal(tri_tune_export(c, file, &count), TRI_OK);
  assert_int_equal(count, 1);
  tri_context_destroy(c);
  /* Another machine: its device text and so its key differ; the portable key is the same. */
  const char* kp = strstr(json, "\"key\": \"");
  const char* dp = strstr(json, "\"device\": \"");
  assert_non_null(kp);
  assert_non_null(dp);
  char key[33], device[9];
  memcpy(key, kp + 8, 32);
  key[32] = 0;
  memcpy(device, dp + 11, 8);
  device[8] = 0;
  free(json);
  FILE* f = fopen(file, "rb");
  assert_non_null(f);
  static char text[1 << 16];
  size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[len] = 0;
  char other_key[33];
  for (int i = 0; i < 32; ++i) other_key[i] = key[i] == '0' ? '1' : '0';
  other_key[32] = 0;
  replace_all(text, key, other_key);
  replace_all(text, device, "OTHERGPU");
  f = fopen(other, "wb");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);

  struct log_capture lc = {0, {0}};
  c = make_logging_context(&lc);
  assert_int_equal(tri_tune_import(c, other, &count), TRI_OK);
  assert_int_equal(count, 1);
  /* Default: reported, then tuned here. */
  assert_int_equal(tune(c, 0, NULL, &k, &r), TRI_OK);
  assert_int_equal(lc.warnings, 1);
  assert_non_null(strstr(lc.last, "OTHERGPU"));
  assert_non_null(strstr(lc.last, "tuning here instead"));
  assert_true(has(r, "\"source\": \"benchmark\""));
  assert_int_equal(stat(c, TRI_TUNE_STAT_OTHER_DEVICE), 1);
  assert_int_equal(stat(c, TRI_TUNE_STAT_TRIALS), 3);  /* configs 0, 2, 3 (1 does not compile) */
  tri_kernel_destroy(k);
  tri_blob_destroy(r);
  tri_context_destroy(c);

  /* With the flag: used, nothing benchmarked. */
  c = make_logging_context(&lc);
  assert_int_equal(tri_tune_import(c, other, &count), TRI_OK);
  assert_int_equal(tune(c, TRI_TUNE_USE_OTHER_DEVICE, NULL, &k, &r), TRI_OK);
  assert_int_equal(lc.warnings, 2);
  assert_non_null(strstr(lc.last, "using it"));
  assert_true(has(r, "\"source\": \"other device\""));
  assert_int_equal(stat(c, TRI_TUNE_STAT_TRIALS), 0);
  tri_kernel_destroy(k);
  tri_blob_destroy(r);
  /* Frozen without the flag: reported, config 0. */
  assert_int_equal(tune(c, TRI_TUNE_FROZEN, NULL, &k, &r), TRI_OK);
  assert_int_equal(lc.warnings, 3);
  assert_non_null(strstr(lc.last, "not used (frozen"));
  assert_true(has(r, "\"source\": \"default\""));
  assert_int_equal(best_of(r), 0);
  assert_int_equal(stat(c, TRI_TUNE_STAT_TRIALS), 0);
  tri_kernel_destroy(k);
  tri_blob_destroy(r);
  tri_context_destroy(c);
}

static void test_tune_errors(void** state) {
  (void)state;
  tri_context* c = make_context("");
  tri_module* m = NULL;
  assert_int_equal(tri_module_create(c, kAcc, sizeof kAcc - 1, "acc.tri", &m), TRI_OK);
  tri_tune_space* s = NULL;
  tri_kernel* k = NULL;
  assert_int_equal(tri_tune_space_create(&s), TRI_OK);
  g_n = N;
  reset_data();
  assert_int_equal(tri_tune(m, "acc", NULL, s, 1, 1, 1, NULL, g_args, 3, 0, NULL, NULL, NULL, &k, NULL),
                   TRI_ERROR_INVALID_ARGUMENT); /* no config */
  const char* names[] = {"BLOCK"};
  int64_t bad = 24;
  assert_int_equal(tri_tune_space_add_config(s, names, &bad, 1, 3, 1, NULL), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_tune_space_add_config(s, names, &bad, 1, 4, 9, NULL), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_tune_space_set_repetitions(s, 0), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_tune_space_add_config(s, names, &bad, 1, 4, 1, NULL), TRI_OK);
  /* The only config cannot compile: the call fails with its error. */
  assert_int_equal(tri_tune(m, "acc", NULL, s, 1, 1, 1, NULL, g_args, 3, 0, NULL, NULL, NULL, &k, NULL),
                   TRI_ERROR_SPECIALIZE);
  int64_t good = 64;
  assert_int_equal(tri_tune_space_add_config(s, names, &good, 1, 4, 1, NULL), TRI_OK);
  assert_int_equal(tri_tune(m, "nope", NULL, s, 4, 1, 1, NULL, g_args, 3, 0, NULL, NULL, NULL, &k, NULL),
                   TRI_ERROR_NOT_FOUND);
  assert_int_equal(tri_tune(m, "acc", NULL, s, 4, 1, 1, NULL, g_args, 2, 0, NULL, NULL, NULL, &k, NULL),
                   TRI_ERROR_LAUNCH_ARGS);
  /* A key on a pointer argument. */
  uint32_t key = 0;
  assert_int_equal(tri_tune_space_set_key(s, &key, 1, 0), TRI_OK);
  assert_int_equal(tri_tune(m, "acc", NULL, s, 4, 1, 1, NULL, g_args, 3, 0, NULL, NULL, NULL, &k, NULL),
                   TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_tune_space_set_key(s, NULL, 0, 0), TRI_OK);
  /* %out is written: without its extent it cannot be restored. %x is only read: no extent needed. */
  tri_arg args[3] = {g_args[0], g_args[1], g_args[2]};
  args[0].extent = 0;
  args[1].extent = 0;
  assert_int_equal(tri_tune(m, "acc", NULL, s, 4, 1, 1, NULL, args, 3, 0, NULL, NULL, NULL, &k, NULL),
                   TRI_ERROR_INVALID_ARGUMENT);
  args[1].extent = sizeof g_out;
  assert_int_equal(tri_tune(m, "acc", NULL, s, 4, 1, 1, NULL, args, 3, 0, NULL, NULL, NULL, &k, NULL), TRI_OK);
  tri_kernel_destroy(k);
  uint64_t v;
  assert_int_equal(tri_tune_stat(c, 99, &v), TRI_ERROR_INVALID_ARGUMENT);
  tri_tune_space_destroy(s);
  tri_tune_space_destroy(NULL);
  tri_module_destroy(m);
  tri_context_destroy(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tune_skips_failure_and_restores),
      cmocka_unit_test(test_tune_reports_compiles_and_benchmarks),
      cmocka_unit_test(test_tune_persists),
      cmocka_unit_test(test_tune_export_import_frozen),
      cmocka_unit_test(test_tune_restores_before_every_launch),
      cmocka_unit_test(test_tune_errors),
      cmocka_unit_test(test_tune_product_space),
      cmocka_unit_test(test_tune_other_device),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
