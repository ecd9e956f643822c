// The "cuda" target: specialized IR to PTX through the NVPTX lowering (codegen/nvptx), and
// launches through the CUDA driver loaded at run time (cuda/). Compiling needs no GPU and no
// driver when the architecture is named (tri_compile_options_set_arch); the module is loaded
// into a CUDA context on the first launch there, and kept per context.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include <llvm/Config/llvm-config.h>

#include "base/clock.h"
#include "codegen/nvptx/lower.h"
#include "codegen/nvptx/nvshmem_link.h"
#include "cuda/driver.h"
#include "ir/verifier.h"
#include "cuda/module.h"
#include "cuda/nvshmem.h"
#include "ir/ir.h"
#include "target/target.h"

namespace tri::cuda {
namespace {

// "sm_90" / "sm_90a" / "90" -> options; false for anything else.
bool parse_arch(const std::string& s, codegen::nvptx::GpuOptions* o) {
  std::string t = s.rfind("sm_", 0) == 0 ? s.substr(3) : s;
  bool a = !t.empty() && t.back() == 'a';
  if (a) t.pop_back();
  if (t.size() != 2 || t[0] < '0' || t[0] > '9' || t[1] < '0' || t[1] > '9') return false;
  int sm = std::stoi(t);
  if (sm < 70) return false;
  o->sm = sm;
  o->sm_a = a;
  return true;
}

// ---- disk cache metadata: the kernel info a launch needs and the launch descriptor
constexpr uint32_t kMetaVersion = 3;  // 2: the team flag; 3: the NVSHMEM device library flag
void put_u(std::string* o, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) o->push_back(static_cast<char>(v >> (8 * i)));
}
void put_s(std::string* o, const std::string& v) {
  put_u(o, v.size(), 4);
  *o += v;
}
struct MetaReader {
  const std::string& s;
  size_t pos = 0;
  bool ok = true;
  uint64_t u(int n) {
    if (!ok || s.size() - pos < static_cast<size_t>(n)) return ok = false, 0;
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(s[pos + i])) << (8 * i);
    pos += n;
    return v;
  }
  std::string str() {
    uint64_t n = u(4);
    if (!ok || s.size() - pos < n) return ok = false, std::string();
    pos += n;
    return s.substr(pos - n, n);
  }
};

// The source locations the PTX embeds: the module's name and the location of every assert (its
// message names them). They join the cache identity, so an assert's message stays right.
// (GpuOptions::line_info's .loc directives, once emitted, would embed every op's location:
// they must then join it too, or be mapped through the loading module as the cpu target maps
// its runtime sites.)
void embedded_locations(const ir::Module& m, std::string* out) {
  bool any = false;
  std::string locs;
  for (const auto& f : m.functions)
    for (const ir::OpData& op : f->ops)
      if (op.code == ir::Opcode::Assert) {
        any = true;
        locs += " " + std::to_string(op.loc.line) + ":" + std::to_string(op.loc.col);
      }
  if (any) *out += "; asserts in " + m.source_name + " at" + locs;
}

std::string json_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r;
}

}  // namespace

// The launch descriptor: everything a launcher needs to call the PTX entry itself.
std::string launch_metadata(const ir::Module& m, const ir::Function& k, const codegen::nvptx::KernelInfo& info,
                            const codegen::nvptx::GpuOptions& opt) {
  std::string s = "{\"schema\": 1, \"entry\": \"" + json_escape(info.name) + "\", \"arch\": \"sm_" +
                  std::to_string(opt.sm) + (opt.sm_a ? "a" : "") + "\", \"ptx_version\": " +
                  std::to_string(std::max(opt.ptx_version, info.min_ptx_version)) + ", \"num_warps\": " + std::to_string(info.num_warps) +
                  ", \"block\": [" + std::to_string(32 * info.num_warps) + ", 1, 1], \"shared_bytes\": " +
                  std::to_string(info.shared_bytes) + ", \"params\": [";
  for (size_t i = 0; i < k.params.size(); ++i) {
    const ir::Param& p = k.params[i];
    const ir::TypeData& td = m.types.get(p.type);
    int bytes = td.kind == ir::TypeKind::Ptr ? 8 : std::max(1, ir::scalar_bits(td.scalar) / 8);
    s += std::string(i ? ", " : "") + "{\"name\": \"" + json_escape(p.name) + "\", \"type\": \"" +
         json_escape(m.type_str(p.type)) + "\", \"bytes\": " + std::to_string(bytes) +
         ", \"align\": " + std::to_string(p.align) + ", \"divisible\": " + std::to_string(p.divisible) + "}";
  }
  s += std::string("], \"nvshmem_module_init\": ") + (info.nvshmem ? "true" : "false") + ", \"hidden_params\": [";
  if (info.team)
    s += "{\"name\": \"tri_rank\", \"type\": \"i32\", \"bytes\": 4}, "
         "{\"name\": \"tri_num_ranks\", \"type\": \"i32\", \"bytes\": 4}, "
         "{\"name\": \"tri_heap_bases\", \"type\": \"ptr<i64>\", \"bytes\": 8}, "
         "{\"name\": \"tri_wait_timeout_ns\", \"type\": \"i64\", \"bytes\": 8}";
  return s + "]}";
}

}  // namespace tri::cuda

