// Lowering of one specialized kernel (and the device functions it calls) to an LLVM module for
// the host CPU.
//
// The generated module has one entry point, kEntryFn, that runs a contiguous range of program
// instances; the runtime calls it once per chunk from the thread pool. Its signature, the
// runtime callbacks it calls and the launch state it reads are target/cpu/abi.h's contract.
//
// How blocks are lowered (the reasons are in lower.cpp): a block value is either a buffer on the
// stack, or a lazy per-element expression that its consumers inline into their own loops;
// loads, reductions, scans, dots and values that are expensive and used more than once are
// buffers. Loops run over whole blocks (or over the box of lanes a mask selects), so LLVM's O3
// vectorizes them; other masked lanes are branches the vectorizer turns into masked loads and
// stores.
//
// What the CPU does not need: load/store `cache` and `evict` hints (ignored), atomic `scope`
// (every atomic is a system-scope LLVM atomic, which is at least as strong), `debug_barrier`
// (one program instance is one thread), `multiple_of`/`max_contiguous` (the affine analysis
// finds contiguity itself) and `assume` on blocks (scalar assumes become llvm.assume).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/ir.h"
#include "target/cpu/abi.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tri::codegen::cpu {

// The contract between the generated code and the runtime that runs it (kEntryFn, the runtime
// callbacks, CancelHead, TeamHead, RuntimeSites) is target/cpu/abi.h's; these names are its.
using ::tri::cpu::AssertSite;
using ::tri::cpu::CancelHead;
using ::tri::cpu::EntryFn;
using ::tri::cpu::ErrorSite;
using ::tri::cpu::PrintOperand;
using ::tri::cpu::PrintSite;
using ::tri::cpu::RuntimeSites;
using ::tri::cpu::TeamHead;
using ::tri::cpu::kAssertFn;
using ::tri::cpu::kDistErrorFn;
using ::tri::cpu::kEntryFn;
using ::tri::cpu::kErrorFn;
using ::tri::cpu::kPrintFn;
using ::tri::cpu::kTeamHeadOffset;
using ::tri::cpu::kWaitAcquire;
using ::tri::cpu::kWaitFn;
using ::tri::cpu::kWaitGe;

struct LoweredKernel {
  std::unique_ptr<llvm::Module> module;
  RuntimeSites sites;
  // Bytes of stack the block buffers of all lowered functions take together (an upper bound of
  // one program instance's frame, recursion aside).
  uint64_t stack_bytes = 0;
};

// Lowers `kernel` of `m` into a new module in `ctx`. The IR must be verified and specialized
// (every type concrete, no constexpr name in an attribute). Errors: Code::Unsupported for ops
// this backend does not run (inline_asm), Code::Compile for IR it cannot lower (with the op's
// location). The module has no target triple or data layout yet: the caller sets them.
Status lower_kernel(const ir::Module& m, const ir::Function& kernel, llvm::LLVMContext& ctx, LoweredKernel* out);

}  // namespace tri::codegen::cpu
