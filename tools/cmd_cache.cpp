// `tri cache`: look after a disk cache of compiled kernels (docs/cache.md) through the public C
// API's tri_cache_* functions: statistics, listing, verification, clearing, pruning, and bundles
// that carry a warm cache to another machine, with the keys that sign them and the checks that
// require a signature (tri_sign_keypair, tri_bundle_sign, tri_bundle_verify).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <ctime>
#include <algorithm>
#include <string>
#include <vector>

#include "commands.h"
#include "tri/tri.h"

namespace {

const char kUsage[] =
    "usage: tri cache stats|ls|verify|clear|prune|export|import|keygen|sign|check [--dir DIR] [ARG]\n"
    "\n"
    "  stats                 the directory, its entries and bytes, the size bound\n"
    "  ls [-l]               one line per entry under a header: key, size, last use, status, kind,\n"
    "                        target, kernel, what it was specialized for (constexprs, warps, facts)\n"
    "                        and made for, or for a bad entry why (-l: whole keys, and the CPU's\n"
    "                        features)\n"
    "  verify                read and check every entry; remove the bad ones (exit 1 if any)\n"
    "  clear                 remove every entry\n"
    "  prune [--max BYTES]   remove least recently used entries down to BYTES (default: the\n"
    "                        bound), stale temporary files and abandoned lock files\n"
    "  export FILE [--sign KEY]\n"
    "                        write every entry to a bundle FILE (with a manifest), signed with\n"
    "                        the secret key file KEY when given\n"
    "  import FILE [--trust PUB]...\n"
    "                        add a bundle's entries (those made by this build of Tri), all or\n"
    "                        none; with --trust, only a bundle signed by one of the public key\n"
    "                        files PUB\n"
    "  keygen NAME           make a signing key pair: NAME.key (secret, mode 0600) and NAME.pub\n"
    "  sign FILE --key KEY   sign the bundle FILE with the secret key file KEY\n"
    "  check FILE [--trust PUB]\n"
    "                        check a bundle in full and say who signed it; with --trust, it must\n"
    "                        be signed by PUB (exit 1 otherwise)\n"
    "\n"
    "The directory is DIR, else $TRI_CACHE_DIR, else $XDG_CACHE_HOME/tri, else ~/.cache/tri.\n"
    "  --max-bytes N    the size bound the cache is opened with (default 1 GiB)\n"
    "  --shared         the directory is shared by its group (docs/cache.md, \"Trust\")\n"
    "  -v               print the library's log (info level)\n"
    "Key files hold the key as hex digits on one line.\n";

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

std::string to_hex(const uint8_t* b, size_t n) {
  static const char d[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) s += std::string(1, d[b[i] >> 4]) + d[b[i] & 15];
  return s;
}

// A key file: `n` bytes as 2n hex digits on the first line. false with *error.
bool read_key(const std::string& path, uint8_t* out, size_t n, std::string* error) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return *error = "cannot read key file " + path + ": " + std::strerror(errno), false;
  char line[512] = {0};
  bool got = std::fgets(line, sizeof line, f) != nullptr;
  std::fclose(f);
  std::string t = got ? line : "";
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  if (t.size() != 2 * n)
    return *error = "key file " + path + " holds " + std::to_string(t.size()) + " characters, not the " +
                    std::to_string(2 * n) + " hex digits of a " + (n == TRI_SIGN_PUBLIC_KEY_BYTES ? "public" : "secret") +
                    " key",
           false;
  for (size_t i = 0; i < n; ++i) {
    unsigned v = 0;
    if (std::sscanf(t.c_str() + 2 * i, "%2x", &v) != 1 || !std::isxdigit(static_cast<unsigned char>(t[2 * i])) ||
        !std::isxdigit(static_cast<unsigned char>(t[2 * i + 1])))
      return *error = "key file " + path + " is not hex digits", false;
    out[i] = static_cast<uint8_t>(v);
  }
  return true;
}

