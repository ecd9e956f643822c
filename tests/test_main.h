// Common includes for the C++ unit tests (include it after all other headers): cmocka (whose 1.1 header lacks C++ guards) and small
// helpers to reach the source tree's test data.
#pragma once

// C++ headers come first: cmocka defines macros (fail, skip) that clash with the standard library.
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

namespace tri_test {

// Path of a file under the source tree (TRI_SOURCE_DIR, or the working directory).
inline std::string source_path(const std::string& rel) {
  const char* root = std::getenv("TRI_SOURCE_DIR");
  return (root ? std::string(root) + "/" : std::string()) + rel;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace tri_test
