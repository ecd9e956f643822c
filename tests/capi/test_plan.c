/* Prepared launches (tri_launch_plan_*) on the host targets: a plan launches what tri_launch
 * launches, arguments and the grid are replaced in place, and bad replacements are refused with
 * tri_launch's errors while the plan keeps its previous arguments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

static tri_arg ptr(void* p, size_t bytes) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.kind = TRI_TYPE_POINTER;
  a.dtype = TRI_DTYPE_F32;
  a.value.p = p;
  a.extent = bytes;
  return a;
}

static tri_arg scalar_i32(int64_t v) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.kind = TRI_TYPE_SCALAR;
  a.dtype = TRI_DTYPE_I32;
  a.value.i = v;
  return a;
}

static tri_arg scalar_f32(double v) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.kind = TRI_TYPE_SCALAR;
  a.dtype = TRI_DTYPE_F32;
  a.value.f = v;
  return a;
}

static void run_target(const char* target) {
  tri_context* ctx = NULL;
  tri_module* m = NULL;
  tri_compile_options* o = NULL;
  tri_kernel* k = NULL;
  tri_launch_plan* plan = NULL;
  assert_int_equal(tri_context_create(NULL, TRI_VERSION_NUMBER, &ctx), TRI_OK);
  assert_int_equal(tri_module_create(ctx, kScale, sizeof kScale - 1, "scale.tri", &m), TRI_OK);
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(o, target), TRI_OK);
  assert_int_equal(tri_kernel_compile(m, "scale", o, &k), TRI_OK);
  float x[40], y[40], out[40];
  for (int i = 0; i < 40; ++i) {
    x[i] = (float)i;
    y[i] = (float)(100 - i);
    out[i] = -1.0f;
  }
  tri_arg args[4] = {ptr(x, sizeof x), ptr(out, sizeof out), scalar_i32(37), scalar_f32(2.0)};
  assert_int_equal(tri_launch_plan_create(k, 3, 1, 1, NULL, args, 4, &plan), TRI_OK);
  /* The plan keeps the kernel (and its module) alive. */
  tri_kernel_destroy(k);
  tri_module_destroy(m);
  assert_int_equal(tri_launch_plan_launch(plan), TRI_OK);
  for (int i = 0; i < 40; ++i) assert_true(out[i] == (i < 37 ? 2.0f * (float)i : -1.0f));
  /* Replace the input and the scale in place, then launch again. */
  tri_arg nx = ptr(y, sizeof y), ns = scalar_f32(0.5);
  assert_int_equal(tri_launch_plan_set_arg(plan, 0, &nx), TRI_OK);
  assert_int_equal(tri_launch_plan_set_arg(plan, 3, &ns), TRI_OK);
  assert_int_equal(tri_launch_plan_launch(plan), TRI_OK);
  for (int i = 0; i < 37; ++i) assert_true(out[i] == 0.5f * (float)(100 - i));
  /* Bad replacements are refused and change nothing. */
  tri_arg wrong = scalar_f32(1.0);
  assert_int_equal(tri_launch_plan_set_arg(plan, 0, &wrong), TRI_ERROR_LAUNCH_ARGS);
  assert_int_equal(tri_launch_plan_set_arg(plan, 4, &ns), TRI_ERROR_LAUNCH_ARGS);
  assert_int_equal(tri_launch_plan_set_grid(plan, 0x80000000u, 1, 1), TRI_ERROR_INVALID_ARGUMENT);
  int dummy;
  assert_int_equal(tri_launch_plan_set_stream(plan, &dummy), TRI_ERROR_INVALID_ARGUMENT);
  /* A smaller grid leaves the last program's elements alone. */
  for (int i = 0; i < 40; ++i) out[i] = -1.0f;
  assert_int_equal(tri_launch_plan_set_grid(plan, 2, 1, 1), TRI_OK);
  assert_int_equal(tri_launch_plan_launch(plan), TRI_OK);
  for (int i = 0; i < 40; ++i) assert_true(out[i] == (i < 32 ? 0.5f * (float)(100 - i) : -1.0f));
  tri_launch_plan_destroy(plan);
  tri_launch_plan_destroy(NULL);
  /* Argument errors at creation are tri_launch's. */
  assert_int_equal(tri_module_create(ctx, kScale, sizeof kScale - 1, "scale.tri", &m), TRI_OK);
  assert_int_equal(tri_kernel_compile(m, "scale", o, &k), TRI_OK);
  assert_int_equal(tri_launch_plan_create(k, 1, 1, 1, NULL, args, 3, &plan), TRI_ERROR_LAUNCH_ARGS);
  tri_kernel_destroy(k);
  tri_module_destroy(m);
  tri_compile_options_destroy(o);
  tri_context_destroy(ctx);
}

static void test_plan_interp(void** state) {
  (void)state;
  run_target("interp");
}

static void test_plan_cpu(void** state) {
  (void)state;
  run_target("cpu");
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_plan_interp), cmocka_unit_test(test_plan_cpu)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
