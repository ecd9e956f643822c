// DiskCache: entry files, atomic writes, lookups that validate, LRU eviction, flock single
// flight, prune and listing, the directory's trust rules and its secret (see store.h).
#include "cache/store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "base/file.h"

namespace tri::cache {

namespace {

std::atomic<int (*)(const std::string&)> g_write_fault{nullptr};
std::atomic<uint64_t> g_temp_counter{0};

const char kEntrySuffix[] = ".entry";
const char kLockSuffix[] = ".lock";
const char kTempMark[] = ".tmp.";
const char kSecretName[] = "cache.key";

std::string errno_text(int e) { return std::strerror(e); }

bool ends_with(const std::string& s, const char* suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// "<32 hex><suffix>" -> key.
bool key_of(const std::string& name, const char* suffix, Key* out) {
  size_t n = std::strlen(suffix);
  if (name.size() != 32 + n || !ends_with(name, suffix)) return false;
  return parse_key_hex(name.substr(0, 32), out);
}

// Makes `dir` and its parents (each new one 0700); false with errno set when it cannot.
bool make_dirs(const std::string& dir) {
  if (dir.empty()) return false;
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return true;
    errno = ENOTDIR;
    return false;
  }
  size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !make_dirs(dir.substr(0, slash))) return false;
  if (::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST) return true;
  return false;
}

std::string octal(mode_t m) {
  char b[8];
  std::snprintf(b, sizeof b, "%04o", static_cast<unsigned>(m & 07777));
  return b;
}

struct DirFile {
  std::string name;
  uint64_t bytes;
  int64_t mtime_ns;
  bool regular;
};

// The names and stats of the directory's files (links not followed; every type, so that a FIFO
// or a symlink under an entry's name can be reported and removed).
bool scan(int dirfd, std::vector<DirFile>* out) {
  int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return false;
  }
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    out->push_back({name, static_cast<uint64_t>(st.st_size),
                    static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, S_ISREG(st.st_mode) != 0});
  }
  ::closedir(d);
  return true;
}

int64_t now_ns() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_ino == b.st_ino && a.st_dev == b.st_dev; }

}  // namespace

DirChoice resolve_dir(bool option_set, const std::string& option) {
  if (option_set) {
    if (option.empty()) return {"", "the context's cache directory option is \"\" (off)"};
    return {option, "the context's cache directory option"};
  }
  const char* env = std::getenv("TRI_CACHE_DIR");
  if (env && *env) return {env, "TRI_CACHE_DIR"};
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg == '/') return {std::string(xdg) + "/tri", "XDG_CACHE_HOME"};
  const char* home = std::getenv("HOME");
  if (home && *home == '/') return {std::string(home) + "/.cache/tri", "HOME"};
  return {"", "neither TRI_CACHE_DIR, XDG_CACHE_HOME nor HOME is set"};
}

struct DiskCache::Counters {
  std::atomic<uint64_t> hits{0}, misses{0}, stores{0}, bytes_read{0}, bytes_written{0}, evictions{0}, corrupt{0},
      write_failures{0}, lock_waits{0};
};

DiskCache::DiskCache(const std::string& dir, uint64_t max_bytes, LogFn log, bool shared)
    : dir_(dir), max_bytes_(max_bytes), log_(std::move(log)), shared_(shared), n_(std::make_unique<Counters>()) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  if (!dir_.empty()) open_dir();
}

void DiskCache::turn_off(const std::string& why, const std::string& fix) {
  if (dirfd_ >= 0) ::close(dirfd_);
  dirfd_ = -1;
  if (log_) log_(kWarning, "disk cache off: " + why + "; kernels are compiled in memory only (" + fix + ")");
}

