/* Hardening (issue 9): what a hostile or unlucky host can do through the C API must end in a
 * result code and a message, never a crash, a hang or TRI_OK with wrong results. One test per
 * point of the issue: worker threads that cannot start, callbacks that re-enter the library,
 * cancelling a launch that never ends, NULL buffers, grid and block limits, argument counts,
 * the interpreter's memory budget, the bound on compiled specializations, and the contract
 * mismatches (inline_asm on the interpreter, empty modules, call depth, integer values for float
 * constexprs, last-error messages across callbacks), plus empty grids on every target.
 *
 * Tests that hung before their fix run under alarm(): a hang fails the test instead of the CI job
 * waiting forever. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tri/tri.h"

static const char* last_error(void) {
  static char buf[8192];
  tri_last_error_message(buf, sizeof buf);
  return buf;
}

static tri_context* new_context(tri_context_options* o) {
  tri_context* c = NULL;
  if (tri_context_create(o, TRI_VERSION_NUMBER, &c) != TRI_OK) fail_msg("tri_context_create: %s", last_error());
  return c;
}

static tri_module* new_module(tri_context* c, const char* text) {
  tri_module* m = NULL;
  if (tri_module_create(c, text, strlen(text), "harden.tri", &m) != TRI_OK)
    fail_msg("tri_module_create: %s", last_error());
  return m;
}

static tri_result try_compile(tri_module* m, const char* name, const char* target, tri_kernel** out) {
  tri_compile_options* o = NULL;
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(o, target), TRI_OK);
  tri_result r = tri_kernel_compile(m, name, o, out);
  tri_compile_options_destroy(o);
  return r;
}

static tri_kernel* compile(tri_module* m, const char* name, const char* target) {
  tri_kernel* k = NULL;
  if (try_compile(m, name, target, &k) != TRI_OK) fail_msg("tri_kernel_compile(%s): %s", target, last_error());
  return k;
}

static tri_arg ptr_arg(const void* p, uint64_t bytes, int32_t dtype) {
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

static int contains(const char* s, const char* part) { return strstr(s, part) != NULL; }

/* out[pid] = 1 for every program of axis 0. */
static const char kMark[] =
    "kernel @mark(%out: ptr<i32>) {\n"
    "  %pid = program_id[axis=0] : i32\n"
    "  %one = const[value=1] : i32\n"
    "  %p = addptr %out, %pid : ptr<i32>\n"
    "  store %p, %one\n"
    "  return\n"
    "}\n";

/* The scale kernel of test_kernel.c: out[i] = x[i] * s for i < n, BLOCK lanes per program. */
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
    "  %ob = splat %out : <BLOCK x ptr<f32>>\n"
    "  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>\n"
    "  store %op, %v, mask=%mask\n"
    "  return\n"
    "}\n";

/* ---- 1. Worker threads that cannot start ----------------------------------------------------
 * In a child process whose address space is capped just above what it uses, the context's first
 * CPU launch cannot start a single 64 MiB-stack worker: the launch must fail with
 * TRI_ERROR_OUT_OF_MEMORY (it aborted the process before), and succeed once the cap is lifted. */
static void worker_threads_that_cannot_start_fail_the_launch(void** state) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  print_message("skipped under a sanitizer: it reserves the address space itself\n");
  return;
#else
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    tri_context* c = new_context(NULL);
    tri_module* m = new_module(c, kMark);
    tri_kernel* k = compile(m, "mark", "cpu");
    int32_t out[64] = {0};
    tri_arg a = ptr_arg(out, sizeof out, TRI_DTYPE_I32);
    long pages = 0;
    FILE* f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld", &pages) != 1) _exit(100);
    fclose(f);
    struct rlimit old, cap;
    getrlimit(RLIMIT_AS, &old);
    cap = old;
    cap.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)32 << 20);
    if (setrlimit(RLIMIT_AS, &cap) != 0) _exit(101);
    tri_result capped = tri_launch(k, 64, 1, 1, NULL, &a, 1);
    int named = contains(last_error(), "worker thread");
    setrlimit(RLIMIT_AS, &old);
    tri_result freed = tri_launch(k, 64, 1, 1, NULL, &a, 1);
    if (capped != TRI_ERROR_OUT_OF_MEMORY) _exit(110 + capped);
    if (!named) _exit(102);
    if (freed != TRI_OK || out[63] != 1) _exit(103);
    _exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status)) fail_msg("the child died of signal %d (abort: the library could not start a thread)",
                                    WTERMSIG(status));
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
#endif
}

/* ---- 2. Callbacks that re-enter the library --------------------------------------------------
 * A print op's output reaches the log sink, which launches another CPU kernel of the same
 * context; the outer launch has 64 programs, so the prints come from busy pool workers and from
 * the joined caller. It hung before. */
static const char kTalk[] =
    "kernel @talk(%n: i32) {\n"
    "  %pid = program_id[axis=0] : i32\n"
    "  print[prefix=\"talk \"] %pid\n"
    "  return\n"
    "}\n";

struct Reentry {
  tri_kernel* inner;
  int32_t* out;
  int launches;
  int failures;
};

