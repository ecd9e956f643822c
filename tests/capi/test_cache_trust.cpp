// Hardening, round 3 (issue 29): the cache directory and bundles hold code, so what is in them
// must never hang, crash or mislead a compile; and the team, tuning and message points of the
// same issue. Through the public API of 0.2.0 only, so this file builds against the library at
// 7c8b7fc too and shows each point failing there. Each test names its point.
//   1  a FIFO at an entry, at a shortcut, at a tuning result: a miss, no hang
//   2  an entry rewritten with a recomputed checksum (what anyone can compute) never loads
//   3  a shortcut copied over another request's never loads the other specialization's code
//   4  tri_team_set_wait_timeout(UINT64_MAX) waits (forever), never times out at once
//   5  a sparse giant at an entry or a bundle: refused before it is read, listing survives it
//   6  a failed import leaves nothing and says 0; a key twice is imported once
//   7  parameters over the limit, too many elements per thread on the GPU, cancelled compiles
//   8  no symlink is followed for a write (a dangling lock, a symlinked front/) or a read
//   9  RLIMIT_FSIZE never kills the host (test_cache.cpp's test_file_size_limit...)
//  10  tri_cache_export to a FIFO refuses and leaves it
//  11  one hit or one miss per compile; a symlinked entry is no hit
//  12  (tests/import/test_ttir_reader.cpp: one nesting limit for TTIR and text)
//  13  messages name their function; capi.md's limits table names the real codes
//  14  tri_team_destroy during a launch, tri_team_free of a buffer in use
//  15  a stored tuning result naming an impossible config, or num_warps 0: tuned again
// Processes that might hang or die run as children of this program, under alarm().
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>

#include <sodium.h>
#include <xxhash.h>
#include <zstd.h>

#include "tri/tri.h"

#include "children.h"
#include "test_main.h"

namespace {

// out[i] = x[i] * C: C is in the object code, so one specialization's code gives the other's
// results wrong.
const char kMul[] =
    "kernel @mul(%x: ptr<f32>, %out: ptr<f32>, %n: i32) constexpr(BLOCK: i32 = 16, C: f32 = 2.0) {\n"
    "  %pid = program_id[axis=0] : i32\n"
    "  %bs = const[value=BLOCK] : i32\n"
    "  %start = mul %pid, %bs : i32\n"
    "  %r = arange[start=0, end=BLOCK] : <BLOCK x i32>\n"
    "  %sv = splat %start : <BLOCK x i32>\n"
    "  %offs = add %sv, %r : <BLOCK x i32>\n"
    "  %nv = splat %n : <BLOCK x i32>\n"
    "  %mask = cmp[pred=slt] %offs, %nv : <BLOCK x i1>\n"
    "  %xb = splat %x : <BLOCK x ptr<f32>>\n"
    "  %xp = addptr %xb, %offs : <BLOCK x ptr<f32>>\n"
    "  %v = load %xp, mask=%mask : <BLOCK x f32>\n"
    "  %c = const[value=C] : <BLOCK x f32>\n"
    "  %w = mul %v, %c : <BLOCK x f32>\n"
    "  %ob = splat %out : <BLOCK x ptr<f32>>\n"
    "  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>\n"
    "  store %op, %w, mask=%mask\n"
    "  return\n"
    "}\n";

std::string g_root;

const char* last_error() {
  static char buf[8192];
  tri_last_error_message(buf, sizeof buf);
  return buf;
}

tri_arg ptr_arg(const void* p, uint64_t bytes, int32_t dtype) {
  tri_arg a;
  std::memset(&a, 0, sizeof a);
  a.value.p = p;
  a.extent = bytes;
  a.kind = TRI_TYPE_POINTER;
  a.dtype = dtype;
  return a;
}

tri_arg i32_arg(int64_t v) {
  tri_arg a;
  std::memset(&a, 0, sizeof a);
  a.value.i = v;
  a.kind = TRI_TYPE_SCALAR;
  a.dtype = TRI_DTYPE_I32;
  return a;
}

void child_log(void*, int32_t level, const char* message) { std::printf("log %d %s\n", level, message); }

tri_context* context_for(const std::string& dir, tri_log_fn log = nullptr, bool unbounded = false) {
  tri_context_options* o = nullptr;
  tri_context* c = nullptr;
  tri_context_options_create(&o);
  if (unbounded) tri_context_options_set_cache_max_bytes(o, 0);  // no eviction
  if (log) tri_context_options_set_log(o, log, nullptr, TRI_LOG_DEBUG);
  tri_context_options_set_cache_dir(o, dir.c_str());
  if (tri_context_create(o, TRI_VERSION_NUMBER, &c) != TRI_OK) std::abort();
  tri_context_options_destroy(o);
  return c;
}

void print_stats(tri_context* c) {
  static const int32_t stats[] = {TRI_CACHE_STAT_HITS, TRI_CACHE_STAT_MISSES, TRI_CACHE_STAT_STORES,
                                  TRI_CACHE_STAT_CORRUPT, TRI_CACHE_STAT_WRITE_FAILURES};
  static const char* const names[] = {"hits", "misses", "stores", "corrupt", "write_failures"};
  for (int i = 0; i < 5; ++i) {
    uint64_t v = 0;
    tri_cache_stat(c, stats[i], &v);
    std::printf("%s %" PRIu64 "\n", names[i], v);
  }
}

// ---- the children (each under alarm: a hang ends as SIGALRM, status 128 + 14)

// mul C DIR: compiles @mul with C and runs it on 1000 floats.
int child_mul(double cval, const std::string& dir) {
  tri_context* c = context_for(dir, child_log);
  tri_module* m = nullptr;
  if (tri_module_create(c, kMul, sizeof kMul - 1, "mul.tri", &m) != TRI_OK) return 11;
  tri_compile_options* co = nullptr;
  tri_compile_options_create(&co);
  tri_compile_options_set_target(co, "cpu");
  tri_compile_options_set_constexpr_float(co, "C", cval);
  tri_kernel* k = nullptr;
  if (tri_kernel_compile(m, "mul", co, &k) != TRI_OK) {
    std::printf("compile failed: %s\n", last_error());
    return 12;
  }
  enum { N = 1000 };
  static float x[N], out[N];
  for (int i = 0; i < N; ++i) x[i] = static_cast<float>(i) * 0.5f;
  tri_arg a[3] = {ptr_arg(x, sizeof x, TRI_DTYPE_F32), ptr_arg(out, sizeof out, TRI_DTYPE_F32), i32_arg(N)};
  if (tri_launch(k, (N + 15) / 16, 1, 1, nullptr, a, 3) != TRI_OK) return 13;
  int wrong = 0;
  for (int i = 0; i < N; ++i) wrong += out[i] != x[i] * static_cast<float>(cval);
  print_stats(c);
  std::printf("result %s (%d wrong)\n", wrong ? "WRONG" : "right", wrong);
  tri_kernel_destroy(k);
  tri_compile_options_destroy(co);
  tri_module_destroy(m);
  tri_context_destroy(c);
  return wrong ? 14 : 0;
}

// giant DIR BUNDLE: compiles @mul without launching (no worker threads), lists the cache and
// imports BUNDLE, under an address-space limit of what the process uses plus 2 GiB, so reading
// a 4 GiB file whole fails.
int child_giant(const std::string& dir, const std::string& bundle) {
#ifndef __SANITIZE_ADDRESS__
  uint64_t vm_kb = 0;
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "VmSize: %" SCNu64, &vm_kb) == 1) break;
    std::fclose(f);
  }
  struct rlimit rl;
  rl.rlim_cur = rl.rlim_max = (vm_kb << 10) + (uint64_t(2) << 30);
  ::setrlimit(RLIMIT_AS, &rl);