// Writes a key file with `mode`, refusing to replace one.
bool write_key(const std::string& path, const uint8_t* key, size_t n, mode_t mode, std::string* error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return *error = "cannot make " + path + ": " + std::strerror(errno), false;
  std::string text = to_hex(key, n) + "\n";
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = ::close(fd) == 0 && ok;
  if (!ok) *error = "cannot write " + path;
  return ok;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> f;
  for (size_t at = 0;;) {
    size_t tab = line.find('\t', at);
    f.push_back(line.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
    if (tab == std::string::npos) return f;
    at = tab + 1;
  }
}

std::string human_bytes(uint64_t n) {
  char buf[32];
  if (n < 1024) {
    std::snprintf(buf, sizeof buf, "%" PRIu64 " B", n);
  } else {
    const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(n) / 1024;
    int u = 0;
    while (v >= 1024 && u < 3) v /= 1024, ++u;
    std::snprintf(buf, sizeof buf, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
  }
  return buf;
}

std::string local_time(const std::string& seconds) {
  time_t t = static_cast<time_t>(std::strtoll(seconds.c_str(), nullptr, 10));
  struct tm tm;
  char buf[32];
  if (!localtime_r(&t, &tm) || !std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm)) return seconds;
  return buf;
}

// A target's identity ("obj 2; llvm 19.1.7; x86_64-pc-linux-gnu; cpu znver4; features +avx,...;
// opt 3") without the parts a reader skips: the payload format and the list of CPU features
// (its length said instead: two thousand characters of "+avx512f,-amx-tile,...").
std::string short_identity(const std::string& id) {
  std::string out;
  for (size_t at = 0; at < id.size();) {
    size_t end = id.find("; ", at);
    std::string part = id.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? id.size() : end + 2;
    if (part.rfind("obj ", 0) == 0 || part.rfind("ptx ", 0) == 0) {
      if (part.find_first_not_of("0123456789", 4) == std::string::npos) continue;  // the format's version
    }
    if (part.rfind("features ", 0) == 0) {
      size_t n = 0;
      for (char c : part) n += c == '+';
      part = std::to_string(n) + " features";
    }
    out += (out.empty() ? "" : ", ") + part;
  }
  return out;
}

// The number of hex digits, 16 or more, that keeps every key of a listing apart (as git
// shortens hashes): two entries never print the same short key.
size_t key_digits(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end());
  size_t n = 16;
  for (size_t i = 1; i < keys.size(); ++i) {
    size_t same = 0;
    while (same < keys[i].size() && same < keys[i - 1].size() && keys[i][same] == keys[i - 1][same]) ++same;
    n = std::max(n, same + 1);
  }
  return n;
}

// `tri cache ls`: a header and aligned columns; sizes and times for people; the machine without
// its feature list unless `full` (-l), which also prints whole keys. A bad entry's reason goes in
// the last column, so one long reason does not widen the others.
void print_listing(const std::string& text, bool full) {
  std::vector<std::vector<std::string>> entries;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    std::vector<std::string> f = split_tabs(text.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    at = nl == std::string::npos ? text.size() : nl + 1;
    if (f.size() < 8) continue;
    f.resize(9);
    entries.push_back(std::move(f));
  }
  std::vector<std::string> keys;
  for (const auto& f : entries) keys.push_back(f[0]);
  const size_t digits = full ? std::string::npos : key_digits(keys);
  auto or_dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  std::vector<std::vector<std::string>> rows = {
      {"KEY", "SIZE", "LAST USE", "STATUS", "KIND", "TARGET", "KERNEL", "SPECIALIZED FOR", "MADE FOR"}};
  for (const auto& f : entries) {
    const bool ok = f[3] == "ok";
    rows.push_back({f[0].substr(0, digits), human_bytes(std::strtoull(f[1].c_str(), nullptr, 10)), local_time(f[2]),
                    ok ? f[3] : "bad", or_dash(f[4]), or_dash(f[5]), f[6].empty() ? "-" : "@" + f[6],
                    f[8].empty() ? (ok ? "?" : "-") : f[8],
                    !ok ? f[3] : full ? f[7] : short_identity(f[7])});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
  if (rows.size() == 1) std::printf("(no entries)\n");
}

uint64_t stat_of(tri_context* c, int32_t s) {
  uint64_t v = 0;
  tri_cache_stat(c, s, &v);
  return v;
}

}  // namespace

