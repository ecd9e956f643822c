// The disk cache seen from the C API: a context's cache (opened on its first compile), the key of
// a compiled kernel, the compile step that reads and writes entries (single flight across
// processes), and the tri_cache_* functions (statistics, listing, pruning, bundles).
//
// The key covers the specialized IR in its binary form with every source location zeroed (so a
// comment or a moved line changes no key), the target's name and cache identity (target.h), the
// CompileOptions fields, Tri's version and build id. Entry metadata is a field list (entry.h):
// "target", "kernel", "tri" (version and build id), "made_for" (the target's identity),
// "specialized" (its constexprs and facts, for people: CompileRequest::describe) and
// "target_meta" (the target's own metadata).
#include <chrono>
#include <cstdio>
#include <cstring>

#include "base/clock.h"
#include "base/file.h"
#include "cache/crypto.h"
#include "cache/shortcut.h"
#include "cache/build_id.h"
#include "cache/bundle.h"
#include "cache/bytes.h"
#include "capi/handles.h"
#include "ir/binary.h"

using namespace tri;
using tri::capi::guard;
using tri::capi::set_error;

namespace tri::capi {

namespace {

std::string tri_version_text() {
  return std::to_string(TRI_VERSION_MAJOR) + "." + std::to_string(TRI_VERSION_MINOR) + "." +
         std::to_string(TRI_VERSION_PATCH);
}

// What this library writes in an entry's "tri" field; entries with another are useless here.
const std::string& this_build() {
  static const std::string s = tri_version_text() + " build " + cache::build_id();
  return s;
}

// The module's binary form without source locations or source name.
std::string canonical_ir(const ir::Module& m) { return ir::write_binary(m, /*locations=*/false); }

cache::Key kernel_key(const Compiled& c, const target::Target& t, const target::CompileOptions& o,
                      const std::string& identity) {
  cache::KeyBuilder kb;
  kb.add("schema", "tri kernel entry 1");
  kb.add("ir", canonical_ir(*c.ir));
  kb.add("target", std::string(t.name()));
  kb.add("identity", identity);
  kb.add_u64("checked", o.checked);
  kb.add_u64("num_warps", static_cast<uint64_t>(o.num_warps));
  kb.add("arch", o.arch);
  kb.add_u64("ptx_version", static_cast<uint64_t>(o.ptx_version));
  kb.add("tri", this_build());
  return kb.finish();
}

// Loads the entry of `key` into c; true on a hit (not counted: the caller counts its compile's
// one outcome). An entry that decodes but that the target cannot load is rejected (counted as
// corrupt, removed), so the compile that follows rewrites it.
bool try_load(cache::DiskCache& disk, const cache::Key& key, Compiled* c, const target::Target& t,
              const target::CompileOptions& options, uint64_t* file_bytes) {
  cache::Entry e;
  if (!disk.lookup(key, &e, false, file_bytes)) return false;
  const std::string& kname = c->kernel().name;
  cache::Fields f;
  if (!cache::unpack_fields(e.metadata, &f) || cache::field(f, "target") != t.name() ||
      cache::field(f, "tri") != this_build()) {
    disk.reject(key, "made by another target or build for kernel @" + kname);
    return false;
  }
  target::Payload p{e.kind, cache::field(f, "target_meta"), std::move(e.payload)};
  std::shared_ptr<const target::Executable> exe;
  Status s = t.load(*c->ir, c->kernel(), options, p, &exe);
  if (!s.is_ok()) {
    disk.reject(key, "kernel @" + kname + " did not load from it: " + s.message());
    return false;
  }
  c->exe = std::move(exe);
  c->from_disk = true;
  disk.log(cache::kDebug, "disk cache: kernel @" + kname + " (" + std::string(t.name()) + ") loaded from entry " +
                              key.hex());
  return true;
}

}  // namespace

Status compile_with_disk(cache::DiskCache& disk, Compiled* c, const target::Target& t,
                         const target::CompileOptions& options, cache::Key* out_key) {
  const ir::Function& k = c->kernel();
  std::string identity;
  if (!disk.enabled() || !t.cache_identity(*c->ir, k, options, &identity).is_ok() || identity.empty())
    return t.compile(*c->ir, k, options, &c->exe);
  const cache::Key key = kernel_key(*c, t, options, identity);
  if (out_key) *out_key = key;
  // Each compile counts one hit (it loaded an entry) or one miss (it compiled), however many
  // looks it took.
  uint64_t bytes = 0;
  if (try_load(disk, key, c, t, options, &bytes)) return disk.count_hit(bytes), Status::ok();
  // Single flight: whoever holds the key's lock compiles; the others wait here, then read.
  std::unique_ptr<cache::DiskCache::Lock> lock = disk.lock(key);
  if (try_load(disk, key, c, t, options, &bytes)) return disk.count_hit(bytes), Status::ok();
  disk.count_miss();
  if (options.cancel.requested()) return Status(Code::Cancelled, "the compile of kernel @" + k.name + " was cancelled");
  TRI_RETURN_IF_ERROR(t.compile(*c->ir, k, options, &c->exe));
  target::Payload p;
  Status ps = c->exe->payload(*c->ir, k, &p);
  if (!ps.is_ok()) {
    disk.log(cache::kWarning, "disk cache: kernel @" + k.name + " not stored (" + ps.message() + ")");
    return Status::ok();
  }
  cache::Entry e;
  e.key = key;
  e.kind = p.kind;
  e.metadata = cache::pack_fields({{"target", std::string(t.name())},
                                   {"kernel", k.name},
                                   {"tri", this_build()},
                                   {"made_for", identity},
                                   {"specialized", c->req.describe(k, t.uses_stream())},
                                   {"target_meta", p.metadata}});
  e.payload = std::move(p.bytes);
  const auto store_start = std::chrono::steady_clock::now();
  const bool stored = disk.insert(e);
  if (options.timing) {
    char buf[96];
    std::snprintf(buf, sizeof buf, ": disk cache store %.2f ms (write, fsync, rename)",
                  ms_since(store_start));
    options.timing("kernel @" + k.name + buf);
  }
  if (stored)
    disk.log(cache::kDebug, "disk cache: kernel @" + k.name + " (" + std::string(t.name()) + ") compiled and stored as " +
                                key.hex());
  return Status::ok();
}

bool try_front(cache::DiskCache& disk, const ir::Module& m, const std::string& name, const CompileRequest& req,
               const target::Target& t, const target::CompileOptions& options, Compiled* c, cache::Key* front_key) {
  *front_key = cache::Key{};
  if (!disk.enabled()) return false;
  const ir::Function* fn = nullptr;
  for (const auto& f : m.functions)
    if (f->name == name) fn = f.get();
  std::string identity;
  if (!fn || !t.cache_identity(m, *fn, options, &identity).is_ok() || identity.empty()) return false;
  cache::KeyBuilder kb;
  // The source with its locations: a moved line gives the prepared IR (and its messages) anew.
  kb.add("schema", "tri front 1").add("module", ir::write_binary(m)).add("kernel", name).add("request", req.key(name));
  kb.add("target", std::string(t.name())).add("identity", identity).add("tri", this_build());
  *front_key = kb.finish();
  std::string bytes, why;
  if (!disk.read_aux("front", front_key->hex(), cache::kMaxEntryBytes, &bytes, &why)) {
    if (!why.empty()) disk.log(cache::kWarning, "disk cache: shortcut front/" + front_key->hex() + " ignored (" + why + ")");
    return false;
  }
  // Damaged, copied or forged: ignored; the compile prepares the kernel and rewrites the file.
  auto ignored = [&](const std::string& what) {
    disk.log(cache::kWarning, "disk cache: shortcut front/" + front_key->hex() + " ignored (" + what + ")");
    return false;
  };
  cache::Key entry;
  std::string module_bytes;
  Status ds = cache::decode_shortcut(bytes, *front_key, disk.secret(), &entry, &module_bytes);
  if (!ds.is_ok()) return ignored(ds.message());
  std::unique_ptr<ir::Module> prepared;
  if (!ir::read_binary(module_bytes.data(), module_bytes.size(), m.source_name, &prepared).is_ok() ||
      prepared->functions.empty() || prepared->functions[0]->name != name)
    return ignored("its module does not read");
  c->ir = std::move(prepared);
  c->params = param_sigs(*c->ir, c->kernel());
  uint64_t file_bytes = 0;
  if (try_load(disk, entry, c, t, options, &file_bytes)) {
    disk.count_hit(file_bytes);
    return true;
  }
  c->ir.reset();
  c->params.clear();
  return false;
}

void remember_front(cache::DiskCache& disk, const cache::Key& front_key, const cache::Key& entry,
                    const ir::Module& prepared) {
  if ((!front_key.hi && !front_key.lo) || !disk.enabled()) return;
  const std::string o = cache::encode_shortcut(front_key, entry, ir::write_binary(prepared), disk.secret());
  (void)disk.write_aux("front", front_key.hex(), o);  // best effort: a hint for the next compile
}

cache::DiskCache* context_disk_cache(tri_context* c) {
  std::call_once(c->disk_once, [c] {
    cache::DirChoice d = cache::resolve_dir(c->options.cache_dir_set, c->options.cache_dir);
    auto log = [c](int level, const std::string& m) { c->log(level, m); };
    if (d.path.empty()) c->log(TRI_LOG_DEBUG, "disk cache off: " + d.from);
    c->disk = std::make_unique<cache::DiskCache>(d.path, c->options.cache_max_bytes, log, c->options.cache_shared);
  });
  return c->disk.get();
}

}  // namespace tri::capi

