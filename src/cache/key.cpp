// xxh3-128 cache keys over length-prefixed fields (see key.h).
#include "cache/key.h"

#include <new>

#include <xxhash.h>

namespace tri::cache {

namespace {

void put_len(XXH3_state_t* st, uint64_t n) {
  // Little-endian on every host, so a key made on one machine matches another's.
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(n >> (8 * i));
  XXH3_128bits_update(st, b, sizeof b);
}

}  // namespace

std::string Key::hex() const {
  static const char digits[] = "0123456789abcdef";
  std::string s(32, '0');
  for (int i = 0; i < 16; ++i) {
    s[15 - i] = digits[(hi >> (4 * i)) & 15];
    s[31 - i] = digits[(lo >> (4 * i)) & 15];
  }
  return s;
}

bool parse_key_hex(const std::string& text, Key* out) {
  if (text.size() != 32) return false;
  uint64_t halves[2] = {0, 0};
  for (size_t i = 0; i < 32; ++i) {
    char c = text[i];
    int v;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else return false;
    halves[i / 16] = (halves[i / 16] << 4) | static_cast<uint64_t>(v);
  }
  out->hi = halves[0];
  out->lo = halves[1];
  return true;
}

KeyBuilder::KeyBuilder() {
  XXH3_state_t* st = XXH3_createState();
  if (!st) throw std::bad_alloc();
  XXH3_128bits_reset(st);
  state_ = st;
}

KeyBuilder::~KeyBuilder() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

KeyBuilder& KeyBuilder::add(const std::string& name, const void* data, size_t size) {
  auto* st = static_cast<XXH3_state_t*>(state_);
  put_len(st, name.size());
  XXH3_128bits_update(st, name.data(), name.size());
  put_len(st, size);
  if (size) XXH3_128bits_update(st, data, size);
  return *this;
}

KeyBuilder& KeyBuilder::add_u64(const std::string& name, uint64_t value) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(value >> (8 * i));
  return add(name, b, sizeof b);
}

Key KeyBuilder::finish() const {
  XXH128_hash_t h = XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_));
  return Key{h.high64, h.low64};
}

}  // namespace tri::cache
