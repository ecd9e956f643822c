// DiskCache: entry files, atomic writes, lookups that validate, LRU eviction, flock single
// flight, prune and listing (see store.h).
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
#include <cstdlib>
#include <cstring>
#include <thread>

namespace tri::cache {

namespace {

std::atomic<int (*)(const std::string&)> g_write_fault{nullptr};
std::atomic<uint64_t> g_temp_counter{0};

const char kEntrySuffix[] = ".entry";
const char kLockSuffix[] = ".lock";
const char kTempMark[] = ".tmp.";

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

// Makes `dir` and its parents; false with errno set when it cannot.
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
  if (::mkdir(dir.c_str(), 0777) == 0 || errno == EEXIST) return true;
  return false;
}

bool read_fd(int fd, std::string* out) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return false;
  out->assign(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < out->size()) {
    ssize_t r = ::read(fd, &(*out)[got], out->size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  out->resize(got);  // a file that shrank while we read it fails its checksum
  return true;
}

struct DirFile {
  std::string name;
  uint64_t bytes;
  int64_t mtime_ns;
};

// The names and stats of the directory's regular files.
bool scan(const std::string& dir, std::vector<DirFile>* out) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return false;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    out->push_back({name, static_cast<uint64_t>(st.st_size),
                    static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec});
  }
  ::closedir(d);
  return true;
}

int64_t now_ns() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

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

DiskCache::DiskCache(const std::string& dir, uint64_t max_bytes, LogFn log)
    : dir_(dir), max_bytes_(max_bytes), log_(std::move(log)), n_(std::make_unique<Counters>()) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  auto off = [&](const std::string& why) {
    if (log_)
      log_(kWarning, "disk cache off: " + why +
                         "; kernels are compiled in memory only (point TRI_CACHE_DIR or "
                         "tri_context_options_set_cache_dir at a writable directory)");
  };
  if (dir_.empty()) return;
  if (!make_dirs(dir_)) {
    off("cannot make directory " + dir_ + " (" + errno_text(errno) + ")");
    return;
  }
  // A probe file tells a writable directory from a read-only one (access() says yes to root).
  std::string probe = dir_ + "/.probe" + kTempMark + std::to_string(::getpid()) + "." +
                      std::to_string(g_temp_counter.fetch_add(1));
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    off("directory " + dir_ + " is not writable (" + errno_text(errno) + ")");
    return;
  }
  ::close(fd);
  ::unlink(probe.c_str());
  enabled_ = true;
}

DiskCache::~DiskCache() = default;

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

bool DiskCache::lookup(const Key& key, Entry* out, bool count_miss) {
  if (!enabled_) return false;
  const std::string path = entry_path(key);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT && log_) log_(kWarning, "disk cache: cannot open " + path + " (" + errno_text(errno) + ")");
    if (count_miss) n_->misses++;
    return false;
  }
  std::string bytes;
  struct stat st;
  bool read_ok = read_fd(fd, &bytes) && ::fstat(fd, &st) == 0;
  Status s = read_ok ? decode_entry(bytes, key, out) : Status(Code::Io, "cannot read it");
  if (s.is_ok()) {
    ::futimens(fd, nullptr);  // marks the entry used (the LRU order); a read-only file stays as is
    ::close(fd);
    n_->hits++;
    n_->bytes_read += bytes.size();
    return true;
  }
  if (count_miss) n_->misses++;
  n_->corrupt++;
  // Remove the file only when it is still the one we read: another process may have just
  // renamed a good entry into its place.
  struct stat now;
  bool same = read_ok && ::stat(path.c_str(), &now) == 0 && now.st_ino == st.st_ino && now.st_dev == st.st_dev;
  if (same) ::unlink(path.c_str());
  ::close(fd);
  if (log_) log_(kWarning, "disk cache: " + path + " is unusable (" + s.message() + "); removed, it will be rewritten");
  return false;
}

