/* The C API's CUDA device queries with the machine's own driver: count, every attribute and the
 * name (size query, then fill, then truncation) of each device. Where there is no driver or no
 * device the test prints "skipped: no CUDA device" and CTest reports it as skipped
 * (tests/CMakeLists.txt). Only include/tri/tri.h is used. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tri/tri.h"

static tri_context* g_context;

static int64_t attr(uint32_t device, int32_t a) {
  int64_t v = -1;
  assert_int_equal(tri_device_attribute(g_context, device, a, &v), TRI_OK);
  return v;
}

static void test_devices(void** state) {
  (void)state;
  uint32_t count = 0;
  tri_result r = tri_device_count(g_context, &count);
  if (r == TRI_ERROR_UNSUPPORTED || (r == TRI_OK && count == 0)) {
    printf("skipped: no CUDA device\n");
    skip();
  }
  assert_int_equal(r, TRI_OK);
  for (uint32_t d = 0; d < count; ++d) {
    assert_true(attr(d, TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MAJOR) >= 3);
    assert_true(attr(d, TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MINOR) >= 0);
    assert_true(attr(d, TRI_DEVICE_ATTR_SM_COUNT) > 0);
    assert_int_equal(attr(d, TRI_DEVICE_ATTR_SHARED_PER_BLOCK), 48 * 1024);
    assert_true(attr(d, TRI_DEVICE_ATTR_SHARED_PER_BLOCK_OPTIN) >= 48 * 1024);
    assert_true(attr(d, TRI_DEVICE_ATTR_SHARED_PER_SM) >= attr(d, TRI_DEVICE_ATTR_SHARED_PER_BLOCK_OPTIN));
    assert_true(attr(d, TRI_DEVICE_ATTR_L2_SIZE) > 0);
    assert_true(attr(d, TRI_DEVICE_ATTR_MAX_THREADS_PER_BLOCK) >= 512);
    assert_int_equal(attr(d, TRI_DEVICE_ATTR_WARP_SIZE), 32);
    assert_true(attr(d, TRI_DEVICE_ATTR_DRIVER_VERSION) >= 11040);
    assert_true(attr(d, TRI_DEVICE_ATTR_MAX_PTX_VERSION) >= 74);
    size_t size = 0;
    assert_int_equal(tri_device_name(g_context, d, NULL, 0, &size), TRI_OK);
    assert_true(size > 1);
    char* name = malloc(size);
    size_t again = 0;
    assert_int_equal(tri_device_name(g_context, d, name, size, &again), TRI_OK);
    assert_int_equal(again, size);
    assert_int_equal(strlen(name), size - 1);
    char small[4];
    assert_int_equal(tri_device_name(g_context, d, small, sizeof small, &again), TRI_OK);
    assert_int_equal(again, size);
    assert_int_equal(strlen(small), size - 1 < 3 ? size - 1 : 3);
    assert_memory_equal(small, name, strlen(small));
    printf("device %u: %s, sm_%lld%lld, %lld SMs\n", d, name,
           (long long)attr(d, TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MAJOR),
           (long long)attr(d, TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MINOR), (long long)attr(d, TRI_DEVICE_ATTR_SM_COUNT));
    free(name);
  }
  int64_t v = 0;
  assert_int_equal(tri_device_attribute(g_context, count, TRI_DEVICE_ATTR_SM_COUNT, &v), TRI_ERROR_INVALID_ARGUMENT);
  char msg[512];
  tri_last_error_message(msg, sizeof msg);
  assert_non_null(strstr(msg, "does not exist"));
}

/* PTX for a named architecture carries the PTX ISA version Tri writes by default (8.0), capped
 * to what the installed driver accepts: the fake driver of capi/test_device_old_driver reports
 * CUDA 11.8 (PTX 7.8), where sm_90 is written as PTX 7.8 and sm_90a (which needs 8.0) is refused
 * with the versions named. */
static void test_ptx_version_capped_to_driver(void** state) {
  (void)state;
  uint32_t count = 0;
  if (tri_device_count(g_context, &count) != TRI_OK || count == 0) {
    printf("skipped: no CUDA device\n");
    skip();
  }
  int64_t cap = attr(0, TRI_DEVICE_ATTR_MAX_PTX_VERSION);
  FILE* f = fopen("examples/vector_add.tri", "rb");
  assert_non_null(f);
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof text, f);
  fclose(f);
  tri_module* m = NULL;
  assert_int_equal(tri_module_create(g_context, text, n, "vector_add.tri", &m), TRI_OK);
  tri_compile_options* o = NULL;
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(o, "cuda"), TRI_OK);
  assert_int_equal(tri_compile_options_set_arch(o, "sm_90"), TRI_OK);
  tri_kernel* k = NULL;
  assert_int_equal(tri_kernel_compile(m, "vector_add", o, &k), TRI_OK);
  tri_blob* ptx = NULL;
  assert_int_equal(tri_kernel_code(k, "ptx", &ptx), TRI_OK);
  char want[32];
  int64_t v = cap < 80 ? cap : 80;
  snprintf(want, sizeof want, ".version %d.%d", (int)(v / 10), (int)(v % 10));
  char* code = calloc(1, tri_blob_size(ptx) + 1);
  memcpy(code, tri_blob_data(ptx), tri_blob_size(ptx));
  printf("driver accepts PTX %d.%d; the PTX says %s\n", (int)(cap / 10), (int)(cap % 10), want);
  assert_non_null(strstr(code, want));
  free(code);
  tri_blob_destroy(ptx);
  tri_kernel_destroy(k);
  assert_int_equal(tri_compile_options_set_arch(o, "sm_90a"), TRI_OK);
  tri_result r = tri_kernel_compile(m, "vector_add", o, &k);
  if (cap < 80) {
    assert_int_equal(r, TRI_ERROR_UNSUPPORTED);
    char msg[512];
    tri_last_error_message(msg, sizeof msg);
    assert_non_null(strstr(msg, "accepts PTX up to 7.8"));
    assert_non_null(strstr(msg, "needs PTX 8.0"));
  } else {
    assert_int_equal(r, TRI_OK);
    tri_kernel_destroy(k);
  }
  tri_compile_options_destroy(o);
  tri_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_devices), cmocka_unit_test(test_ptx_version_capped_to_driver)};
  if (tri_context_create(NULL, TRI_VERSION_NUMBER, &g_context) != TRI_OK) return 1;
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  tri_context_destroy(g_context);
  return failed;
}