void DiskCache::open_dir() {
  const std::string writable_fix = "point TRI_CACHE_DIR or tri_context_options_set_cache_dir at a writable directory";
  Status cs = crypto_init();
  if (!cs.is_ok()) return turn_off(cs.message(), writable_fix);
  if (!make_dirs(dir_)) return turn_off("cannot make directory " + dir_ + " (" + errno_text(errno) + ")", writable_fix);
  dirfd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd_ < 0) return turn_off("cannot open directory " + dir_ + " (" + errno_text(errno) + ")", writable_fix);
  struct stat st;
  std::string why;
  if (::fstat(dirfd_, &st) != 0) return turn_off("cannot stat " + dir_ + " (" + errno_text(errno) + ")", writable_fix);
  if (!trusted(st, true, &why))
    return turn_off("directory " + dir_ + " " + why + ", so another user could put code in it that this process would run",
                    shared_ ? "make it writable by its group only: chmod o-w " + dir_
                            : "make it yours and private: chmod 700 " + dir_ +
                                  "; a cache shared by a group needs tri_context_options_set_cache_shared");
  // A probe file tells a writable directory from a read-only one (access() says yes to root).
  std::string probe = std::string(".probe") + kTempMark + std::to_string(::getpid()) + "." +
                      std::to_string(g_temp_counter.fetch_add(1));
  int fd = ::openat(dirfd_, probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return turn_off("directory " + dir_ + " is not writable (" + errno_text(errno) + ")", writable_fix);
  ::close(fd);
  ::unlinkat(dirfd_, probe.c_str(), 0);
  if (!load_secret(&why)) return turn_off(why, "remove " + dir_ + "/" + kSecretName + " to have Tri make a new one");
  enabled_ = true;
}

DiskCache::~DiskCache() {
  if (dirfd_ >= 0) ::close(dirfd_);
}

bool DiskCache::trusted(const struct stat& st, bool dir, std::string* why) const {
  const uid_t me = ::geteuid();
  if (!shared_ && st.st_uid != me && st.st_uid != 0) {
    *why = "is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " + std::to_string(me) + ")";
    return false;
  }
  const mode_t w = shared_ ? S_IWOTH : (S_IWGRP | S_IWOTH);
  if ((st.st_mode & w) && !(dir && shared_ && (st.st_mode & S_ISVTX))) {
    *why = std::string("is writable by ") + (st.st_mode & S_IWOTH ? "every user" : "its group") + " (mode " +
           octal(st.st_mode) + ")";
    return false;
  }
  return true;
}

bool DiskCache::load_secret(std::string* why) {
  const mode_t mode = shared_ ? 0640 : 0600;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::string bytes, err;
    struct stat st;
    int fd = open_regular(dirfd_, kSecretName, true, 4096, &st, &err);
    if (fd >= 0) {
      bytes.resize(static_cast<size_t>(st.st_size));
      bool ok = read_exact(fd, 0, bytes.empty() ? nullptr : &bytes[0], bytes.size());
      ::close(fd);
      std::string t;
      if (!trusted(st, false, &t)) {
        *why = "the cache's secret " + dir_ + "/" + kSecretName + " " + t;
        return false;
      }
      if (!shared_ && (st.st_mode & (S_IRGRP | S_IROTH))) {
        *why = "the cache's secret " + dir_ + "/" + kSecretName + " is readable by other users (mode " +
               octal(st.st_mode) + "); chmod 600 it";
        return false;
      }
      if (shared_ && (st.st_mode & S_IROTH)) {
        *why = "the cache's secret " + dir_ + "/" + kSecretName + " is readable by every user (mode " +
               octal(st.st_mode) + "); chmod o-r it";
        return false;
      }
      if (ok && bytes.size() == secret_.size()) {
        std::memcpy(secret_.data(), bytes.data(), secret_.size());
        return true;
      }
      // Ours and private, but not 32 bytes: damaged. A new secret makes every entry a miss.
      if (log_) log_(kWarning, "disk cache: " + dir_ + "/" + kSecretName + " is damaged; making a new secret");
      ::unlinkat(dirfd_, kSecretName, 0);
      continue;
    }
    if (errno != ENOENT) {
      *why = "cannot read the cache's secret " + dir_ + "/" + kSecretName + ": " + err;
      return false;
    }
    // Made on first use: written whole under a temporary name, then linked into place, which
    // fails when another process made it first (then its secret is read).
    MacKey k = random_mac_key();
    std::string tmp = std::string(kSecretName) + kTempMark + std::to_string(::getpid()) + "." +
                      std::to_string(g_temp_counter.fetch_add(1));
    int wfd = ::openat(dirfd_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (wfd < 0) {
      *why = "cannot make the cache's secret in " + dir_ + " (" + errno_text(errno) + ")";
      return false;
    }
    ::fchmod(wfd, mode);  // whatever the umask
    int e = write_all(wfd, std::string(reinterpret_cast<const char*>(k.data()), k.size()));
    if (!e && ::fsync(wfd) != 0) e = errno;
    ::close(wfd);
    if (!e && ::linkat(dirfd_, tmp.c_str(), dirfd_, kSecretName, 0) != 0 && errno != EEXIST) e = errno;
    ::unlinkat(dirfd_, tmp.c_str(), 0);
    if (e) {
      *why = "cannot make the cache's secret in " + dir_ + " (" + errno_text(e) + ")";
      return false;
    }
  }
  *why = "cannot read or make the cache's secret " + dir_ + "/" + kSecretName;
  return false;
}

