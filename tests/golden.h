// Helpers for the data-driven golden tests: listing a golden folder, and reading the expectation
// a must-fail file states in its first lines:
//   // expect: <the exact message>
//   // code: LimitExceeded          (optional; otherwise the test's default code)
// Include it before test_main.h (cmocka's macros must come last).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"

namespace tri_test {

// Files of `dir` (relative to the source tree) ending in `ext`, sorted by name.
inline std::vector<std::filesystem::path> golden_files(const std::string& dir, const std::string& ext) {
  const char* root = std::getenv("TRI_SOURCE_DIR");
  std::filesystem::path base = root ? std::filesystem::path(root) / dir : std::filesystem::path(dir);
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(base, ec))
    if (e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

struct Expectation {
  std::string message;
  tri::Code code;
  std::string error;  // why the header could not be read; empty when it was
};

// Reads the `// expect:` line and the optional `// code:` line at the top of `text`.
inline Expectation read_expectation(const std::string& text, tri::Code default_code) {
  const std::string kExpect = "// expect: ", kCode = "// code: ";
  Expectation e{"", default_code, ""};
  size_t eol = text.find('\n');
  std::string first = text.substr(0, eol);
  if (first.rfind(kExpect, 0) != 0) {
    e.error = "the first line must be '" + kExpect + "<message>'";
    return e;
  }
  e.message = first.substr(kExpect.size());
  if (eol != std::string::npos && text.compare(eol + 1, kCode.size(), kCode) == 0) {
    size_t start = eol + 1 + kCode.size();
    size_t end = text.find('\n', start);
    std::string code = text.substr(start, end == std::string::npos ? end : end - start);
    if (code == "LimitExceeded") e.code = tri::Code::LimitExceeded;
    else if (code == "Parse") e.code = tri::Code::Parse;
    else if (code == "Verify") e.code = tri::Code::Verify;
    else e.error = "unknown code '" + code + "'";
  }
  return e;
}

}  // namespace tri_test
