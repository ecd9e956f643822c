// Whole-file reads and all-or-nothing writes (file.h).
#include "base/file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <functional>
#include <thread>

namespace tri {

bool read_file(const std::string& path, std::string* out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  out->clear();
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
  const bool ok = !std::ferror(f);
  const int e = errno;
  std::fclose(f);
  errno = e;
  return ok;
}

int write_file_atomic(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return errno ? errno : EIO;
  int e = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() ? 0 : (errno ? errno : EIO);
  if (std::fclose(f) != 0 && !e) e = errno ? errno : EIO;
  if (!e && std::rename(tmp.c_str(), path.c_str()) != 0) e = errno ? errno : EIO;
  if (e) std::remove(tmp.c_str());
  return e;
}

}  // namespace tri