void DiskCache::set_write_fault(int (*fault)(const std::string& path)) { g_write_fault.store(fault); }

std::string DiskCache::entry_path(const Key& key) const { return dir_ + "/" + key.hex() + kEntrySuffix; }

Stats DiskCache::stats() const {
  Stats s;
  s.hits = n_->hits;
  s.misses = n_->misses;
  s.stores = n_->stores;
  s.bytes_read = n_->bytes_read;
  s.bytes_written = n_->bytes_written;
  s.evictions = n_->evictions;
  s.corrupt = n_->corrupt;
  s.write_failures = n_->write_failures;
  s.lock_waits = n_->lock_waits;
  return s;
}

void DiskCache::count_hit(uint64_t file_bytes) {
  n_->hits++;
  n_->bytes_read += file_bytes;
}

void DiskCache::count_miss() { n_->misses++; }

Status DiskCache::read_entry(const std::string& name, const Key& key, std::string* bytes, Entry* out,
                             struct stat* st, int* open_errno) const {
  *open_errno = 0;
  std::string why;
  int fd = open_regular(dirfd_, name, true, kMaxEntryBytes, st, &why);
  if (fd < 0) {
    *open_errno = errno ? errno : EIO;
    return Status(Code::Io, why);
  }
  std::string t;
  if (!trusted(*st, false, &t)) {
    ::close(fd);
    return Status(Code::Io, t);
  }
  // The header first: a foreign or stale file costs one small read.
  char head[kEntryHeadBytes];
  const uint64_t size = static_cast<uint64_t>(st->st_size);
  const size_t n = static_cast<size_t>(std::min<uint64_t>(size, sizeof head));
  Status s = read_exact(fd, 0, head, n) ? check_entry_head(head, n, size) : Status(Code::Io, "cannot read it");
  if (s.is_ok()) {
    bytes->resize(static_cast<size_t>(size));
    s = read_exact(fd, 0, &(*bytes)[0], bytes->size()) ? decode_entry(*bytes, key, &secret_, out)
                                                       : Status(Code::Io, "it changed while being read");
  }
  if (s.is_ok()) ::futimens(fd, nullptr);  // marks the entry used (the LRU order); a read-only file stays as is
  ::close(fd);
  return s;
}