static void launching_sink(void* user, int32_t level, const char* message) {
  struct Reentry* r = (struct Reentry*)user;
  if (!r->inner || strncmp(message, "talk ", 5) != 0) return;
  tri_arg a = ptr_arg(r->out + 8 * (r->launches % 64), 8 * sizeof(int32_t), TRI_DTYPE_I32);
  r->launches++;  // prints of one launch are serialized
  if (tri_launch(r->inner, 8, 1, 1, NULL, &a, 1) != TRI_OK) r->failures++;
}

static void log_callbacks_may_launch_on_the_same_context(void** state) {
  alarm(120);
  static int32_t out[8 * 64];
  struct Reentry r = {NULL, out, 0, 0};
  tri_context_options* o = NULL;
  assert_int_equal(tri_context_options_create(&o), TRI_OK);
  assert_int_equal(tri_context_options_set_log(o, launching_sink, &r, TRI_LOG_INFO), TRI_OK);
  tri_context* c = new_context(o);
  tri_context_options_destroy(o);
  tri_module* outer_m = new_module(c, kTalk);
  tri_module* inner_m = new_module(c, kMark);
  for (int t = 0; t < 2; ++t) {
    const char* target = t ? "interp" : "cpu";
    memset(out, 0, sizeof out);
    r.launches = r.failures = 0;
    r.inner = compile(inner_m, "mark", "cpu");
    tri_kernel* outer = compile(outer_m, "talk", target);
    tri_arg n = i32_arg(0);
    assert_int_equal(tri_launch(outer, 64, 1, 1, NULL, &n, 1), TRI_OK);
    assert_int_equal(r.launches, 64);
    assert_int_equal(r.failures, 0);
    for (int i = 0; i < 8 * 64; ++i) assert_int_equal(out[i], 1);
    tri_kernel_destroy(outer);
    tri_kernel_destroy(r.inner);
    r.inner = NULL;
  }
  tri_module_destroy(outer_m);
  tri_module_destroy(inner_m);
  tri_context_destroy(c);
  alarm(0);
}

/* ---- 14. A failing call inside the log callback keeps the outer call's message -------------- */
struct Nested {
  tri_context* context;
  int depth;
  tri_result inner;
};

static void failing_sink(void* user, int32_t level, const char* message) {
  struct Nested* n = (struct Nested*)user;
  if (level != TRI_LOG_ERROR || n->depth) return;
  n->depth++;
  tri_module* m = NULL;
  n->inner = tri_module_create(n->context, "kernel @", 8, "inner.tri", &m);
  n->depth--;
}

static void a_failure_inside_the_log_callback_keeps_the_outer_message(void** state) {
  struct Nested n = {NULL, 0, TRI_OK};
  tri_context_options* o = NULL;
  assert_int_equal(tri_context_options_create(&o), TRI_OK);
  assert_int_equal(tri_context_options_set_log(o, failing_sink, &n, TRI_LOG_ERROR), TRI_OK);
  n.context = new_context(o);
  tri_context_options_destroy(o);
  /* A verify error (an undefined value) in outer.tri; the sink's own call fails to parse. */
  const char bad[] = "kernel @k(%out: ptr<i32>) {\n  store %out, %nothing\n  return\n}\n";
  tri_module* m = NULL;
  tri_result r = tri_module_create(n.context, bad, strlen(bad), "outer.tri", &m);
  assert_int_not_equal(r, TRI_OK);
  assert_int_equal(n.inner, TRI_ERROR_PARSE);
  if (!contains(last_error(), "outer.tri")) fail_msg("the outer message was replaced: '%s'", last_error());
  /* Launch failures are logged too: a checked-mode error keeps its own message. */
  tri_module* sm = new_module(n.context, kScale);
  tri_compile_options* co = NULL;
  assert_int_equal(tri_compile_options_create(&co), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(co, "interp"), TRI_OK);
  assert_int_equal(tri_compile_options_set_checked(co, 1), TRI_OK);
  tri_kernel* k = NULL;
  assert_int_equal(tri_kernel_compile(sm, "scale", co, &k), TRI_OK);
  tri_compile_options_destroy(co);
  float x[4] = {0}, y[4] = {0};
  tri_arg args[3] = {ptr_arg(x, sizeof x, TRI_DTYPE_F32), ptr_arg(y, sizeof y, TRI_DTYPE_F32), i32_arg(16)};
  n.inner = TRI_OK;
  assert_int_equal(tri_launch(k, 1, 1, 1, NULL, args, 3), TRI_ERROR_RUNTIME);
  assert_int_equal(n.inner, TRI_ERROR_PARSE);
  if (!contains(last_error(), "out of bounds")) fail_msg("the launch's message was replaced: '%s'", last_error());
  tri_kernel_destroy(k);
  tri_module_destroy(sm);
  tri_context_destroy(n.context);
}

/* ---- 3. Cancelling a launch that never ends -------------------------------------------------- */
static const char kSpin[] =
    /* while (i >= 0) i += n, with n = 0 at launch: never ends. */
    "kernel @spin(%out: ptr<i32>, %n: i32) {\n"
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
    "  store %out, %w\n"
    "  return\n"
    "}\n"
    /* A for of 2^40 steps that stores on each. */
    "kernel @count(%out: ptr<i64>) {\n"
    "  %lo = const[value=0] : i64\n"
    "  %hi = const[value=1099511627776] : i64\n"
    "  %one = const[value=1] : i64\n"
    "  %r = for %lo, %hi, %one, %lo {\n"
    "  ^(%k: i64, %acc: i64):\n"
    "    %a2 = add %acc, %one : i64\n"
    "    store %out, %a2\n"
    "    yield %a2\n"
    "  } : i64\n"
    "  return\n"
    "}\n"
    /* Nothing at all: a huge grid of these ends only at program boundaries. */
    "kernel @nop(%n: i32) {\n"
    "  return\n"
    "}\n";