#endif
  tri_context* c = context_for(dir, child_log, true);
  tri_module* m = nullptr;
  if (tri_module_create(c, kMul, sizeof kMul - 1, "mul.tri", &m) != TRI_OK) return 11;
  tri_compile_options* co = nullptr;
  tri_compile_options_create(&co);
  tri_compile_options_set_target(co, "cpu");
  tri_kernel* k = nullptr;
  auto t0 = std::chrono::steady_clock::now();
  if (tri_kernel_compile(m, "mul", co, &k) != TRI_OK) {
    std::printf("compile failed: %s\n", last_error());
    return 12;
  }
  std::printf("compile_ms %.0f\n", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  for (int verify = 0; verify < 2; ++verify) {
    tri_blob* text = nullptr;
    if (tri_cache_list(c, verify, &text) != TRI_OK) {
      std::printf("list failed: %s\n", last_error());
      return 13;
    }
    std::printf("list%d %.*s\n", verify, static_cast<int>(tri_blob_size(text)), static_cast<const char*>(tri_blob_data(text)));
    tri_blob_destroy(text);
  }
  uint32_t n = 7;
  t0 = std::chrono::steady_clock::now();
  tri_result r = tri_cache_import(c, bundle.c_str(), &n);
  std::printf("import %s in %.0f ms: %s\n", tri_result_name(r),
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), last_error());
  print_stats(c);
  tri_kernel_destroy(k);
  tri_compile_options_destroy(co);
  tri_module_destroy(m);
  tri_context_destroy(c);
  return 0;
}

// tune DIR: tri_tune over BLOCK 16 and 32 on the cpu target; prints where the result came from.
int child_tune(const std::string& dir) {
  tri_context* c = context_for(dir, child_log);
  tri_module* m = nullptr;
  if (tri_module_create(c, kMul, sizeof kMul - 1, "mul.tri", &m) != TRI_OK) return 11;
  tri_compile_options* co = nullptr;
  tri_compile_options_create(&co);
  tri_compile_options_set_target(co, "cpu");
  tri_tune_space* sp = nullptr;
  tri_tune_space_create(&sp);
  const char* names[] = {"BLOCK"};
  int64_t b16[] = {16}, b32[] = {32};
  tri_tune_space_add_config(sp, names, b16, 1, 4, 0, nullptr);
  tri_tune_space_add_config(sp, names, b32, 1, 4, 0, nullptr);
  tri_tune_space_set_repetitions(sp, 2);
  enum { N = 4096 };
  static float x[N], out[N];
  tri_arg a[3] = {ptr_arg(x, sizeof x, TRI_DTYPE_F32), ptr_arg(out, sizeof out, TRI_DTYPE_F32), i32_arg(N)};
  tri_kernel* k = nullptr;
  tri_blob* res = nullptr;
  tri_result r = tri_tune(m, "mul", co, sp, N / 16, 1, 1, nullptr, a, 3, 0, nullptr,
                          [](void*, uint32_t config, uint32_t* grid) { grid[0] = N / (config == 0 ? 16 : 32); }, nullptr,
                          &k, &res);
  if (r != TRI_OK) {
    std::printf("tune failed: %s\n", last_error());
    return 12;
  }
  std::string json(static_cast<const char*>(tri_blob_data(res)), tri_blob_size(res));
  size_t at = json.find("\"source\": \"");
  std::printf("source %s\n", at == std::string::npos ? "?" : json.substr(at + 11, json.find('"', at + 11) - at - 11).c_str());
  uint64_t trials = 0;
  tri_tune_stat(c, TRI_TUNE_STAT_TRIALS, &trials);
  std::printf("trials %" PRIu64 "\n", trials);
  tri_blob_destroy(res);
  tri_kernel_destroy(k);
  tri_tune_space_destroy(sp);
  tri_compile_options_destroy(co);
  tri_module_destroy(m);
  tri_context_destroy(c);
  return 0;
}

