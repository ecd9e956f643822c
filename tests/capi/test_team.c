/* Teams on the host targets (tri_team_*, docs/distributed.md), through the public API only, on
 * the reference interpreter and the CPU backend: the symmetric heap's allocator, a ring of
 * put/notify/wait handoffs on 2, 4 and 8 ranks whose consumer checks every lane it reads (and a
 * variant that notifies before the data, which the check must catch), waits that time out with
 * their location, a failing rank that stops the waits of the others, and the errors of symm_at. */
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

/* The ring (tests/capi/ring.tri, read from the source tree: the tests run there): program 0 of
 * rank r produces tiles for rank r+1, program 1 consumes rank r-1's; MODE 0 and 1 must see
 * every tile, MODE 2 notifies before the data and must be caught. */
static char* ring_text(void) {
  static char text[16384];
  FILE* f = fopen("tests/capi/ring.tri", "rb");
  size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
  if (f) fclose(f);
  if (n == 0) fail_msg("cannot read tests/capi/ring.tri (run from the source tree)");
  text[n] = 0;
  return text;
}

/* Rank 0 waits for a signal nobody sends; with FAIL = 1 rank 1 fails an assert
 * instead, which must stop rank 0's wait long before its timeout. */
static const char kStuck[] =
    "kernel @stuck(%sig: ptr<i32>) constexpr(FAIL: i32 = 0) {\n"
    "  %me = rank : i32\n"
    "  %c0 = const[value=0] : i32\n"
    "  %c1 = const[value=1] : i32\n"
    "  %first = cmp[pred=eq] %me, %c0 : i1\n"
    "  if %first {\n"
    "    %t = wait %sig, %c1 : i32\n"
    "    yield\n"
    "  } {\n"
    "    %fail = const[value=FAIL] : i32\n"
    "    %cond = cmp[pred=eq] %fail, %c0 : i1\n"
    "    assert[msg=\"rank 1 gives up\"] %cond\n"
    "    yield\n"
    "  }\n"
    "  return\n"
    "}\n";

/* symm_at of its argument to rank R, stored through. */
static const char kSymm[] =
    "kernel @symm(%p: ptr<f32>, %to: i32) {\n"
    "  %q = symm_at %p, %to : ptr<f32>\n"
    "  %x = const[value=1.0] : f32\n"
    "  store %q, %x\n"
    "  return\n"
    "}\n";

static const char* const kTargets[] = {"interp", "cpu"};

static const char* last_error(void) {
  static char buf[4096];
  tri_last_error_message(buf, sizeof buf);
  return buf;
}

static tri_context* g_ctx;

static int setup(void** state) { return tri_context_create(NULL, TRI_VERSION_NUMBER, &g_ctx) == TRI_OK ? 0 : -1; }

static int teardown(void** state) {
  tri_context_destroy(g_ctx);
  return 0;
}

static tri_kernel* compile(const char* text, const char* name, const char* target, const char* cname, int64_t cval) {
  tri_module* m = NULL;
  tri_compile_options* o = NULL;
  tri_kernel* k = NULL;
  if (tri_module_create(g_ctx, text, strlen(text), "team.tri", &m) != TRI_OK) fail_msg("module: %s", last_error());
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(o, target), TRI_OK);
  if (cname) assert_int_equal(tri_compile_options_set_constexpr_int(o, cname, cval), TRI_OK);
  if (tri_kernel_compile(m, name, o, &k) != TRI_OK) fail_msg("compile @%s for %s: %s", name, target, last_error());
  tri_compile_options_destroy(o);
  tri_module_destroy(m);
  return k;
}