struct Canceller {
  tri_context* context;
  int delay_ms;
};

static void* cancel_later(void* arg) {
  struct Canceller* c = (struct Canceller*)arg;
  struct timespec ts = {c->delay_ms / 1000, (long)(c->delay_ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  tri_context_cancel(c->context);
  return NULL;
}

static tri_result launch_and_cancel(tri_context* c, tri_kernel* k, uint32_t gx, uint32_t gy, const tri_arg* args,
                                    uint32_t n) {
  struct Canceller cc = {c, 200};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, cancel_later, &cc), 0);
  tri_result r = tri_launch(k, gx, gy, 1, NULL, args, n);
  pthread_join(t, NULL);
  return r;
}

static void cancel_stops_a_launch_that_never_ends(void** state) {
  alarm(120);
  tri_context* c = new_context(NULL);
  tri_module* m = new_module(c, kSpin);
  assert_int_equal(tri_context_cancel(NULL), TRI_ERROR_INVALID_ARGUMENT);
  for (int t = 0; t < 2; ++t) {
    const char* target = t ? "interp" : "cpu";
    int32_t out32 = 0;
    int64_t out64 = 0;
    tri_kernel* spin = compile(m, "spin", target);
    tri_arg sa[2] = {ptr_arg(&out32, 4, TRI_DTYPE_I32), i32_arg(0)};
    /* Several programs on the CPU: every worker's instance must stop. */
    assert_int_equal(launch_and_cancel(c, spin, t ? 1 : 8, 1, sa, 2), TRI_ERROR_CANCELLED);
    if (!contains(last_error(), "cancel")) fail_msg("message: '%s'", last_error());
    /* A cancel made before a launch does not touch it: the same kernel ends normally. */
    sa[1] = i32_arg(-1);
    assert_int_equal(tri_launch(spin, 1, 1, 1, NULL, sa, 2), TRI_OK);
    assert_int_equal(out32, -1);

    tri_kernel* count = compile(m, "count", target);
    tri_arg ca = ptr_arg(&out64, 8, TRI_DTYPE_I64);
    assert_int_equal(launch_and_cancel(c, count, 1, 1, &ca, 1), TRI_ERROR_CANCELLED);
    assert_true(out64 < (int64_t)1 << 40);  /* stopped early */
    if (t) assert_true(out64 > 0);          /* (the CPU may keep the count in a register) */

    tri_kernel* nop = compile(m, "nop", target);
    tri_arg na = i32_arg(0);
    assert_int_equal(launch_and_cancel(c, nop, 0x7fffffffu, 65535, &na, 1), TRI_ERROR_CANCELLED);
    assert_int_equal(tri_launch(nop, 4, 1, 1, NULL, &na, 1), TRI_OK);
    tri_kernel_destroy(spin);
    tri_kernel_destroy(count);
    tri_kernel_destroy(nop);
  }
  tri_module_destroy(m);
  tri_context_destroy(c);
  alarm(0);
}

/* A log sink may cancel too: the print inside the loop asks for it. */
static const char kChatty[] =
    "kernel @chatty(%n: i32) {\n"
    "  %c0 = const[value=0] : i32\n"
    "  %c1 = const[value=1] : i32\n"
    "  %w = while %c0 {\n"
    "  ^(%i: i32):\n"
    "    %more = cmp[pred=sge] %i, %c0 : i1\n"
    "    condition %more, %i\n"
    "  } {\n"
    "  ^(%i2: i32):\n"
    "    print[prefix=\"tick \"] %i2\n"
    "    %next = add %i2, %n : i32\n"
    "    yield %next\n"
    "  } : i32\n"
    "  return\n"
    "}\n";

struct Ticks {
  tri_context* context;
  int ticks;
};

static void cancelling_sink(void* user, int32_t level, const char* message) {
  struct Ticks* t = (struct Ticks*)user;
  if (strncmp(message, "tick ", 5) == 0 && ++t->ticks == 3) tri_context_cancel(t->context);
}

static void a_log_callback_may_cancel(void** state) {
  alarm(120);
  struct Ticks ticks = {NULL, 0};
  tri_context_options* o = NULL;
  assert_int_equal(tri_context_options_create(&o), TRI_OK);
  assert_int_equal(tri_context_options_set_log(o, cancelling_sink, &ticks, TRI_LOG_INFO), TRI_OK);
  ticks.context = new_context(o);
  tri_context_options_destroy(o);
  tri_module* m = new_module(ticks.context, kChatty);
  for (int t = 0; t < 2; ++t) {
    ticks.ticks = 0;
    tri_kernel* k = compile(m, "chatty", t ? "interp" : "cpu");
    tri_arg a = i32_arg(0);
    assert_int_equal(tri_launch(k, 1, 1, 1, NULL, &a, 1), TRI_ERROR_CANCELLED);
    assert_int_equal(ticks.ticks, 3);  /* stopped at the back-edge after the third print */
    tri_kernel_destroy(k);
  }
  assert_string_equal(tri_result_name(TRI_ERROR_CANCELLED), "TRI_ERROR_CANCELLED");
  tri_module_destroy(m);
  tri_context_destroy(ticks.context);
  alarm(0);
}

