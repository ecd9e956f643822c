// The file behind a compile request's shortcut (<cache dir>/front/<request key>, docs/cache.md
// "The shortcut"): the request's own key, the key of the entry it leads to, and the prepared
// module in the binary format, sealed with the cache's MAC (crypto.h). A shortcut copied under
// another request's name names the wrong request key; one that Tri did not write with this
// cache's secret fails the MAC; either is ignored, so it can never lead a compile to another
// specialization's code.
//
// Layout (little-endian): magic "TRIFRONT", u32 version (1), 16-byte request key, 16-byte entry
// key, the module's bytes, 32-byte MAC of everything before it.
#pragma once

#include <string>

#include "base/status.h"
#include "cache/crypto.h"
#include "cache/key.h"

namespace tri::cache {

constexpr uint32_t kShortcutVersion = 1;

std::string encode_shortcut(const Key& request, const Key& entry, const std::string& module_bytes,
                            const MacKey* mac_key);

// Checks the MAC, the version and that the shortcut is `request`'s; *entry and *module_bytes
// receive what it holds. Code::CorruptBinary saying what was wrong otherwise.
Status decode_shortcut(const std::string& bytes, const Key& request, const MacKey* mac_key, Key* entry,
                       std::string* module_bytes);

}  // namespace tri::cache
