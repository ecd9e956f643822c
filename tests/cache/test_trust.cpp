// The cache's trust model (issue 29, docs/cache.md "Trust"): which directories and files a
// DiskCache accepts (private by default, shared by a group on request), its secret (made once,
// 0600, refused when others can read it, replaced when damaged), entries of another cache's
// secret, all-or-nothing staging, request shortcuts, and signed bundles (sign, re-sign, verify,
// trusted and untrusted keys, a bundle changed after it was signed).
#include "cache/bundle.h"
#include "cache/crypto.h"
#include "cache/shortcut.h"
#include "cache/store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "test_main.h"

using namespace tri::cache;

namespace {

std::string g_root;

std::string fresh_dir(const std::string& name) {
  std::string d = g_root + "/" + name;
  std::string cmd = "rm -rf '" + d + "'";
  if (std::system(cmd.c_str()) != 0) std::abort();
  return d;
}

Entry make_entry(const std::string& what) {
  Entry e;
  KeyBuilder kb;
  kb.add("what", what);
  e.key = kb.finish();
  e.kind = "obj";
  e.metadata = pack_fields({{"target", "cpu"}, {"kernel", what}, {"made_for", "test"}});
  for (int i = 0; i < 2000; ++i) e.payload.push_back(static_cast<char>((i * 31 + what.size()) % 251));
  return e;
}

struct LogRec {
  std::vector<std::pair<int, std::string>> lines;
  LogFn fn() {
    return [this](int level, const std::string& m) { lines.push_back({level, m}); };
  }
  bool has(const std::string& s) const {
    for (const auto& l : lines)
      if (l.second.find(s) != std::string::npos) return true;
    return false;
  }
};

mode_t mode_of(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

std::string entry_path(const DiskCache& c, const Key& k) { return c.dir() + "/" + k.hex() + ".entry"; }

}  // namespace

static void test_made_private(void** state) {
  (void)state;
  LogRec log;
  std::string dir = fresh_dir("private") + "/a/b";
  DiskCache c(dir, 0, log.fn());
  assert_true(c.enabled());
  assert_int_equal(mode_of(dir), 0700);
  assert_int_equal(mode_of(dir + "/cache.key"), 0600);
  assert_int_equal(tri_test::read_file(dir + "/cache.key").size(), 32);
  Entry e = make_entry("x"), back;
  assert_true(c.insert(e));
  assert_int_equal(mode_of(entry_path(c, e.key)), 0600);
  // A second cache on the directory reads the same secret and the entry.
  DiskCache again(dir, 0, nullptr);
  assert_true(again.enabled());
  assert_true(again.lookup(e.key, &back));
  assert_true(*again.secret() == *c.secret());
}

static void test_directories_others_can_write_are_refused(void** state) {
  (void)state;
  for (mode_t m : {0770, 0777, 0757}) {
    std::string dir = fresh_dir("open");
    assert_int_equal(::mkdir(dir.c_str(), 0700), 0);
    assert_int_equal(::chmod(dir.c_str(), m), 0);
    LogRec log;
    DiskCache c(dir, 0, log.fn());
    assert_false(c.enabled());
    assert_int_equal(log.lines.size(), 1);
    assert_true(log.has("disk cache off"));
    assert_true(log.has(m & 2 ? "writable by every user" : "writable by its group"));
    assert_true(log.has("chmod 700"));
    assert_false(exists(dir + "/cache.key"));  // nothing written in a directory Tri refuses
    // Shared: its group may write; everybody may not (unless sticky).
    LogRec log2;
    DiskCache s(dir, 0, log2.fn(), true);
    assert_true(s.enabled() == !(m & 2));
    if (s.enabled()) assert_int_equal(mode_of(dir + "/cache.key"), 0640);
  }
  std::string sticky = fresh_dir("sticky");
  assert_int_equal(::mkdir(sticky.c_str(), 0700), 0);
  assert_int_equal(::chmod(sticky.c_str(), 01777), 0);
  assert_true(DiskCache(sticky, 0, nullptr, true).enabled());
  assert_false(DiskCache(sticky, 0, nullptr, false).enabled());
}

static void test_another_users_files_are_refused(void** state) {
  (void)state;
  if (::geteuid() != 0) {
    std::printf("not root: chown to another user is not possible here; the mode checks above stand in\n");
    return;
  }
  // A directory another user owns.
  std::string dir = fresh_dir("theirs");
  assert_int_equal(::mkdir(dir.c_str(), 0700), 0);
  assert_int_equal(::chown(dir.c_str(), 65534, 65534), 0);
  LogRec log;
  assert_false(DiskCache(dir, 0, log.fn()).enabled());
  assert_true(log.has("is owned by uid 65534"));
  // An entry another user owns, in this user's directory: a miss, removed.
  std::string mine = fresh_dir("mine");
  LogRec log2;
  DiskCache c(mine, 0, log2.fn());
  Entry e = make_entry("theirs"), back;
  assert_true(c.insert(e));
  assert_int_equal(::chown(entry_path(c, e.key).c_str(), 65534, 65534), 0);
  assert_false(c.lookup(e.key, &back));
  assert_int_equal(c.stats().corrupt, 1);
  assert_true(log2.has("owned by uid 65534"));
  assert_false(exists(entry_path(c, e.key)));
  // A secret another user owns.
  assert_int_equal(::chown((mine + "/cache.key").c_str(), 65534, 65534), 0);
  assert_false(DiskCache(mine, 0, nullptr).enabled());
  assert_true(DiskCache(mine, 0, nullptr, true).enabled());  // shared: any member's
}

static void test_entries_others_can_write_are_refused(void** state) {
  (void)state;
  LogRec log;
  DiskCache c(fresh_dir("entry_mode"), 0, log.fn());
  Entry e = make_entry("m"), back;
  assert_true(c.insert(e));
  assert_int_equal(::chmod(entry_path(c, e.key).c_str(), 0620), 0);
  assert_false(c.lookup(e.key, &back));
  assert_true(log.has("writable by its group"));
}

static void test_secret(void** state) {
  (void)state;
  std::string dir = fresh_dir("secret");
  Entry e = make_entry("s"), back;
  {
    DiskCache c(dir, 0, nullptr);
    assert_true(c.insert(e));
  }
  // Readable by others: refused, as ssh refuses a private key with such a mode.
  assert_int_equal(::chmod((dir + "/cache.key").c_str(), 0644), 0);
  LogRec log;
  assert_false(DiskCache(dir, 0, log.fn()).enabled());
  assert_true(log.has("readable by other users"));
  assert_int_equal(::chmod((dir + "/cache.key").c_str(), 0600), 0);
  // Another cache's secret: its entries never decode here.
  std::string other = fresh_dir("secret_other");
  DiskCache o(other, 0, nullptr);
  assert_true(o.enabled());
  assert_false(*o.secret() == *DiskCache(dir, 0, nullptr).secret());
  ::link(entry_path(DiskCache(dir, 0, nullptr), e.key).c_str(), (other + "/" + e.key.hex() + ".entry").c_str());
  assert_false(o.lookup(e.key, &back));
  assert_true(o.stats().corrupt == 1);
  // Damaged (not 32 bytes): replaced, and the old entries become misses.
  FILE* f = std::fopen((dir + "/cache.key").c_str(), "wb");
  std::fputs("short", f);
  std::fclose(f);
  LogRec log2;
  DiskCache d(dir, 0, log2.fn());
  assert_true(d.enabled());
  assert_true(log2.has("damaged"));
  assert_int_equal(tri_test::read_file(dir + "/cache.key").size(), 32);
  assert_false(d.lookup(e.key, &back));
}

static void test_staging_is_all_or_nothing(void** state) {
  (void)state;
  DiskCache c(fresh_dir("stage"), 0, nullptr);
  Entry a = make_entry("a"), b = make_entry("b"), back;
  std::string ba, bb;
  assert_true(encode_entry(a, c.secret(), &ba).is_ok());
  assert_true(encode_entry(b, c.secret(), &bb).is_ok());
  std::vector<DiskCache::Staged> staged(2);
  assert_true(c.stage(a.key, ba, &staged[0]));
  assert_true(c.stage(b.key, bb, &staged[1]));
  assert_false(c.lookup(a.key, &back));  // staged is not loadable
  c.discard(staged);
  uint64_t n = 9, bytes = 0;
  c.usage(&n, &bytes);
  assert_int_equal(n, 0);
  std::vector<std::string> names;
  assert_true(c.stage(a.key, ba, &staged[0]));
  assert_true(c.stage(b.key, bb, &staged[1]));
  assert_true(c.commit(staged));
  assert_true(c.lookup(a.key, &back) && c.lookup(b.key, &back));
  assert_int_equal(c.stats().stores, 2);
}

static void test_shortcuts(void** state) {
  (void)state;
  MacKey k = random_mac_key(), other = random_mac_key();
  Key req{1, 2}, entry{3, 4}, got;
  std::string module_bytes = "prepared module", back;
  std::string s = encode_shortcut(req, entry, module_bytes, &k);
  assert_true(decode_shortcut(s, req, &k, &got, &back).is_ok());
  assert_true(got == entry && back == module_bytes);
  assert_false(decode_shortcut(s, Key{1, 3}, &k, &got, &back).is_ok());  // copied under another name
  assert_false(decode_shortcut(s, req, &other, &got, &back).is_ok());    // another cache's
  assert_false(decode_shortcut(encode_shortcut(req, entry, module_bytes, nullptr), req, &k, &got, &back).is_ok());
  for (size_t i = 0; i < s.size(); ++i) {
    std::string d = s;
    d[i] ^= 0x08;
    assert_false(decode_shortcut(d, req, &k, &got, &back).is_ok());
  }
}

static void test_signed_bundles(void** state) {
  (void)state;
  DiskCache a(fresh_dir("sign_a"), 0, nullptr);
  Entry e1 = make_entry("one"), e2 = make_entry("two"), back;
  assert_true(a.insert(e1) && a.insert(e2));
  PublicKey pk, pk2;
  SecretKey sk, sk2;
  sign_keypair(&pk, &sk);
  sign_keypair(&pk2, &sk2);
  const std::string path = g_root + "/signed.tribundle";
  uint32_t n = 0;
  assert_true(export_bundle(a, path, &sk, &n).is_ok());
  assert_int_equal(n, 2);
  BundleInfo info;
  assert_true(check_bundle(path, &info).is_ok());
  assert_true(info.is_signed && info.signer == pk);
  assert_int_equal(info.entries, 2);
  uint32_t imported = 0, skipped = 0, failed = 0;
  auto take_all = [](const Entry&, std::string*) { return true; };
  // Trusted: imported; another key only: refused, nothing written.
  DiskCache b(fresh_dir("sign_b"), 0, nullptr);
  tri::Status s = import_bundle(b, path, take_all, {pk2}, &imported, &skipped, &failed);
  assert_int_equal(static_cast<int>(s.code()), static_cast<int>(tri::Code::Untrusted));
  assert_int_equal(imported, 0);
  assert_false(b.lookup(e1.key, &back));
  assert_true(import_bundle(b, path, take_all, {pk2, pk}, &imported, &skipped, &failed).is_ok());
  assert_int_equal(imported, 2);
  assert_true(b.lookup(e1.key, &back) && back.payload == e1.payload);
  // Re-signed with the other key.
  assert_true(sign_bundle(path, sk2).is_ok());
  assert_true(check_bundle(path, &info).is_ok());
  assert_true(info.signer == pk2);
  // Unsigned: refused where a key is required, imported where none is.
  const std::string plain = g_root + "/plain.tribundle";
  assert_true(export_bundle(a, plain, nullptr, &n).is_ok());
  assert_true(check_bundle(plain, &info).is_ok());
  assert_false(info.is_signed);
  DiskCache c(fresh_dir("sign_c"), 0, nullptr);
  s = import_bundle(c, plain, take_all, {pk}, &imported, &skipped, &failed);
  assert_int_equal(static_cast<int>(s.code()), static_cast<int>(tri::Code::Untrusted));
  assert_true(s.message().find("is not signed") != std::string::npos);
  assert_true(import_bundle(c, plain, take_all, {}, &imported, &skipped, &failed).is_ok());
  assert_int_equal(imported, 2);
  // Changed after signing: every byte of the signed bundle matters.
  std::string bytes = tri_test::read_file(path);
  for (size_t i : {size_t(20), bytes.size() / 2, bytes.size() - 100, bytes.size() - 1}) {
    std::string d = bytes;
    d[i] ^= 0x01;
    FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(d.data(), 1, d.size(), f);
    std::fclose(f);
    assert_false(check_bundle(path, &info).is_ok());
    DiskCache x(fresh_dir("sign_x"), 0, nullptr);
    assert_false(import_bundle(x, path, take_all, {pk2}, &imported, &skipped, &failed).is_ok());
    uint64_t entries = 1, total = 0;
    x.usage(&entries, &total);
    assert_int_equal(entries, 0);
  }
}

int main(void) {
  char tmpl[] = "/tmp/tri-trust-test-XXXXXX";
  if (!::mkdtemp(tmpl)) return 1;
  g_root = tmpl;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_made_private),
      cmocka_unit_test(test_directories_others_can_write_are_refused),
      cmocka_unit_test(test_another_users_files_are_refused),
      cmocka_unit_test(test_entries_others_can_write_are_refused),
      cmocka_unit_test(test_secret),
      cmocka_unit_test(test_staging_is_all_or_nothing),
      cmocka_unit_test(test_shortcuts),
      cmocka_unit_test(test_signed_bundles),
  };
  int rc = cmocka_run_group_tests(tests, nullptr, nullptr);
  std::string cmd = "rm -rf '" + g_root + "'";
  if (std::system(cmd.c_str()) != 0) return 1;
  return rc;
}
