// Bundle files: export the directory's entries with a manifest (optionally signed); check, sign
// and import them, streamed and validated, all or nothing.
#include "cache/bundle.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "base/file.h"
#include "cache/bytes.h"

namespace tri::cache {

namespace {

const char kMagic[8] = {'T', 'R', 'I', 'B', 'U', 'N', 'D', 'L'};
const char kSigMagic[8] = {'T', 'R', 'I', 'S', 'I', 'G', 'N', '1'};
const char kSigDomain[] = "tri bundle signature 1";  // signed with its NUL, then the digest
constexpr size_t kSigBlockBytes = sizeof kSigMagic + kPublicKeyBytes + kSignatureBytes;
// A bundle is read only as far as its sizes say; this bounds the whole file.
constexpr uint64_t kMaxBundleBytes = uint64_t(1) << 40;

std::string word(const std::string& s) { return s.empty() ? "-" : s; }

Status bad(const std::string& path, const std::string& what) {
  return Status(Code::CorruptBinary, "bundle " + path + ": " + what);
}

std::string signed_message(const Mac& digest) {
  std::string m(kSigDomain, sizeof kSigDomain);  // with its NUL
  m.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return m;
}

std::string signature_block(const SecretKey& sk, const Mac& digest) {
  const std::string msg = signed_message(digest);
  Signature sig = sign(sk, msg.data(), msg.size());
  PublicKey pk = public_of(sk);
  std::string o(kSigMagic, sizeof kSigMagic);
  o.append(reinterpret_cast<const char*>(pk.data()), pk.size());
  o.append(reinterpret_cast<const char*>(sig.data()), sig.size());
  return o;
}

// An open bundle read front to back, the digest kept as it goes.
class Reader {
 public:
  Reader(int fd, uint64_t size, const std::string& path) : fd_(fd), size_(size), path_(path), digest_(nullptr) {}
  // Reads n bytes (n checked against what is left first) into *out, into the digest.
  Status take(uint64_t n, std::string* out, const char* what) {
    if (n > size_ - pos_) return bad(path_, std::string("truncated ") + what);
    out->resize(static_cast<size_t>(n));
    if (n && !read_exact(fd_, pos_, &(*out)[0], static_cast<size_t>(n)))
      return Status(Code::Io, "bundle " + path_ + ": it changed while being read");
    pos_ += n;
    digest_.update(out->data(), out->size());
    return Status::ok();
  }
  Status number(int n, uint64_t* v, const char* what) {
    std::string b;
    TRI_RETURN_IF_ERROR(take(static_cast<uint64_t>(n), &b, what));
    *v = get_le(b.data(), n);
    return Status::ok();
  }
  uint64_t left() const { return size_ - pos_; }
  uint64_t pos() const { return pos_; }
  Mac digest() { return digest_.finish(); }
  // Raw bytes after the digested part.
  Status tail(uint64_t n, std::string* out) {
    out->resize(static_cast<size_t>(n));
    if (n && !read_exact(fd_, pos_, &(*out)[0], static_cast<size_t>(n)))
      return Status(Code::Io, "bundle " + path_ + ": it changed while being read");
    pos_ += n;
    return Status::ok();
  }

