/* Launch-time specialization on the CPU target (the mechanism the "cuda" target uses by
 * default): each launch's argument classes pick a variant, compiled once; each new variant is
 * logged with the argument that caused it and listed by tri_kernel_variants; a parameter opted
 * out never selects one; the variant budget is kept; every launch computes the right result. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tri/tri.h"

static const char kScale[] =
    "kernel @scale(%x: ptr<f32>, %out: ptr<f32>, %n: i32) constexpr(BLOCK: i32 = 64) {\n"
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
    "  %w = add %v, %v : <BLOCK x f32>\n"
    "  %ob = splat %out : <BLOCK x ptr<f32>>\n"
    "  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>\n"
    "  store %op, %w, mask=%mask\n"
    "  return\n"
    "}\n";

static char g_log[8192];

static void on_log(void* user, int32_t level, const char* message) {
  (void)user;
  (void)level;
  if (strstr(message, "variant")) {
    strncat(g_log, message, sizeof g_log - strlen(g_log) - 2);
    strcat(g_log, "\n");
  }
}

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

static tri_context* make_context(void) {
  tri_context_options* co = NULL;
  tri_context* ctx = NULL;
  assert_int_equal(tri_context_options_create(&co), TRI_OK);
  assert_int_equal(tri_context_options_set_log(co, on_log, NULL, TRI_LOG_INFO), TRI_OK);
  assert_int_equal(tri_context_create(co, TRI_VERSION_NUMBER, &ctx), TRI_OK);
  tri_context_options_destroy(co);
  return ctx;
}

/* Launches scale over x + xoff (n elements) into out + ooff and checks every element. */
static void launch_and_check(tri_kernel* k, float* x, size_t xoff, float* out, size_t ooff, int n) {
  for (int i = 0; i < 300; ++i) out[i] = -1.0f;
  tri_arg args[3] = {ptr(x + xoff, (256) * sizeof(float)), ptr(out + ooff, 256 * sizeof(float)), i32(n)};
  assert_int_equal(tri_launch(k, (uint32_t)((n + 63) / 64), 1, 1, NULL, args, 3), TRI_OK);
  for (int i = 0; i < 256; ++i) assert_true(out[ooff + i] == (i < n ? 2.0f * x[xoff + i] : -1.0f));
}

static char* variants(tri_kernel* k) {
  tri_blob* b = NULL;
  assert_int_equal(tri_kernel_variants(k, &b), TRI_OK);
  char* s = calloc(1, tri_blob_size(b) + 1);
  memcpy(s, tri_blob_data(b), tri_blob_size(b));
  tri_blob_destroy(b);
  return s;
}

static int count(const char* s, const char* what) {
  int n = 0;
  for (const char* p = strstr(s, what); p; p = strstr(p + 1, what)) ++n;
  return n;
}

static void test_variants_cpu(void** state) {
  (void)state;
  g_log[0] = 0;
  tri_context* ctx = make_context();
  tri_module* m = NULL;
  tri_compile_options* o = NULL;
  tri_kernel* k = NULL;
  assert_int_equal(tri_module_create(ctx, kScale, sizeof kScale - 1, "scale.tri", &m), TRI_OK);
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(o, "cpu"), TRI_OK);
  /* Off by default on the CPU: no variant however the arguments look. */
  assert_int_equal(tri_kernel_compile(m, "scale", o, &k), TRI_OK);
  /* 64-byte aligned views of two malloc'd buffers. */
  char* xmem = malloc(300 * sizeof(float) + 64);
  char* omem = malloc(300 * sizeof(float) + 64);
  float* x = (float*)(xmem + (64 - (uintptr_t)xmem % 64));
  float* out = (float*)(omem + (64 - (uintptr_t)omem % 64));
  for (int i = 0; i < 300; ++i) x[i] = (float)i * 0.25f;
  launch_and_check(k, x, 0, out, 0, 160);
  char* v = variants(k);
  assert_int_equal(count(v, "\"key\""), 0);
  free(v);
  tri_kernel_destroy(k);

  /* On, with a budget of 2. */
  assert_int_equal(tri_compile_options_set_launch_specialization(o, 1, 2), TRI_OK);
  assert_int_equal(tri_kernel_compile(m, "scale", o, &k), TRI_OK);
  launch_and_check(k, x, 0, out, 0, 160);  /* x, out aligned; n divisible by 16 */
  launch_and_check(k, x, 0, out, 0, 160);  /* the same classes: no new variant */
  launch_and_check(k, x, 1, out, 0, 160);  /* x misaligned */
  launch_and_check(k, x, 1, out, 1, 160);  /* a third class past the budget: runs the kernel as compiled */
  launch_and_check(k, x, 1, out, 1, 37);   /* no facts at all: the kernel as compiled, nothing logged */
  v = variants(k);
  printf("%s\n%s", v, g_log);
  assert_int_equal(count(v, "\"key\""), 2);
  assert_non_null(strstr(v, "\"max_variants\": 2"));
  assert_non_null(strstr(v, "argument 2 (%n) changed class: not divisible by 16 -> divisible by 16"));
  assert_non_null(strstr(v, "argument 0 (%x) changed class: aligned to 16 -> not aligned to 16 (from the variant for"));
  assert_int_equal(count(g_log, "new variant"), 2);
  assert_int_equal(count(g_log, "no more variants"), 1);
  free(v);
  tri_kernel_destroy(k);

  /* %x and %n opted out: only %out's class selects a variant. */
  g_log[0] = 0;
  assert_int_equal(tri_compile_options_set_launch_specialization(o, 1, 8), TRI_OK);
  assert_int_equal(tri_compile_options_set_arg_specialization(o, 0, 0), TRI_OK);
  assert_int_equal(tri_compile_options_set_arg_specialization(o, 2, 0), TRI_OK);
  assert_int_equal(tri_compile_options_set_arg_specialization(o, 32, 0), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_kernel_compile(m, "scale", o, &k), TRI_OK);
  launch_and_check(k, x, 0, out, 0, 160);
  launch_and_check(k, x, 1, out, 0, 37);
  launch_and_check(k, x, 3, out, 0, 48);
  launch_and_check(k, x, 0, out, 1, 64);
  v = variants(k);
  printf("%s\n%s", v, g_log);
  assert_int_equal(count(v, "\"key\""), 1);
  assert_non_null(strstr(v, "\"name\": \"out\", \"class\": \"aligned to 16\""));
  assert_null(strstr(v, "\"name\": \"x\""));
  free(v);
  tri_kernel_destroy(k);

  free(xmem);
  free(omem);
  tri_compile_options_destroy(o);
  tri_module_destroy(m);
  tri_context_destroy(ctx);
}

