// The disk cache's directory layer (DiskCache): one entry file per key (<32 hex>.entry, the
// format of entry.h), written to a temporary file in the same directory, fsync'd and renamed into
// place, so a reader sees a whole entry or none. Everything read is validated; a corrupt,
// truncated, foreign, stale or forged entry is a miss (logged, counted, and removed so that the
// next compile rewrites it), never a crash and never wrong code.
//
// Trust (docs/cache.md, "Trust"): the directory is private by default: made 0700, and refused
// (the cache is off, with a warning) when another user owns it or its group or others may write
// it, as ssh refuses its keys; every file Tri reads from it must be owned by this user (or root)
// and writable by nobody else. Every entry carries a MAC keyed with the cache's secret, 32 random
// bytes in <dir>/cache.key (mode 0600, made on first use), so bytes that Tri did not write with
// that secret never load. A shared cache (an explicit option) accepts a directory and files of
// its group and trusts every user who can read the secret.
//
// Files: every file is opened relative to the directory's descriptor, without following
// symbolic links and without blocking, and must be a regular file within its size bound
// (base/file.h); files are made with O_EXCL | O_NOFOLLOW, so a FIFO, a device, a symlink or a
// sparse giant in the directory is a miss (counted), never a hang, a write outside the
// directory or an allocation of its size.
//
// Size: entries are evicted least recently used first (a hit sets the entry's mtime, which is
// the order) when an insert takes the directory past its bound. Single flight: a compile of a
// key holds <hex>.lock with flock, so N processes (or threads) that miss on the same key compile
// it once and the others wait and then read the entry; the kernel drops a crashed holder's lock.
//
// Failure model: the cache never makes a compile fail. A directory that cannot be made, written
// or trusted turns the cache off (one log line); a write that fails (a full disk, RLIMIT_FSIZE)
// is logged, counted and leaves no partial file behind (a process killed between write and
// rename leaves a temporary file, which a later prune or insert removes once it is older than
// kStaleTempSeconds).
//
// Threads: every method may be called from many threads at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <sys/stat.h>
#include <string>
#include <vector>

#include "base/status.h"
#include "cache/crypto.h"
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
  uint64_t hits = 0;            // lookups that returned a valid entry (compiles: loaded it)
  uint64_t misses = 0;          // lookups that did not (absent or unusable; compiles: compiled)
  uint64_t stores = 0;          // entries written
  uint64_t bytes_read = 0;      // bytes of entry files read on hits
  uint64_t bytes_written = 0;   // bytes of entry files written
  uint64_t evictions = 0;       // entries removed to keep the size bound
  uint64_t corrupt = 0;         // unusable entry files found (and removed): damaged, forged, foreign,
                                // not a regular file, too large, not owned by this user
  uint64_t write_failures = 0;  // inserts that failed (full disk, I/O error)
  uint64_t lock_waits = 0;      // compiles that waited for another holder of their key's lock
};

// One file of the directory, as list() reports it.
struct EntryInfo {
  Key key;
  uint64_t bytes = 0;
  int64_t last_use = 0;  // mtime, seconds since the epoch
  bool ok = true;        // false: the file is unusable (problem says why)
  std::string problem;
  std::string kind;      // from the header (valid entries only)
  std::string metadata;
};

class DiskCache {
 public:
  // Opens `dir` (made 0700 with its parents when missing) with a size bound (0: no bound). Never
  // fails: when the directory cannot be made, written or trusted (the rules above; `shared`
  // relaxes them to the directory's group), or its secret cannot be read or made, the cache is
  // off, which `log` hears once at warning level.
  DiskCache(const std::string& dir, uint64_t max_bytes, LogFn log, bool shared = false);
  ~DiskCache();
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  bool enabled() const { return enabled_; }
  bool shared() const { return shared_; }
  const std::string& dir() const { return dir_; }
  uint64_t max_bytes() const { return max_bytes_; }
  // The secret that seals this cache's entries and shortcuts (null when the cache is off).
  const MacKey* secret() const { return enabled_ ? &secret_ : nullptr; }

  // The entry for `key`: true with *out on a valid one. An unusable file is logged, counted in
  // `corrupt` and removed (unless another process replaced it meanwhile). count: true counts the
  // result as a hit or a miss; false counts neither (a compile looks more than once and counts
  // its one outcome with count_hit / count_miss). *file_bytes (may be null) receives the
  // entry file's size.
  bool lookup(const Key& key, Entry* out, bool count = true, uint64_t* file_bytes = nullptr);
  void count_hit(uint64_t file_bytes);
  void count_miss();
  // An entry that decoded but turned out unusable (its target could not load it): counted in
  // `corrupt`, logged and removed, so the compile that follows rewrites it.
  void reject(const Key& key, const std::string& why);
  // Sends a line to the log this cache was made with.
  void log(int level, const std::string& message) const {
    if (log_) log_(level, message);
  }
  // Writes an entry atomically (replacing any file of its key), then evicts to the bound. false
  // (logged, counted) when it could not be written; nothing partial is left behind.
  bool insert(const Entry& e);
  // The same with an entry's encoded bytes, sealed with secret().
  bool insert_bytes(const Key& key, const std::string& bytes);

