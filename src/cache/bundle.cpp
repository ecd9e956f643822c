// Bundle files: export the directory's entries with a manifest; import them back, validated.
#include "cache/bundle.h"

#include <cerrno>
#include <cstring>

#include <xxhash.h>

#include "base/file.h"

namespace tri::cache {

namespace {

const char kMagic[8] = {'T', 'R', 'I', 'B', 'U', 'N', 'D', 'L'};

void put(std::string* o, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) o->push_back(static_cast<char>(v >> (8 * i)));
}

bool take(const std::string& b, size_t* pos, uint64_t* v, int n) {
  if (b.size() - *pos < static_cast<size_t>(n)) return false;
  uint64_t r = 0;
  for (int i = 0; i < n; ++i) r |= static_cast<uint64_t>(static_cast<unsigned char>(b[*pos + i])) << (8 * i);
  *pos += n;
  *v = r;
  return true;
}

std::string word(const std::string& s) { return s.empty() ? "-" : s; }

Status bad(const std::string& path, const std::string& what) {
  return Status(Code::CorruptBinary, "bundle " + path + ": " + what);
}

}  // namespace

Status export_bundle(DiskCache& cache, const std::string& path, uint32_t* count) {
  std::vector<EntryInfo> infos;
  TRI_RETURN_IF_ERROR(cache.list(false, &infos));
  std::string manifest = "tri-cache-bundle 1\n", body;
  uint32_t n = 0;
  for (const EntryInfo& info : infos) {
    if (!info.ok) continue;
    std::string bytes;
    if (!cache.read_bytes(info.key, &bytes).is_ok()) continue;  // evicted or damaged meanwhile
    Fields f;
    unpack_fields(info.metadata, &f);
    manifest += info.key.hex() + " " + word(info.kind) + " " + word(field(f, "target")) + " " +
                word(field(f, "kernel")) + " " + word(field(f, "made_for")) + "\n";
    put(&body, bytes.size(), 8);
    body += bytes;
    ++n;
  }
  std::string out(kMagic, sizeof kMagic);
  put(&out, kBundleFormatVersion, 4);
  put(&out, manifest.size(), 4);
  out += manifest;
  put(&out, n, 4);
  out += body;
  XXH128_hash_t h = XXH3_128bits(out.data(), out.size());
  put(&out, h.high64, 8);
  put(&out, h.low64, 8);
  if (int e = write_file_atomic(path, out))
    return Status(Code::Io, "cannot write bundle " + path + " (" + std::strerror(e) + ")");
  *count = n;
  return Status::ok();
}

Status import_bundle(DiskCache& cache, const std::string& path,
                     const std::function<bool(const Entry& e, std::string* why)>& accept, uint32_t* imported,
                     uint32_t* skipped, uint32_t* failed) {
  *imported = *skipped = *failed = 0;
  if (!cache.enabled()) return Status(Code::Unsupported, "the disk cache is off; nothing can be imported");
  std::string b;
  if (!read_file(path, &b)) return Status(Code::Io, "cannot open bundle " + path + " (" + std::strerror(errno) + ")");
  if (b.size() < sizeof kMagic || std::memcmp(b.data(), kMagic, sizeof kMagic) != 0)
    return bad(path, "not a tri cache bundle (bad magic)");
  size_t pos = sizeof kMagic;
  uint64_t version = 0, mlen = 0, n = 0;
  if (!take(b, &pos, &version, 4)) return bad(path, "truncated");
  if (version != kBundleFormatVersion)
    return Status(Code::UnsupportedVersion, "bundle " + path + ": format version " + std::to_string(version) +
                                                ", this library reads " + std::to_string(kBundleFormatVersion));
  if (b.size() < pos + 16) return bad(path, "truncated");
  const size_t body = b.size() - 16;
  XXH128_hash_t h = XXH3_128bits(b.data(), body);
  size_t tail = body;
  uint64_t chi = 0, clo = 0;
  take(b, &tail, &chi, 8);
  take(b, &tail, &clo, 8);
  if (chi != h.high64 || clo != h.low64) return bad(path, "checksum mismatch (corrupt or truncated)");
  const std::string head = b.substr(0, body);
  if (!take(head, &pos, &mlen, 4) || head.size() - pos < mlen) return bad(path, "truncated manifest");
  pos += mlen;
  if (!take(head, &pos, &n, 4)) return bad(path, "truncated entry count");
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t len = 0;
    if (!take(head, &pos, &len, 8) || head.size() - pos < len) return bad(path, "truncated entry " + std::to_string(i));
    std::string bytes = head.substr(pos, len);
    pos += len;
    // The key sits after the magic and the version (entry.h); decode_entry checks it again.
    if (bytes.size() < 28) return bad(path, "entry " + std::to_string(i) + " is truncated");
    size_t kp = 12;
    Key key;
    take(bytes, &kp, &key.hi, 8);
    take(bytes, &kp, &key.lo, 8);
    Entry e;
    Status s = decode_entry(bytes, key, &e);
    if (!s.is_ok()) return bad(path, "entry " + std::to_string(i) + ": " + s.message());
    std::string why;
    if (accept && !accept(e, &why)) {
      ++*skipped;
      continue;
    }
    if (cache.insert_bytes(key, bytes))
      ++*imported;
    else
      ++*failed;
  }
  if (pos != head.size()) return bad(path, "bytes after the last entry");
  return Status::ok();
}

}  // namespace tri::cache