/* ---- 4. NULL buffers --------------------------------------------------------------------------
 * Checked mode reports a NULL pointer like an out-of-bounds access whatever extent came with it
 * (it crashed before); the interpreter without checked mode reports an access below 4096; a
 * NULL pointer that is never dereferenced (every lane masked off) is fine on every host target. */
static void null_buffers_are_reported(void** state) {
  tri_context* c = new_context(NULL);
  tri_module* m = new_module(c, kScale);
  float y[64] = {0};
  tri_compile_options* co = NULL;
  assert_int_equal(tri_compile_options_create(&co), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(co, "interp"), TRI_OK);
  assert_int_equal(tri_compile_options_set_checked(co, 1), TRI_OK);
  tri_kernel* checked = NULL;
  assert_int_equal(tri_kernel_compile(m, "scale", co, &checked), TRI_OK);
  tri_compile_options_destroy(co);
  tri_arg args[3] = {ptr_arg(NULL, 64, TRI_DTYPE_F32), ptr_arg(y, sizeof y, TRI_DTYPE_F32), i32_arg(16)};
  assert_int_equal(tri_launch(checked, 1, 1, 1, NULL, args, 3), TRI_ERROR_RUNTIME);
  if (!contains(last_error(), "out of bounds") || !contains(last_error(), "%x is NULL"))
    fail_msg("message: '%s'", last_error());
  args[0].extent = 0;
  assert_int_equal(tri_launch(checked, 1, 1, 1, NULL, args, 3), TRI_ERROR_RUNTIME);

  tri_kernel* plain = compile(m, "scale", "interp");
  assert_int_equal(tri_launch(plain, 1, 1, 1, NULL, args, 3), TRI_ERROR_RUNTIME);
  if (!contains(last_error(), "NULL")) fail_msg("message: '%s'", last_error());

  /* n = 0: every lane is masked off, the NULL pointer is never dereferenced. */
  tri_kernel* cpu = compile(m, "scale", "cpu");
  args[2] = i32_arg(0);
  args[1] = ptr_arg(NULL, 0, TRI_DTYPE_F32);
  assert_int_equal(tri_launch(checked, 4, 1, 1, NULL, args, 3), TRI_OK);
  assert_int_equal(tri_launch(plain, 4, 1, 1, NULL, args, 3), TRI_OK);
  assert_int_equal(tri_launch(cpu, 4, 1, 1, NULL, args, 3), TRI_OK);
  tri_kernel_destroy(checked);
  tri_kernel_destroy(plain);
  tri_kernel_destroy(cpu);
  tri_module_destroy(m);
  tri_context_destroy(c);
}

/* ---- 5. Grid limits, and the empty grid -------------------------------------------------------
 * x at most 2^31 - 1, y and z at most 65535, on every target; before, (2^31, 2^31, 4) wrapped to
 * 0 instances and returned TRI_OK. A zero dimension is an empty launch that succeeds (it was
 * TRI_ERROR_INVALID_ARGUMENT). */
static void grids_past_the_limits_are_refused(void** state) {
  tri_context* c = new_context(NULL);
  tri_module* m = new_module(c, kMark);
  static const uint32_t bad[][3] = {{0x80000000u, 0x80000000u, 4},
                                    {0x80000000u, 1, 1},
                                    {1, 65536, 1},
                                    {1, 1, 65536},
                                    {0xffffffffu, 0xffffffffu, 0xffffffffu}};
  int32_t out[8] = {0};
  tri_arg a = ptr_arg(out, sizeof out, TRI_DTYPE_I32);
  for (int t = 0; t < 2; ++t) {
    tri_kernel* k = compile(m, "mark", t ? "interp" : "cpu");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
      assert_int_equal(tri_launch(k, bad[i][0], bad[i][1], bad[i][2], NULL, &a, 1), TRI_ERROR_INVALID_ARGUMENT);
      if (!contains(last_error(), "2147483647") || !contains(last_error(), "65535"))
        fail_msg("message: '%s'", last_error());
    }
    tri_launch_plan* plan = NULL;
    assert_int_equal(tri_launch_plan_create(k, 0x80000000u, 1, 1, NULL, &a, 1, &plan), TRI_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tri_launch_plan_create(k, 1, 1, 1, NULL, &a, 1, &plan), TRI_OK);
    assert_int_equal(tri_launch_plan_set_grid(plan, 1, 65536, 1), TRI_ERROR_INVALID_ARGUMENT);
    tri_launch_plan_destroy(plan);
    tri_kernel_destroy(k);
  }
  tri_module_destroy(m);
  /* At the limits, program ids and num_programs are the grid's (i32 in the IR). */
  const char np[] =
      "kernel @np(%out: ptr<i32>) {\n"
      "  %y = program_id[axis=1] : i32\n"
      "  %ny = num_programs[axis=1] : i32\n"
      "  %last = sub %ny, %y : i32\n"
      "  %one = const[value=1] : i32\n"
      "  %is = cmp[pred=eq] %last, %one : i1\n"
      "  if %is {\n"
      "    store %out, %ny\n"
      "    %o1 = addptr %out, %one : ptr<i32>\n"
      "    store %o1, %y\n"
      "    yield\n"
      "  }\n"
      "  return\n"
      "}\n";
  m = new_module(c, np);
  for (int t = 0; t < 2; ++t) {
    tri_kernel* k = compile(m, "np", t ? "interp" : "cpu");
    int32_t o[2] = {0, 0};
    tri_arg oa = ptr_arg(o, sizeof o, TRI_DTYPE_I32);
    assert_int_equal(tri_launch(k, 1, 65535, 1, NULL, &oa, 1), TRI_OK);
    assert_int_equal(o[0], 65535);
    assert_int_equal(o[1], 65534);
    tri_kernel_destroy(k);
  }
  tri_module_destroy(m);
  tri_context_destroy(c);
}

