// Data-driven tests of the verifier on IR text.
//  - tests/golden/verify_fail/NAME.tri must parse and then fail verify() with exactly the message
//    on its first line, `// expect: NAME.tri:3:9: error: ...`, and the code on an optional second
//    line `// code: LimitExceeded` (Verify when absent). The source name is the file name.
//  - tests/golden/verify_ok/NAME.tri must parse and verify.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "golden.h"
#include "ir/text.h"
#include "ir/verifier.h"
#include "test_main.h"

using namespace tri;
using namespace tri::ir;
namespace fs = std::filesystem;


static void must_fail(void** state) {
  std::vector<fs::path> inputs = tri_test::golden_files("tests/golden/verify_fail", ".tri");
  if (inputs.size() < 40) fail_msg("expected at least 40 must-fail inputs, found %zu", inputs.size());
  int failures = 0;
  for (const fs::path& in : inputs) {
    std::string name = in.filename().string();
    std::string text = tri_test::read_file(in.string());
    tri_test::Expectation e = tri_test::read_expectation(text, Code::Verify);
    if (!e.error.empty()) fail_msg("%s: %s", name.c_str(), e.error.c_str());
    const std::string& want = e.message;
    Code want_code = e.code;
    std::unique_ptr<Module> m;
    Status st = parse_text(text, name, &m);
    if (!st) {
      print_error("%s: does not parse (it must, and then fail verification): %s\n", name.c_str(), st.message().c_str());
      ++failures;
      continue;
    }
    st = verify(*m);
    if (st.is_ok()) {
      print_error("%s: verified, expected: %s\n", name.c_str(), want.c_str());
      ++failures;
    } else if (st.message() != want || st.code() != want_code) {
      print_error("%s:\n  got  (%s) %s\n  want (%s) %s\n", name.c_str(), code_name(st.code()), st.message().c_str(),
                  code_name(want_code), want.c_str());
      ++failures;
    }
  }
  assert_int_equal(failures, 0);
}

static void must_verify(void** state) {
  std::vector<fs::path> inputs = tri_test::golden_files("tests/golden/verify_ok", ".tri");
  if (inputs.size() < 5) fail_msg("expected at least 5 inputs under tests/golden/verify_ok, found %zu", inputs.size());
  int failures = 0;
  for (const fs::path& in : inputs) {
    std::string name = in.filename().string();
    std::unique_ptr<Module> m;
    Status st = parse_text(tri_test::read_file(in.string()), name, &m);
    if (st) st = verify(*m);
    if (!st) {
      print_error("%s\n", st.message().c_str());
      ++failures;
    }
  }
  assert_int_equal(failures, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(must_fail),
      cmocka_unit_test(must_verify),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
