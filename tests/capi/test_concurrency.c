/* Many threads on one context at once, as a host's worker threads would use it: each creates its
 * own modules and shares one module with the others, compiles the same specialization as the
 * others (which must compile once) and specializations of its own (past the cache's capacity of
 * 4, so entries are dropped while other threads look them up), launches on the CPU and the
 * interpreter, re-enters the library from the log sink (a print whose callback launches), and
 * runs launches on a second context that a canceller thread stops. Every result is checked. The ThreadSanitizer build of
 * scripts/test.sh --sanitize runs this test (and base/test_thread_pool) for data races. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
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

enum { kThreads = 6, kRounds = 4, kN = 100 };

static const char kScale[] =
    "kernel @scale(%x: ptr<f32>, %out: ptr<f32>, %n: i32) constexpr(BLOCK: i32 = 16) {\n"
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
    "  %two = const[value=2.0] : <BLOCK x f32>\n"
    "  %w = mul %v, %two : <BLOCK x f32>\n"
    "  %ob = splat %out : <BLOCK x ptr<f32>>\n"
    "  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>\n"
    "  store %op, %w, mask=%mask\n"
    "  return\n"
    "}\n"
    "kernel @talk(%n: i32) {\n"
    "  %pid = program_id[axis=0] : i32\n"
    "  print[prefix=\"talk \"] %pid\n"
    "  return\n"
    "}\n"
    "kernel @spin(%n: i32) {\n"
    "  %c0 = const[value=0] : i32\n"
    "  %w = while %c0 {\n"
    "  ^(%i: i32):\n"
    "    %more = cmp[pred=sge] %i, %c0 : i1\n"
    "    condition %more, %i\n"
    "  } {\n"
    "  ^(%i2: i32):\n"
    "    %next = add %i2, %n : i32\n"
    "    yield %next\n"
    "  } : i32\n"
    "  return\n"
    "}\n";

static tri_context* g_ctx;
static tri_module* g_shared;
static tri_kernel* g_nested;  /* launched from the log sink */

static tri_arg ptr_arg(const void* p, uint64_t bytes) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.value.p = p;
  a.extent = bytes;
  a.kind = TRI_TYPE_POINTER;
  a.dtype = TRI_DTYPE_F32;
  return a;
}

static tri_arg i32_arg(int64_t v) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.value.i = v;
  a.kind = TRI_TYPE_SCALAR;
  a.dtype = TRI_DTYPE_I32;
  return a;
}

/* "talk" prints reach here; each launches the scale kernel on the same context. */
static void sink(void* user, int32_t level, const char* message) {
  if (strncmp(message, "talk ", 5) != 0) return;
  float x[kN], y[kN];
  for (int i = 0; i < kN; ++i) x[i] = (float)i;
  tri_arg args[3] = {ptr_arg(x, sizeof x), ptr_arg(y, sizeof y), i32_arg(kN)};
  if (tri_launch(g_nested, 7, 1, 1, NULL, args, 3) != TRI_OK || y[kN - 1] != 2.0f * (kN - 1))
    __atomic_add_fetch((int*)user, 1, __ATOMIC_RELAXED);
}

static tri_kernel* compile(tri_module* m, const char* name, const char* target, int64_t block, int* errors) {
  tri_compile_options* o = NULL;
  tri_kernel* k = NULL;
  if (tri_compile_options_create(&o) != TRI_OK || tri_compile_options_set_target(o, target) != TRI_OK ||
      (block && tri_compile_options_set_constexpr_int(o, "BLOCK", block) != TRI_OK) ||
      tri_kernel_compile(m, name, o, &k) != TRI_OK) {
    ++*errors;
    k = NULL;
  }
  tri_compile_options_destroy(o);
  return k;
}

static int run_scale(tri_kernel* k, int64_t block, int* errors) {
  float x[kN], y[kN];
  for (int i = 0; i < kN; ++i) {
    x[i] = (float)i;
    y[i] = -1.0f;
  }
  tri_arg args[3] = {ptr_arg(x, sizeof x), ptr_arg(y, sizeof y), i32_arg(kN)};
  uint32_t grid = (uint32_t)((kN + block - 1) / block);
  if (!k || tri_launch(k, grid, 1, 1, NULL, args, 3) != TRI_OK) return ++*errors;
  for (int i = 0; i < kN; ++i)
    if (y[i] != 2.0f * (float)i) return ++*errors;
  return 0;
}

static int g_stop_cancelling;

