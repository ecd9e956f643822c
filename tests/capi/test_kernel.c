/* The compile and launch half of the C API, through the reference interpreter (always present)
 * and the CPU backend when the build has it: specialization errors, argument checking, the
 * compile cache, lifetimes, and checked mode catching a planted out-of-bounds access. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "tri/tri.h"

static const char kScale[] =
    "kernel @scale(%x: ptr<f32>, %out: ptr<f32>, %n: i32, %s: f32) constexpr(BLOCK: i32 = 16) {\n"
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
    "  %ss = splat %s : <BLOCK x f32>\n"
    "  %w = mul %v, %ss : <BLOCK x f32>\n"
    "  %ob = splat %out : <BLOCK x ptr<f32>>\n"
    "  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>\n"
    "  store %op, %w, mask=%mask\n"
    "  return\n"
    "}\n";

/* The same kernel without the mask: the last program reads and writes past n. */
static const char kUnmasked[] =
    "kernel @scale(%x: ptr<f32>, %out: ptr<f32>, %n: i32, %s: f32) constexpr(BLOCK: i32 = 16) {\n"
    "  %pid = program_id[axis=0] : i32\n"
    "  %bs = const[value=BLOCK] : i32\n"
    "  %start = mul %pid, %bs : i32\n"
    "  %r = arange[start=0, end=BLOCK] : <BLOCK x i32>\n"
    "  %sv = splat %start : <BLOCK x i32>\n"
    "  %offs = add %sv, %r : <BLOCK x i32>\n"
    "  %xb = splat %x : <BLOCK x ptr<f32>>\n"
    "  %xp = addptr %xb, %offs : <BLOCK x ptr<f32>>\n"
    "  %v = load %xp : <BLOCK x f32>\n"
    "  %ob = splat %out : <BLOCK x ptr<f32>>\n"
    "  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>\n"
    "  store %op, %v\n"
    "  return\n"
    "}\n";

static const char* last_error(void) {
  static char buf[4096];
  tri_last_error_message(buf, sizeof buf);
  return buf;
}

static tri_context* g_ctx;

static int setup(void** state) {
  return tri_context_create(NULL, TRI_VERSION_NUMBER, &g_ctx) == TRI_OK ? 0 : -1;
}

static int teardown(void** state) {
  tri_context_destroy(g_ctx);
  return 0;
}

static tri_module* module_of(const char* text) {
  tri_module* m = NULL;
  tri_result r = tri_module_create(g_ctx, text, strlen(text), "scale.tri", &m);
  if (r != TRI_OK) fail_msg("tri_module_create: %s", last_error());
  return m;
}

static tri_kernel* compile(tri_module* m, const char* target, int checked, int64_t block) {
  tri_compile_options* o = NULL;
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(o, target), TRI_OK);
  assert_int_equal(tri_compile_options_set_checked(o, checked), TRI_OK);
  if (block) assert_int_equal(tri_compile_options_set_constexpr_int(o, "BLOCK", block), TRI_OK);
  tri_kernel* k = NULL;
  tri_result r = tri_kernel_compile(m, "scale", o, &k);
  tri_compile_options_destroy(o);
  if (r != TRI_OK) fail_msg("tri_kernel_compile(%s): %s", target, last_error());
  return k;
}

static tri_arg ptr_arg(const void* p, uint64_t bytes) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.value.p = p;
  a.extent = bytes;
  a.kind = TRI_TYPE_POINTER;
  a.dtype = TRI_DTYPE_F32;
  return a;
}

static tri_arg scalar_i32(int64_t v) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.value.i = v;
  a.kind = TRI_TYPE_SCALAR;
  a.dtype = TRI_DTYPE_I32;
  return a;
}

static tri_arg scalar_f32(double v) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.value.f = v;
  a.kind = TRI_TYPE_SCALAR;
  a.dtype = TRI_DTYPE_F32;
  return a;
}

/* Runs scale over n = 37 values (3 programs of 16, the last one masked) and checks every output,
 * and that the element after the end is untouched. */