  // All-or-nothing inserts (bundle import): stage() writes sealed entry bytes to a temporary file
  // of the directory, which no lookup reads, and returns its name ("" when it cannot: logged,
  // counted); commit() renames every staged file into place, or, when a rename fails, removes
  // what it renamed that was not there before and every staged file, and returns false;
  // discard() removes staged files.
  struct Staged {
    Key key;
    std::string temp;
    bool existed = false;
  };
  bool stage(const Key& key, const std::string& bytes, Staged* out);
  bool commit(const std::vector<Staged>& staged);
  void discard(const std::vector<Staged>& staged);

  // Files beside the entries, in the subdirectory `sub` ("front": request shortcuts, "tune":
  // tuning results): read_aux reads `name` under the same rules as entries (a regular file of at
  // most max_bytes that this user owns; no symlink followed) and is false with *why (empty when
  // the file does not exist); write_aux writes it atomically (making `sub` when missing), false
  // when it cannot (logged at debug level: these files are hints); names_aux lists `sub`.
  bool read_aux(const char* sub, const std::string& name, uint64_t max_bytes, std::string* out,
                std::string* why) const;
  bool write_aux(const char* sub, const std::string& name, const std::string& bytes);
  std::vector<std::string> names_aux(const char* sub) const;

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
    Lock(int dirfd, int fd, std::string name) : dirfd_(dirfd), fd_(fd), name_(std::move(name)) {}
    int dirfd_;
    int fd_;
    std::string name_;
  };
  std::unique_ptr<Lock> lock(const Key& key, int64_t max_wait_ms = 300000);

  // Removes entries, least recently used first, until they take at most `max_bytes`; temporary
  // files older than kStaleTempSeconds; lock files nobody holds; and files that are neither
  // entries, temporaries nor locks of this cache are left alone. Counts what it removed.
  struct PruneResult {
    uint64_t entries = 0, bytes = 0, temps = 0, locks = 0;
  };
  Status prune(uint64_t max_bytes, PruneResult* out);
  // Every entry file (sorted by key), each decoded and checked in full; one unusable file (a
  // FIFO, a giant, a symlink, damage) is listed as bad and never stops the listing. verify: also
  // remove the bad ones (counted in `corrupt`).
  Status list(bool verify, std::vector<EntryInfo>* out);
  // Entries in the directory and their bytes (a scan).
  Status usage(uint64_t* entries, uint64_t* bytes) const;
  // The encoded bytes of one entry file, validated against its key and secret() (bundles).
  Status read_bytes(const Key& key, std::string* out) const;

  Stats stats() const;

  // Test hook: when set, called before every write of an entry file with its final path;
  // a nonzero errno value makes the write fail as if the system had returned it (ENOSPC: a
  // full disk). Process-wide; tests only.
  static void set_write_fault(int (*fault)(const std::string& path));

 private:
  // The constructor's work: make and open the directory, check it, read or make the secret;
  // turn_off says why not (once, at warning level) and leaves the cache off.
  void open_dir();
  void turn_off(const std::string& why, const std::string& fix);
  std::string entry_path(const Key& key) const;
  // Reads and checks entry file `name` (the lookup's rules) without counting; *st receives its
  // stat when it could be opened, *open_errno the errno when it could not (0 when it could).
  Status read_entry(const std::string& name, const Key& key, std::string* bytes, Entry* out, struct stat* st,
                    int* open_errno) const;
  // Counts, logs and removes an unusable entry file (only when `name` still names the file
  // `st` describes; st null: whatever is there).
  void unusable(const std::string& name, const struct stat* st, const std::string& why);
  // Whether a file (or, dir, the directory) may be trusted: owned by this user or root (shared:
  // anyone) and writable by nobody else (shared: by no one outside its group); *why when not.
  bool trusted(const struct stat& st, bool dir, std::string* why) const;
  bool load_secret(std::string* why);
  int open_sub(const char* sub, bool create) const;
  void evict(const Key& keep);

  std::string dir_;
  uint64_t max_bytes_;
  LogFn log_;
  bool shared_ = false;
  bool enabled_ = false;
  int dirfd_ = -1;
  MacKey secret_{};
  struct Counters;
  std::unique_ptr<Counters> n_;
};

}  // namespace tri::cache
