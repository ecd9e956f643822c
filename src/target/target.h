// The one interface every execution target implements: compile specialized IR into an
// executable, and launch that executable with encoded arguments, a grid and a stream.
//
// The C API talks to targets only through this header (target/registry.cpp holds the list of
// targets by name), as IREE's runtime talks to its HAL drivers: adding a target (another GPU,
// NVIDIA's Tile IR) is a new folder under src/target/ with one implementation of Target and one
// line in that list, not edits across the C API. Besides compiling and launching, a target
// answers what the C API would otherwise ask a driver: its devices (tri_device_*), how to time a
// trial and keep the buffers a trial writes (tri_tune), and how to join a team of processes
// (tri_team_join). The implementations: target/interp, target/cpu, target/cuda (each with a
// runtime part, load and launch, and a compiler part, under compile/).
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
#include <vector>

#include "base/launch.h"
#include "base/status.h"
#include "package/package.h"

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
  // Does now what the first launch from the calling thread would do before running (on GPU
  // targets: load the module into the current context), so that launch does not wait for it.
  // `place` is a Target::current_place() of another thread: the work is done for that place
  // instead (null: the calling thread's).
  virtual Status preload(void* place = nullptr) const { return Status::ok(); }
  // The payload to store in the disk cache. `m` and `kernel` are what the executable was compiled
  // from. Code::Unsupported when this target stores nothing (the interpreter).
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

// One device of a target, as tri_device_attribute and tri_device_name report it.
struct DeviceInfo {
  std::string name;
  int cc_major = 0, cc_minor = 0;  // compute capability
  int sm_count = 0;
  int max_threads_per_block = 0;
  int warp_size = 0;
  int shared_per_block = 0;        // without opt-in
  int shared_per_block_optin = 0;
  int shared_per_sm = 0;
  int l2_bytes = 0;
};

// What tri_tune needs of a target to measure its trials, on one stream: copies of the buffers a
// trial writes, written back before every run, and a clock. The host version (Target's default)
// copies with memcpy and times with the steady clock; a GPU target keeps device copies restored
// in stream order, and times with events on the stream after evicting its cache.
class Bench {
 public:
  virtual ~Bench() = default;
  // Keeps a copy of the `bytes` at `ptr` (memory the target's kernels address), to restore.
  virtual Status save(void* ptr, uint64_t bytes) = 0;
  // Writes every saved copy back, in order with the runs.
  virtual void restore() = 0;
  // Runs `run` once and sets *ns to its time. `repetition` numbers the runs of one trial.
  virtual Status time(uint32_t repetition, const std::function<Status()>& run, double* ns) = 0;
  // Waits for what restore() queued, so that the copies may be freed.
  virtual void finish() = 0;
};

// A process's rank of a team of processes, one device each (docs/distributed.md), made by
// Target::team_join. Its destructor frees the rank's heap and leaves the team (a collective:
// every rank destroys its team).
class DeviceTeam {
 public:
  virtual ~DeviceTeam() = default;
  // Every rank's heap as this process addresses it (rank r's at bases()[r], each heap_bytes
  // long), for tri_team_ptr and the launches' TeamLaunch.
  virtual const std::vector<uint64_t>& bases() const = 0;
  // Zeroes [offset, offset + bytes) of this rank's heap, then waits for every rank to do so.
  virtual Status zero(uint64_t offset, uint64_t bytes) = 0;
  // Waits for this rank's work, then for every rank (tri_team_barrier).
  virtual Status barrier() = 0;
  // Runs `exe` as this rank on `stream` (null: the default stream of the team's device) with
  // `team` (whose device fields this fills); with `sync`, waits for it, naming `what` in an error.
  virtual Status launch(const Executable& exe, const Grid& grid, const ArgValue* args, size_t nargs, void* stream,
                        TeamLaunch* team, bool sync, const std::string& what) = 0;
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