static void an_empty_grid_is_a_successful_no_op(void** state) {
  tri_context* c = new_context(NULL);
  tri_module* m = new_module(c, kMark);
  int32_t out[8] = {0};
  tri_arg a = ptr_arg(out, sizeof out, TRI_DTYPE_I32);
  for (int t = 0; t < 2; ++t) {
    tri_kernel* k = compile(m, "mark", t ? "interp" : "cpu");
    assert_int_equal(tri_launch(k, 0, 1, 1, NULL, &a, 1), TRI_OK);
    assert_int_equal(tri_launch(k, 8, 0, 1, NULL, &a, 1), TRI_OK);
    assert_int_equal(tri_launch(k, 8, 1, 0, NULL, &a, 1), TRI_OK);
    for (int i = 0; i < 8; ++i) assert_int_equal(out[i], 0);
    /* The arguments are still checked. */
    assert_int_equal(tri_launch(k, 0, 1, 1, NULL, &a, 0), TRI_ERROR_LAUNCH_ARGS);
    tri_launch_plan* plan = NULL;
    assert_int_equal(tri_launch_plan_create(k, 0, 0, 0, NULL, &a, 1, &plan), TRI_OK);
    assert_int_equal(tri_launch_plan_launch(plan), TRI_OK);
    assert_int_equal(tri_launch_plan_set_grid(plan, 8, 1, 1), TRI_OK);
    assert_int_equal(tri_launch_plan_launch(plan), TRI_OK);
    for (int i = 0; i < 8; ++i) assert_int_equal(out[i], 1);
    memset(out, 0, sizeof out);
    tri_launch_plan_destroy(plan);
    tri_kernel_destroy(k);
  }
  /* The cuda target, where this build has it: TRI_LIBCUDA names no library (main() sets it), so
   * any driver call fails; the empty launch must not make one. */
  tri_compile_options* co = NULL;
  assert_int_equal(tri_compile_options_create(&co), TRI_OK);
  if (tri_compile_options_set_target(co, "cuda") == TRI_OK) {
    assert_int_equal(tri_compile_options_set_arch(co, "sm_80"), TRI_OK);
    tri_kernel* k = NULL;
    if (tri_kernel_compile(m, "mark", co, &k) == TRI_OK) {
      tri_arg dev = ptr_arg((const void*)(uintptr_t)0x10000, 32, TRI_DTYPE_I32);
      assert_int_equal(tri_launch(k, 0, 1, 1, NULL, &dev, 1), TRI_OK);
      assert_int_not_equal(tri_launch(k, 1, 1, 1, NULL, &dev, 1), TRI_OK);  /* it would need the driver */
      tri_kernel_destroy(k);
    } else {
      print_message("the cuda target does not compile here (%s): its empty launch is not tested\n", last_error());
    }
  } else {
    print_message("no cuda target in this build: its empty launch is not tested\n");
  }
  tri_compile_options_destroy(co);
  tri_module_destroy(m);
  tri_context_destroy(c);
}

/* ---- 6. Block element limits ------------------------------------------------------------------
 * 2^80 elements wrapped to 0 and the interpreter skipped a store; now the verifier refuses more
 * than 2^20 elements per block, in the module and after specialization. */
static void blocks_over_the_element_limit_are_refused(void** state) {
  tri_context* c = new_context(NULL);
  const char huge[] =
      "kernel @huge(%out: ptr<f32>) {\n"
      "  %z = const[value=0.0] : <1048576 x 1048576 x 1048576 x 1048576 x f32>\n"
      "  return\n"
      "}\n";
  tri_module* m = NULL;
  assert_int_equal(tri_module_create(c, huge, strlen(huge), "huge.tri", &m), TRI_ERROR_VERIFY);
  if (!contains(last_error(), "2^80") || !contains(last_error(), "1048576")) fail_msg("message: '%s'", last_error());

  const char square[] =
      "kernel @square(%out: ptr<f32>) constexpr(B: i32 = 8) {\n"
      "  %z = const[value=1.0] : <B x B x f32>\n"
      "  %r = reduce[axis=0, kind=sum] %z : <B x f32>\n"
      "  %s = reduce[axis=0, kind=sum] %r : f32\n"
      "  store %out, %s\n"
      "  return\n"
      "}\n";
  m = new_module(c, square);
  tri_compile_options* co = NULL;
  assert_int_equal(tri_compile_options_create(&co), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(co, "interp"), TRI_OK);
  tri_kernel* k = NULL;
  assert_int_equal(tri_compile_options_set_constexpr_int(co, "B", 2048), TRI_OK);
  assert_int_equal(tri_kernel_compile(m, "square", co, &k), TRI_ERROR_VERIFY);
  if (!contains(last_error(), "2^22") || !contains(last_error(), "1048576")) fail_msg("message: '%s'", last_error());
  assert_int_equal(tri_compile_options_set_constexpr_int(co, "B", 1024), TRI_OK);  /* 2^20: the limit */
  assert_int_equal(tri_kernel_compile(m, "square", co, &k), TRI_OK);
  tri_compile_options_destroy(co);
  float out = 0;
  tri_arg a = ptr_arg(&out, 4, TRI_DTYPE_F32);
  assert_int_equal(tri_launch(k, 1, 1, 1, NULL, &a, 1), TRI_OK);
  assert_true(out == 1048576.0f);
  tri_kernel_destroy(k);
  tri_module_destroy(m);
  tri_context_destroy(c);
}