void DiskCache::unusable(const std::string& name, const struct stat* st, const std::string& why) {
  n_->corrupt++;
  // Remove the file only when it is still the one we read: another process may have just
  // renamed a good entry into its place.
  struct stat now;
  bool removed = false;
  if (::fstatat(dirfd_, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 && (!st || same_file(now, *st)) &&
      !S_ISDIR(now.st_mode))
    removed = ::unlinkat(dirfd_, name.c_str(), 0) == 0;
  if (log_)
    log_(kWarning, "disk cache: " + dir_ + "/" + name + " is unusable (" + why + ")" +
                       (removed ? "; removed, it will be rewritten" : ""));
}

void DiskCache::reject(const Key& key, const std::string& why) { unusable(key.hex() + kEntrySuffix, nullptr, why); }

bool DiskCache::lookup(const Key& key, Entry* out, bool count, uint64_t* file_bytes) {
  if (!enabled_) return false;
  const std::string name = key.hex() + kEntrySuffix;
  std::string bytes;
  struct stat st;
  int err = 0;
  st.st_ino = 0;
  Status s = read_entry(name, key, &bytes, out, &st, &err);
  if (s.is_ok()) {
    if (count) count_hit(bytes.size());
    if (file_bytes) *file_bytes = bytes.size();
    return true;
  }
  if (count) count_miss();
  if (err == ENOENT) return false;
  if (err == EACCES || err == EPERM) {
    if (log_) log_(kWarning, "disk cache: cannot open " + dir_ + "/" + name + " (" + s.message() + ")");
    return false;
  }
  unusable(name, st.st_ino ? &st : nullptr, s.message());
  return false;
}

bool DiskCache::insert(const Entry& e) {
  if (!enabled_) return false;
  std::string bytes;
  Status s = encode_entry(e, &secret_, &bytes);
  if (!s.is_ok()) {
    n_->write_failures++;
    if (log_) log_(kWarning, "disk cache: " + s.message());
    return false;
  }
  return insert_bytes(e.key, bytes);
}

namespace {

mode_t file_mode(bool shared) { return shared ? 0644 : 0600; }

}  // namespace

bool DiskCache::insert_bytes(const Key& key, const std::string& bytes) {
  if (!enabled_) return false;
  const std::string name = key.hex() + kEntrySuffix;
  const char* step = "write";
  int e = 0;
  if (auto fault = g_write_fault.load()) e = fault(dir_ + "/" + name);
  if (!e) e = write_file_at(dirfd_, name, bytes, file_mode(shared_), true, &step);
  if (e) {
    n_->write_failures++;
    if (log_)
      log_(kWarning, "disk cache: cannot write entry " + key.hex() + " to " + dir_ + "/" + name + " (" + step + ": " +
                         errno_text(e) + "); the kernel is compiled but not stored");
    return false;
  }
  // The rename is durable once the directory is synced; a crash before that loses the entry,
  // never leaves a partial one.
  ::fsync(dirfd_);
  n_->stores++;
  n_->bytes_written += bytes.size();
  if (log_) log_(kDebug, "disk cache: stored " + entry_path(key) + " (" + std::to_string(bytes.size()) + " bytes)");
  evict(key);
  return true;
}

bool DiskCache::stage(const Key& key, const std::string& bytes, Staged* out) {
  if (!enabled_) return false;
  out->key = key;
  out->temp = key.hex() + kEntrySuffix + kTempMark + std::to_string(::getpid()) + "." +
              std::to_string(g_temp_counter.fetch_add(1));
  struct stat st;
  out->existed = ::fstatat(dirfd_, (key.hex() + kEntrySuffix).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  int e = 0;
  if (auto fault = g_write_fault.load()) e = fault(dir_ + "/" + key.hex() + kEntrySuffix);
  int fd = -1;
  if (!e) {
    fd = ::openat(dirfd_, out->temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, file_mode(shared_));
    if (fd < 0) e = errno;
  }
  if (!e) e = write_all(fd, bytes);
  if (!e && ::fsync(fd) != 0) e = errno;
  if (fd >= 0) ::close(fd);
  if (e) {
    ::unlinkat(dirfd_, out->temp.c_str(), 0);
    n_->write_failures++;
    if (log_) log_(kWarning, "disk cache: cannot write entry " + key.hex() + " to " + dir_ + " (" + errno_text(e) + ")");
    return false;
  }
  n_->bytes_written += bytes.size();
  return true;
}

void DiskCache::discard(const std::vector<Staged>& staged) {
  for (const Staged& s : staged) ::unlinkat(dirfd_, s.temp.c_str(), 0);
}

bool DiskCache::commit(const std::vector<Staged>& staged) {
  size_t done = 0;
  int e = 0;
  for (; done < staged.size(); ++done) {
    const std::string name = staged[done].key.hex() + kEntrySuffix;
    if (::renameat(dirfd_, staged[done].temp.c_str(), dirfd_, name.c_str()) != 0) {
      e = errno;
      break;
    }
  }
  if (e) {
    for (size_t i = 0; i < done; ++i)
      if (!staged[i].existed) ::unlinkat(dirfd_, (staged[i].key.hex() + kEntrySuffix).c_str(), 0);
    discard(std::vector<Staged>(staged.begin() + static_cast<std::ptrdiff_t>(done), staged.end()));
    n_->write_failures++;
    if (log_) log_(kWarning, "disk cache: cannot rename staged entries into " + dir_ + " (" + errno_text(e) + ")");
    return false;
  }
  ::fsync(dirfd_);
  n_->stores += staged.size();
  if (!staged.empty()) evict(staged.back().key);
  return true;
}

int DiskCache::open_sub(const char* sub, bool create) const {
  int fd = ::openat(dirfd_, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && create) {
    ::mkdirat(dirfd_, sub, shared_ ? 0750 : 0700);
    fd = ::openat(dirfd_, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd < 0) return -1;
  struct stat st;
  std::string why;
  if (::fstat(fd, &st) != 0 || !trusted(st, true, &why)) {
    if (!why.empty() && log_) log_(kWarning, "disk cache: " + dir_ + "/" + sub + " " + why + "; not used");
    ::close(fd);
    errno = EPERM;
    return -1;
  }
  return fd;
}

bool DiskCache::read_aux(const char* sub, const std::string& name, uint64_t max_bytes, std::string* out,
                         std::string* why) const {
  why->clear();
  if (!enabled_) return false;
  int dfd = open_sub(sub, false);
  if (dfd < 0) {
    if (errno != ENOENT) *why = std::string(sub) + "/ is not a directory of this user's";
    return false;
  }
  struct stat st;
  int fd = open_regular(dfd, name, true, max_bytes, &st, why);
  ::close(dfd);
  if (fd < 0) {
    if (errno == ENOENT) why->clear();
    return false;
  }
  bool ok = trusted(st, false, why);
  if (ok) {
    out->resize(static_cast<size_t>(st.st_size));
    ok = read_exact(fd, 0, out->empty() ? nullptr : &(*out)[0], out->size());
    if (!ok) *why = "it changed while being read";
  }
  ::close(fd);
  return ok;
}

bool DiskCache::write_aux(const char* sub, const std::string& name, const std::string& bytes) {
  if (!enabled_) return false;
  int dfd = open_sub(sub, true);
  if (dfd < 0) {
    if (log_) log_(kDebug, "disk cache: cannot open " + dir_ + "/" + sub + " (" + errno_text(errno) + ")");
    return false;
  }
  const char* step = "write";
  int e = write_file_at(dfd, name, bytes, file_mode(shared_), false, &step);
  ::close(dfd);
  if (e && log_)
    log_(kDebug, "disk cache: cannot write " + dir_ + "/" + sub + "/" + name + " (" + step + ": " + errno_text(e) + ")");
  return e == 0;
}

std::vector<std::string> DiskCache::names_aux(const char* sub) const {
  std::vector<std::string> out;
  if (!enabled_) return out;
  int dfd = open_sub(sub, false);
  if (dfd < 0) return out;
  std::vector<DirFile> files;
  scan(dfd, &files);
  ::close(dfd);
  for (const DirFile& f : files)
    if (f.regular) out.push_back(f.name);
  return out;
}

void DiskCache::evict(const Key& keep) {
  std::vector<DirFile> files;
  if (!scan(dirfd_, &files)) return;
  const int64_t now = now_ns();
  std::vector<std::pair<DirFile, Key>> entries;
  uint64_t total = 0;
  for (const DirFile& f : files) {
    Key k;
    if (!f.regular) continue;
    if (key_of(f.name, kEntrySuffix, &k)) {
      entries.push_back({f, k});
      total += f.bytes;
    } else if (f.name.find(kTempMark) != std::string::npos && now - f.mtime_ns > kStaleTempSeconds * 1000000000LL) {
      ::unlinkat(dirfd_, f.name.c_str(), 0);  // a writer that died between write and rename
    }
  }
  if (!max_bytes_ || total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first.mtime_ns < b.first.mtime_ns; });
  for (const auto& [f, k] : entries) {
    if (total <= max_bytes_) break;
    if (k == keep) continue;
    if (::unlinkat(dirfd_, f.name.c_str(), 0) == 0) {
      total -= f.bytes;
      n_->evictions++;
      if (log_) log_(kDebug, "disk cache: evicted " + f.name + " (least recently used; bound " +
                                 std::to_string(max_bytes_) + " bytes)");
    }
  }
}

DiskCache::Lock::~Lock() {
  // Unlinked while held: a waiter that opened this file sees, once it gets the lock, that the
  // path no longer names it, and starts over on a new file.
  ::unlinkat(dirfd_, name_.c_str(), 0);
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

std::unique_ptr<DiskCache::Lock> DiskCache::lock(const Key& key, int64_t max_wait_ms) {
  if (!enabled_) return nullptr;
  const std::string name = key.hex() + kLockSuffix;
  const std::string path = dir_ + "/" + name;
  auto start = std::chrono::steady_clock::now();
  bool waited = false;
  int sleep_us = 500;
  for (;;) {
    // Read-only is enough for flock, and lets a shared cache's members use each other's locks.
    int fd = ::openat(dirfd_, name.c_str(), O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                      file_mode(shared_));
    struct stat held;
    if (fd >= 0 && (::fstat(fd, &held) != 0 || !S_ISREG(held.st_mode))) {
      ::close(fd);
      fd = -1;
      errno = EINVAL;
    }
    if (fd < 0) {
      if (log_)
        log_(kWarning, "disk cache: cannot open lock " + path + " (" +
                           (errno == ELOOP ? std::string("a symbolic link") : errno == EINVAL ? "not a regular file"
                                                                                            : errno_text(errno)) +
                           "); compiling without it");
      return nullptr;
    }
    for (;;) {
      if (::flock(fd, LOCK_EX | LOCK_NB) == 0) break;
      if (errno != EWOULDBLOCK && errno != EINTR) {
        int e = errno;
        ::close(fd);
        if (log_) log_(kWarning, "disk cache: cannot lock " + path + " (" + errno_text(e) + "); compiling without it");
        return nullptr;
      }
      if (!waited) {
        waited = true;
        n_->lock_waits++;
      }
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
      if (ms > max_wait_ms) {
        ::close(fd);
        if (log_) log_(kWarning, "disk cache: " + path + " has been held for " + std::to_string(ms) +
                                     " ms; compiling without waiting longer");
        return nullptr;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
      sleep_us = std::min(sleep_us * 2, 20000);
    }
    // prune() removes lock files nobody holds: make sure ours is still the one at the path.
    struct stat now;
    if (::fstatat(dirfd_, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 && same_file(held, now))
      return std::unique_ptr<Lock>(new Lock(dirfd_, fd, name));
    ::close(fd);
  }
}

Status DiskCache::prune(uint64_t max_bytes, PruneResult* out) {
  *out = PruneResult();
  if (!enabled_) return Status(Code::Unsupported, "the disk cache is off");
  std::vector<DirFile> files;
  if (!scan(dirfd_, &files)) return Status(Code::Io, "cannot read directory " + dir_ + " (" + errno_text(errno) + ")");
  const int64_t now = now_ns();
  std::vector<DirFile> entries;
  uint64_t total = 0;
  for (const DirFile& f : files) {
    Key k;
    if (key_of(f.name, kEntrySuffix, &k)) {
      entries.push_back(f);
      total += f.regular ? f.bytes : 0;
    } else if (!f.regular) {
      continue;
    } else if (f.name.find(kTempMark) != std::string::npos) {
      if (now - f.mtime_ns > kStaleTempSeconds * 1000000000LL && ::unlinkat(dirfd_, f.name.c_str(), 0) == 0)
        out->temps++;
    } else if (key_of(f.name, kLockSuffix, &k)) {
      int fd = ::openat(dirfd_, f.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd >= 0) {
        struct stat held, now_st;
        if (::fstat(fd, &held) == 0 && S_ISREG(held.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) == 0 &&
            ::fstatat(dirfd_, f.name.c_str(), &now_st, AT_SYMLINK_NOFOLLOW) == 0 && same_file(held, now_st) &&
            ::unlinkat(dirfd_, f.name.c_str(), 0) == 0)
          out->locks++;
        ::close(fd);
      }
    }
  }
  // Not-regular files under an entry's name go first (they are no entries); then LRU.
  std::sort(entries.begin(), entries.end(), [](const DirFile& a, const DirFile& b) {
    return a.regular != b.regular ? !a.regular : a.mtime_ns < b.mtime_ns;
  });
  for (const DirFile& f : entries) {
    if (f.regular && total <= max_bytes) break;
    struct stat st;
    if (!f.regular && (::fstatat(dirfd_, f.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode)))
      continue;
    if (::unlinkat(dirfd_, f.name.c_str(), 0) == 0) {
      if (!f.regular) {
        n_->corrupt++;
        continue;
      }
      total -= f.bytes;
      out->entries++;
      out->bytes += f.bytes;
      n_->evictions++;
    }
  }
  return Status::ok();
}

Status DiskCache::usage(uint64_t* entries, uint64_t* bytes) const {
  *entries = *bytes = 0;
  if (!enabled_) return Status::ok();
  std::vector<DirFile> files;
  if (!scan(dirfd_, &files)) return Status(Code::Io, "cannot read directory " + dir_ + " (" + errno_text(errno) + ")");
  for (const DirFile& f : files) {
    Key k;
    if (!f.regular || !key_of(f.name, kEntrySuffix, &k)) continue;
    ++*entries;
    *bytes += f.bytes;
  }
  return Status::ok();
}

Status DiskCache::read_bytes(const Key& key, std::string* out) const {
  if (!enabled_) return Status(Code::Unsupported, "the disk cache is off");
  Entry e;
  struct stat st;
  int err = 0;
  Status s = read_entry(key.hex() + kEntrySuffix, key, out, &e, &st, &err);
  if (!s.is_ok()) return Status(s.code(), entry_path(key) + ": " + s.message());
  return Status::ok();
}

Status DiskCache::list(bool verify, std::vector<EntryInfo>* out) {
  out->clear();
  if (!enabled_) return Status(Code::Unsupported, "the disk cache is off");
  std::vector<DirFile> files;
  if (!scan(dirfd_, &files)) return Status(Code::Io, "cannot read directory " + dir_ + " (" + errno_text(errno) + ")");
  for (const DirFile& f : files) {
    EntryInfo info;
    if (!key_of(f.name, kEntrySuffix, &info.key)) continue;
    info.bytes = f.bytes;
    info.last_use = f.mtime_ns / 1000000000;
    std::string bytes;
    Entry e;
    struct stat st;
    st.st_ino = 0;
    int err = 0;
    Status s = read_entry(f.name, info.key, &bytes, &e, &st, &err);
    if (err == ENOENT) continue;  // removed since the scan
    if (s.is_ok()) {
      info.kind = e.kind;
      info.metadata = e.metadata;
    } else {
      info.ok = false;
      info.problem = s.message();
      if (verify) {
        struct stat now;
        if (::fstatat(dirfd_, f.name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(now.st_mode) &&
            (!st.st_ino || same_file(now, st)) && ::unlinkat(dirfd_, f.name.c_str(), 0) == 0)
          n_->corrupt++;
      }
    }
    out->push_back(std::move(info));
  }
  std::sort(out->begin(), out->end(), [](const EntryInfo& a, const EntryInfo& b) {
    return a.key.hi != b.key.hi ? a.key.hi < b.key.hi : a.key.lo < b.key.lo;
  });
  return Status::ok();
}

}  // namespace tri::cache
