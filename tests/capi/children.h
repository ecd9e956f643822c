// Runs this test program again as a child process ("/proc/self/exe ARGS..."), its stdout and
// stderr read through a pipe (not a file, which RLIMIT_FSIZE would limit too), and reports its
// exit status (128 + the signal when one ended it) and output; and the directory helpers of the
// C API's cache tests, whose children compile through a cache directory that the parent damages
// in between.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace tri_test {

struct Report {
  int status = -1;  // exit status, or 128 + signal
  std::string text;
  // The number after "NAME " at the start of a line; UINT64_MAX when there is none.
  uint64_t get(const std::string& name) const {
    std::string t = "\n" + text;
    size_t at = t.find("\n" + name + " ");
    if (at == std::string::npos) return UINT64_MAX;
    return std::strtoull(t.c_str() + at + name.size() + 2, nullptr, 10);
  }
  int count(const std::string& s) const {
    int n = 0;
    for (size_t at = text.find(s); at != std::string::npos; at = text.find(s, at + 1)) ++n;
    return n;
  }
  bool has(const std::string& s) const { return text.find(s) != std::string::npos; }
  // Exited 0 and printed "result right".
  bool right() const { return status == 0 && has("result right"); }
};

struct Spawned {
  pid_t pid;
  int out;
};

// Starts this program with `args`; `close_fd` (when >= 0) is closed in the child.
inline Spawned spawn(const std::vector<std::string>& args, int close_fd = -1) {
  int p[2];
  if (::pipe(p) != 0) std::abort();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(p[1], 1);
    ::dup2(p[1], 2);
    ::close(p[0]);
    ::close(p[1]);
    if (close_fd >= 0) ::close(close_fd);
    std::vector<char*> av;
    static char self[] = "/proc/self/exe";
    av.push_back(self);
    for (const auto& a : args) av.push_back(const_cast<char*>(a.c_str()));
    av.push_back(nullptr);
    ::execv("/proc/self/exe", av.data());
    ::_exit(127);
  }
  ::close(p[1]);
  return {pid, p[0]};
}

inline Report wait_report(Spawned sp) {
  Report r;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(sp.out, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    r.text.append(buf, static_cast<size_t>(n));
  }
  ::close(sp.out);
  int st = 0;
  ::waitpid(sp.pid, &st, 0);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

// `root`/`name`, removed with everything under it (not made: the caller or Tri makes it).
inline std::string fresh_dir(const std::string& root, const std::string& name) {
  std::string d = root + "/" + name;
  std::string cmd = "rm -rf '" + d + "'";
  if (std::system(cmd.c_str()) != 0) std::abort();
  return d;
}

// The names in `dir` (dot files included, "." and ".." not) that end in `suffix`.
inline std::vector<std::string> names_in(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  std::string cmd = "ls -A '" + dir + "' 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  char line[512];
  while (std::fgets(line, sizeof line, p)) {
    std::string s = line;
    if (!s.empty() && s.back() == '\n') s.pop_back();
    if (s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0) out.push_back(s);
  }
  ::pclose(p);
  return out;
}

}  // namespace tri_test
