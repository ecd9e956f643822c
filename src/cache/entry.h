// The bytes of one cache entry file: a header (magic, format version, the full key, the payload
// kind, the caller's opaque metadata, sizes), the zstd-compressed payload, and a BLAKE2b-256 MAC
// of everything before it, keyed with the cache's secret (cache/crypto.h; unkeyed inside a bundle).
// decode_entry checks the MAC before it trusts any field, so a corrupt, truncated, foreign, stale
// or forged file is reported as an error (a miss to the caller), never as wrong bytes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "cache/crypto.h"
#include "cache/key.h"

namespace tri::cache {

constexpr uint32_t kEntryFormatVersion = 2;
// Bounds checked before anything is allocated or read past the header: an entry file, its
// uncompressed payload, its kind and its metadata.
constexpr uint64_t kMaxEntryBytes = uint64_t(256) << 20;
constexpr uint64_t kMaxPayloadBytes = uint64_t(256) << 20;
constexpr uint64_t kMaxKindBytes = 64;
constexpr uint64_t kMaxMetadataBytes = uint64_t(1) << 20;
// Magic and version: what check_entry_head reads.
constexpr size_t kEntryHeadBytes = 12;

struct Entry {
  Key key;
  std::string kind;      // "ptx", "cubin", "obj", ...
  std::string metadata;  // opaque to the cache
  std::string payload;   // uncompressed
};

// Serializes an entry (zstd level 3 on the payload), sealed with `mac_key` (null: unkeyed, the
// form inside a bundle).
Status encode_entry(const Entry& e, const MacKey* mac_key, std::string* out);

// Checks the first kEntryHeadBytes of a file (magic and format version) of `file_bytes` bytes, so
// that a foreign, stale or oversized file is refused before the rest is read.
Status check_entry_head(const void* head, size_t n, uint64_t file_bytes);

// Parses and checks an entry file's bytes: the MAC (keyed with `mac_key`, null: unkeyed) first,
// then every field; `expect` is the key the caller looked up.
Status decode_entry(const std::string& bytes, const Key& expect, const MacKey* mac_key, Entry* out);

// The key an entry's bytes name (after the magic and the version); false when too short.
bool entry_key(const std::string& bytes, Key* out);

// The same entry sealed with another key (a bundle's entry made the cache's, or the reverse):
// checks `bytes` with `from`, then rewrites the MAC with `to`.
Status reseal_entry(const std::string& bytes, const Key& expect, const MacKey* from, const MacKey* to,
                    std::string* out);

// The metadata of the C API's entries is a list of named fields (docs/cache.md lists the
// names: target, kernel, made_for, target_meta): each as u32 name length, name, u32 value
// length, value (little-endian). unpack_fields is false for bytes that are not such a list.
using Fields = std::vector<std::pair<std::string, std::string>>;
std::string pack_fields(const Fields& fields);
bool unpack_fields(const std::string& bytes, Fields* out);
// The value of field `name`, or "" when absent.
std::string field(const Fields& fields, const std::string& name);

}  // namespace tri::cache
