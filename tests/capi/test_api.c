/* The C API as a C99 host sees it: versions, results and last-error messages, context options
 * (log sink, allocator hook), modules from text and from binary IR, reflection, blobs,
 * destruction in any order, and misuse: NULL handles and out-pointers, empty, malformed,
 * unverifiable, corrupted, truncated, newer-versioned and hostile input. Only include/tri/tri.h
 * is used. */
#define _POSIX_C_SOURCE 200809L /* posix_memalign, pthreads */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tri/tri.h"

/* Only to write the checksum of hand-made binary files (docs/format.md); header-only use. */
#define XXH_INLINE_ALL
#include <xxhash.h>

/* A kernel with pointer and scalar parameters, every kind of fact, constexprs with and without
 * defaults, and a device function. */
static const char kScaleText[] =
    "// y[i] = alpha * x[i] for i < n\n"
    "kernel @scale(%x: ptr<f32> {align=16, noalias}, %out: ptr<f32> {align=16}, %n: i32 {divisible=16},\n"
    "              %alpha: f32) constexpr(BLOCK: i32 = 1024, EPS: f32 = 0.5, DEBUG: i1 = false, UNROLL: i32) {\n"
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
    "  %ob = splat %out : <BLOCK x ptr<f32>>\n"
    "  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>\n"
    "  %xv = load %xp, mask=%mask : <BLOCK x f32>\n"
    "  %av = splat %alpha : <BLOCK x f32>\n"
    "  %y = mul %xv, %av : <BLOCK x f32>\n"
    "  store %op, %y, mask=%mask\n"
    "  return\n"
    "}\n"
    "\n"
    "func @twice(%v: f32) -> (f32) {\n"
    "  %r = add %v, %v : f32\n"
    "  return %r\n"
    "}\n";

/* Well-formed text that breaks a typing rule on line 3: add of i32 and f32. */
static const char kBadTypesText[] =
    "kernel @k(%a: i32, %b: f32) {\n"
    "  %c = const[value=1] : i32\n"
    "  %d = add %a, %b : i32\n"
    "  return\n"
    "}\n";

/* ---- helpers --------------------------------------------------------------------------------- */

static char* last_error(void) {
  size_t n = tri_last_error_message(NULL, 0);
  char* s = malloc(n);
  assert_non_null(s);
  assert_int_equal(tri_last_error_message(s, n), n);
  assert_int_equal(strlen(s), n - 1);
  return s;
}

/* True when `msg` is "<source>:<line>:<col>: error: ..." with line and col >= 1. */
static int is_located(const char* msg, const char* source) {
  size_t n = strlen(source);
  if (strncmp(msg, source, n) != 0 || msg[n] != ':') return 0;
  const char* p = msg + n + 1;
  char* end;
  long line = strtol(p, &end, 10);
  if (end == p || *end != ':' || line < 1) return 0;
  p = end + 1;
  long col = strtol(p, &end, 10);
  if (end == p || col < 1) return 0;
  return strncmp(end, ": error: ", 9) == 0;
}

static void assert_located(const char* source) {
  char* msg = last_error();
  if (!is_located(msg, source)) fail_msg("message '%s' does not start with '%s:LINE:COL: error: '", msg, source);
  free(msg);
}

static tri_context* new_context(void) {
  tri_context* c = NULL;
  assert_int_equal(tri_context_create(NULL, TRI_VERSION_NUMBER, &c), TRI_OK);
  assert_non_null(c);
  return c;
}

static tri_module* new_module(tri_context* c, const void* data, size_t size) {
  tri_module* m = NULL;
  tri_result r = tri_module_create(c, data, size, "scale.tri", &m);
  if (r != TRI_OK) {
    char* msg = last_error();
    fail_msg("tri_module_create: %s: %s", tri_result_name(r), msg);
  }
  assert_non_null(m);
  return m;
}

static tri_blob* to_blob(const tri_module* m, int binary) {
  tri_blob* b = NULL;
  assert_int_equal(binary ? tri_module_to_binary(m, &b) : tri_module_to_text(m, &b), TRI_OK);
  assert_non_null(b);
  return b;
}

/* The result of creating a module from bytes, with everything released again. */
static tri_result try_create(tri_context* c, const void* data, size_t size, const char* name) {
  tri_module* m = (tri_module*)(uintptr_t)0x1;
  tri_result r = tri_module_create(c, data, size, name, &m);
  if (r == TRI_OK)
    tri_module_destroy(m);
  else
    assert_true(m == (tri_module*)(uintptr_t)0x1); /* untouched on failure */
  return r;
}

/* Creating a module from bytes fails with `want`; on any other result the test fails with the
 * library's message. */
static void expect_create(tri_context* c, const void* data, size_t size, const char* name, tri_result want) {
  tri_result r = try_create(c, data, size, name);
  if (r != want) {
    char* msg = last_error();
    fail_msg("%s: %s instead of %s: %s", name, tri_result_name(r), tri_result_name(want), r ? msg : "");
  }
}

/* ---- versions and results -------------------------------------------------------------------- */

static void version_macros_match_library(void** state) {
  (void)state;
  assert_int_equal(TRI_VERSION_NUMBER, TRI_VERSION_MAJOR * 10000 + TRI_VERSION_MINOR * 100 + TRI_VERSION_PATCH);
  assert_int_equal(tri_version(), TRI_VERSION_NUMBER);
}

static void result_names(void** state) {
  (void)state;
  static const char* const names[] = {
      "TRI_OK",
      "TRI_ERROR_INVALID_ARGUMENT",
      "TRI_ERROR_PARSE",
      "TRI_ERROR_VERIFY",
      "TRI_ERROR_CORRUPT_BINARY",
      "TRI_ERROR_UNSUPPORTED_VERSION",
      "TRI_ERROR_NOT_FOUND",
      "TRI_ERROR_LIMIT_EXCEEDED",
      "TRI_ERROR_OUT_OF_MEMORY",
      "TRI_ERROR_SPECIALIZE",
      "TRI_ERROR_LAUNCH_ARGS",
      "TRI_ERROR_UNSUPPORTED",
      "TRI_ERROR_COMPILE",
      "TRI_ERROR_RUNTIME",
      "TRI_ERROR_IO",
      "TRI_ERROR_INTERNAL",
      "TRI_ERROR_CANCELLED",
      "TRI_ERROR_UNTRUSTED",
  };
  static const tri_result codes[] = {
      TRI_OK,         TRI_ERROR_INVALID_ARGUMENT, TRI_ERROR_PARSE,         TRI_ERROR_VERIFY,
      TRI_ERROR_CORRUPT_BINARY, TRI_ERROR_UNSUPPORTED_VERSION, TRI_ERROR_NOT_FOUND, TRI_ERROR_LIMIT_EXCEEDED,
      TRI_ERROR_OUT_OF_MEMORY,  TRI_ERROR_SPECIALIZE, TRI_ERROR_LAUNCH_ARGS, TRI_ERROR_UNSUPPORTED,
      TRI_ERROR_COMPILE,        TRI_ERROR_RUNTIME,    TRI_ERROR_IO,          TRI_ERROR_INTERNAL,
      TRI_ERROR_CANCELLED,      TRI_ERROR_UNTRUSTED,
  };
  size_t i;
  for (i = 0; i < sizeof codes / sizeof codes[0]; ++i) {
    assert_int_equal(codes[i], (tri_result)i);
    assert_string_equal(tri_result_name(codes[i]), names[i]);
  }
  assert_string_equal(tri_result_name(-1), "TRI_ERROR_UNKNOWN");
  assert_string_equal(tri_result_name(18), "TRI_ERROR_UNKNOWN");
  assert_string_equal(tri_result_name(INT32_MAX), "TRI_ERROR_UNKNOWN");
  assert_string_equal(tri_result_name(INT32_MIN), "TRI_ERROR_UNKNOWN");
}