// ---- the driver: src/cuda loads it; modules are loaded per context here (never unloaded, so a
// context the caller destroys before the kernel cannot be touched again)
namespace tri::cuda {
namespace {

// The caller's current context, or device 0's primary context made current.
}  // namespace

Status current_arch(std::string* arch) {
  const Api* a = nullptr;
  Status loaded = driver(&a);
  if (!loaded.is_ok())
    return Status(loaded.code(), loaded.message() + "; to compile without a GPU, name the architecture "
                                                    "(tri_compile_options_set_arch, e.g. \"sm_90\")");
  CUcontext ctx;
  TRI_RETURN_IF_ERROR(current_or_primary(a, &ctx));
  CUdevice dev;
  TRI_RETURN_IF_ERROR(check(a->cuCtxGetDevice(&dev), "cuCtxGetDevice"));
  int major = 0, minor = 0;
  TRI_RETURN_IF_ERROR(check(a->cuDeviceGetAttribute(&major, 75, dev), "cuDeviceGetAttribute"));
  TRI_RETURN_IF_ERROR(check(a->cuDeviceGetAttribute(&minor, 76, dev), "cuDeviceGetAttribute"));
  *arch = "sm_" + std::to_string(major) + std::to_string(minor) + (major == 9 ? "a" : "");
  return Status::ok();
}

// The PTX ISA version is capped to what the installed driver accepts (cuDriverGetVersion), so
// the driver can load what Tri writes; with no driver (PTX made for a named architecture on a
// machine without a GPU) the requested version stands. An architecture newer than the driver's
// PTX can express is refused with the versions involved.
Status cap_ptx_version(codegen::nvptx::GpuOptions* opt) {
  int version = 0;
  if (!driver_version(&version).is_ok()) return Status::ok();
  PtxVersion cap = max_ptx_for_driver(version);
  if (!cap.known()) return Status::ok();
  opt->ptx_version = std::min(opt->ptx_version, cap.number());
  opt->ptx_version_max = std::min(opt->ptx_version_max, cap.number());
  const int needs = opt->sm_a ? 80 : opt->sm >= 90 ? 78 : opt->sm >= 89 ? 78 : opt->sm >= 86 ? 71 : 70;
  if (opt->ptx_version < needs)
    return Status(Code::Unsupported,
                  "the installed CUDA driver (" + std::to_string(version / 1000) + "." +
                      std::to_string(version % 1000 / 10) + ") accepts PTX up to " + std::to_string(cap.major) + "." +
                      std::to_string(cap.minor) + ", and sm_" + std::to_string(opt->sm) + (opt->sm_a ? "a" : "") +
                      " needs PTX " + std::to_string(needs / 10) + "." + std::to_string(needs % 10) +
                      " or newer; update the driver");
  return Status::ok();
}

// A PTX module loaded per context on first use. Launches look their context up without a lock
// (a fixed table of atomics written once per context under the executable's mutex).
struct Loaded {
  std::atomic<CUcontext> ctx{nullptr};
  std::atomic<CUfunction> fn{nullptr};
  CUmodule mod = nullptr;                // written before ctx
  std::atomic<bool> nvshmem_ready{false};  // nvshmemx_cumodule_init done (KernelInfo::nvshmem)
};
constexpr int kMaxContexts = 16;

// The kernel's function in the current context (or the primary one), loading its module there
// on first use; `slot`, when not null, receives the context's entry.
Status function_here(const Api* a, const std::string& ptx, const std::string& cubin,
                     const codegen::nvptx::KernelInfo& info, std::mutex& mu, Loaded* loaded, CUfunction* out,
                     Loaded** slot = nullptr) {
  CUcontext ctx;
  TRI_RETURN_IF_ERROR(current_or_primary(a, &ctx));
  CUfunction fn = nullptr;
  Loaded* at = nullptr;
  for (int i = 0; i < kMaxContexts && !fn; ++i) {
    CUcontext c = loaded[i].ctx.load(std::memory_order_acquire);
    if (!c) break;
    if (c == ctx) fn = loaded[i].fn.load(std::memory_order_relaxed), at = &loaded[i];
  }
  if (!fn) {
    std::lock_guard<std::mutex> lock(mu);
    int i = 0;
    for (; i < kMaxContexts; ++i) {
      CUcontext c = loaded[i].ctx.load(std::memory_order_acquire);
      if (!c) break;
      if (c == ctx) fn = loaded[i].fn.load(std::memory_order_relaxed), at = &loaded[i];
    }
    if (!fn && i == kMaxContexts)
      return Status(Code::LimitExceeded, "kernel '" + info.name + "' is loaded in " + std::to_string(kMaxContexts) +
                                             " CUDA contexts already; that is the most one compiled kernel serves");
    if (!fn) {
      char log[8192] = {0};
      int opts[] = {5 /*CU_JIT_ERROR_LOG_BUFFER*/, 6 /*CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES*/};
      void* vals[] = {log, reinterpret_cast<void*>(sizeof log)};
      CUmodule mod;
      // The cubin the driver made at compile (no JIT now); the PTX when there is none or the
      // driver refuses it (another device in this process).
      CUresult r = cubin.empty() ? CUDA_ERROR_INVALID_IMAGE : a->cuModuleLoadDataEx(&mod, cubin.data(), 2, opts, vals);
      if (r != 0) r = a->cuModuleLoadDataEx(&mod, ptx.c_str(), 2, opts, vals);
      if (r != 0) {
        Status st = check(r, "cuModuleLoadDataEx of kernel '" + info.name + "'");
        return Status(st.code(), st.message() + ": " + log);
      }
      TRI_RETURN_IF_ERROR(check(a->cuModuleGetFunction(&fn, mod, info.name.c_str()), "cuModuleGetFunction"));
      if (info.shared_bytes > 48 * 1024)
        TRI_RETURN_IF_ERROR(check(a->cuFuncSetAttribute(fn, 8 /*MAX_DYNAMIC_SHARED_SIZE_BYTES*/, info.shared_bytes),
                                  "cuFuncSetAttribute"));
      loaded[i].fn.store(fn, std::memory_order_relaxed);
      loaded[i].mod = mod;
      loaded[i].ctx.store(ctx, std::memory_order_release);
      at = &loaded[i];
    }
  }
  *out = fn;
  if (slot) *slot = at;
  return Status::ok();
}

Status launch_ptx(const std::string& ptx, const std::string& cubin, const codegen::nvptx::KernelInfo& info,
                  std::mutex& mu, Loaded* loaded, const Grid& grid, const ArgValue* args, size_t nargs, void* stream,
                  const TeamLaunch* team) {
  const Api* a = nullptr;
  TRI_RETURN_IF_ERROR(driver(&a));
  CUfunction fn = nullptr;
  Loaded* slot = nullptr;
  TRI_RETURN_IF_ERROR(function_here(a, ptx, cubin, info, mu, loaded, &fn, &slot));
  // A module that links NVSHMEM's device library holds NVSHMEM's device state, filled by the
  // host library once per module, at its first team launch (outside a team it is never read).
  if (info.nvshmem && team && !slot->nvshmem_ready.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(mu);
    if (!slot->nvshmem_ready.load(std::memory_order_relaxed)) {
      TRI_RETURN_IF_ERROR(nvshmem_module_init(slot->mod));
      slot->nvshmem_ready.store(true, std::memory_order_release);
    }
  }
  void* params[256 + 4];
  if (nargs > 256) return Status(Code::LaunchArgs, "more than 256 kernel arguments");
  for (size_t i = 0; i < nargs; ++i) params[i] = const_cast<uint64_t*>(&args[i].bits);
  // The hidden team parameters (codegen/nvptx/lower.h): outside a team, rank 0 of 1, no heaps.
  uint64_t hidden[4] = {0, 1, 0, wait_timeout_ns(kDefaultWaitTimeoutMs)};
  if (info.team) {
    if (team) hidden[0] = team->rank, hidden[1] = team->num_ranks, hidden[2] = team->device_bases,
              hidden[3] = wait_timeout_ns(team->wait_timeout_ms);
    for (int i = 0; i < 4; ++i) params[nargs + i] = &hidden[i];
  }
  CUresult r = a->cuLaunchKernel(fn, grid.x, grid.y, grid.z, 32 * info.num_warps, 1, 1, info.shared_bytes,
                                 static_cast<CUstream>(stream), params, nullptr);
  return r == 0 ? Status::ok() : check(r, "cuLaunchKernel of kernel '" + info.name + "'");
}

}  // namespace tri::cuda

