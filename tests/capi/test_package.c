/* Packages through the public API (tri_package_builder_*, tri_module_load_package,
 * tri_module_kernel): a package of CPU code for two x86-64 levels, with variants for aligned and
 * divisible arguments, loads in another context and runs without compiling (its results, its
 * reflection, its assert message naming the source line, libm through the shared object's table,
 * a launch with aligned arguments running the package's variant); a specialization the package
 * lacks is NOT_FOUND with what it holds, and libtri compiles it from the package's IR unless the
 * package was built without it; damaged bytes are refused; a cuda package (PTX only: TRI_PTXAS=none)
 * builds without a GPU, and where a driver is there (the fake one in capi/test_package_fake) its
 * kernels load through the PTX path with the note the logs get. Only tri.h is used. */
#define _POSIX_C_SOURCE 200809L /* posix_memalign, setenv */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tri/tri.h"

static const char kText[] =
    "// package test kernels\n"
    "kernel @vexp(%x: ptr<f32>, %out: ptr<f32>, %n: i32) constexpr(BLOCK: i32 = 64) {\n"
    "  %pid = program_id[axis=0] : i32\n"
    "  %bs = const[value=BLOCK] : i32\n"
    "  %start = mul %pid, %bs : i32\n"
    "  %range = arange[start=0, end=BLOCK] : <BLOCK x i32>\n"
    "  %startv = splat %start : <BLOCK x i32>\n"
    "  %offs = add %startv, %range : <BLOCK x i32>\n"
    "  %nv = splat %n : <BLOCK x i32>\n"
    "  %mask = cmp[pred=slt] %offs, %nv : <BLOCK x i1>\n"
    "  %xb = splat %x : <BLOCK x ptr<f32>>\n"
    "  %xp = addptr %xb, %offs : <BLOCK x ptr<f32>>\n"
    "  %xv = load %xp, mask=%mask : <BLOCK x f32>\n"
    "  %e = math_call[name=\"erfc\"] %xv : <BLOCK x f32>\n"
    "  %ob = splat %out : <BLOCK x ptr<f32>>\n"
    "  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>\n"
    "  store %op, %e, mask=%mask\n"
    "  return\n"
    "}\n"
    "kernel @check(%n: i32) {\n"
    "  %z = const[value=0] : i32\n"
    "  %ok = cmp[pred=sgt] %n, %z : i1\n"
    "  assert [msg = \"n must be positive\"] %ok\n"
    "  return\n"
    "}\n";

static tri_context* new_context(void) {
  tri_context* ctx = NULL;
  assert_int_equal(tri_context_create(NULL, TRI_VERSION_NUMBER, &ctx), TRI_OK);
  return ctx;
}

static char g_log[8192];
static void keep_log(void* user, int32_t level, const char* message) {
  (void)user;
  (void)level;
  size_t n = strlen(g_log);
  snprintf(g_log + n, sizeof g_log - n, "%s\n", message);
}

static tri_context* logging_context(void) {
  tri_context_options* o = NULL;
  tri_context* ctx = NULL;
  assert_int_equal(tri_context_options_create(&o), TRI_OK);
  assert_int_equal(tri_context_options_set_log(o, keep_log, NULL, TRI_LOG_WARNING), TRI_OK);
  assert_int_equal(tri_context_create(o, TRI_VERSION_NUMBER, &ctx), TRI_OK);
  tri_context_options_destroy(o);
  g_log[0] = 0;
  return ctx;
}

/* A package of both kernels built in its own context; the caller frees *bytes. */
static void build(const char* target, const char* machines, uint32_t variants, uint32_t flags, void** bytes,
                  size_t* size) {
  tri_context* ctx = new_context();
  tri_module* m = NULL;
  tri_package_builder* b = NULL;
  tri_compile_options* o = NULL;
  tri_blob* blob = NULL;
  assert_int_equal(tri_module_create(ctx, kText, sizeof kText - 1, "pkg_test.tri", &m), TRI_OK);
  assert_int_equal(tri_package_builder_create(m, flags, &b), TRI_OK);
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(o, target), TRI_OK);
  tri_result r = tri_package_builder_add(b, "vexp", o, machines, variants);
  if (r != TRI_OK) {
    char msg[1024];
    tri_last_error_message(msg, sizeof msg);
    fail_msg("tri_package_builder_add: %s", msg);
  }
  assert_int_equal(tri_package_builder_add(b, "check", o, machines, 0), TRI_OK);
  assert_int_equal(tri_package_builder_finish(b, &blob), TRI_OK);
  *size = tri_blob_size(blob);
  *bytes = malloc(*size);
  memcpy(*bytes, tri_blob_data(blob), *size);
  tri_blob_destroy(blob);
  tri_compile_options_destroy(o);
  tri_package_builder_destroy(b);
  tri_module_destroy(m);
  tri_context_destroy(ctx);
}

