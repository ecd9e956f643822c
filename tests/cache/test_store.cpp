// DiskCache and bundles: round trip, every kind of damaged file is a miss that removes the file,
// foreign files are left alone, an unwritable directory turns the cache off with one log line, a
// failed write (full disk) leaves nothing behind, stray temporaries are pruned once stale, LRU
// eviction keeps the bound, the lock serializes holders and is released by a crash, bundles
// round-trip and refuse damage.
#include "cache/bundle.h"
#include "cache/store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <thread>

#include "test_main.h"

using namespace tri::cache;

namespace {

std::string g_root;
const MacKey* g_secret = nullptr;  // the cache check_damage made, for damage that needs it

std::string fresh_dir(const std::string& name) {
  std::string d = g_root + "/" + name;
  std::string cmd = "rm -rf '" + d + "'";
  if (std::system(cmd.c_str()) != 0) std::abort();
  return d;
}

Entry make_entry(const std::string& what, size_t size = 3000) {
  Entry e;
  KeyBuilder kb;
  kb.add("what", what);
  e.key = kb.finish();
  e.kind = "obj";
  e.metadata = pack_fields({{"target", "cpu"}, {"kernel", what}, {"made_for", "test"}});
  for (size_t i = 0; i < size; ++i) e.payload.push_back(static_cast<char>((i * 131 + what.size()) % 251));
  return e;
}

struct LogRec {
  std::vector<std::pair<int, std::string>> lines;
  LogFn fn() {
    return [this](int level, const std::string& m) { lines.push_back({level, m}); };
  }
  int count(int level) const {
    int n = 0;
    for (const auto& l : lines) n += l.first == level;
    return n;
  }
};

std::string path_of(const DiskCache& c, const Key& k) { return c.dir() + "/" + k.hex() + ".entry"; }

void write_raw(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  assert_non_null(f);
  if (!bytes.empty()) assert_int_equal(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

int count_files(const std::string& dir, const std::string& contains) {
  std::string cmd = "ls -a '" + dir + "' | grep -c -- '" + contains + "'";
  FILE* p = ::popen(cmd.c_str(), "r");
  int n = 0;
  if (std::fscanf(p, "%d", &n) != 1) n = -1;
  ::pclose(p);
  return n;
}

void set_age(const std::string& path, int64_t seconds_ago) {
  struct timeval now;
  ::gettimeofday(&now, nullptr);
  struct timeval tv[2] = {{now.tv_sec - seconds_ago, 0}, {now.tv_sec - seconds_ago, 0}};
  assert_int_equal(::utimes(path.c_str(), tv), 0);
}

}  // namespace

static void test_resolve_dir(void** state) {
  (void)state;
  assert_string_equal(resolve_dir(true, "/x/y").path.c_str(), "/x/y");
  assert_true(resolve_dir(true, "").path.empty());
  ::setenv("TRI_CACHE_DIR", "/from/env", 1);
  assert_string_equal(resolve_dir(false, "").path.c_str(), "/from/env");
  ::unsetenv("TRI_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  assert_string_equal(resolve_dir(false, "").path.c_str(), "/xdg/tri");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/home/u", 1);
  assert_string_equal(resolve_dir(false, "").path.c_str(), "/home/u/.cache/tri");
}

static void test_round_trip_and_stats(void** state) {
  (void)state;
  LogRec log;
  DiskCache c(fresh_dir("rt") + "/nested/dir", 0, log.fn());
  assert_true(c.enabled());
  Entry e = make_entry("a"), back;
  assert_false(c.lookup(e.key, &back));
  assert_true(c.insert(e));
  assert_true(c.lookup(e.key, &back));
  assert_true(back.payload == e.payload && back.metadata == e.metadata && back.kind == "obj");
  Stats s = c.stats();
  assert_int_equal(s.hits, 1);
  assert_int_equal(s.misses, 1);
  assert_int_equal(s.stores, 1);
  assert_true(s.bytes_written > 0 && s.bytes_read == s.bytes_written);
  assert_int_equal(count_files(c.dir(), ".tmp."), 0);
  assert_int_equal(log.count(kWarning), 0);
  uint64_t n = 0, bytes = 0;
  assert_true(c.usage(&n, &bytes).is_ok());
  assert_int_equal(n, 1);
}

// Each damage: the lookup misses, counts it, logs one warning, removes the file; the next insert
// rewrites it and the lookup after that hits.
static void check_damage(const std::string& name, const std::function<std::string(const std::string&)>& damage) {
  LogRec log;
  DiskCache c(fresh_dir("damage_" + name), 0, log.fn());
  g_secret = c.secret();
  Entry e = make_entry(name), back;
  assert_true(c.insert(e));
  std::string good = tri_test::read_file(path_of(c, e.key));
  write_raw(path_of(c, e.key), damage(good));
  assert_false(c.lookup(e.key, &back));
  assert_int_equal(c.stats().corrupt, 1);
  assert_int_equal(log.count(kWarning), 1);
  assert_false(exists(path_of(c, e.key)));
  assert_true(c.insert(e));
  assert_true(c.lookup(e.key, &back));
  assert_true(back.payload == e.payload);
}

static void test_damaged_entries_are_misses(void** state) {
  (void)state;
  check_damage("flip", [](const std::string& g) {
    std::string d = g;
    d[d.size() / 2] ^= 0x01;
    return d;
  });
  check_damage("truncate", [](const std::string& g) { return g.substr(0, g.size() - 7); });
  check_damage("empty", [](const std::string&) { return std::string(); });
  check_damage("version", [](const std::string& g) {
    std::string d = g;
    d[8] = 9;  // format version 9
    return d;
  });
  check_damage("foreign", [](const std::string&) { return std::string("#!/bin/sh\necho hello\n"); });
  // Another key's entry under this name (a file copied by hand).
  check_damage("otherkey", [](const std::string&) {
    std::string bytes;
    encode_entry(make_entry("somebody else"), g_secret, &bytes);
    return bytes;
  });
  // Made by anything but this cache: unsealed, or sealed with another cache's secret.
  check_damage("unsealed", [](const std::string&) {
    std::string bytes;
    encode_entry(make_entry("unsealed"), nullptr, &bytes);
    return bytes;
  });
}

static void test_foreign_files_are_left_alone(void** state) {
  (void)state;
  LogRec log;
  DiskCache c(fresh_dir("foreign"), 1, log.fn());  // a 1-byte bound evicts every other entry
  write_raw(c.dir() + "/README", "not ours\n");
  write_raw(c.dir() + "/0123.entry", "short name\n");
  Entry a = make_entry("a"), b = make_entry("b"), back;
  assert_true(c.insert(a));
  assert_true(c.insert(b));
  DiskCache::PruneResult r;
  assert_true(c.prune(0, &r).is_ok());
  assert_true(exists(c.dir() + "/README"));
  assert_true(exists(c.dir() + "/0123.entry"));
  std::vector<EntryInfo> infos;
  assert_true(c.list(true, &infos).is_ok());
  assert_int_equal(infos.size(), 0);
}

static void test_unwritable_directory_turns_the_cache_off(void** state) {
  (void)state;
  // A directory that cannot be made: its parent is a file.
  std::string base = fresh_dir("ro");
  assert_int_equal(::mkdir(base.c_str(), 0777), 0);
  write_raw(base + "/file", "x");
  LogRec log;
  DiskCache c(base + "/file/cache", 0, log.fn());
  assert_false(c.enabled());
  assert_int_equal(log.lines.size(), 1);
  assert_true(log.lines[0].second.find("disk cache off") != std::string::npos);
  Entry e = make_entry("x"), back;
  assert_false(c.insert(e));
  assert_false(c.lookup(e.key, &back));
  assert_null(c.lock(e.key).get());
  assert_int_equal(log.lines.size(), 1);  // one line, however much it is used

  // An existing directory that refuses writes: chmod 0555, which root ignores; then /proc/self,
  // which refuses new files to root too.
  std::string ro = base + "/readonly";
  assert_int_equal(::mkdir(ro.c_str(), 0777), 0);
  assert_int_equal(::chmod(ro.c_str(), 0555), 0);
  std::string dir = ::geteuid() == 0 ? std::string("/proc/self") : ro;
  if (::geteuid() == 0) std::printf("running as root: chmod 0555 does not stop root; using /proc/self\n");
  LogRec log2;
  DiskCache c2(dir, 0, log2.fn());
  assert_false(c2.enabled());
  assert_int_equal(log2.lines.size(), 1);
  assert_true(log2.lines[0].second.find("not writable") != std::string::npos);
  ::chmod(ro.c_str(), 0755);
}

static int fail_with_enospc(const std::string&) { return ENOSPC; }

static void test_full_disk(void** state) {
  (void)state;
  LogRec log;
  DiskCache c(fresh_dir("full"), 0, log.fn());
  Entry e = make_entry("full"), back;
  DiskCache::set_write_fault(fail_with_enospc);
  assert_false(c.insert(e));
  DiskCache::set_write_fault(nullptr);
  assert_int_equal(c.stats().write_failures, 1);
  assert_int_equal(log.count(kWarning), 1);
  assert_true(log.lines[0].second.find("No space left on device") != std::string::npos);
  assert_int_equal(count_files(c.dir(), ".tmp."), 0);
  assert_false(exists(path_of(c, e.key)));
  assert_false(c.lookup(e.key, &back));
  assert_true(c.insert(e));  // space again
  assert_true(c.lookup(e.key, &back));
}

static void test_stray_temporaries(void** state) {
  (void)state;
  DiskCache c(fresh_dir("stray"), 0, nullptr);
  Entry e = make_entry("s");
  // What a writer killed between write and rename leaves: a temporary next to the entry.
  std::string stale = path_of(c, e.key) + ".tmp.99999.0", fresh = path_of(c, e.key) + ".tmp.99999.1";
  std::string bytes;
  encode_entry(e, c.secret(), &bytes);
  write_raw(stale, bytes.substr(0, 100));
  write_raw(fresh, bytes.substr(0, 100));
  set_age(stale, kStaleTempSeconds + 60);
  Entry back;
  assert_false(c.lookup(e.key, &back));  // a temporary is never read as the entry
  DiskCache::PruneResult r;
  assert_true(c.prune(UINT64_MAX, &r).is_ok());
  assert_int_equal(r.temps, 1);
  assert_false(exists(stale));
  assert_true(exists(fresh));  // may belong to a writer still at work
  // An insert cleans stale ones too.
  set_age(fresh, kStaleTempSeconds + 60);
  assert_true(c.insert(e));
  assert_false(exists(fresh));
}

static void test_lru_eviction(void** state) {
  (void)state;
  std::string bytes;
  encode_entry(make_entry("e0"), nullptr, &bytes);
  const uint64_t one = bytes.size();
  DiskCache c(fresh_dir("lru"), 3 * one + one / 2, nullptr);  // room for three
  std::vector<Entry> es;
  for (int i = 0; i < 3; ++i) {
    es.push_back(make_entry("e" + std::to_string(i)));
    assert_true(c.insert(es.back()));
    set_age(path_of(c, es.back().key), 100 - i * 10);  // e0 oldest
  }
  Entry back;
  assert_true(c.lookup(es[0].key, &back));  // e0 used now: e1 is the least recently used
  es.push_back(make_entry("e3"));
  assert_true(c.insert(es.back()));
  assert_int_equal(c.stats().evictions, 1);
  assert_false(exists(path_of(c, es[1].key)));
  assert_true(exists(path_of(c, es[0].key)));
  assert_true(exists(path_of(c, es[2].key)));
  assert_true(exists(path_of(c, es[3].key)));
  DiskCache::PruneResult r;
  assert_true(c.prune(one, &r).is_ok());
  assert_int_equal(r.entries, 2);
  uint64_t n = 0, total = 0;
  c.usage(&n, &total);
  assert_int_equal(n, 1);
  assert_true(c.prune(0, &r).is_ok());
  c.usage(&n, &total);
  assert_int_equal(n, 0);
}

static void test_lock(void** state) {
  (void)state;
  DiskCache c(fresh_dir("lock"), 0, nullptr);
  Key k = make_entry("l").key;
  // Threads: one holder at a time.
  std::atomic<int> inside{0}, most{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < 6; ++i)
    ts.emplace_back([&] {
      auto l = c.lock(k);
      assert_non_null(l.get());
      int now = ++inside;
      if (now > most) most = now;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      --inside;
    });
  for (auto& t : ts) t.join();
  assert_int_equal(most.load(), 1);
  assert_true(c.stats().lock_waits >= 1);
  // A holder that dies without unlocking: while it lives the lock is refused, once it is gone
  // (no unlock, no destructor) the kernel has released it.
  int ready[2], go[2];
  assert_int_equal(::pipe(ready), 0);
  assert_int_equal(::pipe(go), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    DiskCache cc(c.dir(), 0, nullptr);
    auto l = cc.lock(k);
    char b = l ? 'y' : 'n';
    if (::write(ready[1], &b, 1) != 1) ::_exit(3);
    if (::read(go[0], &b, 1) < 0) ::_exit(4);
    ::_exit(0);
  }
  char b = 0;
  assert_int_equal(::read(ready[0], &b, 1), 1);
  assert_int_equal(b, 'y');
  assert_null(c.lock(k, 30).get());  // held by the child
  assert_int_equal(::write(go[1], "x", 1), 1);
  int status = 0;
  ::waitpid(pid, &status, 0);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto l = c.lock(k, 1000);
  assert_non_null(l.get());
  l.reset();
  // A short wait limit gives up with a null lock while someone holds it.
  auto held = c.lock(k);
  std::thread([&] { assert_null(c.lock(k, 20).get()); }).join();
  held.reset();
  assert_int_equal(count_files(c.dir(), ".lock"), 0);  // a released lock leaves no file
  // prune removes lock files nobody holds (a crashed holder's).
  write_raw(c.dir() + "/" + k.hex() + ".lock", "");
  DiskCache::PruneResult r;
  assert_true(c.prune(UINT64_MAX, &r).is_ok());
  assert_int_equal(r.locks, 1);
  assert_int_equal(count_files(c.dir(), ".lock"), 0);
}

static void test_bundles(void** state) {
  (void)state;
  DiskCache a(fresh_dir("bundle_a"), 0, nullptr);
  Entry e1 = make_entry("k1"), e2 = make_entry("k2", 50000), e3 = make_entry("k3");
  e3.metadata = pack_fields({{"target", "cpu"}, {"kernel", "k3"}, {"made_for", "another build"}});
  assert_true(a.insert(e1) && a.insert(e2) && a.insert(e3));
  write_raw(a.dir() + "/" + make_entry("bad").key.hex() + ".entry", "garbage");  // skipped by export
  std::string bundle = g_root + "/b.tribundle";
  uint32_t count = 0;
  assert_true(export_bundle(a, bundle, nullptr, &count).is_ok());
  assert_int_equal(count, 3);
  std::string bytes = tri_test::read_file(bundle);
  assert_true(bytes.find("tri-cache-bundle 2\n") != std::string::npos);
  assert_true(bytes.find(e2.key.hex() + " obj cpu k2 test\n") != std::string::npos);

  DiskCache b(fresh_dir("bundle_b"), 0, nullptr);
  uint32_t imported = 0, skipped = 0, failed = 0;
  auto accept = [](const Entry& e, std::string* why) {
    Fields f;
    unpack_fields(e.metadata, &f);
    *why = "made for " + field(f, "made_for");
    return field(f, "made_for") == "test";
  };
  assert_true(import_bundle(b, bundle, accept, {}, &imported, &skipped, &failed).is_ok());
  assert_int_equal(imported, 2);
  assert_int_equal(skipped, 1);
  assert_int_equal(failed, 0);
  Entry back;
  assert_true(b.lookup(e2.key, &back) && back.payload == e2.payload);
  assert_false(b.lookup(e3.key, &back));
  // Damage anywhere is refused and imports nothing.
  DiskCache c(fresh_dir("bundle_c"), 0, nullptr);
  std::string d = bytes;
  d[d.size() / 2] ^= 0x10;
  write_raw(bundle, d);
  tri::Status s = import_bundle(c, bundle, accept, {}, &imported, &skipped, &failed);
  assert_int_equal(static_cast<int>(s.code()), static_cast<int>(tri::Code::CorruptBinary));
  write_raw(bundle, bytes.substr(0, bytes.size() - 1));
  assert_false(import_bundle(c, bundle, accept, {}, &imported, &skipped, &failed).is_ok());
  write_raw(bundle, "TRIBUNDL");
  assert_false(import_bundle(c, bundle, accept, {}, &imported, &skipped, &failed).is_ok());
  uint64_t n = 0, total = 0;
  c.usage(&n, &total);
  assert_int_equal(n, 0);
  assert_int_equal(static_cast<int>(import_bundle(c, g_root + "/none", accept, {}, &imported, &skipped, &failed).code()),
                   static_cast<int>(tri::Code::Io));
}

int main(void) {
  char tmpl[] = "/tmp/tri-cache-test-XXXXXX";
  if (!::mkdtemp(tmpl)) return 1;
  g_root = tmpl;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_resolve_dir),
      cmocka_unit_test(test_round_trip_and_stats),
      cmocka_unit_test(test_damaged_entries_are_misses),
      cmocka_unit_test(test_foreign_files_are_left_alone),
      cmocka_unit_test(test_unwritable_directory_turns_the_cache_off),
      cmocka_unit_test(test_full_disk),
      cmocka_unit_test(test_stray_temporaries),
      cmocka_unit_test(test_lru_eviction),
      cmocka_unit_test(test_lock),
      cmocka_unit_test(test_bundles),
  };
  int rc = cmocka_run_group_tests(tests, nullptr, nullptr);
  std::string cmd = "rm -rf '" + g_root + "'";
  if (std::system(cmd.c_str()) != 0) return 1;
  return rc;
}