// ---- running children
using tri_test::Report;

Report child(const std::vector<std::string>& args) {
  std::vector<std::string> a = {"--child"};
  a.insert(a.end(), args.begin(), args.end());
  Report r = tri_test::wait_report(tri_test::spawn(a));
  if (r.status == 128 + SIGALRM) std::printf("the child hung (killed by its alarm); its output:\n%s\n", r.text.c_str());
  return r;
}

Report mul(double c, const std::string& dir) {
  char cs[32];
  std::snprintf(cs, sizeof cs, "%g", c);
  Report r = child({"mul", cs, dir});
  if (!r.right()) std::printf("child (mul %s) status %d:\n%s\n", cs, r.status, r.text.c_str());
  return r;
}

// ---- files
std::string fresh(const std::string& name) { return tri_test::fresh_dir(g_root, name); }
using tri_test::names_in;

std::string only(const std::string& dir, const std::string& suffix) {
  auto v = names_in(dir, suffix);
  if (v.size() != 1) fail_msg("%s: %zu files ending in '%s', expected 1", dir.c_str(), v.size(), suffix.c_str());
  return dir + "/" + v[0];
}

void write_raw(const std::string& path, const std::string& bytes) {
  ::unlink(path.c_str());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(fd >= 0);
  assert_int_equal(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

uint32_t u32_at(const std::string& b, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(static_cast<unsigned char>(b[at + i])) << (8 * i);
  return v;
}

// What anyone who knows the published format (docs/cache.md) can compute over an entry or a
// bundle, without the cache's secret: format 1's xxh3-128 checksum, or format 2's unkeyed
// BLAKE2b-256 digest. Recomputed over everything before it.
void recompute_public_checksum(std::string* b) {
  const uint32_t version = u32_at(*b, 8);
  if (version == 1) {
    XXH128_hash_t h = XXH3_128bits(b->data(), b->size() - 16);
    for (int i = 0; i < 8; ++i) (*b)[b->size() - 16 + i] = static_cast<char>(h.high64 >> (8 * i));
    for (int i = 0; i < 8; ++i) (*b)[b->size() - 8 + i] = static_cast<char>(h.low64 >> (8 * i));
  } else {
    unsigned char d[32];
    crypto_generichash(d, 32, reinterpret_cast<const unsigned char*>(b->data()), b->size() - 32, nullptr, 0);
    std::memcpy(&(*b)[b->size() - 32], d, 32);
  }
}

// The same with the cache's own secret (format 2): what Tri itself writes. Format 1 had none.
void reseal_with_secret(const std::string& dir, std::string* b) {
  if (u32_at(*b, 8) == 1) return recompute_public_checksum(b);
  std::string key = tri_test::read_file(dir + "/cache.key");
  assert_int_equal(key.size(), 32);
  unsigned char d[32];
  crypto_generichash(d, 32, reinterpret_cast<const unsigned char*>(b->data()), b->size() - 32,
                     reinterpret_cast<const unsigned char*>(key.data()), 32);
  std::memcpy(&(*b)[b->size() - 32], d, 32);
}

size_t trailer_bytes(const std::string& b) { return u32_at(b, 8) == 1 ? 16 : 32; }

// In a forked child: the crash signals back to their default actions (cmocka catches them in
// the parent), so the parent sees a crash as the signal it is.
void default_signals() {
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE}) ::signal(sig, SIG_DFL);
  ::alarm(60);
}

// Point 1 in a child: replaces `path` with a FIFO.
void make_fifo(const std::string& path) {
  ::unlink(path.c_str());
  assert_int_equal(::mkfifo(path.c_str(), 0600), 0);
}

}  // namespace

// ---- 1
static void test_fifos_are_misses(void** state) {
  (void)state;
  std::string dir = fresh("fifo");
  assert_true(mul(2, dir).right());
  make_fifo(only(dir, ".entry"));
  Report r = mul(2, dir);
  assert_true(r.right());  // not hung: a miss, recompiled
  assert_true(r.has("not a regular file"));
  assert_true(mul(2, dir).right());
  make_fifo(only(dir + "/front", ""));
  r = mul(2, dir);
  assert_true(r.right());
  assert_int_equal(r.get("hits"), 1);  // the shortcut is skipped; the entry is found by its key
  Report t = child({"tune", dir});
  assert_int_equal(t.status, 0);
  assert_true(t.has("source benchmark"));
  make_fifo(only(dir + "/tune", ".json"));
  t = child({"tune", dir});
  if (t.status != 0) std::printf("%s\n", t.text.c_str());
  assert_int_equal(t.status, 0);
  assert_true(t.has("source benchmark"));  // tuned again, not hung
}

// ---- 2
static void test_forged_entries_never_load(void** state) {
  (void)state;
  std::string dir = fresh("forge");
  assert_true(mul(2, dir).right());
  const std::string a = only(dir, ".entry");
  assert_true(mul(3, dir).right());
  std::string b;
  for (const std::string& n : names_in(dir, ".entry"))
    if (dir + "/" + n != a) b = dir + "/" + n;
  // C = 3's code under C = 2's key, its checksum recomputed as anyone can.
  std::string good_a = tri_test::read_file(a), forged = tri_test::read_file(b);
  std::memcpy(&forged[12], good_a.data() + 12, 16);
  recompute_public_checksum(&forged);
  write_raw(a, forged);
  Report r = mul(2, dir);
  assert_true(r.right());
  assert_int_equal(r.get("corrupt"), 1);
  assert_int_equal(r.get("hits"), 0);
  // The same bytes sealed with the cache's secret would load: only Tri's writes are trusted.
}

