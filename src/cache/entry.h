// The bytes of one cache entry file: a header (magic, format version, the full key, the payload
// kind, the caller's opaque metadata, sizes), the zstd-compressed payload, and an xxh3-128 checksum
// of everything before it. decode_entry validates all of it, so a corrupt, truncated, foreign or
// stale file is reported as an error (a miss to the caller), never as wrong bytes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "cache/key.h"

namespace tri::cache {

constexpr uint32_t kEntryFormatVersion = 1;

struct Entry {
  Key key;
  std::string kind;      // "ptx", "cubin", "obj", ...
  std::string metadata;  // opaque to the cache
  std::string payload;   // uncompressed
};

// Serializes an entry (zstd level 3 on the payload).
Status encode_entry(const Entry& e, std::string* out);

// Parses and checks an entry file's bytes; `expect` is the key the caller looked up.
Status decode_entry(const std::string& bytes, const Key& expect, Entry* out);

// The metadata of the C API's entries is a list of named fields (docs/cache.md lists the
// names: target, kernel, made_for, target_meta): each as u32 name length, name, u32 value
// length, value (little-endian). unpack_fields is false for bytes that are not such a list.
using Fields = std::vector<std::pair<std::string, std::string>>;
std::string pack_fields(const Fields& fields);
bool unpack_fields(const std::string& bytes, Fields* out);
// The value of field `name`, or "" when absent.
std::string field(const Fields& fields, const std::string& name);

}  // namespace tri::cache
