// Running a tool and a scratch directory for its files, for what Tri builds ahead of time (`tri
// aot`: ptxas makes a package's cubins, the C compiler driver links its CPU shared objects). Only
// the package builder calls these; nothing on a compile or launch path runs another program.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace tri {

// Runs argv[0] (looked up in PATH when it has no '/') with the given arguments, waits for it, and
// gives its standard output and error together in *output. Code::NotFound when it cannot be
// started, Code::Compile (naming it, its exit status and its output) when it fails.
Status run_tool(const std::vector<std::string>& argv, std::string* output);

// The first of `candidates` that names an executable file (a name without '/' is looked up in
// PATH); empty when none does.
std::string find_tool(const std::vector<std::string>& candidates);

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it when the object dies.
class ScratchDir {
 public:
  ScratchDir() = default;
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  Status create(const std::string& prefix);
  const std::string& path() const { return path_; }
  // Writes `bytes` as the file `name` in the directory and returns its path in *out.
  Status write(const std::string& name, const std::string& bytes, std::string* out) const;
  // Reads the file `name` of the directory.
  Status read(const std::string& name, std::string* out) const;

 private:
  std::string path_;
};

}  // namespace tri