// ---- 3
static void test_copied_shortcut_never_loads_another_specialization(void** state) {
  (void)state;
  std::string dir = fresh("shortcut");
  assert_true(mul(2, dir).right());
  const std::string f2 = only(dir + "/front", "");
  assert_true(mul(3, dir).right());
  std::string f3;
  for (const std::string& n : names_in(dir + "/front", ""))
    if (dir + "/front/" + n != f2) f3 = dir + "/front/" + n;
  write_raw(f2, tri_test::read_file(f3));
  Report r = mul(2, dir);
  assert_true(r.right());
  assert_true(r.has("shortcut"));
  assert_true(mul(3, dir).right());
}

// ---- 4, 14: teams
static const char kWaiter[] =
    "kernel @waiter(%sig: ptr<i32>) {\n"
    "  %me = rank : i32\n"
    "  %c0 = const[value=0] : i32\n"
    "  %c1 = const[value=1] : i32\n"
    "  %first = cmp[pred=eq] %me, %c0 : i1\n"
    "  if %first {\n"
    "    %t = wait %sig, %c1 : i32\n"
    "    yield\n"
    "  } {\n"
    "    yield\n"
    "  }\n"
    "  return\n"
    "}\n";

struct TeamRun {
  tri_context* c = nullptr;
  tri_kernel* k = nullptr;
  tri_team* t = nullptr;
  uint64_t off = 0;
  int32_t* sig0 = nullptr;
  tri_arg args[2];
  void make(uint64_t heap_bytes) {
    c = context_for("");
    tri_module* m = nullptr;
    if (tri_module_create(c, kWaiter, sizeof kWaiter - 1, "waiter.tri", &m) != TRI_OK) fail_msg("%s", last_error());
    tri_compile_options* o = nullptr;
    tri_compile_options_create(&o);
    tri_compile_options_set_target(o, "cpu");
    if (tri_kernel_compile(m, "waiter", o, &k) != TRI_OK) fail_msg("%s", last_error());
    tri_compile_options_destroy(o);
    tri_module_destroy(m);
    assert_int_equal(tri_team_create(c, 2, heap_bytes, &t), TRI_OK);
    assert_int_equal(tri_team_alloc(t, 64, &off), TRI_OK);
    for (uint32_t r = 0; r < 2; ++r) {
      void* p = nullptr;
      assert_int_equal(tri_team_ptr(t, r, off, &p), TRI_OK);
      if (r == 0) sig0 = static_cast<int32_t*>(p);
      args[r] = ptr_arg(p, 64, TRI_DTYPE_I32);
    }
  }
};