namespace {

Status need_cache(cache::DiskCache* d, const char* fn) {
  if (!d->enabled())
    return Status(Code::Unsupported, std::string(fn) +
                                         ": the context has no disk cache (its directory is off, missing or not "
                                         "writable; the context's log says which)");
  return Status::ok();
}

}  // namespace

extern "C" {

TRI_API tri_result tri_cache_dir(tri_context* context, const char** out_path) {
  TRI_CHECK_ARG(context);
  TRI_CHECK_ARG(out_path);
  return guard([&] {
    cache::DiskCache* d = capi::context_disk_cache(context);
    *out_path = d->enabled() ? d->dir().c_str() : "";
    return TRI_OK;
  });
}

TRI_API tri_result tri_cache_stat(tri_context* context, int32_t stat, uint64_t* out_value) {
  TRI_CHECK_ARG(context);
  TRI_CHECK_ARG(out_value);
  return guard([&] {
    cache::DiskCache* d = capi::context_disk_cache(context);
    cache::Stats s = d->stats();
    uint64_t v = 0;
    switch (stat) {
      case TRI_CACHE_STAT_HITS: v = s.hits; break;
      case TRI_CACHE_STAT_MISSES: v = s.misses; break;
      case TRI_CACHE_STAT_STORES: v = s.stores; break;
      case TRI_CACHE_STAT_BYTES_READ: v = s.bytes_read; break;
      case TRI_CACHE_STAT_BYTES_WRITTEN: v = s.bytes_written; break;
      case TRI_CACHE_STAT_EVICTIONS: v = s.evictions; break;
      case TRI_CACHE_STAT_CORRUPT: v = s.corrupt; break;
      case TRI_CACHE_STAT_WRITE_FAILURES: v = s.write_failures; break;
      case TRI_CACHE_STAT_LOCK_WAITS: v = s.lock_waits; break;
      case TRI_CACHE_STAT_ENTRIES:
      case TRI_CACHE_STAT_BYTES: {
        uint64_t n = 0, bytes = 0;
        Status st = d->usage(&n, &bytes);
        if (!st.is_ok()) return set_error(st);
        v = stat == TRI_CACHE_STAT_ENTRIES ? n : bytes;
        break;
      }
      case TRI_CACHE_STAT_MAX_BYTES: v = d->max_bytes(); break;
      case TRI_CACHE_STAT_ENABLED: v = d->enabled() ? 1 : 0; break;
      default:
        return set_error(Code::InvalidArgument,
                         "tri_cache_stat: " + std::to_string(stat) + " is not a TRI_CACHE_STAT_* value");
    }
    *out_value = v;
    return TRI_OK;
  });
}

TRI_API tri_result tri_cache_list(tri_context* context, int32_t verify, tri_blob** out_text) {
  TRI_CHECK_ARG(context);
  TRI_CHECK_ARG(out_text);
  return guard([&] {
    cache::DiskCache* d = capi::context_disk_cache(context);
    Status st = need_cache(d, "tri_cache_list");
    if (!st.is_ok()) return set_error(st);
    std::vector<cache::EntryInfo> infos;
    st = d->list(verify != 0, &infos);
    if (!st.is_ok()) return set_error(st);
    std::string text;
    for (const cache::EntryInfo& i : infos) {
      cache::Fields f;
      cache::unpack_fields(i.metadata, &f);
      std::string status = i.ok ? (cache::field(f, "tri") == capi::this_build() ? "ok" : "ok (another build)")
                                : (verify ? "removed: " : "bad: ") + i.problem;
      text += i.key.hex() + "\t" + std::to_string(i.bytes) + "\t" + std::to_string(i.last_use) + "\t" + status + "\t" +
              i.kind + "\t" + cache::field(f, "target") + "\t" + cache::field(f, "kernel") + "\t" +
              cache::field(f, "made_for") + "\t" + cache::field(f, "specialized") + "\n";
    }
    return capi::make_blob(context, text, "tri_cache_list", out_text);
  });
}

TRI_API tri_result tri_cache_prune(tri_context* context, uint64_t max_bytes, uint64_t* out_removed) {
  TRI_CHECK_ARG(context);
  return guard([&] {
    cache::DiskCache* d = capi::context_disk_cache(context);
    Status st = need_cache(d, "tri_cache_prune");
    if (!st.is_ok()) return set_error(st);
    cache::DiskCache::PruneResult r;
    st = d->prune(max_bytes == UINT64_MAX ? (d->max_bytes() ? d->max_bytes() : UINT64_MAX) : max_bytes, &r);
    if (!st.is_ok()) return set_error(st);
    if (out_removed) *out_removed = r.entries;
    context->log(TRI_LOG_INFO, "disk cache: pruned " + std::to_string(r.entries) + " entries (" +
                                   std::to_string(r.bytes) + " bytes), " + std::to_string(r.temps) +
                                   " stale temporary files, " + std::to_string(r.locks) + " lock files");
    return TRI_OK;
  });
}

TRI_API tri_result tri_cache_export(tri_context* context, const char* path, uint32_t* out_count) {
  TRI_CHECK_ARG(context);
  TRI_CHECK_ARG(path);
  return guard([&] {
    cache::DiskCache* d = capi::context_disk_cache(context);
    Status st = need_cache(d, "tri_cache_export");
    if (!st.is_ok()) return set_error(st);
    uint32_t n = 0;
    st = cache::export_bundle(*d, path, nullptr, &n);
    if (!st.is_ok()) return set_error(st);
    if (out_count) *out_count = n;
    return TRI_OK;
  });
}

TRI_API tri_result tri_cache_import(tri_context* context, const char* path, uint32_t* out_imported) {
  TRI_CHECK_ARG(context);
  TRI_CHECK_ARG(path);
  if (out_imported) *out_imported = 0;  // also on failure: all or nothing
  return guard([&] {
    cache::DiskCache* d = capi::context_disk_cache(context);
    Status st = need_cache(d, "tri_cache_import");
    if (!st.is_ok()) return set_error(st);
    uint32_t imported = 0, skipped = 0, failed = 0;
    auto accept = [](const cache::Entry& e, std::string* why) {
      cache::Fields f;
      if (!cache::unpack_fields(e.metadata, &f)) return *why = "no metadata", false;
      *why = "made by " + cache::field(f, "tri");
      return cache::field(f, "tri") == capi::this_build();
    };
    st = cache::import_bundle(*d, path, accept, context->options.trusted_keys, &imported, &skipped, &failed);
    if (!st.is_ok()) {
      context->log(TRI_LOG_ERROR, "tri_cache_import: " + st.message());
      return set_error(st.code(), "tri_cache_import: " + st.message());
    }
    if (skipped)
      context->log(TRI_LOG_WARNING, "tri_cache_import: " + std::to_string(skipped) + " entries of " + path +
                                        " were made by another build of Tri (this is " + capi::this_build() +
                                        ") and were not imported");
    if (out_imported) *out_imported = imported;
    return TRI_OK;
  });
}

TRI_API tri_result tri_sign_keypair(uint8_t* out_public_key, size_t public_key_bytes, uint8_t* out_secret_key,
                                    size_t secret_key_bytes) {
  TRI_CHECK_ARG(out_public_key);
  TRI_CHECK_ARG(out_secret_key);
  return guard([&] {
    if (public_key_bytes != TRI_SIGN_PUBLIC_KEY_BYTES || secret_key_bytes != TRI_SIGN_SECRET_KEY_BYTES)
      return set_error(Code::InvalidArgument, "tri_sign_keypair: the keys have " +
                                                  std::to_string(TRI_SIGN_PUBLIC_KEY_BYTES) + " and " +
                                                  std::to_string(TRI_SIGN_SECRET_KEY_BYTES) + " bytes, not " +
                                                  std::to_string(public_key_bytes) + " and " +
                                                  std::to_string(secret_key_bytes));
    Status st = cache::crypto_init();
    if (!st.is_ok()) return set_error(st);
    cache::PublicKey pk;
    cache::SecretKey sk;
    cache::sign_keypair(&pk, &sk);
    std::memcpy(out_public_key, pk.data(), pk.size());
    std::memcpy(out_secret_key, sk.data(), sk.size());
    cache::wipe(&sk);
    return TRI_OK;
  });
}

TRI_API tri_result tri_bundle_sign(const char* path, const uint8_t* secret_key, size_t secret_key_bytes) {
  TRI_CHECK_ARG(path);
  TRI_CHECK_ARG(secret_key);
  return guard([&] {
    if (secret_key_bytes != TRI_SIGN_SECRET_KEY_BYTES)
      return set_error(Code::InvalidArgument, "tri_bundle_sign: a secret key has " +
                                                  std::to_string(TRI_SIGN_SECRET_KEY_BYTES) + " bytes, not " +
                                                  std::to_string(secret_key_bytes));
    cache::SecretKey sk;
    std::memcpy(sk.data(), secret_key, sk.size());
    Status st = cache::sign_bundle(path, sk);
    cache::wipe(&sk);
    if (!st.is_ok()) return set_error(st.code(), "tri_bundle_sign: " + st.message());
    return TRI_OK;
  });
}

TRI_API tri_result tri_bundle_verify(const char* path, const uint8_t* public_key, size_t public_key_bytes,
                                     uint32_t* out_entries, int32_t* out_signed, uint8_t* out_signer) {
  TRI_CHECK_ARG(path);
  return guard([&] {
    if (public_key && public_key_bytes != TRI_SIGN_PUBLIC_KEY_BYTES)
      return set_error(Code::InvalidArgument, "tri_bundle_verify: a public key has " +
                                                  std::to_string(TRI_SIGN_PUBLIC_KEY_BYTES) + " bytes, not " +
                                                  std::to_string(public_key_bytes));
    cache::BundleInfo info;
    Status st = cache::check_bundle(path, &info);
    if (!st.is_ok()) return set_error(st.code(), "tri_bundle_verify: " + st.message());
    if (public_key && (!info.is_signed || std::memcmp(info.signer.data(), public_key, info.signer.size()) != 0))
      return set_error(Code::Untrusted,
                       std::string("tri_bundle_verify: bundle ") + path +
                           (info.is_signed ? " is signed by key " + cache::hex(info.signer.data(), 8) + "..., not by the key given"
                                           : " is not signed"));
    if (out_entries) *out_entries = info.entries;
    if (out_signed) *out_signed = info.is_signed ? 1 : 0;
    if (out_signer) {
      if (info.is_signed) std::memcpy(out_signer, info.signer.data(), info.signer.size());
      else std::memset(out_signer, 0, info.signer.size());
    }
    return TRI_OK;
  });
}

}  // extern "C"
