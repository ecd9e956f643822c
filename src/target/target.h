// The one interface every execution target implements: compile specialized IR into an
// executable, and launch that executable with encoded arguments, a grid and a stream.
//
// The C API talks to targets only through this header (capi/targets.cpp holds the list of
// targets by name), as IREE's runtime talks to its HAL drivers: adding a target (another GPU,
// NVIDIA's Tile IR) is a new folder with one implementation of Target and one line in that
// list, not edits across the C API. The implementations live with their layers:
// interp/interp_target.cpp, jit/cpu_target.cpp, cuda/cuda_target.cpp.
//
// Threads: a Target is stateless and shared by every context; compile() may run on many threads
// at once. An Executable is immutable once made (apart from state it guards itself, such as a
// GPU module loaded per context on first launch) and launch() may run on many threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/launch.h"
#include "base/status.h"

namespace tri {
class ThreadPool;
namespace ir {
class Module;
class Function;
}  // namespace ir
}  // namespace tri

namespace tri::target {

// What a compile may depend on besides the specialized IR. Everything here is part of the
// module's cache key of compiled kernels (capi::CompileRequest::key), so a field that changes
// the generated code must be added there too.
struct CompileOptions {
  bool checked = false;  // the interpreter's checked mode; other targets refuse it
  int num_warps = 4;     // GPU targets: warps per program instance (1, 2, 4, 8, 16 or 32)
  std::string arch;      // GPU targets: "sm_90"; empty means the architecture of the current device
  int ptx_version = 0;   // GPU targets: PTX ISA version * 10 (80 = 8.0); 0 picks the target's default
  // Receives one line per compile with the time of each stage ("lower 1.2 ms, opt+ptx 3.4 ms");
  // may be empty. Not part of the cache key.
  std::function<void(const std::string&)> timing;
};

// What a launch gets from the caller besides grid and arguments. Nothing here allocates.
struct LaunchEnv {
  void* stream = nullptr;           // GPU targets: a CUstream (NULL: the default stream)
  const PrintSink* print = nullptr; // text of `print` ops; may be null
  CancelToken cancel;               // host targets stop when it is requested; GPU targets ignore it
  uint64_t interp_memory_limit = 0; // the interpreter's budget in bytes (0: none)
  // The host thread pool (CPU target), started on first use; an error when no worker can start.
  Status (*pool)(void* user, ThreadPool** out) = nullptr;
  void* pool_user = nullptr;
};

class Executable {
 public:
  virtual ~Executable() = default;
  // Runs the grid. args/nargs as base/launch.h describes; the C API has already checked their
  // count and types against the kernel's signature.
  virtual Status launch(const Grid& grid, const ArgValue* args, size_t nargs, const LaunchEnv& env) const = 0;
  // Code the target made, by kind ("ptx", "llvm", "metadata"); empty when it has none of that kind.
  virtual std::string code(std::string_view kind) const { return std::string(); }
};

class Target {
 public:
  virtual ~Target() = default;
  virtual std::string_view name() const = 0;
  // Whether launches take a stream (GPU targets); host targets refuse a non-NULL one.
  virtual bool uses_stream() const { return false; }
  // Whether argument facts (alignment, divisibility) change this target's code enough that a
  // launch should pick a variant compiled for its arguments' classes (capi/variants.cpp).
  virtual bool specializes_at_launch() const { return false; }
  // Compiles `kernel` of `m` (verified, specialized and canonicalized: every type concrete).
  virtual Status compile(const ir::Module& m, const ir::Function& kernel, const CompileOptions& options,
                         std::shared_ptr<const Executable>* out) const = 0;
};

// The targets of this build, by name ("interp", "cpu", "cuda"); nullptr for an unknown name.
const Target* find(std::string_view name);
// The names of this build's targets, for messages: "\"interp\", \"cpu\", \"cuda\"".
std::string names();

}  // namespace tri::target
