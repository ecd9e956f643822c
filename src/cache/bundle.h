// Bundles: a set of cache entries in one file, with a manifest of what each was made for, so an
// application can ship a warm cache and a fresh machine of the same kind compiles nothing.
//
// Format (little-endian): magic "TRIBUNDL", u32 version (1), u32 manifest length, the manifest
// (text, one line per entry: "<key> <kind> <target> <kernel> <made_for>"), u32 entry count, per
// entry u64 length and the entry file's bytes (entry.h), then xxh3-128 of everything before it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "cache/store.h"

namespace tri::cache {

constexpr uint32_t kBundleFormatVersion = 1;

// Writes every valid entry of `cache` to the bundle file `path` (atomically: a temporary file
// next to it, then a rename). *count receives the number of entries. Errors: Code::Io.
Status export_bundle(DiskCache& cache, const std::string& path, uint32_t* count);

// Reads a bundle and writes into `cache` each entry that `accept` takes (an entry made for
// another build is useless here: `accept` says why in *why). Every entry is validated before it
// is written. Errors: Code::Io (unreadable file), Code::CorruptBinary (not a bundle, damaged),
// Code::UnsupportedVersion (a newer bundle format); entries that fail to write are counted in
// *failed.
Status import_bundle(DiskCache& cache, const std::string& path,
                     const std::function<bool(const Entry& e, std::string* why)>& accept, uint32_t* imported,
                     uint32_t* skipped, uint32_t* failed);

}  // namespace tri::cache