/* ---- 7. The argument count is checked before anything is allocated -------------------------- */
static void argument_counts_are_checked_first(void** state) {
  tri_context* c = new_context(NULL);
  tri_module* m = new_module(c, kMark);
  tri_kernel* k = compile(m, "mark", "interp");
  tri_arg a[2];
  memset(a, 0, sizeof a);
  assert_int_equal(tri_launch(k, 1, 1, 1, NULL, a, UINT32_MAX), TRI_ERROR_LAUNCH_ARGS);
  if (!contains(last_error(), "4294967295")) fail_msg("message: '%s'", last_error());
  assert_int_equal(tri_launch(k, 1, 1, 1, NULL, a, 1u << 28), TRI_ERROR_LAUNCH_ARGS);
  assert_int_equal(tri_launch(k, 1, 1, 1, NULL, NULL, 1u << 28), TRI_ERROR_LAUNCH_ARGS);
  tri_kernel_destroy(k);
  tri_module_destroy(m);
  tri_context_destroy(c);
}

/* ---- 8. The interpreter's memory budget --------------------------------------------------------- */
static const char kBig[] =
    "kernel @big(%out: ptr<f32>) {\n"
    "  %r = arange[start=0, end=65536] : <65536 x i32>\n"
    "  %ob = splat %out : <65536 x ptr<f32>>\n"
    "  %op = addptr %ob, %r : <65536 x ptr<f32>>\n"
    "  %v = const[value=1.0] : <65536 x f32>\n"
    "  store %op, %v\n"
    "  return\n"
    "}\n";

static void the_interpreter_keeps_to_its_memory_budget(void** state) {
  float* out = calloc(65536, sizeof(float));
  assert_non_null(out);
  tri_arg a = ptr_arg(out, 65536 * sizeof(float), TRI_DTYPE_F32);
  for (int budgeted = 1; budgeted >= 0; --budgeted) {
    tri_context_options* o = NULL;
    assert_int_equal(tri_context_options_create(&o), TRI_OK);
    assert_int_equal(tri_context_options_set_interp_memory_limit(o, budgeted ? (uint64_t)1 << 20 : 0), TRI_OK);
    tri_context* c = new_context(o);
    tri_context_options_destroy(o);
    tri_module* m = new_module(c, kBig);
    tri_kernel* k = compile(m, "big", "interp");
    tri_kernel* cpu = compile(m, "big", "cpu");
    if (budgeted) {
      assert_int_equal(tri_launch(k, 1, 1, 1, NULL, &a, 1), TRI_ERROR_LIMIT_EXCEEDED);
      if (!contains(last_error(), "1048576") || !contains(last_error(), "tri_context_options_set_interp_memory_limit"))
        fail_msg("message: '%s'", last_error());
      assert_true(out[0] == 0.0f);  /* refused before running */
      assert_int_equal(tri_launch(cpu, 1, 1, 1, NULL, &a, 1), TRI_OK);  /* other targets ignore it */
      assert_true(out[65535] == 1.0f);
      out[0] = out[65535] = 0.0f;
    } else {
      assert_int_equal(tri_launch(k, 1, 1, 1, NULL, &a, 1), TRI_OK);
      assert_true(out[0] == 1.0f && out[65535] == 1.0f);
    }
    tri_kernel_destroy(k);
    tri_kernel_destroy(cpu);
    tri_module_destroy(m);
    tri_context_destroy(c);
  }
  free(out);
}

/* ---- 9. The bound on compiled specializations ---------------------------------------------------
 * The log at TRI_LOG_DEBUG says "compiled kernel @scale" for each real compile: with a capacity
 * of 2, the third specialization pushes the first out, and compiling the first again compiles
 * (before, every specialization stayed forever). One still held by a kernel handle is found. */
static int g_compiles;

static void counting_sink(void* user, int32_t level, const char* message) {
  if (level == TRI_LOG_DEBUG && strncmp(message, "compiled kernel @", 17) == 0) g_compiles++;
}