 private:
  int fd_;
  uint64_t size_, pos_ = 0;
  const std::string& path_;
  MacStream digest_;
};

// Reads a bundle from front to back: each entry's key and bytes go to `entry` (which may stop
// the read with an error), then the digest and the signature block are checked. *unsigned_bytes
// receives the size of the bundle without its signature block.
Status read_bundle(const std::string& path, const std::vector<PublicKey>* trusted,
                   const std::function<Status(uint64_t index, const Key& key, const std::string& bytes)>& entry,
                   BundleInfo* info, uint64_t* unsigned_bytes = nullptr) {
  TRI_RETURN_IF_ERROR(crypto_init());
  struct stat st;
  std::string why;
  int fd = open_regular(AT_FDCWD, path, false, kMaxBundleBytes, &st, &why);
  if (fd < 0) return Status(Code::Io, "cannot open bundle " + path + " (" + why + ")");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  // A host that requires a signature learns of an unsigned bundle before reading it.
  if (trusted && !trusted->empty()) {
    char m[sizeof kSigMagic];
    if (size < kSigBlockBytes || !read_exact(fd, size - kSigBlockBytes, m, sizeof m) ||
        std::memcmp(m, kSigMagic, sizeof m) != 0)
      return Status(Code::Untrusted, "bundle " + path +
                                         " is not signed, and this context imports only bundles signed by a key it "
                                         "trusts (tri_context_options_add_trusted_key); sign it with `tri cache sign`");
  }
  Reader r(fd, size, path);
  std::string b;
  if (size < sizeof kMagic) return bad(path, "not a tri cache bundle (bad magic)");
  TRI_RETURN_IF_ERROR(r.take(sizeof kMagic, &b, "magic"));
  if (std::memcmp(b.data(), kMagic, sizeof kMagic) != 0) return bad(path, "not a tri cache bundle (bad magic)");
  uint64_t version = 0, mlen = 0, n = 0;
  TRI_RETURN_IF_ERROR(r.number(4, &version, "header"));
  if (version != kBundleFormatVersion)
    return Status(Code::UnsupportedVersion, "bundle " + path + ": format version " + std::to_string(version) +
                                                ", this library reads " + std::to_string(kBundleFormatVersion) +
                                                " (export it again with this build of Tri)");
  TRI_RETURN_IF_ERROR(r.number(4, &mlen, "header"));
  if (mlen > kMaxManifestBytes) return bad(path, "a manifest of " + std::to_string(mlen) + " bytes is too large");
  TRI_RETURN_IF_ERROR(r.take(mlen, &b, "manifest"));
  TRI_RETURN_IF_ERROR(r.number(4, &n, "entry count"));
  if (n > kMaxBundleEntries)
    return bad(path, std::to_string(n) + " entries, more than a bundle may have (" + std::to_string(kMaxBundleEntries) +
                         ")");
  std::set<std::pair<uint64_t, uint64_t>> keys;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t len = 0;
    TRI_RETURN_IF_ERROR(r.number(8, &len, "entry length"));
    if (len > kMaxEntryBytes)
      return bad(path, "entry " + std::to_string(i) + " has " + std::to_string(len) +
                           " bytes, more than an entry may have (" + std::to_string(kMaxEntryBytes) + ")");
    std::string bytes;
    TRI_RETURN_IF_ERROR(r.take(len, &bytes, ("entry " + std::to_string(i)).c_str()));
    Key key;
    if (!entry_key(bytes, &key)) return bad(path, "entry " + std::to_string(i) + " is truncated");
    keys.insert({key.hi, key.lo});
    TRI_RETURN_IF_ERROR(entry(i, key, bytes));
  }
  Mac digest = r.digest();
  std::string stored;
  if (r.left() < kMacBytes) return bad(path, "truncated digest");
  TRI_RETURN_IF_ERROR(r.tail(kMacBytes, &stored));
  if (!mac_equal(digest.data(), reinterpret_cast<const uint8_t*>(stored.data())))
    return bad(path, "digest mismatch (corrupt or truncated)");
  if (unsigned_bytes) *unsigned_bytes = r.pos();
  BundleInfo bi;
  bi.entries = static_cast<uint32_t>(keys.size());
  bi.digest = digest;
  if (r.left() != 0) {
    if (r.left() != kSigBlockBytes) return bad(path, "bytes after the last entry");
    std::string blk;
    TRI_RETURN_IF_ERROR(r.tail(kSigBlockBytes, &blk));
    if (std::memcmp(blk.data(), kSigMagic, sizeof kSigMagic) != 0) return bad(path, "bytes after the last entry");
    std::memcpy(bi.signer.data(), blk.data() + sizeof kSigMagic, kPublicKeyBytes);
    Signature sig;
    std::memcpy(sig.data(), blk.data() + sizeof kSigMagic + kPublicKeyBytes, kSignatureBytes);
    const std::string msg = signed_message(digest);
    if (!verify(bi.signer, sig, msg.data(), msg.size()))
      return bad(path, "its signature does not verify (the bundle was changed after it was signed)");
    bi.is_signed = true;
  }
  if (trusted && !trusted->empty()) {
    bool ok = bi.is_signed && std::any_of(trusted->begin(), trusted->end(),
                                          [&](const PublicKey& k) { return k == bi.signer; });
    if (!ok)
      return Status(Code::Untrusted, "bundle " + path + " is signed by key " + hex(bi.signer.data(), 8) +
                                         "..., which this context does not trust (tri_context_options_add_trusted_key)");
  }
  if (info) *info = bi;
  return Status::ok();
}

}  // namespace