/* out[i] = x[i * stride]: a stride of 1 is its own class ("equal to 1"), compiled with the
 * constant 1 in the argument's place (what makes a unit stride contiguous to the layouts). */
static const char kGather[] =
    "kernel @gather(%x: ptr<f32>, %out: ptr<f32>, %n: i32, %stride: i32) {\n"
    "  %r = arange[start=0, end=64] : <64 x i32>\n"
    "  %nv = splat %n : <64 x i32>\n"
    "  %mask = cmp[pred=slt] %r, %nv : <64 x i1>\n"
    "  %sv = splat %stride : <64 x i32>\n"
    "  %offs = mul %r, %sv : <64 x i32>\n"
    "  %xb = splat %x : <64 x ptr<f32>>\n"
    "  %xp = addptr %xb, %offs : <64 x ptr<f32>>\n"
    "  %v = load %xp, mask=%mask : <64 x f32>\n"
    "  %ob = splat %out : <64 x ptr<f32>>\n"
    "  %op = addptr %ob, %r : <64 x ptr<f32>>\n"
    "  store %op, %v, mask=%mask\n"
    "  return\n"
    "}\n";

static void test_equal_to_one(void** state) {
  (void)state;
  g_log[0] = 0;
  tri_context* ctx = make_context();
  tri_module* m = NULL;
  tri_compile_options* o = NULL;
  tri_kernel* k = NULL;
  assert_int_equal(tri_module_create(ctx, kGather, sizeof kGather - 1, "gather.tri", &m), TRI_OK);
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(o, "cpu"), TRI_OK);
  assert_int_equal(tri_compile_options_set_launch_specialization(o, 1, 8), TRI_OK);
  assert_int_equal(tri_kernel_compile(m, "gather", o, &k), TRI_OK);
  float x[64 * 17], out[64];
  for (int i = 0; i < 64 * 17; ++i) x[i] = (float)i + 0.5f;
  const int strides[] = {1, 2, 16, 1, 3};
  for (int t = 0; t < 5; ++t) {
    const int stride = strides[t], n = 50;
    for (int i = 0; i < 64; ++i) out[i] = -1.0f;
    tri_arg args[4] = {ptr(x, sizeof x), ptr(out, sizeof out), i32(n), i32(stride)};
    assert_int_equal(tri_launch(k, 1, 1, 1, NULL, args, 4), TRI_OK);
    for (int i = 0; i < 64; ++i) assert_true(out[i] == (i < n ? x[i * stride] : -1.0f));
  }
  char* v = variants(k);
  printf("%s\n%s", v, g_log);
  assert_non_null(strstr(v, "\"name\": \"stride\", \"class\": \"equal to 1\""));
  assert_non_null(strstr(v, "\"name\": \"stride\", \"class\": \"divisible by 16\""));
  assert_non_null(strstr(v, "argument 3 (%stride) changed class: not divisible by 16 -> equal to 1"));
  free(v);
  tri_kernel_destroy(k);
  tri_compile_options_destroy(o);
  tri_module_destroy(m);
  tri_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_variants_cpu), cmocka_unit_test(test_equal_to_one)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
