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
  int num_stages = 0;    // loads of dot-feeding loops run num_stages - 1 iterations ahead; 0: the target's default
  // GPU targets: leave the driver's translation of the PTX to machine code to the first load
  // instead of doing it at compile time (tri_tune's kernels whose launches run a variant).
  bool defer_native = false;
  // Keep the text of every stage the target can show besides what it launches (cpu: the
  // optimized LLVM IR and the host assembly), for Executable::code. Asked for by
  // tri_kernel_code and TRI_DUMP only, so other compiles do not pay for it. Not part of the
  // cache key: it changes no code.
  bool keep_code = false;
  // Receives one line per compile with the time of each stage ("lower 1.2 ms, opt+ptx 3.4 ms");
  // may be empty. Not part of the cache key.
  std::function<void(const std::string&)> timing;
  // tri_context_cancel: once requested, a compile stops at its next boundary and returns
  // Code::Cancelled: between Tri's IR passes, before lowering, between LLVM's optimization
  // passes (the rest are skipped), before code generation, and before the driver's JIT. A pass
  // or stage that has begun runs to its end (LLVM's code generation, ptxas in the driver); the
  // limits of ir/limits.h bound how long those take. Not part of the cache key.
  CancelToken cancel;
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
  // The team this launch is one rank of (capi/team.cpp); null outside a team (base/launch.h).
  // Host targets run the distributed ops with it; the cuda target refuses them at compile.
  const TeamLaunch* team = nullptr;
};

// A compiled kernel in the form the disk cache stores (capi/disk_cache.cpp): the code, of one
// kind, and the metadata the target needs to launch it without compiling anything. The bytes and
// metadata hold no absolute path and no source location that the cache key does not cover (a
// target whose code embeds locations adds them to its cache_identity, or maps them through the
// module it loads with, as the CPU target does for its runtime messages).
struct Payload {
  std::string kind;      // "obj" (cpu: a relocatable object file), "ptx" (cuda)
  std::string metadata;  // the target's own encoding
  std::string bytes;
};

class Executable {
 public:
  virtual ~Executable() = default;
  // Runs the grid. args/nargs as base/launch.h describes; the C API has already checked their
  // count and types against the kernel's signature.
  virtual Status launch(const Grid& grid, const ArgValue* args, size_t nargs, const LaunchEnv& env) const = 0;
  // Code the target made, by kind (Target::code_kinds); empty when it has none of that kind.
  virtual std::string code(std::string_view kind) const { return std::string(); }
  // The payload to store in the disk cache. `m` and `kernel` are what the executable was compiled
  // from. Code::Unsupported when this target stores nothing (the interpreter).
  // Does now what the first launch from the calling thread would do before running (on GPU
  // targets: load the module into the current context), so that launch does not wait for it.
  virtual Status preload() const { return Status::ok(); }
  virtual Status payload(const ir::Module& m, const ir::Function& kernel, Payload* out) const {
    return Status(Code::Unsupported, "this target stores nothing in the disk cache");
  }
};

// What one program (one block of threads) of a target can have; 0: no limit of that kind.
// The autotuner prunes configs that need more (tune/prune.h).
struct ResourceLimits {
  int64_t max_threads = 0;
  int64_t max_shared_bytes = 0;  // opted in
  int64_t registers_per_program = 0;
  int64_t max_registers_per_thread = 0;
  bool tensor_cores = false;  // f16/bf16 dot operands are staged in shared memory
};

class Target {
 public:
  virtual ~Target() = default;
  virtual std::string_view name() const = 0;
  // The kinds of code Executable::code may return, for messages ("llvm, asm"); empty: none.
  virtual std::string_view code_kinds() const { return ""; }
  // Whether some of those kinds are made only with CompileOptions::keep_code (cpu).
  virtual bool keeps_code_on_request() const { return false; }
  // Whether launches take a stream (GPU targets); host targets refuse a non-NULL one.
  virtual bool uses_stream() const { return false; }
  // Whether argument facts (alignment, divisibility) change this target's code enough that a
  // launch should pick a variant compiled for its arguments' classes (capi/variants.cpp).
  virtual bool specializes_at_launch() const { return false; }
  // Whether it does so when the caller did not say (tri_compile_options_set_launch_specialization).
  virtual bool specializes_at_launch_by_default() const { return specializes_at_launch(); }
  // The limits of one program of the machine `options` compile for (none on host targets).
  virtual Status resource_limits(const CompileOptions& options, ResourceLimits* out) const {
    *out = ResourceLimits();
    return Status::ok();
  }
  // CompileOptions::num_stages when it is 0 (passes/pipeline_loads.h).
  virtual int default_num_stages() const { return 1; }
  // Compiles `kernel` of `m` (verified, specialized and canonicalized: every type concrete).
  virtual Status compile(const ir::Module& m, const ir::Function& kernel, const CompileOptions& options,
                         std::shared_ptr<const Executable>* out) const = 0;

  // ---- the disk cache (capi/disk_cache.cpp). The key of a kernel covers its specialized IR
  // without source locations, the target's name, the CompileOptions fields, Tri's version and
  // build id, and this identity: everything else that changes this target's code for `kernel`
  // (LLVM's version, the host CPU and its features; a GPU's architecture and PTX version, and
  // the source locations the code embeds). An empty identity: this target is not cached.
  // (The cuda target's next payloads hang off this key: the cubin the driver makes from the PTX,
  // under a key that adds the device and the driver's version, and the driver's PTX-version cap
  // joins this identity; see docs/cache.md.)
  virtual Status cache_identity(const ir::Module& m, const ir::Function& kernel, const CompileOptions& options,
                                std::string* out) const {
    out->clear();
    return Status::ok();
  }
  // Makes an executable from a payload that Executable::payload stored for the same key, without
  // compiling. `m` and `kernel` are the caller's (the same IR up to source locations). An error
  // means the payload is unusable here; the caller compiles instead and rewrites the entry.
  virtual Status load(const ir::Module& m, const ir::Function& kernel, const CompileOptions& options,
                      const Payload& payload, std::shared_ptr<const Executable>* out) const {
    return Status(Code::Unsupported, "target \"" + std::string(name()) + "\" loads nothing from the disk cache");
  }
};

// The targets of this build, by name ("interp", "cpu", "cuda"); nullptr for an unknown name.
const Target* find(std::string_view name);
// The names of this build's targets, for messages: "\"interp\", \"cpu\", \"cuda\"".
std::string names();

}  // namespace tri::target
