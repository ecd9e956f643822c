// The CPU target's loaded kernel: machine code that keeps target/cpu/abi.h's contract, launched
// as a grid of program instances spread over a ThreadPool. This is the runtime half: it runs code
// that something else loaded (ORC in target/cpu/jit.h, or a shared object built ahead of time)
// and needs no LLVM.
//
// Ownership and threads: a CpuKernel owns (a share of) its code through CpuCode::keep; it shares
// nothing else with other CpuKernels, so any number may coexist and be destroyed in any order.
// run() is const and may be called from several threads at once; it compiles nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "base/launch.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "target/cpu/abi.h"

namespace tri::cpu {

// A kernel's machine code, loaded: its entry point and what the launch loop needs besides.
struct CpuCode {
  std::string name;
  size_t num_params = 0;
  EntryFn entry = nullptr;
  RuntimeSites sites;
  uint64_t stack_bytes = 0;           // bytes of stack one instance's block buffers take (a bound)
  std::shared_ptr<const void> keep;   // keeps the code mapped (a JIT session, a dlopen handle)
};

// What the compiler kept besides the code (target/cpu/jit.h); empty for code loaded otherwise.
struct CpuBuild {
  std::string object;   // the relocatable object file the code was linked from
  std::string llvm_ir;  // the optimized module's text, when asked for
  std::string assembly;  // the host assembly, when asked for
  double compile_ms = 0;
};

class CpuKernel {
 public:
  explicit CpuKernel(CpuCode code, CpuBuild build = CpuBuild());
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

  const std::string& name() const { return code_.name; }
  size_t num_params() const { return code_.num_params; }
  uint64_t stack_bytes() const { return code_.stack_bytes; }
  const RuntimeSites& sites() const { return code_.sites; }
  // What the compiler kept (empty for code it did not make here): the object file (what the
  // disk cache stores), the optimized LLVM IR (with CpuCompileOptions::keep_llvm_ir), the host
  // assembly (AT&T syntax on x86; with keep_asm) and the wall time of the compile in
  // milliseconds (lowering, O3, machine code).
  const std::string& object() const { return build_.object; }
  const std::string& llvm_ir() const { return build_.llvm_ir; }
  const std::string& assembly() const { return build_.assembly; }
  double compile_ms() const { return build_.compile_ms; }

 private:
  CpuCode code_;
  CpuBuild build_;
};

}  // namespace tri::cpu
