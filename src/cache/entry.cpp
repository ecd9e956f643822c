// Entry file encoding and validation (see entry.h for the layout).
#include "cache/entry.h"

#include <cstring>

#include <xxhash.h>
#include <zstd.h>

namespace tri::cache {

namespace {

const char kMagic[8] = {'T', 'R', 'I', 'C', 'A', 'C', 'H', 'E'};
constexpr uint64_t kMaxPayload = 1ull << 31;  // bounds what a corrupt size field can make us allocate

void put(std::string* o, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) o->push_back(static_cast<char>(v >> (8 * i)));
}

struct Reader {
  const std::string& b;
  size_t pos = 0;
  bool take(uint64_t* v, int n) {
    if (b.size() - pos < static_cast<size_t>(n)) return false;
    uint64_t r = 0;
    for (int i = 0; i < n; ++i) r |= static_cast<uint64_t>(static_cast<unsigned char>(b[pos + i])) << (8 * i);
    pos += n;
    *v = r;
    return true;
  }
  bool bytes(std::string* s, uint64_t n) {
    if (b.size() - pos < n) return false;
    s->assign(b, pos, n);
    pos += n;
    return true;
  }
};

Status bad(const std::string& what) { return Status(Code::CorruptBinary, "cache entry: " + what); }

}  // namespace

Status encode_entry(const Entry& e, std::string* out) {
  std::string o(kMagic, sizeof kMagic);
  put(&o, kEntryFormatVersion, 4);
  put(&o, e.key.hi, 8);
  put(&o, e.key.lo, 8);
  put(&o, e.kind.size(), 2);
  o += e.kind;
  put(&o, e.metadata.size(), 4);
  o += e.metadata;
  size_t bound = ZSTD_compressBound(e.payload.size());
  std::string z(bound, '\0');
  size_t n = ZSTD_compress(&z[0], bound, e.payload.data(), e.payload.size(), 3);
  if (ZSTD_isError(n)) return Status(Code::Internal, std::string("cache entry: zstd: ") + ZSTD_getErrorName(n));
  z.resize(n);
  put(&o, e.payload.size(), 8);
  put(&o, z.size(), 8);
  o += z;
  XXH128_hash_t h = XXH3_128bits(o.data(), o.size());
  put(&o, h.high64, 8);
  put(&o, h.low64, 8);
  *out = std::move(o);
  return Status::ok();
}

Status decode_entry(const std::string& bytes, const Key& expect, Entry* out) {
  if (bytes.empty()) return bad("empty file");
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return bad("not a tri cache entry (bad magic)");
  if (bytes.size() < sizeof kMagic + 4 + 16) return bad("truncated header");
  Reader r{bytes};
  r.pos = sizeof kMagic;
  uint64_t version = 0, hi = 0, lo = 0;
  r.take(&version, 4);
  if (version != kEntryFormatVersion)
    return Status(Code::UnsupportedVersion, "cache entry: format version " + std::to_string(version) +
                                                ", this library reads " + std::to_string(kEntryFormatVersion));
  if (bytes.size() < 16 + r.pos) return bad("truncated");
  // The checksum covers everything before it; check it before trusting any size field.
  size_t body = bytes.size() - 16;
  XXH128_hash_t h = XXH3_128bits(bytes.data(), body);
  Reader tail{bytes};
  tail.pos = body;
  uint64_t chi = 0, clo = 0;
  tail.take(&chi, 8);
  tail.take(&clo, 8);
  if (chi != h.high64 || clo != h.low64) return bad("checksum mismatch (corrupt or truncated)");
  const std::string head = bytes.substr(0, body);
  Reader b{head};
  b.pos = r.pos;
  uint64_t kind_len = 0, meta_len = 0, raw = 0, zlen = 0;
  Entry e;
  if (!b.take(&hi, 8) || !b.take(&lo, 8)) return bad("truncated key");
  e.key = Key{hi, lo};
  if (e.key != expect) return bad("key " + e.key.hex() + " does not match its file name " + expect.hex());
  if (!b.take(&kind_len, 2) || !b.bytes(&e.kind, kind_len)) return bad("truncated kind");
  if (!b.take(&meta_len, 4) || !b.bytes(&e.metadata, meta_len)) return bad("truncated metadata");
  if (!b.take(&raw, 8) || !b.take(&zlen, 8)) return bad("truncated sizes");
  if (raw > kMaxPayload || zlen != head.size() - b.pos) return bad("payload sizes do not match the file");
  e.payload.resize(raw);
  size_t n = ZSTD_decompress(raw ? &e.payload[0] : nullptr, raw, head.data() + b.pos, zlen);
  if (ZSTD_isError(n) || n != raw) return bad("payload does not decompress to its recorded size");
  *out = std::move(e);
  return Status::ok();
}

std::string pack_fields(const Fields& fields) {
  std::string o;
  for (const auto& [name, value] : fields) {
    put(&o, name.size(), 4);
    o += name;
    put(&o, value.size(), 4);
    o += value;
  }
  return o;
}

bool unpack_fields(const std::string& bytes, Fields* out) {
  Reader r{bytes};
  Fields f;
  while (r.pos < bytes.size()) {
    uint64_t n = 0, m = 0;
    std::string name, value;
    if (!r.take(&n, 4) || !r.bytes(&name, n) || !r.take(&m, 4) || !r.bytes(&value, m)) return false;
    f.emplace_back(std::move(name), std::move(value));
  }
  *out = std::move(f);
  return true;
}

std::string field(const Fields& fields, const std::string& name) {
  for (const auto& [n, v] : fields)
    if (n == name) return v;
  return std::string();
}

}  // namespace tri::cache
