/* The C API's CUDA device queries where no driver can be loaded (TRI_LIBCUDA points at a file
 * that does not exist, set before the first call: the driver is loaded once per process). Every
 * query fails with TRI_ERROR_UNSUPPORTED and the message that says why, which a host can tell
 * apart from "a driver with 0 devices"; misuse is still TRI_ERROR_INVALID_ARGUMENT. Only
 * include/tri/tri.h is used. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tri/tri.h"

static tri_context* make_context(void) {
  tri_context* c = NULL;
  assert_int_equal(tri_context_create(NULL, TRI_VERSION_NUMBER, &c), TRI_OK);
  return c;
}

static void expect_no_driver_message(void) {
  char msg[1024];
  tri_last_error_message(msg, sizeof msg);
  assert_non_null(strstr(msg, "no CUDA driver: /nonexistent/libcuda.so.1 could not be loaded ("));
  assert_non_null(strstr(msg, "the \"cuda\" target needs an NVIDIA driver; the \"cpu\" target works without one"));
}

static void test_queries_without_driver(void** state) {
  (void)state;
  tri_context* c = make_context();
  uint32_t count = 77;
  assert_int_equal(tri_device_count(c, &count), TRI_ERROR_UNSUPPORTED);
  expect_no_driver_message();
  assert_int_equal(count, 77);
  int64_t value = 0;
  assert_int_equal(tri_device_attribute(c, 0, TRI_DEVICE_ATTR_SM_COUNT, &value), TRI_ERROR_UNSUPPORTED);
  expect_no_driver_message();
  assert_int_equal(tri_device_attribute(c, 0, TRI_DEVICE_ATTR_MAX_PTX_VERSION, &value), TRI_ERROR_UNSUPPORTED);
  size_t size = 0;
  assert_int_equal(tri_device_name(c, 0, NULL, 0, &size), TRI_ERROR_UNSUPPORTED);
  expect_no_driver_message();
  tri_context_destroy(c);
}

static void test_misuse(void** state) {
  (void)state;
  tri_context* c = make_context();
  uint32_t count = 0;
  int64_t value = 0;
  size_t size = 0;
  char buf[8];
  assert_int_equal(tri_device_count(NULL, &count), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_device_count(c, NULL), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_device_attribute(c, 0, 11, &value), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_device_attribute(c, 0, -1, &value), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_device_attribute(c, 0, TRI_DEVICE_ATTR_SM_COUNT, NULL), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_device_name(c, 0, NULL, 4, &size), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(tri_device_name(c, 0, buf, sizeof buf, NULL), TRI_ERROR_INVALID_ARGUMENT);
  tri_context_destroy(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_queries_without_driver),
      cmocka_unit_test(test_misuse),
  };
  setenv("TRI_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
