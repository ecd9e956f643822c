// The cuda target's compiled kernel (target.h): its code loaded per context through ModuleSet
// (module.h: the cubin when the driver takes it, else the PTX), the launch with the hidden team
// parameters, and the disk cache's payload of it, written here and read back by load().
#include <cstring>

#include "base/bytes.h"
#include "target/cuda/driver.h"
#include "target/cuda/module.h"
#include "target/cuda/nvshmem.h"
#include "target/cuda/target.h"

namespace tri::cuda {
namespace {

// ---- the payload's metadata: the launch info and the launch descriptor
constexpr uint32_t kMetaVersion = 3;  // 2: the team flag; 3: the NVSHMEM device library flag

class CudaExecutable final : public target::Executable {
 public:
  CudaExecutable(std::string ptx, std::string cubin, std::string llvm_ir, std::string descriptor, LaunchInfo info)
      : llvm_(std::move(llvm_ir)), descriptor_(std::move(descriptor)), info_(std::move(info)),
        set_(std::move(ptx), std::move(cubin), info_.name, info_.shared_bytes, ModuleSet::OnDestroy::Leave) {}

  Status launch(const Grid& grid, const ArgValue* args, size_t nargs, const target::LaunchEnv& env) const override {
    const Api* a = nullptr;
    TRI_RETURN_IF_ERROR(driver(&a));
    CUcontext ctx;
    TRI_RETURN_IF_ERROR(current_or_primary(a, &ctx));
    CUfunction fn = nullptr;
    TRI_RETURN_IF_ERROR(set_.function(ctx, &fn));
    const TeamLaunch* team = env.team;
    // A module that links NVSHMEM's device library holds NVSHMEM's device state, filled by the
    // host library once per module, at its first team launch (outside a team it is never read).
    if (info_.nvshmem && team)
      TRI_RETURN_IF_ERROR(set_.once_per_module(ctx, [](CUmodule m) { return nvshmem_module_init(m); }));
    void* params[256 + 4];
    if (nargs > 256) return Status(Code::LaunchArgs, "more than 256 kernel arguments");
    for (size_t i = 0; i < nargs; ++i) params[i] = const_cast<uint64_t*>(&args[i].bits);
    // The hidden team parameters (codegen/nvptx/lower.h): outside a team, rank 0 of 1, no heaps.
    uint64_t hidden[4] = {0, 1, 0, wait_timeout_ns(kDefaultWaitTimeoutMs)};
    if (info_.team) {
      if (team)
        hidden[0] = team->rank, hidden[1] = team->num_ranks, hidden[2] = team->device_bases,
        hidden[3] = wait_timeout_ns(team->wait_timeout_ms);
      for (int i = 0; i < 4; ++i) params[nargs + i] = &hidden[i];
    }
    LaunchConfig cfg;
    cfg.grid[0] = grid.x, cfg.grid[1] = grid.y, cfg.grid[2] = grid.z;
    cfg.block[0] = 32 * uint32_t(info_.num_warps);
    cfg.shared_bytes = info_.shared_bytes;
    return cuda::launch(fn, cfg, static_cast<CUstream>(env.stream), params, info_.name.c_str());
  }
  Status preload(void* place) const override {
    const Api* a = nullptr;
    TRI_RETURN_IF_ERROR(driver(&a));
    CUcontext ctx = static_cast<CUcontext>(place);
    if (!ctx) TRI_RETURN_IF_ERROR(current_or_primary(a, &ctx));
    CUfunction fn = nullptr;
    return set_.function(ctx, &fn);
  }
  // The payload: the PTX, then (kind "ptx+cubin") a NUL and the cubin the driver made from it
  // for this device; as metadata the entry's name, its shared memory and warps, and the launch
  // descriptor (argument layout). A hit skips lowering, LLVM and (with the cubin) the driver's
  // JIT; tri_kernel_code "llvm" has nothing to give for a kernel loaded so.
  Status payload(const ir::Module&, const ir::Function&, target::Payload* out) const override {
    const std::string& cubin = set_.cubin();
    out->kind = cubin.empty() ? "ptx" : "ptx+cubin";
    out->bytes = set_.ptx();
    if (!cubin.empty()) {
      out->bytes.push_back('\0');
      out->bytes += cubin;
    }
    ByteWriter w;
    w.u(kMetaVersion, 4);
    w.str(info_.name);
    w.u(info_.shared_bytes, 4);
    w.u(static_cast<uint64_t>(info_.num_warps), 4);
    w.u(info_.team ? 1 : 0, 1);
    w.u(info_.nvshmem ? 1 : 0, 1);
    w.str(descriptor_);
    out->metadata = std::move(w.s);
    return Status::ok();
  }
  std::string code(std::string_view kind) const override {
    if (kind == "ptx") return set_.ptx();
    if (kind == "cubin") return set_.cubin();
    if (kind == "llvm") return llvm_;
    if (kind == "metadata") return descriptor_;
    return std::string();
  }