bool DiskCache::write_file(const std::string& final_path, const std::string& bytes, const std::string& what) {
  const std::string tmp = final_path + kTempMark + std::to_string(::getpid()) + "." +
                          std::to_string(g_temp_counter.fetch_add(1));
  auto fail = [&](int e, const char* step) {
    ::unlink(tmp.c_str());
    n_->write_failures++;
    if (log_)
      log_(kWarning, "disk cache: cannot write " + what + " to " + final_path + " (" + step + ": " + errno_text(e) +
                         "); the kernel is compiled but not stored");
    return false;
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return fail(errno, "open");
  int injected = 0;
  if (auto fault = g_write_fault.load()) injected = fault(tmp);
  size_t done = 0;
  while (!injected && done < bytes.size()) {
    ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      injected = errno;
      break;
    }
    if (w == 0) {
      injected = ENOSPC;
      break;
    }
    done += static_cast<size_t>(w);
  }
  if (injected) {
    ::close(fd);
    return fail(injected, "write");
  }
  if (::fsync(fd) != 0) {
    int e = errno;
    ::close(fd);
    return fail(e, "fsync");
  }
  if (::close(fd) != 0) return fail(errno, "close");
  if (::rename(tmp.c_str(), final_path.c_str()) != 0) return fail(errno, "rename");
  // The rename is durable once the directory is synced; a crash before that loses the entry,
  // never leaves a partial one.
  int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return true;
}

bool DiskCache::insert(const Entry& e) {
  if (!enabled_) return false;
  std::string bytes;
  Status s = encode_entry(e, &bytes);
  if (!s.is_ok()) {
    n_->write_failures++;
    if (log_) log_(kWarning, "disk cache: " + s.message());
    return false;
  }
  return insert_bytes(e.key, bytes);
}

bool DiskCache::insert_bytes(const Key& key, const std::string& bytes) {
  if (!enabled_) return false;
  if (!write_file(entry_path(key), bytes, "entry " + key.hex())) return false;
  n_->stores++;
  n_->bytes_written += bytes.size();
  if (log_) log_(kDebug, "disk cache: stored " + entry_path(key) + " (" + std::to_string(bytes.size()) + " bytes)");
  evict(key);
  return true;
}