namespace tri::cuda {
namespace {

class CudaExecutable final : public target::Executable {
 public:
  CudaExecutable(std::string ptx, std::string cubin, std::string llvm_ir, std::string meta,
                 codegen::nvptx::KernelInfo info)
      : ptx_(std::move(ptx)), cubin_(std::move(cubin)), llvm_(std::move(llvm_ir)), meta_(std::move(meta)),
        info_(std::move(info)) {}

  Status launch(const Grid& grid, const ArgValue* args, size_t nargs, const target::LaunchEnv& env) const override {
    return launch_ptx(ptx_, cubin_, info_, mu_, loaded_, grid, args, nargs, env.stream, env.team);
  }
  Status preload() const override {
    const Api* a = nullptr;
    TRI_RETURN_IF_ERROR(driver(&a));
    CUfunction fn = nullptr;
    return function_here(a, ptx_, cubin_, info_, mu_, loaded_, &fn);
  }
  // The payload: the PTX, then (kind "ptx+cubin") a NUL and the cubin the driver made from it
  // for this device; as metadata the entry's name, its shared memory and warps, and the launch
  // descriptor (argument layout). A hit skips lowering, LLVM and (with the cubin) the driver's
  // JIT; tri_kernel_code "llvm" has nothing to give for a kernel loaded so.
  Status payload(const ir::Module&, const ir::Function&, target::Payload* out) const override {
    out->kind = cubin_.empty() ? "ptx" : "ptx+cubin";
    out->bytes = ptx_;
    if (!cubin_.empty()) {
      out->bytes.push_back('\0');
      out->bytes += cubin_;
    }
    out->metadata.clear();
    put_u(&out->metadata, kMetaVersion, 4);
    put_s(&out->metadata, info_.name);
    put_u(&out->metadata, info_.shared_bytes, 4);
    put_u(&out->metadata, static_cast<uint64_t>(info_.num_warps), 4);
    put_u(&out->metadata, info_.team ? 1 : 0, 1);
    put_u(&out->metadata, info_.nvshmem ? 1 : 0, 1);
    put_s(&out->metadata, meta_);
    return Status::ok();
  }
  std::string code(std::string_view kind) const override {
    if (kind == "ptx") return ptx_;
    if (kind == "cubin") return cubin_;
    if (kind == "llvm") return llvm_;
    if (kind == "metadata") return meta_;
    return std::string();
  }