 private:
  const std::string llvm_, descriptor_;
  const LaunchInfo info_;
  mutable ModuleSet set_;
};

}  // namespace

std::shared_ptr<const target::Executable> make_executable(std::string ptx, std::string cubin, std::string llvm_ir,
                                                          std::string descriptor, LaunchInfo info) {
  return std::make_shared<CudaExecutable>(std::move(ptx), std::move(cubin), std::move(llvm_ir),
                                          std::move(descriptor), std::move(info));
}

bool parse_sm(const std::string& s, int* sm, bool* a) {
  std::string t = s.rfind("sm_", 0) == 0 ? s.substr(3) : s;
  *a = !t.empty() && t.back() == 'a';
  if (*a) t.pop_back();
  if (t.size() != 2 || t[0] < '0' || t[0] > '9' || t[1] < '0' || t[1] > '9') return false;
  *sm = (t[0] - '0') * 10 + (t[1] - '0');
  return *sm >= 70;
}

namespace {

// The executable of a payload as Executable::payload writes it: the PTX, then (kind
// "ptx+cubin") a NUL and the cubin; the metadata is the launch info and the descriptor.
// `keep_cubin` false drops the cubin (it is for another architecture than the one loading it).
Status decode_payload(const std::string& kind, const std::string& metadata, const std::string& bytes, bool keep_cubin,
                      std::shared_ptr<const target::Executable>* out) {
  if (kind != "ptx" && kind != "ptx+cubin")
    return Status(Code::CorruptBinary, "a cuda payload holds \"" + kind + "\", not \"ptx\"");
  std::string ptx = bytes, cubin;
  if (kind == "ptx+cubin") {
    size_t nul = bytes.find('\0');
    if (nul == std::string::npos || nul + 1 >= bytes.size())
      return Status(Code::CorruptBinary, "a cuda payload's cubin is missing");
    ptx = bytes.substr(0, nul);
    if (keep_cubin) cubin = bytes.substr(nul + 1);
  }
  ByteReader r{metadata};
  LaunchInfo info;
  if (r.u(4) != kMetaVersion) return Status(Code::UnsupportedVersion, "cuda payload metadata of another version");
  info.name = r.str();
  info.shared_bytes = static_cast<uint32_t>(r.u(4));
  info.num_warps = static_cast<int>(r.u(4));
  info.team = r.u(1) != 0;
  info.nvshmem = r.u(1) != 0;
  std::string descriptor = r.str();
  if (!r.done() || info.num_warps < 1 || info.num_warps > 32 || ptx.empty())
    return Status(Code::CorruptBinary, "cuda payload metadata is malformed");
  *out = make_executable(std::move(ptx), std::move(cubin), std::string(), std::move(descriptor), std::move(info));
  return Status::ok();
}

}  // namespace

Status CudaRuntime::load(const ir::Module&, const ir::Function&, const target::CompileOptions&,
                         const target::Payload& p, std::shared_ptr<const target::Executable>* out) const {
  return decode_payload(p.kind, p.metadata, p.bytes, true, out);
}

// The device's own cubin; else a cubin of an older architecture of the same major (binary
// compatible; never an "a" one, whose instructions only their architecture has); else the PTX of
// the newest architecture the device can run, which the driver JIT-compiles.
Status CudaRuntime::load_package(const std::vector<package::Payload>& payloads, const std::string& what,
                                 std::shared_ptr<const target::Executable>* out, std::string* note) const {
  std::string arch;
  TRI_RETURN_IF_ERROR(current_arch(&arch));
  int dev = 0;
  bool dev_a = false;
  parse_sm(arch, &dev, &dev_a);
  const package::Payload* cubin = nullptr;
  const package::Payload* ptx = nullptr;
  int cubin_sm = -1, ptx_sm = -1;
  for (const package::Payload& p : payloads) {
    int sm = 0;
    bool a = false;
    if (!parse_sm(p.machine, &sm, &a) || sm > dev) continue;
    const bool same = sm == dev && a == dev_a;
    if (p.kind == "ptx+cubin" && (same || (!a && sm / 10 == dev / 10)) && (same ? 1000 : sm) > cubin_sm)
      cubin = &p, cubin_sm = same ? 1000 : sm;
    if ((same || !a) && (same ? 1000 : sm) > ptx_sm) ptx = &p, ptx_sm = same ? 1000 : sm;
  }
  note->clear();
  if (cubin) return decode_payload(cubin->kind, cubin->metadata, cubin->bytes, true, out);
  if (!ptx) {
    std::string have;
    for (const package::Payload& p : payloads) have += (have.empty() ? "" : ", ") + p.machine;
    return Status(Code::NotFound, what + ": the package has cuda code for " + (have.empty() ? "no architecture" : have) +
                                      ", and this GPU is " + arch + ", which none of them runs; build the package "
                                      "with --arch " + arch);
  }
  *note = what + ": the package has no cubin for this GPU (" + arch + "); the driver compiles the PTX made for " +
          ptx->machine + " at the kernel's first load in each context";
  return decode_payload(ptx->kind, ptx->metadata, ptx->bytes, false, out);
}

}  // namespace tri::cuda
