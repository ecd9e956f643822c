// The CPU backend's compiled kernel: specialized IR lowered to LLVM IR (codegen/cpu), optimized
// with LLVM's O3 pipeline for the host CPU, compiled by ORC LLJIT, and launched as a grid of
// program instances spread over a ThreadPool.
//
// Ownership and threads: a CpuKernel owns its JIT session (code, memory, symbols); it shares
// nothing with other CpuKernels, so any number may coexist and be destroyed in any order. run()
// is const and may be called from several threads at once; it compiles nothing. LLVM's native
// target is initialized once per process (std::call_once); nothing else is global.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "base/launch.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "codegen/cpu/lower.h"
#include "ir/ir.h"

namespace tri::jit {

struct CpuCompileOptions {
  // 0..3: the new pass manager's default pipeline at that level (and codegen at that level).
  int opt_level = 3;
  // Keep the optimized module's text, for CpuKernel::llvm_ir() (debugging, golden tests).
  bool keep_llvm_ir = false;
  // Keep the host assembly LLVM's code generator makes from that module, for
  // CpuKernel::assembly() (a second code generation from a copy of the module: asked for only).
  bool keep_asm = false;
  // Target CPU and features ("+avx2,-avx512f"); empty: the host's, as LLVM detects them.
  std::string cpu;
  std::string features;
  // tri_context_cancel: checked before lowering, between LLVM's optimization passes and before
  // code generation (target/target.h).
  CancelToken cancel;
};

struct CpuObject;

class CpuKernel {
 public:
  ~CpuKernel();
  CpuKernel(const CpuKernel&) = delete;
  CpuKernel& operator=(const CpuKernel&) = delete;

  // Runs every program instance of `grid` with the given runtime arguments (base/launch.h: one
  // per runtime parameter, in order) and returns when all have finished. Instances run on
  // `pool`'s threads in chunks of consecutive linear ids (x fastest), and on the calling thread
  // too when the kernel's block buffers take at most 64 KiB (stack_bytes()); pool == nullptr
  // runs them on the calling thread in that case, else on one temporary thread. `print`
  // receives the text of `print` ops (one call per op per instance with active lanes; calls
  // are serialized); it may be empty.
  // Errors: Code::LaunchArgs when nargs does not match the kernel; Code::Runtime when an
  // `assert` failed ("file:line:col: error: 'assert' lane [i, j] of <4 x 8 x i1> failed: msg;
  // program (x, y, z)") or a `for` that would run had a step <= 0. The failure of the instance
  // with the lowest linear id among those that ran is reported; an instance stops at its first
  // failure, and chunks not yet started are skipped.
  // Cancel: once `cancel` is requested, instances stop at their next loop back-edge, instances
  // and chunks not started are skipped, and the result is Code::Cancelled (unless an instance
  // failed first). `print` may re-enter Tri, even launch on `pool` (it then runs nested:
  // base/thread_pool.h); no lock but the print serialization is held while it runs.
  // Distributed kernels (docs/distributed.md): `team` is the launch's team (null outside one).
  // With `coresident` (the kernel waits on signals) every instance runs at once on a thread of
  // its own instead of on the pool, at most kMaxCoresidentPrograms (more: Code::LimitExceeded),
  // and a failure stops the waits of the others (and of the team).
  Status run(const Grid& grid, const ArgValue* args, size_t nargs, ThreadPool* pool, const PrintSink& print,
             const CancelToken& cancel = CancelToken(), const TeamLaunch* team = nullptr,
             bool coresident = false) const;

  const std::string& name() const;
  size_t num_params() const;
  // The optimized LLVM module as text; empty unless CpuCompileOptions::keep_llvm_ir.
  const std::string& llvm_ir() const;
  // The host assembly of the kernel (AT&T syntax on x86); empty unless CpuCompileOptions::keep_asm.
  const std::string& assembly() const;
  // Wall time compile_cpu spent on this kernel, in milliseconds (lowering, O3, machine code).
  double compile_ms() const;
  // Bytes of stack one program instance's block buffers take (an upper bound).
  uint64_t stack_bytes() const;
  // The relocatable object file the kernel was loaded from, and its runtime sites (what the disk
  // cache stores: load_cpu_object makes the same kernel from them).
  const std::string& object() const;
  const codegen::cpu::RuntimeSites& sites() const;

 private:
  friend Status compile_cpu(const ir::Module&, const ir::Function&, const CpuCompileOptions&,
                            std::unique_ptr<CpuKernel>*);
  friend Status load_cpu_object(CpuObject, const CpuCompileOptions&, std::unique_ptr<CpuKernel>*);
  struct Impl;
  explicit CpuKernel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A kernel compiled to machine code but not loaded: a relocatable object file for the host (ELF,
// position-independent, small code model, as ORC's JITLink loads it) with the one entry point
// codegen/cpu/lower.h describes, and what the launch loop needs besides.
struct CpuObject {
  std::string name;
  size_t num_params = 0;
  std::string object;
  codegen::cpu::RuntimeSites sites;
  uint64_t stack_bytes = 0;
  std::string llvm_ir;  // the optimized module's text when opts.keep_llvm_ir
  std::string assembly;  // the host assembly when opts.keep_asm
};

// Lowers, optimizes and emits the object file; nothing is loaded. Errors as compile_cpu's.
Status compile_cpu_object(const ir::Module& m, const ir::Function& kernel, const CpuCompileOptions& opts,
                          CpuObject* out);
// Loads an object file (from compile_cpu_object, here or in another process with the same
// cpu_identity) into a new JIT session; LLVM compiles nothing. Errors: Code::Compile when the
// object does not link (a damaged payload, a missing runtime symbol).
Status load_cpu_object(CpuObject obj, const CpuCompileOptions& opts, std::unique_ptr<CpuKernel>* out);
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

}  // namespace tri::jit
