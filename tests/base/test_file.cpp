// Safe reads and all-or-nothing writes (src/base/file.cpp): round trips; a FIFO, a device, a
// symlink and a sparse giant are refused before a byte is read (no hang, no allocation of the
// file's size); a user-named destination that is not a regular file is left as it is; creates
// never follow a symlink; and a write past RLIMIT_FSIZE fails with EFBIG instead of killing the
// process with SIGXFSZ (issue 29, points 1, 5, 8, 9 and 10).
#include "base/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "test_main.h"

using namespace tri;

static std::string temp_dir() {
  char dir[] = "/tmp/tri-test-file-XXXXXX";
  if (!mkdtemp(dir)) fail_msg("mkdtemp failed");
  return dir;
}

static int files_in(const std::string& dir) {
  int n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

static void remove_all(const std::string& dir) {
  std::string cmd = "rm -rf '" + dir + "'";
  if (std::system(cmd.c_str()) != 0) fail_msg("rm -rf failed");
}

static void test_round_trip_and_replace(void** state) {
  (void)state;
  const std::string dir = temp_dir(), path = dir + "/f";
  std::string bytes(200000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  assert_true(write_user_file(path, bytes, "test").is_ok());
  std::string back = "old contents";
  assert_true(read_user_file(path, 1 << 20, "test", &back).is_ok());
  assert_true(back == bytes);
  assert_true(write_user_file(path, "short", "test").is_ok());  // replaced whole
  assert_true(read_user_file(path, 1 << 20, "test", &back).is_ok());
  assert_string_equal(back.c_str(), "short");
  assert_int_equal(files_in(dir), 1);  // no temporary file left
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  assert_int_equal(write_file_at(dfd, "g", "relative", 0600, true), 0);
  std::string why;
  assert_true(read_regular(dfd, "g", true, 100, &back, &why));
  assert_string_equal(back.c_str(), "relative");
  struct stat st;
  assert_int_equal(::stat((dir + "/g").c_str(), &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  ::close(dfd);
  remove_all(dir);
}

static void test_errors(void** state) {
  (void)state;
  const std::string dir = temp_dir();
  std::string out;
  tri::Status s = read_user_file(dir + "/missing", 100, "test", &out);
  assert_int_equal(static_cast<int>(s.code()), static_cast<int>(Code::Io));
  assert_true(s.message().find("No such file") != std::string::npos);
  s = write_user_file(dir + "/no/such/dir/f", "x", "test");
  assert_int_equal(static_cast<int>(s.code()), static_cast<int>(Code::Io));
  assert_int_equal(files_in(dir), 0);
  remove_all(dir);
}

// What is not a regular file is refused before it is read: a FIFO (whose open would block
// forever without O_NONBLOCK), a directory, a symlink (not followed), a sparse giant (not read).
static void test_refuses_what_is_not_a_small_regular_file(void** state) {
  (void)state;
  const std::string dir = temp_dir();
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  assert_int_equal(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  assert_int_equal(::mkdir((dir + "/sub").c_str(), 0700), 0);
  assert_int_equal(write_file_at(dfd, "real", "1234", 0600, false), 0);
  assert_int_equal(::symlink("real", (dir + "/link").c_str()), 0);
  int g = ::open((dir + "/giant").c_str(), O_WRONLY | O_CREAT, 0600);
  assert_int_equal(::ftruncate(g, off_t(6) << 30), 0);  // 6 GiB, sparse
  ::close(g);
  ::alarm(20);  // a blocking open of the FIFO would hang here: the alarm fails the test instead
  std::string out, why;
  assert_false(read_regular(dfd, "fifo", true, 100, &out, &why));
  assert_true(why.find("a FIFO") != std::string::npos);
  assert_false(read_regular(dfd, "sub", true, 100, &out, &why));
  assert_true(why.find("a directory") != std::string::npos);
  assert_false(read_regular(dfd, "link", true, 100, &out, &why));
  assert_true(why.find("symbolic link") != std::string::npos);
  assert_true(read_regular(dfd, "link", false, 100, &out, &why));  // a user's path follows links
  assert_false(read_regular(dfd, "giant", true, 1 << 20, &out, &why));
  assert_true(why.find("6442450944 bytes") != std::string::npos);
  assert_true(out.size() < (1u << 20));
  tri::Status s = read_user_file(dir + "/fifo", 100, "bundle import", &out);
  assert_false(s.is_ok());
  assert_true(s.message().find("bundle import: cannot read '") == 0);
  ::alarm(0);
  ::close(dfd);
  remove_all(dir);
}

// A user-named destination that is not a regular file is refused and left as it was; a create
// in a directory never follows a symlink (a dangling one to elsewhere stays dangling).
static void test_writes_never_replace_or_follow(void** state) {
  (void)state;
  const std::string dir = temp_dir(), outside = temp_dir();
  assert_int_equal(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  assert_int_equal(::symlink((outside + "/target").c_str(), (dir + "/link").c_str()), 0);
  tri::Status s = write_user_file(dir + "/fifo", "bundle", "tri_cache_export");
  assert_int_equal(static_cast<int>(s.code()), static_cast<int>(Code::InvalidArgument));
  assert_true(s.message().find("is a FIFO, not a regular file") != std::string::npos);
  struct stat st;
  assert_int_equal(::lstat((dir + "/fifo").c_str(), &st), 0);
  assert_true(S_ISFIFO(st.st_mode));
  s = write_user_file(dir + "/link", "bundle", "tri_cache_export");
  assert_int_equal(static_cast<int>(s.code()), static_cast<int>(Code::InvalidArgument));
  assert_int_equal(files_in(outside), 0);
  // write_file_at replaces a symlink by a file (rename), never writes through it.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  assert_int_equal(write_file_at(dfd, "link", "mine", 0600, false), 0);
  assert_int_equal(::lstat((dir + "/link").c_str(), &st), 0);
  assert_true(S_ISREG(st.st_mode));
  assert_int_equal(files_in(outside), 0);
  ::close(dfd);
  remove_all(dir);
  remove_all(outside);
}

// RLIMIT_FSIZE: with SIGXFSZ at its default action (end the process), a write past the limit is
// EFBIG, both when the size is known to be too large up front and when the file grows past it.
static void test_file_size_limit_is_an_error_not_a_signal(void** state) {
  (void)state;
  const std::string dir = temp_dir();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_DFL);
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = 1000;
    ::setrlimit(RLIMIT_FSIZE, &rl);
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (write_file_at(dfd, "big", std::string(5000, 'x'), 0600, false) != EFBIG) ::_exit(3);
    int fd = ::openat(dfd, "grow", O_WRONLY | O_CREAT, 0600);
    if (write_all(fd, std::string(900, 'y')) != 0) ::_exit(4);
    if (write_all(fd, std::string(200, 'z')) != EFBIG) ::_exit(5);  // passes 1000 midway
    ::close(fd);
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGXFSZ)) ::_exit(6);  // taken back, not left to fire later
    ::_exit(0);
  }
  int st = 0;
  assert_int_equal(::waitpid(pid, &st, 0), pid);
  if (WIFSIGNALED(st)) fail_msg("the child was killed by signal %d", WTERMSIG(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  assert_int_equal(files_in(dir), 1);  // "grow"; no temporary left by "big"
  remove_all(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip_and_replace),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_refuses_what_is_not_a_small_regular_file),
      cmocka_unit_test(test_writes_never_replace_or_follow),
      cmocka_unit_test(test_file_size_limit_is_an_error_not_a_signal),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
