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

#include "ir/text.h"
#include "ir/verifier.h"
#include "test_main.h"

using namespace tri;
using namespace tri::ir;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> files_in(const std::string& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(tri_test::source_path(dir), ec))
    if (e.path().extension() == ".tri") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

static void must_fail(void** state) {
  std::vector<fs::path> inputs = files_in("tests/golden/verify_fail");
  if (inputs.size() < 40) fail_msg("expected at least 40 must-fail inputs, found %zu", inputs.size());
  const std::string kExpect = "// expect: ";
  const std::string kCode = "// code: ";
  int failures = 0;
  for (const fs::path& in : inputs) {
    std::string name = in.filename().string();
    std::string text = tri_test::read_file(in.string());
    size_t eol = text.find('\n');
    std::string first = text.substr(0, eol);
    if (first.rfind(kExpect, 0) != 0) fail_msg("%s: first line must be '%s<message>'", name.c_str(), kExpect.c_str());
    std::string want = first.substr(kExpect.size());
    Code want_code = Code::Verify;
    if (eol != std::string::npos && text.compare(eol + 1, kCode.size(), kCode) == 0) {
      size_t start = eol + 1 + kCode.size();
      size_t eol2 = text.find('\n', start);
      std::string code = text.substr(start, eol2 == std::string::npos ? eol2 : eol2 - start);
      if (code == "LimitExceeded") want_code = Code::LimitExceeded;
      else if (code != "Verify") fail_msg("%s: unknown code '%s'", name.c_str(), code.c_str());
    }
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
  std::vector<fs::path> inputs = files_in("tests/golden/verify_ok");
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
