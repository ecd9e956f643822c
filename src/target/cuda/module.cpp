// PTX/cubin loading with the JIT's logs, the cuLink path that yields a cubin, the dynamic shared
// memory opt-in, launches, and ModuleSet's per-context map (module.h says why it is built so).
#include "target/cuda/module.h"

#include <cstring>

namespace tri::cuda {
namespace {

constexpr size_t kLogBytes = 32 * 1024;

// The JIT log options shared by cuModuleLoadDataEx and cuLinkCreate. The size slots are in/out:
// the driver writes back how much it used; the wall-time slot receives a float in its bytes.
struct JitOptions {
  std::string info = std::string(kLogBytes, '\0');
  std::string error = std::string(kLogBytes, '\0');
  int keys[6] = {CU_JIT_INFO_LOG_BUFFER,  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                 CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                 CU_JIT_LOG_VERBOSE,      CU_JIT_WALL_TIME};
  void* values[6];

  JitOptions() {
    values[0] = &info[0];
    values[1] = reinterpret_cast<void*>(uintptr_t(kLogBytes));
    values[2] = &error[0];
    values[3] = reinterpret_cast<void*>(uintptr_t(kLogBytes));
    values[4] = reinterpret_cast<void*>(uintptr_t(1));
    values[5] = nullptr;
  }
  static constexpr unsigned count() { return 6; }

  // Copies the logs out (trimmed at the first NUL and of trailing newlines).
  void fill(JitLog* log) const {
    auto trim = [](const std::string& s) {
      std::string t(s.c_str());
      while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
      return t;
    };
    log->info = trim(info);
    log->error = trim(error);
    float ms = 0;
    std::memcpy(&ms, &values[5], sizeof ms);
    log->wall_ms = ms;
  }
};

// "<what> failed: <error>: <jit error log>" (the log part only when there is one).
Status jit_failure(CUresult r, const char* what, const JitLog& log) {
  Status st = check(r, what);
  std::string detail = !log.error.empty() ? log.error : log.info;
  if (detail.empty()) return st;
  return Status(st.code(), st.message() + ": " + detail);
}

}  // namespace

Module& Module::operator=(Module&& o) noexcept {
  if (this != &o) {
    reset();
    mod_ = o.mod_;
    ctx_ = o.ctx_;
    o.mod_ = nullptr;
  }
  return *this;
}

void Module::adopt(CUcontext ctx, CUmodule mod) {
  reset();
  ctx_ = ctx;
  mod_ = mod;
}

void Module::reset() {
  if (!mod_) return;
  const Api* api = nullptr;
  if (driver(&api).is_ok()) {
    ContextGuard guard(api, ctx_);
    if (guard.status().is_ok()) api->cuModuleUnload(mod_);
  }
  mod_ = nullptr;
}

Status Module::function(const char* name, CUfunction* out) const {
  const Api* api = nullptr;
  TRI_RETURN_IF_ERROR(driver(&api));
  CUresult r = api->cuModuleGetFunction(out, mod_, name);
  if (r == CUDA_ERROR_NOT_FOUND)
    return Status(Code::NotFound, std::string("kernel '") + name + "' is not in the module (cuModuleGetFunction: " +
                                      error_text(r) + ")");
  return check(r, std::string("cuModuleGetFunction of kernel '") + name + "'");
}

Status load_ptx(CUcontext ctx, const std::string& ptx, Module* out, JitLog* log) {
  const Api* api = nullptr;
  TRI_RETURN_IF_ERROR(driver(&api));
  ContextGuard guard(api, ctx);
  TRI_RETURN_IF_ERROR(guard.status());
  JitOptions opts;
  CUmodule mod = nullptr;
  CUresult r = api->cuModuleLoadDataEx(&mod, ptx.c_str(), opts.count(), opts.keys, opts.values);
  JitLog local;
  opts.fill(log ? log : &local);
  if (r != CUDA_SUCCESS) return jit_failure(r, "cuModuleLoadDataEx", log ? *log : local);
  out->adopt(ctx, mod);
  return Status::ok();
}

Status compile_ptx(CUcontext ctx, const std::string& ptx, std::string* cubin, JitLog* log) {
  const Api* api = nullptr;
  TRI_RETURN_IF_ERROR(driver(&api));
  ContextGuard guard(api, ctx);
  TRI_RETURN_IF_ERROR(guard.status());
  JitOptions opts;
  JitLog local;
  JitLog& l = log ? *log : local;
  CUlinkState state = nullptr;
  CUresult r = api->cuLinkCreate(opts.count(), opts.keys, opts.values, &state);
  if (r != CUDA_SUCCESS) return check(r, "cuLinkCreate");
  // cuLinkAddData wants a non-const pointer and the size including the terminating NUL of PTX text.
  std::string text = ptx;
  r = api->cuLinkAddData(state, CU_JIT_INPUT_PTX, &text[0], text.size() + 1, "kernel.ptx", 0, nullptr, nullptr);
  if (r != CUDA_SUCCESS) {
    opts.fill(&l);
    api->cuLinkDestroy(state);
    return jit_failure(r, "cuLinkAddData", l);
  }
  void* image = nullptr;
  size_t size = 0;
  r = api->cuLinkComplete(state, &image, &size);
  opts.fill(&l);
  if (r != CUDA_SUCCESS) {
    api->cuLinkDestroy(state);
    return jit_failure(r, "cuLinkComplete", l);
  }
  // The image belongs to the link state: copy it before destroying the state.
  cubin->assign(static_cast<const char*>(image), size);
  api->cuLinkDestroy(state);
  return Status::ok();
}

Status load_cubin(CUcontext ctx, const void* data, size_t size, Module* out) {
  const Api* api = nullptr;
  TRI_RETURN_IF_ERROR(driver(&api));
  if (!data || size == 0) return Status(Code::InvalidArgument, "load_cubin: empty image");
  ContextGuard guard(api, ctx);
  TRI_RETURN_IF_ERROR(guard.status());
  CUmodule mod = nullptr;
  TRI_RETURN_IF_ERROR(check(api->cuModuleLoadDataEx(&mod, data, 0, nullptr, nullptr), "cuModuleLoadDataEx (cubin)"));
  out->adopt(ctx, mod);
  return Status::ok();
}

Status set_dynamic_shared(CUcontext ctx, CUfunction fn, uint32_t dynamic_bytes, const char* kernel_name) {
  if (dynamic_bytes <= kDefaultDynamicSharedLimit) return Status::ok();
  const Api* api = nullptr;
  TRI_RETURN_IF_ERROR(driver(&api));
  ContextGuard guard(api, ctx);
  TRI_RETURN_IF_ERROR(guard.status());
  CUresult r = api->cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(dynamic_bytes));
  if (r == CUDA_SUCCESS) return Status::ok();
  Status st = check(r, "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  return Status(st.code(), std::string("kernel '") + kernel_name + "' asks for " + std::to_string(dynamic_bytes) +
                               " bytes of dynamic shared memory, more than the device allows: " + st.message());
}

