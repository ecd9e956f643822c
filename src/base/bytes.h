// Little-endian bytes, so that what one host writes another reads: the integers of 1 to 8 bytes
// every file format of Tri uses (the disk cache's files, the targets' cache metadata), and a
// writer and a bounds-checked reader of integers, length-prefixed strings and lists of integers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tri {

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

// Integers (n bytes), strings (a 4-byte length, then the bytes) and lists of i64 (a 4-byte count).
struct ByteWriter {
  std::string s;
  void u(uint64_t v, int n = 8) { put_le(&s, v, n); }
  void str(const std::string& v) {
    u(v.size(), 4);
    s += v;
  }
  void ints(const std::vector<int64_t>& v) {
    u(v.size(), 4);
    for (int64_t x : v) u(static_cast<uint64_t>(x));
  }
};

// Reads what ByteWriter wrote, trusting nothing: a read past the end sets ok to false, and from
// then on every read gives 0 or empty, so a caller checks ok once, at the end (with done()).
struct ByteReader {
  const std::string& s;
  size_t pos = 0;
  bool ok = true;
  uint64_t u(int n = 8) {
    if (!ok || s.size() - pos < static_cast<size_t>(n)) return ok = false, 0;
    uint64_t v = get_le(s.data() + pos, n);
    pos += n;
    return v;
  }
  std::string str() {
    uint64_t n = u(4);
    if (!ok || s.size() - pos < n) return ok = false, std::string();
    pos += n;
    return s.substr(pos - n, n);
  }
  std::vector<int64_t> ints() {
    uint64_t n = u(4);
    if (!ok || (s.size() - pos) / 8 < n) return ok = false, std::vector<int64_t>();
    std::vector<int64_t> v(n);
    for (auto& x : v) x = static_cast<int64_t>(u());
    return v;
  }
  // Everything was read, and nothing more.
  bool done() const { return ok && pos == s.size(); }
};

}  // namespace tri
