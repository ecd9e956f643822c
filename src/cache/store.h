// The disk cache's directory layer (DiskCache): one entry file per key (<32 hex>.entry, the
// format of entry.h), written to a temporary file in the same directory, fsync'd and renamed into
// place, so a reader sees a whole entry or none. Everything read is validated; a corrupt,
// truncated, foreign or stale entry is a miss (logged, counted, and removed so that the next
// compile rewrites it), never a crash and never wrong code.
//
// Size: entries are evicted least recently used first (a hit sets the entry's mtime, which is
// the order) when an insert takes the directory past its bound. Single flight: a compile of a
// key holds <hex>.lock with flock, so N processes (or threads) that miss on the same key compile
// it once and the others wait and then read the entry; the kernel drops a crashed holder's lock.
//
// Failure model: the cache never makes a compile fail. A directory that cannot be made or
// written turns the cache off (one log line); a write that fails (a full disk) is logged,
// counted and leaves no partial file behind (a process killed between write and rename leaves a
// temporary file, which a later prune or insert removes once it is older than kStaleTempSeconds).
//
// Threads: every method may be called from many threads at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "cache/entry.h"
#include "cache/key.h"

namespace tri::cache {

constexpr uint64_t kDefaultMaxBytes = 1ull << 30;  // 1 GiB
constexpr int64_t kStaleTempSeconds = 10 * 60;

// Log levels as tri.h numbers them (TRI_LOG_ERROR .. TRI_LOG_DEBUG).
enum Level : int { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };
using LogFn = std::function<void(int level, const std::string& message)>;

// Where a context's cache lives. `option_set` and `option` are the context's cache directory
// option: set to "" turns the cache off; unset falls to $TRI_CACHE_DIR, then
// $XDG_CACHE_HOME/tri, then $HOME/.cache/tri. `from` names the source for messages. path empty:
// no disk cache (`from` says why).
struct DirChoice {
  std::string path;
  std::string from;
};
DirChoice resolve_dir(bool option_set, const std::string& option);

struct Stats {
  uint64_t hits = 0;            // lookups that returned a valid entry
  uint64_t misses = 0;          // lookups that did not (absent or unusable)
  uint64_t stores = 0;          // entries written
  uint64_t bytes_read = 0;      // bytes of entry files read on hits
  uint64_t bytes_written = 0;   // bytes of entry files written
  uint64_t evictions = 0;       // entries removed to keep the size bound
  uint64_t corrupt = 0;         // unusable entries found (and removed)
  uint64_t write_failures = 0;  // inserts that failed (full disk, I/O error)
  uint64_t lock_waits = 0;      // compiles that waited for another holder of their key's lock
};

// One file of the directory, as list() reports it.
struct EntryInfo {
  Key key;
  uint64_t bytes = 0;
  int64_t last_use = 0;  // mtime, seconds since the epoch
  bool ok = true;        // false: the file does not decode (problem says why)
  std::string problem;
  std::string kind;      // from the header (valid entries only)
  std::string metadata;
};

class DiskCache {
 public:
  // Opens `dir` (made with its parents when missing) with a size bound (0: no bound). Never
  // fails: when the directory cannot be made or written the cache is off, which `log` hears once
  // at warning level.
  DiskCache(const std::string& dir, uint64_t max_bytes, LogFn log);
  ~DiskCache();
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  bool enabled() const { return enabled_; }
  const std::string& dir() const { return dir_; }
  uint64_t max_bytes() const { return max_bytes_; }

  // The entry for `key`: true with *out on a valid one (counted in `hits`). An unusable file is
  // logged, counted in `corrupt` and removed (unless another process replaced it meanwhile).
  // count_miss false: a miss is not counted (a first look before taking the key's lock; the look
  // after it counts).
  bool lookup(const Key& key, Entry* out, bool count_miss = true);
  // Sends a line to the log this cache was made with.
  void log(int level, const std::string& message) const {
    if (log_) log_(level, message);
  }
  // Writes an entry atomically (replacing any file of its key), then evicts to the bound. false
  // (logged, counted) when it could not be written; nothing partial is left behind.
  bool insert(const Entry& e);
  // The same with an entry's encoded bytes (bundles).
  bool insert_bytes(const Key& key, const std::string& bytes);

  // Holds <hex>.lock exclusively until destroyed (which removes the file, so a directory holds
  // lock files only while compiles run, or where a holder crashed; prune removes those). Waits
  // while another thread or process holds
  // it (polling; after `max_wait_ms` it gives up and returns a null lock, logged: the caller
  // compiles without single flight). Null too when the cache is off.
  class Lock {
   public:
    ~Lock();
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;

   private:
    friend class DiskCache;
    Lock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
    int fd_;
    std::string path_;
  };
  std::unique_ptr<Lock> lock(const Key& key, int64_t max_wait_ms = 300000);

  // Removes entries, least recently used first, until they take at most `max_bytes`; temporary
  // files older than kStaleTempSeconds; lock files nobody holds; and files that are neither
  // entries, temporaries nor locks of this cache are left alone. Counts what it removed.
  struct PruneResult {
    uint64_t entries = 0, bytes = 0, temps = 0, locks = 0;
  };
  Status prune(uint64_t max_bytes, PruneResult* out);
  // Every entry file (sorted by key), each decoded and checked in full. verify: also remove the
  // bad ones (counted in `corrupt`).
  Status list(bool verify, std::vector<EntryInfo>* out);
  // Entries in the directory and their bytes (a scan).
  Status usage(uint64_t* entries, uint64_t* bytes) const;
  // The encoded bytes of one entry file, validated against its key (bundles).
  Status read_bytes(const Key& key, std::string* out) const;

  Stats stats() const;

  // Test hook: when set, called before every write of an entry file with its temporary path;
  // a nonzero errno value makes the write fail as if the system had returned it (ENOSPC: a
  // full disk). Process-wide; tests only.
  static void set_write_fault(int (*fault)(const std::string& path));

 private:
  std::string entry_path(const Key& key) const;
  bool write_file(const std::string& final_path, const std::string& bytes, const std::string& what);
  void evict(const Key& keep);

  std::string dir_;
  uint64_t max_bytes_;
  LogFn log_;
  bool enabled_ = false;
  struct Counters;
  std::unique_ptr<Counters> n_;
};

}  // namespace tri::cache