static tri_arg ptr_arg(void* p, size_t bytes) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.value.p = p;
  a.extent = bytes;
  a.kind = TRI_TYPE_POINTER;
  a.dtype = TRI_DTYPE_F32;
  return a;
}

static tri_arg i32_arg(int32_t v) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.value.i = v;
  a.kind = TRI_TYPE_SCALAR;
  a.dtype = TRI_DTYPE_I32;
  return a;
}

static void run_vexp(tri_kernel* k, int n) {
  void* xm = NULL;
  void* om = NULL;
  assert_int_equal(posix_memalign(&xm, 64, 256 * sizeof(float)), 0);
  assert_int_equal(posix_memalign(&om, 64, 256 * sizeof(float)), 0);
  float* x = xm;
  float* out = om;
  for (int i = 0; i < 256; ++i) x[i] = (float)i / 64.0f - 1.0f, out[i] = -7.0f;
  tri_arg args[3] = {ptr_arg(x, 256 * 4), ptr_arg(out, 256 * 4), i32_arg(n)};
  assert_int_equal(tri_launch(k, (uint32_t)(n + 63) / 64, 1, 1, NULL, args, 3), TRI_OK);
  for (int i = 0; i < 256; ++i) {
    if (i < n)
      assert_true(fabsf(out[i] - erfcf(x[i])) <= 1e-6f * fmaxf(1.0f, fabsf(erfcf(x[i]))));
    else
      assert_true(out[i] == -7.0f);
  }
  free(x);
  free(out);
}

