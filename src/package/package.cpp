// The package container (package.h; docs/format.md, "Packages", is its specification): a
// 48-byte header, then one zstd frame of the body. The header's checksum (XXH3-128) covers the
// header's first 32 bytes and the compressed body, and is checked before anything is
// decompressed; the body is then read field by field with every count checked against the bytes
// that remain.
#include "package/package.h"

#include <xxhash.h>
#include <zstd.h>

#include <cstring>

#include "base/bytes.h"

namespace tri::package {
namespace {

const unsigned char kMagic[8] = {0x89, 'T', 'R', 'I', 'P', 'K', 'G', '\n'};

// The smallest encoding of each record, for checking counts before allocating.
constexpr size_t kMinParam = 4 + 4 + 1 + 4 + 4 * 3 + 4 * 2 + 4;
constexpr size_t kMinFunction = 4 + 4 + 4;
constexpr size_t kMinConstexpr = 4 + 1 + 8 + 1;
constexpr size_t kMinFact = 12;
constexpr size_t kMinPayload = 4 * 4;
constexpr size_t kMinVariant = 8 + 4;
constexpr size_t kMinKernel = 4 + 4 + 4 + 4 + 4 + 4 + 4 + 1 + 4 + 4;

void checksum(const char* head, const char* body, size_t body_bytes, unsigned char out[16]) {
  XXH3_state_t* st = XXH3_createState();
  XXH3_128bits_reset(st);
  XXH3_128bits_update(st, head, 32);
  XXH3_128bits_update(st, body, body_bytes);
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
  XXH3_freeState(st);
  std::memcpy(out, c.digest, 16);
}

void put_body(const Package& p, ByteWriter* w) {
  w->str(p.producer);
  w->str(p.name);
  w->str(p.ir);
  w->u(p.functions.size(), 4);
  for (const Function& f : p.functions) {
    w->str(f.name);
    w->u(static_cast<uint32_t>(f.kind), 4);
    w->u(f.params.size(), 4);
    for (const Param& q : f.params) {
      w->str(q.name);
      w->str(q.type);
      w->u(q.has_default, 1);
      w->str(q.default_text);
      w->u(static_cast<uint32_t>(q.kind), 4);
      w->u(static_cast<uint32_t>(q.type_kind), 4);
      w->u(static_cast<uint32_t>(q.dtype), 4);
      w->u(q.align, 4);
      w->u(q.divisible, 4);
      w->u(static_cast<uint32_t>(q.noalias), 4);
    }
  }
  w->u(p.kernels.size(), 4);
  for (const Kernel& k : p.kernels) {
    w->str(k.name);
    w->str(k.target);
    w->u(static_cast<uint32_t>(k.num_warps), 4);
    w->u(static_cast<uint32_t>(k.num_stages), 4);
    w->u(k.constexprs.size(), 4);
    for (const Constexpr& c : k.constexprs) {
      w->str(c.name);
      w->u(c.is_float, 1);
      uint64_t bits = static_cast<uint64_t>(c.i);
      if (c.is_float) std::memcpy(&bits, &c.f, 8);
      w->u(bits, 8);
      w->u(c.is_default, 1);
    }
    w->u(k.facts.size(), 4);
    for (const Fact& f : k.facts) {
      w->u(f.param, 4);
      w->u(f.align, 4);
      w->u(f.divisible, 4);
    }
    w->u(k.equal_one, 4);
    w->u(k.waits, 1);
    w->str(k.note);
    w->u(k.variants.size(), 4);
    for (const Variant& v : k.variants) {
      w->u(v.classes, 8);
      w->u(v.payloads.size(), 4);
      for (const Payload& pl : v.payloads) {
        w->str(pl.machine);
        w->str(pl.kind);
        w->str(pl.metadata);
        w->str(pl.bytes);
      }
    }
  }
}

// Reads a count of records of at least `min_bytes` each, refusing one the bytes left cannot hold.
bool count(ByteReader* r, size_t min_bytes, uint64_t* n) {
  *n = r->u(4);
  return r->ok && *n <= (r->s.size() - r->pos) / min_bytes;
}

bool get_body(ByteReader* r, Package* p) {
  p->producer = r->str();
  p->name = r->str();
  p->ir = r->str();
  uint64_t nf = 0;
  if (!count(r, kMinFunction, &nf)) return false;
  p->functions.resize(nf);
  for (Function& f : p->functions) {
    f.name = r->str();
    f.kind = static_cast<int32_t>(r->u(4));
    uint64_t np = 0;
    if (!count(r, kMinParam, &np)) return false;
    f.params.resize(np);
    for (Param& q : f.params) {
      q.name = r->str();
      q.type = r->str();
      q.has_default = r->u(1) != 0;
      q.default_text = r->str();
      q.kind = static_cast<int32_t>(r->u(4));
      q.type_kind = static_cast<int32_t>(r->u(4));
      q.dtype = static_cast<int32_t>(r->u(4));
      q.align = static_cast<uint32_t>(r->u(4));
      q.divisible = static_cast<uint32_t>(r->u(4));
      q.noalias = static_cast<int32_t>(r->u(4));
    }
    if (!r->ok) return false;
  }
  uint64_t nk = 0;
  if (!count(r, kMinKernel, &nk)) return false;
  p->kernels.resize(nk);
  for (Kernel& k : p->kernels) {
    k.name = r->str();
    k.target = r->str();
    k.num_warps = static_cast<int32_t>(r->u(4));
    k.num_stages = static_cast<int32_t>(r->u(4));
    uint64_t nc = 0;
    if (!count(r, kMinConstexpr, &nc)) return false;
    k.constexprs.resize(nc);
    for (Constexpr& c : k.constexprs) {
      c.name = r->str();
      c.is_float = r->u(1) != 0;
      uint64_t bits = r->u(8);
      c.i = static_cast<int64_t>(bits);
      if (c.is_float) std::memcpy(&c.f, &bits, 8);
      c.is_default = r->u(1) != 0;
    }
    uint64_t nfacts = 0;
    if (!count(r, kMinFact, &nfacts)) return false;
    k.facts.resize(nfacts);
    for (Fact& f : k.facts) {
      f.param = static_cast<uint32_t>(r->u(4));
      f.align = static_cast<uint32_t>(r->u(4));
      f.divisible = static_cast<uint32_t>(r->u(4));
    }
    k.equal_one = static_cast<uint32_t>(r->u(4));
    k.waits = r->u(1) != 0;
    k.note = r->str();
    uint64_t nv = 0;
    if (!count(r, kMinVariant, &nv)) return false;
    k.variants.resize(nv);
    for (Variant& v : k.variants) {
      v.classes = r->u(8);
      uint64_t npl = 0;
      if (!count(r, kMinPayload, &npl)) return false;
      v.payloads.resize(npl);
      for (Payload& pl : v.payloads) {
        pl.machine = r->str();
        pl.kind = r->str();
        pl.metadata = r->str();
        pl.bytes = r->str();
      }
      if (!r->ok) return false;
    }
  }
  return r->done();
}

}  // namespace

bool is_package(const void* data, size_t size) {
  return data && size >= sizeof kMagic && std::memcmp(data, kMagic, sizeof kMagic) == 0;
}

Status seal(const std::string& body, std::string* out) {
  if (body.size() > kMaxBodyBytes)
    return Status(Code::LimitExceeded, "package: " + std::to_string(body.size()) + " bytes of kernels, more than a "
                                       "package may hold (" + std::to_string(kMaxBodyBytes) + "); split it");
  std::string z(ZSTD_compressBound(body.size()), '\0');
  size_t n = ZSTD_compress(&z[0], z.size(), body.data(), body.size(), 9);
  if (ZSTD_isError(n)) return Status(Code::Internal, std::string("package: zstd: ") + ZSTD_getErrorName(n));
  z.resize(n);
  std::string o(reinterpret_cast<const char*>(kMagic), sizeof kMagic);
  put_le(&o, kFormatVersion, 2);
  put_le(&o, 0, 2);  // flags
  put_le(&o, 0, 4);  // reserved
  put_le(&o, body.size(), 8);
  put_le(&o, z.size(), 8);
  unsigned char sum[16];
  checksum(o.data(), z.data(), z.size(), sum);
  o.append(reinterpret_cast<const char*>(sum), 16);
  o += z;
  *out = std::move(o);
  return Status::ok();
}

std::string encode_body(const Package& p) {
  ByteWriter body;
  put_body(p, &body);
  return std::move(body.s);
}

Status write(const Package& p, std::string* out) { return seal(encode_body(p), out); }

Status read(const void* data, size_t size, const std::string& name, Package* out) {
  auto bad = [&](const std::string& what) { return Status(Code::CorruptBinary, name + ": not a usable package: " + what); };
  if (!is_package(data, size)) return bad("no package magic at the start (make one with `tri aot`)");
  const char* h = static_cast<const char*>(data);
  if (size < kHeaderBytes) return bad("truncated header");
  const uint64_t version = get_le(h + 8, 2), flags = get_le(h + 10, 2), reserved = get_le(h + 12, 4);
  if (version == 0) return bad("format version 0");
  if (version > kFormatVersion)
    return Status(Code::UnsupportedVersion, name + ": package format version " + std::to_string(version) +
                                                " is newer than this library reads (" +
                                                std::to_string(kFormatVersion) + "); upgrade Tri");
  if (flags != 0 || reserved != 0) return bad("reserved header fields are not 0");
  const uint64_t raw = get_le(h + 16, 8), zsize = get_le(h + 24, 8);
  if (zsize != size - kHeaderBytes)
    return bad("the header says " + std::to_string(zsize) + " compressed bytes, the file has " +
               std::to_string(size - kHeaderBytes));
  if (raw > kMaxBodyBytes)
    return Status(Code::LimitExceeded, name + ": the package's body is " + std::to_string(raw) +
                                           " bytes, more than the limit of " + std::to_string(kMaxBodyBytes));
  unsigned char sum[16];
  checksum(h, h + kHeaderBytes, zsize, sum);
  if (std::memcmp(sum, h + 32, 16) != 0) return bad("checksum mismatch (damaged or truncated)");
  const unsigned long long frame = ZSTD_getFrameContentSize(h + kHeaderBytes, zsize);
  if (frame != raw) return bad("the compressed body does not hold " + std::to_string(raw) + " bytes");
  std::string body(raw, '\0');
  size_t n = ZSTD_decompress(raw ? &body[0] : nullptr, raw, h + kHeaderBytes, zsize);
  if (ZSTD_isError(n) || n != raw) return bad("the body does not decompress to its recorded size");
  ByteReader r{body};
  Package p;
  if (!get_body(&r, &p)) return bad("the body is truncated or has bad counts at byte " + std::to_string(r.pos));
  *out = std::move(p);
  return Status::ok();
}

}  // namespace tri::package
