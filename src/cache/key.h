// Cache keys: an xxh3-128 digest over named, length-prefixed fields, so that two different field
// lists can never hash the same byte stream ("ab"+"c" and "a"+"bc" differ). The hex form names the
// entry file in a cache directory. This is the first piece of the disk cache (issue 7); the entry
// format and the directory layer build on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tri::cache {

struct Key {
  uint64_t hi = 0;
  uint64_t lo = 0;
  bool operator==(const Key& o) const { return hi == o.hi && lo == o.lo; }
  bool operator!=(const Key& o) const { return !(*this == o); }
  // 32 lowercase hex digits, high half first.
  std::string hex() const;
};

// Parses the 32-digit form that Key::hex writes; false for anything else.
bool parse_key_hex(const std::string& text, Key* out);

class KeyBuilder {
 public:
  KeyBuilder();
  ~KeyBuilder();
  KeyBuilder(const KeyBuilder&) = delete;
  KeyBuilder& operator=(const KeyBuilder&) = delete;

  // Adds one field: its name and its bytes, each preceded by its length.
  KeyBuilder& add(const std::string& name, const void* data, size_t size);
  KeyBuilder& add(const std::string& name, const std::string& value) {
    return add(name, value.data(), value.size());
  }
  KeyBuilder& add_u64(const std::string& name, uint64_t value);

  Key finish() const;

 private:
  void* state_;  // XXH3_state_t, kept out of this header
};

}  // namespace tri::cache