static void run_scale(const char* target) {
  tri_module* m = module_of(kScale);
  tri_kernel* k = compile(m, target, 0, 16);
  tri_module_destroy(m); /* the kernel keeps its module alive */
  float x[37], out[38];
  for (int i = 0; i < 37; ++i) x[i] = (float)i - 10.5f;
  for (int i = 0; i < 38; ++i) out[i] = -1.0f;
  tri_arg args[4] = {ptr_arg(x, sizeof x), ptr_arg(out, 37 * 4), scalar_i32(37), scalar_f32(0.5)};
  tri_result r = tri_launch(k, 3, 1, 1, NULL, args, 4);
  if (r != TRI_OK) fail_msg("tri_launch(%s): %s", target, last_error());
  for (int i = 0; i < 37; ++i) assert_true(out[i] == x[i] * 0.5f);
  assert_true(out[37] == -1.0f);
  uint32_t count = 0;
  assert_int_equal(tri_kernel_arg_count(k, &count), TRI_OK);
  assert_int_equal(count, 4);
  tri_kernel_destroy(k);
}

static void runs_on_the_interpreter(void** state) { run_scale("interp"); }

static void runs_on_the_cpu(void** state) {
  tri_compile_options* o = NULL;
  tri_module* m = module_of(kScale);
  tri_kernel* k = NULL;
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  tri_result r = tri_kernel_compile(m, "scale", o, &k);
  tri_compile_options_destroy(o);
  tri_module_destroy(m);
  if (r == TRI_ERROR_UNSUPPORTED) {
    tri_kernel_destroy(k);
    skip(); /* a build without the LLVM layer */
  }
  tri_kernel_destroy(k);
  run_scale("cpu");
}

static char* code_of(const tri_kernel* k, const char* kind) {
  tri_blob* b = NULL;
  if (tri_kernel_code(k, kind, &b) != TRI_OK) return NULL;
  size_t n = tri_blob_size(b);
  char* text = malloc(n + 1);
  memcpy(text, tri_blob_data(b), n);
  text[n] = 0;
  tri_blob_destroy(b);
  return text;
}

/* The cpu target shows its LLVM IR and host assembly when asked (issue 30); the interpreter has
 * nothing to show; a kind a target does not make is named with the kinds it does. */
static void shows_the_cpu_code_on_request(void** state) {
  tri_module* m = module_of(kScale);
  tri_kernel* k = compile(m, "cpu", 0, 16);
  char* llvm = code_of(k, "llvm");
  if (!llvm) fail_msg("tri_kernel_code(llvm): %s", last_error());
  assert_non_null(strstr(llvm, "target triple"));
  assert_non_null(strstr(llvm, "define "));
  char* asm_text = code_of(k, "asm");
  if (!asm_text) fail_msg("tri_kernel_code(asm): %s", last_error());
  assert_non_null(strstr(asm_text, ".text"));
  assert_non_null(strstr(asm_text, "tri.scale"));
  char* again = code_of(k, "asm");
  assert_string_equal(asm_text, again);
  free(llvm);
  free(asm_text);
  free(again);
  tri_blob* b = NULL;
  assert_int_equal(tri_kernel_code(k, "ptx", &b), TRI_ERROR_NOT_FOUND);
  assert_non_null(strstr(last_error(), "made no code of kind 'ptx' for this kernel (it makes: llvm"));
  tri_kernel_destroy(k);
  k = compile(m, "interp", 0, 16);
  assert_int_equal(tri_kernel_code(k, "llvm", &b), TRI_ERROR_NOT_FOUND);
  assert_non_null(strstr(last_error(), "it makes none to show"));
  tri_kernel_destroy(k);
  tri_module_destroy(m);
}

