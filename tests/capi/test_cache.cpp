// The disk cache through the public API, across processes (target "cpu"): each case runs this
// program again as a child ("--child ...") that compiles and launches a kernel with a cache
// directory and prints its statistics and log; the parent damages the directory in between.
//   cold then warm start (the warm child compiles nothing; its time is printed);
//   a flipped byte, a truncation, a zero-length file, a wrong format version, a foreign file
//   under an entry's name: each is a miss that is rewritten, with a right result;
//   a foreign file in the directory is left alone;
//   16 processes that start together on an empty cache: one compile, one entry, all right;
//   a read-only directory; a full disk (RLIMIT_FSIZE, with SIGXFSZ ignored and at its default
//   action: the write fails, the process lives); a stale temporary file that a prune removes;
//   a comment added above the kernel is a hit, and the assert message still names the new line.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>

#include "tri/tri.h"

#include "children.h"
#include "test_main.h"

namespace {

const char kScale[] =
    "kernel @scale(%x: ptr<f32>, %out: ptr<f32>, %n: i32, %s: f32) constexpr(BLOCK: i32 = 16) {\n"
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
    "  %ss = splat %s : <BLOCK x f32>\n"
    "  %w = mul %v, %ss : <BLOCK x f32>\n"
    "  %ob = splat %out : <BLOCK x ptr<f32>>\n"
    "  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>\n"
    "  store %op, %w, mask=%mask\n"
    "  return\n"
    "}\n";

// Line 8 holds the assert (with no comment lines added above).
const char kCheck[] =
    "kernel @check(%x: ptr<i32>) {\n"
    "  %r = arange[start=0, end=4] : <4 x i32>\n"
    "  %xb = splat %x : <4 x ptr<i32>>\n"
    "  %xp = addptr %xb, %r : <4 x ptr<i32>>\n"
    "  %xv = load %xp : <4 x i32>\n"
    "  %zero = const[value=0] : <4 x i32>\n"
    "  %pos = cmp[pred=sgt] %xv, %zero : <4 x i1>\n"
    "  assert[msg=\"x must be positive\"] %pos\n"
    "  return\n"
    "}\n";

std::string g_root;

// ---- the child
void child_log(void*, int32_t level, const char* message) { std::printf("log %d %s\n", level, message); }

int child_main(int argc, char** argv) {
  // --child MODE DIR [BARRIER_FD|-] [FSIZE_LIMIT|-] [ignore|default] [COMMENT_LINES] [SOURCE_NAME]
  std::string mode = argv[2], dir = argv[3];
  if (argc > 4 && std::strcmp(argv[4], "-") != 0) {
    int fd = std::atoi(argv[4]);
    char b;
    while (::read(fd, &b, 1) > 0) {
    }  // the parent closes the pipe to start every child at once
  }
  if (argc > 5 && std::strcmp(argv[5], "-") != 0) {
    if (argc > 6 && std::strcmp(argv[6], "ignore") == 0) ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = std::strtoull(argv[5], nullptr, 10);
    ::setrlimit(RLIMIT_FSIZE, &rl);
  }
  int comment_lines = argc > 7 ? std::atoi(argv[7]) : 0;
  std::string source = argc > 8 ? argv[8] : "cache_test.tri";
  auto t0 = std::chrono::steady_clock::now();
  tri_context_options* o;
  tri_context* c;
  tri_context_options_create(&o);
  tri_context_options_set_log(o, child_log, nullptr, TRI_LOG_DEBUG);
  tri_context_options_set_cache_dir(o, dir.c_str());
  if (tri_context_create(o, TRI_VERSION_NUMBER, &c) != TRI_OK) return 10;
  tri_context_options_destroy(o);
  std::string text;
  for (int i = 0; i < comment_lines; ++i) text += "// a comment that moves every line down\n";
  text += mode == "assert" ? kCheck : kScale;
  tri_module* m;
  if (tri_module_create(c, text.data(), text.size(), source.c_str(), &m) != TRI_OK) return 11;
  tri_compile_options* co;
  tri_compile_options_create(&co);
  tri_compile_options_set_target(co, "cpu");
  tri_kernel* k;
  if (tri_kernel_compile(m, mode == "assert" ? "check" : "scale", co, &k) != TRI_OK) return 12;
  tri_compile_options_destroy(co);
  bool right = true;
  if (mode == "assert") {
    int32_t x[4] = {1, 2, -3, 4};
    tri_arg a[1] = {{}};
    a[0].value.p = x;
    a[0].extent = sizeof x;
    a[0].kind = TRI_TYPE_POINTER;
    a[0].dtype = TRI_DTYPE_I32;
    right = tri_launch(k, 1, 1, 1, nullptr, a, 1) == TRI_ERROR_RUNTIME;
    char msg[1024];
    tri_last_error_message(msg, sizeof msg);
    std::printf("assert_message %s\n", msg);
  } else {
    enum { N = 1000 };
    static float x[N], out[N];
    for (int i = 0; i < N; ++i) x[i] = static_cast<float>(i) * 0.5f;
    tri_arg a[4];
    std::memset(a, 0, sizeof a);
    a[0].value.p = x;
    a[0].extent = sizeof x;
    a[0].kind = TRI_TYPE_POINTER;
    a[0].dtype = TRI_DTYPE_F32;
    a[1] = a[0];
    a[1].value.p = out;
    a[2].value.i = N;
    a[2].kind = TRI_TYPE_SCALAR;
    a[2].dtype = TRI_DTYPE_I32;
    a[3].value.f = 3.0;
    a[3].kind = TRI_TYPE_SCALAR;
    a[3].dtype = TRI_DTYPE_F32;
    if (tri_launch(k, (N + 15) / 16, 1, 1, nullptr, a, 4) != TRI_OK) return 13;
    for (int i = 0; i < N; ++i) right = right && out[i] == x[i] * 3.0f;
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  static const int32_t stats[] = {TRI_CACHE_STAT_HITS,        TRI_CACHE_STAT_MISSES,        TRI_CACHE_STAT_STORES,
                                  TRI_CACHE_STAT_CORRUPT,     TRI_CACHE_STAT_WRITE_FAILURES, TRI_CACHE_STAT_LOCK_WAITS,
                                  TRI_CACHE_STAT_ENABLED};
  static const char* const names[] = {"hits", "misses", "stores", "corrupt", "write_failures", "lock_waits", "enabled"};
  for (int i = 0; i < 7; ++i) {
    uint64_t v = 0;
    tri_cache_stat(c, stats[i], &v);
    std::printf("%s %" PRIu64 "\n", names[i], v);
  }
  std::printf("result %s\nms %.3f\n", right ? "right" : "WRONG", ms);
  tri_kernel_destroy(k);
  tri_module_destroy(m);
  tri_context_destroy(c);
  return right ? 0 : 14;
}

// ---- the parent
using tri_test::Report;
using tri_test::spawn;
using tri_test::Spawned;
using tri_test::wait_report;

Report child(const std::string& mode, const std::string& dir, const std::string& fsize = "-",
             const std::string& on_fsize = "ignore", int comment_lines = 0, const std::string& source = "cache_test.tri") {
  Report r = wait_report(spawn({"--child", mode, dir, "-", fsize, on_fsize, std::to_string(comment_lines), source}));
  if (!r.right() && mode != "assert" && r.status < 128) std::printf("child output:\n%s\n", r.text.c_str());
  return r;
}

std::string fresh(const std::string& name) { return tri_test::fresh_dir(g_root, name); }

// Files of `dir` with ".tmp." anywhere in the name, or ending in `contains` (".entry", ".lock").
std::vector<std::string> files(const std::string& dir, const std::string& contains) {
  std::vector<std::string> out;
  for (const std::string& s : tri_test::names_in(dir, contains == ".tmp." ? "" : contains))
    if (contains != ".tmp." || s.find(contains) != std::string::npos) out.push_back(s);
  return out;
}

std::string only_entry(const std::string& dir) {
  auto es = files(dir, ".entry");
  assert_int_equal(es.size(), 1);
  return dir + "/" + es[0];
}

void write_raw(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  assert_non_null(f);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

}  // namespace

static void test_cold_then_warm_start(void** state) {
  (void)state;
  std::string dir = fresh("warm");
  Report cold = child("scale", dir);
  assert_true(cold.right());
  assert_int_equal(cold.get("stores"), 1);
  assert_int_equal(cold.get("misses"), 1);
  assert_int_equal(cold.get("hits"), 0);
  assert_int_equal(cold.count("compiled and stored"), 1);
  only_entry(dir);
  Report warm = child("scale", dir);
  assert_true(warm.right());
  assert_int_equal(warm.get("hits"), 1);
  assert_int_equal(warm.get("misses"), 0);
  assert_int_equal(warm.get("stores"), 0);
  assert_int_equal(warm.count("compiled and stored"), 0);
  assert_int_equal(warm.count("loaded from entry"), 1);
  double cold_ms = std::atof(cold.text.c_str() + cold.text.find("\nms ") + 4);
  double warm_ms = std::atof(warm.text.c_str() + warm.text.find("\nms ") + 4);
  std::printf("cold start (context, compile, store, launch): %.2f ms; warm start (context, cache hit, launch): %.2f ms\n",
              cold_ms, warm_ms);
}

static void check_damage(const std::string& name, const std::function<std::string(const std::string&)>& damage) {
  std::string dir = fresh("damage_" + name);
  assert_true(child("scale", dir).right());
  std::string entry = only_entry(dir);
  write_raw(entry, damage(tri_test::read_file(entry)));
  Report r = child("scale", dir);
  assert_true(r.right());
  assert_int_equal(r.get("corrupt"), 1);
  assert_int_equal(r.get("misses"), 1);
  assert_int_equal(r.get("stores"), 1);  // rewritten
  assert_int_equal(r.count("log 1 disk cache: "), 1);
  assert_true(r.text.find("is unusable") != std::string::npos);
  Report again = child("scale", dir);
  assert_true(again.right());
  assert_int_equal(again.get("hits"), 1);
}

// The request's shortcut (<dir>/front/<key>: the prepared IR and the entry's key) is written by
// the cold start and read by the warm one; damaged, it is a plain miss of the shortcut: the
// kernel is prepared again, found in its entry, and the shortcut rewritten.
static void test_front_file(void** state) {
  (void)state;
  std::string dir = fresh("front");
  assert_true(child("scale", dir).right());
  std::vector<std::string> fronts;
  for (const std::string& f : files(dir + "/front", ""))
    if (f.size() == 32) fronts.push_back(f);  // not "." and ".."
  assert_int_equal(fronts.size(), 1);
  const std::string front = dir + "/front/" + fronts[0];
  const std::string good = tri_test::read_file(front);
  assert_true(good.size() > 32);
  for (const std::string& bad : {good.substr(0, 20), std::string(32, 'z') + good.substr(32), good.substr(0, good.size() - 9)}) {
    write_raw(front, bad);
    Report r = child("scale", dir);
    assert_true(r.right());
    assert_int_equal(r.get("hits"), 1);
    assert_int_equal(r.get("stores"), 0);
    assert_true(tri_test::read_file(front) == good);  // rewritten
  }
}

static void test_damaged_entries(void** state) {
  (void)state;
  check_damage("flip", [](const std::string& g) {
    std::string d = g;
    d[d.size() / 3] ^= 0x04;
    return d;
  });
  check_damage("truncate", [](const std::string& g) { return g.substr(0, g.size() / 2); });
  check_damage("zero", [](const std::string&) { return std::string(); });
  check_damage("version", [](const std::string& g) {
    std::string d = g;
    d[8] = 7;
    return d;
  });
  check_damage("foreign", [](const std::string&) { return std::string("\x7f" "ELF not a cache entry at all"); });
}

static void test_foreign_file_in_directory(void** state) {
  (void)state;
  std::string dir = fresh("foreign");
  assert_int_equal(::mkdir(dir.c_str(), 0700), 0);
  write_raw(dir + "/notes.txt", "someone else's file\n");
  write_raw(dir + "/ffffffffffffffffffffffffffffffff.entry", "not an entry, and not the key we look up\n");
  Report r = child("scale", dir);
  assert_true(r.right());
  assert_int_equal(r.get("stores"), 1);
  assert_true(tri_test::read_file(dir + "/notes.txt") == "someone else's file\n");
}

static void test_sixteen_processes_compile_once(void** state) {
  (void)state;
  std::string dir = fresh("race");
  int start[2];
  assert_int_equal(::pipe(start), 0);
  std::vector<Spawned> kids;
  for (int i = 0; i < 16; ++i)
    kids.push_back(spawn({"--child", "scale", dir, std::to_string(start[0]), "-", "-", "0", "race.tri"}, start[1]));
  ::close(start[0]);
  ::usleep(200000);  // let every child reach the barrier
  ::close(start[1]);
  uint64_t hits = 0, misses = 0, stores = 0, waits = 0;
  int compiled = 0;
  for (int i = 0; i < 16; ++i) {
    Report r = wait_report(kids[i]);
    if (!r.right()) std::printf("child %d:\n%s\n", i, r.text.c_str());
    assert_true(r.right());
    hits += r.get("hits");
    misses += r.get("misses");
    stores += r.get("stores");
    waits += r.get("lock_waits");
    compiled += r.count("compiled and stored");
  }
  std::printf("16 processes: %" PRIu64 " stores, %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64
              " waited on the lock\n",
              stores, hits, misses, waits);
  assert_int_equal(stores, 1);
  assert_int_equal(compiled, 1);
  assert_int_equal(misses, 1);
  assert_int_equal(hits, 15);
  only_entry(dir);
  assert_int_equal(files(dir, ".tmp.").size(), 0);
  assert_int_equal(files(dir, ".lock").size(), 0);
}

static void test_read_only_directory(void** state) {
  (void)state;
  std::string dir = fresh("readonly");
  assert_int_equal(::mkdir(dir.c_str(), 0555), 0);
  ::chmod(dir.c_str(), 0555);
  if (::geteuid() == 0) {
    std::printf("running as root, which chmod does not stop: using /proc/self, which refuses new files to root\n");
    dir = "/proc/self";
  }
  Report r = child("scale", dir);
  assert_true(r.right());
  assert_int_equal(r.get("enabled"), 0);
  assert_int_equal(r.get("stores"), 0);
  assert_int_equal(r.count("log 1 "), 1);
  assert_int_equal(r.count("disk cache off"), 1);
}

static void test_full_disk(void** state) {
  (void)state;
  std::string dir = fresh("full");
  assert_int_equal(::mkdir(dir.c_str(), 0700), 0);
  // Files may grow to 64 bytes: the entry's write fails (EFBIG), the kernel still runs.
  Report r = child("scale", dir, "64", "ignore");
  assert_true(r.right());
  assert_int_equal(r.get("write_failures"), 1);
  assert_int_equal(r.get("stores"), 0);
  assert_true(r.text.find("cannot write entry") != std::string::npos);
  assert_int_equal(files(dir, ".entry").size(), 0);
  assert_int_equal(files(dir, ".tmp.").size(), 0);
  Report later = child("scale", dir);  // room again
  assert_true(later.right());
  assert_int_equal(later.get("stores"), 1);
}

// RLIMIT_FSIZE with SIGXFSZ at its default action (end the process): the library holds the
// signal off around its writes, so the write fails (EFBIG, counted) and the host lives on
// (issue 29, point 9; before, the signal killed it). A writer that does die between write and
// rename (kill -9) leaves a temporary file: a later prune removes it once it is stale.
static void test_file_size_limit_never_kills_the_host(void** state) {
  (void)state;
  std::string dir = fresh("crash");
  assert_int_equal(::mkdir(dir.c_str(), 0700), 0);
  Report r = child("scale", dir, "64", "default");
  if (!r.right()) std::printf("status %d, output:\n%s\n", r.status, r.text.c_str());
  assert_int_equal(r.status, 0);
  assert_true(r.right());
  assert_int_equal(r.get("write_failures"), 1);
  assert_int_equal(r.get("stores"), 0);
  assert_int_equal(files(dir, ".tmp.").size(), 0);
  assert_int_equal(files(dir, ".entry").size(), 0);
  // The next process compiles and stores; a young temporary stays (it might be a writer at
  // work) ...
  Report next = child("scale", dir);
  assert_true(next.right());
  assert_int_equal(next.get("stores"), 1);
  std::string entry = only_entry(dir);
  std::string tmp = entry + ".tmp.99999.0";
  write_raw(tmp, tri_test::read_file(entry).substr(0, 40));
  ::chmod(tmp.c_str(), 0600);
  tri_context_options* o;
  tri_context* c;
  tri_context_options_create(&o);
  tri_context_options_set_cache_dir(o, dir.c_str());
  assert_int_equal(tri_context_create(o, TRI_VERSION_NUMBER, &c), TRI_OK);
  tri_context_options_destroy(o);
  uint64_t removed = 99;
  assert_int_equal(tri_cache_prune(c, UINT64_MAX, &removed), TRI_OK);
  assert_int_equal(files(dir, ".tmp.").size(), 1);
  // ... until it is older than ten minutes: then a prune removes it.
  struct timeval old[2];
  ::gettimeofday(&old[0], nullptr);
  old[0].tv_sec -= 3600;
  old[1] = old[0];
  assert_int_equal(::utimes(tmp.c_str(), old), 0);
  assert_int_equal(tri_cache_prune(c, UINT64_MAX, &removed), TRI_OK);
  assert_int_equal(removed, 0);
  assert_int_equal(files(dir, ".tmp.").size(), 0);
  assert_int_equal(files(dir, ".entry").size(), 1);
  tri_context_destroy(c);
}

static void test_moved_lines_hit_and_report_the_new_lines(void** state) {
  (void)state;
  std::string dir = fresh("lines");
  Report a = child("assert", dir, "-", "ignore", 0, "first.tri");
  assert_int_equal(a.status, 0);
  assert_int_equal(a.get("stores"), 1);
  assert_true(a.text.find("assert_message first.tri:8:") != std::string::npos);
  // Three comment lines above: the same kernel, a hit, and the message names line 11.
  Report b = child("assert", dir, "-", "ignore", 3, "second.tri");
  assert_int_equal(b.status, 0);
  assert_int_equal(b.get("hits"), 1);
  assert_int_equal(b.get("stores"), 0);
  if (b.text.find("assert_message second.tri:11:") == std::string::npos) std::printf("%s\n", b.text.c_str());
  assert_true(b.text.find("assert_message second.tri:11:") != std::string::npos);
}

static void test_api_and_bundles(void** state) {
  (void)state;
  std::string dir = fresh("api"), other = fresh("api_other");
  assert_true(child("scale", dir).right());
  assert_true(child("assert", dir).status == 0);
  tri_context_options* o;
  tri_context *c, *c2;
  tri_context_options_create(&o);
  tri_context_options_set_cache_dir(o, dir.c_str());
  tri_context_options_set_cache_max_bytes(o, 12345);
  assert_int_equal(tri_context_create(o, TRI_VERSION_NUMBER, &c), TRI_OK);
  tri_context_options_set_cache_dir(o, other.c_str());
  assert_int_equal(tri_context_create(o, TRI_VERSION_NUMBER, &c2), TRI_OK);
  tri_context_options_destroy(o);
  const char* path = nullptr;
  assert_int_equal(tri_cache_dir(c, &path), TRI_OK);
  assert_string_equal(path, dir.c_str());
  uint64_t v = 0;
  assert_int_equal(tri_cache_stat(c, TRI_CACHE_STAT_ENTRIES, &v), TRI_OK);
  assert_int_equal(v, 2);
  assert_int_equal(tri_cache_stat(c, TRI_CACHE_STAT_MAX_BYTES, &v), TRI_OK);
  assert_int_equal(v, 12345);
  assert_int_equal(tri_cache_stat(c, 99, &v), TRI_ERROR_INVALID_ARGUMENT);
  tri_blob* text = nullptr;
  assert_int_equal(tri_cache_list(c, 0, &text), TRI_OK);
  std::string t(static_cast<const char*>(tri_blob_data(text)), tri_blob_size(text));
  tri_blob_destroy(text);
  assert_true(t.find("\tok\tobj\tcpu\tscale\t") != std::string::npos);
  assert_true(t.find("\tok\tobj\tcpu\tcheck\t") != std::string::npos);
  std::string bundle = g_root + "/warm.tribundle";
  uint32_t n = 0;
  assert_int_equal(tri_cache_export(c, bundle.c_str(), &n), TRI_OK);
  assert_int_equal(n, 2);
  assert_int_equal(tri_cache_import(c2, bundle.c_str(), &n), TRI_OK);
  assert_int_equal(n, 2);
  Report r = child("scale", other);  // a fresh directory made warm by the bundle
  assert_true(r.right());
  assert_int_equal(r.get("hits"), 1);
  assert_int_equal(r.get("stores"), 0);
  std::string bytes = tri_test::read_file(bundle);
  bytes[bytes.size() / 2] ^= 1;
  write_raw(bundle, bytes);
  assert_int_equal(tri_cache_import(c2, bundle.c_str(), &n), TRI_ERROR_CORRUPT_BINARY);
  // verify removes a damaged entry; clear removes the rest.
  std::string victim = other + "/" + files(other, ".entry")[0];
  write_raw(victim, "junk");
  assert_int_equal(tri_cache_list(c2, 1, &text), TRI_OK);
  t.assign(static_cast<const char*>(tri_blob_data(text)), tri_blob_size(text));
  tri_blob_destroy(text);
  assert_true(t.find("\tremoved: ") != std::string::npos);
  assert_int_equal(files(other, ".entry").size(), 1);
  uint64_t removed = 0;
  assert_int_equal(tri_cache_prune(c2, 0, &removed), TRI_OK);
  assert_int_equal(removed, 1);
  assert_int_equal(files(other, ".entry").size(), 0);
  tri_context_destroy(c);
  tri_context_destroy(c2);
  // "" turns the cache off.
  tri_context_options_create(&o);
  tri_context_options_set_cache_dir(o, "");
  assert_int_equal(tri_context_create(o, TRI_VERSION_NUMBER, &c), TRI_OK);
  tri_context_options_destroy(o);
  assert_int_equal(tri_cache_stat(c, TRI_CACHE_STAT_ENABLED, &v), TRI_OK);
  assert_int_equal(v, 0);
  assert_int_equal(tri_cache_export(c, bundle.c_str(), &n), TRI_ERROR_UNSUPPORTED);
  tri_context_destroy(c);
}

// The cuda target's payload, without a GPU (a named architecture needs no driver): a second
// context compiles nothing and gets the same PTX and launch descriptor; the LLVM IR, which an
// entry does not hold, is made again on request.
static void test_cuda_payload(void** state) {
  (void)state;
  std::string dir = fresh("cuda");
  std::string code[2][3];
  for (int round = 0; round < 2; ++round) {
    tri_context_options* o;
    tri_context* c;
    tri_context_options_create(&o);
    tri_context_options_set_cache_dir(o, dir.c_str());
    assert_int_equal(tri_context_create(o, TRI_VERSION_NUMBER, &c), TRI_OK);
    tri_context_options_destroy(o);
    tri_module* m;
    assert_int_equal(tri_module_create(c, kScale, sizeof kScale - 1, "scale.tri", &m), TRI_OK);
    tri_compile_options* co;
    tri_compile_options_create(&co);
    assert_int_equal(tri_compile_options_set_target(co, "cuda"), TRI_OK);
    tri_compile_options_set_arch(co, "sm_90");
    tri_compile_options_set_constexpr_int(co, "BLOCK", 256);
    tri_kernel* k;
    assert_int_equal(tri_kernel_compile(m, "scale", co, &k), TRI_OK);
    tri_compile_options_destroy(co);
    uint64_t hits = 0, stores = 0;
    tri_cache_stat(c, TRI_CACHE_STAT_HITS, &hits);
    tri_cache_stat(c, TRI_CACHE_STAT_STORES, &stores);
    assert_int_equal(hits, round == 1 ? 1 : 0);
    assert_int_equal(stores, round == 0 ? 1 : 0);
    const char* kinds[3] = {"ptx", "metadata", "llvm"};
    for (int i = 0; i < 3; ++i) {
      tri_blob* b = nullptr;
      assert_int_equal(tri_kernel_code(k, kinds[i], &b), TRI_OK);
      code[round][i].assign(static_cast<const char*>(tri_blob_data(b)), tri_blob_size(b));
      tri_blob_destroy(b);
    }
    tri_kernel_destroy(k);
    tri_module_destroy(m);
    tri_context_destroy(c);
  }
  assert_true(code[0][0].find(".entry scale") != std::string::npos);
  assert_true(code[0][0] == code[1][0]);
  assert_true(code[0][1].find("\"shared_bytes\"") != std::string::npos);
  assert_true(code[0][1] == code[1][1]);
  assert_true(code[1][2].find("nvptx64-nvidia-cuda") != std::string::npos);
  std::vector<std::string> es = files(dir, ".entry");
  assert_int_equal(es.size(), 1);
  std::string entry = tri_test::read_file(dir + "/" + es[0]);
  assert_true(entry.compare(0, 8, "TRICACHE") == 0 && entry.find("ptx") != std::string::npos);
}

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "--child") == 0) return child_main(argc, argv);
  char tmpl[] = "/tmp/tri-cache-capi-XXXXXX";
  if (!::mkdtemp(tmpl)) return 1;
  g_root = tmpl;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cold_then_warm_start),
      cmocka_unit_test(test_damaged_entries),
      cmocka_unit_test(test_front_file),
      cmocka_unit_test(test_foreign_file_in_directory),
      cmocka_unit_test(test_sixteen_processes_compile_once),
      cmocka_unit_test(test_read_only_directory),
      cmocka_unit_test(test_full_disk),
      cmocka_unit_test(test_file_size_limit_never_kills_the_host),
      cmocka_unit_test(test_moved_lines_hit_and_report_the_new_lines),
      cmocka_unit_test(test_api_and_bundles),
      cmocka_unit_test(test_cuda_payload),
  };
  int rc = cmocka_run_group_tests(tests, nullptr, nullptr);
  std::string cmd = "chmod -R u+w '" + g_root + "'; rm -rf '" + g_root + "'";
  if (std::system(cmd.c_str()) != 0) return 1;
  return rc;
}
