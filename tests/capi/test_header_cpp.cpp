// tri.h seen from C++: it compiles as C++ (extern "C", no C-only constructs), its functions have C
// linkage and the expected signatures, and it is usable with the RAII a C++ host would write.
#include <memory>
#include <string>
#include <type_traits>

#include "tri/tri.h"
#include "test_main.h"

static_assert(std::is_same<tri_result, int32_t>::value, "tri_result is a fixed-width integer");
static_assert(std::is_same<decltype(&tri_version), uint32_t (*)()>::value, "tri_version's signature");
static_assert(std::is_same<decltype(&tri_module_create),
                           tri_result (*)(tri_context*, const void*, size_t, const char*, tri_module**)>::value,
              "tri_module_create's signature");
static_assert(TRI_OK == 0, "TRI_OK is 0");

namespace {

struct ContextDeleter {
  void operator()(tri_context* c) const { tri_context_destroy(c); }
};
struct ModuleDeleter {
  void operator()(tri_module* m) const { tri_module_destroy(m); }
};
struct BlobDeleter {
  void operator()(tri_blob* b) const { tri_blob_destroy(b); }
};
using ContextPtr = std::unique_ptr<tri_context, ContextDeleter>;
using ModulePtr = std::unique_ptr<tri_module, ModuleDeleter>;
using BlobPtr = std::unique_ptr<tri_blob, BlobDeleter>;

const std::string kText =
    "kernel @fill(%out: ptr<i32> {align=4}) constexpr(N: i32 = 64) {\n"
    "  %r = arange[start=0, end=N] : <N x i32>\n"
    "  %b = splat %out : <N x ptr<i32>>\n"
    "  %p = addptr %b, %r : <N x ptr<i32>>\n"
    "  store %p, %r\n"
    "  return\n"
    "}\n";

std::string last_error() {
  std::string s(tri_last_error_message(nullptr, 0), '\0');
  tri_last_error_message(&s[0], s.size());
  s.pop_back();
  return s;
}

}  // namespace

static void usable_from_cpp_with_raii(void** state) {
  tri_context* raw = nullptr;
  assert_int_equal(tri_context_create(nullptr, TRI_VERSION_NUMBER, &raw), TRI_OK);
  ContextPtr context(raw);

  tri_module* m = nullptr;
  tri_result r = tri_module_create(context.get(), kText.data(), kText.size(), "fill.tri", &m);
  if (r != TRI_OK) fail_msg("%s: %s", tri_result_name(r), last_error().c_str());
  ModulePtr module(m);
  context.reset();  // the module keeps the context alive

  uint32_t n = 0;
  assert_int_equal(tri_module_function_count(module.get(), &n), TRI_OK);
  assert_int_equal(n, 1);
  const char* def = nullptr;
  assert_int_equal(tri_module_param_default(module.get(), 0, 1, &def), TRI_OK);
  assert_string_equal(def, "64");

  tri_blob* b = nullptr;
  assert_int_equal(tri_module_to_text(module.get(), &b), TRI_OK);
  BlobPtr text(b);
  std::string s(static_cast<const char*>(tri_blob_data(text.get())), tri_blob_size(text.get()));
  assert_true(s.find("kernel @fill") != std::string::npos);
}

static void errors_read_as_std_string(void** state) {
  tri_module* m = nullptr;
  assert_int_equal(tri_module_create(nullptr, "x", 1, nullptr, &m), TRI_ERROR_INVALID_ARGUMENT);
  assert_true(last_error().find("context") != std::string::npos);
  assert_string_equal(tri_result_name(TRI_ERROR_INVALID_ARGUMENT), "TRI_ERROR_INVALID_ARGUMENT");
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(usable_from_cpp_with_raii),
      cmocka_unit_test(errors_read_as_std_string),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
