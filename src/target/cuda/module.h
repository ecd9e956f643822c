// Modules and launches on top of the driver table: loading PTX (with the JIT's logs) or a cubin
// into a context, JIT-compiling PTX to a cubin a cache can keep, opting a function into more than
// 48 KB of dynamic shared memory, the per-context map that lets one compiled kernel launch on every
// context (ModuleSet, which prefers a cubin and falls back to PTX), and cuLaunchKernel with errors
// that name the kernel.
//
// The warm launch path (ModuleSet::function for a context it has seen, then launch) allocates
// nothing, takes no global lock, never synchronizes and never compiles, so it can be captured in a
// CUDA graph.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "target/cuda/driver.h"

namespace tri::cuda {

// What the driver's PTX JIT said. Filled on success too (info holds e.g. register usage when
// verbose logging is on).
struct JitLog {
  std::string info;
  std::string error;
  float wall_ms = 0;  // CU_JIT_WALL_TIME
};

// A module loaded in one context, unloaded (in that context) when destroyed. The context must
// outlive the module.
class Module {
 public:
  Module() = default;
  ~Module() { reset(); }
  Module(Module&& o) noexcept : mod_(o.mod_), ctx_(o.ctx_) { o.mod_ = nullptr; }
  Module& operator=(Module&& o) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  CUmodule get() const { return mod_; }
  CUcontext context() const { return ctx_; }
  explicit operator bool() const { return mod_ != nullptr; }
  // cuModuleGetFunction; Code::NotFound "kernel 'name' is not in the module" when absent.
  Status function(const char* name, CUfunction* out) const;
  // Takes ownership of a module loaded in ctx.
  void adopt(CUcontext ctx, CUmodule mod);
  // Unloads now (errors ignored: the context may already be gone at shutdown).
  void reset();
  // Forgets the module without unloading it (it goes with its context).
  void release() { mod_ = nullptr; }

