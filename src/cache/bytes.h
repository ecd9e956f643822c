// The byte-level helpers every cache file format shares (entries, shortcuts, bundles, the build
// id): little-endian integers of 1 to 8 bytes (base/bytes.h), so a file made on one host reads on
// another, and lowercase hex for names and messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/bytes.h"

namespace tri::cache {

using ::tri::get_le;
using ::tri::put_le;

// Two lowercase hex digits per byte.
inline std::string hex(const unsigned char* p, size_t n) {
  static const char d[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    s += d[p[i] >> 4];
    s += d[p[i] & 15];
  }
  return s;
}

}  // namespace tri::cache
