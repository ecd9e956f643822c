// Entry file encoding, sealing and validation (see entry.h for the layout).
#include "cache/entry.h"

#include <cstring>

#include <zstd.h>

#include "cache/bytes.h"

namespace tri::cache {

namespace {

const char kMagic[8] = {'T', 'R', 'I', 'C', 'A', 'C', 'H', 'E'};

struct Reader {
  const std::string& b;
  size_t pos = 0;
  bool take(uint64_t* v, int n) {
    if (pos > b.size() || b.size() - pos < static_cast<size_t>(n)) return false;
    uint64_t r = 0;
    for (int i = 0; i < n; ++i) r |= static_cast<uint64_t>(static_cast<unsigned char>(b[pos + i])) << (8 * i);
    pos += n;
    *v = r;
    return true;
  }
  bool bytes(std::string* s, uint64_t n) {
    if (pos > b.size() || b.size() - pos < n) return false;
    s->assign(b, pos, n);
    pos += n;
    return true;
  }
};

Status bad(const std::string& what) { return Status(Code::CorruptBinary, "cache entry: " + what); }

// magic, version, key, kind length, metadata length, raw size, compressed size, MAC
constexpr size_t kMinEntryBytes = sizeof kMagic + 4 + 16 + 2 + 4 + 8 + 8 + kMacBytes;

}  // namespace

Status encode_entry(const Entry& e, const MacKey* mac_key, std::string* out) {
  if (e.kind.size() > kMaxKindBytes || e.metadata.size() > kMaxMetadataBytes || e.payload.size() > kMaxPayloadBytes)
    return Status(Code::LimitExceeded, "cache entry: kind, metadata or payload too large to store (" +
                                           std::to_string(e.payload.size()) + " payload bytes)");
  std::string o(kMagic, sizeof kMagic);
  put_le(&o, kEntryFormatVersion, 4);
  put_le(&o, e.key.hi, 8);
  put_le(&o, e.key.lo, 8);
  put_le(&o, e.kind.size(), 2);
  o += e.kind;
  put_le(&o, e.metadata.size(), 4);
  o += e.metadata;
  size_t bound = ZSTD_compressBound(e.payload.size());
  std::string z(bound, '\0');
  size_t n = ZSTD_compress(&z[0], bound, e.payload.data(), e.payload.size(), 3);
  if (ZSTD_isError(n)) return Status(Code::Internal, std::string("cache entry: zstd: ") + ZSTD_getErrorName(n));
  z.resize(n);
  put_le(&o, e.payload.size(), 8);
  put_le(&o, z.size(), 8);
  o += z;
  if (o.size() + kMacBytes > kMaxEntryBytes)
    return Status(Code::LimitExceeded, "cache entry: " + std::to_string(o.size()) + " bytes, more than an entry may have");
  Mac m = mac(mac_key, o.data(), o.size());
  o.append(reinterpret_cast<const char*>(m.data()), m.size());
  *out = std::move(o);
  return Status::ok();
}

Status check_entry_head(const void* head, size_t n, uint64_t file_bytes) {
  if (file_bytes == 0) return bad("empty file");
  const char* h = static_cast<const char*>(head);
  if (n < sizeof kMagic || std::memcmp(h, kMagic, sizeof kMagic) != 0) return bad("not a tri cache entry (bad magic)");
  if (n < kEntryHeadBytes) return bad("truncated header");
  uint32_t version = 0;
  for (int i = 0; i < 4; ++i) version |= uint32_t(static_cast<unsigned char>(h[8 + i])) << (8 * i);
  if (version != kEntryFormatVersion)
    return Status(Code::UnsupportedVersion, "cache entry: format version " + std::to_string(version) +
                                                ", this library reads " + std::to_string(kEntryFormatVersion));
  if (file_bytes < kMinEntryBytes) return bad("truncated");
  if (file_bytes > kMaxEntryBytes)
    return bad(std::to_string(file_bytes) + " bytes, more than an entry may have (" + std::to_string(kMaxEntryBytes) + ")");
  return Status::ok();
}

bool entry_key(const std::string& bytes, Key* out) {
  if (bytes.size() < kEntryHeadBytes + 16) return false;
  Reader r{bytes};
  r.pos = kEntryHeadBytes;
  return r.take(&out->hi, 8) && r.take(&out->lo, 8);
}

Status decode_entry(const std::string& bytes, const Key& expect, const MacKey* mac_key, Entry* out) {
  TRI_RETURN_IF_ERROR(check_entry_head(bytes.data(), bytes.size(), bytes.size()));
  // The MAC covers everything before it, the key included; check it before trusting any field.
  const size_t body = bytes.size() - kMacBytes;
  Mac m = mac(mac_key, bytes.data(), body);
  if (!mac_equal(m.data(), reinterpret_cast<const uint8_t*>(bytes.data()) + body))
    return bad(mac_key ? "MAC mismatch (damaged, or not written by Tri with this cache's secret)"
                       : "checksum mismatch (corrupt or truncated)");
  Reader b{bytes};
  b.pos = kEntryHeadBytes;
  uint64_t hi = 0, lo = 0, kind_len = 0, meta_len = 0, raw = 0, zlen = 0;
  Entry e;
  if (!b.take(&hi, 8) || !b.take(&lo, 8)) return bad("truncated key");
  e.key = Key{hi, lo};
  if (e.key != expect) return bad("key " + e.key.hex() + " does not match its file name " + expect.hex());
  if (!b.take(&kind_len, 2) || kind_len > kMaxKindBytes || body - b.pos < kind_len || !b.bytes(&e.kind, kind_len))
    return bad("truncated kind");
  if (!b.take(&meta_len, 4) || meta_len > kMaxMetadataBytes || body - b.pos < meta_len ||
      !b.bytes(&e.metadata, meta_len))
    return bad("truncated metadata");
  if (body - b.pos < 16 || !b.take(&raw, 8) || !b.take(&zlen, 8)) return bad("truncated sizes");
  if (raw > kMaxPayloadBytes || zlen != body - b.pos) return bad("payload sizes do not match the file");
  e.payload.resize(raw);
  size_t n = ZSTD_decompress(raw ? &e.payload[0] : nullptr, raw, bytes.data() + b.pos, zlen);
  if (ZSTD_isError(n) || n != raw) return bad("payload does not decompress to its recorded size");
  *out = std::move(e);
  return Status::ok();
}

Status reseal_entry(const std::string& bytes, const Key& expect, const MacKey* from, const MacKey* to,
                    std::string* out) {
  Entry e;
  TRI_RETURN_IF_ERROR(decode_entry(bytes, expect, from, &e));
  std::string o = bytes.substr(0, bytes.size() - kMacBytes);
  Mac m = mac(to, o.data(), o.size());
  o.append(reinterpret_cast<const char*>(m.data()), m.size());
  *out = std::move(o);
  return Status::ok();
}

std::string pack_fields(const Fields& fields) {
  std::string o;
  for (const auto& [name, value] : fields) {
    put_le(&o, name.size(), 4);
    o += name;
    put_le(&o, value.size(), 4);
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