static void reports_specialization_errors(void** state) {
  tri_module* m = module_of(kScale);
  tri_compile_options* o = NULL;
  tri_kernel* k = (tri_kernel*)0x1;
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(o, "interp"), TRI_OK);
  assert_int_equal(tri_compile_options_set_constexpr_int(o, "BLOCK", 24), TRI_OK);
  assert_int_equal(tri_kernel_compile(m, "scale", o, &k), TRI_ERROR_SPECIALIZE);
  assert_non_null(strstr(last_error(), "constexpr 'BLOCK' is used as a block dimension, so it must be a power of two"));
  assert_ptr_equal(k, (tri_kernel*)0x1); /* untouched on failure */
  assert_int_equal(tri_compile_options_set_constexpr_float(o, "BLOCK", 16.0), TRI_OK);
  assert_int_equal(tri_kernel_compile(m, "scale", o, &k), TRI_ERROR_SPECIALIZE);
  assert_non_null(strstr(last_error(), "is i32, but the value given"));
  tri_compile_options_destroy(o);
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  assert_int_equal(tri_compile_options_set_constexpr_int(o, "BLOK", 16), TRI_OK);
  assert_int_equal(tri_kernel_compile(m, "scale", o, &k), TRI_ERROR_SPECIALIZE);
  assert_non_null(strstr(last_error(), "has no constexpr 'BLOK' (its constexprs: BLOCK)"));
  assert_int_equal(tri_kernel_compile(m, "nope", NULL, &k), TRI_ERROR_NOT_FOUND);
  assert_int_equal(tri_compile_options_set_target(o, "gpu9000"), TRI_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(last_error(), "unknown target 'gpu9000'"));
  assert_int_equal(tri_compile_options_set_arg_align(o, 0, 12), TRI_ERROR_INVALID_ARGUMENT);
  /* Stages: Triton's kernels ask for up to 5 or 6 (its tutorial's attention backward: 5). */
  assert_int_equal(tri_compile_options_set_num_stages(o, 5), TRI_OK);
  assert_int_equal(tri_compile_options_set_num_stages(o, 8), TRI_OK);
  assert_int_equal(tri_compile_options_set_num_stages(o, 9), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_compile_options_set_num_stages(o, -1), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_compile_options_set_checked(o, 1), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(o, "cpu"), TRI_OK);
  assert_int_equal(tri_compile_options_set_constexpr_int(o, "BLOK", 0), TRI_OK);
  tri_compile_options_destroy(o);
  /* checked mode is for the interpreter only */
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  assert_int_equal(tri_compile_options_set_checked(o, 1), TRI_OK);
  assert_int_equal(tri_kernel_compile(m, "scale", o, &k), TRI_ERROR_UNSUPPORTED);
  assert_non_null(strstr(last_error(), "checked mode runs on the \"interp\" target only"));
  tri_compile_options_destroy(o);
  tri_module_destroy(m);
}

