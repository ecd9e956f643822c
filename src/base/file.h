// Files Tri reads and writes on its own account (cache entries, request shortcuts, tuning results,
// bundles, the cache's secret): opened without blocking and, inside a directory Tri keeps, without
// following symbolic links, refused unless they are regular files, bounded in size before a byte
// is read, created relative to the directory's descriptor with O_EXCL | O_NOFOLLOW, and written
// with SIGXFSZ held off, so a FIFO, a device, a symlink, a sparse giant or RLIMIT_FSIZE can only
// make a read a miss or a write a counted failure, never a hang, a write outside the directory, an
// allocation of the file's size or the host's death.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "base/status.h"

namespace tri {

// ---- reading

// Opens `name` (relative to the directory descriptor `dirfd`, or AT_FDCWD for a path) read-only,
// non-blocking and close-on-exec; with `nofollow` a symbolic link is refused (ELOOP). The file
// must be a regular file of at most `max_bytes`: a FIFO, socket, device or directory is refused
// before anything is read from it. Returns the descriptor with *st filled, or -1 with *why set
// ("not a regular file (a FIFO)", "6442450944 bytes, more than the 268435456 allowed",
// "No such file or directory") and errno kept.
int open_regular(int dirfd, const std::string& name, bool nofollow, uint64_t max_bytes, struct stat* st,
                 std::string* why);

// Reads exactly `n` bytes at `offset` of `fd` into `buf`; false when the file ends first (it
// shrank) or a read fails.
bool read_exact(int fd, uint64_t offset, void* buf, size_t n);

// The whole of a regular file of at most max_bytes (open_regular's rules); false with *why.
bool read_regular(int dirfd, const std::string& name, bool nofollow, uint64_t max_bytes, std::string* out,
                  std::string* why);

// A user-named input file (a bundle, a tuning export): symbolic links are followed, the rest as
// read_regular. Code::Io naming `what` and the path when it cannot be read.
Status read_user_file(const std::string& path, uint64_t max_bytes, const char* what, std::string* out);

// The type of a file for messages: "a FIFO", "a directory", "a symbolic link", ...
const char* file_type_name(mode_t mode);

// ---- writing

// Holds SIGXFSZ off for the calling thread while it lives: a write past RLIMIT_FSIZE then fails
// with EFBIG instead of killing the process (the signal's default action). On destruction a
// SIGXFSZ that this thread's writes raised meanwhile is taken off the pending set, and the
// thread's signal mask is restored.
class NoSigxfsz {
 public:
  NoSigxfsz();
  ~NoSigxfsz();
  NoSigxfsz(const NoSigxfsz&) = delete;
  NoSigxfsz& operator=(const NoSigxfsz&) = delete;

 private:
  bool blocked_ = false;       // SIGXFSZ was not blocked before: restore and drain
  bool was_pending_ = false;   // one was pending already: leave it for the host
};

// Writes all of `bytes` to `fd` at its offset, with SIGXFSZ held off and RLIMIT_FSIZE checked
// first; 0 or the errno (EFBIG past the file size limit, ENOSPC, EIO).
int write_all(int fd, const std::string& bytes);

// Writes `bytes` as `name` in the directory `dirfd`: a temporary file beside it made with
// O_CREAT | O_EXCL | O_NOFOLLOW and `mode`, written (write_all), fsync'd when `sync`, then renamed
// over `name` (renameat replaces a symbolic link, never writes through it). 0, or the errno of
// the step that failed with *step naming it ("open", "write", "fsync", "rename"); the temporary
// file is removed on failure.
int write_file_at(int dirfd, const std::string& name, const std::string& bytes, mode_t mode, bool sync,
                  const char** step = nullptr);

// A user-named output file (a bundle, a tuning export): written beside it and renamed into place
// as write_file_at does. An existing `path` that is not a regular file (a device, a FIFO, a
// directory, a symbolic link) is refused with Code::InvalidArgument and left as it is; a failed
// write is Code::Io. `what` names the calling function in messages.
Status write_user_file(const std::string& path, const std::string& bytes, const char* what);

}  // namespace tri