 private:
  std::string ptx_, cubin_, llvm_, meta_;
  codegen::nvptx::KernelInfo info_;
  mutable std::mutex mu_;
  mutable Loaded loaded_[kMaxContexts];
};

// The options compile() uses, resolved: the current device's architecture when none is named.
// The driver version when compile() makes a cubin next to the PTX (a driver is there and the
// kernel is for the current device's architecture), else 0. The cubin is the driver's: a cache
// key that holds one names that driver.
int cubin_driver(const target::CompileOptions& options) {
  if (options.defer_native) return 0;
  int version = 0;
  if (!driver_version(&version).is_ok()) return 0;
  if (options.arch.empty()) return version;  // the current device's architecture by definition
  std::string here;
  return current_arch(&here).is_ok() && options.arch == here ? version : 0;
}

Status gpu_options(const target::CompileOptions& options, codegen::nvptx::GpuOptions* opt) {
  opt->num_warps = options.num_warps;
  const char* wg = std::getenv("TRI_WGMMA");  // "0": dot on mma.sync even where wgmma fits
  opt->wgmma = !(wg && std::strcmp(wg, "0") == 0);
  std::string arch = options.arch;
  if (arch.empty()) TRI_RETURN_IF_ERROR(current_arch(&arch));
  if (!parse_arch(arch, opt))
    return Status(Code::InvalidArgument, "unknown GPU architecture '" + arch +
                                             "' (expected sm_XY with compute capability 7.0 or newer, e.g. sm_80, sm_90, sm_90a)");
  if (options.ptx_version) opt->ptx_version = options.ptx_version;
  return cap_ptx_version(opt);
}

// NVSHMEM's device library for a kernel with distributed ops, when there is one
// (cuda/nvshmem.h); `identity` names it for the cache key.
void device_library(const ir::Module& m, const ir::Function& kernel, codegen::nvptx::GpuOptions* opt,
                    std::string* identity) {
  identity->clear();
  if (ir::find_op(m, kernel, &ir::is_distributed_op, nullptr) == ir::kNoOp) return;
  nvshmem_device_library(&opt->nvshmem_device_library);
  if (!opt->nvshmem_device_library.empty())
    *identity = codegen::nvptx::nvshmem_device_identity(opt->nvshmem_device_library);
}

class CudaTarget final : public target::Target {
 public:
  // The key adds the architecture the PTX is for, its PTX version (capped to what the installed
  // driver accepts), the warps and LLVM's version.
  Status cache_identity(const ir::Module& m, const ir::Function& kernel, const target::CompileOptions& options,
                        std::string* out) const override {
    out->clear();
    if (options.checked) return Status::ok();
    codegen::nvptx::GpuOptions opt;
    TRI_RETURN_IF_ERROR(gpu_options(options, &opt));
    std::string nvshmem_id;
    device_library(m, kernel, &opt, &nvshmem_id);
    *out = "ptx 1; llvm " LLVM_VERSION_STRING "; sm_" + std::to_string(opt.sm) + (opt.sm_a ? "a" : "") + "; ptx " +
           std::to_string(opt.ptx_version) + "; warps " + std::to_string(opt.num_warps) +
           (opt.sm_a && !opt.wgmma ? "; no wgmma" : "") +
           (opt.line_info ? "; lines" : "") + (nvshmem_id.empty() ? "" : "; " + nvshmem_id);
    if (int v = cubin_driver(options)) *out += "; cubin for driver " + std::to_string(v);
    embedded_locations(m, out);
    return Status::ok();
  }
  Status load(const ir::Module&, const ir::Function& kernel, const target::CompileOptions&, const target::Payload& p,
              std::shared_ptr<const target::Executable>* out) const override {
    if (p.kind != "ptx" && p.kind != "ptx+cubin")
      return Status(Code::CorruptBinary, "a cuda cache entry holds \"" + p.kind + "\", not \"ptx\"");
    std::string ptx = p.bytes, cubin;
    if (p.kind == "ptx+cubin") {
      size_t nul = p.bytes.find('\0');
      if (nul == std::string::npos || nul + 1 >= p.bytes.size())
        return Status(Code::CorruptBinary, "a cuda cache entry's cubin is missing");
      ptx = p.bytes.substr(0, nul);
      cubin = p.bytes.substr(nul + 1);
    }
    MetaReader r{p.metadata};
    codegen::nvptx::KernelInfo info;
    if (r.u(4) != kMetaVersion) return Status(Code::UnsupportedVersion, "cuda cache metadata of another version");
    info.name = r.str();
    info.shared_bytes = static_cast<uint32_t>(r.u(4));
    info.num_warps = static_cast<int>(r.u(4));
    info.team = r.u(1) != 0;
    info.nvshmem = r.u(1) != 0;
    std::string meta = r.str();
    if (!r.ok || r.pos != p.metadata.size() || info.num_warps < 1 || info.num_warps > 32 || p.bytes.empty())
      return Status(Code::CorruptBinary, "cuda cache metadata is malformed");
    (void)kernel;
    *out = std::make_shared<CudaExecutable>(std::move(ptx), std::move(cubin), std::string(), std::move(meta),
                                            std::move(info));
    return Status::ok();
  }