Status export_bundle(DiskCache& cache, const std::string& path, const SecretKey* sign_with, uint32_t* count) {
  std::vector<EntryInfo> infos;
  TRI_RETURN_IF_ERROR(cache.list(false, &infos));
  std::string manifest = "tri-cache-bundle 2\n", body;
  uint32_t n = 0;
  for (const EntryInfo& info : infos) {
    if (!info.ok) continue;
    std::string bytes, open;
    if (!cache.read_bytes(info.key, &bytes).is_ok()) continue;  // evicted or damaged meanwhile
    if (!reseal_entry(bytes, info.key, cache.secret(), nullptr, &open).is_ok()) continue;
    Fields f;
    unpack_fields(info.metadata, &f);
    manifest += info.key.hex() + " " + word(info.kind) + " " + word(field(f, "target")) + " " +
                word(field(f, "kernel")) + " " + word(field(f, "made_for")) + "\n";
    put_le(&body, open.size(), 8);
    body += open;
    ++n;
  }
  std::string out(kMagic, sizeof kMagic);
  put_le(&out, kBundleFormatVersion, 4);
  put_le(&out, manifest.size(), 4);
  out += manifest;
  put_le(&out, n, 4);
  out += body;
  Mac d = mac(nullptr, out.data(), out.size());
  out.append(reinterpret_cast<const char*>(d.data()), d.size());
  if (sign_with) out += signature_block(*sign_with, d);
  TRI_RETURN_IF_ERROR(write_user_file(path, out, "bundle export"));
  *count = n;
  return Status::ok();
}

namespace {

// Decodes entry `i` of the bundle at `path` (unkeyed, as bundles hold them).
Status check_entry(const std::string& path, uint64_t i, const Key& key, const std::string& bytes, Entry* e) {
  Status s = decode_entry(bytes, key, nullptr, e);
  if (!s.is_ok()) return bad(path, "entry " + std::to_string(i) + ": " + s.message());
  return Status::ok();
}

}  // namespace

Status check_bundle(const std::string& path, BundleInfo* out) {
  return read_bundle(
      path, nullptr,
      [&](uint64_t i, const Key& key, const std::string& bytes) {
        Entry e;
        return check_entry(path, i, key, bytes, &e);
      },
      out);
}

Status sign_bundle(const std::string& path, const SecretKey& sk) {
  BundleInfo info;
  uint64_t unsigned_bytes = 0;
  TRI_RETURN_IF_ERROR(read_bundle(
      path, nullptr,
      [&](uint64_t i, const Key& key, const std::string& bytes) {
        Entry e;
        return check_entry(path, i, key, bytes, &e);
      },
      &info, &unsigned_bytes));
  std::string body;
  TRI_RETURN_IF_ERROR(read_user_file(path, unsigned_bytes + kSigBlockBytes, "bundle sign", &body));
  if (body.size() < unsigned_bytes) return Status(Code::Io, "bundle " + path + ": it changed while being signed");
  body.resize(static_cast<size_t>(unsigned_bytes));
  // The digest read above is of these bytes only if the file did not change in between.
  Mac d = mac(nullptr, body.data(), body.size() - kMacBytes);
  if (d != info.digest) return Status(Code::Io, "bundle " + path + ": it changed while being signed");
  body += signature_block(sk, d);
  return write_user_file(path, body, "bundle sign");
}

Status import_bundle(DiskCache& cache, const std::string& path,
                     const std::function<bool(const Entry& e, std::string* why)>& accept,
                     const std::vector<PublicKey>& trusted, uint32_t* imported, uint32_t* skipped, uint32_t* failed) {
  *imported = *skipped = *failed = 0;
  if (!cache.enabled()) return Status(Code::Unsupported, "the disk cache is off; nothing can be imported");
  std::vector<DiskCache::Staged> staged;
  std::set<std::pair<uint64_t, uint64_t>> seen;
  uint32_t skip = 0;
  Status st = read_bundle(
      path, &trusted,
      [&](uint64_t i, const Key& key, const std::string& bytes) {
        Entry e;
        TRI_RETURN_IF_ERROR(check_entry(path, i, key, bytes, &e));
        if (!seen.insert({key.hi, key.lo}).second) return Status::ok();  // a key twice: once
        std::string why;
        if (accept && !accept(e, &why)) {
          ++skip;
          return Status::ok();
        }
        std::string sealed;
        TRI_RETURN_IF_ERROR(reseal_entry(bytes, key, nullptr, cache.secret(), &sealed));
        DiskCache::Staged one;
        if (!cache.stage(key, sealed, &one)) {
          ++*failed;
          return Status(Code::Io, "bundle " + path + ": entry " + key.hex() + " could not be written to " + cache.dir() +
                                      " (the context's log says why); nothing was imported");
        }
        staged.push_back(std::move(one));
        return Status::ok();
      },
      nullptr);
  if (!st.is_ok()) {
    cache.discard(staged);
    return st;
  }
  if (!cache.commit(staged)) {
    *failed = static_cast<uint32_t>(staged.size());
    return Status(Code::Io, "bundle " + path + ": its entries could not be renamed into " + cache.dir() +
                                " (the context's log says why); nothing was imported");
  }
  *imported = static_cast<uint32_t>(staged.size());
  *skipped = skip;
  return Status::ok();
}

}  // namespace tri::cache
