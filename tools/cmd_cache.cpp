// `tri cache`: look after a disk cache of compiled kernels (docs/cache.md) through the public C
// API's tri_cache_* functions: statistics, listing, verification, clearing, pruning, and bundles
// that carry a warm cache to another machine.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "tri/tri.h"

namespace {

const char kUsage[] =
    "usage: tri cache stats|ls|verify|clear|prune|export|import [--dir DIR] [ARG]\n"
    "\n"
    "  stats                 the directory, its entries and bytes, the size bound\n"
    "  ls                    one line per entry: key, bytes, last use, status, kind, target, kernel,\n"
    "                        what it was made for\n"
    "  verify                read and check every entry; remove the bad ones (exit 1 if any)\n"
    "  clear                 remove every entry\n"
    "  prune [--max BYTES]   remove least recently used entries down to BYTES (default: the\n"
    "                        bound), stale temporary files and abandoned lock files\n"
    "  export FILE           write every entry to a bundle FILE (with a manifest)\n"
    "  import FILE           add a bundle's entries (those made by this build of Tri)\n"
    "\n"
    "The directory is DIR, else $TRI_CACHE_DIR, else $XDG_CACHE_HOME/tri, else ~/.cache/tri.\n"
    "  --max-bytes N    the size bound the cache is opened with (default 1 GiB)\n"
    "  -v               print the library's log (info level)\n";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "tri cache: %s\n(see 'tri help cache')\n", msg.c_str());
  return 2;
}

void print_log(void*, int32_t level, const char* message) {
  static const char* const names[] = {"error", "warning", "info", "debug"};
  std::fprintf(stderr, "tri: %s: %s\n", names[level < 0 || level > 3 ? 3 : level], message);
}

int fail(const char* what) {
  char msg[2048];
  tri_last_error_message(msg, sizeof msg);
  std::fprintf(stderr, "tri cache %s: %s\n", what, msg);
  return 1;
}

bool parse_u64(const std::string& s, uint64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (errno || *end || s[0] == '-') return false;
  *out = v;
  return true;
}

uint64_t stat_of(tri_context* c, int32_t s) {
  uint64_t v = 0;
  tri_cache_stat(c, s, &v);
  return v;
}

}  // namespace

int tri_cmd_cache(int argc, char** argv) {
  std::string sub, dir, arg;
  bool have_dir = false, verbose = false, have_max = false;
  uint64_t max_bytes = 0, prune_to = UINT64_MAX;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--dir" || a == "--max-bytes" || a == "--max") {
      if (i + 1 >= argc) return usage_error(a + " needs a value");
      std::string v = argv[++i];
      if (a == "--dir") {
        dir = v;
        have_dir = true;
      } else if (!parse_u64(v, a == "--max" ? &prune_to : &max_bytes)) {
        return usage_error(a + " wants a number of bytes, not '" + v + "'");
      } else if (a == "--max-bytes") {
        have_max = true;
      }
    } else if (a == "-v") {
      verbose = true;
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("unknown option '" + a + "'");
    } else if (sub.empty()) {
      sub = a;
    } else if (arg.empty()) {
      arg = a;
    } else {
      return usage_error("unexpected argument '" + a + "'");
    }
  }
  static const char* const subs[] = {"stats", "ls", "verify", "clear", "prune", "export", "import"};
  bool known = false;
  for (const char* s : subs) known = known || sub == s;
  if (!known) return usage_error(sub.empty() ? "no subcommand given" : "unknown subcommand '" + sub + "'");
  bool wants_file = sub == "export" || sub == "import";
  if (wants_file && arg.empty()) return usage_error(sub + " needs a bundle FILE");
  if (!wants_file && !arg.empty()) return usage_error("unexpected argument '" + arg + "'");

  tri_context_options* o = nullptr;
  tri_context* c = nullptr;
  if (tri_context_options_create(&o) != TRI_OK) return fail(sub.c_str());
  tri_context_options_set_log(o, print_log, nullptr, verbose ? TRI_LOG_INFO : TRI_LOG_WARNING);
  if (have_dir) tri_context_options_set_cache_dir(o, dir.c_str());
  if (have_max) tri_context_options_set_cache_max_bytes(o, max_bytes);
  tri_result r = tri_context_create(o, TRI_VERSION_NUMBER, &c);
  tri_context_options_destroy(o);
  if (r != TRI_OK) return fail(sub.c_str());
  struct Guard {
    tri_context* c;
    ~Guard() { tri_context_destroy(c); }
  } guard{c};

  const char* path = "";
  tri_cache_dir(c, &path);
  if (sub == "stats") {
    if (!*path) {
      std::printf("directory: none (the disk cache is off)\n");
      return 1;
    }
    std::printf("directory: %s\nentries: %" PRIu64 "\nbytes: %" PRIu64 "\nmax bytes: %" PRIu64 "\n", path,
                stat_of(c, TRI_CACHE_STAT_ENTRIES), stat_of(c, TRI_CACHE_STAT_BYTES),
                stat_of(c, TRI_CACHE_STAT_MAX_BYTES));
    return 0;
  }
  if (sub == "ls" || sub == "verify") {
    tri_blob* text = nullptr;
    if (tri_cache_list(c, sub == "verify", &text) != TRI_OK) return fail(sub.c_str());
    std::string t(static_cast<const char*>(tri_blob_data(text)), tri_blob_size(text));
    tri_blob_destroy(text);
    if (sub == "ls") {
      std::fwrite(t.data(), 1, t.size(), stdout);
      return 0;
    }
    size_t good = 0, bad = 0;
    for (size_t at = 0; at < t.size();) {
      size_t nl = t.find('\n', at);
      std::string line = t.substr(at, nl - at);
      at = nl == std::string::npos ? t.size() : nl + 1;
      size_t f1 = line.find('\t'), f2 = line.find('\t', f1 + 1), f3 = line.find('\t', f2 + 1),
             f4 = line.find('\t', f3 + 1);
      std::string status = line.substr(f3 + 1, f4 - f3 - 1);
      if (status.rfind("ok", 0) == 0) {
        ++good;
      } else {
        ++bad;
        std::printf("%s: %s\n", line.substr(0, f1).c_str(), status.c_str());
      }
    }
    std::printf("%zu entries good, %zu bad (removed)\n", good, bad);
    return bad ? 1 : 0;
  }
  if (sub == "clear" || sub == "prune") {
    uint64_t removed = 0;
    if (tri_cache_prune(c, sub == "clear" ? 0 : prune_to, &removed) != TRI_OK) return fail(sub.c_str());
    std::printf("removed %" PRIu64 " entries; %" PRIu64 " left (%" PRIu64 " bytes)\n", removed,
                stat_of(c, TRI_CACHE_STAT_ENTRIES), stat_of(c, TRI_CACHE_STAT_BYTES));
    return 0;
  }
  uint32_t n = 0;
  if (sub == "export") {
    if (tri_cache_export(c, arg.c_str(), &n) != TRI_OK) return fail(sub.c_str());
    std::printf("exported %u entries to %s\n", n, arg.c_str());
    return 0;
  }
  if (tri_cache_import(c, arg.c_str(), &n) != TRI_OK) return fail(sub.c_str());
  std::printf("imported %u entries into %s\n", n, path);
  return 0;
}