static tri_kernel* compile_block(tri_module* m, int64_t block) {
  tri_compile_options* co = NULL;
  assert_int_equal(tri_compile_options_create(&co), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(co, "interp"), TRI_OK);
  assert_int_equal(tri_compile_options_set_constexpr_int(co, "BLOCK", block), TRI_OK);
  tri_kernel* k = NULL;
  if (tri_kernel_compile(m, "scale", co, &k) != TRI_OK) fail_msg("compile: %s", last_error());
  tri_compile_options_destroy(co);
  return k;
}

static void compiled_specializations_are_bounded(void** state) {
  tri_context_options* o = NULL;
  assert_int_equal(tri_context_options_create(&o), TRI_OK);
  assert_int_equal(tri_context_options_set_log(o, counting_sink, NULL, TRI_LOG_DEBUG), TRI_OK);
  assert_int_equal(tri_context_options_set_kernel_cache_capacity(o, 2), TRI_OK);
  tri_context* c = new_context(o);
  tri_context_options_destroy(o);
  tri_module* m = new_module(c, kScale);
  g_compiles = 0;
  tri_kernel_destroy(compile_block(m, 16));
  tri_kernel_destroy(compile_block(m, 32));
  tri_kernel_destroy(compile_block(m, 16));  /* in the cache: no compile */
  assert_int_equal(g_compiles, 2);
  tri_kernel_destroy(compile_block(m, 64));   /* pushes out 32, the least recently used */
  tri_kernel_destroy(compile_block(m, 16));
  assert_int_equal(g_compiles, 3);
  tri_kernel_destroy(compile_block(m, 32));   /* compiled again */
  assert_int_equal(g_compiles, 4);

  tri_kernel* held = compile_block(m, 128);   /* held by a handle while others push it out */
  assert_int_equal(g_compiles, 5);
  for (int64_t b = 256; b <= 2048; b *= 2) tri_kernel_destroy(compile_block(m, b));
  assert_int_equal(g_compiles, 9);
  tri_kernel* again = compile_block(m, 128);
  assert_int_equal(g_compiles, 9);
  tri_kernel_destroy(again);
  tri_kernel_destroy(held);

  /* Capacity 0: nothing that no handle holds is kept. */
  assert_int_equal(tri_context_options_create(&o), TRI_OK);
  assert_int_equal(tri_context_options_set_log(o, counting_sink, NULL, TRI_LOG_DEBUG), TRI_OK);
  assert_int_equal(tri_context_options_set_kernel_cache_capacity(o, 0), TRI_OK);
  tri_context* c0 = new_context(o);
  tri_context_options_destroy(o);
  tri_module* m0 = new_module(c0, kScale);
  g_compiles = 0;
  tri_kernel_destroy(compile_block(m0, 16));
  tri_kernel_destroy(compile_block(m0, 16));
  assert_int_equal(g_compiles, 2);
  tri_module_destroy(m0);
  tri_context_destroy(c0);
  tri_module_destroy(m);
  tri_context_destroy(c);
}

/* ---- 10. inline_asm is refused when compiling for the interpreter ------------------------------ */
static void inline_asm_is_refused_at_compile_on_the_interpreter(void** state) {
  tri_context* c = new_context(NULL);
  const char text[] =
      "func @via(%x: i32) -> (i32) {\n"
      "  %r = inline_asm[asm=\"mov.b32 $0, $1;\", constraints=\"=r,r\"] %x : i32\n"
      "  return %r\n"
      "}\n"
      "kernel @asm(%out: ptr<i32>, %x: i32) {\n"
      "  %r = call[callee=@via] %x : i32\n"
      "  store %out, %r\n"
      "  return\n"
      "}\n";
  tri_module* m = new_module(c, text);
  tri_kernel* k = NULL;
  assert_int_equal(try_compile(m, "asm", "interp", &k), TRI_ERROR_UNSUPPORTED);
  if (!contains(last_error(), "harden.tri:2:") || !contains(last_error(), "inline_asm"))
    fail_msg("message: '%s'", last_error());
  assert_null(k);
  tri_module_destroy(m);
  tri_context_destroy(c);
}

/* ---- 11. Every printed module reads back, the empty one included ------------------------------- */
static void an_empty_module_prints_text_that_reads_back(void** state) {
  tri_context* c = new_context(NULL);
  tri_module* m = new_module(c, "// nothing here\n");
  uint32_t n = 7;
  assert_int_equal(tri_module_function_count(m, &n), TRI_OK);
  assert_int_equal(n, 0);
  tri_blob* text = NULL;
  assert_int_equal(tri_module_to_text(m, &text), TRI_OK);
  assert_true(tri_blob_size(text) > 0);
  tri_module* back = NULL;
  if (tri_module_create(c, tri_blob_data(text), tri_blob_size(text), "printed.tri", &back) != TRI_OK)
    fail_msg("the printed text does not read back: %s", last_error());
  n = 7;
  assert_int_equal(tri_module_function_count(back, &n), TRI_OK);
  assert_int_equal(n, 0);
  tri_blob_destroy(text);
  tri_module_destroy(back);
  tri_module_destroy(m);
  tri_context_destroy(c);
}