static void test_cpu_package_runs_without_compiling(void** state) {
  (void)state;
  void* bytes;
  size_t size;
  build("cpu", "x86-64-v2,x86-64-v3", TRI_PACKAGE_ALIGNED | TRI_PACKAGE_DIVISIBLE, 0, &bytes, &size);
  tri_context* ctx = logging_context();
  tri_module* m = NULL;
  assert_int_equal(tri_module_load_package(ctx, bytes, size, "pkg.tripkg", &m), TRI_OK);
  free(bytes); /* the module copied what it needs */
  /* reflection from the package */
  uint32_t count = 0, index = 0, nparams = 0;
  const char* text = NULL;
  assert_int_equal(tri_module_function_count(m, &count), TRI_OK);
  assert_int_equal(count, 2);
  assert_int_equal(tri_module_find_function(m, "vexp", &index), TRI_OK);
  assert_int_equal(tri_module_param_count(m, index, &nparams), TRI_OK);
  assert_int_equal(nparams, 4);
  assert_int_equal(tri_module_param_default(m, index, 3, &text), TRI_OK);
  assert_string_equal(text, "64");
  int32_t tk = 0, dt = 0;
  assert_int_equal(tri_module_param_type(m, index, 0, &tk, &dt, &text), TRI_OK);
  assert_int_equal(tk, TRI_TYPE_POINTER);
  assert_string_equal(text, "ptr<f32>");

  tri_compile_options* o = NULL;
  tri_kernel* k = NULL;
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  assert_int_equal(tri_compile_options_set_launch_specialization(o, 1, 8), TRI_OK);
  assert_int_equal(tri_module_kernel(m, "vexp", o, &k), TRI_OK);
  run_vexp(k, 100); /* n = 100: aligned pointers, n not a multiple of 16 */
  run_vexp(k, 128); /* aligned and divisible: the package's second variant */
  tri_blob* json = NULL;
  assert_int_equal(tri_kernel_variants(k, &json), TRI_OK);
  const char* j = (const char*)tri_blob_data(json);
  assert_non_null(strstr(j, "the package's variant for %x aligned to 16, %out aligned to 16\""));
  assert_non_null(strstr(j, "the package's variant for %x aligned to 16, %out aligned to 16, %n divisible by 16\""));
  tri_blob_destroy(json);
  /* the same request gives the same kernel; the default options give a kernel too */
  tri_kernel* again = NULL;
  assert_int_equal(tri_module_kernel(m, "vexp", NULL, &again), TRI_OK);
  run_vexp(again, 37);
  tri_kernel_destroy(again);

  /* an assert's message names the source line, read from the package's sites */
  tri_kernel* chk = NULL;
  char msg[1024];
  assert_int_equal(tri_module_kernel(m, "check", NULL, &chk), TRI_OK);
  tri_arg bad = i32_arg(-1);
  assert_int_equal(tri_launch(chk, 1, 1, 1, NULL, &bad, 1), TRI_ERROR_RUNTIME);
  tri_last_error_message(msg, sizeof msg);
  assert_non_null(strstr(msg, "pkg_test.tri:23:3: error:"));
  assert_non_null(strstr(msg, "n must be positive"));
  tri_arg good = i32_arg(3);
  assert_int_equal(tri_launch(chk, 1, 1, 1, NULL, &good, 1), TRI_OK);

  /* a specialization the package does not hold */
  tri_compile_options* other = NULL;
  tri_kernel* k2 = NULL;
  assert_int_equal(tri_compile_options_create(&other), TRI_OK);
  assert_int_equal(tri_compile_options_set_constexpr_int(other, "BLOCK", 128), TRI_OK);
  assert_int_equal(tri_module_kernel(m, "vexp", other, &k2), TRI_ERROR_NOT_FOUND);
  tri_last_error_message(msg, sizeof msg);
  assert_non_null(strstr(msg, "pkg.tripkg has no @vexp for this request (cpu, 4 warps); it has @vexp for: BLOCK=64, cpu, 4 warps"));
  /* ... which libtri compiles from the package's IR */
  assert_int_equal(tri_kernel_compile(m, "vexp", other, &k2), TRI_OK);
  tri_kernel_destroy(k2);
  /* the package's own specialization through tri_kernel_compile: no compile, the same object */
  assert_int_equal(tri_kernel_compile(m, "vexp", o, &k2), TRI_OK);
  run_vexp(k2, 256);
  tri_kernel_destroy(k2);
  assert_int_equal(tri_module_kernel(m, "nope", NULL, &k2), TRI_ERROR_NOT_FOUND);
  tri_last_error_message(msg, sizeof msg);
  assert_non_null(strstr(msg, "it has no kernel of that name"));

  tri_compile_options_destroy(other);
  tri_compile_options_destroy(o);
  tri_kernel_destroy(chk);
  tri_kernel_destroy(k);
  tri_module_destroy(m);
  assert_null(strstr(g_log, "the package")); /* nothing to say about the code: the CPU's level was there */
  tri_context_destroy(ctx);
}

static void test_package_without_ir(void** state) {
  (void)state;
  void* bytes;
  size_t size;
  build("cpu", "x86-64-v2", 0, TRI_PACKAGE_NO_IR, &bytes, &size);
  tri_context* ctx = new_context();
  tri_module* m = NULL;
  tri_kernel* k = NULL;
  tri_compile_options* other = NULL;
  char msg[1024];
  assert_int_equal(tri_module_load_package(ctx, bytes, size, "noir.tripkg", &m), TRI_OK);
  assert_int_equal(tri_module_kernel(m, "vexp", NULL, &k), TRI_OK);
  run_vexp(k, 200);
  tri_kernel_destroy(k);
  assert_int_equal(tri_compile_options_create(&other), TRI_OK);
  assert_int_equal(tri_compile_options_set_constexpr_int(other, "BLOCK", 128), TRI_OK);
  assert_int_equal(tri_kernel_compile(m, "vexp", other, &k), TRI_ERROR_NOT_FOUND);
  tri_last_error_message(msg, sizeof msg);
  assert_non_null(strstr(msg, "noir.tripkg holds no @vexp for this request and not the IR to compile it"));
  tri_blob* blob = NULL;
  assert_int_equal(tri_module_to_text(m, &blob), TRI_ERROR_NOT_FOUND);
  tri_compile_options_destroy(other);
  tri_module_destroy(m);
  tri_context_destroy(ctx);
  free(bytes);
}

