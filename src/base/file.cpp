// Safe reads and all-or-nothing writes of the files Tri keeps (file.h).
#include "base/file.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>

namespace tri {

namespace {

std::atomic<uint64_t> g_temp_counter{0};

}  // namespace

const char* file_type_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

int open_regular(int dirfd, const std::string& name, bool nofollow, uint64_t max_bytes, struct stat* st,
                 std::string* why) {
  int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0);
  int fd = ::openat(dirfd, name.c_str(), flags);
  if (fd < 0) {
    int e = errno;
    *why = e == ELOOP && nofollow ? "a symbolic link (not followed)" : std::strerror(e);
    errno = e;
    return -1;
  }
  if (::fstat(fd, st) != 0) {
    int e = errno;
    *why = std::strerror(e);
    ::close(fd);
    errno = e;
    return -1;
  }
  if (!S_ISREG(st->st_mode)) {
    *why = std::string("not a regular file (") + file_type_name(st->st_mode) + ")";
    ::close(fd);
    errno = EINVAL;
    return -1;
  }
  if (static_cast<uint64_t>(st->st_size) > max_bytes) {
    *why = std::to_string(static_cast<uint64_t>(st->st_size)) + " bytes, more than the " + std::to_string(max_bytes) +
           " such a file may have";
    ::close(fd);
    errno = EFBIG;
    return -1;
  }
  return fd;
}

bool read_exact(int fd, uint64_t offset, void* buf, size_t n) {
  char* p = static_cast<char*>(buf);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, p + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno == EAGAIN) continue;  // O_NONBLOCK on a regular file: does not happen; retry
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

bool read_regular(int dirfd, const std::string& name, bool nofollow, uint64_t max_bytes, std::string* out,
                  std::string* why) {
  struct stat st;
  int fd = open_regular(dirfd, name, nofollow, max_bytes, &st, why);
  if (fd < 0) return false;
  out->assign(static_cast<size_t>(st.st_size), '\0');
  bool ok = read_exact(fd, 0, out->empty() ? nullptr : &(*out)[0], out->size());
  ::close(fd);
  if (!ok) *why = "it changed while being read";
  return ok;
}

Status read_user_file(const std::string& path, uint64_t max_bytes, const char* what, std::string* out) {
  std::string why;
  if (!read_regular(AT_FDCWD, path, false, max_bytes, out, &why))
    return Status(Code::Io, std::string(what) + ": cannot read '" + path + "': " + why);
  return Status::ok();
}

NoSigxfsz::NoSigxfsz() {
  sigset_t x, old;
  sigemptyset(&x);
  sigaddset(&x, SIGXFSZ);
  if (pthread_sigmask(SIG_BLOCK, &x, &old) != 0) return;
  if (sigismember(&old, SIGXFSZ)) return;  // blocked already: the host's business
  blocked_ = true;
  sigset_t pending;
  if (sigpending(&pending) == 0) was_pending_ = sigismember(&pending, SIGXFSZ);
}

NoSigxfsz::~NoSigxfsz() {
  if (!blocked_) return;
  sigset_t x;
  sigemptyset(&x);
  sigaddset(&x, SIGXFSZ);
  if (!was_pending_) {
    // The kernel sends SIGXFSZ to the thread that wrote: take it back before unblocking, so its
    // default action (end the process) never runs for a write Tri already counted as failed.
    struct timespec zero = {0, 0};
    sigset_t pending;
    while (sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ)) {
      if (sigtimedwait(&x, nullptr, &zero) < 0 && errno != EINTR) break;
    }
  }
  pthread_sigmask(SIG_UNBLOCK, &x, nullptr);
}

int write_all(int fd, const std::string& bytes) {
  struct rlimit rl;
  if (::getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      static_cast<uint64_t>(bytes.size()) > static_cast<uint64_t>(rl.rlim_cur))
    return EFBIG;
  NoSigxfsz hold;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    if (w == 0) return ENOSPC;
    done += static_cast<size_t>(w);
  }
  return 0;
}

int write_file_at(int dirfd, const std::string& name, const std::string& bytes, mode_t mode, bool sync,
                  const char** step) {
  const char* dummy;
  if (!step) step = &dummy;
  const std::string tmp = name + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(g_temp_counter++);
  *step = "open";
  int fd = ::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode);
  if (fd < 0) return errno ? errno : EIO;
  int e = write_all(fd, bytes);
  if (e) *step = "write";
  if (!e && sync && ::fsync(fd) != 0) e = errno ? errno : EIO, *step = "fsync";
  if (::close(fd) != 0 && !e) e = errno ? errno : EIO, *step = "close";
  if (!e && ::renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) != 0) e = errno ? errno : EIO, *step = "rename";
  if (e) ::unlinkat(dirfd, tmp.c_str(), 0);
  return e;
}

Status write_user_file(const std::string& path, const std::string& bytes, const char* what) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return Status(Code::InvalidArgument, std::string(what) + ": '" + path + "' is " + file_type_name(st.st_mode) +
                                             ", not a regular file; name a regular file or a new path");
  std::string dir = ".", name = path;
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos) {
    dir = slash == 0 ? "/" : path.substr(0, slash);
    name = path.substr(slash + 1);
  }
  if (name.empty()) return Status(Code::InvalidArgument, std::string(what) + ": '" + path + "' names no file");
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return Status(Code::Io, std::string(what) + ": cannot write '" + path + "': " + std::strerror(errno));
  const char* step = "";
  int e = write_file_at(dfd, name, bytes, 0644, false, &step);
  ::close(dfd);
  if (e) return Status(Code::Io, std::string(what) + ": cannot write '" + path + "' (" + step + ": " + std::strerror(e) + ")");
  return Status::ok();
}

}  // namespace tri