static void* fresh_thread_error_size(void* arg) {
  char buf[4] = "xyz";
  *(size_t*)arg = tri_last_error_message(buf, sizeof buf);
  if (buf[0] != '\0') *(size_t*)arg = 0;
  return NULL;
}

static void last_error_size_query_and_truncation(void** state) {
  (void)state;
  /* A thread on which nothing has failed reads "" (size 1). */
  pthread_t t;
  size_t fresh = 99;
  assert_int_equal(pthread_create(&t, NULL, fresh_thread_error_size, &fresh), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(fresh, 1);

  assert_int_equal(tri_context_create(NULL, TRI_VERSION_NUMBER, NULL), TRI_ERROR_INVALID_ARGUMENT);
  size_t n = tri_last_error_message(NULL, 0);
  assert_true(n > 1);
  char* full = last_error();
  assert_non_null(strstr(full, "out_context"));

  /* Truncated copies are NUL-terminated prefixes; the return value is always the full size. */
  char small[6];
  memset(small, 'z', sizeof small);
  assert_int_equal(tri_last_error_message(small, sizeof small), n);
  assert_int_equal(strlen(small), sizeof small - 1);
  assert_memory_equal(small, full, sizeof small - 1);
  char one = 'z';
  assert_int_equal(tri_last_error_message(&one, 1), n);
  assert_int_equal(one, '\0');
  /* capacity 0 never writes, even with a buffer. */
  char untouched = 'q';
  assert_int_equal(tri_last_error_message(&untouched, 0), n);
  assert_int_equal(untouched, 'q');

  /* The message is per thread: another thread still reads "". */
  fresh = 99;
  assert_int_equal(pthread_create(&t, NULL, fresh_thread_error_size, &fresh), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(fresh, 1);
  free(full);
}

/* ---- options and contexts -------------------------------------------------------------------- */

static void options_setters_check_their_arguments(void** state) {
  (void)state;
  tri_context_options* o = NULL;
  assert_int_equal(tri_context_options_create(&o), TRI_OK);
  assert_non_null(o);
  assert_int_equal(tri_context_options_set_log(o, NULL, NULL, TRI_LOG_DEBUG), TRI_OK);
  assert_int_equal(tri_context_options_set_log(o, NULL, NULL, TRI_LOG_DEBUG + 1), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_context_options_set_log(o, NULL, NULL, -1), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_context_options_set_allocator(o, NULL, NULL, NULL), TRI_OK);
  assert_int_equal(tri_context_options_set_cache_dir(o, "/tmp/tri-cache"), TRI_OK);
  assert_int_equal(tri_context_options_set_cache_dir(o, NULL), TRI_OK);
  assert_int_equal(tri_context_options_set_cache_dir(o, ""), TRI_OK);

  /* Options are copied: destroying them before the context is fine. */
  tri_context* c = NULL;
  assert_int_equal(tri_context_create(o, TRI_VERSION_NUMBER, &c), TRI_OK);
  tri_context_options_destroy(o);
  tri_module* m = new_module(c, kScaleText, strlen(kScaleText));
  tri_module_destroy(m);
  tri_context_destroy(c);
  tri_context_options_destroy(NULL);
  tri_context_destroy(NULL);
}

static void version_mismatch_is_refused(void** state) {
  (void)state;
  tri_context* c = (tri_context*)(uintptr_t)0x1;
  assert_int_equal(tri_context_create(NULL, TRI_VERSION_NUMBER + 10000, &c), TRI_ERROR_UNSUPPORTED_VERSION);
  assert_true(c == (tri_context*)(uintptr_t)0x1);
  assert_int_equal(tri_context_create(NULL, TRI_VERSION_NUMBER + 100, &c), TRI_ERROR_UNSUPPORTED_VERSION);
  assert_true(c == (tri_context*)(uintptr_t)0x1);
  char* msg = last_error();
  assert_non_null(strstr(msg, "version"));
  free(msg);
  /* An older minor version of the same major, and a different patch level, are accepted. */
  c = NULL;
  assert_int_equal(tri_context_create(NULL, TRI_VERSION_MAJOR * 10000 + 99, &c), TRI_OK);
  tri_context_destroy(c);
}

struct log_record {
  int calls;
  int32_t level;
  char message[512];
};

static void record_log(void* user, int32_t level, const char* message) {
  struct log_record* r = (struct log_record*)user;
  r->calls++;
  r->level = level;
  snprintf(r->message, sizeof r->message, "%s", message);
}

static void log_callback_receives_create_errors(void** state) {
  (void)state;
  struct log_record rec;
  memset(&rec, 0, sizeof rec);
  tri_context_options* o = NULL;
  assert_int_equal(tri_context_options_create(&o), TRI_OK);
  assert_int_equal(tri_context_options_set_log(o, record_log, &rec, TRI_LOG_DEBUG), TRI_OK);
  tri_context* c = NULL;
  assert_int_equal(tri_context_create(o, TRI_VERSION_NUMBER, &c), TRI_OK);
  tri_context_options_destroy(o);

  /* A good module logs nothing. */
  tri_module* m = new_module(c, kScaleText, strlen(kScaleText));
  tri_module_destroy(m);
  assert_int_equal(rec.calls, 0);

  /* A bad one logs its message once, at error level. */
  expect_create(c, kBadTypesText, strlen(kBadTypesText), "bad.tri", TRI_ERROR_VERIFY);
  assert_int_equal(rec.calls, 1);
  assert_int_equal(rec.level, TRI_LOG_ERROR);
  char* msg = last_error();
  assert_string_equal(rec.message, msg);
  free(msg);
  expect_create(c, "x", 0, "empty.tri", TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(rec.calls, 2);
  tri_context_destroy(c);
}

/* A counting allocator. It keeps a header before each block to check that free gets the size
 * that was allocated, and can be told to fail the n-th allocation. */
struct counting_alloc {
  long allocs, frees;
  size_t live_bytes;
  long fail_at; /* the allocation number (from 0) that returns NULL; -1: none */
};

#define HEADER 64

static void* count_alloc(void* self, size_t size, size_t align) {
  struct counting_alloc* a = (struct counting_alloc*)self;
  if (align == 0 || (align & (align - 1)) != 0 || align > HEADER) return NULL;
  if (a->fail_at >= 0 && a->allocs == a->fail_at) {
    a->fail_at = -1;
    return NULL;
  }
  void* mem = NULL;
  if (posix_memalign(&mem, HEADER, size + HEADER) != 0) return NULL;
  unsigned char* p = (unsigned char*)mem;
  memcpy(p, &size, sizeof size);
  a->allocs++;
  a->live_bytes += size;
  return p + HEADER;
}

static void count_free(void* self, void* ptr, size_t size) {
  struct counting_alloc* a = (struct counting_alloc*)self;
  unsigned char* p = (unsigned char*)ptr - HEADER;
  size_t allocated;
  memcpy(&allocated, p, sizeof allocated);
  assert_int_equal(allocated, size);
  a->frees++;
  a->live_bytes -= size;
  free(p);
}

static tri_context* counted_context(struct counting_alloc* a, tri_result* result) {
  tri_context_options* o = NULL;
  assert_int_equal(tri_context_options_create(&o), TRI_OK);
  assert_int_equal(tri_context_options_set_allocator(o, a, count_alloc, NULL), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_context_options_set_allocator(o, a, NULL, count_free), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_context_options_set_allocator(o, a, count_alloc, count_free), TRI_OK);
  tri_context* c = NULL;
  *result = tri_context_create(o, TRI_VERSION_NUMBER, &c);
  tri_context_options_destroy(o);
  return c;
}

static void allocator_hook_allocations_balance(void** state) {
  (void)state;
  struct counting_alloc a = {0, 0, 0, -1};
  tri_result r;
  tri_context* c = counted_context(&a, &r);
  assert_int_equal(r, TRI_OK);
  assert_int_equal(a.allocs, 1); /* the context itself */
  tri_module* m = new_module(c, kScaleText, strlen(kScaleText));
  long after_module = a.allocs;
  assert_true(after_module >= 3); /* the module handle and its reflection tables */
  tri_blob* text = to_blob(m, 0);
  tri_blob* bin = to_blob(m, 1);
  assert_int_equal(a.allocs, after_module + 2); /* one allocation per blob */
  assert_true(((uintptr_t)tri_blob_data(text)) != 0);
  tri_context_destroy(c);
  tri_module_destroy(m);
  assert_true(a.frees < a.allocs); /* the blobs still hold the context */
  tri_blob_destroy(bin);
  tri_blob_destroy(text);
  assert_int_equal(a.allocs, a.frees);
  assert_int_equal(a.live_bytes, 0);
}

static void allocator_failure_gives_out_of_memory(void** state) {
  (void)state;
  /* Fail each allocation in turn until a whole create / to_text sequence succeeds; every failure
   * must be OUT_OF_MEMORY and leave nothing allocated. */
  long k;
  int done = 0;
  for (k = 0; k < 64 && !done; ++k) {
    struct counting_alloc a = {0, 0, 0, k};
    tri_result r;
    tri_context* c = counted_context(&a, &r);
    if (r != TRI_OK) {
      assert_int_equal(r, TRI_ERROR_OUT_OF_MEMORY);
      assert_null(c);
    } else {
      tri_module* m = NULL;
      r = tri_module_create(c, kScaleText, strlen(kScaleText), "scale.tri", &m);
      if (r != TRI_OK) {
        assert_int_equal(r, TRI_ERROR_OUT_OF_MEMORY);
        assert_null(m);
      } else {
        tri_blob* b = NULL;
        r = tri_module_to_text(m, &b);
        if (r != TRI_OK) {
          assert_int_equal(r, TRI_ERROR_OUT_OF_MEMORY);
          assert_null(b);
        } else {
          done = 1;
          tri_blob_destroy(b);
        }
        tri_module_destroy(m);
      }
      tri_context_destroy(c);
    }
    assert_int_equal(a.allocs, a.frees);
    assert_int_equal(a.live_bytes, 0);
  }
  assert_true(done);
  assert_true(k >= 4); /* context, module, tables and blob each failed once */
}

/* ---- modules and reflection ------------------------------------------------------------------ */

static void check_scale_reflection(const tri_module* m) {
  uint32_t n = 0, idx = 99;
  assert_int_equal(tri_module_function_count(m, &n), TRI_OK);
  assert_int_equal(n, 2);

  const char* name = NULL;
  int32_t kind = -1;
  assert_int_equal(tri_module_function_name(m, 0, &name), TRI_OK);
  assert_string_equal(name, "scale");
  assert_int_equal(tri_module_function_kind(m, 0, &kind), TRI_OK);
  assert_int_equal(kind, TRI_FUNCTION_KERNEL);
  assert_int_equal(tri_module_function_name(m, 1, &name), TRI_OK);
  assert_string_equal(name, "twice");
  assert_int_equal(tri_module_function_kind(m, 1, &kind), TRI_OK);
  assert_int_equal(kind, TRI_FUNCTION_DEVICE);

  assert_int_equal(tri_module_find_function(m, "twice", &idx), TRI_OK);
  assert_int_equal(idx, 1);
  assert_int_equal(tri_module_find_function(m, "scale", &idx), TRI_OK);
  assert_int_equal(idx, 0);
  idx = 77;
  assert_int_equal(tri_module_find_function(m, "@scale", &idx), TRI_ERROR_NOT_FOUND);
  assert_int_equal(tri_module_find_function(m, "scal", &idx), TRI_ERROR_NOT_FOUND);
  assert_int_equal(tri_module_find_function(m, "", &idx), TRI_ERROR_NOT_FOUND);
  assert_int_equal(tri_module_find_function(m, "zzz", &idx), TRI_ERROR_NOT_FOUND);
  assert_int_equal(idx, 77);
  char* msg = last_error();
  assert_non_null(strstr(msg, "'zzz'"));
  free(msg);

  /* Runtime parameters first, then constexprs. */
  static const struct {
    const char* name;
    int32_t kind, type_kind, dtype;
    const char* type;
    uint32_t align, divisible;
    int32_t noalias;
    const char* def;
  } want[] = {
      {"x", TRI_PARAM_VALUE, TRI_TYPE_POINTER, TRI_DTYPE_F32, "ptr<f32>", 16, 0, 1, NULL},
      {"out", TRI_PARAM_VALUE, TRI_TYPE_POINTER, TRI_DTYPE_F32, "ptr<f32>", 16, 0, 0, NULL},
      {"n", TRI_PARAM_VALUE, TRI_TYPE_SCALAR, TRI_DTYPE_I32, "i32", 0, 16, 0, NULL},
      {"alpha", TRI_PARAM_VALUE, TRI_TYPE_SCALAR, TRI_DTYPE_F32, "f32", 0, 0, 0, NULL},
      {"BLOCK", TRI_PARAM_CONSTEXPR, TRI_TYPE_SCALAR, TRI_DTYPE_I32, "i32", 0, 0, 0, "1024"},
      {"EPS", TRI_PARAM_CONSTEXPR, TRI_TYPE_SCALAR, TRI_DTYPE_F32, "f32", 0, 0, 0, "0.5"},
      {"DEBUG", TRI_PARAM_CONSTEXPR, TRI_TYPE_SCALAR, TRI_DTYPE_I1, "i1", 0, 0, 0, "false"},
      {"UNROLL", TRI_PARAM_CONSTEXPR, TRI_TYPE_SCALAR, TRI_DTYPE_I32, "i32", 0, 0, 0, NULL},
  };
  uint32_t np = 0;
  assert_int_equal(tri_module_param_count(m, 0, &np), TRI_OK);
  assert_int_equal(np, sizeof want / sizeof want[0]);
  uint32_t p;
  for (p = 0; p < np; ++p) {
    const char* s = NULL;
    int32_t k = -1, tk = -1, dt = -1;
    uint32_t align = 99, divisible = 99;
    int32_t noalias = 99;
    assert_int_equal(tri_module_param_name(m, 0, p, &s), TRI_OK);
    assert_string_equal(s, want[p].name);
    assert_int_equal(tri_module_param_kind(m, 0, p, &k), TRI_OK);
    assert_int_equal(k, want[p].kind);
    assert_int_equal(tri_module_param_type(m, 0, p, &tk, &dt, &s), TRI_OK);
    assert_int_equal(tk, want[p].type_kind);
    assert_int_equal(dt, want[p].dtype);
    assert_string_equal(s, want[p].type);
    assert_int_equal(tri_module_param_facts(m, 0, p, &align, &divisible, &noalias), TRI_OK);
    assert_int_equal(align, want[p].align);
    assert_int_equal(divisible, want[p].divisible);
    assert_int_equal(noalias, want[p].noalias);
    s = (const char*)(uintptr_t)0x1;
    if (want[p].kind == TRI_PARAM_CONSTEXPR) {
      assert_int_equal(tri_module_param_default(m, 0, p, &s), TRI_OK);
      if (want[p].def)
        assert_string_equal(s, want[p].def);
      else
        assert_null(s);
    } else {
      assert_int_equal(tri_module_param_default(m, 0, p, &s), TRI_ERROR_INVALID_ARGUMENT);
      assert_true(s == (const char*)(uintptr_t)0x1);
    }
  }

  /* The device function: one runtime parameter, no constexprs. */
  assert_int_equal(tri_module_param_count(m, 1, &np), TRI_OK);
  assert_int_equal(np, 1);
  assert_int_equal(tri_module_param_name(m, 1, 0, &name), TRI_OK);
  assert_string_equal(name, "v");

  /* Out of range indices. */
  uint32_t u = 55;
  assert_int_equal(tri_module_param_count(m, 2, &u), TRI_ERROR_NOT_FOUND);
  assert_int_equal(tri_module_param_count(m, UINT32_MAX, &u), TRI_ERROR_NOT_FOUND);
  assert_int_equal(u, 55);
  name = (const char*)(uintptr_t)0x1;
  assert_int_equal(tri_module_function_name(m, 2, &name), TRI_ERROR_NOT_FOUND);
  assert_int_equal(tri_module_param_name(m, 0, 8, &name), TRI_ERROR_NOT_FOUND);
  assert_int_equal(tri_module_param_name(m, 1, 1, &name), TRI_ERROR_NOT_FOUND);
  assert_true(name == (const char*)(uintptr_t)0x1);
  msg = last_error();
  assert_non_null(strstr(msg, "@twice"));
  free(msg);
}

static void module_from_text_reflects_its_signature(void** state) {
  (void)state;
  tri_context* c = new_context();
  tri_module* m = new_module(c, kScaleText, strlen(kScaleText));
  check_scale_reflection(m);
  tri_module_destroy(m);
  tri_context_destroy(c);
}

/* tri_module_to_text_with_comments keeps the comments of the text (what `tri fmt` writes);
 * tri_module_to_text does not, so its text is the same for a module and its binary form. */
static int blob_contains(const tri_blob* b, const char* needle) {
  const char* d = (const char*)tri_blob_data(b);
  size_t n = tri_blob_size(b), k = strlen(needle), i;
  for (i = 0; i + k <= n; ++i)
    if (memcmp(d + i, needle, k) == 0) return 1;
  return 0;
}

static void text_with_comments(void** state) {
  (void)state;
  tri_context* c = new_context();
  tri_module* m = new_module(c, kScaleText, strlen(kScaleText));
  tri_blob* plain = to_blob(m, 0);
  tri_blob* bin = to_blob(m, 1);
  tri_blob* with = NULL;
  assert_int_equal(tri_module_to_text_with_comments(m, &with), TRI_OK);
  const char* comment = "// y[i] = alpha * x[i] for i < n";
  assert_true(blob_contains(with, comment));
  assert_false(blob_contains(plain, "//"));
  /* Formatting the formatted text gives it again. */
  tri_module* mf = new_module(c, tri_blob_data(with), tri_blob_size(with));
  tri_blob* again = NULL;
  assert_int_equal(tri_module_to_text_with_comments(mf, &again), TRI_OK);
  assert_int_equal(tri_blob_size(again), tri_blob_size(with));
  assert_memory_equal(tri_blob_data(again), tri_blob_data(with), tri_blob_size(with));
  /* A module from binary has no comments: both texts are the plain one. */
  tri_module* mb = new_module(c, tri_blob_data(bin), tri_blob_size(bin));
  tri_blob* from_bin = NULL;
  assert_int_equal(tri_module_to_text_with_comments(mb, &from_bin), TRI_OK);
  assert_int_equal(tri_blob_size(from_bin), tri_blob_size(plain));
  assert_memory_equal(tri_blob_data(from_bin), tri_blob_data(plain), tri_blob_size(plain));
  assert_int_equal(tri_module_to_text_with_comments(NULL, &from_bin), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_module_to_text_with_comments(m, NULL), TRI_ERROR_INVALID_ARGUMENT);
  tri_blob_destroy(from_bin);
  tri_blob_destroy(again);
  tri_blob_destroy(with);
  tri_blob_destroy(bin);
  tri_blob_destroy(plain);
  tri_module_destroy(mb);
  tri_module_destroy(mf);
  tri_module_destroy(m);
  tri_context_destroy(c);
}

static void module_from_binary_is_the_same_module(void** state) {
  (void)state;
  tri_context* c = new_context();
  tri_module* m = new_module(c, kScaleText, strlen(kScaleText));
  tri_blob* text = to_blob(m, 0);
  tri_blob* bin = to_blob(m, 1);
  assert_true(tri_blob_size(bin) > 0);

  tri_module* mb = new_module(c, tri_blob_data(bin), tri_blob_size(bin));
  check_scale_reflection(mb);
  tri_blob* text2 = to_blob(mb, 0);
  tri_blob* bin2 = to_blob(mb, 1);
  assert_int_equal(tri_blob_size(text2), tri_blob_size(text));
  assert_memory_equal(tri_blob_data(text2), tri_blob_data(text), tri_blob_size(text));
  assert_int_equal(tri_blob_size(bin2), tri_blob_size(bin));
  assert_memory_equal(tri_blob_data(bin2), tri_blob_data(bin), tri_blob_size(bin));

  /* The canonical text reads back to itself. */
  tri_module* mt = new_module(c, tri_blob_data(text), tri_blob_size(text));
  tri_blob* text3 = to_blob(mt, 0);
  assert_int_equal(tri_blob_size(text3), tri_blob_size(text));
  assert_memory_equal(tri_blob_data(text3), tri_blob_data(text), tri_blob_size(text));

  assert_null(tri_blob_data(NULL));
  assert_int_equal(tri_blob_size(NULL), 0);
  tri_blob_destroy(NULL);
  tri_blob_destroy(text3);
  tri_blob_destroy(text2);
  tri_blob_destroy(bin2);
  tri_blob_destroy(text);
  tri_blob_destroy(bin);
  tri_module_destroy(mt);
  tri_module_destroy(mb);
  tri_module_destroy(m);
  tri_context_destroy(c);
}

static void handles_are_destroyed_in_any_order(void** state) {
  (void)state;
  /* Context first: the module and the blob keep it alive and stay usable. */
  tri_context* c = new_context();
  tri_module* m = new_module(c, kScaleText, strlen(kScaleText));
  tri_blob* b = to_blob(m, 0);
  size_t text_size = tri_blob_size(b);
  char* text_copy = malloc(text_size);
  assert_non_null(text_copy);
  memcpy(text_copy, tri_blob_data(b), text_size);
  tri_context_destroy(c);
  uint32_t n = 0;
  assert_int_equal(tri_module_function_count(m, &n), TRI_OK);
  assert_int_equal(n, 2);
  tri_blob* b2 = to_blob(m, 1);
  tri_module_destroy(m);
  /* The blob is intact after its module and context are gone. */
  assert_int_equal(tri_blob_size(b), text_size);
  assert_memory_equal(tri_blob_data(b), text_copy, text_size);
  free(text_copy);
  tri_blob_destroy(b);
  tri_blob_destroy(b2);

  /* Module, then blob, then context. */
  c = new_context();
  m = new_module(c, kScaleText, strlen(kScaleText));
  b = to_blob(m, 1);
  tri_module_destroy(m);
  tri_blob_destroy(b);
  tri_context_destroy(c);

  /* Many modules on one context, destroyed after it. */
  c = new_context();
  tri_module* ms[8];
  int i;
  for (i = 0; i < 8; ++i) ms[i] = new_module(c, kScaleText, strlen(kScaleText));
  tri_context_destroy(c);
  for (i = 7; i >= 0; --i) tri_module_destroy(ms[i]);
  tri_module_destroy(NULL);
}

struct shared_state {
  tri_context* context;
  const tri_module* module;
  int failures;
};

static void* use_concurrently(void* arg) {
  struct shared_state* s = (struct shared_state*)arg;
  int i;
  for (i = 0; i < 20; ++i) {
    tri_blob* b = NULL;
    uint32_t idx = 0;
    const char* name = NULL;
    tri_module* m = NULL;
    if (tri_module_to_text(s->module, &b) != TRI_OK) s->failures++;
    tri_blob_destroy(b);
    if (tri_module_find_function(s->module, "twice", &idx) != TRI_OK || idx != 1) s->failures++;
    if (tri_module_param_name(s->module, 0, 4, &name) != TRI_OK || strcmp(name, "BLOCK") != 0) s->failures++;
    if (tri_module_create(s->context, kScaleText, strlen(kScaleText), "t.tri", &m) != TRI_OK) s->failures++;
    tri_module_destroy(m);
    if (tri_module_create(s->context, kBadTypesText, strlen(kBadTypesText), "t.tri", &m) != TRI_ERROR_VERIFY)
      s->failures++;
  }
  return NULL;
}

static void context_and_module_are_shared_by_threads(void** state) {
  (void)state;
  enum { kThreads = 4 };
  struct shared_state s[kThreads];
  pthread_t t[kThreads];
  tri_context* c = new_context();
  tri_module* m = new_module(c, kScaleText, strlen(kScaleText));
  int i;
  for (i = 0; i < kThreads; ++i) {
    s[i].context = c;
    s[i].module = m;
    s[i].failures = 0;
    assert_int_equal(pthread_create(&t[i], NULL, use_concurrently, &s[i]), 0);
  }
  for (i = 0; i < kThreads; ++i) {
    assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(s[i].failures, 0);
  }
  tri_module_destroy(m);
  tri_context_destroy(c);
}

/* ---- misuse ------------------------------------------------------------------------------- */

#define BAD_PTR ((void*)(uintptr_t)0x1)

static void null_arguments_are_refused(void** state) {
  (void)state;
  tri_context* c = new_context();
  tri_module* m = new_module(c, kScaleText, strlen(kScaleText));
  const tri_module* nm = NULL;
  const char* s = (const char*)BAD_PTR;
  uint32_t u = 0xDEADBEEF, u2 = 0xDEADBEEF;
  int32_t i = 0x5EED, i2 = 0x5EED;
  tri_blob* b = (tri_blob*)BAD_PTR;
  tri_module* mx = (tri_module*)BAD_PTR;

#define REFUSED(call)                                      \
  do {                                                     \
    assert_int_equal((call), TRI_ERROR_INVALID_ARGUMENT);  \
    char* msg_ = last_error();                             \
    assert_non_null(strstr(msg_, "NULL"));                 \
    free(msg_);                                            \
  } while (0)

  REFUSED(tri_context_options_create(NULL));
  REFUSED(tri_context_options_set_log(NULL, NULL, NULL, TRI_LOG_ERROR));
  REFUSED(tri_context_options_set_allocator(NULL, NULL, NULL, NULL));
  REFUSED(tri_context_options_set_cache_dir(NULL, "x"));
  REFUSED(tri_context_create(NULL, TRI_VERSION_NUMBER, NULL));

  REFUSED(tri_module_create(NULL, kScaleText, strlen(kScaleText), "x", &mx));
  REFUSED(tri_module_create(c, NULL, 10, "x", &mx));
  REFUSED(tri_module_create(c, kScaleText, strlen(kScaleText), "x", NULL));
  assert_true(mx == (tri_module*)BAD_PTR);

  REFUSED(tri_module_to_text(nm, &b));
  REFUSED(tri_module_to_text(m, NULL));
  REFUSED(tri_module_to_binary(nm, &b));
  REFUSED(tri_module_to_binary(m, NULL));
  assert_true(b == (tri_blob*)BAD_PTR);

  REFUSED(tri_module_function_count(nm, &u));
  REFUSED(tri_module_function_count(m, NULL));
  REFUSED(tri_module_find_function(nm, "scale", &u));
  REFUSED(tri_module_find_function(m, NULL, &u));
  REFUSED(tri_module_find_function(m, "scale", NULL));
  REFUSED(tri_module_function_name(nm, 0, &s));
  REFUSED(tri_module_function_name(m, 0, NULL));
  REFUSED(tri_module_function_kind(nm, 0, &i));
  REFUSED(tri_module_function_kind(m, 0, NULL));
  REFUSED(tri_module_param_count(nm, 0, &u));
  REFUSED(tri_module_param_count(m, 0, NULL));
  REFUSED(tri_module_param_name(nm, 0, 0, &s));
  REFUSED(tri_module_param_name(m, 0, 0, NULL));
  REFUSED(tri_module_param_kind(nm, 0, 0, &i));
  REFUSED(tri_module_param_kind(m, 0, 0, NULL));
  REFUSED(tri_module_param_type(nm, 0, 0, &i, &i2, &s));
  REFUSED(tri_module_param_type(m, 0, 0, NULL, &i2, &s));
  REFUSED(tri_module_param_type(m, 0, 0, &i, NULL, &s));
  REFUSED(tri_module_param_type(m, 0, 0, &i, &i2, NULL));
  REFUSED(tri_module_param_facts(nm, 0, 0, &u, &u2, &i));
  REFUSED(tri_module_param_facts(m, 0, 0, NULL, &u2, &i));
  REFUSED(tri_module_param_facts(m, 0, 0, &u, NULL, &i));
  REFUSED(tri_module_param_facts(m, 0, 0, &u, &u2, NULL));
  REFUSED(tri_module_param_default(nm, 0, 4, &s));
  REFUSED(tri_module_param_default(m, 0, 4, NULL));
#undef REFUSED

  /* Nothing was written through the out-pointers that were given. */
  assert_true(s == (const char*)BAD_PTR);
  assert_int_equal(u, 0xDEADBEEF);
  assert_int_equal(u2, 0xDEADBEEF);
  assert_int_equal(i, 0x5EED);
  assert_int_equal(i2, 0x5EED);

  tri_module_destroy(m);
  tri_context_destroy(c);
}

static void empty_input_is_refused(void** state) {
  (void)state;
  tri_context* c = new_context();
  expect_create(c, kScaleText, 0, "empty.tri", TRI_ERROR_INVALID_ARGUMENT);
  char* msg = last_error();
  assert_non_null(strstr(msg, "empty.tri"));
  free(msg);
  expect_create(c, NULL, 0, "empty.tri", TRI_ERROR_INVALID_ARGUMENT);
  tri_context_destroy(c);
}

static void malformed_text_is_a_located_parse_error(void** state) {
  (void)state;
  tri_context* c = new_context();
  static const char bad[] = "kernel @k() {\n  %a = const[value=1] : i32\n  %b = nosuchop %a : i32\n  return\n}\n";
  expect_create(c, bad, strlen(bad), "bad.tri", TRI_ERROR_PARSE);
  assert_located("bad.tri");
  char* msg = last_error();
  assert_true(strncmp(msg, "bad.tri:3:", 10) == 0);
  free(msg);
  /* Without a source name the input is called <input>. */
  expect_create(c, bad, strlen(bad), NULL, TRI_ERROR_PARSE);
  assert_located("<input>");
  /* Cut anywhere between the end of the leading comment and the kernel's closing brace, the
   * kernel is incomplete: a parse error. */
  size_t first = (size_t)(strchr(kScaleText, '\n') - kScaleText) + 2;
  size_t last = (size_t)(strstr(kScaleText, "\n}\n") - kScaleText) + 1;
  size_t n;
  for (n = first; n <= last; ++n) {
    tri_result r = try_create(c, kScaleText, n, "cut.tri");
    if (r != TRI_ERROR_PARSE) fail_msg("cut at %zu: %s instead of TRI_ERROR_PARSE", n, tri_result_name(r));
  }
  tri_context_destroy(c);
}

static void type_errors_are_located_verify_errors(void** state) {
  (void)state;
  tri_context* c = new_context();
  expect_create(c, kBadTypesText, strlen(kBadTypesText), "types.tri", TRI_ERROR_VERIFY);
  assert_located("types.tri");
  char* msg = last_error();
  assert_true(strncmp(msg, "types.tri:3:", 12) == 0);
  assert_non_null(strstr(msg, "add"));
  free(msg);
  tri_context_destroy(c);
}

static void nul_bytes_in_text_are_parse_errors(void** state) {
  (void)state;
  tri_context* c = new_context();
  size_t len = strlen(kScaleText);
  char* copy = malloc(len + 1);
  assert_non_null(copy);
  /* A NUL where an op would start, and a NUL inside an op. */
  const char* at = strstr(kScaleText, "  %bs");
  memcpy(copy, kScaleText, len + 1);
  copy[at - kScaleText] = '\0';
  expect_create(c, copy, len, "nul.tri", TRI_ERROR_PARSE);
  assert_located("nul.tri");
  memcpy(copy, kScaleText, len + 1);
  copy[at - kScaleText + 4] = '\0';
  expect_create(c, copy, len, "nul.tri", TRI_ERROR_PARSE);
  assert_located("nul.tri");
  free(copy);
  tri_context_destroy(c);
}

static void deep_nesting_is_a_limit_not_a_crash(void** state) {
  (void)state;
  enum { kDepth = 10000 };
  static const char head[] = "kernel @deep() {\n  %c = const[value=true] : i1\n";
  static const char open[] = "if %c {\n";
  static const char close[] = "}\nyield\n";
  static const char tail[] = "}\nreturn\n}\n";
  size_t cap = sizeof head + kDepth * (sizeof open + sizeof close) + sizeof tail + 16;
  char* text = malloc(cap);
  assert_non_null(text);
  size_t n = 0;
  int i;
  /* A well-formed program: every region ends with its terminator. */
  memcpy(text + n, head, sizeof head - 1), n += sizeof head - 1;
  for (i = 0; i < kDepth; ++i) memcpy(text + n, open, sizeof open - 1), n += sizeof open - 1;
  memcpy(text + n, "yield\n", 6), n += 6;
  for (i = 0; i < kDepth - 1; ++i) memcpy(text + n, close, sizeof close - 1), n += sizeof close - 1;
  memcpy(text + n, tail, sizeof tail - 1), n += sizeof tail - 1;
  assert_true(n < cap);
  tri_context* c = new_context();
  expect_create(c, text, n, "deep.tri", TRI_ERROR_LIMIT_EXCEEDED);
  assert_located("deep.tri");
  free(text);
  tri_context_destroy(c);
}

/* ---- hostile binary input (docs/format.md; the hand-made files are version 1, still read) -- */

enum { kMagicSize = 8, kHeaderSize = 28, kVersionOffset = 8 };

struct bytes {
  unsigned char* p;
  size_t n, cap;
};

static void put(struct bytes* b, const void* data, size_t n) {
  if (n == 0) return;
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2;
    b->p = (unsigned char*)realloc(b->p, b->cap);
    assert_non_null(b->p);
  }
  memcpy(b->p + b->n, data, n);
  b->n += n;
}

/* An unsigned LEB128 varint, the format's uN. */
static void put_u(struct bytes* b, uint64_t v) {
  do {
    unsigned char c = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v) c |= 0x80;
    put(b, &c, 1);
  } while (v);
}

static void put_le(struct bytes* b, uint64_t v, int n) {
  int i;
  for (i = 0; i < n; ++i) {
    unsigned char c = (unsigned char)(v >> (8 * i));
    put(b, &c, 1);
  }
}

/* A whole file around `payload`: magic, version, flags, payload size, checksum. */
static struct bytes binary_file(const struct bytes* payload, uint16_t version) {
  static const unsigned char magic[kMagicSize] = {0x89, 'T', 'R', 'I', '\r', '\n', 0x1a, '\n'};
  struct bytes f = {NULL, 0, 0};
  put(&f, magic, sizeof magic);
  put_le(&f, version, 2);
  put_le(&f, 0, 2);
  put_le(&f, payload->n, 8);
  put_le(&f, XXH3_64bits(payload->p, payload->n), 8);
  put(&f, payload->p, payload->n);
  return f;
}

static tri_blob* scale_binary(tri_context* c) {
  tri_module* m = new_module(c, kScaleText, strlen(kScaleText));
  tri_blob* bin = to_blob(m, 1);
  tri_module_destroy(m);
  return bin;
}

static void binary_header_is_the_documented_one(void** state) {
  (void)state;
  /* The hand-made files below follow docs/format.md; check the library writes that format, so a
   * change of format shows here first. */
  tri_context* c = new_context();
  tri_blob* bin = scale_binary(c);
  const unsigned char* p = (const unsigned char*)tri_blob_data(bin);
  size_t n = tri_blob_size(bin);
  assert_true(n > kHeaderSize);
  assert_memory_equal(p, "\x89TRI\r\n\x1a\n", kMagicSize);
  assert_int_equal(p[8] | p[9] << 8, 2); /* version 2: the source name follows the strings */
  struct bytes payload = {(unsigned char*)p + kHeaderSize, n - kHeaderSize, 0};
  struct bytes again = binary_file(&payload, 2);
  assert_int_equal(again.n, n);
  assert_memory_equal(again.p, p, n);
  free(again.p);
  tri_blob_destroy(bin);
  tri_context_destroy(c);
}

static void wrong_magic_reads_as_text(void** state) {
  (void)state;
  tri_context* c = new_context();
  tri_blob* bin = scale_binary(c);
  size_t n = tri_blob_size(bin), i;
  unsigned char* copy = malloc(n);
  assert_non_null(copy);
  for (i = 0; i < kMagicSize; ++i) {
    memcpy(copy, tri_blob_data(bin), n);
    copy[i] ^= 0x20;
    tri_result r = try_create(c, copy, n, "magic.trib");
    if (r != TRI_ERROR_PARSE) fail_msg("magic byte %zu changed: %s instead of TRI_ERROR_PARSE", i, tri_result_name(r));
    assert_located("magic.trib");
  }
  free(copy);
  tri_blob_destroy(bin);
  tri_context_destroy(c);
}

static void truncated_binary_is_corrupt(void** state) {
  (void)state;
  tri_context* c = new_context();
  tri_blob* bin = scale_binary(c);
  const unsigned char* p = (const unsigned char*)tri_blob_data(bin);
  size_t n = tri_blob_size(bin), len;
  for (len = 1; len < n; ++len) {
    tri_result r = try_create(c, p, len, "cut.trib");
    /* Shorter than the magic, the bytes are not recognized as binary and fail as text. */
    tri_result want = len < kMagicSize ? TRI_ERROR_PARSE : TRI_ERROR_CORRUPT_BINARY;
    if (r != want) fail_msg("cut to %zu of %zu bytes: %s instead of %s", len, n, tri_result_name(r), tri_result_name(want));
  }
  /* Bytes after the payload are corrupt too. */
  unsigned char* longer = malloc(n + 1);
  assert_non_null(longer);
  memcpy(longer, p, n);
  longer[n] = 0;
  expect_create(c, longer, n + 1, "long.trib", TRI_ERROR_CORRUPT_BINARY);
  char* msg = last_error();
  assert_non_null(strstr(msg, "long.trib"));
  free(msg);
  free(longer);
  tri_blob_destroy(bin);
  tri_context_destroy(c);
}

static void corrupted_binary_is_refused(void** state) {
  (void)state;
  tri_context* c = new_context();
  tri_blob* bin = scale_binary(c);
  size_t n = tri_blob_size(bin), i;
  unsigned char* copy = malloc(n);
  assert_non_null(copy);
  /* Every byte after the version, changed alone: the flags, the size, the checksum and the
   * payload (which the checksum covers). */
  for (i = kVersionOffset + 2; i < n; ++i) {
    memcpy(copy, tri_blob_data(bin), n);
    copy[i] ^= 0x01;
    tri_result r = try_create(c, copy, n, "flip.trib");
    if (r != TRI_ERROR_CORRUPT_BINARY) fail_msg("byte %zu changed: %s instead of TRI_ERROR_CORRUPT_BINARY", i, tri_result_name(r));
  }
  /* Version 0 does not exist. */
  memcpy(copy, tri_blob_data(bin), n);
  copy[kVersionOffset] = 0;
  expect_create(c, copy, n, "v0.trib", TRI_ERROR_CORRUPT_BINARY);
  free(copy);
  tri_blob_destroy(bin);
  tri_context_destroy(c);
}

static void newer_format_version_is_unsupported(void** state) {
  (void)state;
  tri_context* c = new_context();
  tri_blob* bin = scale_binary(c);
  size_t n = tri_blob_size(bin);
  unsigned char* copy = malloc(n);
  assert_non_null(copy);
  static const uint16_t versions[] = {3, 7, 0x100, 0xffff};
  size_t i;
  for (i = 0; i < sizeof versions / sizeof versions[0]; ++i) {
    memcpy(copy, tri_blob_data(bin), n);
    copy[kVersionOffset] = (unsigned char)(versions[i] & 0xff);
    copy[kVersionOffset + 1] = (unsigned char)(versions[i] >> 8);
    expect_create(c, copy, n, "new.trib", TRI_ERROR_UNSUPPORTED_VERSION);
    char* msg = last_error();
    assert_non_null(strstr(msg, "new.trib"));
    assert_non_null(strstr(msg, "version"));
    free(msg);
  }
  /* Only the header is read: a newer version is free to change everything after it. */
  expect_create(c, copy, kHeaderSize, "new.trib", TRI_ERROR_UNSUPPORTED_VERSION);
  free(copy);
  tri_blob_destroy(bin);
  tri_context_destroy(c);
}

static void huge_counts_are_refused_before_allocating(void** state) {
  (void)state;
  tri_context* c = new_context();
  struct bytes payload = {NULL, 0, 0};
  struct bytes f;

  /* A header whose payload size is 2^63 (the file has none). */
  f = binary_file(&payload, 1);
  f.p[12 + 7] = 0x80;
  expect_create(c, f.p, f.n, "huge.trib", TRI_ERROR_CORRUPT_BINARY);
  free(f.p);

  /* A string count of 2^62 in a tiny file. */
  put_u(&payload, (uint64_t)1 << 62);
  f = binary_file(&payload, 1);
  expect_create(c, f.p, f.n, "huge.trib", TRI_ERROR_CORRUPT_BINARY);
  free(f.p);

  /* One string of length 2^40. */
  payload.n = 0;
  put_u(&payload, 1);
  put_u(&payload, (uint64_t)1 << 40);
  f = binary_file(&payload, 1);
  tri_result r = try_create(c, f.p, f.n, "huge.trib");
  assert_true(r == TRI_ERROR_CORRUPT_BINARY || r == TRI_ERROR_LIMIT_EXCEEDED);
  free(f.p);

  /* The largest 64-bit count, as a 10-byte varint. */
  payload.n = 0;
  put_u(&payload, UINT64_MAX);
  f = binary_file(&payload, 1);
  expect_create(c, f.p, f.n, "huge.trib", TRI_ERROR_CORRUPT_BINARY);
  free(f.p);

  /* A type count past kMaxTypes (2^20) with the bytes to back it: a limit, not corruption. */
  payload.n = 0;
  put_u(&payload, 0); /* strings */
  put_u(&payload, 0); /* symbols */
  put_u(&payload, ((uint64_t)1 << 20) + 1);
  size_t i;
  for (i = 0; i < ((size_t)1 << 20) + 1; ++i) put_le(&payload, 0, 2);
  f = binary_file(&payload, 1);
  expect_create(c, f.p, f.n, "types.trib", TRI_ERROR_LIMIT_EXCEEDED);
  free(f.p);
  free(payload.p);
  tri_context_destroy(c);
}

static void deeply_nested_binary_is_a_limit_not_a_crash(void** state) {
  (void)state;
  /* kernel @k(%c: i1) { if %c { if %c { ... } } } with 10000 ifs, written by hand. */
  enum { kDepth = 10000 };
  struct bytes p = {NULL, 0, 0};
  int i;
  put_u(&p, 3); /* strings: "k", "if", "c" */
  put_u(&p, 1), put(&p, "k", 1);
  put_u(&p, 2), put(&p, "if", 2);
  put_u(&p, 1), put(&p, "c", 1);
  put_u(&p, 0);  /* symbols */
  put_u(&p, 11); /* types: the scalars, i1 first */
  for (i = 0; i < 11; ++i) put_u(&p, 0), put_u(&p, (uint64_t)i);
  put_u(&p, 1);                                          /* one function: */
  put_u(&p, 0), put_u(&p, 1), put_u(&p, 1), put_u(&p, 1); /*   @k, a kernel, at 1:1 */
  put_u(&p, 0), put_u(&p, 0);                             /*   no results, no constexprs */
  put_u(&p, 1);                                          /*   one param: */
  put_u(&p, 2), put_u(&p, 0);                             /*     %c: i1 */
  put_u(&p, 0), put_u(&p, 0), put_u(&p, 0);               /*     no facts */
  put_u(&p, 1), put_u(&p, 11), put_u(&p, 2);              /*     at 1:11, body argument %c */
  put_u(&p, 1), put_u(&p, 1), put_u(&p, 1);               /*   body at 1:1 with one op */
  for (i = 0; i < kDepth; ++i) {
    put_u(&p, 1), put_u(&p, 2), put_u(&p, 3);             /* if, at 2:3 */
    put_u(&p, 1), put_u(&p, 1);                           /*   operand %c */
    put_u(&p, 0);                                         /*   no attributes */
    put_u(&p, 1);                                         /*   one region */
    put_u(&p, 2), put_u(&p, 3), put_u(&p, 0);             /*     at 2:3, no arguments */
    put_u(&p, i + 1 < kDepth ? 1 : 0);                    /*     one op (the next if), or none */
  }
  for (i = 0; i < kDepth; ++i) put_u(&p, 0); /* each if has no results */
  struct bytes f = binary_file(&p, 1);
  tri_context* c = new_context();
  expect_create(c, f.p, f.n, "deep.trib", TRI_ERROR_LIMIT_EXCEEDED);
  char* msg = last_error();
  assert_non_null(strstr(msg, "deep.trib"));
  free(msg);
  tri_context_destroy(c);
  free(f.p);
  free(p.p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(version_macros_match_library),
      cmocka_unit_test(result_names),
      cmocka_unit_test(last_error_size_query_and_truncation),
      cmocka_unit_test(options_setters_check_their_arguments),
      cmocka_unit_test(version_mismatch_is_refused),
      cmocka_unit_test(log_callback_receives_create_errors),
      cmocka_unit_test(allocator_hook_allocations_balance),
      cmocka_unit_test(allocator_failure_gives_out_of_memory),
      cmocka_unit_test(module_from_text_reflects_its_signature),
      cmocka_unit_test(module_from_binary_is_the_same_module),
      cmocka_unit_test(text_with_comments),
      cmocka_unit_test(handles_are_destroyed_in_any_order),
      cmocka_unit_test(context_and_module_are_shared_by_threads),
      cmocka_unit_test(null_arguments_are_refused),
      cmocka_unit_test(empty_input_is_refused),
      cmocka_unit_test(malformed_text_is_a_located_parse_error),
      cmocka_unit_test(type_errors_are_located_verify_errors),
      cmocka_unit_test(nul_bytes_in_text_are_parse_errors),
      cmocka_unit_test(deep_nesting_is_a_limit_not_a_crash),
      cmocka_unit_test(binary_header_is_the_documented_one),
      cmocka_unit_test(wrong_magic_reads_as_text),
      cmocka_unit_test(truncated_binary_is_corrupt),
      cmocka_unit_test(corrupted_binary_is_refused),
      cmocka_unit_test(newer_format_version_is_unsupported),
      cmocka_unit_test(huge_counts_are_refused_before_allocating),
      cmocka_unit_test(deeply_nested_binary_is_a_limit_not_a_crash),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