  // ---- devices (tri_device_*). Host targets have none: count 0 and Code::Unsupported.
  virtual Status device_count(int* out) const {
    *out = 0;
    return Status::ok();
  }
  virtual Status device_info(int ordinal, DeviceInfo* out) const {
    return Status(Code::Unsupported, "target \"" + std::string(name()) + "\" has no devices");
  }
  // The driver's version and the newest PTX ISA it takes (version * 10); Unsupported without one.
  virtual Status driver_version(int* version, int* max_ptx) const {
    return Status(Code::Unsupported, "target \"" + std::string(name()) + "\" has no driver");
  }
  // The device the calling thread's launches run on (its name joins tuning keys, as two models
  // may share an architecture); Code::Unsupported on host targets.
  virtual Status current_device(DeviceInfo* out) const { return device_info(0, out); }
  // The calling thread's place, as an opaque value another thread can act for
  // (Executable::preload): the current CUDA context on the cuda target; null on host targets.
  virtual void* current_place() const { return nullptr; }

  // ---- tuning: a Bench on `stream` (Target's default: the host one; host targets get no stream).
  virtual Status make_bench(void* stream, std::unique_ptr<Bench>* out) const;

  // ---- teams of processes, one device each (tri_team_make_id, tri_team_join); Unsupported on
  // targets whose teams are threads of one process (the host targets' tri_team_create).
  // The id every rank passes to team_join; `bytes` is the room at `out`.
  virtual Status team_make_id(void* out, size_t bytes) const {
    return Status(Code::Unsupported, "target \"" + std::string(name()) + "\" has no teams of processes");
  }
  // Joins as `rank` of `num_ranks` on device `device` with a heap of `heap_bytes` (a multiple of
  // kSymmetricHeapAlign) per rank; the calling thread's current device becomes that device's.
  virtual Status team_join(const void* id, size_t id_bytes, uint32_t rank, uint32_t num_ranks, uint32_t device,
                           uint64_t heap_bytes, std::unique_ptr<DeviceTeam>* out) const {
    return Status(Code::Unsupported, "target \"" + std::string(name()) + "\" has no teams of processes");
  }

  // ---- packages (tri aot; docs/format.md, "Packages"): code made ahead of time for machines
  // named by the target ("sm_90a", "x86-64-v3"), loaded later without compiling.
  // The machines a package holds code for when its builder names none.
  virtual std::vector<std::string> default_machines() const { return {}; }
  // Compiles `kernel` of `m` (prepared as for compile()) once per machine of `machines`, into
  // payloads load_package reads; `notes` receives what the caller should know (a cubin that could
  // not be made). Code::Unsupported on a target that packages nothing; Code::InvalidArgument
  // naming a machine the target does not know.
  virtual Status compile_package(const ir::Module& m, const ir::Function& kernel, const CompileOptions& options,
                                 const std::vector<std::string>& machines, std::vector<package::Payload>* out,
                                 std::vector<std::string>* notes) const {
    return Status(Code::Unsupported, "target \"" + std::string(name()) + "\" makes no packages");
  }
  // An executable from the one of `payloads` that suits this machine best, compiling nothing (the
  // GPU's own cubin, else PTX for the driver to JIT; the best x86-64 level the CPU has). `what`
  // names the kernel in messages; *note is set when the choice costs something at the first
  // launch (a JIT). Code::NotFound naming the machines the package has and this one when none
  // fits.
  virtual Status load_package(const std::vector<package::Payload>& payloads, const std::string& what,
                              std::shared_ptr<const Executable>* out, std::string* note) const {
    return Status(Code::Unsupported, "target \"" + std::string(name()) + "\" loads no packages");
  }

  // CompileOptions::num_stages when it is 0 (passes/pipeline_loads.h).
  virtual int default_num_stages() const { return 1; }
  // Compiles `kernel` of `m` (verified, specialized and canonicalized: every type concrete). A
  // target without its compiler half (libtri_rt's) has nothing to do it with: Code::Unsupported.
  virtual Status compile(const ir::Module& m, const ir::Function& kernel, const CompileOptions& options,
                         std::shared_ptr<const Executable>* out) const {
    return Status(Code::Unsupported, "target \"" + std::string(name()) + "\" has no compiler in this library");
  }

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
// The target whose devices tri_device_* report (the first that has a driver of devices: "cuda"),
// or nullptr when this build has none.
const Target* device_target();

}  // namespace tri::target
