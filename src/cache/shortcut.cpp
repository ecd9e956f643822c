// Request shortcut files (shortcut.h).
#include "cache/shortcut.h"

#include <cstring>

#include "cache/bytes.h"

namespace tri::cache {

namespace {

const char kMagic[8] = {'T', 'R', 'I', 'F', 'R', 'O', 'N', 'T'};
constexpr size_t kHead = sizeof kMagic + 4 + 16 + 16;

Status bad(const std::string& what) { return Status(Code::CorruptBinary, "shortcut: " + what); }

}  // namespace

std::string encode_shortcut(const Key& request, const Key& entry, const std::string& module_bytes,
                            const MacKey* mac_key) {
  std::string o(kMagic, sizeof kMagic);
  put_le(&o, kShortcutVersion, 4);
  put_le(&o, request.hi, 8);
  put_le(&o, request.lo, 8);
  put_le(&o, entry.hi, 8);
  put_le(&o, entry.lo, 8);
  o += module_bytes;
  Mac m = mac(mac_key, o.data(), o.size());
  o.append(reinterpret_cast<const char*>(m.data()), m.size());
  return o;
}

Status decode_shortcut(const std::string& bytes, const Key& request, const MacKey* mac_key, Key* entry,
                       std::string* module_bytes) {
  if (bytes.size() < kHead + kMacBytes || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return bad("not a shortcut (bad magic or truncated)");
  if (get_le(bytes.data() + 8, 4) != kShortcutVersion)
    return bad("version " + std::to_string(get_le(bytes.data() + 8, 4)) + ", this library reads " +
               std::to_string(kShortcutVersion));
  const size_t body = bytes.size() - kMacBytes;
  Mac m = mac(mac_key, bytes.data(), body);
  if (!mac_equal(m.data(), reinterpret_cast<const uint8_t*>(bytes.data()) + body))
    return bad("MAC mismatch (damaged, or not written by Tri with this cache's secret)");
  const Key own{get_le(bytes.data() + 12, 8), get_le(bytes.data() + 20, 8)};
  if (own != request) return bad("it is the shortcut of request " + own.hex() + ", copied under another name");
  *entry = Key{get_le(bytes.data() + 28, 8), get_le(bytes.data() + 36, 8)};
  module_bytes->assign(bytes, kHead, body - kHead);
  return Status::ok();
}

}  // namespace tri::cache