Status launch(CUfunction fn, const LaunchConfig& c, CUstream stream, void** args, const char* kernel_name) {
  const Api* api = nullptr;
  TRI_RETURN_IF_ERROR(driver(&api));
  CUresult r = api->cuLaunchKernel(fn, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2],
                                   c.shared_bytes, stream, args, nullptr);
  if (r == CUDA_SUCCESS) return Status::ok();
  Status st = check(r, "cuLaunchKernel");
  return Status(st.code(), std::string("launch of kernel '") + kernel_name + "' failed: " + st.message());
}

Status launch_in(CUcontext ctx, CUfunction fn, const LaunchConfig& cfg, CUstream stream, void** args,
                 const char* kernel_name) {
  const Api* api = nullptr;
  TRI_RETURN_IF_ERROR(driver(&api));
  ContextGuard guard(api, ctx);
  TRI_RETURN_IF_ERROR(guard.status());
  return launch(fn, cfg, stream, args, kernel_name);
}

// ---- ModuleSet ------------------------------------------------------------------------------

ModuleSet::ModuleSet(std::string ptx, std::string cubin, std::string kernel_name, uint32_t dynamic_shared_bytes,
                     OnDestroy on_destroy)
    : ptx_(std::move(ptx)), cubin_(std::move(cubin)), name_(std::move(kernel_name)),
      dynamic_shared_(dynamic_shared_bytes), on_destroy_(on_destroy) {}

ModuleSet::~ModuleSet() {
  if (on_destroy_ == OnDestroy::Unload) return;  // each Module unloads itself in its context
  for (Slot& s : slots_) s.module.release();
  for (Loaded& l : overflow_) l.module.release();
}

int ModuleSet::loaded_count() const {
  int n = 0;
  int used = used_.load(std::memory_order_acquire);
  for (int i = 0; i < used; ++i)
    if (slots_[i].ctx.load(std::memory_order_acquire)) ++n;
  std::shared_lock<std::shared_mutex> lock(overflow_mu_);
  return n + int(overflow_.size());
}