/* Cancels the second context's launches every 10 ms until told to stop. */
static void* canceller(void* arg) {
  struct timespec ts = {0, 10 * 1000 * 1000};
  while (!__atomic_load_n(&g_stop_cancelling, __ATOMIC_ACQUIRE)) {
    nanosleep(&ts, NULL);
    tri_context_cancel((tri_context*)arg);
  }
  return NULL;
}

struct Worker {
  int index;
  int errors;
  tri_context* cancel_ctx;
  tri_kernel* spin;
};

static void* work(void* arg) {
  struct Worker* w = (struct Worker*)arg;
  for (int round = 0; round < kRounds; ++round) {
    /* A module of its own, and the shared one. */
    tri_module* own = NULL;
    if (tri_module_create(g_ctx, kScale, strlen(kScale), "own.tri", &own) != TRI_OK) {
      ++w->errors;
      continue;
    }
    const int64_t mine = (int64_t)16 << ((w->index + round) % 4);
    const char* target = (w->index + round) % 2 ? "interp" : "cpu";
    tri_kernel* same = compile(g_shared, "scale", "cpu", 32, &w->errors);     /* every thread's */
    tri_kernel* different = compile(g_shared, "scale", target, mine, &w->errors);
    tri_kernel* local = compile(own, "scale", target, 16, &w->errors);
    run_scale(same, 32, &w->errors);
    run_scale(different, mine, &w->errors);
    run_scale(local, 16, &w->errors);
    /* Print output whose sink launches (nested on this context). */
    tri_kernel* talk = compile(g_shared, "talk", "cpu", 0, &w->errors);
    tri_arg n = i32_arg(0);
    if (!talk || tri_launch(talk, 5, 1, 1, NULL, &n, 1) != TRI_OK) ++w->errors;
    /* A launch on the other context that only a cancel ends (the canceller thread's). */
    if (w->index < 2) {
      tri_arg s = i32_arg(0);
      if (tri_launch(w->spin, 3, 1, 1, NULL, &s, 1) != TRI_ERROR_CANCELLED) ++w->errors;
    }
    tri_kernel_destroy(same);
    tri_kernel_destroy(different);
    tri_kernel_destroy(local);
    tri_kernel_destroy(talk);
    tri_module_destroy(own);
  }
  return NULL;
}

static void threads_share_a_context(void** state) {
  int sink_errors = 0;
  tri_context_options* o = NULL;
  assert_int_equal(tri_context_options_create(&o), TRI_OK);
  assert_int_equal(tri_context_options_set_log(o, sink, &sink_errors, TRI_LOG_INFO), TRI_OK);
  assert_int_equal(tri_context_options_set_kernel_cache_capacity(o, 4), TRI_OK);
  assert_int_equal(tri_context_create(o, TRI_VERSION_NUMBER, &g_ctx), TRI_OK);
  tri_context_options_destroy(o);
  assert_int_equal(tri_module_create(g_ctx, kScale, strlen(kScale), "shared.tri", &g_shared), TRI_OK);
  int errors = 0;
  g_nested = compile(g_shared, "scale", "cpu", 16, &errors);
  assert_int_equal(errors, 0);

  tri_context* cancel_ctx = NULL;
  assert_int_equal(tri_context_create(NULL, TRI_VERSION_NUMBER, &cancel_ctx), TRI_OK);
  tri_module* spin_m = NULL;
  assert_int_equal(tri_module_create(cancel_ctx, kScale, strlen(kScale), "spin.tri", &spin_m), TRI_OK);
  tri_kernel* spin = compile(spin_m, "spin", "cpu", 0, &errors);
  assert_non_null(spin);

  pthread_t cancelling;
  assert_int_equal(pthread_create(&cancelling, NULL, canceller, cancel_ctx), 0);
  pthread_t t[kThreads];
  struct Worker w[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    w[i].index = i;
    w[i].errors = 0;
    w[i].cancel_ctx = cancel_ctx;
    w[i].spin = spin;
    assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < kThreads; ++i) {
    assert_int_equal(pthread_join(t[i], NULL), 0);
    if (w[i].errors) fail_msg("thread %d: %d errors", i, w[i].errors);
  }
  __atomic_store_n(&g_stop_cancelling, 1, __ATOMIC_RELEASE);
  assert_int_equal(pthread_join(cancelling, NULL), 0);
  assert_int_equal(sink_errors, 0);
  tri_kernel_destroy(spin);
  tri_module_destroy(spin_m);
  tri_context_destroy(cancel_ctx);
  tri_kernel_destroy(g_nested);
  tri_module_destroy(g_shared);
  tri_context_destroy(g_ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(threads_share_a_context),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
