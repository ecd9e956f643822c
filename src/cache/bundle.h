// Bundles: a set of cache entries in one file, with a manifest of what each was made for, so an
// application can ship a warm cache and a fresh machine of the same kind compiles nothing. A
// bundle may be signed (Ed25519), and an import can require a signature by a key the host trusts
// before any entry of it becomes loadable (docs/cache.md, "Trust").
//
// Format (little-endian): magic "TRIBUNDL", u32 version (2), u32 manifest length, the manifest
// (text, one line per entry: "<key> <kind> <target> <kernel> <made_for>"), u32 entry count, per
// entry u64 length and the entry file's bytes (entry.h, sealed with the unkeyed MAC), then the
// BLAKE2b-256 digest of everything before it; then either nothing (unsigned) or a signature
// block: magic "TRISIGN1", the signer's 32-byte Ed25519 public key and the 64-byte signature of
// "tri bundle signature 1\0" followed by the digest.
//
// Reading streams: the header first, each size checked against its limit and the file's size
// before anything is allocated, one entry in memory at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cache/crypto.h"
#include "cache/store.h"

namespace tri::cache {

constexpr uint32_t kBundleFormatVersion = 2;
constexpr uint64_t kMaxManifestBytes = uint64_t(64) << 20;
constexpr uint64_t kMaxBundleEntries = uint64_t(1) << 20;

// Writes every valid entry of `cache` to the bundle file `path` (atomically: a temporary file
// next to it, then a rename; an existing `path` that is not a regular file is refused), signed
// with `sign_with` when it is not null. *count receives the number of entries. Errors: Code::Io,
// Code::InvalidArgument (a destination that is not a regular file).
Status export_bundle(DiskCache& cache, const std::string& path, const SecretKey* sign_with, uint32_t* count);

// What check_bundle found.
struct BundleInfo {
  uint32_t entries = 0;   // distinct keys
  bool is_signed = false;
  PublicKey signer{};     // when signed (and the signature verified)
  Mac digest{};
};

// Reads a whole bundle and checks it: format, sizes, every entry, the digest, and the signature
// when there is one (a bundle whose signature does not verify is Code::CorruptBinary). Errors:
// Code::Io (unreadable, not a regular file), Code::CorruptBinary, Code::UnsupportedVersion.
Status check_bundle(const std::string& path, BundleInfo* out);

// Signs the bundle at `path` with `sk` (replacing any signature), after checking it in full;
// the file is replaced atomically.
Status sign_bundle(const std::string& path, const SecretKey& sk);

// Reads a bundle and adds the entries `accept` takes to `cache`, all or none: every entry is
// validated and written to a temporary file of the cache directory, the digest and (with
// `trusted` not empty) a signature by one of the `trusted` keys are checked, and only then are
// the entries renamed into place. An entry made for another build is useless here: `accept` says
// why in *why and it is skipped. A key that appears twice is imported once. Errors: Code::Io
// (unreadable file, an entry that cannot be written: nothing imported), Code::CorruptBinary (not
// a bundle, damaged), Code::UnsupportedVersion (another bundle format), Code::Untrusted
// (`trusted` is not empty and the bundle is unsigned or signed by another key). On an error
// *imported, *skipped and *failed are 0 apart from *failed counting the entries not written.
Status import_bundle(DiskCache& cache, const std::string& path,
                     const std::function<bool(const Entry& e, std::string* why)>& accept,
                     const std::vector<PublicKey>& trusted, uint32_t* imported, uint32_t* skipped, uint32_t* failed);

}  // namespace tri::cache