Status ModuleSet::load(CUcontext ctx, CUfunction* fn, Module* module) {
  // The cubin when the driver takes it (no JIT); the PTX when there is none or it is refused (a
  // cubin of another architecture), and then the PTX's error is the one that counts.
  Status st = cubin_.empty() ? Status(Code::NotFound, "no cubin") : load_cubin(ctx, cubin_.data(), cubin_.size(), module);
  if (!st.is_ok()) {
    if (ptx_.empty()) return st;
    st = load_ptx(ctx, ptx_, module);
    // The kernel's name, once a driver is there to have refused it.
    if (!st.is_ok()) return st.code() == Code::Unsupported ? st : Status(st.code(), st.message() + " (kernel '" + name_ + "')");
  }
  TRI_RETURN_IF_ERROR(module->function(name_.c_str(), fn));
  return set_dynamic_shared(ctx, *fn, dynamic_shared_, name_.c_str());
}

Status ModuleSet::function(CUcontext ctx, CUfunction* out) {
  // Warm path: no lock, no allocation.
  int used = used_.load(std::memory_order_acquire);
  for (int i = 0; i < used; ++i) {
    if (slots_[i].ctx.load(std::memory_order_relaxed) == ctx) {
      *out = slots_[i].fn;
      return Status::ok();
    }
  }
  if (used == kSlots) {
    std::shared_lock<std::shared_mutex> lock(overflow_mu_);
    for (const Loaded& l : overflow_)
      if (l.ctx == ctx) {
        *out = l.fn;
        return Status::ok();
      }
  }
  // Cold path: load once per context.
  std::lock_guard<std::mutex> lock(load_mu_);
  used = used_.load(std::memory_order_acquire);
  for (int i = 0; i < used; ++i) {
    if (slots_[i].ctx.load(std::memory_order_relaxed) == ctx) {
      *out = slots_[i].fn;
      return Status::ok();
    }
  }
  {
    std::shared_lock<std::shared_mutex> read(overflow_mu_);
    for (const Loaded& l : overflow_)
      if (l.ctx == ctx) {
        *out = l.fn;
        return Status::ok();
      }
  }
  CUfunction fn = nullptr;
  Module module;
  TRI_RETURN_IF_ERROR(load(ctx, &fn, &module));
  if (used < kSlots) {
    Slot& s = slots_[used];
    s.fn = fn;
    s.module = std::move(module);
    s.ctx.store(ctx, std::memory_order_relaxed);
    used_.store(used + 1, std::memory_order_release);  // publishes the slot to warm lookups
  } else {
    std::unique_lock<std::shared_mutex> write(overflow_mu_);
    overflow_.push_back(Loaded{ctx, fn, std::move(module), false});
  }
  *out = fn;
  return Status::ok();
}

Status ModuleSet::once_per_module(CUcontext ctx, const std::function<Status(CUmodule)>& init) {
  int used = used_.load(std::memory_order_acquire);
  for (int i = 0; i < used; ++i)
    if (slots_[i].ctx.load(std::memory_order_relaxed) == ctx && slots_[i].initialized.load(std::memory_order_acquire))
      return Status::ok();
  std::lock_guard<std::mutex> lock(load_mu_);
  used = used_.load(std::memory_order_acquire);
  for (int i = 0; i < used; ++i) {
    Slot& s = slots_[i];
    if (s.ctx.load(std::memory_order_relaxed) != ctx) continue;
    if (s.initialized.load(std::memory_order_relaxed)) return Status::ok();
    TRI_RETURN_IF_ERROR(init(s.module.get()));
    s.initialized.store(true, std::memory_order_release);
    return Status::ok();
  }
  std::unique_lock<std::shared_mutex> write(overflow_mu_);
  for (Loaded& l : overflow_) {
    if (l.ctx != ctx) continue;
    if (l.initialized) return Status::ok();
    TRI_RETURN_IF_ERROR(init(l.module.get()));
    l.initialized = true;
    return Status::ok();
  }
  return Status(Code::Internal, "kernel '" + name_ + "' is not loaded in this CUDA context");
}

void ModuleSet::forget(CUcontext ctx) {
  std::lock_guard<std::mutex> lock(load_mu_);
  int used = used_.load(std::memory_order_acquire);
  for (int i = 0; i < used; ++i) {
    if (slots_[i].ctx.load(std::memory_order_relaxed) == ctx) {
      slots_[i].ctx.store(nullptr, std::memory_order_release);
      slots_[i].module.reset();
      slots_[i].fn = nullptr;
      slots_[i].initialized.store(false, std::memory_order_relaxed);
    }
  }
  std::unique_lock<std::shared_mutex> write(overflow_mu_);
  for (size_t i = 0; i < overflow_.size(); ++i) {
    if (overflow_[i].ctx == ctx) {
      overflow_.erase(overflow_.begin() + long(i));
      break;
    }
  }
}

}  // namespace tri::cuda
