// The CPU target's compiler half: specialized IR lowered to LLVM IR (codegen/cpu), optimized with
// LLVM's O3 pipeline for the host CPU, emitted as a relocatable object file, and linked by ORC
// LLJIT with the runtime's symbols (runtime.h) into a CpuKernel (kernel.h), which launches it.
//
// LLVM's native target is initialized once per process (std::call_once); nothing else is global.
// Each CpuKernel made here owns its own JIT session, so kernels share nothing.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "ir/ir.h"
#include "target/cpu/kernel.h"

namespace tri::cpu {

struct CpuCompileOptions {
  // 0..3: the new pass manager's default pipeline at that level (and codegen at that level).
  int opt_level = 3;
  // Keep the optimized module's text, for CpuKernel::llvm_ir() (debugging, golden tests).
  bool keep_llvm_ir = false;
  // Keep the host assembly LLVM's code generator makes from that module, for
  // CpuKernel::assembly() (a second code generation from a copy of the module: asked for only).
  bool keep_asm = false;
  // Target CPU and features ("+avx2,-avx512f"). No CPU: the host's, with the features LLVM
  // detects (replaced by `features` when set). A named CPU ("x86-64-v3"): its features and
  // `features`, none of the host's.
  std::string cpu;
  std::string features;
  // tri_context_cancel: checked before lowering, between LLVM's optimization passes and before
  // code generation (target/target.h).
  CancelToken cancel;
};

// A kernel compiled to machine code but not loaded: a relocatable object file for the host (ELF,
// position-independent, small code model, as ORC's JITLink loads it) with the one entry point
// target/cpu/abi.h describes, and what the launch loop needs besides.
struct CpuObject {
  std::string name;
  size_t num_params = 0;
  std::string object;
  RuntimeSites sites;
  uint64_t stack_bytes = 0;
  std::string llvm_ir;  // the optimized module's text when opts.keep_llvm_ir
  std::string assembly;  // the host assembly when opts.keep_asm
};

// Lowers, optimizes and emits the object file; nothing is loaded. Errors as compile_cpu's.
Status compile_cpu_object(const ir::Module& m, const ir::Function& kernel, const CpuCompileOptions& opts,
                          CpuObject* out);
// Loads an object file (from compile_cpu_object, here or in another process with the same
// cpu_identity) into a new JIT session; LLVM compiles nothing. `compile_ms` is what
// CpuKernel::compile_ms will say. Errors: Code::Compile when the object does not link (a damaged
// payload, a missing runtime symbol).
Status load_cpu_object(CpuObject obj, const CpuCompileOptions& opts, std::unique_ptr<CpuKernel>* out,
                       double compile_ms = 0);
// What besides the IR decides the object code compile_cpu_object makes with `opts`: LLVM's
// version, the target triple, CPU name and features, the optimization level.
std::string cpu_identity(const CpuCompileOptions& opts);

// Compiles kernel `kernel` of `m` (verified and specialized: every type concrete, no constexpr
// name left) for the host CPU. *out is set only on success. Errors: Code::Unsupported for ops
// the CPU cannot run (inline_asm) and targets LLVM cannot build for, Code::LimitExceeded when a
// program instance would need more than 48 MiB of block buffers, Code::Compile for IR the
// backend cannot lower or a JIT failure (the message names the op's location or the missing
// symbol).
Status compile_cpu(const ir::Module& m, const ir::Function& kernel, const CpuCompileOptions& opts,
                   std::unique_ptr<CpuKernel>* out);
// The same, for owners that share the compiled kernel (the C API's cache of compiled kernels).
Status compile_cpu(const ir::Module& m, const ir::Function& kernel, const CpuCompileOptions& opts,
                   std::shared_ptr<const CpuKernel>* out);

// The LLVM IR the CPU backend makes for `kernel`, after its optimization pipeline at
// opts.opt_level (no machine code is made). For debugging and golden tests.
Status cpu_llvm_ir(const ir::Module& m, const ir::Function& kernel, const CpuCompileOptions& opts, std::string* out);

}  // namespace tri::cpu