  std::string_view name() const override { return "cuda"; }
  std::string_view code_kinds() const override {
    return "ptx, llvm (the optimized LLVM IR), metadata (the launch descriptor), cubin (made by the driver for this "
           "device: with a GPU only)";
  }
  bool uses_stream() const override { return true; }
  bool specializes_at_launch() const override { return true; }
  int default_num_stages() const override { return 3; }
  // The current device's limits when the options compile for it; for a named architecture
  // of another device (or no driver), that architecture's documented shared memory per block.
  Status resource_limits(const target::CompileOptions& options, target::ResourceLimits* out) const override {
    codegen::nvptx::GpuOptions opt;
    TRI_RETURN_IF_ERROR(gpu_options(options, &opt));
    *out = target::ResourceLimits();
    out->max_threads = 1024;
    out->registers_per_program = 65536;
    out->max_registers_per_thread = 255;
    out->tensor_cores = opt.sm >= 80;
    std::string here;
    const DeviceInfo* d = nullptr;
    if ((options.arch.empty() || (current_arch(&here).is_ok() && here == options.arch)) &&
        current_device(&d).is_ok()) {
      out->max_threads = d->max_threads_per_block;
      out->max_shared_bytes = d->shared_per_block_optin;
      return Status::ok();
    }
    // The CUDA programming guide's table of shared memory per block (opted in), in bytes.
    out->max_shared_bytes = opt.sm >= 90 ? 232448 : opt.sm == 80 || opt.sm == 87 ? 166912 : opt.sm >= 86 ? 101376
                          : opt.sm == 75 ? 65536 : 98304;
    return Status::ok();
  }
  Status compile(const ir::Module& m, const ir::Function& kernel, const target::CompileOptions& options,
                 std::shared_ptr<const target::Executable>* out) const override {
    if (options.checked)
      return Status(Code::Unsupported, "checked mode runs on the \"interp\" target only; compile with target \"interp\"");
    codegen::nvptx::GpuOptions opt;
    TRI_RETURN_IF_ERROR(gpu_options(options, &opt));
    // A bound on the code the compile unrolls (ptxas's time grows with it).
    TRI_RETURN_IF_ERROR(ir::check_work_per_thread(m, 32 * int64_t(opt.num_warps)));
    opt.cancel = options.cancel;
    auto cancelled = [&] { return Status(Code::Cancelled, "the compile of kernel @" + kernel.name + " was cancelled"); };
    if (options.cancel.requested()) return cancelled();
    std::string nvshmem_id;
    device_library(m, kernel, &opt, &nvshmem_id);
    std::string ptx, llvm_ir, times;
    codegen::nvptx::KernelInfo info;
    TRI_RETURN_IF_ERROR(codegen::nvptx::compile_ptx(m, kernel, opt, &ptx, &info, &llvm_ir, &times));
    if (options.cancel.requested()) return cancelled();
    if (options.timing && !info.notes.empty()) options.timing("kernel @" + kernel.name + ": " + info.notes);
    std::string meta = launch_metadata(m, kernel, info, opt);
    std::string cubin;
    // The driver's JIT now rather than at the first launch, so that the cubin is cached with
    // the PTX. A JIT error is left for the launch to report (with its log).
    CUcontext ctx;
    const Api* a = nullptr;
    const auto jit_start = std::chrono::steady_clock::now();
    if (cubin_driver(options) && driver(&a).is_ok() && current_or_primary(a, &ctx).is_ok()) {
      if (!compile_ptx(ctx, ptx, &cubin).is_ok()) cubin.clear();
      char buf[64];
      std::snprintf(buf, sizeof buf, ", driver jit %.2f ms",
                    ms_since(jit_start));
      times += buf;
    }
    if (options.timing) options.timing("kernel @" + kernel.name + " for sm_" + std::to_string(opt.sm) + ": " + times);
    *out = std::make_shared<CudaExecutable>(std::move(ptx), std::move(cubin), std::move(llvm_ir), std::move(meta),
                                            std::move(info));
    return Status::ok();
  }
};

}  // namespace

const target::Target* cuda_target() {
  static const CudaTarget t;
  return &t;
}

}  // namespace tri::cuda
