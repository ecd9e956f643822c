// The "cuda" target's compiler half: specialized IR to PTX through the NVPTX lowering
// (codegen/nvptx), and the driver's cubin of it when a driver is there. Compiling needs no GPU and
// no driver when the architecture is named (tri_compile_options_set_arch). What it makes is the
// runtime half's executable (target/cuda/target.h), loaded into a CUDA context on its first
// launch there.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <llvm/Config/llvm-config.h>

#include "base/clock.h"
#include "base/subprocess.h"
#include "codegen/nvptx/lower.h"
#include "codegen/nvptx/nvshmem_link.h"
#include "ir/ir.h"
#include "ir/verifier.h"
#include "target/cuda/driver.h"
#include "target/cuda/module.h"
#include "target/cuda/nvshmem.h"
#include "target/cuda/target.h"

namespace tri::cuda {
namespace {

// "sm_90" / "sm_90a" / "90" -> options (target.h's parse_sm); false for anything else.
bool parse_arch(const std::string& s, codegen::nvptx::GpuOptions* o) { return parse_sm(s, &o->sm, &o->sm_a); }

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
// (target/target/cuda/nvshmem.h); `identity` names it for the cache key.
void device_library(const ir::Module& m, const ir::Function& kernel, codegen::nvptx::GpuOptions* opt,
                    std::string* identity) {
  identity->clear();
  if (ir::find_op(m, kernel, &ir::is_distributed_op, nullptr) == ir::kNoOp) return;
  nvshmem_device_library(&opt->nvshmem_device_library);
  if (!opt->nvshmem_device_library.empty())
    *identity = codegen::nvptx::nvshmem_device_identity(opt->nvshmem_device_library);
}

class CudaTarget final : public CudaRuntime {
 public:
  std::vector<std::string> default_machines() const override { return {"sm_80", "sm_90a"}; }
  // Per architecture: the PTX made for it, and the cubin ptxas makes of that when a ptxas is
  // there ($TRI_PTXAS, ptxas on PATH, /usr/local/cuda/bin/ptxas).
  Status compile_package(const ir::Module& m, const ir::Function& kernel, const target::CompileOptions& options,
                         const std::vector<std::string>& machines, std::vector<package::Payload>* out,
                         std::vector<std::string>* notes) const override {
    // TRI_PTXAS names the ptxas to use, or "none" for packages of PTX only.
    const char* env = std::getenv("TRI_PTXAS");
    const bool none = env && std::string(env) == "none";
    const std::string ptxas = none ? std::string() : find_tool({env ? env : "", "ptxas", "/usr/local/cuda/bin/ptxas"});
    if (ptxas.empty() && !none)
      notes->push_back("no ptxas (set TRI_PTXAS, or put the CUDA toolkit's bin on PATH): the package holds PTX only, "
                       "which the driver compiles at each kernel's first load");
    for (const std::string& machine : machines) {
      int sm = 0;
      bool sm_a = false;
      if (!parse_sm(machine, &sm, &sm_a))
        return Status(Code::InvalidArgument, "unknown GPU architecture '" + machine +
                                                 "' (expected sm_XY with compute capability 7.0 or newer, e.g. sm_80, "
                                                 "sm_90a)");
      target::CompileOptions o = options;
      o.arch = machine;
      o.defer_native = true;  // no driver JIT: the cubin comes from ptxas
      std::shared_ptr<const target::Executable> exe;
      TRI_RETURN_IF_ERROR(compile(m, kernel, o, &exe));
      target::Payload p;
      TRI_RETURN_IF_ERROR(exe->payload(m, kernel, &p));
      package::Payload pp{machine, p.kind, p.metadata, p.bytes};
      if (!ptxas.empty()) {
        ScratchDir dir;
        std::string ptx_path, log;
        TRI_RETURN_IF_ERROR(dir.create("tri-aot"));
        TRI_RETURN_IF_ERROR(dir.write("kernel.ptx", p.bytes, &ptx_path));
        TRI_RETURN_IF_ERROR(run_tool({ptxas, "-arch=" + machine, "-o", dir.path() + "/kernel.cubin", ptx_path}, &log));
        std::string cubin;
        TRI_RETURN_IF_ERROR(dir.read("kernel.cubin", &cubin));
        pp.kind = "ptx+cubin";
        pp.bytes = p.bytes + std::string(1, '\0') + cubin;
      }
      out->push_back(std::move(pp));
    }
    return Status::ok();
  }
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
        cuda::current_device(&d).is_ok()) {
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
    LaunchInfo li;
    li.name = info.name;
    li.shared_bytes = info.shared_bytes;
    li.num_warps = info.num_warps;
    li.team = info.team;
    li.nvshmem = info.nvshmem;
    *out = make_executable(std::move(ptx), std::move(cubin), std::move(llvm_ir), std::move(meta), std::move(li));
    return Status::ok();
  }
};

}  // namespace

const target::Target* cuda_target() {
  static const CudaTarget t;
  return &t;
}

}  // namespace tri::cuda