int tri_cmd_cache(int argc, char** argv) {
  std::string sub, dir, arg, sign_key, secret_key;
  std::vector<std::string> trust;
  bool have_dir = false, verbose = false, have_max = false, shared = false, full = false;
  uint64_t max_bytes = 0, prune_to = UINT64_MAX;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--dir" || a == "--max-bytes" || a == "--max" || a == "--sign" || a == "--key" || a == "--trust") {
      if (i + 1 >= argc) return usage_error(a + " needs a value");
      std::string v = argv[++i];
      if (a == "--sign") {
        sign_key = v;
      } else if (a == "--key") {
        secret_key = v;
      } else if (a == "--trust") {
        trust.push_back(v);
      } else if (a == "--dir") {
        dir = v;
        have_dir = true;
      } else if (!parse_u64(v, a == "--max" ? &prune_to : &max_bytes)) {
        return usage_error(a + " wants a number of bytes, not '" + v + "'");
      } else if (a == "--max-bytes") {
        have_max = true;
      }
    } else if (a == "-v") {
      verbose = true;
    } else if (a == "--shared") {
      shared = true;
    } else if (a == "-l" || a == "--long") {
      full = true;
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
  static const char* const subs[] = {"stats",  "ls",     "verify", "clear", "prune",
                                     "export", "import", "keygen", "sign",  "check"};
  bool known = false;
  for (const char* s : subs) known = known || sub == s;
  if (!known) return usage_error(sub.empty() ? "no subcommand given" : "unknown subcommand '" + sub + "'");
  bool wants_file = sub == "export" || sub == "import" || sub == "keygen" || sub == "sign" || sub == "check";
  if (wants_file && arg.empty()) return usage_error(sub + (sub == "keygen" ? " needs a NAME" : " needs a bundle FILE"));
  if (!wants_file && !arg.empty()) return usage_error("unexpected argument '" + arg + "'");
  if (!sign_key.empty() && sub != "export") return usage_error("--sign goes with export");
  if (!trust.empty() && sub != "import" && sub != "check") return usage_error("--trust goes with import or check");
  if (sub == "sign" && secret_key.empty()) return usage_error("sign needs --key KEY (a secret key file)");
  if (!secret_key.empty() && sub != "sign") return usage_error("--key goes with sign");
  if (trust.size() > 1 && sub == "check") return usage_error("check takes one --trust");

  // The subcommands that need no cache.
  std::string err;
  if (sub == "keygen") {
    uint8_t pk[TRI_SIGN_PUBLIC_KEY_BYTES], sk[TRI_SIGN_SECRET_KEY_BYTES];
    if (tri_sign_keypair(pk, sizeof pk, sk, sizeof sk) != TRI_OK) return fail("keygen");
    bool ok = write_key(arg + ".key", sk, sizeof sk, 0600, &err) && write_key(arg + ".pub", pk, sizeof pk, 0644, &err);
    std::memset(sk, 0, sizeof sk);
    if (!ok) {
      std::fprintf(stderr, "tri cache keygen: %s\n", err.c_str());
      return 1;
    }
    std::printf("secret key %s.key (keep it private), public key %s.pub: %s\n", arg.c_str(), arg.c_str(),
                to_hex(pk, sizeof pk).c_str());
    return 0;
  }
  if (sub == "sign") {
    uint8_t sk[TRI_SIGN_SECRET_KEY_BYTES];
    if (!read_key(secret_key, sk, sizeof sk, &err)) {
      std::fprintf(stderr, "tri cache sign: %s\n", err.c_str());
      return 1;
    }
    tri_result r = tri_bundle_sign(arg.c_str(), sk, sizeof sk);
    std::memset(sk, 0, sizeof sk);
    if (r != TRI_OK) return fail("sign");
    std::printf("signed %s\n", arg.c_str());
    return 0;
  }
  if (sub == "check") {
    uint8_t pk[TRI_SIGN_PUBLIC_KEY_BYTES], signer[TRI_SIGN_PUBLIC_KEY_BYTES];
    if (!trust.empty() && !read_key(trust[0], pk, sizeof pk, &err)) {
      std::fprintf(stderr, "tri cache check: %s\n", err.c_str());
      return 1;
    }
    uint32_t n = 0;
    int32_t is_signed = 0;
    if (tri_bundle_verify(arg.c_str(), trust.empty() ? nullptr : pk, sizeof pk, &n, &is_signed, signer) != TRI_OK)
      return fail("check");
    std::printf("%s: %u entries, %s\n", arg.c_str(), n,
                is_signed ? ("signed by " + to_hex(signer, sizeof signer)).c_str() : "unsigned");
    return 0;
  }

  tri_context_options* o = nullptr;
  tri_context* c = nullptr;
  if (tri_context_options_create(&o) != TRI_OK) return fail(sub.c_str());
  tri_context_options_set_log(o, print_log, nullptr, verbose ? TRI_LOG_INFO : TRI_LOG_WARNING);
  if (have_dir) tri_context_options_set_cache_dir(o, dir.c_str());
  if (have_max) tri_context_options_set_cache_max_bytes(o, max_bytes);
  if (shared) tri_context_options_set_cache_shared(o, 1);
  for (const std::string& t : trust) {
    uint8_t pk[TRI_SIGN_PUBLIC_KEY_BYTES];
    if (!read_key(t, pk, sizeof pk, &err)) {
      tri_context_options_destroy(o);
      std::fprintf(stderr, "tri cache import: %s\n", err.c_str());
      return 1;
    }
    tri_context_options_add_trusted_key(o, pk, sizeof pk);
  }
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
      print_listing(t, full);
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
    uint8_t sk[TRI_SIGN_SECRET_KEY_BYTES];
    if (!sign_key.empty() && !read_key(sign_key, sk, sizeof sk, &err)) {
      std::fprintf(stderr, "tri cache export: %s\n", err.c_str());
      return 1;
    }
    if (tri_cache_export(c, arg.c_str(), &n) != TRI_OK) return fail(sub.c_str());
    if (!sign_key.empty()) {
      tri_result r = tri_bundle_sign(arg.c_str(), sk, sizeof sk);
      std::memset(sk, 0, sizeof sk);
      if (r != TRI_OK) return fail(sub.c_str());
    }
    std::printf("exported %u entries to %s%s\n", n, arg.c_str(), sign_key.empty() ? "" : ", signed");
    return 0;
  }
  if (tri_cache_import(c, arg.c_str(), &n) != TRI_OK) return fail(sub.c_str());
  std::printf("imported %u entries into %s\n", n, path);
  return 0;
}
