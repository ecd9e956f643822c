// run_tool, find_tool and ScratchDir (subprocess.h): posix_spawnp with the child's output on a
// pipe, PATH lookups with access(2), and a mkdtemp directory removed with nftw.
#include "base/subprocess.h"

#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace tri {

Status run_tool(const std::vector<std::string>& argv, std::string* output) {
  output->clear();
  if (argv.empty()) return Status(Code::InvalidArgument, "run_tool: no program");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status(Code::Io, std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, argv[0].c_str(), &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return Status(Code::NotFound, "cannot run " + argv[0] + ": " + std::strerror(rc));
  }
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) {
      if (output->size() < (1u << 20)) output->append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::ok();
  std::string how = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                      : "signal " + std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  std::string cmd;
  for (const std::string& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  return Status(Code::Compile, cmd + " failed (" + how + ")" + (output->empty() ? "" : ": " + *output));
}

std::string find_tool(const std::vector<std::string>& candidates) {
  for (const std::string& c : candidates) {
    if (c.empty()) continue;
    if (c.find('/') != std::string::npos) {
      if (::access(c.c_str(), X_OK) == 0) return c;
      continue;
    }
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/bin:/bin");
    std::string d;
    while (std::getline(dirs, d, ':'))
      if (!d.empty() && ::access((d + "/" + c).c_str(), X_OK) == 0) return d + "/" + c;
  }
  return std::string();
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  ::nftw(
      path_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 16,
      FTW_DEPTH | FTW_PHYS);
}

Status ScratchDir::create(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
  if (!::mkdtemp(&templ[0])) return Status(Code::Io, "cannot make a scratch directory " + templ + ": " + std::strerror(errno));
  path_ = templ;
  return Status::ok();
}

Status ScratchDir::write(const std::string& name, const std::string& bytes, std::string* out) const {
  *out = path_ + "/" + name;
  std::ofstream f(*out, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) return Status(Code::Io, "cannot write " + *out);
  return Status::ok();
}

Status ScratchDir::read(const std::string& name, std::string* out) const {
  std::ifstream f(path_ + "/" + name, std::ios::binary);
  if (!f) return Status(Code::Io, "cannot read " + path_ + "/" + name);
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return Status::ok();
}

}  // namespace tri