static void checks_launch_arguments(void** state) {
  tri_module* m = module_of(kScale);
  tri_kernel* k = compile(m, "interp", 0, 0);
  float x[16], out[16];
  tri_arg args[4] = {ptr_arg(x, sizeof x), ptr_arg(out, sizeof out), scalar_i32(16), scalar_f32(2.0)};
  assert_int_equal(tri_launch(k, 1, 1, 1, NULL, args, 3), TRI_ERROR_LAUNCH_ARGS);
  assert_non_null(strstr(last_error(), "kernel @scale takes 4 runtime arguments, but 3 were given"));
  args[2] = scalar_f32(16);
  assert_int_equal(tri_launch(k, 1, 1, 1, NULL, args, 4), TRI_ERROR_LAUNCH_ARGS);
  assert_non_null(strstr(last_error(), "argument 2 (%n) of kernel @scale is i32, but f32 was given"));
  args[2] = ptr_arg(x, 4);
  assert_int_equal(tri_launch(k, 1, 1, 1, NULL, args, 4), TRI_ERROR_LAUNCH_ARGS);
  assert_non_null(strstr(last_error(), "argument 2 (%n) of kernel @scale is i32, but a pointer was given"));
  args[2] = scalar_i32(16);
  args[0].dtype = TRI_DTYPE_F16;
  assert_int_equal(tri_launch(k, 1, 1, 1, NULL, args, 4), TRI_ERROR_LAUNCH_ARGS);
  assert_non_null(strstr(last_error(), "argument 0 (%x) of kernel @scale is ptr<f32>, but a pointer to f16 was given"));
  args[0].dtype = TRI_DTYPE_F32;
  assert_int_equal(tri_launch(k, 0, 1, 1, NULL, args, 4), TRI_OK);  /* an empty grid launches nothing */
  assert_int_equal(tri_launch(k, 1, 65536, 1, NULL, args, 4), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_launch(k, 1, 1, 1, (void*)0x10, args, 4), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_launch(NULL, 1, 1, 1, NULL, args, 4), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_launch(k, 1, 1, 1, NULL, NULL, 4), TRI_ERROR_INVALID_ARGUMENT);
  for (int i = 0; i < 16; ++i) x[i] = (float)i;
  assert_int_equal(tri_launch(k, 1, 1, 1, NULL, args, 4), TRI_OK);
  assert_true(out[15] == 30.0f);
  tri_kernel_destroy(k);
  tri_module_destroy(m);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void compiling_again_is_a_lookup(void** state) {
  tri_module* m = module_of(kScale);
  tri_kernel* a = compile(m, "interp", 0, 32);
  double t0 = now();
  tri_kernel* b = compile(m, "interp", 0, 32);
  double dt = now() - t0;
  assert_true(dt < 0.005); /* a map lookup, not a pipeline run */
  tri_blob* ta = NULL;
  tri_blob* tb = NULL;
  assert_int_equal(tri_kernel_to_text(a, &ta), TRI_OK);
  assert_int_equal(tri_kernel_to_text(b, &tb), TRI_OK);
  assert_int_equal(tri_blob_size(ta), tri_blob_size(tb));
  assert_non_null(strstr((const char*)tri_blob_data(ta), "<32 x f32>"));
  tri_blob_destroy(ta);
  tri_blob_destroy(tb);
  tri_kernel_destroy(a);
  tri_kernel_destroy(b);
  tri_module_destroy(m);
}

static void checked_mode_finds_the_planted_overrun(void** state) {
  tri_module* m = module_of(kUnmasked);
  tri_kernel* k = compile(m, "interp", 1, 16);
  float x[20], out[20];
  for (int i = 0; i < 20; ++i) x[i] = (float)i;
  tri_arg args[4] = {ptr_arg(x, sizeof x), ptr_arg(out, sizeof out), scalar_i32(20), scalar_f32(1.0)};
  /* two programs of 16 lanes over 20 elements: program 1, lane 4 reads x[20] */
  assert_int_equal(tri_launch(k, 2, 1, 1, NULL, args, 4), TRI_ERROR_RUNTIME);
  const char* msg = last_error();
  assert_non_null(strstr(msg, "scale.tri:10:8: error: 'load' lane [4] of <16 x ptr<f32>> reads 4 bytes at"));
  assert_non_null(strstr(msg, "argument %x (extent 80 bytes)"));
  assert_non_null(strstr(msg, "program (1, 0, 0)"));
  tri_kernel_destroy(k);
  tri_module_destroy(m);
}

static void null_arguments(void** state) {
  tri_compile_options* o = NULL;
  tri_kernel* k = NULL;
  uint32_t n = 0;
  tri_blob* b = NULL;
  assert_int_equal(tri_compile_options_create(NULL), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_compile_options_set_target(NULL, "cpu"), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_compile_options_set_constexpr_int(NULL, "A", 1), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_compile_options_set_checked(NULL, 1), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_kernel_compile(NULL, "scale", NULL, &k), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_kernel_arg_count(NULL, &n), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_kernel_to_text(NULL, &b), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(o, NULL), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_compile_options_set_constexpr_float(o, NULL, 1.0), TRI_ERROR_INVALID_ARGUMENT);
  tri_module* m = module_of(kScale);
  assert_int_equal(tri_kernel_compile(m, NULL, o, &k), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_kernel_compile(m, "scale", o, NULL), TRI_ERROR_INVALID_ARGUMENT);
  tri_module_destroy(m);
  tri_compile_options_destroy(o);
  tri_compile_options_destroy(NULL);
  tri_kernel_destroy(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(runs_on_the_interpreter),
      cmocka_unit_test(runs_on_the_cpu),
      cmocka_unit_test(shows_the_cpu_code_on_request),
      cmocka_unit_test(reports_specialization_errors),
      cmocka_unit_test(checks_launch_arguments),
      cmocka_unit_test(compiling_again_is_a_lookup),
      cmocka_unit_test(checked_mode_finds_the_planted_overrun),
      cmocka_unit_test(null_arguments),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
