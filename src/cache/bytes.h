// The byte-level helpers every cache file format shares (entries, shortcuts, bundles, the build
// id): little-endian integers of 1 to 8 bytes, so a file made on one host reads on another, and
// lowercase hex for names and messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tri::cache {

// Appends the low `n` bytes of v, least significant first.
inline void put_le(std::string* o, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) o->push_back(static_cast<char>(v >> (8 * i)));
}

// Reads `n` bytes at p, least significant first.
inline uint64_t get_le(const char* p, int n) {
  uint64_t r = 0;
  for (int i = 0; i < n; ++i) r |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return r;
}

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