 private:
  CUmodule mod_ = nullptr;
  CUcontext ctx_ = nullptr;
};

// Loads NUL-free PTX text in `ctx` (cuModuleLoadDataEx with info/error log buffers). On failure the
// message carries the driver's error name and the JIT error log:
//   "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed): ptxas ..."
// `log` may be NULL.
Status load_ptx(CUcontext ctx, const std::string& ptx, Module* out, JitLog* log = nullptr);

// JIT-compiles PTX for the device of `ctx` through cuLinkCreate/cuLinkAddData/cuLinkComplete and
// returns the cubin (so a cache can store it; load it with load_cubin). Errors as load_ptx's.
Status compile_ptx(CUcontext ctx, const std::string& ptx, std::string* cubin, JitLog* log = nullptr);

// Loads a cubin (or fatbin) image in `ctx`. A cubin made for another architecture fails with
// Code::Compile (CUDA_ERROR_NO_BINARY_FOR_GPU / CUDA_ERROR_INVALID_IMAGE).
Status load_cubin(CUcontext ctx, const void* data, size_t size, Module* out);

// Dynamic shared memory up to 48 KB needs nothing; above it the function must opt in with
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (up to the device's opt-in limit). Does that when
// `dynamic_bytes` exceeds 48 KB, in `ctx`.
constexpr uint32_t kDefaultDynamicSharedLimit = 48 * 1024;
Status set_dynamic_shared(CUcontext ctx, CUfunction fn, uint32_t dynamic_bytes, const char* kernel_name);

struct LaunchConfig {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};  // threads: 32 * warps in x for Tri's kernels
  uint32_t shared_bytes = 0;      // dynamic shared memory
};

// cuLaunchKernel of `fn` on `stream` (NULL: the legacy default stream of the current context) with
// kernelParams `args` (one pointer per parameter, pointing at its value). The function's context
// must be current (see launch_in). Failure: "launch of kernel 'name' failed: cuLaunchKernel failed:
// CUDA_ERROR_... (...)". No allocation unless it fails.
Status launch(CUfunction fn, const LaunchConfig& cfg, CUstream stream, void** args, const char* kernel_name);
// The same with `ctx` made current for the call (a ContextGuard): nothing to switch when the
// caller's current context already is `ctx`.
Status launch_in(CUcontext ctx, CUfunction fn, const LaunchConfig& cfg, CUstream stream, void** args,
                 const char* kernel_name);

// One compiled kernel and the module it is loaded as in each context that launched it, so the
// same compiled kernel runs on every context and device of the architecture it was built for.
// The kernel comes as a cubin, as PTX, or both: the cubin is loaded when there is one and the
// driver takes it (no JIT), else the PTX is (the driver JITs it for the context's device; a cubin
// of another architecture falls back to it so). This is the one place Tri loads GPU code: the
// cuda target's kernels (target/cuda/executable.cpp) and the tests use it.
//
// Lookup: the first kSlots contexts live in a fixed array published with a release store of the
// slot count; a warm lookup is an acquire load and a compare per slot, so it allocates nothing and
// takes no lock at all. Chosen over a per-kernel shared_mutex because even a read lock is an atomic
// read-modify-write on a shared cache line that every launching thread would bounce. Contexts past
// kSlots go to an overflow list behind this set's own shared_mutex (read lock on the warm path;
// never a global lock). Loading a new context takes this set's mutex, so concurrent first launches
// on one context load once.
//
// Lifetime: with OnDestroy::Unload every context a set has loaded into must outlive the set, or be
// forget()-ten first; for primary contexts that means destroying the set before the Devices object
// that retained them. With OnDestroy::Leave (the cuda target's kernels, which cannot know whether
// the caller destroyed a context before them) the modules are never unloaded: they go with their
// context.
class ModuleSet {
 public:
  enum class OnDestroy { Unload, Leave };
  // `ptx` and `cubin` may each be empty, not both.
  ModuleSet(std::string ptx, std::string cubin, std::string kernel_name, uint32_t dynamic_shared_bytes = 0,
            OnDestroy on_destroy = OnDestroy::Unload);
  ~ModuleSet();
  ModuleSet(const ModuleSet&) = delete;
  ModuleSet& operator=(const ModuleSet&) = delete;

  // The kernel's function in `ctx`, loading the image there on first use (the JIT log of a failed
  // PTX load is in the message). Thread-safe.
  Status function(CUcontext ctx, CUfunction* out);
  // Runs `init` on the module of `ctx` (loaded by function() before) once, the first time it is
  // asked for that context; later calls return at once. Thread-safe. (The cuda target fills
  // NVSHMEM's device state of a module so, at its first team launch.)
  Status once_per_module(CUcontext ctx, const std::function<Status(CUmodule)>& init);
  // Unloads the module of `ctx`, for a context about to be destroyed. Not concurrently with
  // launches in that context.
  void forget(CUcontext ctx);

  const std::string& kernel_name() const { return name_; }
  const std::string& ptx() const { return ptx_; }
  const std::string& cubin() const { return cubin_; }
  uint32_t dynamic_shared_bytes() const { return dynamic_shared_; }
  // Number of contexts the image is loaded in.
  int loaded_count() const;

  static constexpr int kSlots = 8;

 private:
  struct Slot {
    std::atomic<CUcontext> ctx{nullptr};  // NULL again after forget()
    CUfunction fn = nullptr;
    Module module;
    std::atomic<bool> initialized{false};  // once_per_module ran
  };
  struct Loaded {
    CUcontext ctx = nullptr;
    CUfunction fn = nullptr;
    Module module;
    bool initialized = false;
  };
  Status load(CUcontext ctx, CUfunction* fn, Module* module);

  const std::string ptx_;
  const std::string cubin_;
  const std::string name_;
  const uint32_t dynamic_shared_;
  const OnDestroy on_destroy_;

  Slot slots_[kSlots];
  std::atomic<int> used_{0};
  std::mutex load_mu_;
  mutable std::shared_mutex overflow_mu_;
  std::vector<Loaded> overflow_;
};

}  // namespace tri::cuda