/* ---- 12. One call depth limit, checked by the verifier for every target ------------------------ */
static char* call_chain(int funcs) {
  size_t cap = (size_t)funcs * 128 + 256;
  char* s = malloc(cap);
  size_t at = 0;
  for (int i = 0; i < funcs; ++i) {
    if (i + 1 < funcs)
      at += (size_t)snprintf(s + at, cap - at,
                             "func @f%d(%%v: i32) -> (i32) {\n  %%r = call[callee=@f%d] %%v : i32\n  return %%r\n}\n", i,
                             i + 1);
    else
      at += (size_t)snprintf(s + at, cap - at,
                             "func @f%d(%%v: i32) -> (i32) {\n  %%one = const[value=1] : i32\n"
                             "  %%r = add %%v, %%one : i32\n  return %%r\n}\n", i);
  }
  snprintf(s + at, cap - at,
           "kernel @deep(%%out: ptr<i32>, %%x: i32) {\n  %%r = call[callee=@f0] %%x : i32\n  store %%out, %%r\n"
           "  return\n}\n");
  return s;
}

static void call_depth_has_one_limit_on_every_target(void** state) {
  tri_context* c = new_context(NULL);
  /* The kernel's call plus 256 functions: 257 nested calls. */
  char* over = call_chain(257);
  tri_module* m = NULL;
  assert_int_equal(tri_module_create(c, over, strlen(over), "deep.tri", &m), TRI_ERROR_LIMIT_EXCEEDED);
  if (!contains(last_error(), "257") || !contains(last_error(), "256")) fail_msg("message: '%s'", last_error());
  free(over);
  char* far = call_chain(300);
  assert_int_equal(tri_module_create(c, far, strlen(far), "deep.tri", &m), TRI_ERROR_LIMIT_EXCEEDED);
  free(far);
  /* 256 nested calls: allowed, and the same result on both host targets. */
  char* limit = call_chain(256);
  m = new_module(c, limit);
  free(limit);
  for (int t = 0; t < 2; ++t) {
    tri_kernel* k = compile(m, "deep", t ? "interp" : "cpu");
    int32_t out = 0;
    tri_arg a[2] = {ptr_arg(&out, 4, TRI_DTYPE_I32), i32_arg(41)};
    if (tri_launch(k, 1, 1, 1, NULL, a, 2) != TRI_OK) fail_msg("launch: %s", last_error());
    assert_int_equal(out, 42);
    tri_kernel_destroy(k);
  }
  tri_module_destroy(m);
  tri_context_destroy(c);
}

/* ---- 13. Integer values for float constexprs: only when exact ---------------------------------- */
static void integer_values_for_float_constexprs_must_be_exact(void** state) {
  tri_context* c = new_context(NULL);
  const char text[] =
      "kernel @h(%out: ptr<f16>) constexpr(S: f16 = 1.0) {\n"
      "  %v = const[value=S] : f16\n"
      "  store %out, %v\n"
      "  return\n"
      "}\n";
  tri_module* m = new_module(c, text);
  static const struct {
    int64_t value;
    tri_result want;
  } cases[] = {{70000, TRI_ERROR_SPECIALIZE}, {2049, TRI_ERROR_SPECIALIZE}, {-65520, TRI_ERROR_SPECIALIZE},
               {2048, TRI_OK},                {-65504, TRI_OK},            {3, TRI_OK}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    tri_compile_options* co = NULL;
    assert_int_equal(tri_compile_options_create(&co), TRI_OK);
    assert_int_equal(tri_compile_options_set_target(co, "interp"), TRI_OK);
    assert_int_equal(tri_compile_options_set_constexpr_int(co, "S", cases[i].value), TRI_OK);
    tri_kernel* k = NULL;
    tri_result r = tri_kernel_compile(m, "h", co, &k);
    tri_compile_options_destroy(co);
    if (r != cases[i].want) fail_msg("S = %lld: %s (%s)", (long long)cases[i].value, tri_result_name(r), last_error());
    if (r != TRI_OK && !contains(last_error(), "not exactly representable")) fail_msg("message: '%s'", last_error());
    tri_kernel_destroy(k);
  }
  tri_module_destroy(m);
  tri_context_destroy(c);
}

int main(void) {
  /* No CUDA driver for this process (an_empty_grid_is_a_successful_no_op). */
  setenv("TRI_LIBCUDA", "/nonexistent/libcuda-for-tri-tests.so", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(worker_threads_that_cannot_start_fail_the_launch),
      cmocka_unit_test(log_callbacks_may_launch_on_the_same_context),
      cmocka_unit_test(a_failure_inside_the_log_callback_keeps_the_outer_message),
      cmocka_unit_test(cancel_stops_a_launch_that_never_ends),
      cmocka_unit_test(a_log_callback_may_cancel),
      cmocka_unit_test(null_buffers_are_reported),
      cmocka_unit_test(grids_past_the_limits_are_refused),
      cmocka_unit_test(an_empty_grid_is_a_successful_no_op),
      cmocka_unit_test(blocks_over_the_element_limit_are_refused),
      cmocka_unit_test(argument_counts_are_checked_first),
      cmocka_unit_test(the_interpreter_keeps_to_its_memory_budget),
      cmocka_unit_test(compiled_specializations_are_bounded),
      cmocka_unit_test(inline_asm_is_refused_at_compile_on_the_interpreter),
      cmocka_unit_test(an_empty_module_prints_text_that_reads_back),
      cmocka_unit_test(call_depth_has_one_limit_on_every_target),
      cmocka_unit_test(integer_values_for_float_constexprs_must_be_exact),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