static tri_arg ptr_arg(void* p, uint64_t bytes, int32_t dtype) {
  tri_arg a;
  memset(&a, 0, sizeof a);
  a.value.p = p;
  a.extent = bytes;
  a.kind = TRI_TYPE_POINTER;
  a.dtype = dtype;
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

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void heap_allocator(void** state) {
  tri_team* t = NULL;
  uint64_t a, b, c;
  void* p;
  assert_int_equal(tri_team_create(g_ctx, 0, 1024, &t), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_team_create(g_ctx, 2, 0, &t), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_team_create(g_ctx, 5000, 1024, &t), TRI_ERROR_LIMIT_EXCEEDED);
  assert_int_equal(tri_team_create(g_ctx, 3, 1000, &t), TRI_OK); /* rounded up to 1024 */
  assert_int_equal(tri_team_alloc(t, 100, &a), TRI_OK);
  assert_int_equal(tri_team_alloc(t, 10, &b), TRI_OK);
  assert_int_equal(a, 0);
  assert_int_equal(b, 128); /* 64-byte granules */
  assert_int_equal(tri_team_alloc(t, 0, &c), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_team_alloc(t, 1024, &c), TRI_ERROR_OUT_OF_MEMORY);
  assert_non_null(strstr(last_error(), "bytes free"));
  /* Zero-filled on every rank, at one offset; ranks' copies are distinct memory. */
  for (uint32_t r = 0; r < 3; ++r) {
    assert_int_equal(tri_team_ptr(t, r, b, &p), TRI_OK);
    for (int i = 0; i < 10; ++i) assert_int_equal(((unsigned char*)p)[i], 0);
    memset(p, 0x5a, 10);
  }
  assert_int_equal(tri_team_free(t, b), TRI_OK);
  assert_int_equal(tri_team_free(t, b), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_team_alloc(t, 64, &c), TRI_OK);
  assert_int_equal(c, 128); /* first fit: the freed range, zeroed again */
  assert_int_equal(tri_team_ptr(t, 2, c, &p), TRI_OK);
  assert_int_equal(((unsigned char*)p)[0], 0);
  assert_int_equal(tri_team_ptr(t, 3, 0, &p), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_team_ptr(t, 0, 1024, &p), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_team_set_wait_timeout(NULL, 1), TRI_ERROR_INVALID_ARGUMENT);
  tri_team_destroy(t);
  tri_team_destroy(NULL);
}

/* Runs the ring on `ranks` ranks; returns the total of the consumers' error counts and checks
 * that every rank's consumer ran (its count was written). */
static long run_ring(tri_kernel* k, uint32_t ranks, int iters) {
  tri_team* t = NULL;
  uint64_t buf, dsig, ack;
  assert_int_equal(tri_team_create(g_ctx, ranks, 4096, &t), TRI_OK);
  assert_int_equal(tri_team_set_wait_timeout(t, 20000), TRI_OK);
  assert_int_equal(tri_team_alloc(t, 64 * 4, &buf), TRI_OK);
  assert_int_equal(tri_team_alloc(t, 4, &dsig), TRI_OK);
  assert_int_equal(tri_team_alloc(t, 4, &ack), TRI_OK);
  int32_t errors[8];
  tri_arg args[8 * 5];
  for (uint32_t r = 0; r < ranks; ++r) {
    void *pb, *pd, *pa;
    tri_team_ptr(t, r, buf, &pb);
    tri_team_ptr(t, r, dsig, &pd);
    tri_team_ptr(t, r, ack, &pa);
    errors[r] = -1;
    args[r * 5 + 0] = ptr_arg(pb, 64 * 4, TRI_DTYPE_I32);
    args[r * 5 + 1] = ptr_arg(pd, 4, TRI_DTYPE_I32);
    args[r * 5 + 2] = ptr_arg(pa, 4, TRI_DTYPE_I32);
    args[r * 5 + 3] = ptr_arg(&errors[r], 4, TRI_DTYPE_I32);
    args[r * 5 + 4] = i32_arg(iters);
  }
  if (tri_team_launch(k, t, 2, 1, 1, args, 5) != TRI_OK) fail_msg("ring on %u ranks: %s", ranks, last_error());
  long total = 0;
  for (uint32_t r = 0; r < ranks; ++r) {
    if (errors[r] < 0) fail_msg("rank %u's consumer wrote no count", r);
    total += errors[r];
  }
  tri_team_destroy(t);
  return total;
}

static void ring_handoffs_see_every_tile(void** state) {
  for (int ti = 0; ti < 2; ++ti) {
    const char* target = kTargets[ti];
    const int iters = ti == 0 ? 20 : 300;
    for (int mode = 0; mode < 2; ++mode) {
      tri_kernel* k = compile(ring_text(), "ring", target, "MODE", mode);
      for (uint32_t ranks = 2; ranks <= 8; ranks *= 2) {
        long bad = run_ring(k, ranks, iters);
        if (bad != 0) fail_msg("%s, MODE %d, %u ranks: %ld lanes read before their data arrived", target, mode, ranks, bad);
      }
      tri_kernel_destroy(k);
    }
  }
}

/* The check above is not vacuous: a notify that comes before the data is caught on every rank,
 * in (nearly) every lane of every iteration. */
static void notify_before_data_is_caught(void** state) {
  for (int ti = 0; ti < 2; ++ti) {
    const int iters = 10;
    tri_kernel* k = compile(ring_text(), "ring", kTargets[ti], "MODE", 2);
    for (uint32_t ranks = 2; ranks <= 8; ranks *= 2) {
      long bad = run_ring(k, ranks, iters);
      /* Iteration 0 reads zeros (lane 0 of rank 0's tile matches); the rest read tile i-1. */
      if (bad < (long)ranks * (iters - 1) * 64)
        fail_msg("%s, %u ranks: only %ld stale lanes seen", kTargets[ti], ranks, bad);
    }
    tri_kernel_destroy(k);
  }
}

static void waits_time_out_with_their_location(void** state) {
  for (int ti = 0; ti < 2; ++ti) {
    tri_kernel* k = compile(kStuck, "stuck", kTargets[ti], NULL, 0);
    tri_team* t = NULL;
    uint64_t sig;
    void *p0, *p1;
    assert_int_equal(tri_team_create(g_ctx, 2, 256, &t), TRI_OK);
    assert_int_equal(tri_team_alloc(t, 4, &sig), TRI_OK);
    tri_team_ptr(t, 0, sig, &p0);
    tri_team_ptr(t, 1, sig, &p1);
    tri_arg args[2] = {ptr_arg(p0, 4, TRI_DTYPE_I32), ptr_arg(p1, 4, TRI_DTYPE_I32)};
    assert_int_equal(tri_team_set_wait_timeout(t, 100), TRI_OK);
    double t0 = now();
    assert_int_equal(tri_team_launch(k, t, 1, 1, 1, args, 1), TRI_ERROR_RUNTIME);
    const char* msg = last_error();
    if (!strstr(msg, "rank 0: team.tri:7:") || !strstr(msg, "'wait' timed out after 100 ms") ||
        !strstr(msg, "holds 0") || !strstr(msg, "== 1"))
      fail_msg("%s: unexpected message: %s", kTargets[ti], msg);
    assert_true(now() - t0 < 10.0);
    /* Outside a team the kernel is rank 0 of 1: the same wait, with the default timeout, is
     * not run here; a signal already set returns at once. */
    *(int32_t*)p0 = 1;
    assert_int_equal(tri_launch(k, 1, 1, 1, NULL, args, 1), TRI_OK);
    tri_kernel_destroy(k);
    tri_team_destroy(t);
  }
}

static void a_failing_rank_stops_the_waits(void** state) {
  for (int ti = 0; ti < 2; ++ti) {
    tri_kernel* k = compile(kStuck, "stuck", kTargets[ti], "FAIL", 1);
    tri_team* t = NULL;
    uint64_t sig;
    void *p0, *p1;
    assert_int_equal(tri_team_create(g_ctx, 2, 256, &t), TRI_OK);
    assert_int_equal(tri_team_alloc(t, 4, &sig), TRI_OK);
    tri_team_ptr(t, 0, sig, &p0);
    tri_team_ptr(t, 1, sig, &p1);
    tri_arg args[2] = {ptr_arg(p0, 4, TRI_DTYPE_I32), ptr_arg(p1, 4, TRI_DTYPE_I32)};
    assert_int_equal(tri_team_set_wait_timeout(t, 60000), TRI_OK);
    double t0 = now();
    assert_int_equal(tri_team_launch(k, t, 1, 1, 1, args, 1), TRI_ERROR_RUNTIME);
    if (!strstr(last_error(), "rank 1: team.tri:") || !strstr(last_error(), "rank 1 gives up"))
      fail_msg("%s: unexpected message: %s", kTargets[ti], last_error());
    if (now() - t0 > 10.0) fail_msg("%s: rank 0 kept waiting after rank 1 failed", kTargets[ti]);
    tri_kernel_destroy(k);
    tri_team_destroy(t);
  }
}

static void symm_at_errors(void** state) {
  for (int ti = 0; ti < 2; ++ti) {
    tri_kernel* k = compile(kSymm, "symm", kTargets[ti], NULL, 0);
    tri_team* t = NULL;
    uint64_t off;
    void *p0, *p1;
    float host[4] = {0, 0, 0, 0};
    assert_int_equal(tri_team_create(g_ctx, 2, 256, &t), TRI_OK);
    assert_int_equal(tri_team_alloc(t, 16, &off), TRI_OK);
    tri_team_ptr(t, 0, off, &p0);
    tri_team_ptr(t, 1, off, &p1);
    /* Each rank writes its peer's copy. */
    tri_arg args[4] = {ptr_arg(p0, 16, TRI_DTYPE_F32), i32_arg(1), ptr_arg(p1, 16, TRI_DTYPE_F32), i32_arg(0)};
    assert_int_equal(tri_team_launch(k, t, 1, 1, 1, args, 2), TRI_OK);
    assert_true(*(float*)p0 == 1.0f && *(float*)p1 == 1.0f);
    /* A rank past the team. */
    args[3] = i32_arg(2);
    assert_int_equal(tri_team_launch(k, t, 1, 1, 1, args, 2), TRI_ERROR_RUNTIME);
    if (!strstr(last_error(), "rank 1: team.tri:2:") || !strstr(last_error(), "names rank 2, but the team has 2 ranks"))
      fail_msg("%s: unexpected message: %s", kTargets[ti], last_error());
    /* An address outside the rank's heap. */
    args[2] = ptr_arg(host, 16, TRI_DTYPE_F32);
    args[3] = i32_arg(0);
    assert_int_equal(tri_team_launch(k, t, 1, 1, 1, args, 2), TRI_ERROR_RUNTIME);
    if (!strstr(last_error(), "rank 1: team.tri:2:") || !strstr(last_error(), "is not in this rank's symmetric heap"))
      fail_msg("%s: unexpected message: %s", kTargets[ti], last_error());
    /* Argument errors name the rank; the count is per rank. */
    args[2] = ptr_arg(p1, 16, TRI_DTYPE_I32);
    assert_int_equal(tri_team_launch(k, t, 1, 1, 1, args, 2), TRI_ERROR_LAUNCH_ARGS);
    assert_non_null(strstr(last_error(), "rank 1: "));
    assert_int_equal(tri_team_launch(k, t, 1, 1, 1, args, 4), TRI_ERROR_LAUNCH_ARGS);
    assert_int_equal(tri_team_launch(NULL, t, 1, 1, 1, args, 2), TRI_ERROR_INVALID_ARGUMENT);
    /* Outside a team: rank 0 is the identity, rank 1 an error. */
    args[0] = ptr_arg(host, 16, TRI_DTYPE_F32);
    args[1] = i32_arg(0);
    assert_int_equal(tri_launch(k, 1, 1, 1, NULL, args, 2), TRI_OK);
    assert_true(host[0] == 1.0f);
    args[1] = i32_arg(1);
    assert_int_equal(tri_launch(k, 1, 1, 1, NULL, args, 2), TRI_ERROR_RUNTIME);
    assert_non_null(strstr(last_error(), "outside a team is rank 0 of 1"));
    tri_kernel_destroy(k);
    tri_team_destroy(t);
  }
}

/* Kernels that wait need every program running: more than 1024 in all is refused up front. */
static void coresidency_limit(void** state) {
  for (int ti = 0; ti < 2; ++ti) {
    tri_kernel* k = compile(kStuck, "stuck", kTargets[ti], NULL, 0);
    tri_team* t = NULL;
    assert_int_equal(tri_team_create(g_ctx, 8, 256, &t), TRI_OK);
    void* p;
    tri_team_ptr(t, 0, 0, &p);
    tri_arg args[8];
    for (int r = 0; r < 8; ++r) args[r] = ptr_arg(p, 0, TRI_DTYPE_I32);
    assert_int_equal(tri_team_launch(k, t, 129, 1, 1, args, 1), TRI_ERROR_LIMIT_EXCEEDED);
    assert_non_null(strstr(last_error(), "1032 in all"));
    assert_int_equal(tri_launch(k, 1025, 1, 1, NULL, args, 1), TRI_ERROR_LIMIT_EXCEEDED);
    tri_kernel_destroy(k);
    tri_team_destroy(t);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(heap_allocator),
      cmocka_unit_test(ring_handoffs_see_every_tile),
      cmocka_unit_test(notify_before_data_is_caught),
      cmocka_unit_test(waits_time_out_with_their_location),
      cmocka_unit_test(a_failing_rank_stops_the_waits),
      cmocka_unit_test(symm_at_errors),
      cmocka_unit_test(coresidency_limit),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