static void test_wait_forever_saturates(void** state) {
  (void)state;
  TeamRun run;
  run.make(4096);
  assert_int_equal(tri_team_set_wait_timeout(run.t, UINT64_MAX), TRI_OK);
  std::atomic<tri_result> got{-1};
  std::string msg;
  std::thread launcher([&] {
    got = tri_team_launch(run.k, run.t, 1, 1, 1, run.args, 1);
    msg = last_error();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  __atomic_store_n(run.sig0, 1, __ATOMIC_RELEASE);  // the signal comes late; the wait must still be waiting
  launcher.join();
  if (got != TRI_OK) fail_msg("the launch failed: %s", msg.c_str());
  tri_team_destroy(run.t);
  tri_kernel_destroy(run.k);
  tri_context_destroy(run.c);
}

static void test_team_destroy_and_free_during_a_launch(void** state) {
  (void)state;
  // In a child: before the fix, the destroy freed (unmapped) the heaps under the running wait.
  pid_t pid = ::fork();
  if (pid == 0) {
    default_signals();
    TeamRun run;
    run.make(uint64_t(8) << 20);  // large enough that the allocator maps it and unmaps it on free
    tri_team_set_wait_timeout(run.t, 1500);  // the launch ends by timing out
    std::atomic<tri_result> got{-1};
    std::thread launcher([&] { got = tri_team_launch(run.k, run.t, 1, 1, 1, run.args, 1); });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    tri_result freed = tri_team_free(run.t, run.off);
    std::string free_msg = last_error();
    tri_team_destroy(run.t);  // forbidden during a launch; must not crash it
    launcher.join();
    if (freed != TRI_ERROR_INVALID_ARGUMENT) {
      std::printf("tri_team_free during the launch: %s (%s)\n", tri_result_name(freed), free_msg.c_str());
      ::_exit(3);
    }
    if (free_msg.find("tri_team_free") != 0 || free_msg.find("running") == std::string::npos) ::_exit(4);
    if (got != TRI_ERROR_RUNTIME) ::_exit(5);  // the wait timed out
    tri_kernel_destroy(run.k);
    tri_context_destroy(run.c);
    ::_exit(0);
  }
  int st = 0;
  assert_int_equal(::waitpid(pid, &st, 0), pid);
  if (WIFSIGNALED(st)) fail_msg("the host died of signal %d", WTERMSIG(st));
  assert_int_equal(WEXITSTATUS(st), 0);
}

// ---- 5
static void make_sparse(const std::string& path, off_t bytes) {
  ::unlink(path.c_str());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0600);
  assert_true(fd >= 0);
  assert_int_equal(::ftruncate(fd, bytes), 0);
  ::close(fd);
}

static void test_giant_files_are_refused_unread(void** state) {
  (void)state;
  std::string dir = fresh("giant");
  assert_true(mul(2, dir).right());
  make_sparse(only(dir, ".entry"), off_t(4) << 30);  // 4 GiB at the entry the compile reads
  for (const std::string& n : names_in(dir + "/front", "")) ::unlink((dir + "/front/" + n).c_str());
  const std::string other = dir + "/00000000000000000000000000000003.entry";  // one more to list
  make_sparse(other, off_t(4) << 30);
  const std::string bundle = g_root + "/giant.tribundle";
  make_sparse(bundle, off_t(4) << 30);
  Report r = child({"giant", dir, bundle});
  if (r.status != 0) std::printf("status %d:\n%s\n", r.status, r.text.c_str());
  assert_int_equal(r.status, 0);
  assert_true(r.get("compile_ms") < 20000);
  assert_int_equal(r.get("stores"), 1);  // the giant was removed and the entry rewritten
  assert_true(r.has("list0 00000000000000000000000000000003\t4294967296\t"));
  assert_true(r.has("list1 00000000000000000000000000000003\t4294967296\t"));  // listed, then removed
  assert_true(r.has("import TRI_ERROR_CORRUPT_BINARY"));
  assert_false(exists(other));
  ::unlink(bundle.c_str());
}

// A listing survives any single bad file: a FIFO, a symlink, a giant, each listed as bad.
static void test_listing_survives_bad_files(void** state) {
  (void)state;
  std::string dir = fresh("listing");
  assert_true(mul(2, dir).right());
  const std::string good = only(dir, ".entry");
  const std::string fifo = dir + "/00000000000000000000000000000001.entry";
  const std::string link = dir + "/00000000000000000000000000000002.entry";
  assert_int_equal(::mkfifo(fifo.c_str(), 0600), 0);
  assert_int_equal(::symlink(good.c_str(), link.c_str()), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    default_signals();
    tri_context* c = context_for(dir);
    tri_blob* text = nullptr;
    if (tri_cache_list(c, 0, &text) != TRI_OK) ::_exit(3);
    std::string t(static_cast<const char*>(tri_blob_data(text)), tri_blob_size(text));
    tri_blob_destroy(text);
    if (t.find("00000000000000000000000000000001\t0\t") == std::string::npos || t.find("\tok\t") == std::string::npos)
      ::_exit(4);
    if (tri_cache_list(c, 1, &text) != TRI_OK) ::_exit(5);
    tri_blob_destroy(text);
    tri_context_destroy(c);
    ::_exit(0);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  assert_false(exists(fifo));  // verify removed the FIFO and the link
  assert_false(exists(link));
  assert_true(exists(good));
}

// ---- 6
static std::string exported_bundle(const std::string& name, int kernels) {
  std::string dir = fresh(name + "_src");
  for (int i = 0; i < kernels; ++i) assert_true(mul(2 + i, dir).right());
  tri_context* c = context_for(dir);
  std::string bundle = g_root + "/" + name + ".tribundle";
  uint32_t n = 0;
  assert_int_equal(tri_cache_export(c, bundle.c_str(), &n), TRI_OK);
  assert_int_equal(n, kernels);
  tri_context_destroy(c);
  return tri_test::read_file(bundle);
}

// Where the entries start: magic, version, manifest length, manifest, count.
size_t entries_at(const std::string& b) { return 8 + 4 + 4 + u32_at(b, 12) + 4; }

static void expect_import_fails_whole(const std::string& name, const std::string& bytes) {
  std::string bundle = g_root + "/" + name + ".tribundle";
  write_raw(bundle, bytes);
  std::string dir = fresh(name);
  tri_context* c = context_for(dir);
  uint32_t n = 12345;
  tri_result rc = tri_cache_import(c, bundle.c_str(), &n);
  if (rc == TRI_OK) fail_msg("%s: the import succeeded", name.c_str());
  uint64_t entries = 99;
  tri_cache_stat(c, TRI_CACHE_STAT_ENTRIES, &entries);
  if (entries != 0) fail_msg("%s: a failed import left %" PRIu64 " entries", name.c_str(), entries);
  if (n != 0) fail_msg("%s: *out_imported is %u after a failed import", name.c_str(), n);
  tri_context_destroy(c);
}

static void test_failed_imports_import_nothing(void** state) {
  (void)state;
  const std::string good = exported_bundle("allornone", 2);
  const size_t tail = trailer_bytes(good);
  // Trailing bytes after the last entry, the digest recomputed.
  std::string d = good;
  d.insert(d.size() - tail, "junk!");
  recompute_public_checksum(&d);
  expect_import_fails_whole("trailing", d);
  // A count larger than the entries.
  d = good;
  size_t count_at = entries_at(good) - 4;
  d[count_at] = static_cast<char>(d[count_at] + 1);
  recompute_public_checksum(&d);
  expect_import_fails_whole("count", d);
  // A bad entry after a good one: a byte of the last entry's payload flipped.
  d = good;
  d[d.size() - tail - 40] ^= 0x10;
  recompute_public_checksum(&d);
  expect_import_fails_whole("badlast", d);
}

static void test_a_key_twice_counts_once(void** state) {
  (void)state;
  const std::string good = exported_bundle("dup", 1);
  const size_t at = entries_at(good), tail = trailer_bytes(good);
  const std::string entry = good.substr(at, good.size() - tail - at);  // u64 length and bytes
  std::string d = good.substr(0, at - 4);
  for (int i = 0; i < 4; ++i) d.push_back(static_cast<char>(50 >> (8 * i)));
  for (int i = 0; i < 50; ++i) d += entry;
  d += std::string(tail, '\0');
  recompute_public_checksum(&d);
  std::string bundle = g_root + "/dup50.tribundle";
  write_raw(bundle, d);
  tri_context* c = context_for(fresh("dup50"));
  uint32_t n = 0;
  if (tri_cache_import(c, bundle.c_str(), &n) != TRI_OK) fail_msg("%s", last_error());
  assert_int_equal(n, 1);
  tri_context_destroy(c);
}

// ---- 7
static void test_parameter_limit(void** state) {
  (void)state;
  tri_context* c = context_for("");
  auto module_with = [&](int params) {
    std::string t = "kernel @many(";
    for (int i = 0; i < params; ++i) t += (i ? ", %p" : "%p") + std::to_string(i) + ": i32";
    t += ") {\n  return\n}\n";
    tri_module* m = nullptr;
    tri_result r = tri_module_create(c, t.data(), t.size(), "many.tri", &m);
    tri_module_destroy(m);
    return r;
  };
  assert_int_equal(module_with(256), TRI_OK);
  auto t0 = std::chrono::steady_clock::now();
  assert_int_equal(module_with(20000), TRI_ERROR_LIMIT_EXCEEDED);
  assert_true(std::strstr(last_error(), "kMaxParams") != nullptr);
  assert_true(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  tri_context_destroy(c);
}

static void test_gpu_work_per_thread_limit(void** state) {
  (void)state;
  // No GPU needed: PTX for a named architecture. 131072 elements over one warp: 4096 a thread.
  pid_t pid = ::fork();
  if (pid == 0) {
    default_signals();
    ::alarm(120);
    const char text[] =
        "kernel @big(%out: ptr<f32>) constexpr(B: i32 = 131072) {\n"
        "  %r = arange[start=0, end=B] : <B x i32>\n"
        "  %f = sitofp %r : <B x f32>\n"
        "  %ob = splat %out : <B x ptr<f32>>\n"
        "  %op = addptr %ob, %r : <B x ptr<f32>>\n"
        "  store %op, %f\n"
        "  return\n"
        "}\n";
    tri_context* c = context_for("");
    tri_module* m = nullptr;
    if (tri_module_create(c, text, sizeof text - 1, "big.tri", &m) != TRI_OK) {
      std::printf("%s\n", last_error());
      ::_exit(3);
    }
    tri_compile_options* o = nullptr;
    tri_compile_options_create(&o);
    tri_compile_options_set_target(o, "cuda");
    tri_compile_options_set_arch(o, "sm_90");
    tri_compile_options_set_num_warps(o, 1);
    tri_kernel* k = nullptr;
    tri_result r = tri_kernel_compile(m, "big", o, &k);
    std::printf("%s: %s\n", tri_result_name(r), last_error());
    ::_exit(r == TRI_ERROR_LIMIT_EXCEEDED && std::strstr(last_error(), "kMaxElementsPerThread") ? 0 : 4);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
}

// tri_context_cancel from the log sink while the compile runs (its "passes" line comes between
// the IR passes and the backend): the compile stops with TRI_ERROR_CANCELLED; the next compile,
// begun after the cancel, runs.
static std::atomic<int> g_cancels{0};
static tri_context* g_cancel_ctx = nullptr;
static void cancel_on_passes(void*, int32_t, const char* message) {
  if (std::strstr(message, ": passes ") && g_cancels.fetch_add(1) == 0) tri_context_cancel(g_cancel_ctx);
}

static void test_cancel_a_compile(void** state) {
  (void)state;
  for (const char* target : {"cpu", "cuda"}) {
    g_cancels = 0;
    tri_context_options* o = nullptr;
    tri_context_options_create(&o);
    tri_context_options_set_cache_dir(o, "");
    tri_context* c = nullptr;
    tri_context_options_set_log(o, cancel_on_passes, nullptr, TRI_LOG_DEBUG);
    assert_int_equal(tri_context_create(o, TRI_VERSION_NUMBER, &c), TRI_OK);
    tri_context_options_destroy(o);
    g_cancel_ctx = c;
    tri_module* m = nullptr;
    assert_int_equal(tri_module_create(c, kMul, sizeof kMul - 1, "mul.tri", &m), TRI_OK);
    tri_compile_options* co = nullptr;
    tri_compile_options_create(&co);
    tri_compile_options_set_target(co, target);
    if (std::strcmp(target, "cuda") == 0) tri_compile_options_set_arch(co, "sm_90");
    tri_kernel* k = nullptr;
    tri_result r = tri_kernel_compile(m, "mul", co, &k);
    if (r != TRI_ERROR_CANCELLED) fail_msg("%s: %s (%s), expected TRI_ERROR_CANCELLED", target, tri_result_name(r), last_error());
    assert_true(std::strstr(last_error(), "cancelled") != nullptr);
    assert_int_equal(tri_kernel_compile(m, "mul", co, &k), TRI_OK);
    tri_kernel_destroy(k);
    tri_compile_options_destroy(co);
    tri_module_destroy(m);
    tri_context_destroy(c);
  }
}

// ---- 8, 11
static void test_symlinks_are_never_followed(void** state) {
  (void)state;
  std::string dir = fresh("links"), outside = fresh("links_outside");
  assert_int_equal(::mkdir(outside.c_str(), 0700), 0);
  assert_true(mul(2, dir).right());
  const std::string entry = only(dir, ".entry");
  const std::string hex = entry.substr(dir.size() + 1, 32);
  // A dangling <key>.lock pointing outside: the compile must not create the target.
  ::unlink(entry.c_str());
  ::system(("rm -rf '" + dir + "/front'").c_str());
  assert_int_equal(::symlink((outside + "/made-by-the-lock").c_str(), (dir + "/" + hex + ".lock").c_str()), 0);
  // front/ a symlink to the outside directory: no shortcut may land there.
  assert_int_equal(::symlink(outside.c_str(), (dir + "/front").c_str()), 0);
  Report r = mul(2, dir);
  assert_true(r.right());
  assert_false(exists(outside + "/made-by-the-lock"));
  assert_true(names_in(outside, "").empty());
  // An entry that is a symlink to a good entry elsewhere: a miss (and removed), not a hit.
  std::string copy = outside + "/copy.entry";
  write_raw(copy, tri_test::read_file(entry));
  ::unlink(entry.c_str());
  assert_int_equal(::symlink(copy.c_str(), entry.c_str()), 0);
  r = mul(2, dir);
  assert_true(r.right());
  assert_int_equal(r.get("hits"), 0);
  assert_int_equal(r.get("misses"), 1);
  assert_int_equal(r.get("corrupt"), 1);
  assert_true(exists(copy));
}

// An entry that decodes (sealed with the cache's own secret) but whose object does not load:
// one compile is one miss (and one store), not three hits.
static void test_one_outcome_per_compile(void** state) {
  (void)state;
  std::string dir = fresh("outcome");
  assert_true(mul(2, dir).right());
  const std::string entry = only(dir, ".entry");
  std::string b = tri_test::read_file(entry);
  // The layout of docs/cache.md: the payload (zstd) is replaced by bytes that are no object
  // file, and the entry sealed as Tri would seal it.
  size_t at = 8 + 4 + 16;
  at += 2 + (static_cast<unsigned char>(b[at]) | static_cast<unsigned char>(b[at + 1]) << 8);
  at += 4 + u32_at(b, at);
  const std::string junk(3000, 'j');
  std::string z(ZSTD_compressBound(junk.size()), '\0');
  z.resize(ZSTD_compress(&z[0], z.size(), junk.data(), junk.size(), 3));
  std::string rebuilt = b.substr(0, at);
  for (uint64_t v : {uint64_t(junk.size()), uint64_t(z.size())})
    for (int i = 0; i < 8; ++i) rebuilt.push_back(static_cast<char>(v >> (8 * i)));
  rebuilt += z + std::string(trailer_bytes(b), '\0');
  reseal_with_secret(dir, &rebuilt);
  write_raw(entry, rebuilt);
  Report r = mul(2, dir);
  assert_true(r.right());
  assert_int_equal(r.get("hits"), 0);
  assert_int_equal(r.get("misses"), 1);
  assert_int_equal(r.get("stores"), 1);
}

// ---- 10
static void test_export_refuses_what_is_not_a_regular_file(void** state) {
  (void)state;
  std::string dir = fresh("export");
  assert_true(mul(2, dir).right());
  std::string fifo = g_root + "/export.fifo";
  ::unlink(fifo.c_str());
  assert_int_equal(::mkfifo(fifo.c_str(), 0600), 0);
  tri_context* c = context_for(dir);
  uint32_t n = 0;
  assert_int_equal(tri_cache_export(c, fifo.c_str(), &n), TRI_ERROR_INVALID_ARGUMENT);
  assert_true(std::strstr(last_error(), "not a regular file") != nullptr);
  struct stat st;
  assert_int_equal(::lstat(fifo.c_str(), &st), 0);
  assert_true(S_ISFIFO(st.st_mode));
  assert_int_equal(tri_tune_export(c, fifo.c_str(), &n), TRI_ERROR_INVALID_ARGUMENT);
  assert_int_equal(::lstat(fifo.c_str(), &st), 0);
  assert_true(S_ISFIFO(st.st_mode));
  tri_context_destroy(c);
}

// ---- 13
static void test_messages_name_their_function(void** state) {
  (void)state;
  tri_context* c = context_for("");
  tri_module* m = nullptr;
  assert_int_equal(tri_module_create(c, kMul, sizeof kMul - 1, "mul.tri", &m), TRI_OK);
  uint32_t u = 0;
  int32_t i = 0;
  const char* s = nullptr;
  tri_blob* b = nullptr;
  struct Case {
    const char* name;
    std::function<tri_result()> call;
  };
  const Case cases[] = {
      {"tri_module_create", [&] { return tri_module_create(nullptr, kMul, 4, "x", &m); }},
      {"tri_module_to_text", [&] { return tri_module_to_text(nullptr, &b); }},
      {"tri_module_to_binary", [&] { return tri_module_to_binary(m, nullptr); }},
      {"tri_module_function_count", [&] { return tri_module_function_count(nullptr, &u); }},
      {"tri_module_find_function", [&] { return tri_module_find_function(m, nullptr, &u); }},
      {"tri_module_function_name", [&] { return tri_module_function_name(m, 0, nullptr); }},
      {"tri_module_function_kind", [&] { return tri_module_function_kind(nullptr, 0, &i); }},
      {"tri_module_param_count", [&] { return tri_module_param_count(nullptr, 0, &u); }},
      {"tri_module_param_name", [&] { return tri_module_param_name(nullptr, 0, 0, &s); }},
      {"tri_module_param_kind", [&] { return tri_module_param_kind(nullptr, 0, 0, &i); }},
      {"tri_module_param_default", [&] { return tri_module_param_default(nullptr, 0, 0, &s); }},
      {"tri_context_options_create", [&] { return tri_context_options_create(nullptr); }},
      {"tri_context_options_set_log", [&] { return tri_context_options_set_log(nullptr, nullptr, nullptr, 0); }},
      {"tri_context_options_set_cache_dir", [&] { return tri_context_options_set_cache_dir(nullptr, "x"); }},
      {"tri_context_create", [&] { return tri_context_create(nullptr, TRI_VERSION_NUMBER, nullptr); }},
      {"tri_compile_options_create", [&] { return tri_compile_options_create(nullptr); }},
      {"tri_tune_space_create", [&] { return tri_tune_space_create(nullptr); }},
  };
  for (const Case& k : cases) {
    assert_int_equal(k.call(), TRI_ERROR_INVALID_ARGUMENT);
    if (std::strncmp(last_error(), k.name, std::strlen(k.name)) != 0 || last_error()[std::strlen(k.name)] != ':')
      fail_msg("%s: the message is '%s'", k.name, last_error());
  }
  tri_compile_options* o = nullptr;
  tri_compile_options_create(&o);
  assert_int_equal(tri_compile_options_set_launch_specialization(o, 1, static_cast<uint32_t>(-1)),
                   TRI_ERROR_INVALID_ARGUMENT);
  if (std::strstr(last_error(), "4294967295") && !std::strstr(last_error(), "-1"))
    fail_msg("the message shows -1 as 4294967295 only: %s", last_error());
  tri_compile_options_destroy(o);
  tri_module_destroy(m);
  tri_context_destroy(c);
}

// capi.md's limits table: the row of each limit names the code the library returns for it.
static void test_limits_table_names_the_real_codes(void** state) {
  (void)state;
  const std::string doc = tri_test::read_file(tri_test::source_path("docs/capi.md"));
  const size_t table = doc.find("## Limits");
  assert_true(table != std::string::npos);
  auto row = [&](const std::string& starts) {
    size_t at = doc.find("\n| " + starts, table);
    if (at == std::string::npos) fail_msg("capi.md's limits table has no row starting '%s'", starts.c_str());
    return doc.substr(at + 1, doc.find('\n', at + 1) - at - 1);
  };
  tri_context* c = context_for("");
  auto code_of = [&](const std::string& text) {
    tri_module* m = nullptr;
    tri_result r = tri_module_create(c, text.data(), text.size(), "t.tri", &m);
    tri_module_destroy(m);
    return std::string(tri_result_name(r));
  };
  const std::string rank5 = code_of("kernel @k(%x: <2 x 2 x 2 x 2 x 2 x f32>) {\n  return\n}\n");
  const std::string dim21 = code_of("kernel @k(%x: <2097152 x f32>) {\n  return\n}\n");
  const std::string params = code_of([] {
    std::string t = "kernel @many(";
    for (int i = 0; i < 300; ++i) t += (i ? ", %p" : "%p") + std::to_string(i) + ": i32";
    return t + ") {\n  return\n}\n";
  }());
  std::string r = row("block rank");
  if (r.find(rank5) == std::string::npos) fail_msg("a rank-5 block is %s; the row says: %s", rank5.c_str(), r.c_str());
  r = row("block dimension");
  if (r.find(dim21) == std::string::npos) fail_msg("a 2^21 dimension is %s; the row says: %s", dim21.c_str(), r.c_str());
  r = row("parameters");
  if (r.find(params) == std::string::npos || r.find("256") == std::string::npos)
    fail_msg("300 parameters are %s; the row says: %s", params.c_str(), r.c_str());
  row("elements per thread");
  row("cache entry");
  row("bundle");
  tri_context_destroy(c);
}

// ---- 15
static void edit_stored_result(const std::string& dir, const std::string& from, const std::string& to) {
  const std::string path = only(dir + "/tune", ".json");
  std::string json = tri_test::read_file(path);
  size_t at = json.find(from);
  if (at == std::string::npos) fail_msg("no '%s' in the stored result:\n%s", from.c_str(), json.c_str());
  json.replace(at, from.size(), to);
  write_raw(path, json);
}

static void test_impossible_stored_configs_are_tuned_again(void** state) {
  (void)state;
  std::string dir = fresh("tune");
  Report t = child({"tune", dir});
  assert_int_equal(t.status, 0);
  assert_true(t.has("source benchmark"));
  t = child({"tune", dir});
  assert_true(t.has("source stored"));
  assert_int_equal(t.get("trials"), 0);
  // A config that cannot compile (BLOCK=3 is not a power of two).
  edit_stored_result(dir, "\"BLOCK\": 16", "\"BLOCK\": 3");
  t = child({"tune", dir});
  if (t.status != 0) std::printf("%s\n", t.text.c_str());
  assert_int_equal(t.status, 0);
  assert_true(t.has("source benchmark"));
  // num_warps 0, which no space may hold.
  edit_stored_result(dir, "\"num_warps\": 4", "\"num_warps\": 0");
  t = child({"tune", dir});
  assert_int_equal(t.status, 0);
  assert_true(t.has("source benchmark"));
  assert_true(t.get("trials") > 0);
}

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "--child") == 0) {
    ::alarm(120);
    std::string mode = argv[2];
    if (mode == "mul" && argc > 4) return child_mul(std::atof(argv[3]), argv[4]);
    if (mode == "giant" && argc > 4) return child_giant(argv[3], argv[4]);
    if (mode == "tune" && argc > 3) return child_tune(argv[3]);
    return 99;
  }
  if (sodium_init() < 0) return 1;
  const char* build = std::getenv("TRI_BUILD_DIR");
  g_root = std::string(build ? build : "/tmp") + "/test-cache-trust";
  std::string cmd = "rm -rf '" + g_root + "' && mkdir -m 700 -p '" + g_root + "'";
  if (std::system(cmd.c_str()) != 0) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fifos_are_misses),
      cmocka_unit_test(test_forged_entries_never_load),
      cmocka_unit_test(test_copied_shortcut_never_loads_another_specialization),
      cmocka_unit_test(test_wait_forever_saturates),
      cmocka_unit_test(test_team_destroy_and_free_during_a_launch),
      cmocka_unit_test(test_giant_files_are_refused_unread),
      cmocka_unit_test(test_listing_survives_bad_files),
      cmocka_unit_test(test_failed_imports_import_nothing),
      cmocka_unit_test(test_a_key_twice_counts_once),
      cmocka_unit_test(test_parameter_limit),
      cmocka_unit_test(test_gpu_work_per_thread_limit),
      cmocka_unit_test(test_cancel_a_compile),
      cmocka_unit_test(test_symlinks_are_never_followed),
      cmocka_unit_test(test_one_outcome_per_compile),
      cmocka_unit_test(test_export_refuses_what_is_not_a_regular_file),
      cmocka_unit_test(test_messages_name_their_function),
      cmocka_unit_test(test_limits_table_names_the_real_codes),
      cmocka_unit_test(test_impossible_stored_configs_are_tuned_again),
  };
  int rc = cmocka_run_group_tests(tests, nullptr, nullptr);
  if (rc == 0) std::system(("rm -rf '" + g_root + "'").c_str());
  return rc;
}