void DiskCache::evict(const Key& keep) {
  std::vector<DirFile> files;
  if (!scan(dir_, &files)) return;
  const int64_t now = now_ns();
  std::vector<std::pair<DirFile, Key>> entries;
  uint64_t total = 0;
  for (const DirFile& f : files) {
    Key k;
    if (key_of(f.name, kEntrySuffix, &k)) {
      entries.push_back({f, k});
      total += f.bytes;
    } else if (f.name.find(kTempMark) != std::string::npos && now - f.mtime_ns > kStaleTempSeconds * 1000000000LL) {
      ::unlink((dir_ + "/" + f.name).c_str());  // a writer that died between write and rename
    }
  }
  if (!max_bytes_ || total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first.mtime_ns < b.first.mtime_ns; });
  for (const auto& [f, k] : entries) {
    if (total <= max_bytes_) break;
    if (k == keep) continue;
    if (::unlink((dir_ + "/" + f.name).c_str()) == 0) {
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
  ::unlink(path_.c_str());
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

std::unique_ptr<DiskCache::Lock> DiskCache::lock(const Key& key, int64_t max_wait_ms) {
  if (!enabled_) return nullptr;
  const std::string path = dir_ + "/" + key.hex() + kLockSuffix;
  auto start = std::chrono::steady_clock::now();
  bool waited = false;
  int sleep_us = 500;
  for (;;) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      if (log_) log_(kWarning, "disk cache: cannot open lock " + path + " (" + errno_text(errno) + "); compiling without it");
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
    struct stat held, now;
    if (::fstat(fd, &held) == 0 && ::stat(path.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
        held.st_dev == now.st_dev)
      return std::unique_ptr<Lock>(new Lock(fd, path));
    ::close(fd);
  }
}

Status DiskCache::prune(uint64_t max_bytes, PruneResult* out) {
  *out = PruneResult();
  if (!enabled_) return Status(Code::Unsupported, "the disk cache is off");
  std::vector<DirFile> files;
  if (!scan(dir_, &files)) return Status(Code::Io, "cannot read directory " + dir_ + " (" + errno_text(errno) + ")");
  const int64_t now = now_ns();
  std::vector<DirFile> entries;
  uint64_t total = 0;
  for (const DirFile& f : files) {
    Key k;
    const std::string path = dir_ + "/" + f.name;
    if (key_of(f.name, kEntrySuffix, &k)) {
      entries.push_back(f);
      total += f.bytes;
    } else if (f.name.find(kTempMark) != std::string::npos) {
      if (now - f.mtime_ns > kStaleTempSeconds * 1000000000LL && ::unlink(path.c_str()) == 0) out->temps++;
    } else if (key_of(f.name, kLockSuffix, &k)) {
      int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
      if (fd >= 0) {
        struct stat held, now;
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::fstat(fd, &held) == 0 && ::stat(path.c_str(), &now) == 0 &&
            held.st_ino == now.st_ino && held.st_dev == now.st_dev && ::unlink(path.c_str()) == 0)
          out->locks++;
        ::close(fd);
      }
    }
  }
  std::sort(entries.begin(), entries.end(), [](const DirFile& a, const DirFile& b) { return a.mtime_ns < b.mtime_ns; });
  for (const DirFile& f : entries) {
    if (total <= max_bytes) break;
    if (::unlink((dir_ + "/" + f.name).c_str()) == 0) {
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
  if (!scan(dir_, &files)) return Status(Code::Io, "cannot read directory " + dir_ + " (" + errno_text(errno) + ")");
  for (const DirFile& f : files) {
    Key k;
    if (!key_of(f.name, kEntrySuffix, &k)) continue;
    ++*entries;
    *bytes += f.bytes;
  }
  return Status::ok();
}

Status DiskCache::read_bytes(const Key& key, std::string* out) const {
  const std::string path = entry_path(key);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(Code::Io, "cannot open " + path + " (" + errno_text(errno) + ")");
  bool ok = read_fd(fd, out);
  ::close(fd);
  if (!ok) return Status(Code::Io, "cannot read " + path);
  Entry e;
  return decode_entry(*out, key, &e);
}

Status DiskCache::list(bool verify, std::vector<EntryInfo>* out) {
  out->clear();
  if (!enabled_) return Status(Code::Unsupported, "the disk cache is off");
  std::vector<DirFile> files;
  if (!scan(dir_, &files)) return Status(Code::Io, "cannot read directory " + dir_ + " (" + errno_text(errno) + ")");
  for (const DirFile& f : files) {
    EntryInfo info;
    if (!key_of(f.name, kEntrySuffix, &info.key)) continue;
    info.bytes = f.bytes;
    info.last_use = f.mtime_ns / 1000000000;
    std::string bytes;
    const std::string path = dir_ + "/" + f.name;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || !read_fd(fd, &bytes)) {
      info.ok = false;
      info.problem = "cannot read it (" + errno_text(errno) + ")";
    } else {
      Entry e;
      Status s = decode_entry(bytes, info.key, &e);
      if (s.is_ok()) {
        info.kind = e.kind;
        info.metadata = e.metadata;
      } else {
        info.ok = false;
        info.problem = s.message();
        if (verify) {
          n_->corrupt++;
          ::unlink(path.c_str());
        }
      }
    }
    if (fd >= 0) ::close(fd);
    out->push_back(std::move(info));
  }
  std::sort(out->begin(), out->end(), [](const EntryInfo& a, const EntryInfo& b) {
    return a.key.hi != b.key.hi ? a.key.hi < b.key.hi : a.key.lo < b.key.lo;
  });
  return Status::ok();
}

}  // namespace tri::cache
