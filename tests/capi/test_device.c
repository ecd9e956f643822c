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

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_devices)};
  if (tri_context_create(NULL, TRI_VERSION_NUMBER, &g_context) != TRI_OK) return 1;
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  tri_context_destroy(g_context);
  return failed;
}
