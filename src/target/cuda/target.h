// The "cuda" target's runtime half: compiled kernels (PTX, and the cubin the driver made from it)
// loaded into each CUDA context on their first launch there and launched on the caller's stream,
// the disk cache's payload of such a kernel, the devices, tri_tune's events and device copies,
// and teams of processes on NVSHMEM. None of it compiles anything or needs LLVM; the compiler
// half (compile/target.cpp: IR to PTX through codegen/nvptx) derives its target from CudaRuntime.
#pragma once

#include <memory>
#include <string>

#include "target/target.h"

namespace tri::cuda {

// What a launch of a compiled kernel needs besides its code.
struct LaunchInfo {
  std::string name;           // the PTX entry's name
  uint32_t shared_bytes = 0;  // dynamic shared memory a launch must give
  int num_warps = 4;
  bool team = false;     // the four hidden team parameters follow the kernel's own (codegen/nvptx/lower.h)
  bool nvshmem = false;  // NVSHMEM's device library is linked in: its state is filled at the first team launch
};

// A kernel compiled for the cuda target. `cubin` may be empty (the PTX is then JIT-compiled by
// the driver at the first load in each context); `llvm_ir` is what tri_kernel_code "llvm" gives
// (empty for a kernel that was not compiled here); `descriptor` is the launch descriptor
// (tri_kernel_code "metadata": the entry, its argument layout and the launch shape, as JSON).
std::shared_ptr<const target::Executable> make_executable(std::string ptx, std::string cubin, std::string llvm_ir,
                                                          std::string descriptor, LaunchInfo info);

// "sm_90" / "sm_90a" / "90": *sm = 90 and *a whether it is the architecture-specific variant;
// false for anything else (compute capability 7.0 is the oldest Tri compiles for).
bool parse_sm(const std::string& s, int* sm, bool* a);

// The architecture of the device of the calling thread's context (or device 0's primary
// context): "sm_80", and "sm_90a" on compute capability 9.x (Tri's kernels use its wgmma).
Status current_arch(std::string* arch);

// The target without its compiler: everything but compile() and cache_identity().
class CudaRuntime : public target::Target {
 public:
  std::string_view name() const override { return "cuda"; }
  std::string_view code_kinds() const override {
    return "ptx, llvm (the optimized LLVM IR), metadata (the launch descriptor), cubin (made by the driver for this "
           "device: with a GPU only)";
  }
  bool uses_stream() const override { return true; }
  bool specializes_at_launch() const override { return true; }
  int default_num_stages() const override { return 3; }
  Status load(const ir::Module& m, const ir::Function& kernel, const target::CompileOptions& options,
              const target::Payload& payload, std::shared_ptr<const target::Executable>* out) const override;

  Status device_count(int* out) const override;
  Status device_info(int ordinal, target::DeviceInfo* out) const override;
  Status driver_version(int* version, int* max_ptx) const override;
  Status current_device(target::DeviceInfo* out) const override;
  void* current_place() const override;
  Status make_bench(void* stream, std::unique_ptr<target::Bench>* out) const override;
  Status load_package(const std::vector<package::Payload>& payloads, const std::string& what,
                      std::shared_ptr<const target::Executable>* out, std::string* note) const override;
  Status team_make_id(void* out, size_t bytes) const override;
  Status team_join(const void* id, size_t id_bytes, uint32_t rank, uint32_t num_ranks, uint32_t device,
                   uint64_t heap_bytes, std::unique_ptr<target::DeviceTeam>* out) const override;
};

}  // namespace tri::cuda
