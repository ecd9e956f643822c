// The CUDA driver layer where no driver can be loaded; runs on every machine. TRI_LIBCUDA points
// the process-wide loader at a file that does not exist (set before the first driver call: the
// driver is loaded once per process, which is why this is an executable of its own), and every
// entry point must then fail with Code::Unsupported and the message that tells a user what to do.
// Also the parts that need no driver: the PTX ISA table and the error mapping.
#include "target/cuda/driver.h"
#include "target/cuda/module.h"

#include <cstdlib>

#include "test_main.h"

using namespace tri;
using namespace tri::cuda;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

void expect_no_driver(const Status& st) {
  assert_int_equal(int(st.code()), int(Code::Unsupported));
  const std::string& m = st.message();
  assert_true(m.rfind("no CUDA driver: /nonexistent/libcuda.so.1 could not be loaded (", 0) == 0);
  assert_true(contains(m, "/nonexistent/libcuda.so.1: cannot open shared object file"));
  assert_true(contains(m, "; the \"cuda\" target needs an NVIDIA driver; the \"cpu\" target works without one"));
}

void test_env_override_without_driver(void**) {
  assert_string_equal(driver_library_name().c_str(), "/nonexistent/libcuda.so.1");
  const Api* api = nullptr;
  expect_no_driver(driver(&api));
  assert_null(api);
  int n = -1;
  expect_no_driver(device_count(&n));
  assert_int_equal(n, -1);
  const DeviceInfo* d = nullptr;
  expect_no_driver(device_info(0, &d));
  int version = 0;
  expect_no_driver(driver_version(&version));
  CUcontext c = nullptr;
  expect_no_driver(current_context(&c));
  Devices devices;
  expect_no_driver(devices.primary(0, &c));
  expect_no_driver(devices.launch_context(0, nullptr, &c));
  CUdeviceptr p = 0;
  expect_no_driver(mem_alloc(nullptr, 16, &p));
  Module m;
  expect_no_driver(load_ptx(nullptr, ".version 7.0", &m));
  ModuleSet set(".version 7.0", "", "k");
  CUfunction fn = nullptr;
  expect_no_driver(set.function(nullptr, &fn));
  expect_no_driver(launch(nullptr, LaunchConfig(), nullptr, nullptr, "k"));
  // Asking again gives the same answer (the load is not retried, and not forgotten).
  expect_no_driver(driver(&api));
}

void test_load_library_from_path(void**) {
  Library lib;
  load_library("/nonexistent/other.so", &lib);
  assert_int_equal(int(lib.status.code()), int(Code::Unsupported));
  assert_true(contains(lib.status.message(), "no CUDA driver: /nonexistent/other.so could not be loaded ("));
  // A library that loads but is not a CUDA driver: the missing entry point is named.
  load_library("libm.so.6", &lib);
  assert_int_equal(int(lib.status.code()), int(Code::Unsupported));
  assert_true(contains(lib.status.message(), "no usable CUDA driver: libm.so.6 lacks cuInit"));
}

void test_ptx_table(void**) {
  struct {
    int driver, major, minor;
  } cases[] = {
      {9020, 0, 0},  {10000, 6, 3}, {11040, 7, 4}, {11080, 7, 8}, {11090, 7, 8}, {12000, 8, 0},
      {12010, 8, 1}, {12020, 8, 2}, {12030, 8, 3}, {12040, 8, 4}, {12050, 8, 5}, {12060, 8, 5},
      {12070, 8, 5}, {12080, 8, 7}, {12090, 8, 8}, {13000, 9, 0}, {13020, 9, 0},
  };
  for (const auto& c : cases) {
    PtxVersion v = max_ptx_for_driver(c.driver);
    if (v.major != c.major || v.minor != c.minor)
      fail_msg("driver %d: PTX %d.%d, expected %d.%d", c.driver, v.major, v.minor, c.major, c.minor);
  }
  assert_false(max_ptx_for_driver(9020).known());
  assert_int_equal(max_ptx_for_driver(12040).number(), 84);
}

void test_error_mapping(void**) {
  // No driver to name the error: the number is given.
  Status st = check(CUDA_ERROR_INVALID_PTX, "cuModuleLoadDataEx");
  assert_int_equal(int(st.code()), int(Code::Compile));
  assert_string_equal(st.message().c_str(), "cuModuleLoadDataEx failed: CUDA error 218");
  assert_int_equal(int(check(CUDA_ERROR_OUT_OF_MEMORY, "x").code()), int(Code::OutOfMemory));
  assert_int_equal(int(check(CUDA_ERROR_INVALID_VALUE, "x").code()), int(Code::InvalidArgument));
  assert_int_equal(int(check(CUDA_ERROR_NOT_FOUND, "x").code()), int(Code::NotFound));
  assert_int_equal(int(check(CUDA_ERROR_NO_DEVICE, "x").code()), int(Code::Unsupported));
  assert_int_equal(int(check(719 /* CUDA_ERROR_LAUNCH_FAILED */, "x").code()), int(Code::Runtime));
  assert_true(check(CUDA_SUCCESS, "x").is_ok());
}

}  // namespace

int main() {
  setenv("TRI_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_env_override_without_driver),
      cmocka_unit_test(test_load_library_from_path),
      cmocka_unit_test(test_ptx_table),
      cmocka_unit_test(test_error_mapping),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