static void test_damaged_packages_are_refused(void** state) {
  (void)state;
  void* bytes;
  size_t size;
  build("cpu", "x86-64-v2", 0, TRI_PACKAGE_NO_IR, &bytes, &size);
  tri_context* ctx = new_context();
  tri_module* m = NULL;
  char msg[512];
  unsigned char* b = bytes;
  b[size / 2] ^= 0x40;
  assert_int_equal(tri_module_load_package(ctx, bytes, size, "bad.tripkg", &m), TRI_ERROR_CORRUPT_BINARY);
  tri_last_error_message(msg, sizeof msg);
  assert_string_equal(msg, "bad.tripkg: not a usable package: checksum mismatch (damaged or truncated)");
  b[size / 2] ^= 0x40;
  assert_int_equal(tri_module_load_package(ctx, bytes, size - 1, "short.tripkg", &m), TRI_ERROR_CORRUPT_BINARY);
  assert_int_equal(tri_module_load_package(ctx, kText, sizeof kText, "text.tri", &m), TRI_ERROR_CORRUPT_BINARY);
  b[8] = 7; /* a newer format version */
  assert_int_equal(tri_module_load_package(ctx, bytes, size, "new.tripkg", &m), TRI_ERROR_UNSUPPORTED_VERSION);
  /* a module made from IR is not a package's */
  tri_kernel* k = NULL;
  assert_int_equal(tri_module_create(ctx, kText, sizeof kText - 1, "t.tri", &m), TRI_OK);
  assert_int_equal(tri_module_kernel(m, "vexp", NULL, &k), TRI_ERROR_INVALID_ARGUMENT);
  tri_module_destroy(m);
  tri_context_destroy(ctx);
  free(bytes);
}

/* Built on any machine: PTX per architecture (no ptxas asked for). Loaded where there is a
 * driver: the fake one (sm_90) under capi/test_package_fake. */
static void test_cuda_package(void** state) {
  (void)state;
  setenv("TRI_PTXAS", "none", 1);
  void* bytes;
  size_t size;
  build("cuda", "sm_80,sm_90a", TRI_PACKAGE_ALIGNED, 0, &bytes, &size);
  void* old;
  size_t old_size;
  build("cuda", "sm_80", 0, TRI_PACKAGE_NO_IR, &old, &old_size);
  tri_context* ctx = logging_context();
  uint32_t devices = 0;
  if (tri_device_count(ctx, &devices) != TRI_OK || devices == 0) {
    printf("loading needs a CUDA device: built only\n");
  } else {
    tri_module* m = NULL;
    tri_kernel* k = NULL;
    tri_compile_options* o = NULL;
    assert_int_equal(tri_compile_options_create(&o), TRI_OK);
    assert_int_equal(tri_compile_options_set_target(o, "cuda"), TRI_OK);
    assert_int_equal(tri_module_load_package(ctx, bytes, size, "cuda.tripkg", &m), TRI_OK);
    assert_int_equal(tri_module_kernel(m, "vexp", o, &k), TRI_OK);
    /* (the fake driver records the launch; the pointers are not read) */
    static float dummy[64];
    tri_arg args[3] = {ptr_arg(dummy, sizeof dummy), ptr_arg(dummy, sizeof dummy), i32_arg(64)};
    assert_int_equal(tri_launch(k, 1, 1, 1, NULL, args, 3), TRI_OK);
    /* no cubin (PTX only): the note says which PTX the driver compiles */
    assert_non_null(strstr(g_log, "the package has no cubin for this GPU (sm_90a); the driver compiles the PTX made "
                                  "for sm_90a"));
    tri_kernel_destroy(k);
    tri_module_destroy(m);
    g_log[0] = 0;
    /* a package for an older family: sm_80's PTX runs on sm_90 through the driver's JIT */
    assert_int_equal(tri_module_load_package(ctx, old, old_size, "old.tripkg", &m), TRI_OK);
    assert_int_equal(tri_module_kernel(m, "vexp", o, &k), TRI_OK);
    assert_int_equal(tri_launch(k, 1, 1, 1, NULL, args, 3), TRI_OK);
    assert_non_null(strstr(g_log, "the driver compiles the PTX made for sm_80"));
    tri_kernel_destroy(k);
    tri_module_destroy(m);
    tri_compile_options_destroy(o);
  }
  tri_context_destroy(ctx);
  free(bytes);
  free(old);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cpu_package_runs_without_compiling),
      cmocka_unit_test(test_package_without_ir),
      cmocka_unit_test(test_damaged_packages_are_refused),
      cmocka_unit_test(test_cuda_package),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
