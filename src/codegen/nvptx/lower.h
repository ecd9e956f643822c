// Lowering of one specialized kernel (and the device functions it calls, inlined) to an LLVM
// module for NVPTX, and from there to PTX text.
//
// The generated kernel has one PTX parameter per runtime parameter of the IR kernel, in order,
// of the parameter's own type (pointers .u64, i1 as .u8, f16/bf16 as their 16 bits), so a
// launcher passes a pointer to each argument's 64-bit little-endian bits (base/launch.h) and
// the driver reads the low bytes. Program instances are CUDA blocks of 32 * num_warps threads;
// the grid's x, y, z are program_id's axes. Shared memory is one dynamic array whose size is
// KernelInfo::shared_bytes (the launch passes it). docs/codegen.md explains the pipeline.
//
// A kernel with distributed ops (KernelInfo::team) has four hidden parameters after its own:
// .u32 rank, .u32 num_ranks, .u64 the device address of num_ranks u64 heap bases as this GPU
// sees them (0 outside a team: rank 0 of 1), .u64 the wait timeout in nanoseconds (0: none).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/launch.h"
#include "base/status.h"
#include "ir/ir.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tri::codegen::nvptx {

struct GpuOptions {
  int num_warps = 4;     // 1, 2, 4, 8, 16 or 32
  int sm = 90;           // compute capability * 10 (80, 86, 89, 90)
  bool sm_a = false;     // the architecture-specific variant (sm_90a)
  int ptx_version = 80;  // PTX ISA version * 10
  // The newest PTX ISA the driver accepts (without a driver: the newest LLVM writes). A kernel
  // with an instruction that needs more than ptx_version (f8 mma.sync: 8.4) is written with the
  // version it needs when that is at most this; else the instruction is not used.
  int ptx_version_max = 85;
  bool line_info = true; // .loc directives that map PTX to the IR text
  bool wgmma = true;     // sm_90a: dot on Hopper's wgmma where it fits (TRI_WGMMA=0 turns it off)
  // NVSHMEM's device library (nvshmem_link.h), for kernels with distributed ops: a peer's
  // address comes from NVSHMEM's device state (nvshmem_ptr) instead of the hidden table. Empty:
  // not linked.
  std::string nvshmem_device_library;
  // tri_context_cancel: LLVM's optimization passes are skipped once it is requested, and code
  // generation does not start (target/target.h).
  CancelToken cancel;
};

struct KernelInfo {
  std::string name;           // the PTX entry's name
  uint32_t shared_bytes = 0;  // dynamic shared memory a launch must give
  int num_warps = 4;
  bool team = false;  // the four hidden team parameters follow the kernel's own
  // NVSHMEM's device library is linked in: a team launch must have NVSHMEM fill the module's
  // device state first (nvshmemx_cumodule_init).
  bool nvshmem = false;
  std::string notes;  // choices the lowering made that users ask about: "dot at 12:5 on tensor cores ..."
  int min_ptx_version = 0;  // what the kernel's instructions need, when more than GpuOptions::ptx_version
};

// Lowers `kernel` of `m` (verified, specialized, canonicalized) into a new module in `ctx` with
// the NVPTX triple and data layout set. Errors: Code::Unsupported for what this backend cannot
// run yet (the message names the op, its location and what is missing), Code::Compile for IR
// it cannot lower.
Status lower_kernel(const ir::Module& m, const ir::Function& kernel, const GpuOptions& opt, llvm::LLVMContext& ctx,
                    std::unique_ptr<llvm::Module>* out, KernelInfo* info);

// Optimizes the module (LLVM O3 for the target) and writes PTX. `llvm_ir`, when not null,
// receives the optimized module's text; `ms`, when not null, the milliseconds of O3, of that
// print and of NVPTX code generation.
Status emit_ptx(llvm::Module& mod, const GpuOptions& opt, std::string* ptx, std::string* llvm_ir = nullptr,
                double* ms = nullptr);

// The whole path: lower, optimize, emit. Compile times of the stages go to `times` when not
// null ("lower 1.2 ms, opt 3.4 ms, ptx 2.1 ms").
Status compile_ptx(const ir::Module& m, const ir::Function& kernel, const GpuOptions& opt, std::string* ptx,
                   KernelInfo* info, std::string* llvm_ir = nullptr, std::string* times = nullptr);

}  // namespace tri::codegen::nvptx
